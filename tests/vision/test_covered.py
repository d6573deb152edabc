"""A photo with a hand over the table says where: pieces under it cannot be seen (vision/covered.py)."""

from __future__ import annotations

import numpy as np

from calibration.lens import LensModel
from tablesight.scene import Scene
from vision.analyze import analyze, make_detector
from vision.evaluate import analyze_rendered
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
