"""Calibration accuracy on rendered photos with known ground truth -> docs/calibration.md.

For each table size (2'x2', 44"x60") and resolution (720p, 1080p, 4K): a camera
with lens distortion, its lens calibrated from rendered ChArUco views (as a
player would), then seeded random views of the table (tilt 0-25 deg from
vertical, yaw, noise, blur, JPEG, uneven light), each calibrated from its
corner markers. Each camera's lens is calibrated several times over, from
fresh board photos, because one lens estimate's error is one draw. Real error:
RMS per axis over 5,000 random table points mapped from their true pixels.
Reported: the calibration's own sigma estimate.

Run: ``python benchmarks/eval_calibration.py [--lenses 3] [--views 4] [--out table.md]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from calibration.layout import Layout
from calibration.lens import calibrate_lens
from calibration.table_frame import calibrate
from vision.synth.camera import Camera, photo_effects
from vision.synth.charuco_views import charuco_views
from vision.synth.markers_table import table_texture

TABLES = [(24.0, 24.0), (44.0, 60.0)]
RESOLUTIONS = [(1280, 720), (1920, 1080), (3840, 2160)]
DISTORTION = (-0.10, 0.02, 0.0, 0.0, 0.0)
HFOV_DEG = 65.0


def evaluate(table: tuple[float, float], size: tuple[int, int], lenses: int, views: int, seed: int) -> dict[str, float]:
    """``lenses`` independent lens calibrations of one camera, each used for ``views`` views of the table."""
    rng = np.random.default_rng(seed)
    K = Camera.looking_at_table(table, size, hfov_deg=HFOV_DEG).K
    layout = Layout.default(*table)
    errors, sigmas, times, focal_errors = [], [], [], []
    for _ in range(lenses):
        lens, _ = calibrate_lens(charuco_views(K, DISTORTION, size, 16, rng))
        focal_errors.append(abs(lens.K[0, 0] - K[0, 0]) / K[0, 0] * 100)
        for _ in range(views):
            cam = Camera.looking_at_table(
                table,
                size,
                tilt_deg=float(rng.uniform(0, 25)),
                yaw_deg=float(rng.uniform(-12, 12)),
                hfov_deg=HFOV_DEG,
                dist=DISTORTION,
                fill=float(rng.uniform(0.8, 0.95)),
            )
            image_ppi = size[0] / (table[0] * 1.6)
            ppi = float(min(220.0, max(60.0, 2.5 * image_ppi)))
            tex = table_texture(layout, ppi, rng)
            photo = photo_effects(
                cam.render(tex, ppi, border_in=2.0),
                rng,
                noise=float(rng.uniform(1, 3)),
                blur_px=float(rng.uniform(0.3, 1.0)),
                jpeg_quality=int(rng.integers(80, 96)),
                light_gradient=0.3,
            )
            start = time.perf_counter()
            frame = calibrate(photo, layout, lens)
            times.append(time.perf_counter() - start)
            pts = rng.uniform([0, 0], table, (5000, 2))
            truth_px = cam.project(np.c_[pts, np.zeros(len(pts))])
            err = frame.image_to_table(truth_px) - pts
            errors.append(float(np.sqrt(np.mean(err**2))))  # RMS per axis
            assert frame.quality is not None
            sigmas.append(frame.quality.sigma_mean_in)
    ratios = [s / e for s, e in zip(sigmas, errors, strict=True)]
    return {
        "rms_median": statistics.median(errors),
        "rms_max": max(errors),
        "sigma_median": statistics.median(sigmas),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "within_1_5": sum(1 / 1.5 <= r <= 1.5 for r in ratios) / len(ratios),
        # A sigma describes the spread of errors over setups, not one error: RMS reported over RMS real.
        "ratio_all": float(np.sqrt(np.mean(np.square(sigmas)) / np.mean(np.square(errors)))),
        "focal_error_pct": max(focal_errors),
        "ms_median": statistics.median(times) * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lenses", type=int, default=3, help="independent lens calibrations per camera")
    parser.add_argument("--views", type=int, default=4, help="table views per lens calibration")
    parser.add_argument("--out", default=None, help="write the markdown table here")
    args = parser.parse_args()
    rows = []
    for t, table in enumerate(TABLES):
        for r, size in enumerate(RESOLUTIONS):
            result = evaluate(table, size, args.lenses, args.views, seed=100 * t + r)
            rows.append((table, size, result))
            print(
                f"{table[0]:g}x{table[1]:g} {size[0]}x{size[1]}: "
                + ", ".join(f"{k} {v:.4g}" for k, v in result.items()),
                flush=True,
            )
    if args.out:
        lines = [
            "| table | resolution | RMS error, median (in) | RMS error, worst view (in) | reported sigma, median (in) | reported / real, per view | views within 1.5x | reported / real, all views | lens focal error, worst | calibrate time |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for table, size, res in rows:
            lines.append(
                f'| {table[0]:g}" x {table[1]:g}" | {size[0]}x{size[1]} | {res["rms_median"]:.4f} | {res["rms_max"]:.4f} | {res["sigma_median"]:.4f} | '
                f"{res['ratio_min']:.2f}-{res['ratio_max']:.2f} | {res['within_1_5']:.0%} | {res['ratio_all']:.2f} | "
                f"{res['focal_error_pct']:.2f} % | {res['ms_median']:.0f} ms |"
            )
        with open(args.out, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
