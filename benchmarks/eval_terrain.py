"""Terrain footprints found on the empty table against the truth: IoU per true piece (issue 5: IoU >= 0.9 on 95 %).

    python benchmarks/eval_terrain.py --tables 20 --seed 5000 [--wall-heights] [--method segmenter|grabcut]
        [--style flagstone] [--trees]

Renders held-out tables, finds footprints (``vision.terrain``) on each empty-table
frame, and for every true piece takes the best IoU with a found polygon (0 when
none overlaps). Prints the share of pieces at IoU >= 0.9, the median IoU per
kind, false pieces (found ones that overlap no true piece) and the time per table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import shapely

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.table_frame import calibrate  # noqa: E402
from vision.analyze import make_detector  # noqa: E402
from vision.synth.table import render_table, webcam_lens  # noqa: E402
from vision.terrain import footprint_under, terrain_footprints  # noqa: E402

WALLED = ("blocking", "ruins")  # the kinds the renderer builds with walls (over 1" tall)
PLATEAUS = ("hill",)  # drawn raised to their height whatever it is: their sides lean like walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5000)
    parser.add_argument(
        "--wall-heights", action="store_true", help="take walled pieces' lean out, given their height (footprint_under)"
    )
    parser.add_argument(
        "--method", default="auto", help="how pieces are cut from their patches: segmenter, grabcut, auto"
    )
    parser.add_argument(
        "--style", default="standard", help="the tables' look: standard, or flagstone (never trained on)"
    )
    parser.add_argument("--trees", action="store_true", help="woods carry trees (cones, as the path tracer draws them)")
    args = parser.parse_args()
    detector = make_detector("learned")
    lens = webcam_lens(args.seed)
    ious: dict[str, list[float]] = {}
    false_pieces, found_total, times = 0, 0, []
    for k in range(args.tables):
        game = ("focal-point", "grinding-annihilation")[k % 2]
        table = render_table(args.seed + k, game, style=args.style, trees=args.trees)
        frame = calibrate(table.empty, table.layout, lens)
        start = time.perf_counter()
        found = terrain_footprints(detector, table.empty, frame, args.method)  # type: ignore[arg-type]
        times.append((time.perf_counter() - start) * 1e3)
        truth = [(t["kind"], shapely.Polygon(t["polygon"]), t["height_in"]) for t in table.scene["terrain"]]
        if args.wall_heights:
            # The players give each walled piece's height with its category (here: the true piece it overlaps most).
            feet = []
            for f in found:
                kind, piece, height = max(truth, key=lambda t: t[1].intersection(f).area)
                walled = (kind in PLATEAUS or (kind in WALLED and height > 1.0)) and f.intersects(piece)
                feet.append(footprint_under(f, height, frame) if walled else f)
            found = feet
        for kind, poly, _ in truth:
            best = max((poly.intersection(f).area / poly.union(f).area for f in found), default=0.0)
            ious.setdefault(kind, []).append(best)
        found_total += len(found)
        false_pieces += sum(not any(f.intersects(p) for _, p, _ in truth) for f in found)
        print(f"  table {k + 1}/{args.tables}", file=sys.stderr, flush=True)
    every = [v for values in ious.values() for v in values]
    print(
        f"{args.tables} {args.style} tables{' with trees' if args.trees else ''} from seed {args.seed}, method {args.method}: {len(every)} true pieces, {found_total} found, {false_pieces} false"
    )
    print(
        f"IoU >= 0.9: {sum(v >= 0.9 for v in every) / len(every):.1%}; >= 0.8: {sum(v >= 0.8 for v in every) / len(every):.1%}; median {statistics.median(every):.3f}"
    )
    for kind, values in sorted(ious.items()):
        print(
            f"  {kind}: {len(values)} pieces, median IoU {statistics.median(values):.3f}, >= 0.9 {sum(v >= 0.9 for v in values) / len(values):.0%}"
        )
    print(f"time per table (median): {statistics.median(times):.0f} ms")


if __name__ == "__main__":
    main()
