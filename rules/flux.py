"""Affinity: Flux (../shared/rulebooks/affinity-flux.md): Source, Burn, Life Tokens, blocking, deck lists.

Flux is a card game played on the same table. What the camera can count for
the players is the Source: which cards lie in each pool and whose design each
is. This module is the arithmetic the rulebook asks for, exact and with the
rule it applies; readings of ambiguous text are in docs/rules/flux.md.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rules.dice import Dist

GAME = "Affinity: Flux"
LIFE_TOKEN_CAP = 5
BURN_CAP = 5
BURN_FLOOR = 2  # "treat 1 as 2"
OWN_PER_SOURCE = 1
OPPONENT_PER_SOURCE = 2


class FluxError(ValueError):
    """A Flux question that cannot be answered as asked (names the field and the value)."""


# ---- Source ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceCard:
    design: str  # the player whose design (back, sleeve) the card shows
    burned_in: bool = False  # drawn by a Burn: "They're yours regardless of whose design they are."


@dataclass(frozen=True)
class Payment:
    cost: int
    own_cards: int  # the payer's cards spent (1 Source each)
    opponent_cards: int  # the opponent's cards spent (2 for 1 Source)
    can_pay: bool
    available: int  # Source the pool can make
    left_over: int  # Source the pool can still make after paying
    reasons: tuple[str, ...]
    rule: str = f"{GAME} > Source Cards > Spending Source"

    def to_json(self) -> dict[str, Any]:
        return {
            "cost": self.cost,
            "can_pay": self.can_pay,
            "available": self.available,
            "own_cards": self.own_cards,
            "opponent_cards": self.opponent_cards,
            "left_over": self.left_over,
            "reasons": list(self.reasons),
            "rule": self.rule,
        }


def pool_counts(pool: list[SourceCard], player: str) -> tuple[int, int]:
    """(cards worth 1 Source to ``player``, cards worth 1/2)."""
    own = sum(1 for c in pool if c.design == player or c.burned_in)
    return own, len(pool) - own


def source_value(own: int, opponent: int) -> int:
    """Your cards 1 each, the opponent's 1 per 2 (an odd one left over makes nothing)."""
    if own < 0 or opponent < 0:
        raise FluxError(f"card counts cannot be negative (own={own}, opponent={opponent})")
    return own // OWN_PER_SOURCE + opponent // OPPONENT_PER_SOURCE


def pay(own: int, opponent: int, cost: int) -> Payment:
    """Can a pool of ``own`` and ``opponent`` cards pay ``cost``, and the cheapest way to do it.

    Cheapest: the opponent's cards first, two for each Source, since they are
    worth half and all unspent Source is discarded at the end of the turn
    anyway; the player's own cards, which pay 1 for 1, are kept for what comes
    next. The Source left over is the same whichever mix is chosen; what the
    opponent-first order keeps is flexibility (own cards pay odd amounts).
    """
    if cost < 0:
        raise FluxError(f"cost: {cost} is not a cost (costs are 0 or more Source)")
    available = source_value(own, opponent)
    if available < cost:
        return Payment(
            cost,
            0,
            0,
            False,
            available,
            available,
            (
                f"The pool makes {available} Source ({own} own card(s) x1 + {opponent} opponent card(s) / 2); "
                f"{cost} is needed, {cost - available} short.",
            ),
        )
    pairs = min(opponent // OPPONENT_PER_SOURCE, cost)
    own_spent = cost - pairs
    reasons = [f"Pay {cost}: {2 * pairs} opponent card(s) for {pairs} Source, {own_spent} own card(s) for {own_spent}."]
    return Payment(cost, own_spent, 2 * pairs, True, available, available - cost, tuple(reasons))


# ---- the Source deck --------------------------------------------------------------------------


@dataclass
class SourceDecks:
    """The shared Source Deck and Source Discard; seeded, so that a game can be replayed."""

    deck: list[SourceCard]
    discard: list[SourceCard] = field(default_factory=list)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    reshuffles: int = 0

    @classmethod
    def setup(cls, players: tuple[str, str], seed: int = 0, per_player: int = 15) -> SourceDecks:
        """Quick Reference > Setup 3-4: each player adds 15 Source Cards; shuffle."""
        rng = random.Random(seed)
        deck = [SourceCard(p) for p in players for _ in range(per_player)]
        rng.shuffle(deck)
        return cls(deck, [], rng)

    def draw(self, n: int) -> list[SourceCard]:
        """Draw n; 'When the Source Deck runs out, immediately shuffle the Source Discard to form a new Source Deck.'"""
        drawn: list[SourceCard] = []
        for _ in range(n):
            if not self.deck:
                if not self.discard:
                    break  # every Source card is in someone's pool: nothing more to draw
                self.deck, self.discard = self.discard, []
                self.rng.shuffle(self.deck)
                self.reshuffles += 1
            drawn.append(self.deck.pop())
        return drawn

    def end_turn(self, pool: list[SourceCard]) -> list[SourceCard]:
        """Turn End: discard all Source cards, spent and unspent; the pool is empty after."""
        self.discard.extend(SourceCard(c.design) for c in pool)
        return []


# ---- Burn -------------------------------------------------------------------------------------


def burn_modifier(unit_cost: int) -> int:
    """+1 if the unit cost 4+ Source, +2 if 6+ (not both: the larger applies; docs/rules/flux.md)."""
    if unit_cost < 0:
        raise FluxError(f"unit cost: {unit_cost} is not a cost")
    return 2 if unit_cost >= 6 else 1 if unit_cost >= 4 else 0


def burn_source(roll: int, unit_cost: int) -> int:
    """Source drawn by a Burn: a 1 counts as 2, then the modifier, then the cap of 5."""
    if not 1 <= roll <= 6:
        raise FluxError(f"roll: {roll} is not a d6 roll")
    return min(max(roll, BURN_FLOOR) + burn_modifier(unit_cost), BURN_CAP)


def burn_odds(unit_cost: int) -> Dist:
    """Exact distribution of the Source a Burn brings."""
    return Dist.from_pairs((burn_source(r, unit_cost), Fraction(1, 6)) for r in range(1, 7))


@dataclass(frozen=True)
class BurnCheck:
    allowed: bool
    reasons: tuple[str, ...]
    rule: str = f"{GAME} > The Burn (Core Mechanic)"


def may_burn(burns_this_turn: int, extra_burns_granted: int = 0, controls_unit: bool = True) -> BurnCheck:
    """'You may Burn once per turn unless a card or ability grants additional Burns.'"""
    if not controls_unit:
        return BurnCheck(False, ("Only a unit you control can be Burned (How Burn Works, 1).",))
    allowed = 1 + max(extra_burns_granted, 0)
    if burns_this_turn >= allowed:
        return BurnCheck(False, (f"Already Burned {burns_this_turn} time(s) this turn; {allowed} allowed.",))
    return BurnCheck(True, (f"Burn {burns_this_turn + 1} of {allowed} this turn.",))


# ---- Life Tokens ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Warlord:
    health: int
    max_health: int
    life_tokens: int = LIFE_TOKEN_CAP

    def spend_tokens(self, n: int) -> Warlord:
        """Life Tokens pay for Warlord abilities only, and never below zero."""
        if n < 0 or n > self.life_tokens:
            raise FluxError(f"life tokens: cannot spend {n} with {self.life_tokens} on the Warlord")
        return Warlord(self.health, self.max_health, self.life_tokens - n)

    def recover_token(self) -> Warlord:
        """Recovering Life Tokens: take a token and heal 1 Health; tokens cap at 5.

        At the cap no token is taken; the heal still happens (docs/rules/flux.md),
        up to the Warlord's starting Health.
        """
        tokens = min(self.life_tokens + 1, LIFE_TOKEN_CAP)
        return Warlord(min(self.health + 1, self.max_health), self.max_health, tokens)


# ---- Combat -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fighter:
    id: str
    power: int
    health: int
    keywords: tuple[str, ...] = ()
    damage: int = 0  # damage already on it this game (it persists)
    shield_used: int = 0  # damage already prevented by its Shield this round

    def has(self, keyword: str) -> bool:
        return any(k.split()[0].lower() == keyword.lower() for k in self.keywords)

    @property
    def shield(self) -> int:
        for k in self.keywords:
            parts = k.split()
            if parts[0].lower() == "shield" and len(parts) == 2 and parts[1].isdigit():
                return int(parts[1])
        return 0


def blocking_problems(attackers: dict[str, Fighter], blockers: dict[str, Fighter], blocks: dict[str, str]) -> list[str]:
    """Why an assignment of blockers (blocker id -> attacker id) is illegal; empty when legal.

    Combat 2: one blocker per attacker at most. Keywords: Flying is only
    blocked by Flying or Reach. A unit blocks one attacker (docs/rules/flux.md).
    """
    problems = []
    per_attacker = Counter(blocks.values())
    for attacker_id, count in per_attacker.items():
        if attacker_id not in attackers:
            problems.append(f"{attacker_id!r} is not attacking")
        elif count > 1:
            problems.append(f"{attacker_id} is blocked by {count} units; one blocker per attacker at most (Combat 2)")
    for blocker_id, attacker_id in blocks.items():
        if blocker_id not in blockers:
            problems.append(f"{blocker_id!r} is not one of the defender's units")
            continue
        attacker = attackers.get(attacker_id)
        blocker = blockers[blocker_id]
        if attacker is not None and attacker.has("Flying") and not (blocker.has("Flying") or blocker.has("Reach")):
            problems.append(f"{blocker_id} cannot block {attacker_id}: Flying is only blocked by Flying or Reach")
    return problems


def deal_damage(target: Fighter, amount: int, source: Fighter) -> tuple[Fighter, bool]:
    """Damage after Shield X (the first X each round prevented); Deathtouch destroys on any damage dealt."""
    prevent = min(max(target.shield - target.shield_used, 0), amount)
    dealt = amount - prevent
    hit = Fighter(
        target.id, target.power, target.health, target.keywords, target.damage + dealt, target.shield_used + prevent
    )
    destroyed = hit.damage >= hit.health or (dealt > 0 and source.has("Deathtouch"))
    return hit, destroyed


def fight(attacker: Fighter, blocker: Fighter) -> dict[str, Any]:
    """Combat 3: damage resolves simultaneously."""
    hit_blocker, blocker_destroyed = deal_damage(blocker, attacker.power, attacker)
    hit_attacker, attacker_destroyed = deal_damage(attacker, blocker.power, blocker)
    return {
        "attacker": {"id": attacker.id, "damage": hit_attacker.damage, "destroyed": attacker_destroyed},
        "blocker": {"id": blocker.id, "damage": hit_blocker.damage, "destroyed": blocker_destroyed},
        "rule": f"{GAME} > Combat; Keywords (Shield X, Deathtouch)",
    }


# ---- deck lists ---------------------------------------------------------------------------------

REALMS = ("the-weave", "the-gloam", "the-verge", "empyreal-accord", "the-engine", "the-crucible")
MAX_POINTS = 1000
MIN_CARDS = 40
MAX_COPIES = 4


def _realm(value: Any) -> str:
    return str(value).strip().lower().replace(" ", "-")


def deck_problems(deck: Any, source: str = "deck") -> list[str]:
    """Every way a deck list breaks Deck Building, each naming the field and the value."""
    if not isinstance(deck, dict):
        return [f"{source}: a deck list is an object with 'warlord' and 'cards', got {type(deck).__name__}"]
    problems: list[str] = []
    warlord = deck.get("warlord")
    if isinstance(warlord, list):
        problems.append(f"{source}: warlord: {len(warlord)} Warlords given; a deck has exactly 1")
        warlord = None
    elif not isinstance(warlord, dict) or not warlord.get("name"):
        problems.append(f"{source}: warlord: missing; a deck has exactly 1 Warlord (it sets the Realm)")
        warlord = None
    realm = None
    if warlord is not None:
        realm = _realm(warlord.get("realm", ""))
        if realm not in REALMS:
            problems.append(f"{source}: warlord.realm: {warlord.get('realm')!r} is not a Realm ({', '.join(REALMS)})")
            realm = None
    cards = deck.get("cards")
    if not isinstance(cards, list):
        return [*problems, f"{source}: cards: a list of cards is needed"]
    copies: Counter[str] = Counter()
    total_cards = 0
    total_points: float = 0
    for k, card in enumerate(cards):
        where = f"{source}: cards[{k}]"
        if not isinstance(card, dict) or not isinstance(card.get("name"), str):
            problems.append(f"{where}: each card needs a name")
            continue
        count = card.get("count", 1)
        points = card.get("points")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            problems.append(f"{where}.count: {count!r} is not a number of copies")
            continue
        if not isinstance(points, int | float) or isinstance(points, bool) or points < 0:
            problems.append(f"{where}.points: {points!r} is not a points value")
            continue
        if str(card.get("type", "")).lower() == "warlord":
            problems.append(f"{where}: {card['name']} is a Warlord; a deck has exactly 1, given as 'warlord'")
        card_realm = _realm(card.get("realm", ""))
        if realm is not None and card_realm != realm:
            problems.append(
                f"{where}.realm: {card['name']} is from {card.get('realm')!r}; all cards must match the Warlord's Realm {realm!r}"
            )
        copies[card["name"]] += count
        total_cards += count
        total_points += points * count
    for name, count in sorted(copies.items()):
        if count > MAX_COPIES:
            problems.append(f"{source}: cards: {count} copies of {name!r}; at most {MAX_COPIES}")
    if total_points > MAX_POINTS:
        problems.append(f"{source}: cards: {total_points:g} points; the limit is {MAX_POINTS}")
    if total_cards < MIN_CARDS:
        problems.append(f"{source}: cards: {total_cards} cards; at least {MIN_CARDS}")
    return problems
