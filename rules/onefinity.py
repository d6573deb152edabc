"""Onefinity combat (../shared/rulebooks/onefinity-combat.md), played on a hex mat.

Each unit is one trooper. Profile: ``armor`` (defense cards), ``weapons``:
``[{"name", "fire_power": [[max_hexes, cards], ...], "bonus"?}]`` (fire power
by range band, nearest band first), ``skills`` (e.g. "CC Specialist").
State: ``downed``, ``charging``. The scene needs ``table.hex``.
Readings: docs/rules/onefinity.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from geometry.cover import cover_relation, touching_verdict
from geometry.hexgrid import HexGrid, hex_distance
from geometry.measure import Comparison, Verdict, combine_all
from geometry.sight import SIGHT_SIGMAS
from rules.common import QuestionError, fmt_in, profile_value, unit_or_error
from rules.profiles import profile_for
from rules.ruling import Ruling
from rules.table_facts import sight_doubt, sight_lines
from tablesight.scene import Model, Scene, Unit

GAME = "Onefinity"
HIDDEN_COVERED_FRACTION = 0.75
REDIRECT_HEXES = 2
HEX_NEIGHBOURS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))  # axial offsets of the six neighbours
DECK_SIZE = 52
LOS_FRACTION_TOLERANCE = 0.08  # geometry/sight.py's stated tolerance on visible fractions


@dataclass(frozen=True)
class OnefinityOptions:
    higher_ground_min_in: float = 1.0  # how much higher (z) a trooper must stand to count as higher ground
    # Cover: the base touches a terrain piece that covers part of the body. "touching": any such piece;
    # "facing": only a piece that also lies between the trooper and the attacker.
    cover_rule: str = "touching"


@dataclass(frozen=True)
class CardDraw:
    attack_cards: int
    defense_cards: int
    attack_notes: tuple[str, ...]
    defense_notes: tuple[str, ...]

    def win_chance(self) -> Fraction:
        return attack_win_chance(self.attack_cards, self.defense_cards)


def attack_win_chance(attack_cards: int, defense_cards: int) -> Fraction:
    """Chance the attacker's best card beats the defender's best, both drawn from one shuffled deck.

    Ranks with ties broken by suit order give the 52 cards a total order, so the
    winner is whoever holds the highest of all drawn cards: each of the
    ``a + d`` cards is equally likely to be it.
    """
    if attack_cards <= 0:
        return Fraction(0)
    if attack_cards + defense_cards > DECK_SIZE:
        raise QuestionError(f"cannot draw {attack_cards + defense_cards} cards from a {DECK_SIZE}-card deck")
    return Fraction(attack_cards, attack_cards + defense_cards)


def exchange_odds(a_attack: int, b_defense: int, b_attack: int, a_defense: int) -> dict[str, Fraction]:
    """Opposed shooting, both resolved at once from one deck: chances of each trooper being downed."""
    if b_attack == 0:
        win = attack_win_chance(a_attack, b_defense)
        return {"target_downed": win, "attacker_downed": Fraction(0), "both": Fraction(0), "neither": 1 - win}
    p_b_down = attack_win_chance(a_attack, b_defense)
    p_a_down = attack_win_chance(b_attack, a_defense)
    # The four piles are disjoint random subsets of one total order: the two contests are independent.
    return {
        "target_downed": p_b_down * (1 - p_a_down),
        "attacker_downed": p_a_down * (1 - p_b_down),
        "both": p_b_down * p_a_down,
        "neither": (1 - p_b_down) * (1 - p_a_down),
    }


def dodge_chance() -> Fraction:
    """ "Dodge: Draws 1 card, on 8+ they successfully dodge" (8, 9, 10, J, Q, K, A)."""
    return Fraction(7 * 4, DECK_SIZE)


@dataclass
class Onefinity:
    options: OnefinityOptions = field(default_factory=OnefinityOptions)
    # Sight lines and sight per trooper pair, for one scene at a time (a ruling asks the same pair several times).
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    game = "onefinity"
    questions = ("in-range", "can-see", "can-target", "cover", "hidden", "redirect", "cards")

    # ---- positions -----------------------------------------------------------
    def _grid(self, scene: Scene) -> HexGrid:
        spec = scene.hex_spec
        if not spec:
            raise QuestionError(
                f"{scene.source}: Onefinity questions need table.hex (the hex mat: width_in, orientation)"
            )
        return HexGrid(
            float(spec.get("width_in", 1.0)),
            spec.get("orientation", "flat"),
            float(spec.get("origin_x_in", 0.0)),
            float(spec.get("origin_y_in", 0.0)),
        )

    def _trooper(self, scene: Scene, unit_id: str) -> tuple[Unit, Model]:
        unit = unit_or_error(scene, unit_id)
        models = scene.models_of(unit.id)
        if not models:
            raise QuestionError(f"{scene.source}: trooper {unit_id!r} is not on the table")
        return unit, models[0]

    def hex_of(self, scene: Scene, model: Model) -> tuple[int, int]:
        q, r = self._grid(scene).to_hex([model.x], [model.y])
        return int(q[0]), int(r[0])

    def hexes_apart(self, scene: Scene, a: Model, b: Model) -> int:
        qa, ra = self.hex_of(scene, a)
        qb, rb = self.hex_of(scene, b)
        return int(hex_distance(qa, ra, qb, rb))

    def hexes_maybe(self, scene: Scene, model: Model) -> set[tuple[int, int]]:
        """The hexes ``model`` may stand in: its centre's, and each neighbour whose shared edge lies within
        2 sigma of the centre (a trooper the camera measured on a hex edge; players place them in hexes)."""
        grid = self._grid(scene)
        q, r = (int(v[0]) for v in grid.to_hex([model.x], [model.y]))
        found = {(q, r)}
        reach_in = 2 * model.sigma_in
        if reach_in <= 0:
            return found
        cx, cy = grid.to_table([q], [r])
        for dq, dr in HEX_NEIGHBOURS:
            nx, ny = grid.to_table([q + dq], [r + dr])
            ux, uy = (nx[0] - cx[0]) / grid.width_in, (ny[0] - cy[0]) / grid.width_in  # unit vector to it
            to_edge_in = grid.width_in / 2 - ((model.x - cx[0]) * ux + (model.y - cy[0]) * uy)
            if to_edge_in < reach_in:
                found.add((q + dq, r + dr))
        return found

    def hex_centre(self, scene: Scene, q: int, r: int) -> tuple[float, float]:
        """Table position (inches) of hex (q, r)'s centre."""
        x, y = self._grid(scene).to_table([q], [r])
        return float(x[0]), float(y[0])

    def hexes_apart_maybe(self, scene: Scene, a: Model, b: Model) -> set[int]:
        """Every hex distance between the troopers that their measured positions allow (one value when sure)."""
        return {
            int(hex_distance(qa, ra, qb, rb))
            for qa, ra in self.hexes_maybe(scene, a)
            for qb, rb in self.hexes_maybe(scene, b)
        }

    def _on_edge(self, scene: Scene, *models: Model) -> str:
        unsure = [m.id for m in models if len(self.hexes_maybe(scene, m)) > 1]
        return f"{', '.join(unsure)} stand{'s' if len(unsure) == 1 else ''} on a hex edge (within 2 sigma)"

    # ---- range and sight -----------------------------------------------------
    def _weapon(self, scene: Scene, unit: Unit, name: str | None) -> dict[str, Any]:
        weapons = profile_value(scene, unit, "weapons")
        if name is None:
            return dict(weapons[0])
        for w in weapons:
            if str(w.get("name", "")).lower() == name.lower():
                return dict(w)
        raise QuestionError(f"{unit.name} has no weapon {name!r}")

    def fire_power(self, weapon: dict[str, Any], hexes: int) -> int:
        for max_hexes, cards in weapon.get("fire_power", []):
            if hexes <= int(max_hexes):
                return int(cards)
        return 0

    def in_range(
        self, scene: Scene, a_id: str, b_id: str, range_in: float | None = None, weapon: str | None = None
    ) -> Ruling:
        a, am = self._trooper(scene, a_id)
        b, bm = self._trooper(scene, b_id)
        w = self._weapon(scene, a, weapon)
        hexes = self.hexes_apart(scene, am, bm)
        power = self.fire_power(w, hexes)
        verdict = Verdict.YES if power > 0 else Verdict.NO
        reason = (
            f"{b.name} is {hexes} hexes from {a.name}: {w.get('name', 'weapon')} has fire power {power} at that range."
        )
        maybe = sorted(self.hexes_apart_maybe(scene, am, bm))
        if len({self.fire_power(w, h) > 0 for h in maybe}) > 1:  # in range from one hex, out of it from another
            verdict = Verdict.TOO_CLOSE
            reason += (
                f" But {self._on_edge(scene, am, bm)}: {' or '.join(map(str, maybe))} hexes apart,"
                " in range or not: too close to call."
            )
        return Ruling(
            f"Is {b.name} in range of {a.name}'s {w.get('name', 'weapon')}?",
            verdict,
            (reason,),
            (
                Comparison(
                    "hex distance",
                    float(hexes),
                    float(w.get("fire_power", [[0, 0]])[-1][0]),
                    0.0,
                    verdict,
                ),
            ),
            f"{GAME} > Shooting (fire power by range)",
            (a.id, b.id),
        )

    def _lines(self, scene: Scene) -> Any:
        if self._cache.get("scene") is not scene:
            self._cache.clear()
            self._cache.update(scene=scene, lines=sight_lines(scene, profile_for(scene.game)))
        return self._cache["lines"]

    def _sight(self, scene: Scene, am: Model, bm: Model) -> Any:
        lines = self._lines(scene)
        key = ("sight", am.id, bm.id)
        if key not in self._cache:
            self._cache[key] = lines.check(scene.footprints([am]), scene.footprints([bm]), [am.id], [bm.id])[0]
        return self._cache[key]

    def _fraction_spread(self, scene: Scene, am: Model, bm: Model, fraction: float) -> float:
        """How far the visible fraction moves when either trooper moves 2 sigma along x or y (0 when exact)."""
        pair = (scene.footprints([am]), scene.footprints([bm]))
        steps = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.float64)
        shifts = []  # (n, 2 troopers, 2): one trooper moved, the other where it is
        for k, fp in enumerate(pair):
            if fp.sigma_in[0] > 0:
                shift = np.zeros((4, 2, 2))
                shift[:, k] = SIGHT_SIGMAS * float(fp.sigma_in[0]) * steps
                shifts.append(shift)
        if not shifts:
            return 0.0
        shift = np.concatenate(shifts)
        n = len(shift)
        moved = [  # placed exactly there: no doubt of their own to work out
            replace(
                fp[[0] * n], x_in=fp.x_in[0] + shift[:, k, 0], y_in=fp.y_in[0] + shift[:, k, 1], sigma_in=np.zeros(n)
            )
            for k, fp in enumerate(pair)
        ]
        seen = self._lines(scene).check(moved[0], moved[1], [am.id] * n, [bm.id] * n, with_blockers=False)
        return float(max(abs(s.visible_fraction - fraction) for s in seen))

    def can_see(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        a, am = self._trooper(scene, a_id)
        b, bm = self._trooper(scene, b_id)
        sight = self._sight(scene, am, bm)
        reasons = [
            f"{a.name} has line of fire to {b.name} ({sight.visible_fraction:.0%} of its base can be seen)."
            if sight.visible
            else f"No line of fire: blocked by {', '.join(sight.blocked_by)}."
        ]
        if sight.doubtful:
            reasons.append(sight_doubt(sight.visible))
        return Ruling(
            f"Does {a.name} have line of fire to {b.name}?",
            sight.verdict,
            tuple(reasons),
            (),
            f"{GAME} > Shooting (LoF)",
            (a.id, b.id),
        )

    def hidden(self, scene: Scene, target_id: str, attacker_id: str) -> Ruling:
        """Hidden when more than 3/4 of the trooper is covered: visible fraction below 1/4."""
        a, am = self._trooper(scene, attacker_id)
        t, tm = self._trooper(scene, target_id)
        sight = self._sight(scene, am, tm)
        visible = sight.visible_fraction
        threshold = 1 - HIDDEN_COVERED_FRACTION
        spread = self._fraction_spread(scene, am, tm, visible)
        tolerance = LOS_FRACTION_TOLERANCE + spread
        if abs(visible - threshold) <= tolerance and (sight.visible or sight.doubtful):
            verdict = Verdict.TOO_CLOSE
        else:
            verdict = Verdict.YES if visible <= threshold else Verdict.NO
        covered = 1 - visible
        reason = f"{covered:.0%} of {t.name}'s base is hidden from {a.name} (hidden above 75%)."
        if verdict is Verdict.TOO_CLOSE:
            why = f"the sight-line tolerance (±{LOS_FRACTION_TOLERANCE:.0%})"
            if spread > 0:
                why += f" and the models' measuring error (±{spread:.0%})"
            reason += f" Within {why} of 75%: too close to call."
        cmp = Comparison("covered fraction", covered, HIDDEN_COVERED_FRACTION, tolerance / 2, verdict, ">")
        return Ruling(
            f"Is {t.name} hidden from {a.name}?",
            verdict,
            (reason,),
            (cmp,),
            f"{GAME} > Cover and Visibility",
            (t.id, a.id),
        )

    def cover(self, scene: Scene, target_id: str, attacker_id: str) -> Ruling:
        a, am = self._trooper(scene, attacker_id)
        t, tm = self._trooper(scene, target_id)
        fp = scene.footprints([tm])
        touching, maybe = [], []  # pieces it surely touches, and those its measuring error leaves in doubt
        for piece in scene.terrain:
            if piece.kind == "open" or piece.height_in <= 0:
                continue
            if self.options.cover_rule == "facing":
                relation = cover_relation(scene.footprints([am]), fp, piece.shape)
                contact = combine_all([relation.touching_verdict, relation.between_verdict])
            else:  # contact alone: no need for the corridor between the two
                contact = touching_verdict(fp, piece.shape)
            if contact is Verdict.YES:
                touching.append(piece.id)
            elif contact is Verdict.TOO_CLOSE:
                maybe.append(piece.id)
        if touching:
            verdict, reason = (
                Verdict.YES,
                f"{t.name}'s base is in contact with {', '.join(touching)}: in cover (+1 defense card).",
            )
        elif maybe:
            verdict = Verdict.TOO_CLOSE
            reason = (
                f"{t.name}'s base is within its measuring error of {', '.join(maybe)}: "
                "whether it is in contact (in cover) is too close to call."
            )
        else:
            verdict, reason = Verdict.NO, f"{t.name}'s base touches no terrain that covers it."
        return Ruling(
            f"Is {t.name} in cover?",
            verdict,
            (reason,),
            (),
            f"{GAME} > Cover and Visibility",
            (t.id, a.id),
        )

    def can_target(self, scene: Scene, a_id: str, b_id: str, weapon: str | None = None) -> Ruling:
        a, am = self._trooper(scene, a_id)
        b, bm = self._trooper(scene, b_id)
        if a.player == b.player:
            raise QuestionError(f"{a.id!r} and {b.id!r} belong to the same player")
        rulings = [self.in_range(scene, a_id, b_id, weapon=weapon), self.can_see(scene, a_id, b_id)]
        hidden = self.hidden(scene, b_id, a_id)
        not_hidden = {Verdict.YES: Verdict.NO, Verdict.NO: Verdict.YES, Verdict.TOO_CLOSE: Verdict.TOO_CLOSE}[
            hidden.verdict
        ]
        verdict = combine_all([r.verdict for r in rulings] + [not_hidden])
        reasons = [x for r in rulings for x in r.reasons] + [hidden.reasons[0]]
        return Ruling(
            f"Can {a.name} shoot {b.name}?",
            verdict,
            tuple(reasons),
            hidden.measurements,
            f"{GAME} > Shooting; Cover and Visibility",
            (a.id, b.id),
        )

    def redirect(self, scene: Scene, a_id: str, downed_id: str, new_id: str) -> Ruling:
        _, dm = self._trooper(scene, downed_id)
        n, nm = self._trooper(scene, new_id)
        target = self.can_target(scene, a_id, new_id)
        hexes = self.hexes_apart(scene, dm, nm)
        near = Verdict.YES if hexes <= REDIRECT_HEXES else Verdict.NO
        reasons = (*target.reasons, f"{n.name} is {hexes} hexes from the downed trooper (at most {REDIRECT_HEXES}).")
        maybe = sorted(self.hexes_apart_maybe(scene, dm, nm))
        if len({h <= REDIRECT_HEXES for h in maybe}) > 1:
            near = Verdict.TOO_CLOSE
            reasons += (
                f"But {self._on_edge(scene, dm, nm)}: {' or '.join(map(str, maybe))} hexes: too close to call.",
            )
        return Ruling(
            f"May the next shot go to {n.name}?",
            combine_all([target.verdict, near]),
            reasons,
            (Comparison("hexes from downed target", float(hexes), float(REDIRECT_HEXES), 0.0, near),),
            f"{GAME} > Shooting (multiple shots: at maximum 2 hexes from initial target)",
            (a_id, downed_id, new_id),
        )

    # ---- cards -----------------------------------------------------------------
    def card_draw(
        self, scene: Scene, a_id: str, b_id: str, weapon: str | None = None, reactive: bool = False
    ) -> CardDraw:
        a, am = self._trooper(scene, a_id)
        b, bm = self._trooper(scene, b_id)
        w = self._weapon(scene, a, weapon)
        power = self.fire_power(w, self.hexes_apart(scene, am, bm))
        notes = []
        if reactive and power > 1:
            notes.append(f"Fire power {power}, limited to 1 when reacting")
            power = 1
        else:
            notes.append(f"Fire power {power}")
        powers = sorted({self.fire_power(w, h) for h in self.hexes_apart_maybe(scene, am, bm)})
        if len(powers) > 1:  # the players say which hex; the draw is counted from the centres' hexes
            notes.append(f"{self._on_edge(scene, am, bm)}: fire power {' or '.join(map(str, powers))}, say which hex")
        attack = power + int(w.get("bonus", 0))
        if w.get("bonus"):
            notes.append(f"Weapon bonus +{w['bonus']}")
        if am.z - bm.z >= self.options.higher_ground_min_in:
            attack += 1
            notes.append("Higher ground +1")
        if self.in_rear_arc(bm, am):
            attack += 1
            notes.append("Target attacked in the rear 180° arc +1")
        if b.state.get("downed"):
            attack += 2
            notes.append("Target is downed +2")
        defense = 1 + int(profile_value(scene, b, "armor"))
        d_notes = ["1 card for defense", f"Armor +{int(profile_value(scene, b, 'armor'))}"]
        if bm.z - am.z >= self.options.higher_ground_min_in:
            defense += 1
            d_notes.append("Higher ground +1")
        cover = self.cover(scene, b_id, a_id).verdict
        if cover is Verdict.YES:
            defense += 1
            d_notes.append("Cover +1")
        elif cover is Verdict.TOO_CLOSE:  # counted without it; the players decide
            d_notes.append("cover too close to call (not counted; +1 if the players agree it is in contact)")
        return CardDraw(attack, defense, tuple(notes), tuple(d_notes))

    def cards(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        draw = self.card_draw(scene, a_id, b_id)
        a, b = unit_or_error(scene, a_id), unit_or_error(scene, b_id)
        reasons = (
            f"{a.name} draws {draw.attack_cards}: {', '.join(draw.attack_notes)}.",
            f"{b.name} draws {draw.defense_cards}: {', '.join(draw.defense_notes)}.",
            f"Chance the shot downs {b.name}: {float(draw.win_chance()):.1%} (best card wins).",
        )
        return Ruling(
            f"How many cards does each side draw when {a.name} shoots {b.name}?",
            Verdict.YES,
            reasons,
            (),
            f"{GAME} > Modifiers; Shooting",
            (a.id, b.id),
        )

    @staticmethod
    def in_rear_arc(target: Model, attacker: Model) -> bool:
        """Is the attacker's centre behind the line through the target's centre across its facing?"""
        f = math.radians(target.facing_deg)
        dx, dy = attacker.x - target.x, attacker.y - target.y
        return dx * math.cos(f) + dy * math.sin(f) < -1e-9

    # ---- everything ------------------------------------------------------------
    def rulings(self, scene: Scene) -> list[Ruling]:
        out = []
        for a in scene.units:
            for b in scene.units:
                if (
                    a.player != b.player
                    and scene.models_of(a.id)
                    and scene.models_of(b.id)
                    and a.profile.get("weapons")
                ):
                    ruling = self.can_target(scene, a.id, b.id)
                    if ruling.verdict is not Verdict.NO:
                        out.append(ruling)
        return out

    def score(self, scene: Scene) -> dict[str, Any]:
        raise QuestionError("the Onefinity combat rules have no scoring")


def describe_range(hexes: int, width_in: float) -> str:
    return f"{hexes} hexes ({fmt_in(hexes * width_in)})"
