"""Scene files (``tablesight-scene/1``): load, validate, save.

Every load is validated against the JSON Schema shipped in
``tablesight/schemas/scene-1.schema.json`` and then against what a schema
cannot say (ids that must exist, simple polygons, finite numbers, pieces on
the table). Errors name the file, the field path and the reason.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import shapely

from geometry.shapes import Footprints, UnknownBaseError, base_semi_axes_in, validate_polygon

SCENE_FORMAT = "tablesight-scene/1"
_MAX_PROBLEMS = 20


class SceneError(ValueError):
    """A scene that cannot be used; lists every problem found as (field path, reason)."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = [f"{source}: {path}: {reason}" if path else f"{source}: {reason}" for path, reason in problems]
        super().__init__("\n".join(lines))


@cache
def scene_schema() -> dict[str, Any]:
    text = resources.files("tablesight").joinpath("schemas/scene-1.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def field_path(parts: Any) -> str:
    """``["models", 3, "base"]`` -> ``models[3].base``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _non_finite(value: Any, path: list[Any]) -> Iterator[tuple[str, str]]:
    if isinstance(value, float) and not math.isfinite(value):
        yield field_path(path), f"{value} is not a finite number"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, [*path, index])


@dataclass(frozen=True)
class Player:
    id: str
    name: str
    color: str | None


@dataclass(frozen=True)
class Unit:
    id: str
    player: str
    name: str
    profile: Mapping[str, Any]
    keywords: tuple[str, ...]
    state: Mapping[str, Any]


@dataclass(frozen=True)
class Model:
    id: str
    unit: str
    base: str
    x: float
    y: float
    z: float
    facing_deg: float
    height_in: float
    sigma_in: float
    state: Mapping[str, Any]
    base_sigma_in: float = 0.0  # doubt in the base's edge from a size read unsurely (vision/size_doubt.py)


@dataclass(frozen=True)
class Terrain:
    id: str
    kind: str
    polygon: tuple[tuple[float, float], ...]
    height_in: float
    traits: tuple[str, ...]

    @property
    def shape(self) -> shapely.Polygon:
        return shapely.Polygon(self.polygon)


@dataclass(frozen=True)
class Objective:
    id: str
    x: float
    y: float
    diameter_mm: float
    controlled_by: str | None
    sigma_in: float


@dataclass(frozen=True)
class Scene:
    """One table at one moment. Immutable; ``to_dict`` gives the (extended) JSON back."""

    source: str
    game: str
    width_in: float
    depth_in: float
    players: tuple[Player, ...]
    units: tuple[Unit, ...]
    models: tuple[Model, ...]
    terrain: tuple[Terrain, ...]
    objectives: tuple[Objective, ...]
    round: int | None
    sigma_in: float
    _raw: Mapping[str, Any]

    # ---- loading and saving -------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scene:
        return cls.from_dict(read_json(path), str(path))

    @classmethod
    def loads(cls, text: str, source: str = "<scene>") -> Scene:
        return cls.from_dict(_parse_json(text, source), source)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<scene>") -> Scene:
        _validate(data, source)
        return _build(copy.deepcopy(data), source)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._raw))

    @property
    def hex_spec(self) -> dict[str, Any] | None:
        """The mat's hex grid (``table.hex``) where the game is played in hexes, else None; asked per model and
        per pair, so it copies that entry only, not the whole scene."""
        spec = self._raw.get("table", {}).get("hex")
        return dict(spec) if isinstance(spec, Mapping) and spec else None

    def extra(self, key: str, default: Any = None) -> Any:
        """A copy of one top-level entry of the scene file (``scenario``, ``history``...), or ``default``: the rules
        ask for these per question, and copying the whole scene (``to_dict``) for one entry was most of the cost."""
        return copy.deepcopy(self._raw[key]) if key in self._raw else default

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically: a crash mid-save never leaves a half-written scene."""
        target = Path(path)
        text = self.dumps()
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    # ---- looking things up --------------------------------------------------
    def model(self, model_id: str) -> Model:
        try:
            return self._model_by_id[model_id]
        except KeyError:
            raise KeyError(f"no model {model_id!r} in {self.source}") from None

    def unit(self, unit_id: str) -> Unit:
        try:
            return self._unit_by_id[unit_id]
        except KeyError:
            raise KeyError(f"no unit {unit_id!r} in {self.source}") from None

    def models_of(self, unit_id: str) -> tuple[Model, ...]:
        return self._models_by_unit.get(unit_id, ())

    # The rules ask these per model and per pair: indexed once (the scene never changes; ids are unique, _validate).
    @cached_property
    def _model_by_id(self) -> dict[str, Model]:
        return {m.id: m for m in reversed(self.models)}  # the first of a (never validated) repeated id, as before

    @cached_property
    def _unit_by_id(self) -> dict[str, Unit]:
        return {u.id: u for u in reversed(self.units)}

    @cached_property
    def _models_by_unit(self) -> dict[str, tuple[Model, ...]]:
        grouped: dict[str, list[Model]] = {}
        for m in self.models:
            grouped.setdefault(m.unit, []).append(m)
        return {unit: tuple(members) for unit, members in grouped.items()}

    def player_of(self, model: Model) -> str:
        return self.unit(model.unit).player

    def footprints(self, models: tuple[Model, ...] | list[Model] | None = None) -> Footprints:
        chosen = list(self.models if models is None else models)
        return Footprints.from_bases(
            [m.x for m in chosen],
            [m.y for m in chosen],
            [m.base for m in chosen],
            [m.facing_deg for m in chosen],
            z_in=np.array([m.z for m in chosen], dtype=np.float64),
            height_in=np.array([m.height_in for m in chosen], dtype=np.float64),
            # Every ruling measures from base edges: a size read unsurely adds its doubt to the centre's.
            sigma_in=np.hypot(
                np.array([m.sigma_in for m in chosen], dtype=np.float64),
                np.array([m.base_sigma_in for m in chosen], dtype=np.float64),
            ),
        )

    def objective_footprints(self, objectives: tuple[Objective, ...] | list[Objective] | None = None) -> Footprints:
        chosen = list(self.objectives if objectives is None else objectives)
        radius = np.array([o.diameter_mm / 2 / 25.4 for o in chosen], dtype=np.float64)
        return Footprints.build(
            [o.x for o in chosen],
            [o.y for o in chosen],
            radius,
            sigma_in=np.array([o.sigma_in for o in chosen], dtype=np.float64),
        )


def _validate(data: Any, source: str) -> None:
    if not isinstance(data, dict):
        raise SceneError(source, [("", f"a scene is a JSON object, got {type(data).__name__}")])
    problems = list(_non_finite(data, []))
    if data.get("format") != SCENE_FORMAT:
        found = data.get("format")
        raise SceneError(
            source, [("format", f"expected {SCENE_FORMAT!r}, got {found!r} (unsupported scene format or version)")]
        )
    validator = jsonschema.Draft202012Validator(scene_schema())
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        problems.append((field_path(error.absolute_path), _schema_reason(error)))
    if problems:
        raise SceneError(source, problems[:_MAX_PROBLEMS])
    problems.extend(_semantic_problems(data))
    if problems:
        raise SceneError(source, problems[:_MAX_PROBLEMS])


def _schema_reason(error: jsonschema.ValidationError) -> str:
    if error.validator == "enum" and list(error.absolute_path)[-1:] == ["base"]:
        try:
            base_semi_axes_in(str(error.instance))
        except (UnknownBaseError, ValueError, TypeError) as base_error:
            return str(base_error)
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "anyOf" and described:  # the kinds it may be, in words
        return f"{error.instance!r} is not {described}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is missing (required)")
    return str(error.message)


def _semantic_problems(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    width, depth = data["table"]["width_in"], data["table"]["depth_in"]
    ids: dict[str, set[str]] = {}
    for kind in ("players", "units", "models", "terrain", "objectives"):
        seen: set[str] = set()
        for index, item in enumerate(data.get(kind, [])):
            if item["id"] in seen:
                yield f"{kind}[{index}].id", f"duplicate id {item['id']!r}"
            seen.add(item["id"])
        ids[kind] = seen
    for index, unit in enumerate(data.get("units", [])):
        if ids["players"] and unit["player"] not in ids["players"]:
            yield (
                f"units[{index}].player",
                f"unit {unit['id']!r} belongs to player {unit['player']!r}, who is not in players",
            )
    for index, model in enumerate(data.get("models", [])):
        if model["unit"] not in ids["units"]:
            yield (
                f"models[{index}].unit",
                f"model {model['id']!r} belongs to unit {model['unit']!r}, which does not exist",
            )
        if not (0 <= model["x"] <= width and 0 <= model["y"] <= depth):
            yield (
                f"models[{index}]",
                f"model {model['id']!r} at ({model['x']}, {model['y']}) is off the {width:g} x {depth:g} in table",
            )
    for index, objective in enumerate(data.get("objectives", [])):
        if not (0 <= objective["x"] <= width and 0 <= objective["y"] <= depth):
            yield (
                f"objectives[{index}]",
                f"objective {objective['id']!r} at ({objective['x']}, {objective['y']}) "
                f"is off the {width:g} x {depth:g} in table",
            )
    for index, piece in enumerate(data.get("terrain", [])):
        reason = validate_polygon(piece["polygon"])
        if reason:
            yield f"terrain[{index}].polygon", f"terrain {piece['id']!r}: {reason}"


def _build(data: dict[str, Any], source: str) -> Scene:
    default_sigma = float(data.get("measurement", {}).get("sigma_in", 0.0))
    return Scene(
        source=source,
        game=data["game"],
        width_in=float(data["table"]["width_in"]),
        depth_in=float(data["table"]["depth_in"]),
        players=tuple(Player(p["id"], p.get("name", p["id"]), p.get("color")) for p in data.get("players", [])),
        units=tuple(
            Unit(
                u["id"],
                u["player"],
                u.get("name", u["id"]),
                u.get("profile", {}),
                tuple(u.get("keywords", [])),
                u.get("state", {}),
            )
            for u in data.get("units", [])
        ),
        models=tuple(
            Model(
                m["id"],
                m["unit"],
                f"{float(m['base']):g}" if isinstance(m["base"], (int, float)) else m["base"],
                float(m["x"]),
                float(m["y"]),
                float(m.get("z", 0.0)),
                float(m.get("facing_deg", 0.0)),
                float(m.get("height_in", 0.0)),
                float(m.get("sigma_in", default_sigma)),
                m.get("state", {}),
                float(m.get("base_sigma_in", 0.0)),
            )
            for m in data.get("models", [])
        ),
        terrain=tuple(
            Terrain(
                t["id"],
                t["kind"],
                tuple((float(x), float(y)) for x, y in t["polygon"]),
                float(t["height_in"]),
                tuple(t.get("traits", [])),
            )
            for t in data.get("terrain", [])
        ),
        objectives=tuple(
            Objective(
                o["id"],
                float(o["x"]),
                float(o["y"]),
                float(o.get("diameter_mm", 40.0)),
                o.get("controlled_by"),
                float(o.get("sigma_in", default_sigma)),
            )
            for o in data.get("objectives", [])
        ),
        round=data.get("round"),
        sigma_in=default_sigma,
        _raw=data,
    )


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON in the file at ``path``; a file that is missing, unreadable or not JSON is a SceneError naming it."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(source, [("", "no such file")]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise SceneError(source, [("", f"cannot read the file ({error})")]) from None
    return _parse_json(text, source)


def _parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SceneError(
            source, [("", f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}")]
        ) from None
