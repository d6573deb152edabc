"""Why each base the learned detector missed was missed: did the network box it at all?

    python benchmarks/why_missed.py /tmp/ds300s [--model M] [--count 300]

For every true base that ``eval-vision`` would count missed, the model's boxes down to a score of 0.005
(after its per-class NMS) within half an inch of the base are looked at: "no box" (the network did not see
it), "box < 0.02" (only below the lowest threshold any stage uses), or "box" (a box the later stages turned
away, or a neighbour's). Prints one line per missed base, with how much of its rim the camera sees (and, for
renders since session 40, how many pixels show the base or its figure at all), then the counts. Rendered sets only (their truth says what the camera sees).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.layout import Layout  # noqa: E402
from calibration.lens import LensModel  # noqa: E402
from calibration.table_frame import calibrate  # noqa: E402
from vision.analyze import analyze, make_detector  # noqa: E402
from vision.detect_learned import DETECT_PX_PER_IN, LearnedDetector, _proposals  # noqa: E402
from vision.evaluate import SEEN_RIM_SHARE, match_scene  # noqa: E402

NEAR_IN = 0.5
LOWEST_SCORE = 0.02  # vision/detect_learned.py: LOW_THRESHOLD


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--count", type=int, default=None)
    args = parser.parse_args()
    detector = make_detector("learned", args.model)
    assert isinstance(detector, LearnedDetector)
    lens_file = args.directory / "lens.json"
    lens = LensModel.load(lens_file) if lens_file.exists() else None
    counts: Counter[str] = Counter()
    barely = hidden = 0
    for photo_path in sorted(args.directory.glob("*[0-9].jpg"))[: args.count]:
        stem = str(photo_path)[: -len(".jpg")]
        truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
        scene = truth["scene"]
        photo, empty = cv2.imread(str(photo_path)), cv2.imread(stem + ".empty.jpg")
        layout = Layout.from_json(truth["layout"])
        frame = calibrate(empty, layout, lens)
        reference = detector.prepare(empty, frame)
        players = {p["id"]: p["color"] for p in scene["players"]}
        result = analyze(
            photo, layout, None, frame, lens, scene["game"], players, scene["terrain"], reference, detector
        )
        matched = {i for i, _, _ in match_scene(scene, result.scene)[0]}
        missed = [m for i, m in enumerate(scene["models"]) if i not in matched]
        if not missed:
            continue
        boxed = _proposals(*detector.boxes(frame.rectify(photo, DETECT_PX_PER_IN), 0.005))
        rim = truth.get("rim_visible", {})
        pixels = truth.get("piece_visible_px", {})
        for m in missed:
            near = [(float(np.hypot(c[0] - m["x"], c[1] - m["y"])), name, s) for name, c, _, s in boxed]
            near = [n for n in near if n[0] < NEAR_IN]
            best = max(near, key=lambda n: n[2], default=None)
            why = "no box" if best is None else ("box < 0.02" if best[2] < LOWEST_SCORE else "box")
            counts[why] += 1
            seen = rim.get(m["id"], 1.0)
            barely += seen < SEEN_RIM_SHARE
            hidden += pixels.get(m["id"], -1) == 0
            box = f'{best[1]} {best[2]:.3f} at {best[0]:.2f}"' if best else ""
            shown = f", {pixels[m['id']]} px of it in the photo" if m["id"] in pixels else ""
            print(
                f"{photo_path.name} {m['id']} {m['base']}: rim seen {seen:.2f}{shown}, {why} {box} "
                + " ".join(truth["tags"])
            )
    total = sum(counts.values())
    print(f"{total} bases missed: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    print(f"{barely} of them with less than {SEEN_RIM_SHARE:.0%} of the rim in view")
    print(f"{hidden} of them with no pixel in the photo, of the base or its figure (renders since session 40)")


if __name__ == "__main__":
    main()
