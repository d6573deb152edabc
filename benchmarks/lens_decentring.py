"""Fit the lens with or without the decentring terms p1, p2? Mapping error of each fit, for lenses with
none, a little and more decentring -> docs/calibration.md.

For each amount of decentring (p1 = -p2), 20 seeded sets of 14 rendered ChArUco views of the renderer's
webcam; each set's lens fitted both ways (``calibrate_lens(views, tangential=...)``). Error: over a grid
of pixels, the fitted model's undistorted rays against the true ones, after the best homography between
them (a table calibration absorbs that much), in pixels at the focal length; the mean over the grid,
then the mean (and the worst) over the 20 lenses.

Run: ``python benchmarks/lens_decentring.py [--lenses 20]`` (about 4 minutes here).
"""

from __future__ import annotations

import argparse

import cv2
import numpy as np

from calibration.lens import calibrate_lens
from vision.synth.camera import Camera
from vision.synth.charuco_views import charuco_views
from vision.synth.table import WEBCAM_HFOV_DEG

SIZE = (1920, 1080)


def mapping_error_px(K: np.ndarray, dist: tuple[float, ...], fitted_K: np.ndarray, fitted_dist: np.ndarray) -> float:
    grid = np.stack(np.meshgrid(np.linspace(100, 1820, 12), np.linspace(100, 980, 8)), -1).reshape(-1, 1, 2)
    true_rays = cv2.undistortPoints(grid, K, np.array(dist)).reshape(-1, 2)
    rays = cv2.undistortPoints(grid, fitted_K, fitted_dist).reshape(-1, 2)
    H, _ = cv2.findHomography(rays, true_rays)
    mapped = cv2.perspectiveTransform(rays.reshape(-1, 1, 2), H).reshape(-1, 2)
    return float(np.linalg.norm(true_rays - mapped, axis=1).mean() * K[0, 0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lenses", type=int, default=20)
    args = parser.parse_args()
    K = Camera.looking_at_table((24.0, 24.0), SIZE, hfov_deg=WEBCAM_HFOV_DEG).K
    for p in (0.0, 0.0005, 0.001):
        dist = (-0.08, 0.01, p, -p, 0.0)
        errors: dict[bool, list[float]] = {False: [], True: []}
        for seed in range(args.lenses):
            views = charuco_views(K, dist, SIZE, 14, np.random.default_rng(7000 + seed))
            for tangential in (False, True):
                lens, _ = calibrate_lens(views, tangential=tangential)
                errors[tangential].append(mapping_error_px(K, dist, lens.K, lens.dist))
        print(
            f"p1 = -p2 = {p}: mapping error (px), mean over {args.lenses} lenses (worst): "
            f"without p1, p2 {np.mean(errors[False]):.3f} ({max(errors[False]):.2f}); "
            f"with them (baseline) {np.mean(errors[True]):.3f} ({max(errors[True]):.2f}); "
            f"ratio x{np.mean(errors[False]) / np.mean(errors[True]):.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
