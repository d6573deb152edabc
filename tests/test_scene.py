"""Scene files: validation errors name file, field and reason; saving never corrupts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tablesight.scene import Scene, SceneError, scene_schema


def test_spec_example_loads(spec_example: dict[str, Any]) -> None:
    scene = Scene.from_dict(spec_example, "example.json")
    assert [m.id for m in scene.models] == ["w1", "w2", "s1"]
    assert scene.unit("wardens").keywords == ("Leader",)
    assert scene.player_of(scene.model("s1")) == "blue"
    assert scene.terrain[0].shape.area == 6.0
    assert scene.objectives[0].diameter_mm == 40.0


def test_save_and_load_round_trip_keeps_extra_fields(spec_example: dict[str, Any], tmp_path: Path) -> None:
    spec_example["units"][0]["state"]["custom_flag"] = True
    spec_example["house_rules"] = {"note": "kept"}
    path = tmp_path / "saved.json"
    Scene.from_dict(spec_example).save(path)
    again = Scene.load(path)
    assert again.to_dict() == spec_example


def test_failed_save_leaves_the_old_file_intact(
    spec_example: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "game.json"
    Scene.from_dict(spec_example).save(path)
    before = path.read_bytes()
    spec_example["round"] = 3

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        Scene.from_dict(spec_example).save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temp file left behind


def test_scene_is_immutable(spec_example: dict[str, Any]) -> None:
    scene = Scene.from_dict(spec_example)
    with pytest.raises(AttributeError):
        scene.game = "flux"  # type: ignore[misc]
    scene.to_dict()["models"].clear()
    assert len(scene.to_dict()["models"]) == 3


def _break(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    target: Any = data
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    last = parts[-1]
    if value is KeyError:
        del target[last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return data


BAD_SCENES = [
    ("format", "tablesight-scene/2", "format", "unsupported scene format or version"),
    ("models.1.base", "33", "models[1].base", "'33' is not a known base size"),
    ("models.2.unit", "ghosts", "models[2].unit", "unit 'ghosts', which does not exist"),
    ("models.0.x", float("nan"), "models[0].x", "nan is not a finite number"),
    ("models.0.x", 30.0, "models[0]", "off the 24 x 24 in table"),
    ("models.0.y", -0.5, "models[0]", "off the 24 x 24 in table"),
    ("terrain.0.polygon", [[0, 0], [2, 2], [2, 0], [0, 2]], "terrain[0].polygon", "not simple (Self-intersection"),
    ("terrain.0.polygon", [[0, 0], [1, 1]], "terrain[0].polygon", "is too short"),
    ("models.0.y", KeyError, "models[0]", "'y' is missing (required)"),
    ("game", "chess", "game", "'chess' is not one of"),
    ("units.1.player", "green", "units[1].player", "player 'green', who is not in players"),
    ("models.1.id", "w1", "models[1].id", "duplicate id 'w1'"),
    ("objectives.0.x", 25.0, "objectives[0]", "off the 24 x 24 in table"),
    ("table.width_in", -24, "table.width_in", "less than or equal to the minimum"),
    ("models.0.x", "4", "models[0].x", "'4' is not of type 'number'"),
]


@pytest.mark.parametrize(("path", "value", "field", "reason"), BAD_SCENES, ids=[f"{b[0]}={b[1]!r}" for b in BAD_SCENES])
def test_bad_scenes_name_file_field_and_reason(
    spec_example: dict[str, Any], write_scene: Any, path: str, value: Any, field: str, reason: str
) -> None:
    file = write_scene(_break(spec_example, path, value))
    with pytest.raises(SceneError) as caught:
        Scene.load(file)
    error = caught.value
    assert error.source == str(file)
    assert any(p == field and reason in r for p, r in error.problems), error.problems
    assert str(error).startswith(f"{file}: {field}: ")


def test_not_json_and_missing_file(write_scene: Any, tmp_path: Path) -> None:
    with pytest.raises(SceneError, match=r"not valid JSON: Expecting ',' delimiter at line 1"):
        Scene.load(write_scene('{"format": "tablesight-scene/1" "game": 1}'))
    with pytest.raises(SceneError, match="no such file"):
        Scene.load(tmp_path / "nope.json")
    with pytest.raises(SceneError, match="a scene is a JSON object, got list"):
        Scene.load(write_scene("[1, 2]"))


def test_oval_with_facing_and_default_sigma(spec_example: dict[str, Any]) -> None:
    spec_example["models"][0].update(base="60x35", facing_deg=90)
    spec_example["measurement"] = {"sigma_in": 0.03, "source": "camera"}
    spec_example["models"][1]["sigma_in"] = 0.01
    scene = Scene.from_dict(spec_example)
    fp = scene.footprints()
    assert fp.a_in[0] == pytest.approx(30 / 25.4) and fp.b_in[0] == pytest.approx(17.5 / 25.4)
    assert list(fp.sigma_in) == [0.03, 0.01, 0.03]


def test_schema_is_a_versioned_json_schema() -> None:
    schema = scene_schema()
    assert schema["$schema"].startswith("https://json-schema.org/draft/2020-12")
    assert schema["properties"]["format"]["const"] == "tablesight-scene/1"
    assert json.dumps(schema)  # serialisable


def test_lookups_and_extra_entries_answer_as_the_scene_file_says(spec_example: dict[str, Any]) -> None:
    # The rules ask these per model and pair, so they are indexed once; an entry handed out is a copy.
    data = {**spec_example, "scenario": {"name": "war-of-control", "attacker": "red"}}
    scene = Scene.from_dict(data)
    for unit in scene.units:
        assert scene.models_of(unit.id) == tuple(m for m in scene.models if m.unit == unit.id)
        assert scene.unit(unit.id) is unit
    for model in scene.models:
        assert scene.model(model.id) is model
    assert scene.models_of("no-such-unit") == ()
    with pytest.raises(KeyError, match="no model 'ghost'"):
        scene.model("ghost")
    with pytest.raises(KeyError, match="no unit 'ghost'"):
        scene.unit("ghost")
    scenario = scene.extra("scenario")
    scenario["attacker"] = "blue"
    assert scene.extra("scenario") == {"name": "war-of-control", "attacker": "red"}
    assert scene.extra("history", []) == [] and scene.extra("first_player") is None
