"""Does the motion gate see every model put down? And does it stay still on a still table?

The live table analyses a frame only when the gate (``vision/live/motion.py``) says the table changed since the last
analysis and is still again. A move it does not see is not analysed: the page shows the model where it stood until
the next unit's move happens to be analysed (page game seed 101, Grinding-Annihilation, a model at a time: one
25 mm model moved 5.2" changed 0.007 % of the gate's small copy, under its 0.01 %, and was shown 5.2" off for a
whole activation).

Here the scripted games of ``eval_live_game.py`` are played a model at a time, without hands: for each model put
down, the still table after it is shown ``--frames`` times (camera noise drawn anew each frame), after the table
before it; a move is seen if the gate says "settled" on one of those frames. Between moves, the same table is
shown again with new noise alone: a "settled" then is a false update (an analysis for nothing, ~0.25 s).

Run: ``python benchmarks/eval_gate.py [--seeds 101-103] [--games grinding-annihilation,focal-point] [--noise 1.5,4]
[--flicker 0.01] [--banding 0.03] [--white-balance 0.02] [--change-thresholds 18,12,8] [--light as-is,normalised]``.
Seeded; a few minutes a game (each still table is rendered once, ~3 s, and shown to every gate compared).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from eval_live_game import check_light_fractions, light_bands, move_steps, opening_table, script

from vision.live.motion import MotionGate
from vision.synth.table import render_table


def seeds_of(text: str) -> list[int]:
    if "-" in text:
        first, last = (int(s) for s in text.split("-"))
        return list(range(first, last + 1))
    return [int(s) for s in text.split(",")]


def steps_of_game(seed: int, game: str, rounds: int) -> list[tuple[dict[str, Any], str]]:
    """Each still table of the scripted game played a model at a time (its models' places), and the model put down
    to make it ('' for the opening table)."""
    first, _ = opening_table(seed, game)
    scene = first.scene
    unit_of = {m["id"]: m["unit"] for m in scene["models"]}
    truth = {m["id"]: (m["x"], m["y"]) for m in scene["models"]}
    tables: list[tuple[dict[str, Any], str]] = [(dict(truth), "")]
    for _, unit, positions in script(scene, rounds, np.random.default_rng(seed), 0.5):
        ids = [m for m, u in unit_of.items() if u == unit]
        for step in move_steps(ids, dict(truth), positions, True):
            truth = {k: positions[k] if k in step else xy for k, xy in truth.items()}
            tables.append((dict(truth), step[0]))
    return tables


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="101-103")
    parser.add_argument("--games", default="grinding-annihilation,focal-point")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--frames", type=int, default=4, help="still frames shown after each model is put down")
    parser.add_argument("--noise", default="1.5,4", help="camera noise (1 sigma, grey levels) of each run, per frame")
    parser.add_argument(
        "--flicker",
        type=float,
        default=0.0,
        help="each frame's brightness scaled by 1 + this (1 sigma): the light, the exposure",
    )
    parser.add_argument(
        "--banding",
        type=float,
        default=0.0,
        help="bands of light across each frame (a rolling shutter under a flickering light): rows scaled by 1 + this "
        "times a sine, about 3.3 bands a frame, their phase drawn anew each frame",
    )
    parser.add_argument(
        "--white-balance",
        type=float,
        default=0.0,
        help="each frame's colour channels scaled apart by 1 + this (1 sigma each): a webcam's white balance wandering",
    )
    parser.add_argument(
        "--change-thresholds",
        default="18,12,8",
        help="the gates compared: each one's levels of change (the first: 18, as shipped before)",
    )
    parser.add_argument(
        "--light",
        default="normalised",
        help="'normalised' (the gate divides out each frame's light, as shipped since session 90), 'as-is', or both",
    )
    args = parser.parse_args()
    check_light_fractions(parser, args)
    noises = [float(n) for n in args.noise.split(",")]
    gates = {
        f"change {t}, light {light}": (t, light == "normalised")
        for light in args.light.split(",")
        for t in (int(x) for x in args.change_thresholds.split(","))
    }
    started = time.perf_counter()
    seen: dict[tuple[float, str], list[bool]] = {}
    false_updates: dict[tuple[float, str], int] = {}
    still_frames = 0
    for game in args.games.split(","):
        for seed in seeds_of(args.seeds):
            tables = steps_of_game(seed, game, args.rounds)
            images = [render_table(seed, game, hard="crowded", models_at=places).image for places, _ in tables]
            for noise_sigma in noises:
                for name, (change_threshold, normalise) in gates.items():
                    key = (noise_sigma, name)
                    rng = np.random.default_rng(seed)  # the same noise for every gate
                    gate = MotionGate(change_threshold=change_threshold, normalise_light=normalise)

                    def noisy(image: np.ndarray, sigma: float = noise_sigma, draw: Any = rng) -> np.ndarray:
                        gain: Any = 1.0 + draw.normal(0, args.flicker) if args.flicker else 1.0
                        if args.banding:
                            gain = gain * light_bands(image.shape[0], args.banding, draw)
                        if args.white_balance:
                            gain = gain * (1.0 + draw.normal(0, args.white_balance, 3))
                        return np.clip(image * gain + draw.normal(0, sigma, image.shape), 0, 255).astype(np.uint8)

                    for k, image in enumerate(images):
                        states = [gate.update(noisy(image)).state for _ in range(args.frames)]
                        if k:
                            seen.setdefault(key, []).append("settled" in states)
                            if "settled" not in states:
                                print(f"  {game} seed {seed} noise {noise_sigma}, {name}: {tables[k][1]} not seen")
                        states = [gate.update(noisy(image)).state for _ in range(args.frames)]  # nothing changed
                        false_updates[key] = false_updates.get(key, 0) + states.count("settled")
                        still_frames += len(states) if key == (noises[0], next(iter(gates))) else 0
            print(f"{game} seed {seed}: {len(tables) - 1} models put down", flush=True)
    for key, got in seen.items():
        print(
            f"noise {key[0]}, {key[1]}: models put down seen {sum(got)}/{len(got)}; false updates "
            f"{false_updates[key]} in {still_frames} frames of a table left as it was"
        )
    print(f"whole run {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
