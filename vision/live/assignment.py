"""Minimum-cost assignment of rows to columns (the Hungarian method), in numpy alone.

The tracker matches a unit's models to the pieces where its move puts them. Taking the cheapest pair first
swaps neighbours when the models were put down a little off one common shift, as players put them; the pairing
with the least total cost does not.
"""

from __future__ import annotations

import numpy as np


def min_cost_assignment(cost: np.ndarray) -> list[int]:
    """``cost``: (rows, columns) with rows <= columns, finite. Returns, for each row, its column: each column
    used at most once, and the sum of the costs the least possible (shortest augmenting paths with potentials,
    O(rows^2 * columns))."""
    n, m = cost.shape
    if n > m:
        raise ValueError(f"min_cost_assignment: {n} rows but only {m} columns")
    u = np.zeros(n + 1)
    v = np.zeros(m + 1)
    row_of = np.zeros(m + 1, dtype=int)  # column (1-based) -> its row (1-based); 0: free
    way = np.zeros(m + 1, dtype=int)
    for i in range(1, n + 1):
        row_of[0] = i
        j0 = 0
        minv = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = row_of[j0]
            reduced = cost[i0 - 1] - u[i0] - v[1:]
            free = ~used[1:]
            better = free & (reduced < minv[1:])
            minv[1:][better] = reduced[better]
            way[1:][better] = j0
            candidates = np.where(free, minv[1:], np.inf)
            j1 = int(np.argmin(candidates)) + 1
            delta = candidates[j1 - 1]
            u[row_of[used]] += delta
            v[used] -= delta
            minv[1:][free] -= delta
            j0 = j1
            if row_of[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            row_of[j0] = row_of[j1]
            j0 = j1
    out = [0] * n
    for j in range(1, m + 1):
        if row_of[j]:
            out[row_of[j] - 1] = j - 1
    return out
