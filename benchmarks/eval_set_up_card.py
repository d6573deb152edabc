"""A card over calibration markers as the table is set up, lifted later: how far the page's places are off before and
after.

For each rendered table, the page (``web/camera_feed.py``) is set up from the empty table with a card over the given
markers, so it maps the table from the others. The models are put down and one unit moves 1.5" each way under the
card; then the card is lifted and the table left still for as long as the calibration monitor takes to look for the
markers again. Printed per table, while the card lies there and after it is lifted: how far the models and objective
markers the page shows are from where they stand (median and max), the unit's move length error, and how many
of the last frames after the lift said something covers the table (the card, if the set-up's empty table still held
it).

    python benchmarks/eval_set_up_card.py --seeds 45-48 --cards 0,1 1,2 [--no-lens]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

from calibration.lens import LensModel
from calibration.monitor import RETRY_ALL_MARKERS_FRAMES
from vision.analyze import make_detector
from vision.live.sources import IteratorSource
from vision.synth.table import lay_card, render_table
from web.camera_feed import CameraFeed

STEP_IN = 1.5  # the unit's move, each way
LAST_FRAMES = 6  # the lifted card's frames after the monitor's wait to look for the markers again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="45-48", help="rendered tables, e.g. 45-48")
    parser.add_argument("--game", default="grinding-annihilation")
    parser.add_argument(
        "--cards", nargs="+", default=["0,1", "1,2"], help="the markers under the card, per run (none: no card)"
    )
    parser.add_argument("--no-lens", action="store_true", help="the players have no lens file")
    args = parser.parse_args()
    first, last = (int(v) for v in args.seeds.split("-"))
    detector = make_detector("auto")
    started = time.perf_counter()
    print(
        f"{args.game}, {'no lens file' if args.no_lens else 'the lens file'}; each row: places of models / objective "
        "markers off where they stand, median / max (\"), the moved unit's length error (worst model); after the lift, "
        "frames said to be covered (the card, if the empty table still holds it)"
    )
    for seed in range(first, last + 1):
        for card in args.cards:
            print(
                f"seed {seed}, card on markers {card}: {run(seed, args.game, _markers(card), args.no_lens, detector)}"
            )
    print(f"whole run {time.perf_counter() - started:.0f} s")


def run(seed: int, game: str, card: set[int], no_lens: bool, detector: Any) -> str:
    table = render_table(seed, game, hard="none")
    moved = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    unit = [m["id"] for m in table.scene["models"] if m["unit"] == "u1"]
    moved.update({mid: (moved[mid][0] + STEP_IN, moved[mid][1] - STEP_IN) for mid in unit})
    after = render_table(seed, game, hard="none", models_at=moved)
    hand = render_table(seed, game, hard="none", models_at=moved, hand_at=moved[unit[0]])
    carded = [lay_card(table, table.empty, card)] + [lay_card(table, table.image, card)] * 4
    carded += [lay_card(table, hand.image, card)] + [lay_card(table, after.image, card)] * 4
    lifted = [after.image] * (RETRY_ALL_MARKERS_FRAMES + 6)
    lens = None if no_lens else LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    shots = iter(carded + lifted)
    feed = CameraFeed(lambda: IteratorSource(shots), table.layout, "scripted camera", game, lens, players, detector)
    objectives = [(o["x"], o["y"]) for o in table.scene["objectives"]]
    figures = []
    scene: dict[str, Any] | None = None  # the last shown (nothing new is shown where no card was lifted)
    for frames in (carded, lifted):
        covered = []  # whether the page said something covers the table, each frame
        for _ in frames:
            shown, status = feed.next()
            scene = shown if shown is not None else scene
            covered.append("something covers" in status.message)
        if scene is None:
            return "no scene analysed"
        history = feed.identified.tracker.history if feed.identified.tracker is not None else []
        length_off = [abs(h["length_in"] - math.hypot(STEP_IN, STEP_IN)) for h in history]
        figures.append(
            f"{_off(scene['models'], list(moved.values()))} / {_off(scene['objectives'], objectives)}, move "
            f'{max(length_off, default=float("nan")):.3f}"'
            + (
                f", said covered {sum(covered[-LAST_FRAMES:])} of the last {LAST_FRAMES} frames"
                if frames is lifted
                else ""
            )
        )
    used = feed.monitor.frame.quality.markers_used if feed.monitor.frame and feed.monitor.frame.quality else ()
    return f"card on: {figures[0]}; lifted: {figures[1]} (mapped from markers {', '.join(map(str, used))})"


def _markers(card: str) -> set[int]:
    """``0,1`` -> {0, 1}; ``none``: no card (the table as the page reads it without one)."""
    return set() if card == "none" else {int(k) for k in card.split(",")}


def _off(pieces: list[dict[str, Any]], truth: list[tuple[float, float]]) -> str:
    off = [min(math.dist((p["x"], p["y"]), xy) for xy in truth) for p in pieces]
    return f"{np.median(off):.3f} / {max(off):.3f}" if off else "none"


if __name__ == "__main__":
    main()
