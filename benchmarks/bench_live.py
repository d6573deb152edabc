"""Live-table cost: a still 1080p frame (motion gate only) against re-detecting every frame.

Run: ``python benchmarks/bench_live.py``. Seeded.
"""

from __future__ import annotations

import itertools

import numpy as np
from eval_live_game import light_bands
from timing import median_ms

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from vision.analyze import analyze, make_detector
from vision.live.motion import MotionGate
from vision.synth.table import render_table


def main() -> None:
    table = render_table(21, hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    detector = make_detector("auto")
    reference = detector.prepare(table.empty, frame)
    gate = MotionGate()
    gate.update(table.image)
    still = median_ms(lambda: gate.update(table.image), 100)
    full = median_ms(
        lambda: analyze(table.image, table.layout, None, frame, lens, "focal-point", None, None, reference, detector),
        10,
    )
    # A webcam's frames differ by noise, and under a flickering light by bands of light (the gate divides them out)
    rng = np.random.default_rng(21)
    frames = [
        np.clip(
            table.image * light_bands(table.image.shape[0], 0.03, rng) + rng.normal(0, 2, table.image.shape), 0, 255
        ).astype(np.uint8)
        for _ in range(4)
    ]
    banded_gate = MotionGate()
    banded_gate.update(frames[0])
    shown = itertools.cycle(frames)
    banded = median_ms(lambda: banded_gate.update(next(shown)), 100)
    print("1920x1080 frames of a still 2'x2' table")
    print(f"  still frame (motion gate): {still:.2f} ms (target <= 15 ms)")
    print(f"  still frame, camera noise and bands of light 3 % (motion gate): {banded:.2f} ms")
    print(
        f"  re-detecting every frame (baseline): {full:.0f} ms -> the gate costs {still / full:.1%} of it (x{full / still:.0f} cheaper)"
    )


if __name__ == "__main__":
    main()
