"""The scripted games' moves fed straight to the identity tracker, read exactly (0.015" of noise, no detector, no
camera): how many model-updates leave a model shown more than 0.25" from where it stands. What is left is the
tracker's own doing: its matching, not what the detector saw.

Run: ``python benchmarks/replay_tracker.py [--seeds 100-130] [--jitter 0,0.3,0.5] [--miss 0.03]``. Seeded; about a
minute. ``--miss``: the detector misses each piece at random this often (each update), as a worse camera might.
``--looks``: what each piece's figure looks like (vision/live/appearance.py), beside its place: none (matched by place
alone, as before session 83); "distinct", each figure painted as the renderer paints them (a colour of its own) and
read again within LOOK_READ_SIGMA_LAB (a still rendered figure's looks, frame to frame); "alike", each unit painted
one colour, its figures LOOK_PAINT_SIGMA_LAB apart (as players paint a unit), so looks should change nothing.
``--misread``: each look is read as another colour altogether this often (a neighbour's figure leaning over it, say).

Each seed is a crowded 44"x60" Grinding-Annihilation table (as ``eval_live_game.py``'s), played for 4 rounds by
``eval_live_game.script``: every unit moves 2-5" each round, one into a crowd. ``--jitter``: each model is also put
down this far off its unit's shift (1 sigma, each axis), as players spread a unit as they move it. Each game is
replayed twice: the tracker told which unit was activated, and not told (it reads that from the frame).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
from functools import cache
from typing import Any

import cv2
import numpy as np
from eval_live_game import GAME, script

from vision.live.tracker import IdentityTracker
from vision.synth.table import _hsv_to_bgr, render_table

READ_SIGMA_IN = 0.015  # how far off each piece is read (a settled frame's reads: docs/live.md, session 70)
OFF_IN = 0.25  # a model shown further than this from where it stands is off (the tracker's own STAY_IN)
LOOK_READ_SIGMA_LAB = 1.5  # each channel: seed 45's still figures read again 1.9 Lab apart (median), 6.3 at most
LOOK_PAINT_SIGMA_LAB = 3.0  # each channel: how far one unit's figures, painted alike, differ


def figure_colours(scene: dict[str, Any], how: str, seed: int) -> dict[str, np.ndarray]:
    """Each model's figure as the camera would see it (Lab), painted ``how`` ("distinct" or "alike")."""
    rng = np.random.default_rng(seed + 13)

    def painted() -> np.ndarray:  # as vision/synth/table.py paints a figure
        bgr = _hsv_to_bgr(rng.uniform(0, 180), rng.uniform(60, 200), rng.uniform(60, 200))
        return cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)

    units = {u["id"]: painted() for u in scene["units"]}
    return {
        m["id"]: painted() if how == "distinct" else units[m["unit"]] + rng.normal(0, LOOK_PAINT_SIGMA_LAB, 3)
        for m in scene["models"]
    }


@cache
def table(seed: int) -> dict[str, Any]:
    """The scene of the seed's table (rendering is most of the time this takes)."""
    return render_table(seed, GAME, hard="crowded").scene


def replay(
    seed: int, jitter_in: float, told: bool, miss: float = 0.0, looks: str = "none", misread: float = 0.0
) -> tuple[int, int, int, int, int]:
    """Over one scripted game: model-updates off, model-updates, models put off by an update (on it and not
    before), those of them the update said nothing of (not among the models it called uncertain or not seen), and
    the models an update called uncertain that it put right. ``miss``: each piece is left out of an update with
    this chance (a detector missing bases now and then, at random); only the models seen count then."""
    scene = table(seed)
    owner = {u["id"]: u["player"] for u in scene["units"]}
    unit_of = {m["id"]: m["unit"] for m in scene["models"]}
    base_of = {m["id"]: m["base"] for m in scene["models"]}
    with contextlib.redirect_stdout(io.StringIO()):  # (script prints the move into the crowd)
        activations = script(scene, 4, np.random.default_rng(seed), jitter_in)
    read = np.random.default_rng(seed + 7)
    missed = np.random.default_rng(seed + 99)
    tracker = IdentityTracker.from_scene(
        {**scene, "models": [{**m, "sigma_in": READ_SIGMA_IN} for m in scene["models"]]}
    )
    colour = figure_colours(scene, looks, seed) if looks != "none" else {}
    seen_as = np.random.default_rng(seed + 17)
    misread_as = np.random.default_rng(seed + 19)
    others = list(figure_colours(scene, "distinct", seed + 1).values())

    def look(mid: str) -> tuple[float, ...] | None:
        if mid not in colour:
            return None
        seen = colour[mid] + seen_as.normal(0, LOOK_READ_SIGMA_LAB, 3)
        if misread and misread_as.random() < misread:
            seen = others[int(misread_as.integers(len(others)))]
        return tuple(float(v) for v in seen)

    for mid, m in tracker.models.items():  # the deployment's photo
        m.look = look(mid)
    off = total = newly = silent = needless = 0
    was_off: set[str] = set()
    for _, unit, everywhere in activations:
        positions = {mid: xy for mid, xy in everywhere.items() if missed.random() >= miss}
        pieces = [
            {
                "x": x + read.normal(0, READ_SIGMA_IN),
                "y": y + read.normal(0, READ_SIGMA_IN),
                "base": base_of[mid],
                "player": owner[unit_of[mid]],
                "sigma_in": READ_SIGMA_IN,
                "look": look(mid),
            }
            for mid, (x, y) in positions.items()
        ]
        update = tracker.update(pieces, active_unit=unit if told else None)
        now_off = {
            mid
            for mid, (x, y) in positions.items()
            if math.hypot(tracker.models[mid].x - x, tracker.models[mid].y - y) > OFF_IN
        }
        said = set(update.uncertain) | set(update.vanished)
        total += len(positions)
        off += len(now_off)
        newly += len(now_off - was_off)
        silent += len(now_off - was_off - said)
        needless += len(set(update.uncertain) - now_off)
        was_off = now_off
    return off, total, newly, silent, needless


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="100-130", help="first-last (last not included)")
    parser.add_argument("--jitter", default="0,0.3,0.5", help="inches off the unit's shift, each axis, comma-separated")
    parser.add_argument("--miss", type=float, default=0.0, help="chance that the detector misses a piece, per update")
    parser.add_argument("--looks", default="none", choices=("none", "distinct", "alike"), help="figures' looks")
    parser.add_argument("--misread", type=float, default=0.0, help="chance that a look is read as another colour")
    args = parser.parse_args()
    first, last = (int(s) for s in args.seeds.split("-"))
    missing = f", each piece missed at random {100 * args.miss:g} % of the time" if args.miss else ""
    missing += f"; figures' looks: {args.looks}" + (f", {100 * args.misread:g} % misread" if args.misread else "")
    print(f'tables {first}-{last - 1}: model-updates shown more than {OFF_IN}" from the model{missing}')
    for jitter_in in (float(j) for j in args.jitter.split(",")):
        for told in (False, True):
            sums = np.zeros(5, dtype=int)
            for seed in range(first, last):
                sums += replay(seed, jitter_in, told, args.miss, args.looks, args.misread)
            off, total, newly, silent, needless = (int(v) for v in sums)
            how = "told which unit moves" if told else "not told"
            print(
                f"  models {jitter_in}\" off their unit's shift, {how}: {off}/{total} off ({100 * off / total:.2f} %);"
                f" put off by an update: {newly}, {silent} of them silently (not called uncertain or not seen);"
                f" called uncertain and right: {needless}"
            )


if __name__ == "__main__":
    main()
