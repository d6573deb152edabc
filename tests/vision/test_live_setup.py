"""Issue 7, the live table's set-up: a first frame with the models already deployed is not the empty table.

The detector drops a base whose edge looks as it did on the empty table; a "reference" taken with the models on
it would hide every model that has not moved since. Rendered table 21 (flat renderer, 9 models, seeded)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from vision.analyze import analyze, make_detector
from vision.live.setup import SETUP_BASES_MIN, take_reference
from vision.live.sources import IteratorSource
from vision.synth.table import RenderedTable, render_table
from web.camera_feed import CameraFeed


@pytest.fixture(scope="module")
def table() -> RenderedTable:
    return render_table(21, hard="none")


def _found_near_truth(table: RenderedTable, scene: dict[str, Any]) -> int:
    found = [(m["x"], m["y"]) for m in scene["models"]]
    return sum(any(math.hypot(t["x"] - x, t["y"] - y) < 0.25 for x, y in found) for t in table.scene["models"])


def test_a_set_up_frame_with_the_models_on_it_is_not_taken_for_the_empty_table(table: RenderedTable) -> None:
    detector = make_detector("learned")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    models = len(table.scene["models"])
    assert models >= SETUP_BASES_MIN

    def found_with(reference: Any) -> int:
        analysed = analyze(table.image, table.layout, None, frame, lens, "focal-point", players, None, reference)
        return _found_near_truth(table, analysed.scene)

    # Why: the deployed table taken as its own empty reference hides nearly every model.
    assert found_with(detector.prepare(table.image, frame)) <= models // 3
    setup = take_reference(detector, table.image, frame, None)
    assert setup.reference is None and setup.bases_seen >= SETUP_BASES_MIN
    assert "not the empty table" in setup.message and f"{setup.bases_seen} bases" in setup.message
    assert found_with(setup.reference) >= models - 1  # read without a reference: the models are found
    # The empty table is taken as it is, and it finds them all.
    empty_setup = take_reference(detector, table.empty, frame, None)
    assert empty_setup.reference is not None and empty_setup.bases_seen < SETUP_BASES_MIN
    assert empty_setup.message == "set up from the empty table"
    assert found_with(empty_setup.reference) >= models - 1
    # The camera moved mid-game (recalibrated) with the models on the table: the set-up's reference stays.
    again = take_reference(detector, table.image, frame, empty_setup.reference)
    assert again.reference is empty_setup.reference and "reference taken at set-up is kept" in again.message


def test_the_camera_feed_started_on_a_deployed_table_still_finds_the_models(table: RenderedTable) -> None:
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    shots = iter([table.image] * 6)
    feed = CameraFeed(lambda: IteratorSource(shots), table.layout, "cam", "focal-point", lens, players)
    scene, status = feed.next()
    assert scene is None and "not the empty table" in status.message
    scenes = [s for s in (feed.next()[0] for _ in range(5)) if s is not None]
    assert len(scenes) == 1  # the settled table, analysed once
    assert _found_near_truth(table, scenes[0]) >= len(table.scene["models"]) - 1
