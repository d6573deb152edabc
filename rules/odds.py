"""`tablesight odds GAME ...`: exact attack outcome tables from a profile or a scene."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from rules.common import QuestionError
from rules.dice import Dist
from rules.focal_point import FocalAttack, attack_damage, attack_for
from tablesight.scene import Scene


@dataclass(frozen=True)
class OddsResult:
    game: str
    description: str
    notes: tuple[str, ...]
    distribution: Dist
    label: str

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "attack": self.description,
            "modifiers": list(self.notes),
            self.label: self.distribution.to_json(),
        }

    def text(self) -> str:
        lines = [self.description, *(f"  {n}" for n in self.notes), self.distribution.table(self.label)]
        return "\n".join(lines)


def odds_for(game: str, args: argparse.Namespace) -> OddsResult:
    if game == "miniature-skirmish":
        return _skirmish(args)
    if game == "onefinity":
        return _onefinity(args)
    if game == "grinding-annihilation":
        return _grinding(args)
    if game != "focal-point":
        raise QuestionError(
            f"odds for {game!r} are not available yet (available: focal-point, grinding-annihilation, miniature-skirmish, onefinity)"
        )
    notes: tuple[str, ...] = ()
    if args.scene:
        if not (args.attacker and args.target):
            raise QuestionError("--scene needs --attacker and --target")
        scene = Scene.load(args.scene)
        attack, note_list = attack_for(
            scene,
            args.attacker,
            args.target,
            ranged=args.ranged,
            in_cover=args.cover,
            strain=args.strain,
            hold=args.hold or None,
        )
        notes = tuple(note_list)
    else:
        missing = [name for name in ("dice", "hit", "defense") if getattr(args, name) is None]
        if missing:
            raise QuestionError(f"give --scene with --attacker/--target, or {' '.join('--' + m for m in missing)}")
        attack = FocalAttack(args.dice, args.hit, args.defense, toll=args.toll, threshold_defender=args.threshold)
    description = (
        f"Focal Point attack: {attack.dice} dice hitting on {attack.hit}+, defender blocks on {attack.defense}+"
        + (", Toll" if attack.toll else "")
        + (", Threshold defender" if attack.threshold_defender else "")
    )
    return OddsResult("focal-point", description, notes, attack_damage(attack), "wounds")


def _skirmish(args: argparse.Namespace) -> OddsResult:
    from rules.common import profile_value, unit_or_error
    from rules.skirmish import find_weapon, skirmish_odds

    if args.scene:
        if not (args.attacker and args.target):
            raise QuestionError("--scene needs --attacker and --target")
        scene = Scene.load(args.scene)
        attacker, target = unit_or_error(scene, args.attacker), unit_or_error(scene, args.target)
        w = find_weapon(scene, attacker, args.weapon)
        dice, skill = int(w["attacks"]), int(profile_value(scene, attacker, "skill"))
        defense, damage = int(profile_value(scene, target, "defense")), int(w["damage"])
    else:
        missing = [name for name in ("dice", "hit", "defense") if getattr(args, name) is None]
        if missing:
            raise QuestionError(f"give --scene with --attacker/--target, or {' '.join('--' + m for m in missing)}")
        dice, skill, defense, damage = args.dice, args.hit, args.defense, args.damage
    description, dist = skirmish_odds(dice, skill, defense, damage)
    return OddsResult("miniature-skirmish", description, (), dist, "damage")


def _onefinity(args: argparse.Namespace) -> OddsResult:
    from fractions import Fraction

    from rules.onefinity import Onefinity, attack_win_chance

    notes: tuple[str, ...] = ()
    if args.scene:
        if not (args.attacker and args.target):
            raise QuestionError("--scene needs --attacker and --target")
        draw = Onefinity().card_draw(Scene.load(args.scene), args.attacker, args.target, args.weapon, args.reactive)
        attack, defense = draw.attack_cards, draw.defense_cards
        notes = tuple(f"attack: {n}" for n in draw.attack_notes) + tuple(f"defense: {n}" for n in draw.defense_notes)
    else:
        if args.dice is None or args.defense is None:
            raise QuestionError(
                "give --scene with --attacker/--target, or --dice (attack cards) and --defense (defense cards)"
            )
        attack, defense = args.dice, args.defense
    win = attack_win_chance(attack, defense)
    dist = Dist({0: 1 - win, 1: win}) if win not in (0, 1) else Dist({int(win): Fraction(1)})
    description = (
        f"Onefinity shot: {attack} attack cards against {defense} defense cards, best card wins (1 = target downed)"
    )
    return OddsResult("onefinity", description, notes, dist, "downed")


def _grinding(args: argparse.Namespace) -> OddsResult:
    from rules.grinding import Grinding
    from rules.grinding_odds import Situation

    if not (args.scene and args.attacker and args.target):
        raise QuestionError(
            "grinding-annihilation odds need --scene, --attacker and --target (profiles come from the scene)"
        )
    situation = Situation(half_range=args.half_range, cover=args.cover, stationary=args.stationary)
    odds = Grinding().attack(Scene.load(args.scene), args.attacker, args.target, args.weapon, situation)
    description = f"Grinding-Annihilation attack: {args.attacker} on {args.target}" + (
        f" with {args.weapon}" if args.weapon else ""
    )
    notes = (
        *odds.notes,
        f"troops destroyed: mean {float(odds.destroyed.mean()):.3f}, at least one {float(odds.destroyed.at_least(1)):.1%}",
    )
    return OddsResult("grinding-annihilation", description, notes, odds.damage, "wounds")
