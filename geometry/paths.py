"""Shortest legal path for a moving base: around blocking terrain and enemy bases,
with difficult terrain costing extra per inch.

The base is treated as a disc (radius given by the caller: a round base's
radius, an oval's half width since players turn ovals to pass through gaps).
Obstacles are grown by that radius and the shortest path of the base's centre
is searched on a visibility graph: start, goal, the corners of the grown
obstacles and of difficult terrain, and points every ``steiner_spacing_in``
along difficult terrain's outline (where a path may bend as it enters or leaves).
The graph is searched by A*, testing only the edges of the nodes it expands
(and, without difficult terrain, only lines taut at both ends).
Without difficult terrain the result is the exact shortest path (up to the
polygonal approximation of grown corners, 0.1% of the radius); with it, the
cost is within a Steiner spacing's worth of the optimum.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely

_CORE_SHRINK_IN = 1e-7  # obstacles are tested shrunk a hair, so paths may slide along them
_QUAD_SEGMENTS = 16


@dataclass(frozen=True)
class PathResult:
    reachable: bool
    cost_in: float  # movement cost, difficult inches counted with their multiplier
    length_in: float  # plain length of the path
    points: tuple[tuple[float, float], ...]
    reason: str = ""


def _rings(geometry: shapely.Geometry) -> list[np.ndarray]:
    """The corners of each ring of ``geometry`` (exteriors and holes), in ring order: (K, 2) each."""
    return [
        np.asarray(ring.coords, dtype=np.float64)[:-1]
        for polygon in getattr(geometry, "geoms", [geometry])
        if not polygon.is_empty
        for ring in [polygon.exterior, *polygon.interiors]
    ]


def _ring_points(rings: list[np.ndarray]) -> list[tuple[float, float]]:
    """The corners of ``rings`` (``_rings``), in order, as points."""
    return [(float(x), float(y)) for corners in rings for x, y in corners]


def _ring_neighbours(rings: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For each corner of ``rings`` (``_rings``), in order, its previous and next corner along its ring: (N, 2)
    each."""
    if not rings:
        return np.empty((0, 2)), np.empty((0, 2))
    return np.concatenate([np.roll(c, 1, axis=0) for c in rings]), np.concatenate(
        [np.roll(c, -1, axis=0) for c in rings]
    )


def _tangent(at: np.ndarray, towards: np.ndarray, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Whether the line from corner ``at`` towards ``towards`` leaves both of the corner's ring neighbours
    on one side (or on the line). A shortest path bends round an obstacle's corner only along such lines;
    the others need not be tested against the obstacles at all. True where the corner has no ring (NaN)."""
    d = towards - at
    side_before = d[..., 0] * (before[..., 1] - at[..., 1]) - d[..., 1] * (before[..., 0] - at[..., 0])
    side_after = d[..., 0] * (after[..., 1] - at[..., 1]) - d[..., 1] * (after[..., 0] - at[..., 0])
    out: np.ndarray = ~(side_before * side_after < -1e-12)  # NaN compares False: no ring, no constraint
    return out


def _steiner_points(polygon: shapely.Polygon, spacing_in: float) -> list[tuple[float, float]]:
    ring = polygon.exterior
    count = max(int(np.ceil(ring.length / spacing_in)), 3)
    return [
        (float(p.x), float(p.y))
        for p in shapely.line_interpolate_point(ring, np.linspace(0, ring.length, count, endpoint=False))
    ]


def shortest_path(
    start: tuple[float, float],
    goal: tuple[float, float],
    radius_in: float,
    blocking: Sequence[shapely.Polygon] = (),
    difficult: Sequence[shapely.Polygon] = (),
    difficult_cost: float = 2.0,
    bounds: shapely.Polygon | None = None,
    steiner_spacing_in: float = 0.25,
) -> PathResult:
    """Cheapest path of a disc's centre from ``start`` to ``goal``.

    ``blocking`` may not be crossed (terrain, and enemy bases grown by any
    extra clearance the rules demand); ``difficult`` costs ``difficult_cost``
    inches per inch; ``bounds`` (the table) must contain the whole disc.
    """
    grown = shapely.union_all([p.buffer(radius_in, quad_segs=_QUAD_SEGMENTS) for p in blocking])
    if bounds is not None:
        inner = bounds.buffer(-radius_in, join_style="mitre")
        grown = shapely.union(grown, shapely.box(*bounds.buffer(radius_in + 1).bounds).difference(inner))
    core = grown.buffer(-_CORE_SHRINK_IN) if not grown.is_empty else grown
    for name, point in (("start", start), ("goal", goal)):
        if not core.is_empty and core.contains(shapely.Point(point)):
            return PathResult(
                False, float("inf"), float("inf"), (), f"the {name} position is inside blocking terrain or a base"
            )

    slow = shapely.union_all(list(difficult)) if difficult else shapely.Polygon()
    grown_rings = _rings(grown)
    nodes = [start, goal, *_ring_points(grown_rings)]
    for polygon in getattr(slow, "geoms", [slow]):
        if not polygon.is_empty:
            nodes.extend(_ring_points(_rings(polygon)))
            nodes.extend(_steiner_points(polygon, steiner_spacing_in))
    points = np.array(nodes, dtype=np.float64)
    # Ring neighbours of the obstacles' corners; NaN (a path may bend any way) at start and goal, and
    # everywhere when there is difficult terrain: there the graph's bends stand in for points between
    # nodes, and a corner passed untaut can be the cheapest (seen on 1 of 300 random tables).
    before = np.full_like(points, np.nan)
    after = np.full_like(points, np.nan)
    if slow.is_empty:
        corner_before, corner_after = _ring_neighbours(grown_rings)  # the nodes after start and goal
        before[2 : 2 + len(corner_before)] = corner_before
        after[2 : 2 + len(corner_after)] = corner_after
    if not core.is_empty:
        free = ~shapely.contains_xy(core, points[:, 0], points[:, 1])
        free[:2] = True
        points, before, after = points[free], before[free], after[free]
        shapely.prepare(core)  # tested against every edge the search looks at
    slow_core = slow.buffer(-_CORE_SHRINK_IN) if not slow.is_empty else slow
    if not slow_core.is_empty:
        shapely.prepare(slow_core)

    def edges_from(node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The free edges from ``node`` to every other node: (other nodes, costs, lengths)."""
        others = np.flatnonzero(np.arange(len(points)) != node)
        # Only lines a shortest path could follow (taut at both ends) are tested against the obstacles.
        taut = _tangent(points[node], points[others], before[node], after[node])
        taut &= _tangent(points[others], points[node], before[others], after[others])
        others = others[taut]
        lines = shapely.linestrings(np.stack([np.broadcast_to(points[node], (len(others), 2)), points[others]], axis=1))
        if not core.is_empty:
            free = ~shapely.intersects(lines, core)
            others, lines = others[free], lines[free]
        length = shapely.length(lines)
        cost = length.copy()
        if not slow_core.is_empty:
            # Only the inside counts: a path sliding along the edge of a wood is not in it.
            inside = shapely.intersects(lines, slow_core)
            cost[inside] += (difficult_cost - 1.0) * shapely.length(shapely.intersection(lines[inside], slow_core))
        return others, cost, length

    # A* with edges tested only from the nodes it expands: a typical move looks at a few nodes'
    # edges, not all n^2 (a 600-node table took 3 s a path). The straight-line distance to the
    # goal never overestimates (an inch costs at least an inch), so the first time the goal is
    # taken off the queue its cost is the best.
    to_goal = np.hypot(points[:, 0] - goal[0], points[:, 1] - goal[1])
    n = len(points)
    best = np.full(n, np.inf)
    best[0] = 0.0
    previous = np.full(n, -1)
    travelled = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    queue = [(float(to_goal[0]), 0)]
    while queue:
        _, node = heapq.heappop(queue)
        if done[node]:
            continue
        if node == 1:
            break
        done[node] = True
        others, cost, length = edges_from(node)
        for other, edge_cost, edge_len in zip(others.tolist(), cost.tolist(), length.tolist(), strict=True):
            if not done[other] and best[node] + edge_cost < best[other]:
                best[other] = best[node] + edge_cost
                previous[other] = node
                travelled[other] = travelled[node] + edge_len
                heapq.heappush(queue, (best[other] + float(to_goal[other]), other))
    if not np.isfinite(best[1]):
        return PathResult(
            False, float("inf"), float("inf"), (), "no path: the way is closed by blocking terrain or bases"
        )
    route = [1]
    while route[-1] != 0:
        route.append(int(previous[route[-1]]))
    route.reverse()
    return PathResult(
        True,
        float(best[1]),
        float(travelled[1]),
        tuple((float(points[k, 0]), float(points[k, 1])) for k in route),
    )
