"""Affinity: Flux rules: payments, burns, life tokens, the Source deck, blocking and deck lists.

Each test quotes the rule text it checks (../shared/rulebooks/affinity-flux.md).
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.flux import (
    Fighter,
    FluxError,
    SourceCard,
    SourceDecks,
    Warlord,
    blocking_problems,
    burn_odds,
    burn_source,
    deck_problems,
    fight,
    may_burn,
    pay,
    pool_counts,
    source_value,
)

# ---- Spending Source ----------------------------------------------------------------------------
# "Your cards: 1 card = 1 Source. Opponent's cards: 2 cards = 1 Source.
#  To play a card costing 3 Source: Spend 3 of your Source Cards, OR Spend 6 of your opponent's
#  Source Cards, OR Any combination (e.g., 2 yours + 2 theirs = 3 Source)"


@pytest.mark.parametrize(
    ("own", "opponent", "cost", "can", "own_spent", "opponent_spent"),
    [
        (3, 0, 3, True, 3, 0),  # "Spend 3 of your Source Cards"
        (0, 6, 3, True, 0, 6),  # "Spend 6 of your opponent's Source Cards"
        (2, 2, 3, True, 2, 2),  # "2 yours + 2 theirs = 3 Source"
        (0, 5, 3, False, 0, 0),  # 5 of theirs make only 2
        (1, 1, 2, False, 0, 0),  # an odd opponent card makes nothing
        (5, 0, 0, True, 0, 0),
        (4, 4, 3, True, 1, 4),  # the opponent's cards first; own cards kept
        (3, 2, 1, True, 0, 2),
    ],
)
def test_pay_golden(own: int, opponent: int, cost: int, can: bool, own_spent: int, opponent_spent: int) -> None:
    payment = pay(own, opponent, cost)
    assert payment.can_pay is can
    assert (payment.own_cards, payment.opponent_cards) == (own_spent, opponent_spent)
    assert payment.rule.endswith("Spending Source") and payment.reasons


@given(st.integers(0, 10), st.integers(0, 12), st.integers(0, 14))
def test_pay_agrees_with_every_legal_mix(own: int, opponent: int, cost: int) -> None:
    legal = [(o, 2 * p) for o, p in itertools.product(range(own + 1), range(opponent // 2 + 1)) if o + p == cost]
    payment = pay(own, opponent, cost)
    assert payment.can_pay is bool(legal)
    if legal:
        assert (payment.own_cards, payment.opponent_cards) in legal
        assert payment.own_cards == min(o for o, _ in legal)  # keeps as many own cards as any legal mix
        assert payment.left_over == source_value(own, opponent) - cost


def test_burned_in_cards_count_as_yours() -> None:
    # The Burn, How Burn Works 4: "They're yours regardless of whose design they are."
    pool = [SourceCard("red"), SourceCard("blue"), SourceCard("blue", burned_in=True), SourceCard("blue")]
    assert pool_counts(pool, "red") == (2, 2)
    assert pool_counts(pool, "blue") == (3, 1)


def test_bad_costs_are_refused() -> None:
    with pytest.raises(FluxError, match="cost"):
        pay(3, 3, -1)
    with pytest.raises(FluxError, match="negative"):
        source_value(-1, 0)


# ---- The Burn ---------------------------------------------------------------------------------
# "Roll 1d6 (treat 1 as 2, cap at 5)"; "+1 to roll if the unit cost 4+ Source; +2 to roll if the
#  unit cost 6+ Source"; "Modifiers are applied before the cap. A 4+ cost unit rolling a 4 = 5 Source."


@pytest.mark.parametrize(
    ("roll", "cost", "source"),
    [
        (1, 2, 2),
        (2, 2, 2),
        (3, 2, 3),
        (4, 2, 4),
        (5, 2, 5),
        (6, 2, 5),  # the Burn Results table: 5+ -> 5 Source
        (4, 4, 5),  # "A 4+ cost unit rolling a 4 = 5 Source (capped)"
        (1, 4, 3),  # a 1 counts as 2, then +1
        (1, 6, 4),
        (3, 6, 5),
        (2, 5, 3),
    ],
)
def test_burn_golden(roll: int, cost: int, source: int) -> None:
    assert burn_source(roll, cost) == source


def test_burn_odds_are_exact() -> None:
    cheap = burn_odds(1)
    assert dict(cheap.probs) == {2: Fraction(2, 6), 3: Fraction(1, 6), 4: Fraction(1, 6), 5: Fraction(2, 6)}
    assert cheap.mean() == Fraction(21, 6)
    big = burn_odds(6)
    assert dict(big.probs) == {4: Fraction(2, 6), 5: Fraction(4, 6)}  # 1 and 2 both count as 2, +2
    with pytest.raises(FluxError, match="roll"):
        burn_source(7, 1)


def test_burn_once_per_turn_unless_granted() -> None:
    # "You may Burn once per turn unless a card or ability grants additional Burns."
    assert may_burn(0).allowed
    assert not may_burn(1).allowed
    assert may_burn(1, extra_burns_granted=1).allowed
    assert not may_burn(2, extra_burns_granted=1).allowed
    assert not may_burn(0, controls_unit=False).allowed  # "Choose a unit you control"


# ---- Life Tokens --------------------------------------------------------------------------------
# "When you recover one: Take a token from the supply; Heal 1 Warlord Health.
#  Life Tokens cap at 5. You cannot exceed your starting amount."


def test_life_tokens_cap_and_recovery_heals() -> None:
    warlord = Warlord(health=20, max_health=25, life_tokens=3)
    spent = warlord.spend_tokens(2)
    assert spent.life_tokens == 1
    recovered = spent.recover_token()
    assert (recovered.life_tokens, recovered.health) == (2, 21)
    full = Warlord(health=25, max_health=25, life_tokens=5).recover_token()
    assert (full.life_tokens, full.health) == (5, 25)
    with pytest.raises(FluxError, match="life tokens"):
        warlord.spend_tokens(4)


# ---- The Source deck ------------------------------------------------------------------------------


def test_turn_end_discards_the_whole_pool_and_the_deck_reshuffles() -> None:
    # "At the end of your turn, discard all Source Cards (spent and unspent) from your pool."
    # "When the Source Deck runs out, immediately shuffle the Source Discard to form a new Source Deck."
    decks = SourceDecks.setup(("red", "blue"), seed=7)
    assert len(decks.deck) == 30 and Counter(c.design for c in decks.deck) == {"red": 15, "blue": 15}
    for _ in range(6):  # six turns of 5 cards: 30 cards, the deck is empty
        pool = decks.draw(5)
        assert len(pool) == 5
        assert decks.end_turn(pool) == []
    assert decks.deck == [] and len(decks.discard) == 30 and decks.reshuffles == 0
    pool = decks.draw(5)
    assert len(pool) == 5 and decks.reshuffles == 1 and len(decks.deck) == 25 and decks.discard == []
    assert sum(1 for c in decks.deck + pool if c.design == "red") == 15  # nothing lost or made


def test_source_deck_is_seeded() -> None:
    a = SourceDecks.setup(("red", "blue"), seed=3).draw(10)
    b = SourceDecks.setup(("red", "blue"), seed=3).draw(10)
    assert a == b


# ---- Combat -----------------------------------------------------------------------------------
# "Defender assigns blockers (one blocker per attacker max)"; "Flying: Only blocked by Flying or Reach";
# "Reach: Can block Flying units"; "Shield X: Prevent first X damage each round";
# "Deathtouch: Any damage destroys target unit"; "Damage resolves simultaneously".


def test_blocking_legality() -> None:
    attackers = {"drake": Fighter("drake", 3, 3, ("Flying",)), "brute": Fighter("brute", 4, 4)}
    blockers = {
        "archer": Fighter("archer", 1, 2, ("Reach",)),
        "wall": Fighter("wall", 0, 6),
        "hawk": Fighter("hawk", 2, 2, ("Flying",)),
    }
    assert blocking_problems(attackers, blockers, {"archer": "drake", "wall": "brute"}) == []
    assert blocking_problems(attackers, blockers, {"hawk": "drake"}) == []
    (problem,) = blocking_problems(attackers, blockers, {"wall": "drake"})
    assert "Flying" in problem
    (problem,) = blocking_problems(attackers, blockers, {"wall": "brute", "archer": "brute"})
    assert "one blocker per attacker" in problem
    assert blocking_problems(attackers, blockers, {"ghost": "brute"})


def test_shield_and_deathtouch() -> None:
    knight = Fighter("knight", 2, 4, ("Shield 2",))
    raider = Fighter("raider", 3, 3)
    result = fight(raider, knight)
    assert result["blocker"] == {"id": "knight", "damage": 1, "destroyed": False}  # 3 - Shield 2
    assert result["attacker"] == {"id": "raider", "damage": 2, "destroyed": False}
    assassin = Fighter("assassin", 1, 1, ("Deathtouch",))
    giant = Fighter("giant", 5, 9)
    result = fight(assassin, giant)
    assert result["blocker"]["destroyed"] and result["attacker"]["destroyed"]  # simultaneous
    shielded_giant = Fighter("giant", 5, 9, ("Shield 1",))
    assert not fight(assassin, shielded_giant)["blocker"]["destroyed"]  # no damage dealt: Deathtouch needs some


# ---- Deck Building ---------------------------------------------------------------------------------
# "Warlord 1 (determines Realm); Total Points 1000; Minimum Cards 40; Max Copies 4 per card;
#  Realm Restriction: All cards must match Warlord's Realm"


def legal_deck() -> dict:  # type: ignore[type-arg]
    cards = [
        {"name": f"Gloam card {k}", "type": "unit", "realm": "The Gloam", "points": 25, "count": 4} for k in range(10)
    ]
    return {"warlord": {"name": "Veyra", "realm": "The Gloam"}, "cards": cards}


def test_a_legal_deck_passes() -> None:
    assert deck_problems(legal_deck()) == []  # 40 cards, 1000 points


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d.pop("warlord"), "exactly 1 Warlord"),
        (lambda d: d.update(warlord=[d["warlord"], d["warlord"]]), "2 Warlords"),
        (lambda d: d["cards"][0].update(count=5), "5 copies"),
        (lambda d: d["cards"][0].update(points=26), "1004 points"),
        (lambda d: d["cards"].pop(), "36 cards"),
        (lambda d: d["cards"][3].update(realm="The Crucible"), "Warlord's Realm"),
        (lambda d: d["cards"][1].update(type="warlord"), "is a Warlord"),
        (lambda d: d["cards"][2].update(count="four"), "cards[2].count"),
        (lambda d: d["warlord"].update(realm="Narnia"), "not a Realm"),
    ],
)
def test_deck_problems_name_the_rule_broken(change, says: str) -> None:  # type: ignore[no-untyped-def]
    deck = legal_deck()
    change(deck)
    problems = deck_problems(deck, "my.deck")
    assert any(says in p for p in problems), problems
    assert all(p.startswith("my.deck: ") for p in problems)


def test_copies_are_counted_across_entries() -> None:
    deck = legal_deck()
    deck["cards"].append({"name": "Gloam card 0", "realm": "The Gloam", "points": 0, "count": 1})
    assert any("5 copies of 'Gloam card 0'" in p for p in deck_problems(deck))
