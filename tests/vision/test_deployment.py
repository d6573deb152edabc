"""The players' deployment laid over the first frame ``watch`` reads (vision/live/deployment.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tablesight.scene import SceneError
from vision.live.deployment import lay_over, load_deployment


def scene(models: list[dict[str, Any]], units: list[dict[str, Any]], game: str = "focal-point") -> dict[str, Any]:
    return {
        "format": "tablesight-scene/1",
        "game": game,
        "table": {"width_in": 24, "depth_in": 24},
        "players": [{"id": "red", "color": "#d33"}, {"id": "blue", "color": "#36c"}],
        "units": units,
        "models": models,
    }


DEPLOYED = scene(
    [
        {"id": "sgt", "unit": "raiders", "base": "32", "x": 5.0, "y": 5.0},
        {"id": "r1", "unit": "raiders", "base": "25", "x": 6.5, "y": 5.0},
        {"id": "r2", "unit": "raiders", "base": "25", "x": 8.0, "y": 5.0},
        {"id": "w1", "unit": "wardens", "base": "32", "x": 15.0, "y": 15.0},
    ],
    [{"id": "raiders", "player": "red", "name": "Raiders"}, {"id": "wardens", "player": "blue"}],
)


def found(*pieces: tuple[str, str, str, float, float]) -> dict[str, Any]:
    """analyze's scene: each player's models one lump."""
    return scene(
        [{"id": i, "unit": f"{p}-found", "base": b, "x": x, "y": y, "sigma_in": 0.01} for i, p, b, x, y in pieces],
        [{"id": "red-found", "player": "red"}, {"id": "blue-found", "player": "blue"}],
    )


def test_each_piece_under_a_deployed_model_takes_its_id_unit_and_base_and_keeps_the_cameras_place() -> None:
    # The camera read r1 a little off and took the sergeant's 32 mm base for 28.5 mm: the players' word holds for
    # who and what it is, the camera's for where.
    laid = lay_over(
        found(
            ("b1", "red", "28.5", 5.04, 5.02),
            ("b2", "red", "25", 6.58, 4.97),
            ("b3", "red", "25", 8.0, 5.01),
            ("b4", "blue", "32", 14.98, 15.0),
        ),
        DEPLOYED,
    )
    got = {m["id"]: (m["unit"], m["base"], m["x"], m["y"], m["sigma_in"]) for m in laid.scene["models"]}
    assert got == {
        "sgt": ("raiders", "32", 5.04, 5.02, 0.01),
        "r1": ("raiders", "25", 6.58, 4.97, 0.01),
        "r2": ("raiders", "25", 8.0, 5.01, 0.01),
        "w1": ("wardens", "32", 14.98, 15.0, 0.01),
    }
    assert [u["id"] for u in laid.scene["units"]] == ["raiders", "wardens"]  # the lumps hold no model now
    assert laid.not_seen == [] and laid.notes == [
        "deployment: 4 of the file's 4 models found on the table, with their units"
    ]


def test_a_deployed_model_the_camera_missed_is_placed_and_a_piece_on_no_model_stays_in_its_players_lump() -> None:
    laid = lay_over(
        found(
            ("b1", "red", "32", 5.0, 5.0),
            ("b2", "red", "25", 6.5, 5.0),  # r2 hidden under a hand-painted banner: not found
            ("b3", "blue", "32", 15.0, 15.0),
            ("r1", "blue", "25", 20.0, 3.0),  # a piece on no model of the file, with a deployed model's id
        ),
        DEPLOYED,
    )
    assert [(m["id"], m["unit"], m["x"], m["sigma_in"]) for m in laid.not_seen] == [("r2", "raiders", 8.0, 0.0)]
    ids = {m["id"]: m["unit"] for m in laid.scene["models"]}
    assert ids == {"sgt": "raiders", "r1": "raiders", "w1": "wardens", "r1-seen": "blue-found"}
    assert [u["id"] for u in laid.scene["units"]] == ["raiders", "wardens", "blue-found"]
    assert laid.notes[1:] == [
        "deployment: not found by the camera, placed where the file has them: r2",
        "deployment: pieces on no model of the file, left in their player's models: r1-seen",
    ]


def test_a_piece_beyond_a_models_own_base_is_not_that_model() -> None:
    # A 25 mm base's centre 0.6" from where the file has it is off its base (radius 0.49"): another piece.
    pieces = [("b1", "red", "32", 5.0, 5.0), ("b2", "red", "25", 6.5, 5.0), ("b3", "red", "25", 8.6, 5.0)]
    laid = lay_over(found(*pieces, ("b4", "blue", "32", 15.0, 15.0)), DEPLOYED)
    assert {m["id"]: m["unit"] for m in laid.scene["models"]} == {
        "sgt": "raiders",
        "r1": "raiders",
        "b3": "red-found",
        "w1": "wardens",
    }
    assert [m["id"] for m in laid.not_seen] == ["r2"]


def test_a_file_of_another_deployment_is_not_used_and_says_so() -> None:
    # Saved at another game (or later in this one): most of its models stand where the camera found no piece.
    # Laid over anyway, it would put those models on the table where nothing stands.
    seen = found(("b1", "red", "32", 5.0, 5.0), ("b2", "red", "25", 12.0, 9.0), ("b3", "blue", "32", 3.0, 20.0))
    laid = lay_over(seen, DEPLOYED)
    assert laid.scene == seen and laid.not_seen == []
    assert laid.notes == [
        "deployment: only 1 of the file's 4 models stand where the camera found a piece: the file is not this "
        "deployment's, and is not used (each player's models stay one lump)"
    ]


def test_the_pages_game_export_is_read_for_its_current_scene(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps({"format": "tablesight-game/1", "rounds": [], "current_scene": DEPLOYED}))
    assert [m["id"] for m in load_deployment(path, "focal-point")["models"]] == ["sgt", "r1", "r2", "w1"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("{ not json", "not valid JSON"),
        (json.dumps({**DEPLOYED, "models": [{"id": "sgt", "unit": "raiders", "base": "32", "x": "far"}]}), "models"),
        (json.dumps({**DEPLOYED, "game": "onefinity"}), "the deployment is of 'onefinity'"),
        (json.dumps(found(("b1", "red", "32", 5.0, 5.0))), "no model is in a unit of the game"),
    ],
)
def test_a_bad_deployment_file_is_refused_naming_the_file_and_what_is_wrong(
    tmp_path: Path, content: str | None, says: str
) -> None:
    path = tmp_path / "deployment.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SceneError) as error:
        load_deployment(path, "focal-point")
    assert str(path) in str(error.value) and says in str(error.value)
