"""Miniature Skirmish Game (../shared/rulebooks/miniature-skirmish.md).

Each unit is one miniature (a unit of several models is refereed model by
model). Profile fields: ``speed`` (tier; higher activates first), ``move``
(inches), ``skill`` (hit on skill+), ``defense`` (negate on defense+),
``health``, ``weapons``: ``[{"name", "range": [min_in, max_in], "attacks", "damage"}]``.
Readings: docs/rules/miniature-skirmish.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import shapely

from geometry.measure import Comparison, Verdict, combine_all, compare_at_most
from geometry.paths import shortest_path
from geometry.shapes import base_semi_axes_in
from rules.common import (
    UNSEEN_START_REASON,
    QuestionError,
    fmt_in,
    last_event,
    profile_value,
    unit_gap,
    unit_or_error,
    unseen_starts,
)
from rules.dice import Dist, success_chance
from rules.profiles import profile_for
from rules.ruling import Ruling
from rules.table_facts import sight_doubt, sight_lines
from tablesight.scene import Scene, Unit

GAME = "Miniature Skirmish Game"


@dataclass(frozen=True)
class SkirmishOptions:
    # When both players activated equally many miniatures in a tier, who starts the next?
    # "alternate": the player who did not activate last in the tier (alternation carries on);
    # "same": the player who started the tier starts the next one too.
    equal_tier_next: str = "alternate"
    # Weapons need line of sight (the rulebook only says "within the maximum range").
    ranged_needs_sight: bool = True


def find_weapon(scene: Scene, unit: Unit, name: str | None) -> dict[str, Any]:
    weapons = profile_value(scene, unit, "weapons")
    if not weapons:
        raise QuestionError(f"{unit.name} has no weapons")
    if name is None:
        return dict(weapons[0])
    for w in weapons:
        if str(w.get("name", "")).lower() == name.lower():
            return dict(w)
    raise QuestionError(
        f"{unit.name} has no weapon {name!r} (it has: {', '.join(str(w.get('name')) for w in weapons)})"
    )


def attack_damage(attacks: int, skill: int, defense: int, damage: int) -> Dist:
    """Hit on skill+, each hit negated on defense+, each unblocked hit deals ``damage``."""
    through = success_chance(skill) * (1 - success_chance(defense))
    return Dist.binomial(attacks, through).map(lambda hits: hits * damage)


@dataclass
class Skirmish:
    options: SkirmishOptions = field(default_factory=SkirmishOptions)

    game = "miniature-skirmish"
    questions = ("in-range", "can-see", "can-target", "move-ok", "activation-order", "score")

    def in_range(self, scene: Scene, a_id: str, b_id: str, range_in: float | None = None) -> Ruling:
        a, b = unit_or_error(scene, a_id), unit_or_error(scene, b_id)
        if range_in is None:
            w = find_weapon(scene, a, None)
            range_in = float(w["range"][1])
        gap = unit_gap(scene, scene.models_of(a.id), scene.models_of(b.id))
        cmp = gap.within("distance", range_in)
        return Ruling(
            f"Is {b.name} within {fmt_in(range_in)} of {a.name}?",
            cmp.verdict,
            (f"{a.name} to {b.name}: {cmp.describe()}.",),
            (cmp,),
            f"{GAME} > Actions > Attack with a weapon",
            (a.id, b.id),
        )

    def can_see(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        a, b = unit_or_error(scene, a_id), unit_or_error(scene, b_id)
        lines = sight_lines(scene, profile_for(scene.game))
        result = lines.check(scene.footprints(scene.models_of(a.id)[:1]), scene.footprints(scene.models_of(b.id)[:1]))[
            0
        ]
        reasons = [
            f"{b.name} is visible from {a.name} ({result.visible_fraction:.0%} of its base)."
            if result.visible
            else f"{b.name} is hidden from {a.name} by {', '.join(result.blocked_by)}."
        ]
        if result.doubtful:
            reasons.append(sight_doubt(result.visible))
        return Ruling(
            f"Can {a.name} see {b.name}?",
            result.verdict,
            tuple(reasons),
            (),
            f"{GAME} (line of sight: blocking terrain)",
            (a.id, b.id),
        )

    def can_target(self, scene: Scene, a_id: str, b_id: str, weapon: str | None = None) -> Ruling:
        a, b = unit_or_error(scene, a_id), unit_or_error(scene, b_id)
        if a.player == b.player:
            raise QuestionError(f"{a.id!r} and {b.id!r} belong to the same player")
        w = find_weapon(scene, a, weapon)
        low, high = float(w["range"][0]), float(w["range"][1])
        gap = unit_gap(scene, scene.models_of(a.id), scene.models_of(b.id))
        too_far = compare_at_most("maximum range", gap.distance_in, high, gap.sigma_in)
        # "at least the minimum" is "minimum <= d", i.e. -d <= -minimum.
        near = compare_at_most("minimum range", -gap.distance_in, -low, gap.sigma_in)
        near = Comparison("minimum range", gap.distance_in, low, gap.sigma_in, near.verdict, ">=")
        verdicts = [too_far.verdict, near.verdict]
        reasons = [f'{w.get("name", "weapon")} reaches {low:g}-{high:g}": {b.name} is {fmt_in(gap.distance_in)} away.']
        if near.verdict is Verdict.NO:
            reasons.append(f"Closer than the weapon's minimum range of {fmt_in(low)}.")
        if too_far.verdict is Verdict.NO:
            reasons.append(f"Beyond the weapon's maximum range of {fmt_in(high)}.")
        if self.options.ranged_needs_sight and low > 0:
            sight = self.can_see(scene, a_id, b_id)
            verdicts.append(sight.verdict)
            if sight.verdict is not Verdict.YES:
                reasons.extend(sight.reasons)
        return Ruling(
            f"Can {a.name} attack {b.name} with {w.get('name', 'its weapon')}?",
            combine_all(verdicts),
            tuple(reasons),
            (near, too_far),
            f"{GAME} > Weapons > Range (minimum and maximum distance)",
            (a.id, b.id),
        )

    def move_ok(self, scene: Scene, unit_id: str) -> Ruling:
        unit = unit_or_error(scene, unit_id)
        record = last_event(scene, unit_id, ("move", "charge"))
        if record is None:
            raise QuestionError(f"{scene.source}: history has no move or charge of {unit_id!r}")
        charge = record.get("event") == "charge"
        allowance = float(profile_value(scene, unit, "move")) * (2 if charge else 1)
        blocking = [t.shape for t in scene.terrain if t.kind == "blocking"]
        others = [m for m in scene.models if m.unit != unit_id]
        if others:
            blocking += list(scene.footprints(others).polygons(32))
        verdicts, measurements, reasons = [], [], []
        unseen = unseen_starts(record)
        for model in scene.models_of(unit_id):
            if model.id not in record.get("from", {}):
                raise QuestionError(
                    f"{scene.source}: the {record['event']} of {unit_id!r} has no start position for {model.id!r}"
                )
            if model.id in unseen:
                verdicts.append(Verdict.TOO_CLOSE)
                reasons.append(UNSEEN_START_REASON.format(model=model.id))
                continue
            sx, sy = record["from"][model.id]
            path = shortest_path(
                (float(sx), float(sy)),
                (model.x, model.y),
                base_semi_axes_in(model.base)[1],
                blocking,
                bounds=shapely.box(0, 0, scene.width_in, scene.depth_in),
            )
            if not path.reachable:
                verdicts.append(Verdict.NO)
                reasons.append(f"{model.id} could not have got there: {path.reason}.")
                continue
            cmp = compare_at_most(f"{model.id} path", path.length_in, allowance, 2**0.5 * model.sigma_in)
            verdicts.append(cmp.verdict)
            measurements.append(cmp)
            reasons.append(f"{model.id} moved {cmp.describe()}{' (charge: double move)' if charge else ''}.")
        return Ruling(
            f"Was the {'charge' if charge else 'move'} of {unit.name} legal?",
            combine_all(verdicts),
            tuple(reasons),
            tuple(measurements),
            f"{GAME} > Actions > {'Charge' if charge else 'Move'}",
            (unit.id,),
        )

    def rulings(self, scene: Scene) -> list[Ruling]:
        """For every pair of enemy miniatures, each weapon that can reach (or is too close to call)."""
        out = []
        for a in scene.units:
            for b in scene.units:
                if a.player == b.player or not scene.models_of(a.id) or not scene.models_of(b.id):
                    continue
                for w in a.profile.get("weapons", []):
                    ruling = self.can_target(scene, a.id, b.id, str(w.get("name")))
                    if ruling.verdict is not Verdict.NO:
                        out.append(ruling)
        return out

    def score(self, scene: Scene) -> dict[str, Any]:
        raise QuestionError("the Miniature Skirmish Game rulebook has no victory conditions to score")

    def activation_order(self, scene: Scene) -> dict[str, Any]:
        """The turn's activation plan: tiers from fastest, alternating within a tier."""
        first = scene.extra("first_player") or (scene.players[0].id if scene.players else None)
        players = [p.id for p in scene.players] or sorted({u.player for u in scene.units})
        if first not in players:
            raise QuestionError(f"{scene.source}: first_player {first!r} is not a player")
        remaining: dict[int, dict[str, list[str]]] = {}
        for unit in scene.units:
            if unit.state.get("destroyed") or not scene.models_of(unit.id):
                continue
            tier = int(profile_value(scene, unit, "speed"))
            remaining.setdefault(tier, {p: [] for p in players}).setdefault(unit.player, []).append(unit.id)
        plan = []
        starter = str(first)
        for tier in sorted(remaining, reverse=True):
            pools = {p: list(v) for p, v in remaining[tier].items()}
            order = [starter] + [p for p in players if p != starter]
            counts = {p: 0 for p in players}
            turn = 0
            last = starter
            while any(pools.values()):
                player = order[turn % len(order)]
                turn += 1
                if not pools.get(player):
                    continue
                plan.append({"tier": tier, "player": player, "one_of": sorted(remaining[tier][player])})
                pools[player].pop()
                counts[player] += 1
                last = player
            fewer = sorted(players, key=lambda p: counts[p])
            if counts[fewer[0]] < counts[fewer[-1]]:
                starter = fewer[0]
            elif self.options.equal_tier_next == "alternate":
                starter = next(p for p in order if p != last)
        return {
            "game": self.game,
            "first_player": first,
            "activations": plan,
            "rule": f"{GAME} > Alternating activations",
        }


def skirmish_odds(attacks: int, skill: int, defense: int, damage: int) -> tuple[str, Dist]:
    description = f"Skirmish attack: {attacks} dice hitting on {skill}+, negated on {defense}+, {damage} damage each"
    return description, attack_damage(attacks, skill, defense, damage)


__all__ = ["Skirmish", "SkirmishOptions", "attack_damage", "skirmish_odds", "Fraction"]
