"""Model bases, objective markers and terrain as plain shapes in table inches.

Every base is an ellipse (a circle when both semi-axes are equal) stored as a
struct of arrays, so distance code can work on all bases at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import shapely

SMALLEST_IN = 1e-3  # a footprint shrunk past its size is kept as a tiny one: a point of it is still there

FloatArray = npt.NDArray[np.float64]

MM_PER_IN = 25.4
# A base's top stands this high (real bases are 3-5 mm): the camera sees the top, which parallax moves away
# from the camera's foot, so positions are measured at this height (vision/analyze.py).
BASE_HEIGHT_IN = 0.15
ROUND_BASES_MM: tuple[float, ...] = (25.0, 28.5, 32.0, 40.0, 50.0, 60.0)
OVAL_BASES_MM: tuple[tuple[float, float], ...] = (
    (60.0, 35.0),
    (75.0, 42.0),
    (90.0, 52.0),
    (105.0, 70.0),
    (120.0, 92.0),
    (170.0, 105.0),
)


def _mm_label(mm: float) -> str:
    return f"{mm:g}"


KNOWN_BASES: tuple[str, ...] = tuple(_mm_label(d) for d in ROUND_BASES_MM) + tuple(
    f"{_mm_label(long)}x{_mm_label(short)}" for long, short in OVAL_BASES_MM
)


class UnknownBaseError(ValueError):
    """A base size that is not one of the standard sizes."""


def base_semi_axes_in(base: str | float | int) -> tuple[float, float]:
    """Semi-axes (along facing, across facing) in inches of a standard base.

    >>> base_semi_axes_in("25.4")
    Traceback (most recent call last):
    ...
    geometry.shapes.UnknownBaseError: '25.4' is not a known base size (known: 25, 28.5, ...)
    >>> round(base_semi_axes_in("60x35")[1], 4)
    0.689
    """
    label = _mm_label(float(base)) if isinstance(base, (int, float)) else str(base).strip()
    if label not in KNOWN_BASES:
        raise UnknownBaseError(f"{base!r} is not a known base size (known: {', '.join(KNOWN_BASES)})")
    if "x" in label:
        long_mm, short_mm = (float(v) for v in label.split("x"))
        return long_mm / 2 / MM_PER_IN, short_mm / 2 / MM_PER_IN
    radius_in = float(label) / 2 / MM_PER_IN
    return radius_in, radius_in


def _as_array(values: npt.ArrayLike, n: int, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 0:
        array = np.full(n, float(array))
    if array.shape != (n,):
        raise ValueError(f"{name}: expected {n} values, got shape {array.shape}")
    return array


@dataclass(frozen=True)
class Footprints:
    """N elliptical footprints (bases or markers) as arrays of equal length.

    ``a_in`` is the semi-axis along ``facing_rad``, ``b_in`` the one across it.
    ``z_in`` is the height of the footprint's bottom and ``height_in`` how tall
    the piece standing on it is (0 for a flat marker).
    """

    x_in: FloatArray
    y_in: FloatArray
    a_in: FloatArray
    b_in: FloatArray
    facing_rad: FloatArray
    z_in: FloatArray
    height_in: FloatArray
    sigma_in: FloatArray

    def __post_init__(self) -> None:
        n = len(self.x_in)
        for name in ("y_in", "a_in", "b_in", "facing_rad", "z_in", "height_in", "sigma_in"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"Footprints.{name}: expected shape ({n},), got {getattr(self, name).shape}")
        if np.any(self.a_in < 0) or np.any(self.b_in < 0):
            raise ValueError("Footprints: semi-axes must be >= 0")

    @classmethod
    def build(
        cls,
        x_in: npt.ArrayLike,
        y_in: npt.ArrayLike,
        a_in: npt.ArrayLike,
        b_in: npt.ArrayLike | None = None,
        facing_deg: npt.ArrayLike = 0.0,
        z_in: npt.ArrayLike = 0.0,
        height_in: npt.ArrayLike = 0.0,
        sigma_in: npt.ArrayLike = 0.0,
    ) -> Footprints:
        x = np.atleast_1d(np.asarray(x_in, dtype=np.float64))
        n = len(x)
        a = _as_array(a_in, n, "a_in")
        return cls(
            x_in=x,
            y_in=_as_array(y_in, n, "y_in"),
            a_in=a,
            b_in=a.copy() if b_in is None else _as_array(b_in, n, "b_in"),
            facing_rad=np.radians(_as_array(facing_deg, n, "facing_deg")),
            z_in=_as_array(z_in, n, "z_in"),
            height_in=_as_array(height_in, n, "height_in"),
            sigma_in=_as_array(sigma_in, n, "sigma_in"),
        )

    @classmethod
    def from_bases(
        cls,
        x_in: npt.ArrayLike,
        y_in: npt.ArrayLike,
        bases: list[str],
        facing_deg: npt.ArrayLike = 0.0,
        **kwargs: npt.ArrayLike,
    ) -> Footprints:
        axes = np.array([base_semi_axes_in(b) for b in bases], dtype=np.float64).reshape(-1, 2)
        return cls.build(x_in, y_in, axes[:, 0], axes[:, 1], facing_deg, **kwargs)

    def __len__(self) -> int:
        return len(self.x_in)

    def __getitem__(self, index: npt.ArrayLike) -> Footprints:
        """Select footprints by integer indices or a boolean mask; returns a new set."""
        idx = np.atleast_1d(np.asarray(index))
        return Footprints(*(np.atleast_1d(getattr(self, f))[idx] for f in Footprints.__dataclass_fields__))

    def grown(self, margin_in: npt.ArrayLike) -> Footprints:
        """Each outline moved out by ``margin_in`` (per footprint; negative moves it in), never below a tiny
        size. An ellipse's semi-axes are changed by the margin: its true offset curve differs by a small
        fraction of the margin."""
        margin = np.broadcast_to(np.asarray(margin_in, np.float64), self.a_in.shape)
        return replace(
            self, a_in=np.maximum(self.a_in + margin, SMALLEST_IN), b_in=np.maximum(self.b_in + margin, SMALLEST_IN)
        )

    @property
    def is_round(self) -> npt.NDArray[np.bool_]:
        result: npt.NDArray[np.bool_] = np.abs(self.a_in - self.b_in) <= 1e-12
        return result

    def boundary_points(self, count: int) -> FloatArray:
        """(N, count, 2) points evenly spaced in parameter around each outline."""
        t = np.linspace(0.0, 2 * math.pi, count, endpoint=False)
        return self.points_at(np.cos(t)[None, :], np.sin(t)[None, :])

    def points_at(self, u: FloatArray, v: FloatArray) -> FloatArray:
        """Map unit-disc coordinates (u along facing, v across) to table points, shape (N, K, 2)."""
        cos_f = np.cos(self.facing_rad)[:, None]
        sin_f = np.sin(self.facing_rad)[:, None]
        lu = self.a_in[:, None] * u
        lv = self.b_in[:, None] * v
        x = self.x_in[:, None] + lu * cos_f - lv * sin_f
        y = self.y_in[:, None] + lu * sin_f + lv * cos_f
        return np.stack([x, y], axis=-1)

    def polygons(self, count: int = 64) -> npt.NDArray[np.object_]:
        """Shapely polygons circumscribing each outline (never smaller than the true shape)."""
        # Scaling vertices by 1/cos(pi/count) puts every edge outside the curve.
        scale = 1.0 / math.cos(math.pi / count)
        t = np.linspace(0.0, 2 * math.pi, count, endpoint=False) + math.pi / count
        pts = self.points_at(scale * np.cos(t)[None, :], scale * np.sin(t)[None, :])
        polygons: npt.NDArray[np.object_] = shapely.polygons(pts)
        return polygons

    def contains_xy(self, x_in: FloatArray, y_in: FloatArray) -> npt.NDArray[np.bool_]:
        """(N, K) whether point k lies inside footprint n (edge included)."""
        dx = np.asarray(x_in)[None, :] - self.x_in[:, None]
        dy = np.asarray(y_in)[None, :] - self.y_in[:, None]
        cos_f = np.cos(self.facing_rad)[:, None]
        sin_f = np.sin(self.facing_rad)[:, None]
        u = (dx * cos_f + dy * sin_f) / np.maximum(self.a_in[:, None], 1e-12)
        v = (-dx * sin_f + dy * cos_f) / np.maximum(self.b_in[:, None], 1e-12)
        result: npt.NDArray[np.bool_] = u * u + v * v <= 1.0 + 1e-12
        return result


def validate_polygon(points: list[list[float]]) -> str | None:
    """Why a terrain outline is unusable, or None when it is a simple polygon."""
    if len(points) < 3:
        return f"a polygon needs at least 3 points, got {len(points)}"
    polygon = shapely.Polygon(points)
    if not polygon.is_valid:
        return f"the polygon is not simple ({shapely.is_valid_reason(polygon)})"
    if polygon.area <= 0:
        return "the polygon has zero area"
    return None
