"""Closest-point distances between bases, markers and terrain, in inches.

Circles use the closed form ``max(0, d - r1 - r2)``. Anything involving an oval
uses the support-function form of the distance between two convex shapes:

    gap = max over unit directions u of  u.(c2 - c1) - h1(u) - h2(u)

where ``h`` is a shape's support function (``sqrt((a cos)^2 + (b sin)^2)`` for
an ellipse; a segment is an ellipse with ``b = 0``). For disjoint shapes this is
exactly the Euclidean distance. The function of the angle is strictly concave
wherever it exceeds minus the smallest radius of curvature of the two shapes,
so a coarse scan followed by golden-section search finds its maximum; the
search converges to well below 1e-6 inch.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import shapely

from geometry.shapes import FloatArray, Footprints

_SCAN_SAMPLES = 24
_GOLDEN_ITERATIONS = 22
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _support_gap(
    dx: FloatArray,
    dy: FloatArray,
    shape1: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    shape2: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    cos_phi: FloatArray,
    sin_phi: FloatArray,
) -> FloatArray:
    """u.(c2 - c1) - h1(u) - h2(u) for u = (cos phi, sin phi); shapes as (a, b, cos f, sin f)."""
    a1, b1, cf1, sf1 = shape1
    a2, b2, cf2, sf2 = shape2
    h1 = np.hypot(a1 * (cos_phi * cf1 + sin_phi * sf1), b1 * (sin_phi * cf1 - cos_phi * sf1))
    h2 = np.hypot(a2 * (cos_phi * cf2 + sin_phi * sf2), b2 * (sin_phi * cf2 - cos_phi * sf2))
    result: FloatArray = dx * cos_phi + dy * sin_phi - h1 - h2
    return result


def ellipse_gap_in(
    dx_in: npt.ArrayLike,
    dy_in: npt.ArrayLike,
    a1_in: npt.ArrayLike,
    b1_in: npt.ArrayLike,
    facing1_rad: npt.ArrayLike,
    a2_in: npt.ArrayLike,
    b2_in: npt.ArrayLike,
    facing2_rad: npt.ArrayLike,
) -> FloatArray:
    """Signed gap between pairs of centrally symmetric ellipses (elementwise, 1-D).

    ``dx, dy`` go from the first centre to the second. Positive: the exact
    distance between the shapes. Zero or negative: they touch or overlap (the
    negative value estimates the overlap depth and is not exact).
    A segment is an ellipse with ``b = 0`` and ``a`` half its length.
    """
    arrays = np.broadcast_arrays(
        *(
            np.atleast_1d(np.asarray(v, dtype=np.float64))
            for v in (dx_in, dy_in, a1_in, b1_in, facing1_rad, a2_in, b2_in, facing2_rad)
        )
    )
    dx, dy, a1, b1, f1, a2, b2, f2 = (v.reshape(-1)[:, None] for v in arrays)
    if dx.shape[0] == 0:
        return np.zeros(0)
    shape1 = (a1, b1, np.cos(f1), np.sin(f1))
    shape2 = (a2, b2, np.cos(f2), np.sin(f2))
    step = 2 * math.pi / _SCAN_SAMPLES
    scan = np.arange(_SCAN_SAMPLES) * step
    values = _support_gap(dx, dy, shape1, shape2, np.cos(scan)[None, :], np.sin(scan)[None, :])
    best = np.argmax(values, axis=1)
    best_value = values[np.arange(len(best)), best]

    def gap(angle: FloatArray) -> FloatArray:
        return _support_gap(dx, dy, shape1, shape2, np.cos(angle), np.sin(angle))

    # Golden-section search for the maximum around the best scanned direction.
    lo = scan[best][:, None] - step
    hi = lo + 2 * step
    c = hi - _GOLDEN * (hi - lo)
    d = lo + _GOLDEN * (hi - lo)
    gc = gap(c)
    gd = gap(d)
    for _ in range(_GOLDEN_ITERATIONS):
        keep_left = gc > gd
        hi = np.where(keep_left, d, hi)
        lo = np.where(keep_left, lo, c)
        probe = np.where(keep_left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        g_probe = gap(probe)
        c, gc, d, gd = (
            np.where(keep_left, probe, d),
            np.where(keep_left, g_probe, gd),
            np.where(keep_left, c, probe),
            np.where(keep_left, gc, g_probe),
        )
    result: FloatArray = np.maximum(np.maximum(gc, gd)[:, 0], best_value)
    return result


_NEWTON_ITERATIONS = 6
_NEAR_FACTOR = 3.0  # pairs closer than this many times their summed semi-major axes get a full scan


def _support_terms(
    a: FloatArray, b: FloatArray, facing: FloatArray, phi: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Support function h, its derivative h' and the radius of curvature h + h'' of an ellipse."""
    psi = phi - facing
    c, s = np.cos(psi), np.sin(psi)
    h = np.hypot(a * c, b * s)
    return h, (b * b - a * a) * s * c / h, (a * b) ** 2 / h**3


def base_gap_in(
    dx_in: FloatArray,
    dy_in: FloatArray,
    a1_in: FloatArray,
    b1_in: FloatArray,
    facing1_rad: FloatArray,
    a2_in: FloatArray,
    b2_in: FloatArray,
    facing2_rad: FloatArray,
) -> FloatArray:
    """``ellipse_gap_in`` for proper ellipses (b > 0), by Newton's method on the angle.

    With g the gap along direction phi, g'' = -g - rho1 - rho2 (rho: radius of
    curvature), so g is strictly concave wherever g > -(rho1 + rho2) and Newton
    converges quadratically from any start inside that hump. Far pairs start
    from the centre-to-centre direction, which lies within asin((a1 + a2) / d)
    of the answer; near pairs start from the best of a coarse scan.
    """
    dx, dy, a1, b1, f1, a2, b2, f2 = (
        np.asarray(v, dtype=np.float64) for v in (dx_in, dy_in, a1_in, b1_in, facing1_rad, a2_in, b2_in, facing2_rad)
    )
    phi = np.arctan2(dy, dx)
    near = np.hypot(dx, dy) < _NEAR_FACTOR * (a1 + a2)
    best_scanned = np.full(dx.shape, -np.inf)
    if near.any():
        step = 2 * math.pi / _SCAN_SAMPLES
        scan = np.arange(_SCAN_SAMPLES) * step
        shape1 = (a1[near, None], b1[near, None], np.cos(f1[near, None]), np.sin(f1[near, None]))
        shape2 = (a2[near, None], b2[near, None], np.cos(f2[near, None]), np.sin(f2[near, None]))
        values = _support_gap(dx[near, None], dy[near, None], shape1, shape2, np.cos(scan), np.sin(scan))
        best = np.argmax(values, axis=1)
        phi[near] = scan[best]
        best_scanned[near] = values[np.arange(len(best)), best]
    for _ in range(_NEWTON_ITERATIONS):
        h1, dh1, rho1 = _support_terms(a1, b1, f1, phi)
        h2, dh2, rho2 = _support_terms(a2, b2, f2, phi)
        cos_phi, sin_phi = np.cos(phi), np.sin(phi)
        g = dx * cos_phi + dy * sin_phi - h1 - h2
        slope = -dx * sin_phi + dy * cos_phi - dh1 - dh2
        curvature = -g - rho1 - rho2
        # Outside the concave hump (deep overlap only) stand still: the answer is "overlapping".
        newton = np.where(curvature < 0, -slope / np.where(curvature < 0, curvature, -1.0), 0.0)
        phi = phi + np.clip(newton, -0.25, 0.25)
    h1 = _support_terms(a1, b1, f1, phi)[0]
    h2 = _support_terms(a2, b2, f2, phi)[0]
    final = dx * np.cos(phi) + dy * np.sin(phi) - h1 - h2
    result: FloatArray = np.maximum(final, best_scanned)
    return result


def _gap_matrix(first: Footprints, second: Footprints, pairs: tuple[npt.NDArray[np.intp], ...]) -> FloatArray:
    i, j = pairs
    return base_gap_in(
        second.x_in[j] - first.x_in[i],
        second.y_in[j] - first.y_in[i],
        first.a_in[i],
        first.b_in[i],
        first.facing_rad[i],
        second.a_in[j],
        second.b_in[j],
        second.facing_rad[j],
    )


def cross_distance_in(first: Footprints, second: Footprints) -> FloatArray:
    """(len(first), len(second)) edge-to-edge distances in inches, 0 when touching or overlapping."""
    dx = second.x_in[None, :] - first.x_in[:, None]
    dy = second.y_in[None, :] - first.y_in[:, None]
    result = np.hypot(dx, dy) - first.a_in[:, None] - second.a_in[None, :]
    oval = ~first.is_round[:, None] | ~second.is_round[None, :]
    if oval.any():
        pairs = np.nonzero(oval)
        result[pairs] = _gap_matrix(first, second, pairs)
    out: FloatArray = np.maximum(result, 0.0)
    return out


def pairwise_distance_in(footprints: Footprints) -> FloatArray:
    """Symmetric (N, N) edge-to-edge distances in inches with a zero diagonal."""
    dx = footprints.x_in[None, :] - footprints.x_in[:, None]
    dy = footprints.y_in[None, :] - footprints.y_in[:, None]
    result = np.hypot(dx, dy) - footprints.a_in[:, None] - footprints.a_in[None, :]
    oval = ~footprints.is_round
    if oval.any():
        # Each unordered pair with an oval once (upper triangle), mirrored below.
        mask = np.triu(oval[:, None] | oval[None, :], k=1)
        pairs = np.nonzero(mask)
        gaps = _gap_matrix(footprints, footprints, pairs)
        result[pairs] = gaps
        result[pairs[1], pairs[0]] = gaps
    np.fill_diagonal(result, 0.0)
    out: FloatArray = np.maximum(result, 0.0)
    return out


def vertical_gap_in(first: Footprints, second: Footprints) -> FloatArray:
    """(len(first), len(second)) vertical gap between the pieces' height ranges, 0 if they overlap."""
    bottom1 = first.z_in[:, None]
    top1 = bottom1 + first.height_in[:, None]
    bottom2 = second.z_in[None, :]
    top2 = bottom2 + second.height_in[None, :]
    out: FloatArray = np.maximum(0.0, np.maximum(bottom2 - top1, bottom1 - top2))
    return out


def combined_sigma_in(first: Footprints, second: Footprints) -> FloatArray:
    """(len(first), len(second)) 1-sigma of a distance between two independently measured pieces."""
    out: FloatArray = np.hypot(first.sigma_in[:, None], second.sigma_in[None, :])
    return out


def polygon_distance_in(footprints: Footprints, polygon: shapely.Polygon) -> FloatArray:
    """Distance in inches from each footprint to a terrain polygon (0 when touching or inside)."""
    result = np.zeros(len(footprints))
    centres = shapely.points(footprints.x_in, footprints.y_in)
    round_ = footprints.is_round
    if round_.any():
        result[round_] = shapely.distance(centres[round_], polygon) - footprints.a_in[round_]
    oval = np.nonzero(~round_)[0]
    if len(oval):
        inside = shapely.contains_xy(polygon, footprints.x_in[oval], footprints.y_in[oval])
        ring = np.asarray(polygon.exterior.coords)
        start, end = ring[:-1], ring[1:]
        mid = (start + end) / 2
        half = (end - start) / 2
        edge_len = np.hypot(half[:, 0], half[:, 1])
        edge_angle = np.arctan2(half[:, 1], half[:, 0])
        grid_i, grid_k = np.meshgrid(oval, np.arange(len(mid)), indexing="ij")
        i, k = grid_i.ravel(), grid_k.ravel()
        gaps = ellipse_gap_in(
            mid[k, 0] - footprints.x_in[i],
            mid[k, 1] - footprints.y_in[i],
            footprints.a_in[i],
            footprints.b_in[i],
            footprints.facing_rad[i],
            edge_len[k],
            0.0,
            edge_angle[k],
        ).reshape(len(oval), len(mid))
        result[oval] = np.where(inside, 0.0, gaps.min(axis=1))
    out: FloatArray = np.maximum(result, 0.0)
    return out
