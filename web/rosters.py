"""Rosters (``tablesight-roster/1``, JSON or YAML): one player's army list, imported into the game.

The JSON Schema ships in ``web/schemas/roster-1.schema.json``; docs/web.md
shows an example. Errors name the field path and the reason.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import yaml

from tablesight.scene import field_path

ROSTER_FORMAT = "tablesight-roster/1"


class RosterError(ValueError):
    """A roster that cannot be imported, with every problem as 'field: reason'."""


@cache
def roster_schema() -> dict[str, Any]:
    text = resources.files("web").joinpath("schemas/roster-1.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def parse_roster(text: str, fmt: str) -> dict[str, Any]:
    """Parse and validate roster text; ``fmt`` is 'json' or 'yaml'."""
    if fmt not in ("json", "yaml"):
        raise RosterError(f"roster format must be 'json' or 'yaml', not {fmt!r}")
    try:
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise RosterError(f"roster is not valid {fmt.upper()}: {str(error).splitlines()[0]}") from None
    validator = jsonschema.Draft202012Validator(roster_schema())
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if problems:
        lines = [f"{field_path(e.absolute_path) or 'roster'}: {e.message}" for e in problems[:10]]
        raise RosterError("; ".join(lines))
    ids = [u["id"] for u in data["units"]]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RosterError(f"units: ids used twice: {', '.join(duplicates)}")
    return data  # type: ignore[no-any-return]


def merge_roster(scene: dict[str, Any], roster: dict[str, Any]) -> dict[str, Any]:
    """The scene with the roster's player and units added (a unit already there is replaced)."""
    if roster.get("game") not in (None, scene.get("game")):
        raise RosterError(f"game: this roster is for {roster['game']!r}, the table is playing {scene.get('game')!r}")
    out = copy.deepcopy(scene)
    player = roster["player"]
    players = [p for p in out.get("players", []) if p["id"] != player["id"]]
    entry = {"id": player["id"], "name": player.get("name", player["id"])}
    if player.get("color"):
        entry["color"] = player["color"]
    players.append(entry)
    out["players"] = players
    units = {u["id"]: u for u in out.get("units", [])}
    for unit in roster["units"]:
        held = units.get(unit["id"])
        if held is not None and held["player"] != player["id"]:
            raise RosterError(f"units: {unit['id']!r} already belongs to player {held['player']!r}")
        units[unit["id"]] = {
            "id": unit["id"],
            "player": player["id"],
            "name": unit["name"],
            "profile": unit.get("profile", {}),
            "keywords": unit.get("keywords", []),
            "state": unit.get("state", {}),
            **({"base": unit["base"]} if "base" in unit else {}),
        }
    out["units"] = list(units.values())
    for model in out.get("models", []):  # models already in a unit the roster gives a base stand on it
        take_units_base(model, units.get(model.get("unit", "")))
    return out


def take_units_base(model: dict[str, Any], unit: dict[str, Any] | None) -> None:
    """``model`` (a scene's dict) on the base its unit's roster gives, if it gives one: the players' word, so the
    camera's doubt in the size it read goes."""
    if unit is not None and "base" in unit:
        model["base"] = unit["base"]
        model.pop("base_sigma_in", None)
