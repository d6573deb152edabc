"""A base whose size was read unsurely carries that doubt into every ruling measured from its edge.

Rule checked (Grinding-Annihilation, ../shared/rulebooks/grinding-annihilation.txt, Formation Cohesion): troops
must stand "within 2" horizontally and 5" vertically of at least one other troop from that formation". Measured
from base edges, so a base read one size small stands further off.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from geometry.measure import Verdict
from geometry.shapes import base_semi_axes_in
from rules.table_facts import check
from tablesight.scene import Scene
from vision.analyze import analyze, make_detector, to_confirm
from vision.detections import ROUND_SIZES
from vision.size_doubt import TAIL_P, base_edge_sigma_in, other_shape_sigma_in, unsure_sizes
from vision.synth.table import render_table

MM_PER_IN = 25.4


def _p(**by_size: float) -> list[float]:
    """A row of size probabilities: _p(s25=0.5, s40=0.5)."""
    return [by_size.get("s" + s.replace(".", "_"), 0.0) for s in ROUND_SIZES]


def test_a_size_read_surely_leaves_no_doubt_and_an_unsure_one_the_spread_of_the_radii() -> None:
    sure = _p(s32=1.0)
    split = _p(s25=0.5, s28_5=0.5)  # 12.5 or 14.25 mm of radius: half the time 1.75 mm off
    sigma = base_edge_sigma_in([sure, split], ["32", "25"])
    assert sigma[0] == pytest.approx(0.0, abs=1e-12)
    assert sigma[1] == pytest.approx(math.sqrt(0.5) * 1.75 / MM_PER_IN, rel=1e-6)


def test_the_doubt_is_about_the_size_the_base_was_given_even_where_its_mates_gave_it() -> None:
    # The refiner leaned to 28.5 mm, the unit-mates settled it at 32 mm: the doubt is the 28.5 mm reading's weight.
    sigma = base_edge_sigma_in([_p(s28_5=0.7, s32=0.3)], ["32"])
    assert sigma[0] == pytest.approx(math.sqrt(0.7) * 1.75 / MM_PER_IN, rel=1e-6)


def test_ovals_and_bases_the_refiner_did_not_read_carry_no_size_doubt() -> None:
    unread = [float("nan")] * len(ROUND_SIZES)
    sigma = base_edge_sigma_in([unread, unread], ["40", "60x35"])
    assert np.array_equal(sigma, [0.0, 0.0])


def _two_troops(
    gap_in: float, base_sigma_in: float, second_read_mm: float = 25.0, sigmas_in: tuple[float, float] = (0.02, 0.02)
) -> dict[str, Any]:
    """Two 25 mm troops of one formation whose bases stand ``gap_in`` apart edge to edge, their centres known to
    ``sigmas_in``; the second base read as ``second_read_mm`` (its centre where it truly is)."""
    radius_in = 12.5 / MM_PER_IN
    base = f"{second_read_mm:g}"
    second: dict[str, Any] = {"id": "m2", "unit": "u1", "base": base, "x": 10.0 + gap_in + 2 * radius_in, "y": 10.0}
    if base_sigma_in:
        second["base_sigma_in"] = base_sigma_in
    return {
        "format": "tablesight-scene/1",
        "game": "grinding-annihilation",
        "table": {"width_in": 44, "depth_in": 60},
        "players": [{"id": "red"}],
        "units": [{"id": "u1", "player": "red", "name": "Wardens"}],
        "models": [
            {"id": "m1", "unit": "u1", "base": "25", "x": 10.0, "y": 10.0, "sigma_in": sigmas_in[0]},
            {**second, "sigma_in": sigmas_in[1]},
        ],
        "terrain": [],
        "objectives": [],
    }


def _cohesion(scene: dict[str, Any]) -> Verdict:
    rulings = check(Scene.from_dict(scene, "test")).rulings
    return next(r.verdict for r in rulings if "Cohesion" in r.question)


def test_a_cohesion_ruling_that_hangs_on_an_unsure_size_is_too_close_to_call() -> None:
    # 2.10" apart: clearly out with sure sizes (2 sigma of the centres is 0.06").
    assert _cohesion(_two_troops(2.10, 0.0)) is Verdict.NO
    # The second base read 25 mm at P 0.53 against 40 mm at 0.20 and 50 mm at 0.03 (held-out table 5020): 0.17"
    # of doubt by the root mean square, and 0.25" since 50 mm, 0.49" further out, is given over TAIL_P.
    doubt = float(base_edge_sigma_in([_p(s25=0.528, s28_5=0.109, s32=0.125, s40=0.204, s50=0.031)], ["25"])[0])
    assert doubt == pytest.approx(12.5 / MM_PER_IN / 2)
    assert _cohesion(_two_troops(2.10, doubt)) is Verdict.TOO_CLOSE
    # Far enough out, it is out whatever the size.
    assert _cohesion(_two_troops(3.0, doubt)) is Verdict.NO


def test_a_far_size_given_a_small_real_chance_lies_within_the_rulings_two_sigma() -> None:
    # Onefinity table 41007 (docs/vision.md, session 52): a 25 mm base read 32 mm at P 0.73, 28.5 mm at 0.19 and
    # 25 mm at 0.05. The root mean square gives 0.052", so 2 sigma (0.10") fell short of the true edge, 0.138" in.
    row = _p(s25=0.053, s28_5=0.185, s32=0.732, s40=0.03)
    rms_in = math.sqrt(0.053 * 3.5**2 + 0.185 * 1.75**2 + 0.03 * 4.0**2) / MM_PER_IN
    doubt = float(base_edge_sigma_in([row], ["32"])[0])
    assert 2 * rms_in < 3.5 / MM_PER_IN  # what the root mean square alone allowed
    assert doubt == pytest.approx(4.0 / MM_PER_IN / 2)  # 40 mm, 4 mm of radius out, at P 0.03 >= TAIL_P
    assert 2 * doubt >= 3.5 / MM_PER_IN
    # A size given less than TAIL_P (2.3 %) leaves the root mean square alone.
    faint = _p(s25=0.01, s28_5=0.29, s32=0.70)
    assert abs(TAIL_P - 0.02275) < 1e-4
    expected_in = math.sqrt(0.01 * 3.5**2 + 0.29 * 1.75**2) / MM_PER_IN
    assert float(base_edge_sigma_in([faint], ["32"])[0]) == pytest.approx(expected_in)


def test_a_cohesion_ruling_from_a_base_read_two_sizes_large_is_too_close_to_call_not_wrong() -> None:
    # Truly 2.01" apart: out of cohesion in the true scene (exact positions). The photo read the second base
    # 32 mm, so its edge stands 0.138" nearer (1.87"), its centre known to 0.02" and the first one's exactly.
    assert _cohesion(_two_troops(2.01, 0.0, sigmas_in=(0.0, 0.0))) is Verdict.NO
    read_32 = _two_troops(2.01, 0.0, second_read_mm=32.0, sigmas_in=(0.0, 0.02))
    row = _p(s25=0.053, s28_5=0.185, s32=0.762)
    rms_in = math.sqrt(0.053 * 3.5**2 + 0.185 * 1.75**2) / MM_PER_IN
    read_32["models"][1]["base_sigma_in"] = rms_in
    assert _cohesion(read_32) is Verdict.YES  # the root mean square alone: a wrong ruling
    read_32["models"][1]["base_sigma_in"] = float(base_edge_sigma_in([row], ["32"])[0])
    assert _cohesion(read_32) is Verdict.TOO_CLOSE


def test_a_base_also_read_as_the_other_shape_keeps_that_reading_within_the_rulings_two_sigma() -> None:
    # Held-out 05204 (docs/vision.md, session 60): a 60x35 oval under its figure, read as a 50 mm base whose centre
    # is 0.2" from the 60x35 reading the network also made there. Here the oval's long axis runs along y and its
    # edge stands 2.1" from a troop's: out of cohesion. The 50 mm reading, 0.2" nearer, leaves a gap of 1.60".
    r25, r50 = 12.5 / MM_PER_IN, 25.0 / MM_PER_IN
    b60 = 17.5 / MM_PER_IN  # the 60x35 oval's short semi-axis
    true_x = 10.0 + r25 + 2.1 + b60
    read = _two_troops(2.1, 0.0, second_read_mm=50.0, sigmas_in=(0.02, 0.02))
    read["models"][1]["x"] = true_x - 0.2
    assert read["models"][1]["x"] - 10.0 - r25 - r50 == pytest.approx(1.605, abs=0.001)
    assert _cohesion(read) is Verdict.YES  # a clear base's sigma: a wrong ruling
    centre_in, edge_in = (float(v[0]) for v in other_shape_sigma_in(["50"], ["60x35"], [0.2]))
    assert centre_in == pytest.approx(0.1)
    assert edge_in == pytest.approx((0.2 + (r50 - b60)) / 2)  # on the troop's side the oval's edge is b60 out
    read["models"][1]["sigma_in"] = float(np.hypot(0.02, centre_in))
    read["models"][1]["base_sigma_in"] = edge_in
    assert _cohesion(read) is Verdict.TOO_CLOSE
    # A base read once, as one shape, has no such doubt; nor has a round reading beside a round one.
    assert [float(v[0]) for v in other_shape_sigma_in(["50"], [""], [0.0])] == [0.0, 0.0]


def test_an_oval_read_as_a_round_base_on_a_rendered_table_keeps_its_true_edge_within_the_rulings_two_sigma() -> None:
    """Held-out table 5204 (docs/vision.md, session 60): a 60x35 oval under its figure, read as a round base and as
    the oval at one place; the round reading stays. Every ruling measures from base edges: wherever the true oval's
    edge lies, it must lie within 2 sigma (the centre's and the edge's together) of the edge the scene gives."""
    table = render_table(5204, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    result = analyze(
        table.image, table.layout, table.empty, frame, lens, "focal-point", detector=make_detector("learned")
    )
    oval = next(m for m in table.scene["models"] if m["base"] == "60x35")
    found = result.scene["models"]
    k = int(np.argmin([math.hypot(f["x"] - oval["x"], f["y"] - oval["y"]) for f in found]))
    read = found[k]
    bases = result.detections[result.detections.kind == 0]
    assert "x" not in read["base"] and str(bases.other_size[k]) == "60x35" and read["other_base"] == "60x35"
    line = unsure_sizes(found)
    assert line is not None and f"{read['id']} ({read['base']} mm, or a 60x35 oval?, edge" in line
    # The edge along each direction: the centre's offset along it plus the base's reach (an ellipse's support).
    angles = np.radians(np.arange(0.0, 360.0, 5.0))
    a_in, b_in = base_semi_axes_in("60x35")
    turn = angles - math.radians(oval["facing_deg"])
    true_edge = (
        oval["x"] * np.cos(angles) + oval["y"] * np.sin(angles) + np.hypot(a_in * np.cos(turn), b_in * np.sin(turn))
    )
    r_in = base_semi_axes_in(read["base"])[0]
    read_edge = read["x"] * np.cos(angles) + read["y"] * np.sin(angles) + r_in
    worst_in = float(np.abs(true_edge - read_edge).max())
    sigma_in = math.hypot(read["sigma_in"], read.get("base_sigma_in", 0.0))
    assert worst_in > 0.15  # the round reading's edge is far off somewhere...
    assert worst_in <= 2 * sigma_in  # ...and the scene says how far it may be


def test_a_photo_analysed_gives_unsurely_read_bases_their_doubt_in_the_scene() -> None:
    table = render_table(21, "grinding-annihilation")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    scene = analyze(
        table.image, table.layout, table.empty, lens=lens, players=players, detector=make_detector("learned")
    ).scene
    Scene.from_dict(scene, "analysed")  # the schema knows the field
    doubts = [m["base_sigma_in"] for m in scene["models"] if "base_sigma_in" in m]
    assert doubts  # some of its 13 bases were read less than surely
    assert all(0.001 <= d < 0.5 for d in doubts)
    # Most bases are read surely: the doubt is the exception, not a blanket widening of every ruling.
    assert len(doubts) < len(scene["models"]) / 2


def test_the_command_line_names_the_bases_whose_size_is_unsure_most_doubtful_first() -> None:
    models = [
        {"id": "b1", "base": "32", "x": 1.0, "y": 1.0},
        {"id": "b2", "base": "25", "x": 3.0, "y": 1.0, "base_sigma_in": 0.172},
        {"id": "b3", "base": "28.5", "x": 5.0, "y": 1.0, "base_sigma_in": 0.0012},  # a sure read: not named
        {"id": "b4", "base": "28.5", "x": 7.0, "y": 1.0, "base_sigma_in": 0.045},
    ]
    line = unsure_sizes(models)
    assert line is not None
    assert line.index("b2 (25 mm") < line.index("b4 (28.5 mm")
    assert '+/-0.17"' in line and "b1" not in line and "b3" not in line
    assert unsure_sizes(models[:1]) is None
    # A place the camera read both as a round base and as an oval names the other shape too.
    models += [
        {"id": "b5", "base": "50", "x": 9.0, "y": 1.0, "base_sigma_in": 0.24, "other_base": "60x35"},
        {"id": "b6", "base": "60x35", "x": 11.0, "y": 1.0, "base_sigma_in": 0.2, "other_base": "40"},
    ]
    line = unsure_sizes(models)
    assert line is not None and "b5 (50 mm, or a 60x35 oval?, edge" in line
    assert "b6 (60x35 mm, or a 40 mm round base?, edge" in line


def test_setting_a_base_on_the_page_drops_the_doubt_in_its_size_and_shape() -> None:
    from web.corrections import apply_one

    scene = {"models": [{"id": "b5", "base": "50", "x": 9.0, "y": 1.0, "base_sigma_in": 0.24, "other_base": "60x35"}]}
    assert apply_one(scene, {"op": "base", "model": "b5", "base": "60x35"}) is None
    assert scene["models"][0] == {"id": "b5", "base": "60x35", "x": 9.0, "y": 1.0}


def test_unsure_sizes_are_among_what_the_players_are_asked_to_confirm_after_the_coarse_photo() -> None:
    coarse = {"px_per_in": 8.6, "needed_px_per_in": 12, "table_share": 0.4}
    scene = {
        "measurement": {"coarse": coarse},
        "models": [{"id": "b2", "base": "25", "x": 3.0, "y": 1.0, "base_sigma_in": 0.172}],
    }
    messages = to_confirm(scene)
    assert len(messages) == 2 and "pixels to the inch" in messages[0]
    assert messages[1].startswith("sizes read unsurely") and "b2 (25 mm" in messages[1]
    assert to_confirm({"measurement": {}, "models": [{"id": "b1", "base": "32", "x": 1.0, "y": 1.0}]}) == []
