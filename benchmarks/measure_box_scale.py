"""How much larger than each round base the learned detector draws its box: the scale its size is named with.

    tablesight render-tables /tmp/ds6000 --count 40 --seed 6000
    python benchmarks/measure_box_scale.py /tmp/ds6000 [--model vision/models/bases-yolo11n.onnx] [--write-card]

Use rendered tables that are neither trained on (100000+) nor in the held-out evaluation set (5000+).
For each true round base matched by a proposal (within half its radius), the proposal's radius (its box's
width plus height over four) is divided by the base's true radius; the median per base size is the
scale. ``--write-card`` stores it in the model's card as ``box_radius_scale``, where the detector reads
it (a model with no scale in its card names sizes from the box as it is). Prints how often the size is
named right without and with the scale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.layout import Layout  # noqa: E402
from calibration.lens import LensModel  # noqa: E402
from calibration.table_frame import calibrate  # noqa: E402
from geometry.shapes import base_semi_axes_in  # noqa: E402
from vision.detect_learned import DEFAULT_MODEL, DETECT_PX_PER_IN, ROUND, LearnedDetector  # noqa: E402


def proposals(directory: Path, detector: LearnedDetector) -> list[tuple[str, float]]:
    """(true size, proposed radius in inches) of every true round base a round proposal matches."""
    lens_file = directory / "lens.json"
    lens = LensModel.load(lens_file) if lens_file.exists() else None
    out = []
    for image_path in sorted(directory.glob("*[0-9].jpg")):
        stem = str(image_path)[: -len(".jpg")]
        truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
        frame = calibrate(cv2.imread(stem + ".empty.jpg"), Layout.from_json(truth["layout"]), lens)
        top = frame.rectify(cv2.imread(str(image_path)), DETECT_PX_PER_IN)
        boxes, classes, _ = detector.boxes(top)
        round_boxes = boxes[classes == 0] / DETECT_PX_PER_IN
        if not len(round_boxes):
            continue
        cx, cy = (round_boxes[:, 0] + round_boxes[:, 2]) / 2, (round_boxes[:, 1] + round_boxes[:, 3]) / 2
        radius = ((round_boxes[:, 2] - round_boxes[:, 0]) + (round_boxes[:, 3] - round_boxes[:, 1])) / 4
        for m in truth["scene"]["models"]:
            if m["base"] not in ROUND:
                continue
            d = np.hypot(cx - m["x"], cy - m["y"])
            j = int(d.argmin())
            if d[j] <= base_semi_axes_in(m["base"])[0] / 2:
                out.append((str(m["base"]), float(radius[j])))
    return out


def named(rows: list[tuple[str, float]], scale: dict[str, float]) -> float:
    def size_of(r: float) -> str:
        return min(ROUND, key=lambda s: abs(base_semi_axes_in(s)[0] * scale.get(s, 1.0) - r))

    return float(np.mean([size_of(r) == base for base, r in rows]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--write-card", action="store_true")
    args = parser.parse_args()
    detector = LearnedDetector(args.model)  # only its boxes are used: the size as the model draws it
    rows = proposals(args.directory, detector)
    scale: dict[str, Any] = {}
    print(f"{len(rows)} round bases matched in {args.directory}")
    for size in ROUND:
        ratios = [r / base_semi_axes_in(size)[0] for base, r in rows if base == size]
        if ratios:
            scale[size] = round(float(np.median(ratios)), 4)
            print(
                f"  {size:>5} mm: {len(ratios):4d} bases, box radius / true radius median {scale[size]:.3f} "
                f"(p10 {np.percentile(ratios, 10):.3f}, p90 {np.percentile(ratios, 90):.3f})"
            )
    print(f"size named right: {named(rows, {}):.1%} from the box as drawn, {named(rows, scale):.1%} with the scale")
    if args.write_card:
        card_path = args.model.with_suffix(".card.json")
        card = json.loads(card_path.read_text(encoding="utf-8"))
        card["box_radius_scale"] = scale
        card["box_radius_scale_measured_on"] = f"{args.directory.name}: {len(rows)} round bases"
        card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"written to {card_path}")


if __name__ == "__main__":
    main()
