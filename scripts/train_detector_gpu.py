"""Render fresh tables on many cores and fine-tune the shipped base detector on them on a GPU, inside one time
budget (a lent GPU machine is held for minutes, not hours).

    python scripts/train_detector_gpu.py OUT_DIR [--tables 400] [--budget-s 540] [--workers 16] [--photoreal DIR,DIR]
        [--hard-tables N --hard occluded,crowded]

Two sets of ``--tables`` tables each are rendered (vision/training/dataset.py: export_dataset): blob figures
at seed 800000 and varied figures with trees at seed 810000 (``--seeds``), all four games. The shipped weights
(vision/models/bases-yolo11n.pt) are then fine-tuned on both as ``tablesight train-detector --from`` does
(AdamW, cosine decay), for as long as the budget has left (ultralytics' ``time``). ``--photoreal`` adds
path-traced photos (``tablesight render-photoreal`` folders), labelled from their truth
(vision/training/dataset.py: export_photoreal_tiles). OUT_DIR gets best.pt,
results.csv, the sets' summaries and job.json; export to ONNX where onnxslim is installed
(vision/training/train.py: export_onnx) and judge it with ``tablesight eval-vision --model``.
Needs the ``train`` extra (ultralytics); polars, which ultralytics reads its results.csv with, is not needed.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.detect_learned import CLASSES, DEFAULT_MODEL  # noqa: E402
from vision.training.commands import TRAINING_GAMES, fine_tune_settings  # noqa: E402
from vision.training.dataset import export_dataset, export_photoreal_tiles  # noqa: E402
from vision.training.train import train  # noqa: E402

FIGURES: tuple[tuple[str, bool], ...] = (("blob", False), ("varied", True))  # each set's figures, and trees or not


def _read_results_plain(self: Any) -> dict[str, list[Any]]:
    """ultralytics' BaseTrainer.read_results_csv without polars (a 55 MB wheel to carry for one table)."""
    try:
        with open(self.csv, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return {}
    return {k.strip(): [float(r[k]) for r in rows] for k in (rows[0] if rows else {})}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--tables", type=int, default=400, help="tables in each of the two sets")
    parser.add_argument("--budget-s", type=float, default=540.0, help="render and train within this")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr0", type=float, default=0.001)
    parser.add_argument("--device", default="0")
    parser.add_argument("--seeds", default="800000,810000", help="the two sets' first seeds (blob, varied)")
    parser.add_argument(
        "--photoreal",
        default="",
        help="comma list of render-photoreal folders to train on too (labelled from their truth; never the test "
        "sets), or of folders of tiles already cut from them (images/ and labels/)",
    )
    parser.add_argument("--photoreal-copies", type=int, default=2, help="times each path-traced tile is used")
    # Session 71: the held-out misses are bases under a hand or among crowded figures, which a random draw gives
    # one table in six; a third set of such tables only (blob figures, at --hard-seed) trains on more of them.
    parser.add_argument("--hard-tables", type=int, default=0, help="tables in a third set of hard cases only")
    parser.add_argument("--hard", default="occluded,crowded", help="the hard cases of that set, in turn")
    parser.add_argument("--hard-seed", type=int, default=840000)
    # Session 98: sets rendered beforehand elsewhere (export_dataset's folders, carried to the GPU machine) so
    # that its minutes go to training.
    parser.add_argument("--ready", default="", help="comma list of export_dataset folders already rendered")
    args = parser.parse_args()
    seeds = [int(v) for v in args.seeds.split(",")]
    sets_wanted = [
        (seed, figures, trees, args.tables, ()) for seed, (figures, trees) in zip(seeds, FIGURES, strict=True)
    ]
    if args.hard_tables:
        sets_wanted.append((args.hard_seed, "blob", False, args.hard_tables, tuple(args.hard.split(","))))
    start = time.monotonic()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = Path("/tmp/detector-gpu")
    sets = []
    for seed, figures, trees, count, hard in sets_wanted:
        summary = export_dataset(
            work / f"set{seed}",
            count,
            seed,
            games=TRAINING_GAMES,
            workers=args.workers,
            figures=figures,
            trees=trees,
            hard=hard,
        )
        sets.append(summary)
        print(f"set {seed}: {summary['tiles']} tiles, {time.monotonic() - start:.0f} s", flush=True)
    train_dirs = [work / f"set{seed}" / "train" / "images" for seed, *_ in sets_wanted]
    val_dirs = [work / f"set{seed}" / "val" / "images" for seed, *_ in sets_wanted]
    for ready in [Path(f).resolve() for f in args.ready.split(",") if f]:
        tiles = len(list((ready / "train" / "images").glob("*")))
        sets.append({"ready": str(ready), "train_tiles": tiles})
        train_dirs.append(ready / "train" / "images")
        val_dirs.append(ready / "val" / "images")
    # Session 44: path-traced photos, cut into tiles labelled from their truth. A folder already cut here (its
    # images/ and labels/, export_photoreal_tiles's output: about a fifth the size of the photos) is used as it is.
    folders = [Path(f) for f in args.photoreal.split(",") if f]
    cut = [f for f in folders if (f / "images").is_dir() and (f / "labels").is_dir()]
    photos = [f for f in folders if f not in cut]
    if photos:
        tiles = export_photoreal_tiles(photos, work / "photoreal", args.photoreal_copies)
        sets.append({"photoreal": [str(f) for f in photos], "copies": args.photoreal_copies, "tiles": tiles})
        train_dirs.append(work / "photoreal" / "images")
    for folder in cut:
        sets.append({"photoreal_tiles": str(folder), "tiles": len(list((folder / "images").glob("*.jpg")))})
        train_dirs.append(folder.resolve() / "images")
    if folders:
        print(f"path-traced: {sets[len(sets_wanted) :]}, {time.monotonic() - start:.0f} s", flush=True)
    data = work / "data.yaml"
    data.write_text(
        "train:\n"
        + "".join(f"  - {d}\n" for d in train_dirs)
        + "val:\n"
        + "".join(f"  - {d}\n" for d in val_dirs)
        + "names:\n"
        + "".join(f"  {k}: {name}\n" for k, name in enumerate(CLASSES)),
        encoding="utf-8",
    )
    from ultralytics.engine.trainer import BaseTrainer

    BaseTrainer.read_results_csv = _read_results_plain  # type: ignore[method-assign]
    left_h = max(0.02, (args.budget_s - (time.monotonic() - start) - 30.0) / 3600.0)
    extra = {**fine_tune_settings(args.lr0), "time": left_h}  # ultralytics fits epochs and cosine into ``time`` h
    rendered_s = time.monotonic() - start
    best = train(
        data,
        work,
        epochs=200,
        batch=args.batch,
        device=args.device,
        workers=args.workers,
        weights=DEFAULT_MODEL.with_suffix(".pt"),
        extra=extra,
    )
    shutil.copyfile(best, out / "best.pt")
    shutil.copyfile(work / "run" / "results.csv", out / "results.csv")
    job = {
        "sets": sets,
        "rendered_s": round(rendered_s, 1),
        "trained_s": round(time.monotonic() - start - rendered_s, 1),
        "from": str(DEFAULT_MODEL.with_suffix(".pt").relative_to(Path(__file__).resolve().parents[1])),
        "settings": {
            "batch": args.batch,
            "imgsz": 320,
            "device": f"cuda:{args.device}" if args.device.isdigit() else args.device,
            **extra,
        },
    }
    (out / "job.json").write_text(json.dumps(job, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(job, indent=2))


if __name__ == "__main__":
    main()
