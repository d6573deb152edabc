"""How much `tablesight adapt` recovers on tables the shipped models never saw, from 2, 5 and 20 confirmed frames.
Needs the train extra. Seeded; CPU.

- ``--part detector``: the detector, on a held-out style (flagstone mats, other team colours).
- ``--part refiner`` (about 15 minutes a group here): the base refiner, on one group of players' table whose rims lie
  near their mat's colour (render_table's ``group`` and ``rims='near-mat'``), where the shipped refiner reads
  sizes worst. Frames and held-out tables are of the same group (its mat, colours and bases), other games on
  it: what players confirm in one evening, and what the camera sees in their next game.
- ``--part photoreal`` (about 5 minutes here, after rendering): the base refiner, on path-traced photos
  (``tablesight render-photoreal``, after ``make photoreal-env``), the look furthest from what it was trained on
  and the nearest to real photos. ``--confirmed DIR``: path-traced tables taken as the players' confirmed frames
  (the first 2, 5 and 20); ``--held-out DIR[,DIR]``: other path-traced tables, never adapted on, to judge on.
- ``--part game`` (about 5 minutes a group here): the base refiner, within one game on a group's near-mat table
  (benchmarks/eval_live_game.py's scripted moves): adapted on the game's first 2 or 5 frames, judged on its
  later ones, where the same armies stand elsewhere.

Run: ``python benchmarks/eval_adapt.py [WORK_DIR] [--part detector|refiner|game|photoreal] [--groups 1,2,3]
[--confirmed DIR --held-out DIR[,DIR]]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from eval_live_game import script  # beside this file: run as python benchmarks/eval_adapt.py

from vision.evaluate import evaluate, render_dataset, write_rendered
from vision.synth.table import RenderedTable, render_table, webcam_lens
from vision.training.adapt import adapt, adapt_refiner

GAMES = ("focal-point", "grinding-annihilation")
FRAME_COUNTS = (2, 5, 20)
GAME_FRAME_COUNTS = (2, 5)  # of one game's frames: the first ones, confirmed as the game goes


def write_confirmed(folder: Path, k: int, table: RenderedTable) -> None:
    """Frame ``k`` as the page keeps a confirmed round: its photo and the (true) scene on it."""
    cv2.imwrite(str(folder / f"f{k:02d}.jpg"), table.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    (folder / f"f{k:02d}.scene.json").write_text(json.dumps(table.scene))


def confirmed_frames(folder: Path, count: int, seed: int, **look: Any) -> None:
    """What players would confirm on the page: photos of their table (``look``: render_table's) and the true
    scenes."""
    folder.mkdir(parents=True, exist_ok=True)
    webcam_lens(seed).save(folder / "lens.json")
    for k in range(count):
        if (folder / f"f{k:02d}.scene.json").exists():
            continue
        write_confirmed(folder, k, render_table(seed + k, GAMES[k % 2], **look))


def line(name: str, r: dict[str, Any]) -> str:
    b = r["bases"]
    return (
        f"  {name:<24} recall {b['recall']:.1%}  precision {b['precision']:.1%}  size {b['size_accuracy']:.1%}"
        f"  team {b['team_accuracy']:.1%}  centre p95 {b['centre_error_mm']['p95']:.2f} mm"
        f"  objectives {r['objectives']['recall']:.1%}"
    )


def detector_part(work: Path) -> None:
    held_out = work / "eval-flagstone"
    if not (held_out / "lens.json").exists():
        render_dataset(held_out, 20, seed=7000, games=GAMES, style="flagstone")
    confirmed_frames(work / "confirmed", 20, seed=300_000, style="flagstone")
    print("20 held-out renders in the flagstone style (never trained on), 1080p")
    print(line("classical", evaluate(held_out, detector="classical")))
    print(line("shipped model", evaluate(held_out, detector="learned")))
    for n in FRAME_COUNTS:
        start = time.perf_counter()
        result = adapt(work / "confirmed", work / f"adapted-{n}", epochs=15, limit=n)
        minutes = (time.perf_counter() - start) / 60
        report = evaluate(held_out, detector="learned", model_path=result["onnx"])
        print(line(f"adapted on {n} frames", report) + f"  ({minutes:.1f} min to adapt)")


def refiner_part(work: Path, group: int, epochs: int) -> None:
    held_out = work / f"group{group}-held-out"
    if not (held_out / "lens.json").exists():
        render_dataset(
            held_out, 20, seed=40_000 + 1000 * group, games=GAMES, figures="varied", rims="near-mat", group=group
        )
    confirmed = work / f"group{group}-confirmed"
    look: dict[str, Any] = {"rims": "near-mat", "figures": "varied", "group": group}
    confirmed_frames(confirmed, max(FRAME_COUNTS), seed=50_000 + 1000 * group, **look)
    print(f"group {group}: 20 held-out renders of its table (near-mat rims, varied figures), 1080p", flush=True)
    print(line("shipped refiner", evaluate(held_out, detector="learned")), flush=True)
    for n in FRAME_COUNTS:
        start = time.perf_counter()
        result = adapt_refiner(
            confirmed, work / f"group{group}-adapted-{n}", epochs=epochs, limit=n, log=lambda _: None
        )
        seconds = time.perf_counter() - start
        report = evaluate(held_out, detector="learned", refiner_path=result["onnx"])
        check = result["check"]
        verdict = (
            ""
            if check is None
            else f"; its check on the last {check['frames_held_back']}: size right "
            f"{check['base']['size_right']:.1%} -> {check['adapted']['size_right']:.1%}, centre p95 "
            f"{check['base']['centre_mm_p95']:.2f} -> {check['adapted']['centre_mm_p95']:.2f} mm"
        )
        print(
            line(f"refiner adapted on {n}", report)
            + f"  ({seconds:.0f} s to adapt, {result['positives']} base crops{verdict})",
            flush=True,
        )


def game_part(work: Path, group: int, epochs: int) -> None:
    seed = 60_000 + 1000 * group
    look: dict[str, Any] = {"rims": "near-mat", "figures": "varied", "group": group}
    first = render_table(seed, "grinding-annihilation", **look)
    steps = script(first.scene, 5, np.random.default_rng(seed))  # legal moves, activation by activation
    frames = [at for _, _, at in steps][:: max(1, len(steps) // 20)][:20]
    confirmed, held_out = work / f"game{group}-confirmed", work / f"game{group}-held-out"
    for folder in (confirmed, held_out):
        folder.mkdir(parents=True, exist_ok=True)
        webcam_lens(seed).save(folder / "lens.json")
    for k, at in enumerate(frames):
        if (confirmed / f"f{k:02d}.scene.json").exists() or (held_out / f"{k:05d}.truth.json").exists():
            continue
        table = render_table(seed, "grinding-annihilation", models_at=at, **look)
        if k < max(GAME_FRAME_COUNTS):
            write_confirmed(confirmed, k, table)
        else:
            write_rendered(table, held_out / f"{k:05d}")
    later = len(frames) - max(GAME_FRAME_COUNTS)
    print(f"group {group}, game {seed}: {len(steps)} activations; the game's {later} later frames", flush=True)
    print(line("shipped refiner", evaluate(held_out, detector="learned")), flush=True)
    for n in GAME_FRAME_COUNTS:
        start = time.perf_counter()
        result = adapt_refiner(confirmed, work / f"game{group}-adapted-{n}", epochs=epochs, limit=n, log=lambda _: None)
        seconds = time.perf_counter() - start
        report = evaluate(held_out, detector="learned", refiner_path=result["onnx"])
        print(
            line(f"adapted on its first {n}", report)
            + f"  ({seconds:.0f} s to adapt, {result['positives']} base crops)",
            flush=True,
        )


def photoreal_part(work: Path, rendered: Path, held_out: list[Path], epochs: int) -> None:
    """Path-traced tables as confirmed frames: each photo with its true scene, as the page keeps them."""
    confirmed = work / "photoreal-confirmed"
    confirmed.mkdir(parents=True, exist_ok=True)
    photos = sorted(p for p in rendered.glob("*[0-9].jpg") if p.with_suffix(".truth.json").exists())
    if not photos:
        raise SystemExit(f"{rendered}: no rendered photos (NAME.jpg with NAME.truth.json); render some first")
    shutil.copyfile(rendered / "lens.json", confirmed / "lens.json")
    for k, photo in enumerate(photos):
        shutil.copyfile(photo, confirmed / f"f{k:02d}.jpg")
        scene = json.loads(photo.with_suffix(".truth.json").read_text(encoding="utf-8"))["scene"]
        (confirmed / f"f{k:02d}.scene.json").write_text(json.dumps(scene))
    print(f"{len(photos)} path-traced tables from {rendered} as confirmed frames; judged on {len(held_out)} set(s)")
    for folder in held_out:
        print(line(f"shipped refiner, {folder.name}", evaluate(folder, detector="learned")), flush=True)
    for n in (c for c in FRAME_COUNTS if c <= len(photos)):
        start = time.perf_counter()
        result = adapt_refiner(confirmed, work / f"photoreal-adapted-{n}", epochs=epochs, limit=n, log=lambda _: None)
        seconds = time.perf_counter() - start
        for folder in held_out:
            report = evaluate(folder, detector="learned", refiner_path=result["onnx"])
            print(
                line(f"adapted on {n}, {folder.name}", report)
                + f"  ({seconds:.0f} s to adapt, {result['positives']} base crops)",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", nargs="?", default="/tmp/tablesight-adapt", type=Path)
    parser.add_argument("--part", choices=["detector", "refiner", "game", "photoreal"], default="detector")
    parser.add_argument("--confirmed", type=Path, help="with --part photoreal: path-traced tables to adapt on")
    parser.add_argument("--held-out", default="", help="with --part photoreal: path-traced sets to judge on (DIR,DIR)")
    parser.add_argument("--groups", default="1,2,3", help="with --part refiner: the players' tables, by group")
    parser.add_argument("--epochs", type=int, default=10, help="with --part refiner or game")
    args = parser.parse_args()
    if args.part == "detector":
        detector_part(args.work)
        return
    if args.part == "photoreal":
        if args.confirmed is None or not args.held_out:
            parser.error("--part photoreal needs --confirmed DIR and --held-out DIR[,DIR]")
        photoreal_part(args.work, args.confirmed, [Path(d) for d in args.held_out.split(",")], args.epochs)
        return
    for group in (int(g) for g in args.groups.split(",")):
        (refiner_part if args.part == "refiner" else game_part)(args.work, group, args.epochs)


if __name__ == "__main__":
    main()
