"""How far off is a piece's measured centre, by how it was measured? The figures behind the per-piece sigma.

    python benchmarks/measure_sigma.py --tables 40 --seed 6000 [--detector auto] [--figures varied] [--trees]

Renders seeded tables (seed 6000+: neither the training tables, 100000+, nor the
held-out evaluation set, 5000+), analyses each photo, matches the found bases and
objective markers to the truth, and prints, per way of measuring (an outline fit,
a box only, an oval, an objective marker): the per-axis RMS error, the radial
median and p95 in mm, and how often the truth lies within 2 reported sigma along
x and along y (about 95 % when the reported sigma is honest); then the same for the round bases the
refiner measured, by how obliquely the camera saw them (the tangent of the view's angle from the vertical).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from geometry.shapes import MM_PER_IN  # noqa: E402
from vision.analyze import make_detector  # noqa: E402
from vision.evaluate import MATCH_FRACTION, analyze_rendered  # noqa: E402
from vision.synth.table import FIGURE_STYLES, render_table, webcam_lens  # noqa: E402


def _nearest(tx: float, ty: float, xs: np.ndarray, ys: np.ndarray) -> tuple[int, float]:
    d = np.hypot(xs - tx, ys - ty)
    k = int(d.argmin()) if len(d) else -1
    return k, float(d[k]) if k >= 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--seed", type=int, default=6000)
    parser.add_argument("--detector", default="auto")
    parser.add_argument("--figures", default="blob", choices=FIGURE_STYLES, help="how the figures are drawn")
    parser.add_argument("--trees", action="store_true", help="conifers on the woods (more bases seen in part)")
    parser.add_argument("--dump", default=None, help="write every matched piece (group, dx, dy, sigma, score) as JSON")
    args = parser.parse_args()
    detector = make_detector(args.detector)
    lens = webcam_lens(args.seed)
    # group -> (dx, dy, reported sigma, score, view slope), in inches
    groups: dict[str, list[tuple[float, float, float, float, float]]] = {}
    for k in range(args.tables):
        game = ("focal-point", "grinding-annihilation")[k % 2]
        table = render_table(args.seed + k, game, figures=args.figures, trees=args.trees)
        result = analyze_rendered(table, lens, detector)
        found = result.scene["models"]
        det = result.detections[result.detections.kind == 0]
        markers = result.detections[result.detections.kind == 1]
        xs, ys = np.array([m["x"] for m in found]), np.array([m["y"] for m in found])
        slopes = result.frame.view_slope(np.c_[xs, ys]) if len(xs) else None
        slope_of = slopes if slopes is not None else np.full(len(xs), np.nan)
        for m in table.scene["models"]:
            j, d = _nearest(m["x"], m["y"], xs, ys)
            radius = max(float(det.a_in[j]), 0.3) if j >= 0 else 0.0
            if j < 0 or d > MATCH_FRACTION * radius:
                continue
            how = str(det.measured_by[j])
            groups.setdefault(how, []).append(
                (xs[j] - m["x"], ys[j] - m["y"], found[j]["sigma_in"], det.score[j], slope_of[j])
            )
        objs = result.scene["objectives"]
        oxs, oys = np.array([o["x"] for o in objs]), np.array([o["y"] for o in objs])
        for o in table.scene["objectives"]:
            j, d = _nearest(o["x"], o["y"], oxs, oys)
            if j >= 0 and d < 0.5:
                how = str(markers.measured_by[j])
                groups.setdefault(how, []).append((oxs[j] - o["x"], oys[j] - o["y"], objs[j]["sigma_in"], 1.0, np.nan))
        print(f"  table {k + 1}/{args.tables}", file=sys.stderr, flush=True)
    if args.dump:
        Path(args.dump).write_text(json.dumps({k: [list(map(float, r)) for r in v] for k, v in groups.items()}))
    look = f"{args.figures} figures" + (", trees" if args.trees else "")
    print(f"{args.tables} tables from seed {args.seed} ({look}), detector {args.detector}")
    print(
        "| measured by | pieces | per-axis RMS (mm) | radial median (mm) | radial p95 (mm) | reported sigma (mm) | truth within 2 sigma | sigma for 95 % (mm) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for how, rows in sorted(groups.items()):
        a = np.array(rows)
        axis = np.r_[a[:, 0], a[:, 1]]
        radial = np.hypot(a[:, 0], a[:, 1])
        sigma = np.r_[a[:, 2], a[:, 2]]
        covered = float(np.mean(np.abs(axis) <= 2 * sigma))
        print(
            f"| {how} | {len(a)} | {np.sqrt(np.mean(axis**2)) * MM_PER_IN:.2f} | {np.median(radial) * MM_PER_IN:.2f} "
            f"| {np.percentile(radial, 95) * MM_PER_IN:.2f} | {np.median(a[:, 2]) * MM_PER_IN:.2f} | {covered:.1%} "
            f"| {np.percentile(np.abs(axis), 95) / 2 * MM_PER_IN:.2f} |"
        )
    refined = np.array(groups.get("refined", []))
    if len(refined):
        print("\nrefined round bases by view slope (tangent of the view's angle from the vertical)")
        print("| slope | pieces | reported sigma (mm) | truth within 2 sigma | sigma for 95 % (mm) |")
        print("|---|---|---|---|---|")
        for low, high in ((0.0, 0.2), (0.2, 0.3), (0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (0.6, 9.0)):
            a = refined[(refined[:, 4] >= low) & (refined[:, 4] < high)]
            if not len(a):
                continue
            axis = np.r_[a[:, 0], a[:, 1]]
            sigma = np.r_[a[:, 2], a[:, 2]]
            print(
                f"| {low:.1f}-{high if high < 9 else '':} | {len(a)} | {np.median(a[:, 2]) * MM_PER_IN:.2f} "
                f"| {np.mean(np.abs(axis) <= 2 * sigma):.1%} | {np.percentile(np.abs(axis), 95) / 2 * MM_PER_IN:.2f} |"
            )


if __name__ == "__main__":
    main()
