"""Calibration speed on a rendered 1080p photo of a 2'x2' table.

Prints the time of a full calibration (detection, sub-pixel refinement, fit,
pose, quality report with sigma) and of the per-frame check that the
calibration still holds, against a baseline measured in the same run: running
the full calibration on every frame.
Run: ``python benchmarks/bench_calibration.py``.
"""

from __future__ import annotations

import numpy as np
from timing import median_ms

from calibration.fiducials import detect_markers
from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.monitor import CalibrationMonitor
from calibration.table_frame import calibrate
from vision.synth.camera import Camera, photo_effects
from vision.synth.markers_table import table_texture


def main() -> None:
    rng = np.random.default_rng(0)
    layout = Layout.default(24, 24)
    camera = Camera.looking_at_table((24, 24), (1920, 1080), tilt_deg=18, yaw_deg=6, dist=(-0.1, 0.02, 0, 0, 0))
    lens = LensModel(camera.K, camera.dist, (1920, 1080), std=(2.0, 2.0, 2.0, 2.0, 1e-3, 2e-3, 1e-4, 1e-4))
    photo = photo_effects(camera.render(table_texture(layout, 160.0, rng), 160.0, 2.0), rng, noise=2, blur_px=0.6)
    detect = median_ms(lambda: detect_markers(photo))
    full = median_ms(lambda: calibrate(photo, layout, lens))
    monitor = CalibrationMonitor(layout, lens)
    monitor.update(photo)
    check = median_ms(lambda: monitor.update(photo), repeat=50)
    print("1920x1080 photo, 2'x2' table, 4 corner markers")
    print(f"  full calibration: {full:.1f} ms (target <= 50 ms), of which marker detection {detect:.1f} ms")
    print(f"  per-frame check that it still holds: {check:.2f} ms (target <= 10 ms)")
    print(
        f"  baseline, recalibrating every frame: {full:.1f} ms -> the check costs {check / full:.1%} of it (x{full / check:.0f} cheaper)"
    )


if __name__ == "__main__":
    main()
