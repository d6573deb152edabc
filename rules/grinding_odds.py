"""Exact attack odds for Grinding-Annihilation (../shared/rulebooks/grinding-annihilation.txt,
Making Attacks, Mortal Wounds, Reinforced Health, Invulnerable Saves, weapon abilities).

One attack: Hit roll (RS/MS; unmodified 6 is a Critical Hit and always hits,
unmodified 1 always fails) -> Wound roll (Strength vs Vigour table; unmodified 6
is a Critical Wound, unmodified 1 fails) -> Defense Check (De with AP and
Benefit of Cover, or the invulnerable save, whichever is better) -> Damage,
each point of which Reinforced Health may ignore. Everything is exact
(fractions); nothing is sampled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from rules.dice import Dist

SIXTH = Fraction(1, 6)
Pair = tuple[int, int]  # (normal damage, mortal wounds)


def dice_expression(text: str | int) -> Dist:
    """'3', 'D3', 'D6', '2D6', 'D6+1', 'D3+3' as a distribution."""
    if isinstance(text, int):
        return Dist.constant(text)
    match = re.fullmatch(r"\s*(\d*)\s*[dD]\s*(3|6)\s*(?:\+\s*(\d+))?\s*", str(text))
    if not match:
        try:
            return Dist.constant(int(str(text).strip()))
        except ValueError:
            raise ValueError(f"cannot read {text!r} as a dice expression (use 3, D3, D6, 2D6, D6+1)") from None
    count = int(match.group(1) or 1)
    sides = int(match.group(2))
    plus = int(match.group(3) or 0)
    one = Dist.from_pairs(((face + 1) // 2 if sides == 3 else face, SIXTH) for face in range(1, 7))
    total = Dist.constant(plus)
    for _ in range(count):
        total = total + one
    return total


def wound_target(strength: int, vigour: int) -> int:
    """The Strength vs Vigour table."""
    if strength >= 2 * vigour:
        return 2
    if strength > vigour:
        return 3
    if strength == vigour:
        return 4
    if 2 * strength <= vigour:
        return 6
    return 5


def ability_value(abilities: Iterable[str], name: str) -> str | None:
    """'RAPID FIRE 2' -> '2' for name 'RAPID FIRE'; '' for a flag; None if absent."""
    for ability in abilities:
        text = ability.strip().strip("[]").upper()
        if text == name:
            return ""
        if text.startswith(name + " "):
            return text[len(name) + 1 :].strip()
    return None


@dataclass(frozen=True)
class Weapon:
    name: str
    attacks: str | int  # Swiftness
    skill: int | None  # RS or MS; None for N/A (auto-hits)
    strength: int
    ap: int  # 0, -1, -2 ...
    damage: str | int
    range_in: float | None = None  # None for melee
    abilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    vigour: int
    defence: int
    wounds: int = 1
    models: int = 1
    invulnerable: int | None = None
    reinforced_health: int | None = None
    keywords: tuple[str, ...] = ()
    stealth: bool = False


@dataclass(frozen=True)
class Situation:
    half_range: bool = False  # target within half the weapon's range (Rapid Fire, Inferno)
    cover: bool = False  # the target has the Benefit of Cover
    stationary: bool = False  # the attacker Remained Stationary (Heavy)
    assaulted: bool = False  # the attacker made an Assault move this turn (Bayonet)
    overwatch: bool = False  # Onslaught Overwatch: only unmodified 6s hit
    twin_rerolls: str = "failed"  # Twin: re-roll failed Wound rolls (the only sensible use)


def _hit_outcomes(weapon: Weapon, target: Target, sit: Situation) -> list[tuple[Fraction, int, int]]:
    """Per Hit roll face: (probability, hits that roll to wound, hits that wound automatically)."""
    abilities = weapon.abilities
    if weapon.skill is None:
        return [(Fraction(1), 1, 0)]
    modifier = 0
    if ability_value(abilities, "HEAVY") is not None and sit.stationary:
        modifier += 1
    if target.stealth and weapon.range_in is not None:
        modifier -= 1
    sustained = ability_value(abilities, "SUSTAINED FIRE")
    extra = int(sustained) if sustained else 0
    destructive = ability_value(abilities, "DESTRUCTIVE") is not None
    annihilation = ability_value(abilities, "ANNIHILATION") is not None
    out = []
    for face in range(1, 7):
        critical = face == 6
        # Overwatch: "an unmodified Hit roll of 6 is required to score a hit".
        hit = critical if sit.overwatch else face != 1 and (critical or face + modifier >= weapon.skill)
        if not hit:
            out.append((SIXTH, 0, 0))
            continue
        auto = (critical and destructive) or (annihilation and face >= 5)
        hits_rolling = (0 if auto else 1) + (extra if critical else 0)
        out.append((SIXTH, hits_rolling, 1 if auto else 0))
    return out


def _wound_outcome(weapon: Weapon, target: Target, sit: Situation) -> tuple[Fraction, Fraction]:
    """(P(normal wound), P(critical wound)) for one hit that rolls to wound."""
    need = wound_target(weapon.strength, target.vigour)
    modifier = 0
    if ability_value(weapon.abilities, "EMISSION") is not None and "INFANTRY" in {k.upper() for k in target.keywords}:
        modifier += 1
    if ability_value(weapon.abilities, "BAYONET") is not None and sit.assaulted:
        modifier += 1
    crit_from = 6
    for ability in weapon.abilities:
        m = re.fullmatch(r"\[?\s*ANTI\s*-\s*(.+?)\s*-?\s*(\d)\+\s*\]?", ability.strip().upper())
        if m and m.group(1).strip() in {k.upper() for k in target.keywords}:
            crit_from = min(crit_from, int(m.group(2)))

    def one_roll() -> tuple[Fraction, Fraction]:
        normal = crit = Fraction(0)
        for face in range(1, 7):
            if face >= crit_from:
                crit += SIXTH
            elif face != 1 and face + modifier >= need:
                normal += SIXTH
        return normal, crit

    normal, crit = one_roll()
    if ability_value(weapon.abilities, "TWIN-WEAPON") is not None:
        fail = 1 - normal - crit
        normal, crit = normal + fail * normal, crit + fail * crit
    return normal, crit


def _save_fails(weapon: Weapon, target: Target, sit: Situation) -> Fraction:
    """Chance the Defense Check fails (the defender uses the better of armour and invulnerable)."""
    cover = sit.cover and ability_value(weapon.abilities, "IGNORES COVER") is None and weapon.range_in is not None
    need = target.defence
    bonus = 1 if cover and target.defence > 3 else 0

    def armour_pass() -> Fraction:
        return Fraction(sum(1 for face in range(2, 7) if face + weapon.ap + bonus >= need), 6)

    best = armour_pass()
    if target.invulnerable is not None:
        best = max(best, Fraction(sum(1 for face in range(2, 7) if face >= target.invulnerable), 6))
    return 1 - best


def _after_reinforced(points: Dist, target: Target) -> Dist:
    if target.reinforced_health is None:
        return points
    ignore = Fraction(sum(1 for face in range(1, 7) if face >= target.reinforced_health), 6)
    return points.bind(lambda n: Dist.binomial(n, 1 - ignore))


@dataclass(frozen=True)
class AttackOdds:
    per_attack: dict[Pair, Fraction]  # one attack: (normal damage points, mortal wounds), after Reinforced Health
    damage: Dist  # total wounds inflicted by all attacks, excess damage not removed
    destroyed: Dist  # troops destroyed, with excess normal damage lost
    attacks: Dist  # number of attacks made
    notes: tuple[str, ...] = field(default=())


def attack_odds(weapon: Weapon, target: Target, sit: Situation | None = None) -> AttackOdds:
    sit = sit or Situation()
    notes = []
    attacks = dice_expression(weapon.attacks)
    rapid = ability_value(weapon.abilities, "RAPID FIRE")
    if rapid and sit.half_range:
        attacks = attacks.map(lambda n: n + int(rapid))
        notes.append(f"Rapid Fire {rapid}: +{rapid} attacks within half range")
    damage = dice_expression(weapon.damage)
    inferno = ability_value(weapon.abilities, "INFERNO")
    if inferno and sit.half_range:
        damage = damage.map(lambda d: d + int(inferno))
        notes.append(f"Inferno {inferno}: +{inferno} damage within half range")
    devastating = ability_value(weapon.abilities, "DEVASTATING") is not None
    p_normal, p_crit = _wound_outcome(weapon, target, sit)
    p_fail_save = _save_fails(weapon, target, sit)

    # One hit that rolls to wound: (normal damage, mortal wounds).
    unsaved = _after_reinforced(damage, target)
    mortal = _after_reinforced(damage, target)
    per_wounding_hit: dict[Pair, Fraction] = {}

    def add(table: dict[Pair, Fraction], key: Pair, p: Fraction) -> None:
        if p:
            table[key] = table.get(key, Fraction(0)) + p

    crit_path = p_crit
    normal_path = p_normal + (0 if devastating else p_crit)
    if devastating:
        for m, pm in mortal.probs.items():
            add(per_wounding_hit, (0, m), crit_path * pm)
    for d, pd in unsaved.probs.items():
        add(per_wounding_hit, (d, 0), normal_path * p_fail_save * pd)
    add(per_wounding_hit, (0, 0), (1 - p_normal - p_crit) + normal_path * (1 - p_fail_save))
    # An automatically wounding hit skips the Wound roll (it is not a Critical Wound).
    per_auto_hit: dict[Pair, Fraction] = {}
    for d, pd in unsaved.probs.items():
        add(per_auto_hit, (d, 0), p_fail_save * pd)
    add(per_auto_hit, (0, 0), 1 - p_fail_save)

    per_attack: dict[Pair, Fraction] = {}
    for p_face, rolling, auto in _hit_outcomes(weapon, target, sit):
        combined: dict[Pair, Fraction] = {(0, 0): Fraction(1)}
        for table, count in ((per_wounding_hit, rolling), (per_auto_hit, auto)):
            for _ in range(count):
                combined = _convolve(combined, table)
        for key, p in combined.items():
            add(per_attack, key, p_face * p)

    total = attacks.bind(lambda n: _sum_attacks(per_attack, n).map(lambda k: k))
    destroyed = attacks.bind(lambda n: _destroyed(per_attack, n, target))
    return AttackOdds(per_attack, total, destroyed, attacks, tuple(notes))


def _convolve(a: dict[Pair, Fraction], b: dict[Pair, Fraction]) -> dict[Pair, Fraction]:
    out: dict[Pair, Fraction] = {}
    for (n1, m1), p1 in a.items():
        for (n2, m2), p2 in b.items():
            key = (n1 + n2, m1 + m2)
            out[key] = out.get(key, Fraction(0)) + p1 * p2
    return out


def _sum_attacks(per_attack: dict[Pair, Fraction], n: int) -> Dist:
    total: dict[Pair, Fraction] = {(0, 0): Fraction(1)}
    for _ in range(n):
        total = _convolve(total, per_attack)
    return Dist.from_pairs((normal + mortal, p) for (normal, mortal), p in total.items())


def _destroyed(per_attack: dict[Pair, Fraction], n: int, target: Target) -> Dist:
    """Troops destroyed: normal damage hits one troop at a time (excess lost); mortal
    wounds, resolved after all normal damage, spill over to the next troop."""
    wounds = target.wounds
    # state: (troops destroyed, wounds lost by the current troop, mortal wounds pending)
    states: dict[tuple[int, int, int], Fraction] = {(0, 0, 0): Fraction(1)}
    for _ in range(n):
        nxt: dict[tuple[int, int, int], Fraction] = {}
        for (dead, lost, pending), p in states.items():
            for (normal, mortal), q in per_attack.items():
                d, l_ = dead, lost
                if normal and d < target.models:
                    l_ += normal
                    if l_ >= wounds:
                        d, l_ = d + 1, 0
                key = (d, l_, pending + mortal)
                nxt[key] = nxt.get(key, Fraction(0)) + p * q
        states = nxt
    result: dict[int, Fraction] = {}
    for (dead, lost, pending), p in states.items():
        remaining = (target.models - dead) * wounds - lost
        spill = min(pending, max(remaining, 0))
        total_lost = lost + spill
        dead_final = min(target.models, dead + total_lost // wounds)
        result[dead_final] = result.get(dead_final, Fraction(0)) + p
    return Dist.from_pairs(result.items())
