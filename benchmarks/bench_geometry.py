"""Geometry benchmark: a 44" x 60" table with 100 models and 30 terrain pieces.

Prints, for each task, our time and a naive baseline's time measured in the
same run, and their ratio:
  1. all-pairs base distances + coherency of every unit
     (baseline: per-pair Shapely buffered polygons + ``.distance``, Python loops);
  2. line of sight + visible fraction for all 50 x 50 cross-player pairs
     (baseline: per-pair centre-to-centre sight line against every terrain piece).
Run: ``python benchmarks/bench_geometry.py`` (``make bench``). Seeded; no arguments needed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import shapely
import shapely.affinity

from geometry.coherency import coherency
from geometry.distance import pairwise_distance_in
from geometry.shapes import Footprints
from geometry.sight import Obstacle, SightLines, SightMode

TABLE_IN = (44.0, 60.0)


def build_table(seed: int = 2026) -> tuple[Footprints, np.ndarray, np.ndarray, list[Obstacle]]:
    rng = np.random.default_rng(seed)
    obstacles = []
    modes = [SightMode.OPAQUE, SightMode.SEE_INTO, SightMode.OPAQUE_UNLESS_INSIDE]
    for k in range(30):
        cx, cy = rng.uniform(4, 40), rng.uniform(10, 50)
        w, h = rng.uniform(1.5, 6.0, 2)
        box = shapely.affinity.rotate(shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), rng.uniform(0, 90))
        obstacles.append(Obstacle(f"t{k}", box, modes[k % 3]))
    # 100 models in 14 units (7 per player), about 10% on ovals, deployed in loose blocks.
    xs, ys, bases, facings, unit_of, player_of = [], [], [], [], [], []
    per_unit = [10, 8, 7, 7, 6, 6, 6]
    for player in range(2):
        for u, size in enumerate(per_unit):
            unit = player * len(per_unit) + u
            ux = rng.uniform(4, 40)
            uy = rng.uniform(3, 20) if player == 0 else rng.uniform(40, 57)
            oval = u == len(per_unit) - 1
            for m in range(size):
                xs.append(ux + (m % 4) * 1.9 + rng.normal(0, 0.1))
                ys.append(uy + (m // 4) * 1.9 + rng.normal(0, 0.1))
                bases.append("60x35" if oval else "32")
                facings.append(rng.uniform(0, 360))
                unit_of.append(unit)
                player_of.append(player)
    fp = Footprints.from_bases(xs, ys, bases, facings, sigma_in=0.02)
    return fp, np.array(unit_of), np.array(player_of), obstacles


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def ours_distances_and_coherency(fp: Footprints, unit_of: np.ndarray) -> list[Any]:
    d = pairwise_distance_in(fp)
    sigma = np.hypot(fp.sigma_in[:, None], fp.sigma_in[None, :])
    reports = []
    for unit in np.unique(unit_of):
        idx = np.nonzero(unit_of == unit)[0]
        need = 2 if len(idx) >= 7 else 1
        reports.append(coherency(d[np.ix_(idx, idx)], 2.0, need, sigma[np.ix_(idx, idx)]).verdict)
    return reports


def naive_distances_and_coherency(polygons: list[shapely.Polygon], unit_of: np.ndarray) -> list[bool]:
    n = len(polygons)
    d = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            d[i, j] = d[j, i] = polygons[i].distance(polygons[j])
    verdicts = []
    for unit in np.unique(unit_of):
        idx = list(np.nonzero(unit_of == unit)[0])
        need = 2 if len(idx) >= 7 else 1
        counts = [sum(1 for j in idx if j != i and d[i, j] <= 2.0) for i in idx]
        seen, frontier = {idx[0]}, [idx[0]]
        while frontier:
            i = frontier.pop()
            for j in idx:
                if j not in seen and d[i, j] <= 2.0:
                    seen.add(j)
                    frontier.append(j)
        verdicts.append(all(c >= min(need, len(idx) - 1) for c in counts) and len(seen) == len(idx))
    return verdicts


def naive_polygons(fp: Footprints) -> list[shapely.Polygon]:
    polygons = []
    for k in range(len(fp)):
        disc = shapely.Point(0, 0).buffer(1.0, quad_segs=16)
        ellipse = shapely.affinity.scale(disc, fp.a_in[k], fp.b_in[k], origin=(0, 0))
        ellipse = shapely.affinity.rotate(ellipse, float(fp.facing_rad[k]), origin=(0, 0), use_radians=True)
        polygons.append(shapely.affinity.translate(ellipse, fp.x_in[k], fp.y_in[k]))
    return polygons


def naive_centre_lines(fp: Footprints, i: np.ndarray, j: np.ndarray, obstacles: list[Obstacle]) -> list[bool]:
    prepared = [o.polygon for o in obstacles]
    for polygon in prepared:
        shapely.prepare(polygon)
    visible = []
    for a, b in zip(i, j, strict=True):
        line = shapely.LineString([(fp.x_in[a], fp.y_in[a]), (fp.x_in[b], fp.y_in[b])])
        visible.append(not any(polygon.intersects(line) for polygon in prepared))
    return visible


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15, help="runs per timing (median is printed)")
    args = parser.parse_args()

    fp, unit_of, player_of, obstacles = build_table()
    print(
        f"table {TABLE_IN[0]:g} x {TABLE_IN[1]:g} in, {len(fp)} models ({int((~fp.is_round).sum())} on ovals), "
        f"{len(np.unique(unit_of))} units, {len(obstacles)} terrain pieces; median of {args.repeat} runs"
    )

    polygons = naive_polygons(fp)
    ours_t, ours = timed(lambda: ours_distances_and_coherency(fp, unit_of), args.repeat)
    base_t, base = timed(lambda: naive_distances_and_coherency(polygons, unit_of), max(3, args.repeat // 5))
    agree = sum((v.value == "yes") == b for v, b in zip(ours, base, strict=True))
    print(
        f"distances ({len(fp) * (len(fp) - 1) // 2} pairs) + coherency of {len(ours)} units: "
        f"ours {ours_t * 1e3:.2f} ms, baseline {base_t * 1e3:.1f} ms, speed-up x{base_t / ours_t:.0f} "
        f"(target <= 5 ms; verdicts agree on {agree}/{len(ours)} units)"
    )

    red = np.nonzero(player_of == 0)[0]
    blue = np.nonzero(player_of == 1)[0]
    gi, gj = np.meshgrid(red, blue, indexing="ij")
    i, j = gi.ravel(), gj.ravel()
    lines = SightLines(obstacles)
    los_t, results = timed(lambda: lines.check(fp[i], fp[j]), max(3, args.repeat // 3))
    naive_t, naive = timed(lambda: naive_centre_lines(fp, i, j, obstacles), max(3, args.repeat // 3))
    visible = sum(r.visible for r in results)
    partial = sum(0 < r.visible_fraction < 1 for r in results)
    wrong = sum(r.visible != n for r, n in zip(results, naive, strict=True))
    print(
        f"line of sight + visible fraction, {len(i)} pairs: ours {los_t * 1e3:.0f} ms, "
        f"centre-line baseline {naive_t * 1e3:.0f} ms, ratio x{los_t / naive_t:.2f} (target <= 1000 ms)"
    )
    print(
        f"  {visible} pairs visible, {partial} partly hidden; the centre-line shortcut gets "
        f"{wrong} of {len(i)} visible/not-visible answers wrong"
    )


if __name__ == "__main__":
    main()
