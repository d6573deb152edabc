"""A photo with a hand over the table says where: pieces under it cannot be seen (vision/covered.py)."""

from __future__ import annotations

import numpy as np

from calibration.lens import LensModel
from tablesight.scene import Scene
from vision.analyze import analyze, make_detector
from vision.evaluate import analyze_rendered
from vision.synth.table import render_table


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
