"""Distances between bases, markers and terrain: analytic cases, brute force, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geometry.distance import (
    cross_distance_in,
    ellipse_gap_in,
    pairwise_distance_in,
    polygon_distance_in,
    vertical_gap_in,
)
from geometry.shapes import KNOWN_BASES, Footprints, UnknownBaseError, base_semi_axes_in

R32 = 32 / 2 / 25.4
R25 = 25 / 2 / 25.4


def pair(x2: float, y2: float, base1: str = "32", base2: str = "32", f1: float = 0.0, f2: float = 0.0) -> float:
    fp = Footprints.from_bases([0.0, x2], [0.0, y2], [base1, base2], [f1, f2])
    return float(pairwise_distance_in(fp)[0, 1])


def brute_distance(fp: Footprints, i: int, j: int, samples: int = 1500) -> float:
    """Closest pair among dense outline points (0 if the outlines' polygons meet)."""
    outline = fp.boundary_points(samples)
    if shapely.Polygon(outline[i]).intersects(shapely.Polygon(outline[j])):
        return 0.0
    gaps = outline[i][:, None, :] - outline[j][None, :, :]
    return float(np.sqrt((gaps**2).sum(axis=-1)).min())


def test_base_sizes_convert_from_millimetres() -> None:
    assert base_semi_axes_in("32") == pytest.approx((R32, R32))
    assert base_semi_axes_in("28.5")[0] == pytest.approx(28.5 / 2 / 25.4)
    assert base_semi_axes_in("170x105") == pytest.approx((85 / 25.4, 52.5 / 25.4))
    assert base_semi_axes_in(40) == base_semi_axes_in("40")
    assert len(KNOWN_BASES) == 12
    with pytest.raises(UnknownBaseError, match="'33' is not a known base size"):
        base_semi_axes_in("33")


def test_spec_example_wardens_are_1_24_inches_apart() -> None:
    # scene-format.md: w1 and w2 are 2.5" apart centre to centre, 32 mm bases -> 1.24" edge to edge.
    assert pair(2.5, 0.0) == pytest.approx(2.5 - 2 * R32, abs=1e-12)
    assert pair(2.5, 0.0) == pytest.approx(1.24, abs=0.005)


def test_touching_bases_are_zero_apart() -> None:
    assert pair(2 * R32, 0.0) == pytest.approx(0.0, abs=1e-12)
    assert pair(0.0, R32 + R25, "32", "25") == pytest.approx(0.0, abs=1e-12)


def test_overlapping_bases_are_zero_apart() -> None:
    assert pair(0.5, 0.3) == 0.0
    assert pair(0.2, 0.0, "60x35", "60x35", 0, 90) == 0.0
    assert pair(0.0, 0.0, "170x105", "25") == 0.0  # small base entirely under a big oval


@pytest.mark.parametrize("oval", ["60x35", "75x42", "90x52", "105x70", "120x92", "170x105"])
@pytest.mark.parametrize("facing_deg", [0.0, 30.0, 45.0, 90.0, 135.0, 250.0])
def test_oval_to_circle_along_the_axes_is_analytic(oval: str, facing_deg: float) -> None:
    a, b = base_semi_axes_in(oval)
    f = math.radians(facing_deg)
    for axis, semi in ((0.0, a), (math.pi / 2, b)):
        direction = f + axis
        d = semi + R25 + 1.7
        got = pair(d * math.cos(direction), d * math.sin(direction), oval, "25", facing_deg, 0.0)
        assert got == pytest.approx(1.7, abs=1e-9)


def test_two_ovals_end_to_end_and_side_by_side() -> None:
    a, b = base_semi_axes_in("90x52")
    assert pair(2 * a + 0.5, 0.0, "90x52", "90x52") == pytest.approx(0.5, abs=1e-9)
    assert pair(0.0, 2 * b + 0.25, "90x52", "90x52") == pytest.approx(0.25, abs=1e-9)
    assert pair(a + b + 0.1, 0.0, "90x52", "90x52", 0, 90) == pytest.approx(0.1, abs=1e-9)


def test_oval_distances_match_dense_brute_force_to_a_thousandth() -> None:
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(150):
        bases = list(rng.choice(KNOWN_BASES, 2))
        fp = Footprints.from_bases(rng.uniform(0, 6, 2), rng.uniform(0, 6, 2), bases, rng.uniform(0, 360, 2))
        worst = max(worst, abs(pairwise_distance_in(fp)[0, 1] - brute_distance(fp, 0, 1)))
    assert worst < 1e-3


def test_pairwise_and_cross_agree_and_are_symmetric() -> None:
    rng = np.random.default_rng(3)
    fp = Footprints.from_bases(
        rng.uniform(0, 24, 30), rng.uniform(0, 24, 30), list(rng.choice(KNOWN_BASES, 30)), rng.uniform(0, 360, 30)
    )
    d = pairwise_distance_in(fp)
    assert np.allclose(d, d.T)
    assert np.allclose(np.diag(d), 0.0)
    assert np.allclose(d, cross_distance_in(fp, fp) * (1 - np.eye(30)), atol=1e-9)


def test_segment_is_an_ellipse_with_no_width() -> None:
    # Circle of radius 1 at the origin; segment from (3, -1) to (3, 1): gap 2.
    gap = ellipse_gap_in(3.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, math.pi / 2)
    assert gap[0] == pytest.approx(2.0, abs=1e-9)


def test_base_to_terrain_distance() -> None:
    square = shapely.box(2, 2, 4, 4)
    fp = Footprints.from_bases([0.0, 3.0, 5.0], [3.0, 3.0, 5.0], ["32", "25", "60x35"], [0, 0, 0])
    d = polygon_distance_in(fp, square)
    assert d[0] == pytest.approx(2 - R32)
    assert d[1] == 0.0  # inside
    a, b = base_semi_axes_in("60x35")
    corner = brute_distance_to_polygon(fp[[2]], square)
    assert d[2] == pytest.approx(corner, abs=1e-4)


def brute_distance_to_polygon(fp: Footprints, polygon: shapely.Polygon) -> float:
    return float(shapely.Polygon(fp.boundary_points(20000)[0]).distance(polygon))


def test_oval_to_concave_terrain_matches_brute_force() -> None:
    rng = np.random.default_rng(11)
    ell = shapely.Polygon([[2, 2], [8, 2], [8, 3], [3, 3], [3, 8], [2, 8]])
    fp = Footprints.from_bases(
        rng.uniform(-1, 10, 60), rng.uniform(-1, 10, 60), list(rng.choice(KNOWN_BASES[6:], 60)), rng.uniform(0, 360, 60)
    )
    d = polygon_distance_in(fp, ell)
    brute = np.array([shapely.Polygon(p).distance(ell) for p in fp.boundary_points(8000)])
    assert np.max(np.abs(d - brute)) < 1e-3


def test_vertical_gap_uses_height_ranges() -> None:
    low = Footprints.build([0.0], [0.0], 0.5, z_in=0.0, height_in=1.5)
    high = Footprints.build([0.0], [0.0], 0.5, z_in=5.0, height_in=1.0)
    assert vertical_gap_in(low, high)[0, 0] == pytest.approx(3.5)
    assert vertical_gap_in(high, low)[0, 0] == pytest.approx(3.5)
    assert vertical_gap_in(low, low)[0, 0] == 0.0


coords = st.floats(-30, 30, allow_nan=False)
angles = st.floats(0, 360, allow_nan=False)
bases = st.sampled_from(KNOWN_BASES)


@settings(max_examples=200, deadline=None)
@given(coords, coords, bases, bases, angles, angles, coords, coords)
def test_distance_properties(x: float, y: float, b1: str, b2: str, f1: float, f2: float, tx: float, ty: float) -> None:
    fp = Footprints.from_bases([0.0, x], [0.0, y], [b1, b2], [f1, f2])
    d = pairwise_distance_in(fp)[0, 1]
    assert d >= 0.0
    swapped = Footprints.from_bases([x, 0.0], [y, 0.0], [b2, b1], [f2, f1])
    assert pairwise_distance_in(swapped)[0, 1] == pytest.approx(d, abs=1e-9)
    moved = Footprints.from_bases([tx, x + tx], [ty, y + ty], [b1, b2], [f1, f2])
    assert pairwise_distance_in(moved)[0, 1] == pytest.approx(d, abs=1e-7)
    # Never more than the centre distance minus the smaller semi-axes, never less than minus the larger.
    a1, s1 = base_semi_axes_in(b1)
    a2, s2 = base_semi_axes_in(b2)
    centre = math.hypot(x, y)
    assert max(0.0, centre - a1 - a2) - 1e-9 <= d <= max(0.0, centre - s1 - s2) + 1e-9


@settings(max_examples=100, deadline=None)
@given(coords, coords, bases, bases, angles, angles, angles)
def test_distance_is_rotation_invariant(
    x: float, y: float, b1: str, b2: str, f1: float, f2: float, turn: float
) -> None:
    fp = Footprints.from_bases([0.0, x], [0.0, y], [b1, b2], [f1, f2])
    t = math.radians(turn)
    xr, yr = x * math.cos(t) - y * math.sin(t), x * math.sin(t) + y * math.cos(t)
    turned = Footprints.from_bases([0.0, xr], [0.0, yr], [b1, b2], [f1 + turn, f2 + turn])
    assert pairwise_distance_in(turned)[0, 1] == pytest.approx(pairwise_distance_in(fp)[0, 1], abs=1e-7)
