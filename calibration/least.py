"""The least of a smooth one-dimensional cost: its best point on a coarse grid, then golden-section search between
that point's neighbours (the lens's bend and the focal length read from the markers)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt


def least_on_grid(cost: Callable[[float], float], grid: npt.ArrayLike, tolerance: float) -> float:
    """Where ``cost`` is least, to ``tolerance``: the grid's best point, refined between its neighbours."""
    points = np.asarray(grid, np.float64)
    best = int(np.argmin([cost(float(g)) for g in points]))
    lo, hi = float(points[max(best - 1, 0)]), float(points[min(best + 1, len(points) - 1)])
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = cost(a), cost(b)
    while hi - lo > tolerance:
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = cost(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = cost(b)
    return (lo + hi) / 2
