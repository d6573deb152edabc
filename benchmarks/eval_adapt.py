"""How much `tablesight adapt` recovers on a table style the detector never saw (flagstone mats, other
team colours), from 2, 5 and 20 confirmed frames. Needs the train extra. Seeded; CPU, some minutes.

Run: ``python benchmarks/eval_adapt.py [WORK_DIR]``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import cv2

from vision.evaluate import evaluate, render_dataset
from vision.synth.table import render_table, webcam_lens
from vision.training.adapt import adapt

GAMES = ("focal-point", "grinding-annihilation")


def confirmed_frames(folder: Path, count: int, seed: int) -> None:
    """What players would confirm on the page: photos of their (held-out style) table and the true scenes."""
    folder.mkdir(parents=True, exist_ok=True)
    webcam_lens(seed).save(folder / "lens.json")
    for k in range(count):
        if (folder / f"f{k:02d}.scene.json").exists():
            continue
        table = render_table(seed + k, GAMES[k % 2], style="flagstone")
        cv2.imwrite(str(folder / f"f{k:02d}.jpg"), table.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        (folder / f"f{k:02d}.scene.json").write_text(json.dumps(table.scene))


def line(name: str, r: dict) -> str:
    b = r["bases"]
    return (
        f"  {name:<24} recall {b['recall']:.1%}  precision {b['precision']:.1%}  size {b['size_accuracy']:.1%}"
        f"  centre p95 {b['centre_error_mm']['p95']:.2f} mm  objectives {r['objectives']['recall']:.1%}"
    )


def main() -> None:
    work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tablesight-adapt")
    held_out = work / "eval-flagstone"
    if not (held_out / "lens.json").exists():
        render_dataset(held_out, 20, seed=7000, games=GAMES, style="flagstone")
    confirmed_frames(work / "confirmed", 20, seed=300_000)
    print("20 held-out renders in the flagstone style (never trained on), 1080p")
    print(line("classical", evaluate(held_out, detector="classical")))
    print(line("shipped model", evaluate(held_out, detector="learned")))
    for n in (2, 5, 20):
        start = time.perf_counter()
        result = adapt(work / "confirmed", work / f"adapted-{n}", epochs=15, limit=n)
        minutes = (time.perf_counter() - start) / 60
        report = evaluate(held_out, detector="learned", model_path=result["onnx"])
        print(line(f"adapted on {n} frames", report) + f"  ({minutes:.1f} min to adapt)")


if __name__ == "__main__":
    main()
