"""Path benchmark: moves across a busy 44" x 60" table.

A seeded table with 8 enemy bases (32 mm, as the 32-gons the move rulings use)
and 4 blocking ruins, with and without 2 difficult woods; 6 moves of a 32 mm
base, 4-12" each. Prints the time of ``geometry.paths.shortest_path`` (A* that
tests only the edges of the nodes it expands; without woods, only lines taut
at both ends) against a baseline measured in the same run: the same visibility
graph built whole (every node pair tested against the obstacles), then
Dijkstra. The two must agree on every cost.
Run: ``python benchmarks/bench_paths.py``. Seeded; no arguments needed.
"""

from __future__ import annotations

import heapq
import time

import numpy as np
import shapely

from geometry.paths import _ring_points, _rings, _steiner_points, shortest_path

TABLE = shapely.box(0, 0, 44, 60)
RADIUS_IN = 32 / 25.4 / 2


def build_table(seed: int = 2026) -> tuple[list[shapely.Polygon], list[shapely.Polygon]]:
    rng = np.random.default_rng(seed)
    blocking = [shapely.Point(*rng.uniform((3, 10), (41, 50))).buffer(RADIUS_IN, quad_segs=8) for _ in range(8)]
    for _ in range(4):
        x, y = rng.uniform((3, 8), (36, 48))
        w, h = rng.uniform(0.5, 6.0, 2)
        blocking.append(shapely.box(x, y, x + w, y + h))
    difficult = [shapely.Point(*rng.uniform((6, 12), (38, 48))).buffer(rng.uniform(1.5, 3.0)) for _ in range(2)]
    return blocking, difficult


def moves(blocking: list[shapely.Polygon], seed: int = 7, count: int = 6) -> list[tuple[tuple[float, float], ...]]:
    rng = np.random.default_rng(seed)
    grown = shapely.union_all(blocking).buffer(RADIUS_IN)
    out: list[tuple[tuple[float, float], ...]] = []
    while len(out) < count:
        start = rng.uniform((2, 2), (42, 58))
        goal = start + rng.uniform(4, 12) * np.array([np.cos(a := rng.uniform(0, 2 * np.pi)), np.sin(a)])
        inside = shapely.box(2, 2, 42, 58)
        if all(inside.contains(shapely.Point(p)) and not grown.contains(shapely.Point(p)) for p in (start, goal)):
            out.append(((float(start[0]), float(start[1])), (float(goal[0]), float(goal[1]))))
    return out


def whole_graph_cost(
    start: tuple[float, float],
    goal: tuple[float, float],
    blocking: list[shapely.Polygon],
    difficult: list[shapely.Polygon],
) -> float:
    """Baseline: every node pair tested, then Dijkstra (what shortest_path did before session 31)."""
    grown = shapely.union_all([p.buffer(RADIUS_IN, quad_segs=16) for p in blocking])
    inner = TABLE.buffer(-RADIUS_IN, join_style="mitre")
    grown = shapely.union(grown, shapely.box(*TABLE.buffer(RADIUS_IN + 1).bounds).difference(inner))
    core = grown.buffer(-1e-7)
    slow = shapely.union_all(difficult)
    nodes = [start, goal, *_ring_points(_rings(grown))]
    for polygon in getattr(slow, "geoms", [slow]):
        nodes += _ring_points(_rings(polygon)) + _steiner_points(polygon, 0.25)
    points = np.array(nodes)
    free = ~shapely.contains_xy(core, points[:, 0], points[:, 1])
    free[:2] = True
    points = points[free]
    i, j = np.triu_indices(len(points), k=1)
    lines = shapely.linestrings(np.stack([points[i], points[j]], axis=1))
    shapely.prepare(core)
    ok = ~shapely.intersects(lines, core)
    i, j, lines = i[ok], j[ok], lines[ok]
    cost = shapely.length(lines)
    slow_core = slow.buffer(-1e-7)
    inside = shapely.intersects(lines, slow_core)
    cost[inside] += shapely.length(shapely.intersection(lines[inside], slow_core))
    neighbours: list[list[tuple[int, float]]] = [[] for _ in range(len(points))]
    for a, b, c in zip(i.tolist(), j.tolist(), cost.tolist(), strict=True):
        neighbours[a].append((b, c))
        neighbours[b].append((a, c))
    best = {0: 0.0}
    queue = [(0.0, 0)]
    while queue:
        c, node = heapq.heappop(queue)
        if node == 1:
            return c
        if c > best[node]:
            continue
        for other, edge in neighbours[node]:
            if c + edge < best.get(other, np.inf):
                best[other] = c + edge
                heapq.heappush(queue, (c + edge, other))
    return float("inf")


def main() -> None:
    blocking, woods = build_table()
    trips = moves(blocking)
    for difficult, label in ((woods, "2 woods"), ([], "no woods")):
        run(trips, blocking, difficult, label)


def run(
    trips: list[tuple[tuple[float, float], ...]],
    blocking: list[shapely.Polygon],
    difficult: list[shapely.Polygon],
    label: str,
) -> None:
    ours_s, base_s, worst = [], [], 0.0
    for start, goal in trips:
        t0 = time.perf_counter()
        ours = shortest_path(start, goal, RADIUS_IN, blocking, difficult, bounds=TABLE)
        t1 = time.perf_counter()
        base = whole_graph_cost(start, goal, blocking, difficult)
        t2 = time.perf_counter()
        ours_s.append(t1 - t0)
        base_s.append(t2 - t1)
        if ours.reachable or np.isfinite(base):
            worst = max(worst, abs(ours.cost_in - base))
    print(f"{len(trips)} moves of a 32 mm base on 44x60 with 8 enemy bases, 4 ruins, {label}")
    ours_ms, base_ms = np.median(ours_s) * 1e3, np.median(base_s) * 1e3
    print(f"  ours (A*, edges tested lazily): median {ours_ms:.0f} ms, max {max(ours_s) * 1e3:.0f} ms")
    print(f"  baseline (whole graph, then Dijkstra): median {base_ms:.0f} ms, max {max(base_s) * 1e3:.0f} ms")
    print(f"  speed-up x{base_ms / ours_ms:.1f}; largest cost difference {worst:.2e} in")


if __name__ == "__main__":
    main()
