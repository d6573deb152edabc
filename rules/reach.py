"""How far a unit reaches: its move and its weapons' ranges, read from each game's profile format.

The referee page draws these around a selected unit; the rulings themselves
(``can-target``, ``in-range``) stay with each game's module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rules.common import keyword_value
from rules.profiles import profile_for
from tablesight.scene import Scene, Unit


@dataclass(frozen=True)
class WeaponReach:
    name: str
    range_in: float  # the longest range at which it can be used
    min_range_in: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "range_in": self.range_in, "min_range_in": self.min_range_in}


@dataclass(frozen=True)
class UnitReach:
    unit: str
    move_in: float | None
    weapons: tuple[WeaponReach, ...]

    @property
    def threat_in(self) -> float | None:
        """Move, then the longest weapon: how far this unit can hurt this turn."""
        if self.move_in is None:
            return None
        return self.move_in + max((w.range_in for w in self.weapons), default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "move_in": self.move_in,
            "threat_in": self.threat_in,
            "weapons": [w.to_json() for w in self.weapons],
        }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _hex_width_in(scene: Scene) -> float | None:
    grid = scene.hex_spec
    return _number(grid.get("width_in")) if grid else None


def unit_reach(scene: Scene, unit: Unit) -> UnitReach:
    """Move and weapon ranges in inches, from whichever profile format the game uses."""
    melee_in = profile_for(scene.game).engagement_in
    weapons: list[WeaponReach] = []
    ranged = keyword_value(unit, "Ranged")  # Focal Point: the Ranged(N) keyword
    if ranged is not None:
        weapons.append(WeaponReach("ranged", ranged))
    for raw in unit.profile.get("weapons", []) or []:
        if not isinstance(raw, dict):
            continue
        name = str(raw.get("name", "weapon"))
        rng = raw.get("range")
        if rng == "melee":
            weapons.append(WeaponReach(name, melee_in))
        elif isinstance(rng, list) and len(rng) == 2 and all(_number(v) is not None for v in rng):
            weapons.append(WeaponReach(name, float(rng[1]), float(rng[0])))  # Skirmish: [min, max]
        elif (single := _number(rng)) is not None:
            weapons.append(WeaponReach(name, single))
        elif raw.get("fire_power"):  # Onefinity: bands in hexes
            width = _hex_width_in(scene)
            bands = [int(b[0]) for b in raw["fire_power"] if isinstance(b, list) and b]
            if width is not None and bands:
                weapons.append(WeaponReach(name, max(bands) * width))
    if not any(w.range_in <= melee_in for w in weapons):
        weapons.append(WeaponReach("melee", melee_in))
    return UnitReach(unit.id, _number(unit.profile.get("move")), tuple(weapons))
