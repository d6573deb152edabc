"""Exact attack odds checked against icepool, an independent dice engine."""

from __future__ import annotations

import random
from fractions import Fraction

import icepool
import pytest

from rules.dice import Dist, success_chance
from rules.focal_point import FocalAttack, attack_damage


def icepool_focal_point(attack: FocalAttack) -> icepool.Die:
    """affinity-focal-point.md, Combat: hits on Hit+, natural 6 critical (unblockable unless
    Threshold), Toll's first hit +1 wound, one Defense die per blockable wound."""
    hit = min(max(attack.hit, 2), 7)

    def classify(face: int) -> icepool.Vector:
        return icepool.vectorize(int(face == 6), int(hit <= face < 6))

    hits = attack.dice @ icepool.d6.map(classify)
    defense = min(max(attack.defense, 2), 7)
    through = icepool.d6.map(lambda face: int(face < defense))

    def wounds(counts: icepool.Vector) -> icepool.Die:
        crits, normals = counts
        unblockable, blockable = crits, normals
        if attack.toll and crits + normals:
            if crits and attack.toll_bonus_on_critical:
                unblockable += 1
            else:
                blockable += 1
        if attack.threshold_defender:
            unblockable, blockable = 0, unblockable + blockable
        return unblockable + blockable @ through if blockable else icepool.Die([unblockable])

    return hits.map(wounds)


def as_fractions(die: icepool.Die) -> dict[int, Fraction]:
    total = die.denominator()
    return {int(v): Fraction(q, total) for v, q in die.items()}


def test_single_die_by_hand() -> None:
    # One die hitting on 4+, defender blocks on 4+: crit 1/6 always lands, normal 2/6 lands half the time.
    dist = attack_damage(FocalAttack(dice=1, hit=4, defense=4))
    assert dist.probs == {0: Fraction(4, 6), 1: Fraction(2, 6)}


def test_threshold_blocks_criticals() -> None:
    dist = attack_damage(FocalAttack(dice=1, hit=6, defense=2, threshold_defender=True))
    assert dist.probs[1] == Fraction(1, 6) * Fraction(1, 6)  # the crit must fail a 2+ block


def test_toll_first_hit_deals_two() -> None:
    dist = attack_damage(FocalAttack(dice=1, hit=2, defense=7, toll=True))  # nothing can be blocked
    assert dist.probs == {0: Fraction(1, 6), 2: Fraction(5, 6)}


def test_fifty_seeded_random_profiles_match_icepool() -> None:
    rng = random.Random(1234)
    for _ in range(60):
        attack = FocalAttack(
            dice=rng.randint(1, 9),
            hit=rng.randint(1, 7),
            defense=rng.randint(1, 7),
            toll=rng.random() < 0.4,
            threshold_defender=rng.random() < 0.4,
            toll_bonus_on_critical=rng.random() < 0.7,
        )
        ours = attack_damage(attack).probs
        theirs = as_fractions(icepool_focal_point(attack))
        assert set(ours) == {k for k, v in theirs.items() if v}, attack
        for value, p in ours.items():
            assert float(abs(p - theirs[value])) < 1e-9, attack
        assert sum(ours.values()) == 1


def test_dist_helpers() -> None:
    assert success_chance(4) == Fraction(1, 2)
    assert success_chance(1) == Fraction(5, 6)  # a 1 always fails
    assert success_chance(8) == 0
    two = Dist.binomial(2, Fraction(1, 2))
    assert (two + two).probs[4] == Fraction(1, 16)
    assert two.mean() == 1
    assert two.at_least(1) == Fraction(3, 4)
    with pytest.raises(KeyError):
        _ = two.probs[3]


def icepool_skirmish(attacks: int, skill: int, defense: int, damage: int) -> icepool.Die:
    per_die = icepool.d6.map(lambda face: int(face >= skill)) * icepool.d6.map(lambda face: int(face < defense))
    return (attacks @ per_die) * damage


def test_skirmish_odds_match_icepool() -> None:
    # miniature-skirmish.md, Combat Sequence: hit on skill+, each hit negated on defense+, damage per unblocked hit.
    from rules.skirmish import attack_damage as skirmish_damage

    rng = random.Random(99)
    for _ in range(50):
        attacks, skill, defense, damage = rng.randint(1, 8), rng.randint(2, 6), rng.randint(2, 7), rng.randint(1, 3)
        theirs = as_fractions(icepool_skirmish(attacks, skill, defense, damage))
        ours = skirmish_damage(attacks, skill, defense, damage).probs
        assert {k for k, v in theirs.items() if v} == set(ours)
        assert all(float(abs(ours[k] - theirs[k])) < 1e-9 for k in ours)


def icepool_best_card_wins(attack_cards: int, defense_cards: int, deck_size: int = 52) -> Fraction:
    """P(max of the attack hand > max of the defense hand), both dealt from one deck.

    icepool gives the distribution of the attack hand's best card m (cards 0..deck_size-1 in
    rank-then-suit order); the defense hand then comes from the deck_size - a cards left, of
    which m - (a - 1) rank below m."""
    from math import comb

    best = icepool.Deck(range(deck_size)).deal(attack_cards).highest(1).sum()
    total = Fraction(0)
    for m, quantity in best.items():
        below = m - (attack_cards - 1)
        p_all_below = Fraction(comb(below, defense_cards), comb(deck_size - attack_cards, defense_cards))
        total += Fraction(quantity, best.denominator()) * p_all_below
    return total


def test_onefinity_card_odds_match_icepool() -> None:
    # onefinity-combat.md, Shooting: "Both keep best card, highest wins"; ties by suit order.
    from rules.onefinity import attack_win_chance, dodge_chance, exchange_odds

    rng = random.Random(7)
    for _ in range(50):
        a, d = rng.randint(1, 6), rng.randint(1, 6)
        assert float(abs(attack_win_chance(a, d) - icepool_best_card_wins(a, d))) < 1e-9
    assert dodge_chance() == Fraction(28, 52)
    both = exchange_odds(3, 2, 1, 1)
    assert sum(both.values()) == 1
    assert both["target_downed"] + both["both"] == Fraction(3, 5)
