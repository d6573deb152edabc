"""Helpers every game module shares: looking up units, measuring between units, errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from geometry.distance import cross_distance_in, polygon_distance_in, vertical_gap_in
from geometry.measure import Comparison, compare_at_most
from geometry.shapes import FloatArray
from tablesight.scene import Model, Scene, Unit


class QuestionError(ValueError):
    """A question that cannot be answered: unknown id, missing field, not in this game."""


def unit_or_error(scene: Scene, unit_id: str) -> Unit:
    try:
        return scene.unit(unit_id)
    except KeyError:
        known = ", ".join(u.id for u in scene.units) or "none"
        raise QuestionError(f"{scene.source}: no unit {unit_id!r} (units: {known})") from None


def objective_or_error(scene: Scene, objective_id: str) -> Any:
    for objective in scene.objectives:
        if objective.id == objective_id:
            return objective
    known = ", ".join(o.id for o in scene.objectives) or "none"
    raise QuestionError(f"{scene.source}: no objective {objective_id!r} (objectives: {known})")


def profile_value(scene: Scene, unit: Unit, field: str) -> Any:
    if field not in unit.profile:
        raise QuestionError(f"{scene.source}: unit {unit.id!r} has no profile.{field}, which this question needs")
    return unit.profile[field]


def keyword_value(unit: Unit, name: str) -> float | None:
    """``Ranged(12)`` -> 12.0 for name 'Ranged'; None if the unit lacks the keyword."""
    pattern = re.compile(rf"^{re.escape(name)}\s*\(\s*([0-9.]+)\s*\)$", re.IGNORECASE)
    for keyword in unit.keywords:
        match = pattern.match(keyword.strip())
        if match:
            return float(match.group(1))
    return None


def has_keyword(unit: Unit, name: str) -> bool:
    return any(
        k.strip().lower() == name.lower() or k.strip().lower().startswith(name.lower() + "(") for k in unit.keywords
    )


@dataclass(frozen=True)
class UnitGap:
    """Closest approach between two units' models."""

    distance_in: float
    sigma_in: float
    vertical_in: float
    models: tuple[str, str]
    matrix: FloatArray  # all model pairs, rows: first unit's models

    def within(self, name: str, limit_in: float) -> Comparison:
        return compare_at_most(name, self.distance_in, limit_in, self.sigma_in)


def unit_gap(scene: Scene, first: tuple[Model, ...], second: tuple[Model, ...]) -> UnitGap:
    a, b = scene.footprints(first), scene.footprints(second)
    d = cross_distance_in(a, b)
    i, j = np.unravel_index(int(np.argmin(d)), d.shape)
    return UnitGap(
        float(d[i, j]),
        float(np.hypot(a.sigma_in[i], b.sigma_in[j])),
        float(vertical_gap_in(a[[i]], b[[j]])[0, 0]),
        (first[i].id, second[j].id),
        d,
    )


def models_to_polygon_in(scene: Scene, models: tuple[Model, ...], polygon: Any) -> FloatArray:
    return polygon_distance_in(scene.footprints(models), polygon)


def last_event(scene: Scene, unit_id: str, kinds: tuple[str, ...]) -> dict[str, Any] | None:
    """The unit's latest ``history`` event of one of these kinds (e.g. its last move)."""
    found = None
    for event in scene.extra("history", []):
        if event.get("unit") == unit_id and event.get("event") in kinds:
            found = event
    return found


def unseen_starts(record: dict[str, Any]) -> set[str]:
    """The models a move record names in ``unseen_from``: the camera did not see where they stood when their unit
    was activated (picked up or hidden then), so the place ``from`` gives is only where each was last seen. (A list
    of ids: the scene's schema checks it when the scene loads.)"""
    return {str(mid) for mid in record.get("unseen_from", [])}


UNSEEN_START_REASON = (
    "{model}: where it stood when its unit was activated was not seen (picked up or hidden then), so its move "
    "cannot be measured - too close to call."
)


def fmt_in(value_in: float) -> str:
    return f'{value_in:.2f}"'
