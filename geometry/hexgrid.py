"""Hex grids laid over the table: table inches <-> axial hex coordinates, hex distance.

Axial coordinates (q, r) as in Red Blob Games' hex guide. ``width_in`` is the
distance across flats, which is also the distance between neighbouring centres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class HexGrid:
    width_in: float = 1.0
    orientation: Literal["pointy", "flat"] = "flat"
    origin_x_in: float = 0.0  # table position of the centre of hex (0, 0)
    origin_y_in: float = 0.0

    def __post_init__(self) -> None:
        if not self.width_in > 0:
            raise ValueError(f"HexGrid.width_in must be > 0, got {self.width_in}")
        if self.orientation not in ("pointy", "flat"):
            raise ValueError(f"HexGrid.orientation must be 'pointy' or 'flat', got {self.orientation!r}")

    @property
    def size_in(self) -> float:
        """Centre-to-corner distance."""
        return self.width_in / math.sqrt(3.0)

    def to_hex(self, x_in: npt.ArrayLike, y_in: npt.ArrayLike) -> tuple[IntArray, IntArray]:
        """Axial (q, r) of the hex containing each table point.

        >>> g = HexGrid(1.0, "flat")
        >>> [int(v[0]) for v in g.to_hex([0.87], [0.5])]
        [1, 0]
        """
        x = (np.asarray(x_in, dtype=np.float64) - self.origin_x_in) / self.size_in
        y = (np.asarray(y_in, dtype=np.float64) - self.origin_y_in) / self.size_in
        if self.orientation == "pointy":
            q = math.sqrt(3.0) / 3.0 * x - y / 3.0
            r = 2.0 / 3.0 * y
        else:
            q = 2.0 / 3.0 * x
            r = -x / 3.0 + math.sqrt(3.0) / 3.0 * y
        return _cube_round(np.atleast_1d(q), np.atleast_1d(r))

    def to_table(self, q: npt.ArrayLike, r: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Table position (inches) of each hex centre."""
        qa = np.asarray(q, dtype=np.float64)
        ra = np.asarray(r, dtype=np.float64)
        if self.orientation == "pointy":
            x = self.size_in * math.sqrt(3.0) * (qa + ra / 2.0)
            y = self.size_in * 1.5 * ra
        else:
            x = self.size_in * 1.5 * qa
            y = self.size_in * math.sqrt(3.0) * (ra + qa / 2.0)
        return x + self.origin_x_in, y + self.origin_y_in


def _cube_round(q: npt.NDArray[np.float64], r: npt.NDArray[np.float64]) -> tuple[IntArray, IntArray]:
    s = -q - r
    rq, rr, rs = np.round(q), np.round(r), np.round(s)
    dq, dr, ds = np.abs(rq - q), np.abs(rr - r), np.abs(rs - s)
    fix_q = (dq > dr) & (dq > ds)
    fix_r = ~fix_q & (dr > ds)
    rq = np.where(fix_q, -rr - rs, rq)
    rr = np.where(fix_r, -rq - rs, rr)
    return rq.astype(np.int64), rr.astype(np.int64)


def hex_distance(q1: npt.ArrayLike, r1: npt.ArrayLike, q2: npt.ArrayLike, r2: npt.ArrayLike) -> IntArray:
    """Number of hex steps between axial coordinates (elementwise).

    >>> int(hex_distance(0, 0, 2, -1)[()])
    2
    """
    dq = np.asarray(q1) - np.asarray(q2)
    dr = np.asarray(r1) - np.asarray(r2)
    out: IntArray = ((np.abs(dq) + np.abs(dr) + np.abs(dq + dr)) // 2).astype(np.int64)
    return out
