"""Coherency: is every model close enough to enough others, and is the unit one group?

Links between models are judged with their measurement error: a link that is
too close to call is counted once as present (optimistic graph) and once as
absent (pessimistic graph). The unit is coherent if the pessimistic graph
passes, out of coherency if even the optimistic graph fails, and too close to
call in between.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from geometry.measure import TOO_CLOSE_CODE, YES_CODE, Verdict, within_codes


@dataclass(frozen=True)
class CoherencyReport:
    """Coherency of one unit; model positions are indices into the unit's models."""

    verdict: Verdict
    min_neighbours: int
    limit_in: float
    neighbour_counts: tuple[int, ...]  # links that are surely within the limit
    possible_counts: tuple[int, ...]  # surely-within plus too-close-to-call links
    lacking: tuple[int, ...]  # models short of neighbours even counting uncertain links
    uncertain: tuple[int, ...]  # models whose count passes only with uncertain links
    groups: tuple[tuple[int, ...], ...]  # connected groups of the optimistic graph
    nearest: tuple[int, ...]  # index of each model's nearest other model (-1 if alone)
    nearest_distance_in: tuple[float, ...]

    @property
    def connected(self) -> bool:
        return len(self.groups) <= 1


def connected_groups(adjacency: npt.NDArray[np.bool_]) -> list[list[int]]:
    """Connected components of an undirected graph given as a boolean matrix."""
    n = adjacency.shape[0]
    seen = np.zeros(n, dtype=bool)
    groups: list[list[int]] = []
    for start in range(n):
        if seen[start]:
            continue
        frontier = [start]
        seen[start] = True
        group = []
        while frontier:
            node = frontier.pop()
            group.append(node)
            for other in np.nonzero(adjacency[node] & ~seen)[0]:
                seen[other] = True
                frontier.append(int(other))
        groups.append(sorted(group))
    return groups


def _passes(adjacency: npt.NDArray[np.bool_], min_neighbours: int) -> bool:
    counts = adjacency.sum(axis=1)
    return bool(np.all(counts >= min_neighbours)) and len(connected_groups(adjacency)) == 1


def coherency(
    distance_in: npt.NDArray[np.float64],
    limit_in: float,
    min_neighbours: int = 1,
    sigma_in: npt.ArrayLike = 0.0,
    vertical_in: npt.NDArray[np.float64] | None = None,
    vertical_limit_in: float | None = None,
) -> CoherencyReport:
    """Judge coherency from a unit's (N, N) edge-to-edge distance matrix.

    Every model needs at least ``min_neighbours`` other models within
    ``limit_in`` (and within ``vertical_limit_in`` vertically, if given), and
    all models must form a single connected group. A unit of one model is
    always coherent.

    >>> d = np.array([[0, 1.5, 3.0], [1.5, 0, 1.5], [3.0, 1.5, 0]])
    >>> coherency(d, 2.0).verdict
    <Verdict.YES: 'yes'>
    """
    n = distance_in.shape[0]
    if n == 0:
        raise ValueError("coherency of a unit with no models")
    codes = within_codes(distance_in, limit_in, sigma_in, vertical_in, vertical_limit_in)
    np.fill_diagonal(codes, 0)
    sure = codes == YES_CODE
    possible = sure | (codes == TOO_CLOSE_CODE)
    sure_counts = sure.sum(axis=1)
    possible_counts = possible.sum(axis=1)
    need = min(min_neighbours, n - 1)

    if n == 1 or _passes(sure, need):
        verdict = Verdict.YES
    elif _passes(possible, need):
        verdict = Verdict.TOO_CLOSE
    else:
        verdict = Verdict.NO

    masked = distance_in + np.where(np.eye(n, dtype=bool), np.inf, 0.0)
    nearest = masked.argmin(axis=1) if n > 1 else np.array([-1])
    nearest_d = masked.min(axis=1) if n > 1 else np.array([np.inf])
    return CoherencyReport(
        verdict=verdict,
        min_neighbours=need,
        limit_in=limit_in,
        neighbour_counts=tuple(int(c) for c in sure_counts),
        possible_counts=tuple(int(c) for c in possible_counts),
        lacking=tuple(int(i) for i in np.nonzero(possible_counts < need)[0]),
        uncertain=tuple(int(i) for i in np.nonzero((possible_counts >= need) & (sure_counts < need))[0]),
        groups=tuple(tuple(g) for g in connected_groups(possible)),
        nearest=tuple(int(i) for i in nearest),
        nearest_distance_in=tuple(float(d) for d in nearest_d),
    )
