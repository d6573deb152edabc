"""Line of sight: hand-made cases, properties, and agreement with dense brute force.

Stated tolerance (docs/geometry.md): against brute force with 9,120 rays per
pair, the visible fraction agrees within 0.08, and visible yes/no agrees
except when brute force itself sees less than 3% of the target.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geometry.shapes import Footprints
from geometry.sight import Obstacle, SightLines, SightMode

FRACTION_TOLERANCE = 0.08
SLIVER = 0.03


def one(x: float, y: float, base: str = "32", facing: float = 0.0) -> Footprints:
    return Footprints.from_bases([x], [y], [base], [facing])


def sight(obstacles: list[Obstacle], a: Footprints, b: Footprints):  # type: ignore[no-untyped-def]
    return SightLines(obstacles).check(a, b)[0]


def test_open_table_is_fully_visible() -> None:
    result = sight([], one(0, 0), one(10, 0))
    assert result.visible and result.visible_fraction == 1.0 and result.blocked_by == ()


def test_wall_across_the_corridor_blocks() -> None:
    wall = Obstacle("wall", shapely.box(4, -3, 5, 3))
    result = sight([wall], one(0, 0), one(10, 0))
    assert not result.visible
    assert result.visible_fraction == 0.0
    assert result.blocked_by == ("wall",)


def test_narrow_wall_hides_only_part_of_the_target() -> None:
    # A low wall hugging the target's lower half: that half is hidden from every observer point
    # (the observer's highest point, y = 0.63, sees over the wall top only below y = -0.07).
    wall = Obstacle("wall", shapely.box(9.0, -3, 9.2, 0.0))
    result = sight([wall], one(0, 0), one(10, 0))
    assert result.visible
    assert 0.45 < result.visible_fraction < 0.65
    assert result.blocked_by == ("wall",)


def test_terrain_beside_the_corridor_does_not_block() -> None:
    result = sight([Obstacle("rock", shapely.box(4, 2, 6, 4))], one(0, 0), one(10, 0))
    assert result.visible and result.visible_fraction == 1.0 and result.blocked_by == ()


def test_see_into_terrain_hides_what_is_behind_but_not_inside() -> None:
    woods = shapely.box(4, -3, 7, 3)
    inside = sight([Obstacle("woods", woods, SightMode.SEE_INTO)], one(0, 0), one(6, 0))
    behind = sight([Obstacle("woods", woods, SightMode.SEE_INTO)], one(0, 0), one(10, 0))
    looking_out = sight([Obstacle("woods", woods, SightMode.SEE_INTO)], one(6, 0), one(12, 0))
    assert inside.visible and inside.visible_fraction == 1.0
    assert not behind.visible
    assert looking_out.visible and looking_out.visible_fraction == 1.0


def test_opaque_unless_inside_is_ignored_by_an_observer_standing_in_it() -> None:
    hill = shapely.box(-1, -3, 2, 3)
    from_hill = sight([Obstacle("hill", hill, SightMode.OPAQUE_UNLESS_INSIDE)], one(0, 0), one(10, 0))
    past_hill = sight(
        [Obstacle("hill", shapely.box(4, -3, 7, 3), SightMode.OPAQUE_UNLESS_INSIDE)], one(0, 0), one(10, 0)
    )
    assert from_hill.visible and from_hill.visible_fraction == 1.0
    assert not past_hill.visible


def test_models_block_except_themselves() -> None:
    blocker = Footprints.from_bases([5.0], [0.0], ["170x105"], [90.0]).polygons(32)[0]
    obstacles = [Obstacle("model:big", blocker, owner="big")]
    lines = SightLines(obstacles)
    blocked = lines.check(one(0, 0), one(10, 0), ["a"], ["b"])[0]
    own = lines.check(one(0, 0), one(10, 0), ["big"], ["b"])[0]
    assert not blocked.visible
    assert own.visible


def test_wide_observer_sees_round_a_pillar_a_point_cannot() -> None:
    # A pillar hides the target from the observer's centre line, not from its whole base.
    pillar = Obstacle("pillar", shapely.Point(5, 0).buffer(0.3))
    result = sight([pillar], one(0, 0, "60"), one(10, 0, "25"))
    assert result.visible and result.visible_fraction == 1.0


def _random_scene(rng: np.random.Generator) -> tuple[Footprints, Footprints, list[Obstacle]]:
    bases = ["25", "32", "40", "50", "60x35", "90x52"]
    a = Footprints.from_bases(
        [rng.uniform(1, 4)], [rng.uniform(2, 10)], [str(rng.choice(bases))], [rng.uniform(0, 360)]
    )
    b = Footprints.from_bases(
        [rng.uniform(9, 13)], [rng.uniform(2, 10)], [str(rng.choice(bases))], [rng.uniform(0, 360)]
    )
    obstacles = []
    for k in range(int(rng.integers(1, 5))):
        cx, cy = rng.uniform(4, 9), rng.uniform(0, 12)
        w, h = rng.uniform(0.2, 3.0, 2)
        shape = shapely.affinity.rotate(
            shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), rng.uniform(0, 180)
        )
        if rng.uniform() < 0.3:  # some concave L shapes
            shape = shape.union(shapely.affinity.translate(shape, rng.uniform(-1, 1), rng.uniform(-1, 1))).convex_hull
        mode = [SightMode.OPAQUE, SightMode.SEE_INTO, SightMode.OPAQUE_UNLESS_INSIDE][k % 3]
        obstacles.append(Obstacle(f"t{k}", shape, mode))
    if rng.uniform() < 0.3:  # terrain under the target or the observer
        obstacles.append(
            Obstacle(
                "under",
                shapely.Point(float(b.x_in[0]), float(b.y_in[0])).buffer(rng.uniform(0.5, 1.5)),
                SightMode.SEE_INTO,
            )
        )
    return a, b, obstacles


def _points_in(fp: Footprints, rng: np.random.Generator, interior: int, outline: int) -> np.ndarray:
    r = np.sqrt(rng.uniform(0, 1, interior))
    t = rng.uniform(0, 2 * math.pi, interior)
    inner = fp.points_at((r * np.cos(t))[None, :], (r * np.sin(t))[None, :])[0]
    ring = fp.boundary_points(outline)[0] * 0.999 + 0.001 * np.array([fp.x_in[0], fp.y_in[0]])
    return np.concatenate([inner, ring])


def _brute_force(
    a: Footprints, b: Footprints, obstacles: list[Obstacle], rng: np.random.Generator
) -> tuple[bool, float]:
    """Independent check with Shapely: every sight line tested against every piece."""
    obs = _points_in(a, rng, 10, 20)  # 30 observer points
    tgt_area = _points_in(b, rng, 256, 0)  # area samples for the fraction
    tgt_ring = _points_in(b, rng, 0, 48)
    targets = np.concatenate([tgt_area, tgt_ring])  # 304 target points -> 9,120 rays
    observer_poly = shapely.Polygon(a.boundary_points(256)[0])
    clear = np.ones((len(obs), len(targets)), dtype=bool)
    lines = shapely.linestrings(np.stack([np.repeat(obs, len(targets), 0), np.tile(targets, (len(obs), 1))], axis=1))
    for o in obstacles:
        if o.mode is SightMode.OPAQUE_UNLESS_INSIDE and observer_poly.intersects(o.polygon):
            continue
        if o.mode is SightMode.SEE_INTO:
            pieces = shapely.intersection(lines, o.polygon)
            blocked = np.zeros(len(lines), dtype=bool)
            for k in np.nonzero(~shapely.is_empty(pieces))[0]:
                ends = shapely.points([lines[k].coords[0], lines[k].coords[-1]])
                for part in getattr(pieces[k], "geoms", [pieces[k]]):
                    if part.length > 1e-9 and min(shapely.distance(ends, part)) > 1e-7:
                        blocked[k] = True
        else:
            blocked = shapely.intersects(lines, o.polygon)
        clear &= ~blocked.reshape(clear.shape)
    seen = clear.any(axis=0)
    return bool(seen.any()), float(seen[: len(tgt_area)].mean())


def test_agrees_with_dense_brute_force_on_200_random_scenes() -> None:
    rng = np.random.default_rng(2026)
    fraction_errors = []
    disagreements = []
    for scene in range(200):
        a, b, obstacles = _random_scene(rng)
        ours = SightLines(obstacles).check(a, b)[0]
        brute_visible, brute_fraction = _brute_force(a, b, obstacles, rng)
        fraction_errors.append(abs(ours.visible_fraction - brute_fraction))
        if ours.visible != brute_visible:
            disagreements.append((scene, ours.visible_fraction, brute_fraction))
    assert max(fraction_errors) <= FRACTION_TOLERANCE, max(fraction_errors)
    assert all(max(ours_f, brute_f) < SLIVER for _, ours_f, brute_f in disagreements), disagreements


walls = st.tuples(st.floats(3, 9), st.floats(-4, 4), st.floats(0.1, 3), st.floats(0.1, 3), st.floats(0, 180))


def _wall(spec: tuple[float, float, float, float, float], name: str, mode: SightMode) -> Obstacle:
    x, y, w, h, turn = spec
    return Obstacle(name, shapely.affinity.rotate(shapely.box(x, y, x + w, y + h), turn), mode)


@settings(max_examples=120, deadline=None)
@given(st.lists(walls, max_size=3), walls, st.sampled_from(list(SightMode)), st.floats(-3, 3))
def test_adding_blocking_terrain_never_increases_visibility(
    existing: list[tuple[float, float, float, float, float]],
    extra: tuple[float, float, float, float, float],
    mode: SightMode,
    target_y: float,
) -> None:
    a, b = one(0, 0, "40"), one(12, target_y, "60x35", 30)
    before_obstacles = [_wall(spec, f"w{k}", SightMode.OPAQUE) for k, spec in enumerate(existing)]
    before = SightLines(before_obstacles).check(a, b)[0]
    after = SightLines([*before_obstacles, _wall(extra, "extra", mode)]).check(a, b)[0]
    assert after.visible_fraction <= before.visible_fraction + 1e-12
    assert before.visible or not after.visible
    assert set(before.blocked_by) <= set(after.blocked_by)


def test_many_pairs_in_one_call_match_one_by_one() -> None:
    rng = np.random.default_rng(5)
    obstacles = [
        Obstacle(f"t{k}", shapely.box(x, y, x + 2, y + 1)) for k, (x, y) in enumerate(rng.uniform(2, 20, (8, 2)))
    ]
    lines = SightLines(obstacles)
    a = Footprints.from_bases(rng.uniform(0, 24, 20), rng.uniform(0, 24, 20), ["32"] * 20)
    b = Footprints.from_bases(rng.uniform(0, 24, 20), rng.uniform(0, 24, 20), ["60x35"] * 20, rng.uniform(0, 360, 20))
    together = lines.check(a, b)
    alone = [lines.check(a[[k]], b[[k]])[0] for k in range(20)]
    assert together == alone
    with pytest.raises(ValueError, match="observers but"):
        lines.check(a, b[[0]])


class _Uncorridored(SightLines):
    """Every obstacle tested line by line against every pair: no corridor culling."""

    def _crossing(self, corridors):  # type: ignore[no-untyped-def]
        pairs, obstacles = np.meshgrid(np.arange(len(corridors)), np.arange(len(self.obstacles)), indexing="ij")
        return pairs.ravel(), obstacles.ravel()


def _crowded_pairs(rng: np.random.Generator) -> tuple[Footprints, Footprints, list[Obstacle]]:
    """60 observer-target pairs across walls, woods and troops, some standing just beside the pairs' ends; the
    observers measured (sigma 0.02"), so their envelopes are tested too."""
    bases = ["25", "32", "40", "60x35", "90x52"]
    n = 60
    a = Footprints.from_bases(
        rng.uniform(0, 4, n), rng.uniform(0, 24, n), [str(rng.choice(bases)) for _ in range(n)], rng.uniform(0, 360, n)
    )
    b = Footprints.from_bases(
        rng.uniform(8, 12, n), rng.uniform(0, 24, n), [str(rng.choice(bases)) for _ in range(n)], rng.uniform(0, 360, n)
    )
    a = replace(a, sigma_in=np.full(n, 0.02))
    obstacles = [
        Obstacle(f"w{k}", shapely.box(x, y, x + 0.6, y + 2.5), [SightMode.OPAQUE, SightMode.SEE_INTO][k % 2])
        for k, (x, y) in enumerate(rng.uniform([4, 0], [7, 22], (4, 2)))
    ]
    for k, (x, y) in enumerate(rng.uniform([2, -1], [10, 25], (12, 2))):
        obstacles.append(Obstacle.round_base(f"m{k}", x, y, rng.choice([0.49, 0.63, 0.79]), f"m{k}", 0.02))
    for k in range(0, n, 3):  # a troop standing just beside an observer and a target, towards the other
        for ends, name in ((a, "o"), (b, "t")):
            ux, uy = b.x_in[k] - a.x_in[k], b.y_in[k] - a.y_in[k]
            side = 1.0 if name == "o" else -1.0
            turn = rng.uniform(-1.5, 1.5)
            dx, dy = (
                side * (ux * math.cos(turn) - uy * math.sin(turn)),
                side * (ux * math.sin(turn) + uy * math.cos(turn)),
            )
            reach = float(ends.a_in[k]) + 0.25 + rng.uniform(0.0, 0.1)
            x, y = ends.x_in[k] + reach * dx / math.hypot(dx, dy), ends.y_in[k] + reach * dy / math.hypot(dx, dy)
            obstacles.append(Obstacle.round_base(f"{name}{k}", x, y, 0.24, f"{name}{k}", 0.02))
    return a, b, obstacles


def test_the_sight_corridor_never_leaves_out_a_piece_that_blocks_a_sight_line() -> None:
    # The corridors (16-gon hulls) and the round bases' distance test only cull; the verdicts and the visible
    # fractions must be the ones every obstacle tested line by line gives. Round bases and ovals, troops near the
    # lines' ends and beside the corridor, measured (sigma) or not.
    a, b, obstacles = _crowded_pairs(np.random.default_rng(53))
    n = len(a)
    for quick in (True, False):
        area = 0 if quick else 64
        culled = SightLines(obstacles, area).check(a, b)
        every = _Uncorridored(obstacles, area).check(a, b)
        assert [(r.visible, r.visible_fraction, r.doubtful) for r in culled] == [
            (r.visible, r.visible_fraction, r.doubtful) for r in every
        ]
        assert 5 < sum(r.visible for r in culled) < n - 5  # both kinds of verdict were tested


class _EveryPairToTheEnd(SightLines):
    """Every pair tested against every obstacle in its corridor and its blockers gathered, even once hidden (the
    envelope checks included)."""

    def _check(self, *args, with_blockers=True):  # type: ignore[no-untyped-def]
        return super()._check(*args)


def test_sight_asked_only_what_is_seen_rules_as_sight_asked_in_full() -> None:
    # The envelope checks (too close to call) and ``with_blockers=False`` stop testing a pair once it is hidden:
    # verdicts, visible fractions and doubts must be the ones a pair tested to the end gets.
    for seed in (53, 54):
        a, b, obstacles = _crowded_pairs(np.random.default_rng(seed))
        for area in (0, 64):
            full = _EveryPairToTheEnd(obstacles, area).check(a, b)
            for with_blockers in (True, False):
                quick = SightLines(obstacles, area).check(a, b, with_blockers=with_blockers)
                assert [(r.visible, r.visible_fraction, r.doubtful) for r in quick] == [
                    (r.visible, r.visible_fraction, r.doubtful) for r in full
                ]
                assert [r.blocked_by for r in quick] == [r.blocked_by if with_blockers else () for r in full]
            assert 0 < sum(r.doubtful for r in full) < len(a)  # both kinds of envelope check were met
            assert any(not r.visible and r.blocked_by for r in full)


def test_quick_mode_agrees_on_visible_or_not() -> None:
    # area_samples=0 (the rules' "can it see at all?") uses 12x fewer sight lines.
    rng = np.random.default_rng(77)
    disagreements = []
    for scene in range(300):
        a, b, obstacles = _random_scene(rng)
        full = SightLines(obstacles).check(a, b)[0]
        quick = SightLines(obstacles, area_samples=0).check(a, b)[0]
        if full.visible != quick.visible:
            disagreements.append((scene, full.visible_fraction))
    assert all(fraction < SLIVER for _, fraction in disagreements), disagreements


def test_clear_centre_line_proves_visibility() -> None:
    lines = SightLines([Obstacle("wall", shapely.box(4, 1, 5, 3)), Obstacle.round_base("m", 5, -2, 0.5, owner="m")])
    clear = lines.clear_lines(
        np.array([[0.0, 0.0], [0.0, 2.0], [0.0, -2.0], [0.0, -2.0]]),
        np.array([[10.0, 0.0], [10.0, 2.0], [10.0, -2.0], [10.0, -2.0]]),
        ["a", "a", "a", "m"],
        ["b", "b", "b", "b"],
    )
    assert clear.tolist() == [True, False, False, True]
    disc = SightLines([Obstacle.round_base("m", 5, 0, 0.5)]).check(one(0, 0), one(10, 0))[0]
    poly = SightLines([Obstacle("m", shapely.Point(5, 0).buffer(0.5, quad_segs=64))]).check(one(0, 0), one(10, 0))[0]
    assert disc.visible == poly.visible and abs(disc.visible_fraction - poly.visible_fraction) < 0.05


# ---- measured pieces: sight too close to call (geometry/sight.py, SIGHT_SIGMAS) ----------------------------


def measured(x: float, y: float, sigma_in: float) -> Footprints:
    return Footprints.build([x], [y], [0.63], sigma_in=[sigma_in])  # a 32 mm base


@pytest.mark.parametrize(
    ("wall_top_in", "sigma_in", "verdict"),
    [
        (0.60, 0.0, "yes"),  # seen over the wall by 0.03": exact positions decide
        (0.60, 0.005, "yes"),  # 2 sigma (0.01") cannot hide it
        (0.60, 0.02, "too_close"),  # 2 sigma (0.04") could
        (0.66, 0.0, "no"),  # hidden by 0.03"
        (0.66, 0.005, "no"),
        (0.66, 0.02, "too_close"),  # 2 sigma could open a line over the wall
    ],
)
def test_a_sight_line_closer_to_a_wall_than_two_sigma_is_too_close_to_call(
    wall_top_in: float, sigma_in: float, verdict: str
) -> None:
    # The highest sight line runs from the observer's top (y 0.63) to the target's: it clears a wall whose
    # top is at y < 0.63 by the difference. Moving either base by 2 sigma moves that line by as much.
    wall = Obstacle("wall", shapely.box(4.9, -3, 5.1, wall_top_in))
    result = sight([wall], measured(0, 0, sigma_in), measured(10, 0, sigma_in))
    assert result.visible is (wall_top_in < 0.63)
    assert result.verdict.value == verdict
    assert result.doubtful is (verdict == "too_close")


def test_a_blocking_base_measured_unsurely_makes_a_grazing_line_too_close_to_call() -> None:
    # Observer and target exact; a measured 25 mm base (r 0.49") between them leaves a 0.03" gap at the top.
    observer, target = one(0, 0), one(10, 0)
    for sigma_in, verdict in ((0.0, "yes"), (0.005, "yes"), (0.02, "too_close")):
        blocker = Obstacle.round_base("model:m", 5.0, -0.49 + 0.6, 0.49, owner="m", sigma_in=sigma_in)
        lines = SightLines([blocker, Obstacle("wall", shapely.box(4.9, -3, 5.1, 0.0))])
        assert lines.check(observer, target)[0].verdict.value == verdict


def test_a_sight_verdict_that_is_not_too_close_to_call_holds_wherever_the_pieces_move_within_two_sigma() -> None:
    """Property: moving observer, target and a blocking base by up to 2 sigma never flips a sure verdict."""
    rng = np.random.default_rng(51)
    sigma_in, doubtful = 0.02, 0
    for _ in range(120):
        wall = Obstacle("wall", shapely.box(4.8, rng.uniform(-1.5, 0), 5.2, rng.uniform(0.0, 1.5)))
        bx, by = rng.uniform(3, 7), rng.uniform(-1.5, 1.5)
        blocker = Obstacle.round_base("model:m", bx, by, 0.5, owner="m", sigma_in=sigma_in)
        ay, ty = rng.uniform(-1, 1, 2)
        result = SightLines([wall, blocker]).check(measured(0, ay, sigma_in), measured(10, ty, sigma_in))[0]
        if result.doubtful:
            doubtful += 1
            continue
        for _ in range(8):
            d = rng.normal(size=(3, 2))
            d *= rng.uniform(0, 2 * sigma_in, (3, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
            moved = Obstacle.round_base("model:m", bx + d[2, 0], by + d[2, 1], 0.5, owner="m")
            again = SightLines([wall, moved]).check(
                measured(d[0, 0], ay + d[0, 1], 0), measured(10 + d[1, 0], ty + d[1, 1], 0)
            )
            assert again[0].visible is result.visible
    assert 0 < doubtful < 30  # some grazing lines are met, and most verdicts stay sure
