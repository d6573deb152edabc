"""What each game measures: coherency, engagement distance, which terrain blocks sight.

Kept to the geometry a referee checks at a glance; the full rules of each game
live in their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from geometry.sight import SightMode


@dataclass(frozen=True)
class CoherencyRule:
    limit_in: float
    vertical_limit_in: float | None
    min_neighbours: int
    large_unit_size: int | None = None  # from this many models on ...
    large_unit_neighbours: int = 1  # ... each needs this many neighbours
    rule: str = ""

    def neighbours_needed(self, unit_size: int) -> int:
        if self.large_unit_size is not None and unit_size >= self.large_unit_size:
            return self.large_unit_neighbours
        return self.min_neighbours


@dataclass(frozen=True)
class GameProfile:
    game: str
    name: str
    coherency: CoherencyRule | None
    engagement_in: float
    engagement_vertical_in: float | None
    engagement_name: str
    engagement_rule: str
    sight_modes: dict[str, SightMode]  # terrain kind -> how it blocks sight

    def sight_mode(self, kind: str, traits: tuple[str, ...] = ()) -> SightMode | None:
        """How a terrain piece blocks sight; traits override the kind."""
        for trait in traits:
            if trait in ("blocks_sight", "opaque"):
                return SightMode.OPAQUE
            if trait == "see_into":
                return SightMode.SEE_INTO
            if trait == "opaque_unless_inside":
                return SightMode.OPAQUE_UNLESS_INSIDE
            if trait == "no_sight_block":
                return None
        return self.sight_modes.get(kind)


PROFILES: dict[str, GameProfile] = {
    "focal-point": GameProfile(
        game="focal-point",
        name="Affinity: Focal Point",
        coherency=CoherencyRule(2.0, None, 1, rule="Core Concepts > Coherency"),
        engagement_in=1.0,
        engagement_vertical_in=None,
        engagement_name="melee reach",
        engagement_rule="Combat > 1. Check Range",
        sight_modes={"blocking": SightMode.OPAQUE},
    ),
    "grinding-annihilation": GameProfile(
        game="grinding-annihilation",
        name="Grinding-Annihilation",
        coherency=CoherencyRule(2.0, 5.0, 1, large_unit_size=7, large_unit_neighbours=2, rule="Formation Cohesion"),
        engagement_in=1.0,
        engagement_vertical_in=5.0,
        engagement_name="threat range",
        engagement_rule="Threat Range",
        sight_modes={
            "ruins": SightMode.SEE_INTO,
            "blocking": SightMode.OPAQUE,
            "structure": SightMode.OPAQUE,
            "sealed-building": SightMode.OPAQUE,
            "armoured-container": SightMode.OPAQUE,
        },
    ),
    "miniature-skirmish": GameProfile(
        game="miniature-skirmish",
        name="Miniature Skirmish Game",
        coherency=None,
        engagement_in=1.0,
        engagement_vertical_in=None,
        engagement_name="melee range",
        engagement_rule="Weapons > Range (melee 0-1 inches)",
        sight_modes={"blocking": SightMode.OPAQUE},
    ),
    "onefinity": GameProfile(
        game="onefinity",
        name="Onefinity",
        coherency=None,
        engagement_in=1.0,
        engagement_vertical_in=None,
        engagement_name="base contact distance",
        engagement_rule="Cover and Visibility",
        sight_modes={"blocking": SightMode.OPAQUE},
    ),
    "flux": GameProfile(
        game="flux",
        name="Affinity: Flux",
        coherency=None,
        engagement_in=1.0,
        engagement_vertical_in=None,
        engagement_name="1 inch",
        engagement_rule="",
        sight_modes={},
    ),
}


def profile_for(game: str) -> GameProfile:
    try:
        return PROFILES[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r} (known: {', '.join(PROFILES)})") from None
