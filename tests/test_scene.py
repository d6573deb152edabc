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
    ("scenario", 3.5, "scenario", "3.5 is not of type 'object'"),  # read as a mission (ask ... score crashed)
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


GOLDEN = Path(__file__).parent / "golden"
# (golden scene, the field broken, its value, the field named, the reason): each a value the game's rules read and
# once crashed on (`tablesight check` gave a traceback; a roster with it broke the page for the rest of the game).
BAD_PROFILES = [
    (
        "focal-point/01-coherency-exactly-2in.json",
        "units.0.profile.hp",
        None,
        "units[0].profile.hp",
        "None is not of type 'number'",
    ),
    (
        "focal-point/01-coherency-exactly-2in.json",
        "units.0.profile.resolve",
        {"a": 1},
        "units[0].profile.resolve",
        "is not of type 'number'",
    ),
    (
        "focal-point/01-coherency-exactly-2in.json",
        "units.1.state.hp",
        [],
        "units[1].state.hp",
        "[] is not of type 'number'",
    ),
    (
        "grinding-annihilation/01-cohesion-exactly-2in.json",
        "units.0.profile.be",
        {},
        "units[0].profile.be",
        "is not of type 'number'",
    ),
    (
        "grinding-annihilation/01-cohesion-exactly-2in.json",
        "units.0.profile.weapons",
        True,
        "units[0].profile.weapons",
        "True is not of type 'array'",
    ),
    (
        "grinding-annihilation/01-cohesion-exactly-2in.json",
        "units.0.profile.weapons.0.range",
        [6],
        "units[0].profile.weapons[0].range",
        '[6] is not a range in inches, or "melee"',
    ),
    (
        "miniature-skirmish/01-blade-in-reach.json",
        "units.0.profile.weapons.0.range",
        3,
        "units[0].profile.weapons[0].range",
        "3 is not of type 'array'",
    ),
    (
        "miniature-skirmish/01-blade-in-reach.json",
        "units.0.profile.weapons.0.range",
        KeyError,
        "units[0].profile.weapons[0]",
        "'range' is missing (required)",
    ),
    (
        "onefinity/01-fire-power-3-hexes.json",
        "units.0.profile.weapons.0.fire_power",
        [1, 2],
        "units[0].profile.weapons[0].fire_power[0]",
        "1 is not of type 'array'",
    ),
    (
        "onefinity/01-fire-power-3-hexes.json",
        "units.0.profile.armor",
        "x",
        "units[0].profile.armor",
        "'x' is not of type 'number'",
    ),
]


@pytest.mark.parametrize(("golden", "path", "value", "field", "reason"), BAD_PROFILES, ids=[b[1] for b in BAD_PROFILES])
def test_a_units_game_values_of_the_wrong_kind_are_named_not_crashed_on(
    write_scene: Any, golden: str, path: str, value: Any, field: str, reason: str
) -> None:
    """Each game's profile and state values that its rules read as numbers, lists or weapons are checked when the
    scene loads (`tablesight/schemas/scene-1.schema.json`, `$defs`), per the game the scene says it plays; a value
    of the wrong kind is an error naming the unit's field, and `tablesight check` says it and exits 2."""
    from tablesight.cli import main

    data = json.loads((GOLDEN / golden).read_text(encoding="utf-8"))["scene"]
    Scene.from_dict(data, golden)  # the golden scene as it is loads
    file = write_scene(_break(data, path, value))
    with pytest.raises(SceneError) as caught:
        Scene.load(file)
    assert any(p == field and reason in r for p, r in caught.value.problems), caught.value.problems
    assert main(["check", str(file)]) == 2


def test_every_golden_scene_and_a_move_record_of_the_wrong_kind(write_scene: Any) -> None:
    """Every golden scene of every game loads with the games' checks; a move record in the history whose start is no
    [x, y] (each model's, or one), whose unit is no id, or whose models not seen at its start (``unseen_from``) are
    no list of ids is named."""
    scenes = [json.loads(p.read_text(encoding="utf-8"))["scene"] for p in sorted(GOLDEN.rglob("*.json"))]
    assert len(scenes) > 40
    for data in scenes:
        Scene.from_dict(data)
    data = json.loads((GOLDEN / "focal-point/01-coherency-exactly-2in.json").read_text(encoding="utf-8"))["scene"]
    data["history"] = [
        {"event": "move", "unit": "wardens", "from": {"w1": [1.0, 2.0]}, "moves": 1},
        {"event": "move", "unit": "wardens", "model": "w1", "from": [1.0, 2.0], "to": [2.0, 2.0]},
    ]
    Scene.from_dict(data)  # both kinds of move record
    data["history"] = [{"event": "move", "unit": {}, "from": {"w1": [None, 2.0]}, "unseen_from": "w1"}]
    with pytest.raises(SceneError) as caught:
        Scene.from_dict(data)
    named = {p for p, _ in caught.value.problems}
    assert {"history[0].unit", "history[0].from", "history[0].unseen_from"} <= named, caught.value.problems
