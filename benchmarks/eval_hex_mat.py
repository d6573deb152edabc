"""How well the camera finds the hex grid printed on a mat (vision/hex_mat.py).

    python benchmarks/eval_hex_mat.py [--tables 40] [--seed 5000]

Renders seeded Onefinity tables, each with a hex grid drawn at random (width 0.8-2.5" flat to flat, pointy or
flat, anywhere), finds the grid on the empty table, and reports how many were found, the width's error and the
worst error over the table of where the found grid puts a hex's centre, against a baseline in the same run:
the grid read from the spectrum and one correlation alone (no search along the edges). Then the same number of
plain mats (Focal Point tables): a grid found there is a false one. Prints the time per search.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.lens import LensModel  # noqa: E402
from calibration.table_frame import calibrate  # noqa: E402
from geometry.hexgrid import HexGrid  # noqa: E402
from vision.hex_mat import HEX_PX_PER_IN, _from_spectrum, _offset, hex_mat_on, line_map  # noqa: E402
from vision.synth import table as synth  # noqa: E402


def worst_centre_error_in(truth: HexGrid, found: HexGrid, width_in: float, depth_in: float) -> float:
    q, r = np.meshgrid(np.arange(-60, 61), np.arange(-60, 61))
    cx, cy = truth.to_table(q.ravel(), r.ravel())
    keep = (cx > 0) & (cx < width_in) & (cy > 0) & (cy < depth_in)
    fx, fy = found.to_table(*found.to_hex(cx[keep], cy[keep]))
    return float(np.hypot(fx - cx[keep], fy - cy[keep]).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5000)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    found_count, width_errors, centre_errors, times_s, wrong_orientation = 0, [], [], [], 0
    baseline_errors = []
    for k in range(args.tables):
        seed = args.seed + k
        width = float(rng.uniform(0.8, 2.5))
        grid = {
            "width_in": round(width, 3),
            "orientation": str(rng.choice(["pointy", "flat"])),
            "origin_x_in": round(float(rng.uniform(0, width)), 3),
            "origin_y_in": round(float(rng.uniform(0, width)), 3),
        }
        synth.HEX_MATS["onefinity"] = grid
        table = synth.render_table(seed, "onefinity")
        lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
        frame = calibrate(table.empty, table.layout, lens)
        start = time.perf_counter()
        found = hex_mat_on(table.empty, frame)
        times_s.append(time.perf_counter() - start)
        tags = " ".join(table.tags) or "plain"
        if found is None:
            print(f"table {seed} ({tags}): {grid}: not found", flush=True)
            continue
        found_count += 1
        wrong_orientation += found.orientation != grid["orientation"]
        width_errors.append(abs(found.width_in - width) / width)
        truth = HexGrid(**grid)
        centre = worst_centre_error_in(truth, HexGrid(**found.spec()), table.layout.width_in, table.layout.depth_in)
        centre_errors.append(centre)
        # The baseline: orientation and width from the spectrum, the offset from one correlation, no search.
        lines = line_map(frame.rectify(table.empty, HEX_PX_PER_IN), HEX_PX_PER_IN)
        orientation, width_in, _ = _from_spectrum(lines, HEX_PX_PER_IN)
        ox, oy = _offset(lines, HEX_PX_PER_IN, orientation, width_in)
        rough = HexGrid(width_in, "pointy" if orientation == "pointy" else "flat", ox, oy)
        baseline_errors.append(worst_centre_error_in(truth, rough, table.layout.width_in, table.layout.depth_in))
        print(
            f'table {seed} ({tags}): {grid["orientation"]} {grid["width_in"]}" -> {found.orientation} '
            f'{found.width_in:.4f}", worst centre {centre:.3f}", contrast {found.contrast:.2f}',
            flush=True,
        )
    false_found = 0
    for k in range(args.tables):
        table = synth.render_table(args.seed + k, "focal-point")
        frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
        false_found += hex_mat_on(table.empty, frame) is not None
    print(
        f"{args.tables} hex mats: found {found_count}, orientation wrong {wrong_orientation}; width error median "
        f"{np.median(width_errors):.3%}, max {max(width_errors, default=0):.3%}; worst hex-centre error per table: "
        f'median {np.median(centre_errors):.3f}", max {max(centre_errors, default=0):.3f}"; '
        f"search {np.median(times_s) * 1e3:.0f} ms (median)\n"
        f"baseline (spectrum and one correlation, no search along the edges): worst centre error median "
        f'{np.median(baseline_errors):.3f}", max {max(baseline_errors, default=0):.3f}" '
        f"({np.median(baseline_errors) / max(np.median(centre_errors), 1e-9):.0f}x the search's median)\n"
        f"{args.tables} plain mats: a grid found on {false_found}"
    )


if __name__ == "__main__":
    main()
