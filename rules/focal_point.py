"""Affinity: Focal Point (../shared/rulebooks/affinity-focal-point.md).

Readings of ambiguous rule text are named options (``FocalPointOptions``) and
written down in docs/rules/focal-point.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import shapely

from geometry.cover import cover_relation
from geometry.measure import Comparison, Verdict, combine_all, combine_any, compare_at_most
from geometry.paths import shortest_path
from geometry.shapes import base_semi_axes_in
from rules.common import (
    UNSEEN_START_REASON,
    QuestionError,
    fmt_in,
    has_keyword,
    keyword_value,
    last_event,
    objective_or_error,
    profile_value,
    unit_gap,
    unit_or_error,
    unseen_starts,
)
from rules.dice import Dist, success_chance
from rules.profiles import profile_for
from rules.ruling import Ruling
from rules.table_facts import coherency_rulings, sight_doubt, sight_lines, sight_verdict
from tablesight.scene import Model, Scene, Unit

GAME = "Affinity: Focal Point"
MELEE_REACH_IN = 1.0
DREAD_RANGE_IN = 6.0
SPRINT_IN = 3.0
FINAL_ROUND = 4


@dataclass(frozen=True)
class FocalPointOptions:
    """Readings of ambiguous rule text; see docs/rules/focal-point.md."""

    # Attrition: "at or below 50% HP" (Attrition section) rather than "below 50%" (Combat step 2).
    attrition_at_or_below_half: bool = True
    # Resolve: below 25% HP gives -2 in all (True: the -1 for below 50% is added too, -3).
    resolve_penalties_stack: bool = False
    # Toll: the attacker picks which hit is "first", so the +1 goes on a critical hit when there is one.
    toll_bonus_on_critical: bool = True
    # Sprint: "+3 inches to Move actions": each Move action of the activation gets +3".
    sprint_per_move_action: bool = True
    # A formation that flees (Broken) counts as destroyed for victory points.
    fled_counts_as_destroyed: bool = True
    # Cover: the target has cover unless some attacking model has a shot with no Cover piece in the way
    # ("all" lines covered); "any": cover if any eligible line is covered.
    cover_rule: str = "all"


# ---------------------------------------------------------------------------
# Formation state
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Formation:
    unit: Unit
    models: tuple[Model, ...]
    hp_max: int
    hp: int

    @property
    def kind(self) -> str:
        return str(self.unit.profile.get("type", ""))

    @property
    def destroyed(self) -> bool:
        state = self.unit.state
        return self.hp <= 0 or bool(state.get("destroyed")) or bool(state.get("fled"))


def formation(scene: Scene, unit_id: str) -> Formation:
    unit = unit_or_error(scene, unit_id)
    hp_max = int(profile_value(scene, unit, "hp")) + (2 if has_keyword(unit, "Hero") else 0)
    hp = int(unit.state.get("hp", hp_max))
    return Formation(unit, scene.models_of(unit.id), hp_max, hp)


def _living(scene: Scene, unit_id: str) -> Formation:
    f = formation(scene, unit_id)
    if not f.models:
        raise QuestionError(f"{scene.source}: formation {unit_id!r} has no models on the table")
    return f


# ---------------------------------------------------------------------------
# Attack odds
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FocalAttack:
    """An attack after every modifier has been applied."""

    dice: int
    hit: int  # target number
    defense: int  # target number
    toll: bool = False
    threshold_defender: bool = False
    toll_bonus_on_critical: bool = True


def attack_damage(attack: FocalAttack) -> Dist:
    """Exact distribution of wounds that reach the defender's HP pool.

    Combat: each die meeting Hit is a hit, a natural 6 is a critical (always a
    hit; unblockable unless the defender is Threshold); Toll's first hit deals
    2; the defender rolls one die per blockable wound, each meeting Defense
    blocks one.
    """
    n = max(attack.dice, 0)
    p_crit = Fraction(1, 6)
    p_normal = max(success_chance(attack.hit) - p_crit, Fraction(0)) if attack.hit <= 6 else Fraction(0)
    p_wound_through = 1 - success_chance(attack.defense)

    def after_hits(crits: int, normals: int) -> Dist:
        unblockable, blockable = crits, normals
        if attack.toll and crits + normals > 0:
            if crits and attack.toll_bonus_on_critical:
                unblockable += 1
            else:
                blockable += 1
        if attack.threshold_defender:
            unblockable, blockable = 0, unblockable + blockable
        return Dist.binomial(blockable, p_wound_through).map(lambda through: through + unblockable)

    crits = Dist.binomial(n, p_crit)
    pairs: list[tuple[int, Fraction]] = []
    result: dict[int, Fraction] = {}
    for c, pc in crits.probs.items():
        rest = n - c
        # Given c criticals, each other die is a normal hit with p_normal / (1 - p_crit).
        normals = Dist.binomial(rest, p_normal / (1 - p_crit))
        for h, ph in normals.probs.items():
            for dmg, pd in after_hits(c, h).probs.items():
                result[dmg] = result.get(dmg, Fraction(0)) + pc * ph * pd
    pairs = list(result.items())
    return Dist.from_pairs(pairs)


def attack_for(
    scene: Scene,
    attacker_id: str,
    target_id: str,
    *,
    ranged: bool,
    in_cover: bool = False,
    strain: str | None = None,
    hold: bool | None = None,
    options: FocalPointOptions | None = None,
) -> tuple[FocalAttack, list[str]]:
    """Build the modified attack of one formation on another, with the reasons for each modifier."""
    opts = options or FocalPointOptions()
    attacker, target = formation(scene, attacker_id), formation(scene, target_id)
    a_unit, t_unit = attacker.unit, target.unit
    notes: list[str] = []
    dice = int(profile_value(scene, a_unit, "attack"))
    if attacker.kind == "Shard":
        dice += 1
        notes.append("Shard: +1 Attack die")
    if strain == "fury":
        dice += 2
        notes.append("Strain (Fury): +2 Attack dice")
    low = attacker.hp * 2 <= attacker.hp_max if opts.attrition_at_or_below_half else attacker.hp * 2 < attacker.hp_max
    if low and not has_keyword(a_unit, "Relentless"):
        dice -= 1
        notes.append(f"Attrition: at {attacker.hp}/{attacker.hp_max} HP, -1 Attack die")
    if a_unit.state.get("shaken"):
        dice -= 1
        notes.append("Shaken: -1 Attack die")
    dice = max(dice, 1)
    hit = int(profile_value(scene, a_unit, "hit"))
    if strain == "precision":
        hit -= 1
        notes.append("Strain (Precision): +1 to Hit")
    if has_keyword(a_unit, "Cloak") and not t_unit.state.get("activated", False):
        hit -= 1
        notes.append("Cloak: +1 to Hit against a target that has not activated")
    defense = int(profile_value(scene, t_unit, "defense"))
    if ranged and in_cover:
        defense -= 1
        notes.append("Cover: +1 Defense against ranged attacks")
    if t_unit.state.get("braced"):
        defense -= 1
        notes.append("Brace (Strain): +1 Defense")
    if hold if hold is not None else t_unit.state.get("hold"):
        defense -= 1
        notes.append("Hold: +1 Defense")
    return (
        FocalAttack(
            dice,
            hit,
            defense,
            toll=attacker.kind == "Toll",
            threshold_defender=target.kind == "Threshold",
            toll_bonus_on_critical=opts.toll_bonus_on_critical,
        ),
        notes,
    )


# ---------------------------------------------------------------------------
# The referee
# ---------------------------------------------------------------------------
@dataclass
class FocalPoint:
    options: FocalPointOptions = field(default_factory=FocalPointOptions)

    game = "focal-point"
    questions = (
        "coherent",
        "in-range",
        "can-see",
        "can-target",
        "can-claim",
        "controls",
        "cover",
        "move-ok",
        "resolve",
        "score",
    )

    # ---- geometry questions ------------------------------------------------
    def coherent(self, scene: Scene, unit_id: str) -> Ruling:
        unit = unit_or_error(scene, unit_id)
        for ruling in coherency_rulings(scene, profile_for(scene.game)):
            if ruling.subject == (unit.id,):
                return ruling
        raise QuestionError(f"{scene.source}: formation {unit_id!r} has no models on the table")

    def in_range(self, scene: Scene, a_id: str, b_id: str, range_in: float | None = None) -> Ruling:
        a, b = _living(scene, a_id), _living(scene, b_id)
        limit = range_in
        if limit is None:
            limit = keyword_value(a.unit, "Ranged")
            if limit is None:
                limit = MELEE_REACH_IN
        gap = unit_gap(scene, a.models, b.models)
        cmp = gap.within(f"{gap.models[0]} to {gap.models[1]}", limit)
        verdict = cmp.verdict
        reason = (
            f"{a.unit.name} to {b.unit.name}: closest models {gap.models[0]} and {gap.models[1]} are {cmp.describe()}."
        )
        return Ruling(
            f"Is {b.unit.name} within {fmt_in(limit)} of {a.unit.name}?",
            verdict,
            (reason,),
            (cmp,),
            f"{GAME} > Combat > 1. Check Range",
            (a.unit.id, b.unit.id),
        )

    def can_see(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        a, b = _living(scene, a_id), _living(scene, b_id)
        visible, lines = self._visible_pairs(scene, a, b)
        blocked = sorted({t for r in lines.values() for t in r.blocked_by})
        verdict = sight_verdict(list(lines.values()))
        if visible:
            sure = [k for k in visible if not lines[k].doubtful] or visible
            best = max(sure, key=lambda k: lines[k].visible_fraction)
            reasons = [
                f"{best[1]} is visible from {best[0]} ({lines[best].visible_fraction:.0%} of its base can be seen)."
            ]
        else:
            reason = f"No model of {b.unit.name} is visible from any model of {a.unit.name}"
            reasons = [reason + (f"; sight is blocked by {', '.join(blocked)}." if blocked else ".")]
        if verdict is Verdict.TOO_CLOSE:
            reasons.append(sight_doubt(bool(visible)))
        return Ruling(
            f"Can {a.unit.name} see {b.unit.name}?",
            verdict,
            tuple(reasons),
            (),
            f"{GAME} > Terrain (Blocking blocks line of sight)",
            (a.unit.id, b.unit.id),
        )

    def _visible_pairs(
        self, scene: Scene, a: Formation, b: Formation
    ) -> tuple[list[tuple[str, str]], dict[tuple[str, str], Any]]:
        lines = sight_lines(scene, profile_for(scene.game))
        pairs = [(x, y) for x in range(len(a.models)) for y in range(len(b.models))]
        fa, fb = scene.footprints(a.models), scene.footprints(b.models)
        i = np.array([p[0] for p in pairs])
        j = np.array([p[1] for p in pairs])
        results = lines.check(fa[i], fb[j])
        by_pair = {(a.models[x].id, b.models[y].id): r for (x, y), r in zip(pairs, results, strict=True)}
        return [k for k, r in by_pair.items() if r.visible], by_pair

    # ---- attacks -----------------------------------------------------------
    def can_target(self, scene: Scene, attacker_id: str, target_id: str, weapon: str | None = None) -> Ruling:
        a, t = _living(scene, attacker_id), _living(scene, target_id)
        if a.unit.player == t.unit.player:
            raise QuestionError(f"{a.unit.id!r} and {t.unit.id!r} belong to the same player")
        ranged_x = keyword_value(a.unit, "Ranged")
        mode = weapon or ("ranged" if ranged_x is not None else "melee")
        if mode not in ("melee", "ranged"):
            raise QuestionError(f"unknown weapon {weapon!r} for Focal Point: use melee or ranged")
        if a.destroyed or t.destroyed:
            gone = a if a.destroyed else t
            return Ruling(
                f"Can {a.unit.name} attack {t.unit.name}?",
                Verdict.NO,
                (f"{gone.unit.name} is destroyed.",),
                rule=f"{GAME} > Combat",
                subject=(a.unit.id, t.unit.id),
            )
        gap = unit_gap(scene, a.models, t.models)
        if mode == "melee":
            cmp = gap.within(f"{gap.models[0]} to {gap.models[1]}", MELEE_REACH_IN)
            reasons = [
                f'Melee needs a model within 1" of an enemy model: {gap.models[0]} is {cmp.describe()} from {gap.models[1]}.'
            ]
            verdict = cmp.verdict
            if has_keyword(t.unit, "Fly") and not has_keyword(a.unit, "Fly"):
                verdict = Verdict.NO
                reasons.append(f"{t.unit.name} can Fly and cannot be targeted by non-Fly melee attacks.")
            return Ruling(
                f"Can {a.unit.name} attack {t.unit.name} in melee?",
                verdict,
                tuple(reasons),
                (cmp,),
                f"{GAME} > Combat > 1. Check Range; Keywords > Fly",
                (a.unit.id, t.unit.id),
            )
        if ranged_x is None:
            raise QuestionError(f"{a.unit.name} has no Ranged(X) keyword, so it cannot make ranged attacks")
        return self._ranged_ruling(scene, a, t, ranged_x)

    def _ranged_ruling(self, scene: Scene, a: Formation, t: Formation, range_in: float) -> Ruling:
        gap = unit_gap(scene, a.models, t.models)
        visible, lines = self._visible_pairs(scene, a, t)
        sigma = gap.sigma_in
        candidates = []  # (range, pair, shot: range and sight together) for pairs that see each other, or might
        for i, am in enumerate(a.models):
            for j, tm in enumerate(t.models):
                pair = (am.id, tm.id)
                if pair in visible or lines[pair].doubtful:
                    cmp = compare_at_most(f"{am.id} to {tm.id}", float(gap.matrix[i, j]), range_in, sigma)
                    candidates.append((cmp, pair, combine_all([cmp.verdict, lines[pair].verdict])))
        in_range = [c for c in candidates if c[2] is not Verdict.NO]
        closest = gap.within(f"{gap.models[0]} to {gap.models[1]}", range_in)
        if in_range:
            best = min(in_range, key=lambda c: (c[2] is not Verdict.YES, c[0].value_in))  # a sure shot first
            verdict = combine_any([c[2] for c in in_range])
            sees = "sees" if best[1] in visible else "may see"
            reasons = [f"{best[1][0]} {sees} {best[1][1]} at {best[0].describe()} (Ranged({range_in:g}))."]
            if verdict is Verdict.TOO_CLOSE and lines[best[1]].doubtful:
                reasons.append(sight_doubt(best[1] in visible))
            measurements: tuple[Comparison, ...] = (best[0],)
        else:
            verdict = Verdict.NO
            if not visible:
                blocked = sorted({x for r in lines.values() for x in r.blocked_by})
                reasons = [
                    f"No model of {t.unit.name} is visible from {a.unit.name}"
                    + (f" (blocked by {', '.join(blocked)})." if blocked else ".")
                ]
            else:
                reasons = [
                    f"Every visible model of {t.unit.name} is beyond Ranged({range_in:g}); the closest model pair is {closest.describe()}."
                ]
            measurements = (closest,)
        cover = self._in_cover(scene, [c[1] for c in in_range]) if in_range else Verdict.NO
        if in_range:
            reasons.append(
                {
                    Verdict.YES: f"{t.unit.name} has cover (+1 Defense against this attack).",
                    Verdict.TOO_CLOSE: f"Whether {t.unit.name} has cover is too close to call.",
                    Verdict.NO: f"{t.unit.name} does not have cover.",
                }[cover]
            )
        return Ruling(
            f"Can {a.unit.name} shoot {t.unit.name}?",
            verdict,
            tuple(reasons),
            measurements,
            f"{GAME} > Combat > 1. Check Range; Keywords > Ranged(X); Terrain",
            (a.unit.id, t.unit.id),
        )

    def _in_cover(self, scene: Scene, pairs: list[tuple[str, str]]) -> Verdict:
        """Are these shots covered (a Cover piece between, or the target inside one)? Too close to call where
        the models' sigma could flip it (geometry/cover.py)."""
        return self._covered(list(self._shots_covered(scene, pairs).values()))

    @staticmethod
    def _shots_covered(scene: Scene, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], Verdict]:
        """Each shot (attacker model, target model): is it covered?"""
        covers = [p for p in scene.terrain if p.kind == "cover"]
        if not covers:
            return dict.fromkeys(pairs, Verdict.NO)
        out = {}
        for am_id, tm_id in pairs:
            fa, ft = scene.footprints([scene.model(am_id)]), scene.footprints([scene.model(tm_id)])
            relations = [cover_relation(fa, ft, piece.shape) for piece in covers]
            out[(am_id, tm_id)] = combine_any([v for r in relations for v in (r.between_verdict, r.within_verdict)])
        return out

    def _covered(self, shots: list[Verdict]) -> Verdict:
        """The target has cover when every shot is covered (``cover_rule="any"``: when one is)."""
        if not shots:
            return Verdict.NO
        return combine_all(shots) if self.options.cover_rule == "all" else combine_any(shots)

    def cover(self, scene: Scene, target_id: str, attacker_id: str) -> Ruling:
        a, t = _living(scene, attacker_id), _living(scene, target_id)
        range_in = keyword_value(a.unit, "Ranged") or math.inf
        _, lines = self._visible_pairs(scene, a, t)
        gap = unit_gap(scene, a.models, t.models)
        index = {m.id: k for k, m in enumerate(a.models)}, {m.id: k for k, m in enumerate(t.models)}

        def shot(p: tuple[str, str]) -> Verdict:  # does this pair have a shot: in sight and in range
            d = float(gap.matrix[index[0][p[0]], index[1][p[1]]])
            return combine_all([lines[p].verdict, compare_at_most("range", d, range_in, gap.sigma_in).verdict])

        shots = {p: shot(p) for p in lines}
        eligible = [p for p, v in shots.items() if v is Verdict.YES]
        maybe = [p for p, v in shots.items() if v is not Verdict.NO]
        per_shot = self._shots_covered(scene, maybe)  # eligible shots are among those that may be
        covered = self._covered([per_shot[p] for p in eligible])
        if covered is not self._covered(list(per_shot.values())):  # the shots in doubt decide it
            covered = Verdict.TOO_CLOSE
        if not maybe:
            reason = f"{a.unit.name} has no shot at {t.unit.name}, so cover does not arise."
        elif covered is Verdict.TOO_CLOSE:
            reason = (
                f"Whether the shots {a.unit.name} has at {t.unit.name} are covered is too close to call: "
                f"the models' measuring error could move a Cover piece's edge or a line of sight past them."
            )
        elif covered is Verdict.YES:
            reason = f"Every shot {a.unit.name} has at {t.unit.name} passes a Cover piece or ends at a model inside one: +1 Defense."
            if self.options.cover_rule == "any":
                reason = f"At least one shot {a.unit.name} has at {t.unit.name} is covered: +1 Defense."
        else:
            reason = f"{a.unit.name} has a shot at {t.unit.name} with no Cover piece in the way."
        return Ruling(
            f"Does {t.unit.name} have cover from {a.unit.name}?",
            covered,
            (reason,),
            (),
            f"{GAME} > Terrain (Cover: +1 to Defense against ranged attacks)",
            (t.unit.id, a.unit.id),
        )

    # ---- objectives --------------------------------------------------------
    def _touching(self, scene: Scene, unit_id: str, objective_id: str) -> Comparison:
        f = _living(scene, unit_id)
        obj = objective_or_error(scene, objective_id)
        d = scene.footprints(f.models)
        marker = scene.objective_footprints([obj])
        from geometry.distance import cross_distance_in

        dist = cross_distance_in(d, marker)[:, 0]
        k = int(np.argmin(dist))
        sigma = float(np.hypot(d.sigma_in[k], marker.sigma_in[0]))
        return compare_at_most(f"{f.models[k].id} to objective {obj.id}", float(dist[k]), 0.0, sigma)

    def can_claim(self, scene: Scene, unit_id: str, objective_id: str) -> Ruling:
        f = formation(scene, unit_id)
        touch = self._touching(scene, unit_id, objective_id)
        name = touch.name.split(" to ")[0]
        if touch.verdict is Verdict.YES:
            reason = f"{name} is touching objective {objective_id} ({fmt_in(touch.value_in)} away)."
        elif touch.verdict is Verdict.TOO_CLOSE:
            reason = f"{name} is {fmt_in(touch.value_in)} from objective {objective_id}: touching is too close to call."
        else:
            reason = f"No model of {f.unit.name} touches objective {objective_id}: the closest, {name}, is {fmt_in(touch.value_in)} away."
        return Ruling(
            f"Can {f.unit.name} claim objective {objective_id}?",
            touch.verdict,
            (reason,),
            (touch,),
            f"{GAME} > Objectives > Claiming Objectives",
            (f.unit.id, objective_id),
        )

    def controls(self, scene: Scene, objective_id: str) -> Ruling:
        obj = objective_or_error(scene, objective_id)
        controller = self._controller(scene, objective_id)
        touching: dict[str, list[str]] = {}
        uncertain = []
        for unit in scene.units:
            f = formation(scene, unit.id)
            if f.destroyed or not f.models:
                continue
            touch = self._touching(scene, unit.id, objective_id)
            if touch.verdict is Verdict.YES:
                touching.setdefault(unit.player, []).append(unit.name)
            elif touch.verdict is Verdict.TOO_CLOSE:
                uncertain.append(unit.name)
        reasons = []
        if len(touching) > 1:
            verdict_text = "contested"
            reasons.append(
                "Contested: "
                + "; ".join(f"{p}: {', '.join(n)}" for p, n in touching.items())
                + " touch it, so neither player scores it."
            )
        elif controller:
            verdict_text = controller
            reasons.append(
                f"{controller} controls objective {obj.id} (last claimed by {controller}; control lasts until an enemy claims it)."
            )
        else:
            verdict_text = "nobody"
            reasons.append(f"Nobody has claimed objective {obj.id}.")
        if uncertain:
            reasons.append(f"Touching the marker is too close to call for {', '.join(uncertain)}.")
        verdict = (
            Verdict.TOO_CLOSE
            if uncertain
            else (Verdict.YES if verdict_text not in ("nobody", "contested") else Verdict.NO)
        )
        return Ruling(
            f"Who controls objective {obj.id}? {verdict_text}",
            verdict,
            tuple(reasons),
            (),
            f"{GAME} > Objectives (Claiming, Contested Objectives)",
            (obj.id, verdict_text),
        )

    def _controller(self, scene: Scene, objective_id: str) -> str | None:
        obj = objective_or_error(scene, objective_id)
        controller: str | None = obj.controlled_by
        for event in scene.extra("history", []):
            if event.get("event") == "claim" and event.get("objective") == objective_id:
                controller = unit_or_error(scene, str(event.get("unit"))).player
        return controller

    # ---- resolve -----------------------------------------------------------
    def resolve(self, scene: Scene, unit_id: str) -> Ruling:
        f = formation(scene, unit_id)
        unit = f.unit
        base = int(profile_value(scene, unit, "resolve"))
        # "Lost any HP this round (from attacks OR from Strain)".
        lost = (
            bool(unit.state.get("lost_hp_this_round"))
            or int(unit.state.get("strain_this_round", 0)) > 0
            or f.hp < int(unit.state.get("hp_at_round_start", f.hp))
        )
        penalty = 0
        notes = []
        strains = int(unit.state.get("strain_this_round", 0))
        if strains:
            penalty += strains
            notes.append(f"-{strains} for Strain this round")
        quarter = f.hp * 4 < f.hp_max
        half = f.hp * 2 < f.hp_max
        if quarter:
            penalty += 3 if self.options.resolve_penalties_stack else 2
            notes.append(
                f"-{3 if self.options.resolve_penalties_stack else 2} for being below 25% HP ({f.hp}/{f.hp_max})"
            )
        elif half:
            penalty += 1
            notes.append(f"-1 for being below 50% HP ({f.hp}/{f.hp_max})")
        dread = self._dread_sources(scene, unit)
        if dread:
            penalty += 1
            notes.append(f'-1 for Dread ({", ".join(dread)} within 6")')
        if has_keyword(unit, "Oathbound"):
            penalty -= 1
            notes.append("+1 for Oathbound")
        outcome = Dist.from_pairs((r - penalty, Fraction(1, 6)) for r in range(1, 7))
        p_pass = outcome.at_least(base)
        p_broken = sum((p for v, p in outcome.probs.items() if base - v >= 3), Fraction(0))
        p_shaken = 1 - p_pass - p_broken
        if not lost:
            reason = f"{unit.name} lost no HP this round, so it does not test Resolve."
            verdict = Verdict.NO
        else:
            reason = (
                f"{unit.name} tests Resolve {base}+ with {'; '.join(notes) if notes else 'no modifiers'}: "
                f"pass {float(p_pass):.0%}, Shaken {float(p_shaken):.0%}, Broken {float(p_broken):.0%}."
            )
            verdict = Verdict.YES
        measurement = Comparison("resolve roll modifier", float(-penalty), 0.0, 0.0, Verdict.YES, "=")
        return Ruling(
            f"Must {unit.name} test Resolve, and with what odds?",
            verdict,
            (reason,),
            (measurement,),
            f"{GAME} > Resolve Phase; Keywords > Dread, Oathbound",
            (unit.id,),
        )

    def _dread_sources(self, scene: Scene, unit: Unit) -> list[str]:
        sources = []
        mine = scene.models_of(unit.id)
        for other in scene.units:
            if other.player == unit.player or not has_keyword(other, "Dread"):
                continue
            f = formation(scene, other.id)
            if f.destroyed or not f.models or not mine:
                continue
            if unit_gap(scene, mine, f.models).within("dread", DREAD_RANGE_IN).verdict is not Verdict.NO:
                sources.append(other.name)
        return sources

    # ---- moves -------------------------------------------------------------
    def move_ok(self, scene: Scene, unit_id: str) -> Ruling:
        f = _living(scene, unit_id)
        record = last_event(scene, unit_id, ("move",))
        if record is None:
            raise QuestionError(
                f"{scene.source}: history has no move of {unit_id!r} (needs an event "
                '{"event": "move", "unit": ..., "from": {model id: [x, y]}, "moves": 1})'
            )
        start = record.get("from", {})
        unseen = unseen_starts(record)
        moves = int(record.get("moves", 1))
        move = float(profile_value(scene, f.unit, "move"))
        sprint = record.get("strain") == "sprint"
        allowance = moves * move + (
            SPRINT_IN * (moves if self.options.sprint_per_move_action else 1) if sprint else 0.0
        )
        fly = has_keyword(f.unit, "Fly")
        blocking = [] if fly else [t.shape for t in scene.terrain if t.kind == "blocking"]
        difficult = [] if fly else [t.shape for t in scene.terrain if t.kind == "difficult"]
        enemies = [m for m in scene.models if scene.player_of(m) != f.unit.player]
        if enemies and not fly:
            blocking += list(scene.footprints(enemies).polygons(32))
        table = shapely.box(0, 0, scene.width_in, scene.depth_in)
        verdicts = []
        measurements = []
        reasons = []
        for model in f.models:
            if model.id not in start:
                raise QuestionError(
                    f"{scene.source}: the move record of {unit_id!r} has no start position for {model.id!r}"
                )
            if model.id in unseen:
                verdicts.append(Verdict.TOO_CLOSE)
                reasons.append(UNSEEN_START_REASON.format(model=model.id))
                continue
            sx, sy = start[model.id]
            radius = base_semi_axes_in(model.base)[1]
            path = shortest_path((float(sx), float(sy)), (model.x, model.y), radius, blocking, difficult, bounds=table)
            sigma = math.sqrt(2) * model.sigma_in
            if not path.reachable:
                verdicts.append(Verdict.NO)
                reasons.append(f"{model.id} could not have got there: {path.reason}.")
                continue
            cmp = compare_at_most(f"{model.id} move cost", path.cost_in, allowance, sigma)
            measurements.append(cmp)
            verdicts.append(cmp.verdict)
            if cmp.verdict is not Verdict.YES:
                reasons.append(
                    f"{model.id} moved {cmp.describe()} (path length {fmt_in(path.length_in)}, difficult ground counted double)."
                )
        coherent = self.coherent(scene, unit_id)
        verdicts.append(coherent.verdict)
        if coherent.verdict is not Verdict.YES:
            reasons += list(coherent.reasons)
        verdict = combine_all(verdicts)
        if verdict is Verdict.YES:
            longest = max(measurements, key=lambda m: m.value_in)
            reasons.insert(
                0,
                f"Every model moved within {fmt_in(allowance)} ({longest.name}: {fmt_in(longest.value_in)}) and the formation ended in coherency.",
            )
        return Ruling(
            f"Was the move of {f.unit.name} legal?",
            verdict,
            tuple(reasons),
            tuple(measurements),
            f"{GAME} > Activation (Move); Strain (Sprint); Coherency; Terrain",
            (f.unit.id,),
        )

    # ---- scoring -----------------------------------------------------------
    def score(self, scene: Scene) -> dict[str, Any]:
        players = [p.id for p in scene.players] or sorted({u.player for u in scene.units})
        vp = {p: 0 for p in players}
        evidence: list[str] = []
        for obj in scene.objectives:
            ruling = self.controls(scene, obj.id)
            holder = ruling.subject[1]
            if holder in vp and ruling.verdict is not Verdict.TOO_CLOSE:
                vp[holder] += 2
                evidence.append(f"{holder} controls objective {obj.id}: 2 VP")
            else:
                evidence.append(f"objective {obj.id}: {ruling.reasons[0]}")
        surviving = {p: 0 for p in players}
        for unit in scene.units:
            f = formation(scene, unit.id)
            fled = bool(unit.state.get("fled"))
            destroyed = (
                f.hp <= 0 or bool(unit.state.get("destroyed")) or (fled and self.options.fled_counts_as_destroyed)
            )
            if not destroyed:
                surviving[unit.player] = surviving.get(unit.player, 0) + max(f.hp, 0)
                continue
            leader = has_keyword(unit, "Leader")
            for p in players:
                if p != unit.player:
                    vp[p] += 3 if leader else 1
                    evidence.append(
                        f"{p}: enemy {'Leader ' if leader else ''}formation {unit.name} destroyed: {3 if leader else 1} VP"
                    )
        ranking = sorted(players, key=lambda p: (vp[p], surviving.get(p, 0)), reverse=True)
        tie = len(ranking) > 1 and vp[ranking[0]] == vp[ranking[1]]
        winner = (
            ranking[0]
            if ranking and not (tie and surviving.get(ranking[0], 0) == surviving.get(ranking[1], 0))
            else None
        )
        return {
            "game": "focal-point",
            "round": scene.round,
            "final": (scene.round or 0) >= FINAL_ROUND,
            "vp": vp,
            "surviving_hp": surviving,
            "winner": winner,
            "tie_break": "surviving HP" if tie and winner else None,
            "evidence": evidence,
            "rule": f"{GAME} > Winning the Game",
        }

    # ---- everything at once ------------------------------------------------
    def rulings(self, scene: Scene) -> list[Ruling]:
        out = [r for r in coherency_rulings(scene, profile_for(scene.game))]
        living = [u for u in scene.units if not formation(scene, u.id).destroyed and scene.models_of(u.id)]
        for a in living:
            for t in living:
                if a.player == t.player:
                    continue
                melee = self.can_target(scene, a.id, t.id, "melee")
                if melee.verdict is not Verdict.NO:
                    out.append(melee)
                if keyword_value(a, "Ranged") is not None:
                    out.append(self.can_target(scene, a.id, t.id, "ranged"))
        for obj in scene.objectives:
            out.append(self.controls(scene, obj.id))
        for unit in scene.units:
            if scene.models_of(unit.id):
                out.append(self.resolve(scene, unit.id))
        for event in scene.extra("history", []):
            if event.get("event") == "move" and event.get("unit") in {u.id for u in living}:
                out.append(self.move_ok(scene, str(event["unit"])))
        return out
