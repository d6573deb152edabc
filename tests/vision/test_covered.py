"""A photo with a hand over the table says where: pieces under it cannot be seen (vision/covered.py)."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.lens import LensModel
from geometry.shapes import base_semi_axes_in
from tablesight.scene import Scene
from vision.analyze import PARTLY_HIDDEN_SIGMA_IN, analyze, make_detector, to_confirm
from vision.evaluate import analyze_rendered
from vision.size_doubt import size_step_sigma_in
from vision.synth.table import RenderedTable, render_table


def test_a_hand_over_the_table_is_reported_where_it_covers_and_nothing_else_is() -> None:
    # Held-out table 5010 with nothing over it: every change from the empty table is a piece found.
    detector = make_detector("learned")
    table = render_table(5010, hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    clear = analyze_rendered(table, lens, detector)
    assert clear.scene["measurement"]["covered"] == []
    # A hand held low over the base below the camera hides it whole (test_evaluate.py): the analysis misses
    # that base, and says that something covers the table there.
    under = min(table.scene["models"], key=lambda m: np.hypot(m["x"] - 11.6, m["y"] - 8.3))
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    assert handled.piece_visible_px[under["id"]] == 0
    result = analyze_rendered(handled, lens, detector)
    Scene.from_dict(result.scene, "analysed")  # valid against the schema
    covered = result.scene["measurement"]["covered"]
    assert len(covered) == 1
    assert covered[0]["area_sq_in"] >= 10  # a palm and a wrist
    x0, y0, x1, y1 = covered[0]["box_in"]
    assert x0 < under["x"] < x1 and y0 < under["y"] < y1
    assert "covered_ms" in result.times_ms


def test_without_an_empty_table_nothing_is_said_to_be_covered() -> None:
    # The table smoothed out of the photo itself holds the hand too: no word rather than a wrong one.
    table = render_table(5010, hard="none")
    under = min(table.scene["models"], key=lambda m: np.hypot(m["x"] - 11.6, m["y"] - 8.3))
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    result = analyze(handled.image, handled.layout, None, None, lens, detector=make_detector("learned"))
    assert result.scene["measurement"]["covered"] == []


def _lit(table: RenderedTable, gain: float) -> RenderedTable:
    """The same photo with the webcam's exposure moved since the set-up (the empty table as it was)."""
    photo = np.clip(table.image.astype(np.float64) * gain, 0, 255).astype(np.uint8)
    return RenderedTable(**{**table.__dict__, "image": photo})


def test_a_photo_darker_or_brighter_than_the_set_up_is_not_said_to_be_covered_and_a_hand_still_is() -> None:
    # A webcam's exposure drifts. 20 % darker than the empty table, the white of held-out 5001's corner markers
    # and 5054's dark mottled mat differed from it by more than CHANGED_BGR, and nothing over them was said to
    # cover the table: 8 of 39 held-out photos with no hand (docs/vision.md, session 54). The empty table is now
    # brought into the photo's light first.
    detector = make_detector("learned")
    for seed, game in ((5001, "grinding-annihilation"), (5054, "focal-point")):
        table = render_table(seed, game)
        lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
        for gain in (0.8, 1.2):
            assert analyze_rendered(_lit(table, gain), lens, detector).scene["measurement"]["covered"] == []
    # A hand is still reported where it covers. Darker too, it stands out from the mat less: at 20 % darker its
    # palm and forearm come apart.
    table = render_table(5010, hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    under = min(table.scene["models"], key=lambda m: np.hypot(m["x"] - 11.6, m["y"] - 8.3))
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    for gain in (0.8, 1.2):
        covered = analyze_rendered(_lit(handled, gain), lens, detector).scene["measurement"]["covered"]
        assert 1 <= len(covered) <= 2 and sum(c["area_sq_in"] for c in covered) >= 20
        assert any(
            c["box_in"][0] < under["x"] < c["box_in"][2] and c["box_in"][1] < under["y"] < c["box_in"][3]
            for c in covered
        )


def test_a_calibration_marker_seen_blurrier_than_at_set_up_is_not_said_to_be_covered_and_a_hand_over_one_is() -> None:
    # Crowded table 54's photo is blurrier than its empty table: each printed marker's black and white squares
    # differed from the set-up's by more than CHANGED_BGR over 18-39 % of the square, and the page said something
    # covered the table at two of them for the whole game. No piece stands on a calibration marker: its square is
    # left out of the covers.
    detector = make_detector("learned")
    table = render_table(54, "grinding-annihilation", hard="crowded")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    assert analyze_rendered(table, lens, detector).scene["measurement"]["covered"] == []
    # A hand over a marker is reported still: it reaches past the square.
    marker = table.layout.markers[1]
    handled = render_table(54, "grinding-annihilation", hard="crowded", hand_at=(marker.x_in, marker.y_in))
    covered = analyze_rendered(handled, lens, detector).scene["measurement"]["covered"]
    assert any(
        c["box_in"][0] < marker.x_in < c["box_in"][2] and c["box_in"][1] < marker.y_in + 2 < c["box_in"][3]
        for c in covered
    ), covered


def test_a_base_read_from_a_quarter_of_its_rim_beside_a_hand_has_its_place_in_doubt() -> None:
    # Tuning table 13025 (near-mat rims, varied figures) has a hand beside u3m3, a 32 mm base of which the camera
    # sees an eighth of the rim. Read from the part the hand leaves, its centre lay 0.125" off in y, and the scene
    # said 0.021": sure and wrong. A base whose edge comes within BESIDE_COVER_IN of a cover now has its centre's
    # sigma grown by PARTLY_HIDDEN_SIGMA_IN, and its edge's by a size step either way (docs/vision.md, session 72).
    table = render_table(13025, "grinding-annihilation", figures="varied", rims="near-mat")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    result = analyze_rendered(table, lens, make_detector("learned"))
    true = next(m for m in table.scene["models"] if m["id"] == "u3m3")
    assert table.rim_visible["u3m3"] < 0.25
    found = min(result.scene["models"], key=lambda m: np.hypot(m["x"] - true["x"], m["y"] - true["y"]))
    assert np.hypot(found["x"] - true["x"], found["y"] - true["y"]) < 0.2
    assert found["sigma_in"] >= PARTLY_HIDDEN_SIGMA_IN
    for axis in ("x", "y"):
        assert abs(found[axis] - true[axis]) <= 2 * found["sigma_in"]
    # Its edge may be a size off either way: 28.5 and 40 mm lie within the rulings' 2 sigma of a 32 mm read.
    read_in = base_semi_axes_in(found["base"])[0]
    assert 2 * found["base_sigma_in"] >= max(abs(base_semi_axes_in(s)[0] - read_in) for s in ("28.5", "40"))


def test_a_hand_puts_in_doubt_only_the_bases_beside_it() -> None:
    # Held-out table 5010 with a hand held over the table 1.6" from u3m1 (a 25 mm base), on the side that leaves
    # 40 % of its rim in view, and the same table with no hand. The base is read as 28.5 mm.
    detector = make_detector("learned")
    table = render_table(5010, hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    base = next(m for m in table.scene["models"] if m["id"] == "u3m1")
    hand_at = (base["x"], base["y"] - 1.6)
    handled = render_table(5010, hard="none", hand_at=hand_at)
    assert 0.25 <= handled.rim_visible["u3m1"] <= 0.5
    clear_scene = analyze_rendered(table, lens, detector).scene
    assert "beside_cover" not in clear_scene["measurement"]
    clear = clear_scene["models"]
    result = analyze_rendered(handled, lens, detector).scene
    covered = result["models"]
    beside = min(covered, key=lambda m: np.hypot(m["x"] - base["x"], m["y"] - base["y"]))
    assert beside["sigma_in"] >= PARTLY_HIDDEN_SIGMA_IN
    assert 2 * beside["base_sigma_in"] >= base_semi_axes_in("28.5")[0] - base_semi_axes_in("25")[0]
    # The scene names it, and the players are asked to check it.
    assert beside["id"] in result["measurement"]["beside_cover"]
    assert any("beside what covers the table" in line and beside["id"] in line for line in to_confirm(result))
    # The hand and its forearm cover one part of the table. Every base more than 1" outside that part's bounding
    # box is read as it was without the hand, with the sigmas it had.
    (box,) = [c["box_in"] for c in result["measurement"]["covered"]]
    far = [m for m in clear if not (box[0] - 1.0 < m["x"] < box[2] + 1.0 and box[1] - 1.0 < m["y"] < box[3] + 1.0)]
    assert len(far) >= 2
    for model in far:
        same = min(covered, key=lambda m: np.hypot(m["x"] - model["x"], m["y"] - model["y"]))
        assert np.hypot(same["x"] - model["x"], same["y"] - model["y"]) < 0.01
        assert same["sigma_in"] == model["sigma_in"]
        assert same.get("base_sigma_in") == model.get("base_sigma_in")
        assert same["id"] not in result["measurement"]["beside_cover"]


def test_a_size_step_either_way_lies_within_the_rulings_two_sigma() -> None:
    sizes = ["25", "40", "170x105", "60x35", "not a base"]
    sigma_in = size_step_sigma_in(sizes)
    assert 2 * sigma_in[0] == pytest.approx(base_semi_axes_in("28.5")[0] - base_semi_axes_in("25")[0])
    assert 2 * sigma_in[1] == pytest.approx(base_semi_axes_in("50")[0] - base_semi_axes_in("40")[0])  # the larger step
    assert 2 * sigma_in[2] == pytest.approx(
        max(a - b for a, b in zip(base_semi_axes_in("170x105"), base_semi_axes_in("120x92"), strict=True))
    )
    assert 2 * sigma_in[3] == pytest.approx(
        max(b - a for a, b in zip(base_semi_axes_in("60x35"), base_semi_axes_in("75x42"), strict=True))
    )
    assert sigma_in[4] == 0.0
