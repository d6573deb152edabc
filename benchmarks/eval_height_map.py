"""Points above the table (a base's top, 0.15") mapped back to the table, against the renderer's true camera.

For each rendered table of a folder (``tablesight render-tables``), the empty frame is calibrated with all its
markers and then with each marker painted out in turn (a hand, a terrain box); 81 table points at the base
top's height are projected by the true camera and mapped back, by the shipped map (the ray from the camera's
centre through the flat map's point) and, as the baseline in the same run, by the pose's own rays (the map
before session 59). Errors in millimetres. The tables are rendered again to get their cameras (about 3 s each).

Run: ``python benchmarks/eval_height_map.py DIR [--count 30] [--no-lens]`` -> docs/calibration.md, session 59.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import TableFrame, calibrate
from vision.synth.table import render_table

MM_PER_IN = 25.4
BASE_TOP_IN = 0.15
FloatArray = npt.NDArray[np.float64]


def pose_rays(frame: TableFrame, px: FloatArray, z_in: float) -> FloatArray:
    """The baseline: each pixel's ray from the calibrated pose (K, R, t), met at height ``z_in``."""
    assert frame.K is not None and frame.rvec is not None and frame.tvec is not None
    ideal = frame.lens.undistort_points(px) if frame.lens is not None else px
    R, _ = cv2.Rodrigues(frame.rvec)
    centre = -R.T @ frame.tvec.ravel()
    rays = np.c_[ideal, np.ones(len(ideal))] @ np.linalg.inv(frame.K).T @ R
    s = (-z_in - centre[2]) / rays[:, 2]
    out: FloatArray = centre[:2] + s[:, None] * rays[:, :2]
    return out


def hide_marker(
    image: npt.NDArray[np.uint8], frame: TableFrame, layout: Layout, marker_id: int
) -> npt.NDArray[np.uint8]:
    """The frame with one marker painted over in a flat green, as a hand or a box would hide it."""
    m = layout.by_id()[marker_id]
    c = 0.75 * m.size_in
    square = np.array([[-c, -c], [c, -c], [c, c], [-c, c]]) + [m.x_in, m.y_in]
    out = image.copy()
    cv2.fillPoly(out, [frame.table_to_image(square).astype(np.int32)], (90, 120, 90))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="rendered tables (tablesight render-tables), with lens.json")
    parser.add_argument("--count", type=int, default=30, help="tables to use, the first in the folder")
    parser.add_argument("--no-lens", action="store_true", help="calibrate without the folder's lens file")
    args = parser.parse_args()
    folder = Path(args.folder)
    lens = None if args.no_lens else LensModel.load(folder / "lens.json")
    errors: dict[str, list[FloatArray]] = {"shipped, all markers": [], "pose rays, all markers": []}
    errors.update({"shipped, one hidden": [], "pose rays, one hidden": []})
    for truth_path in sorted(folder.glob("*.truth.json"))[: args.count]:
        stem = truth_path.name.removesuffix(".truth.json")
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        layout = Layout.from_json(truth["layout"])
        camera = render_table(int(stem), truth["scene"]["game"]).camera
        raw = cv2.imread(str(folder / f"{stem}.empty.jpg"))
        if raw is None:
            raise SystemExit(f"{folder / (stem + '.empty.jpg')}: missing or not an image")
        empty: npt.NDArray[np.uint8] = raw.astype(np.uint8)
        grid = np.array([[x, y] for x in np.linspace(0.1, 0.9, 9) for y in np.linspace(0.1, 0.9, 9)])
        table_pts = grid * [layout.width_in, layout.depth_in]
        px = camera.project(np.c_[table_pts, np.full(len(table_pts), -BASE_TOP_IN)])
        full = calibrate(empty, layout, lens)
        frames = [("all markers", full)]
        if full.quality is not None and len(full.quality.markers_used) == len(layout.markers):
            frames += [
                ("one hidden", calibrate(hide_marker(empty, full, layout, m.id), layout, lens)) for m in layout.markers
            ]
        for case, frame in frames:
            for name, mapped in (
                ("shipped", frame.image_to_table(px, BASE_TOP_IN)),
                ("pose rays", pose_rays(frame, px, BASE_TOP_IN)),
            ):
                errors[f"{name}, {case}"].append(np.hypot(*(mapped - table_pts).T) * MM_PER_IN)
        print(f"{stem}: markers used {full.quality.markers_used if full.quality else '?'}", flush=True)
    print(f"\n{'map, markers':28s} {'points':>7s} {'median mm':>10s} {'p95 mm':>8s} {'max mm':>8s}")
    for name, parts in errors.items():
        if parts:
            e = np.concatenate(parts)
            print(f"{name:28s} {len(e):7d} {np.median(e):10.3f} {np.percentile(e, 95):8.3f} {e.max():8.3f}")
    for case in ("all markers", "one hidden"):
        if errors[f"shipped, {case}"]:
            ratio = np.percentile(np.concatenate(errors[f"pose rays, {case}"]), 95) / np.percentile(
                np.concatenate(errors[f"shipped, {case}"]), 95
            )
            print(f"{case}: the pose's rays' p95 is {ratio:.2f}x the shipped map's")


if __name__ == "__main__":
    main()
