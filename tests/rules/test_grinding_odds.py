"""Grinding-Annihilation attack odds against an independent icepool model
(grinding-annihilation.txt > Making Attacks; Mortal Wounds; Reinforced Health;
Invulnerable Saves; Benefit of Cover; weapon abilities)."""

from __future__ import annotations

import random
from fractions import Fraction

import icepool
import pytest

from rules.grinding_odds import Situation, Target, Weapon, attack_odds, dice_expression, wound_target

d6 = icepool.d6


def ip_dice(text: str | int) -> icepool.Die:
    table = {"D3": (d6 + 1) // 2, "D6": d6, "2D6": 2 @ d6, "D6+1": d6 + 1}
    return table[text] if isinstance(text, str) else icepool.Die([text])


def icepool_damage(weapon: Weapon, target: Target, sit: Situation) -> icepool.Die:
    """Total wounds inflicted, excess not removed, written straight from the rule text."""
    abilities = {a.split(" ")[0] if not a.startswith("ANTI") else "ANTI": a for a in weapon.abilities}
    half = sit.half_range
    swift = ip_dice(weapon.attacks) + (int(abilities["RAPID"].split()[-1]) if "RAPID" in abilities and half else 0)
    dmg = ip_dice(weapon.damage) + (int(abilities["INFERNO"].split()[-1]) if "INFERNO" in abilities and half else 0)
    if target.reinforced_health:
        kept = d6.map(lambda f: int(f < target.reinforced_health))
        dmg = dmg.map(lambda n: n @ kept if n else icepool.Die([0]))
    # Defense Check.
    bonus = 1 if sit.cover and target.defence > 3 else 0
    armour = Fraction(len([f for f in range(2, 7) if f + weapon.ap + bonus >= target.defence]), 6)
    invuln = Fraction(len([f for f in range(2, 7) if target.invulnerable and f >= target.invulnerable]), 6)
    fail = 1 - max(armour, invuln)
    saved = (
        icepool.Die({0: fail.denominator - fail.numerator, 1: fail.numerator})
        if 0 < fail < 1
        else icepool.Die([int(fail)])
    )
    through = saved.map(lambda unsaved: dmg if unsaved else icepool.Die([0]))
    # Wound roll.
    need = wound_target(weapon.strength, target.vigour)
    crit_from = 6
    if "ANTI" in abilities:
        keyword, x = abilities["ANTI"].replace("ANTI-", "").rsplit(" ", 1)
        if keyword in target.keywords:
            crit_from = int(x.rstrip("+"))

    def wound_kind(face: int) -> int:  # 2 critical, 1 wound, 0 fail
        if face >= crit_from:
            return 2
        return int(face != 1 and face >= need)

    wound_roll = d6.map(wound_kind)
    if "TWIN-WEAPON" in abilities:
        wound_roll = wound_roll.map(lambda k: k if k else d6.map(wound_kind))
    devastating = "DEVASTATING" in abilities
    per_hit = wound_roll.map(lambda k: (dmg if (devastating and k == 2) else through) if k else icepool.Die([0]))
    # Hit roll.
    sustained = int(abilities["SUSTAINED"].split()[-1]) if "SUSTAINED" in abilities else 0

    def attack(face: int) -> icepool.Die:
        hit = face == 6 or (face != 1 and face >= weapon.skill)
        if not hit:
            return icepool.Die([0])
        auto = ("DESTRUCTIVE" in abilities and face == 6) or ("ANNIHILATION" in abilities and face >= 5)
        rolling = (0 if auto else 1) + (sustained if face == 6 else 0)
        total = rolling @ per_hit if rolling else icepool.Die([0])
        return total + through if auto else total

    per_attack = d6.map(attack)
    return swift @ per_attack


def fractions(die: icepool.Die) -> dict[int, Fraction]:
    return {int(v): Fraction(q, die.denominator()) for v, q in die.items() if q}


ABILITIES = [
    "RAPID FIRE 1",
    "RAPID FIRE 2",
    "INFERNO 2",
    "TWIN-WEAPON",
    "DEVASTATING",
    "ANNIHILATION",
    "DESTRUCTIVE",
    "SUSTAINED FIRE 1",
    "SUSTAINED FIRE 2",
    "ANTI-VEHICLE 4+",
    "IGNORES COVER",
]


def test_wound_table() -> None:
    # "Strength is 2x (or more) than vigour 2+ ... Half (or less) 6+"
    assert [wound_target(s, 4) for s in (8, 5, 4, 3, 2)] == [2, 3, 4, 5, 6]


def test_dice_expressions() -> None:
    assert dice_expression("D3").probs == {1: Fraction(1, 3), 2: Fraction(1, 3), 3: Fraction(1, 3)}
    assert dice_expression("2D6").mean() == 7
    assert dice_expression(2).probs == {2: 1}
    with pytest.raises(ValueError, match="cannot read 'lots'"):
        dice_expression("lots")


def test_sixty_seeded_random_profiles_match_icepool() -> None:
    rng = random.Random(2026)
    for _ in range(60):
        abilities = tuple(rng.sample(ABILITIES, rng.randint(0, 2)))
        if sum(a.startswith("RAPID") for a in abilities) > 1:
            abilities = tuple(a for a in abilities if not a.startswith("RAPID"))
        if sum(a.startswith("SUSTAINED") for a in abilities) > 1:
            abilities = tuple(a for a in abilities if not a.startswith("SUSTAINED"))
        weapon = Weapon(
            "w",
            rng.choice([1, 2, 3, "D3"]),
            rng.randint(2, 5),
            rng.randint(2, 10),
            -rng.randint(0, 3),
            rng.choice([1, 2, "D3", "D6"]),
            24.0,
            abilities,
        )
        target = Target(
            vigour=rng.randint(2, 10),
            defence=rng.randint(2, 6),
            invulnerable=rng.choice([None, 4, 5]),
            reinforced_health=rng.choice([None, None, 5, 6]),
            keywords=tuple(rng.sample(["VEHICLE", "INFANTRY"], 1)),
        )
        sit = Situation(half_range=rng.random() < 0.5, cover=rng.random() < 0.4)
        ours = attack_odds(weapon, target, sit).damage.probs
        theirs = fractions(icepool_damage(weapon, target, sit))
        assert set(ours) == set(theirs), (weapon, target, sit)
        for value, p in ours.items():
            assert float(abs(p - theirs[value])) < 1e-9, (weapon, target, sit, value)


def test_kills_keep_excess_damage_within_one_troop() -> None:
    # "If a troop loses several wounds from an attack and is destroyed, any excess damage has no effect."
    lascannon = Weapon("las", 1, None, 12, -3, 6, 48.0)  # auto-hit, wounds on 2+, 6 damage
    squad = Target(vigour=3, defence=6, wounds=1, models=5)
    odds = attack_odds(lascannon, squad)
    assert odds.destroyed.probs == {0: Fraction(1, 6), 1: Fraction(5, 6)}
    assert odds.damage.probs[6] == Fraction(5, 6)
