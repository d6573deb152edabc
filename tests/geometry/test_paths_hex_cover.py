"""Move paths, hex grids and cover relations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geometry.cover import cover_relation, touching_verdict
from geometry.hexgrid import HexGrid, hex_distance
from geometry.paths import shortest_path
from geometry.shapes import Footprints


def test_open_ground_path_is_the_straight_line() -> None:
    result = shortest_path((0, 0), (3, 4), 0.5)
    assert result.reachable and result.cost_in == pytest.approx(5.0) and result.length_in == pytest.approx(5.0)


def test_path_goes_round_a_blocking_box_by_its_grown_corners() -> None:
    # A base of radius 0.5 passes a 2x4 box; the centre path hugs the box grown by 0.5.
    result = shortest_path((0, 0), (10, 0), 0.5, [shapely.box(4, -2, 6, 2)])
    # Tangent from (0,0) to the circle of radius 0.5 round the corner (4,2), an arc over the
    # corner, the 2" top, and the mirror image down to (10,0).
    d = math.hypot(4, 2)
    tangent = math.sqrt(d * d - 0.25)
    arc_turn = math.atan2(2, 4) + math.asin(0.5 / d)  # the tangent line's slope angle
    expected = 2 * tangent + 2 * 0.5 * arc_turn + 2
    assert result.reachable
    assert result.length_in == pytest.approx(expected, abs=0.005)  # corners are 64-gons
    assert result.length_in > 10.0


def test_difficult_terrain_costs_double() -> None:
    # Focal Point, Terrain: "Difficult terrain costs double". A 2" wide band across the way.
    band = shapely.box(4, -20, 6, 20)
    result = shortest_path((0, 0), (10, 0), 0.5, difficult=[band])
    assert result.cost_in == pytest.approx(12.0)
    assert result.length_in == pytest.approx(10.0)


def test_going_round_difficult_terrain_when_cheaper() -> None:
    patch = shapely.box(4, -2, 6, 2)
    result = shortest_path((0, 0), (10, 0), 0.5, difficult=[patch])
    assert result.cost_in == pytest.approx(2 * math.hypot(4, 2) + 2, abs=1e-6)  # 10.94 < 12


def test_closed_gap_is_unreachable_and_start_inside_is_refused() -> None:
    walls = [shapely.box(4, -10, 5, -0.4), shapely.box(4, 0.4, 5, 10)]  # a 0.8" gap
    assert shortest_path((0, 0), (10, 0), 0.3, walls).reachable
    closed = shortest_path((0, 0), (10, 0), 0.5, walls, bounds=shapely.box(-1, -10, 11, 10))
    assert not closed.reachable and "no path" in closed.reason
    inside = shortest_path((4.5, 5), (10, 0), 0.3, walls)
    assert not inside.reachable and "start" in inside.reason


def test_table_edge_keeps_the_whole_base_on_the_table() -> None:
    table = shapely.box(0, 0, 24, 24)
    box = shapely.box(5, 0, 6, 10)
    result = shortest_path((2, 2), (9, 2), 0.5, [box], bounds=table)
    assert result.reachable
    assert all(0.5 - 1e-6 <= y <= 23.5 + 1e-6 for _, y in result.points)


@settings(max_examples=40, deadline=None)
@given(st.floats(2.0, 12.0), st.floats(0.3, 1.5), st.floats(0.2, 0.9))
def test_path_round_a_disc_is_two_tangents_and_an_arc(d_in: float, obstacle_r_in: float, base_r_in: float) -> None:
    """A base walking past a round enemy base from one side to the other: the shortest path of its centre
    wraps the obstacle grown by its radius, two tangents and the arc between them (the only lines a
    shortest path can follow round a corner are those taut there; the search tests only those)."""
    grown_r = obstacle_r_in + base_r_in
    d = max(d_in, grown_r + 0.2)
    result = shortest_path((-d, 0.0), (d, 0.0), base_r_in, [shapely.Point(0, 0).buffer(obstacle_r_in, quad_segs=64)])
    tangent = math.sqrt(d * d - grown_r * grown_r)
    arc = grown_r * (math.pi - 2 * math.acos(grown_r / d))
    assert result.reachable
    assert result.cost_in == pytest.approx(2 * tangent + arc, rel=2e-3)


def test_cost_is_the_same_both_ways_among_many_bases() -> None:
    # Seeded crowds of round bases: the way back costs what the way there did.
    rng = np.random.default_rng(31)
    for _ in range(6):
        bases = [shapely.Point(*rng.uniform(2, 18, 2)).buffer(0.63, quad_segs=8) for _ in range(10)]
        table = shapely.box(0, 0, 20, 20)
        grown = shapely.union_all(bases).buffer(0.5)
        ends = [p for p in rng.uniform(1, 19, (20, 2)) if not grown.contains(shapely.Point(p))][:2]
        there = shortest_path(tuple(ends[0]), tuple(ends[1]), 0.5, bases, bounds=table)
        back = shortest_path(tuple(ends[1]), tuple(ends[0]), 0.5, bases, bounds=table)
        assert there.reachable == back.reachable
        if there.reachable:
            assert there.cost_in == pytest.approx(back.cost_in, abs=1e-9)
            assert there.cost_in >= math.dist(ends[0], ends[1]) - 1e-9


@pytest.mark.parametrize("orientation", ["flat", "pointy"])
def test_hex_centres_round_trip_and_neighbours_are_one_step(orientation: str) -> None:
    grid = HexGrid(1.25, orientation, 0.625, 0.625)  # type: ignore[arg-type]
    q, r = np.meshgrid(np.arange(-3, 4), np.arange(-3, 4))
    x, y = grid.to_table(q.ravel(), r.ravel())
    back_q, back_r = grid.to_hex(x, y)
    assert np.array_equal(back_q, q.ravel()) and np.array_equal(back_r, r.ravel())
    for dq, dr in [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]:
        nx, ny = grid.to_table(dq, dr)
        cx, cy = grid.to_table(0, 0)
        assert math.hypot(nx - cx, ny - cy) == pytest.approx(1.25)
        assert int(hex_distance(0, 0, dq, dr)) == 1


def test_hex_grid_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="width_in"):
        HexGrid(0.0)
    with pytest.raises(ValueError, match="orientation"):
        HexGrid(1.0, "round")  # type: ignore[arg-type]


ints = st.integers(-20, 20)


@settings(max_examples=200, deadline=None)
@given(ints, ints, ints, ints, ints, ints)
def test_hex_distance_is_a_metric(q1: int, r1: int, q2: int, r2: int, q3: int, r3: int) -> None:
    d12 = int(hex_distance(q1, r1, q2, r2))
    assert d12 == int(hex_distance(q2, r2, q1, r1)) >= 0
    assert (d12 == 0) == (q1 == q2 and r1 == r2)
    assert int(hex_distance(q1, r1, q3, r3)) <= d12 + int(hex_distance(q2, r2, q3, r3))


@settings(max_examples=200, deadline=None)
@given(st.floats(-20, 20), st.floats(-20, 20))
def test_a_point_belongs_to_the_nearest_hex_centre(x: float, y: float) -> None:
    grid = HexGrid(1.0, "pointy")
    q, r = grid.to_hex([x], [y])
    cx, cy = grid.to_table(q, r)
    best = math.hypot(float(cx[0]) - x, float(cy[0]) - y)
    for dq, dr in [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]:
        nx, ny = grid.to_table(q + dq, r + dr)
        assert best <= math.hypot(float(nx[0]) - x, float(ny[0]) - y) + 1e-9


def one(x: float, y: float, base: str = "32") -> Footprints:
    return Footprints.from_bases([x], [y], [base])


def test_cover_between_touching_and_within() -> None:
    wall = shapely.box(5, -2, 5.5, 2)
    between = cover_relation(one(0, 0), one(10, 0), wall)
    assert between.between and not between.touching and not between.within
    beside = cover_relation(one(0, 0), one(10, 0), shapely.box(5, 3, 6, 4))
    assert not beside.between
    hugging = cover_relation(one(0, 0), one(5.5 + 32 / 2 / 25.4, 0), shapely.box(5, -2, 5.5, 2))
    assert hugging.touching and hugging.distance_in == pytest.approx(0.0, abs=1e-9)
    woods = cover_relation(one(0, 0), one(10, 0), shapely.box(8, -2, 12, 2))
    assert woods.within and woods.touching
    under_shooter = cover_relation(one(0, 0), one(10, 0), shapely.box(-0.3, -0.3, 0.3, 0.3))
    assert not under_shooter.between


def measured(x: float, y: float, sigma_in: float) -> Footprints:
    return Footprints.from_bases([x], [y], ["32"], sigma_in=[sigma_in])  # r 0.63"


@pytest.mark.parametrize(
    ("gap_in", "sigma_in", "touching", "within"),
    [
        (0.03, 0.0, "no", "no"),  # a 0.03" gap, positions exact
        (0.03, 0.005, "no", "no"),  # 2 sigma (0.01") cannot close it
        (0.03, 0.02, "too_close", "no"),  # 2 sigma (0.04") could
        (-0.03, 0.02, "too_close", "no"),  # overlapping by 0.03": 2 sigma could open a gap
        (-0.1, 0.02, "yes", "no"),  # overlapping by 0.1": in contact wherever it stands within 2 sigma
    ],
)
def test_contact_with_a_piece_closer_than_two_sigma_is_too_close_to_call(
    gap_in: float, sigma_in: float, touching: str, within: str
) -> None:
    target = measured(5.5 + 0.63 + gap_in, 0, sigma_in)
    relation = cover_relation(measured(0, 0, sigma_in), target, shapely.box(5, -2, 5.5, 2))
    assert relation.touching_verdict.value == touching
    # Asked alone (Onefinity's cover asks only contact), without the shooter: the same verdict.
    assert touching_verdict(target, shapely.box(5, -2, 5.5, 2)) is relation.touching_verdict
    assert relation.within_verdict.value == within
    assert relation.touching is (gap_in <= 0)


def test_a_base_at_the_edge_of_a_piece_is_within_it_only_when_its_sigma_cannot_take_it_out() -> None:
    # Woods 8..12 on x: a 32 mm base centred at 11.34 reaches 11.97, 0.03" inside the edge.
    woods = shapely.box(8, -2, 12, 2)
    for sigma_in, verdict in ((0.0, "yes"), (0.005, "yes"), (0.02, "too_close")):
        assert cover_relation(measured(0, 0, 0), measured(11.34, 0, sigma_in), woods).within_verdict.value == verdict
    # 0.03" past the edge: surely not within unless 2 sigma could bring it in.
    for sigma_in, verdict in ((0.0, "no"), (0.005, "no"), (0.02, "too_close")):
        assert cover_relation(measured(0, 0, 0), measured(11.40, 0, sigma_in), woods).within_verdict.value == verdict


def test_a_piece_grazing_the_corridor_between_two_bases_is_too_close_to_call() -> None:
    # The corridor from (0, 0) to (10, 0) between 32 mm bases reaches y = 0.63; a rock from y = 0.60 pokes in.
    for bottom_in, sigma_in, verdict in (
        (0.60, 0.0, "yes"),
        (0.60, 0.005, "yes"),
        (0.60, 0.02, "too_close"),
        (0.66, 0.0, "no"),
        (0.66, 0.02, "too_close"),
        (0.75, 0.02, "no"),
    ):
        rock = shapely.box(4, bottom_in, 6, 2)
        relation = cover_relation(measured(0, 0, sigma_in), measured(10, 0, sigma_in), rock)
        assert relation.between_verdict.value == verdict, (bottom_in, sigma_in)
        assert relation.between is (bottom_in < 0.63)


def test_a_cover_relation_that_is_not_too_close_to_call_holds_wherever_the_bases_move_within_two_sigma() -> None:
    """Property: moving shooter and target by up to 2 sigma never flips a sure between / touching / within."""
    rng = np.random.default_rng(52)
    sigma_in = 0.02
    seen: dict[str, int] = {}
    for k in range(60):
        x0, y0 = rng.uniform(3, 9), rng.uniform(-1.5, 1.5)
        piece = shapely.box(x0, y0, x0 + rng.uniform(0.5, 4), y0 + rng.uniform(0.3, 2))
        sx, sy, tx, ty = 0.0, rng.uniform(-1, 1), rng.uniform(6, 11), rng.uniform(-1.5, 1.5)
        if k % 3 == 0:  # a target in woods: at or near the middle of a piece big enough to hold it
            piece = shapely.box(x0, y0, x0 + rng.uniform(1.2, 2), y0 + rng.uniform(1.2, 2))
            tx, ty = piece.centroid.x + rng.uniform(-0.2, 0.2), piece.centroid.y + rng.uniform(-0.2, 0.2)
        sure = cover_relation(measured(sx, sy, sigma_in), measured(tx, ty, sigma_in), piece)
        assert touching_verdict(measured(tx, ty, sigma_in), piece) is sure.touching_verdict
        for _ in range(6):
            d = rng.normal(size=(2, 2))
            d *= rng.uniform(0, 2 * sigma_in, (2, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
            moved = cover_relation(
                measured(sx + d[0, 0], sy + d[0, 1], 0), measured(tx + d[1, 0], ty + d[1, 1], 0), piece
            )
            for name in ("between", "touching", "within"):
                verdict = getattr(sure, f"{name}_verdict").value
                seen[f"{name} {verdict}"] = seen.get(f"{name} {verdict}", 0) + 1
                if verdict != "too_close":
                    assert getattr(moved, name) is (verdict == "yes"), (name, sure, moved)
    # The scenes meet every case: sure yes, sure no and too close to call.
    assert {"between yes", "between no", "touching yes", "touching no", "within yes", "within no"} <= set(seen)
    assert any(key.endswith("too_close") for key in seen)
