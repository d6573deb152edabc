"""Read a Flux table from one photo: the cards, whose design each is, which zone, what each pool can pay.

The arithmetic is the rulebook's (rules/flux.py); this module only counts.
A card whose design cannot be told is counted as *unsure*, and the pool's
value is then given as a range (too close to call) rather than a guess.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from rules import flux as flux_rules
from vision.flux.cards import EDGE_MIN, PX_PER_IN, FoundCard, colour_gradients, find_cards
from vision.flux.cards_learned import DEFAULT_CARD_MODEL, LearnedCardFinder
from vision.flux.designs import DesignError, Designs, Look, look_of, merge, straighten
from vision.flux.faces import FACE_PX, REACH_PX, SLACK_PX, Grey, match, register_face, straighten_grey
from vision.flux.layout import FluxLayout

SOURCE_ZONES = ("pool", "deck", "discard")  # where the cards are Source cards, so whose design matters
CARD_FINDERS = ("auto", "learned", "classical")  # auto: the learned model where it is shipped


@dataclass
class ReadCard:
    card: FoundCard
    zone: str | None
    zone_kind: str | None
    zone_player: str | None
    owner: str | None = None  # the player whose design it shows; None: not a Source zone, or too close to call
    margin: float | None = None
    distances: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "x_in": round(self.card.x_in, 3),
            "y_in": round(self.card.y_in, 3),
            "rotation_deg": round(self.card.rotation_deg, 1),
            "corners_in": np.round(self.card.corners_in, 3).tolist(),
            "visible_area": round(self.card.visible_area, 3),
            "zone": self.zone,
            "zone_kind": self.zone_kind,
            "design": self.owner,
            "design_margin": None if self.margin is None else round(self.margin, 3),
            "design_distances": {p: round(d, 4) for p, d in self.distances.items()},
        }


@dataclass
class PoolReading:
    player: str
    own: int
    opponent: int
    unsure: int
    low: int  # Source the pool can make if every unsure card is the opponent's
    high: int  # ... if every unsure card is the player's own

    @property
    def decided(self) -> bool:
        return self.low == self.high

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "cards": self.own + self.opponent + self.unsure,
            "own": self.own,
            "opponent": self.opponent,
            "unsure": self.unsure,
            "source": self.low if self.decided else None,
            "source_range": [self.low, self.high],
            "verdict": "counted" if self.decided else "too close to call",
            "rule": f"{flux_rules.GAME} > Source Cards > Spending Source",
        }

    def can_pay(self, cost: int) -> dict[str, Any]:
        """yes / no / too close to call, with the cheapest payment (``rules.flux.pay``) and its reason.

        Unsure cards are counted as the opponent's for *yes* and as the
        player's own for *no*, so neither answer rests on a guessed design.
        """
        worst = flux_rules.pay(self.own, self.opponent + self.unsure, cost)
        best = flux_rules.pay(self.own + self.unsure, self.opponent, cost)
        verdict = "yes" if worst.can_pay else ("no" if not best.can_pay else "too close to call")
        shown = worst if worst.can_pay or not best.can_pay else best
        out: dict[str, Any] = {
            "player": self.player,
            "cost": cost,
            "verdict": verdict,
            "reason": shown.reasons[0] + (f" ({self.unsure} card(s) of unsure design)" if self.unsure else ""),
            "pool": self.to_json(),
            "payment": worst.to_json(),
            "rule": worst.rule,
        }
        if verdict == "too close to call":
            out["payment_if_unsure_are_own"] = best.to_json()
        return out


@dataclass
class FluxReading:
    cards: list[ReadCard]
    pools: dict[str, PoolReading]
    life_tokens: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "pools": {p: r.to_json() for p, r in self.pools.items()},
            "life_tokens": self.life_tokens,
            "cards": [c.to_json() for c in self.cards],
        }


@functools.lru_cache(maxsize=2)
def _learned_finder(model_path: Path) -> LearnedCardFinder:
    return LearnedCardFinder(model_path)


@dataclass(frozen=True)
class _Faces:
    """Where the registered faces are seen in the photo (cards.FaceCheck), in the zones of Source cards
    (elsewhere lie unit and Warlord cards, no design's)."""

    image: npt.NDArray[np.uint8]
    frame: TableFrame
    layout: FluxLayout
    faces: dict[str, Grey]

    def _matches(
        self, corners_px: npt.NDArray[np.float64], above_px: list[npt.NDArray[np.float64]], margin_px: int
    ) -> tuple[float, int, int]:
        x_in, y_in = corners_px.mean(axis=0) / PX_PER_IN
        zone = self.layout.zone_at(float(x_in), float(y_in))
        if zone is None or zone.kind not in SOURCE_ZONES:
            return float("nan"), 0, 0
        grey, mask = straighten_grey(
            self.image, self.frame, corners_px / PX_PER_IN, [a / PX_PER_IN for a in above_px], margin_px
        )
        found = [match(grey, mask, face) for face in self.faces.values()]
        return max(found, key=lambda f: -math.inf if math.isnan(f[0]) else f[0])

    def score(self, corners_px: npt.NDArray[np.float64], above_px: list[npt.NDArray[np.float64]]) -> float:
        return self._matches(corners_px, above_px, SLACK_PX)[0]

    def placed(
        self, corners_px: npt.NDArray[np.float64], above_px: list[npt.NDArray[np.float64]]
    ) -> tuple[float, npt.NDArray[np.float64]]:
        score, du, dv = self._matches(corners_px, above_px, REACH_PX)
        u = (corners_px[1] - corners_px[0]) / FACE_PX[0]  # one face pixel along the card's short side, view px
        v = (corners_px[3] - corners_px[0]) / FACE_PX[1]
        return score, du * u + dv * v


def _view_and_cards(
    image: npt.NDArray[np.uint8],
    frame: TableFrame,
    layout: FluxLayout,
    finder: str = "auto",
    faces: dict[str, Grey] | None = None,
) -> list[FoundCard]:
    if finder not in CARD_FINDERS:
        raise ValueError(f"card finder {finder!r}: choose one of {', '.join(CARD_FINDERS)}")
    view = frame.rectify(image, PX_PER_IN)
    ignore = np.zeros(view.shape[:2], np.uint8)
    for m in frame.layout.markers:  # the kit's markers (and their paper): no card lies there
        r = (m.size_in / 2 + 0.3) * PX_PER_IN
        cx, cy = m.x_in * PX_PER_IN, m.y_in * PX_PER_IN
        cv2.rectangle(ignore, (int(cx - r), int(cy - r)), (int(cx + r), int(cy + r)), 1, -1)
    if finder == "learned" or (finder == "auto" and LearnedCardFinder.available()):
        return _learned_finder(DEFAULT_CARD_MODEL).find(view, layout.card_w_in, layout.card_h_in, PX_PER_IN, ignore)
    seen = _Faces(image, frame, layout, faces) if faces else None
    return find_cards(view, layout.card_w_in, layout.card_h_in, PX_PER_IN, ignore, seen)


def _looks(image: npt.NDArray[np.uint8], frame: TableFrame, found: list[FoundCard]) -> list[Look | None]:
    out = []
    for k, card in enumerate(found):
        straight, mask = straighten(image, frame, card.corners_in, [c.corners_in for c in found[:k]])
        out.append(look_of(straight, mask))
    return out


def register_designs(
    image: npt.NDArray[np.uint8], frame: TableFrame, layout: FluxLayout, finder: str = "auto"
) -> Designs:
    """Each player's design from a photo in which each player's pool holds only cards of their own design.
    ``finder``: how cards are found (``CARD_FINDERS``)."""
    found = _view_and_cards(image, frame, layout, finder)
    looks = _looks(image, frame, found)
    by_player: dict[str, list[Look]] = {p: [] for p in layout.players}
    faces_of: dict[str, list[tuple[Grey, Grey]]] = {p: [] for p in layout.players}
    for k, (card, look) in enumerate(zip(found, looks, strict=True)):
        zone = layout.zone_at(card.x_in, card.y_in)
        if zone is not None and zone.kind == "pool" and zone.player in by_player and look is not None:
            by_player[zone.player].append(look)
            faces_of[zone.player].append(
                straighten_grey(image, frame, card.corners_in, [c.corners_in for c in found[:k]])
            )
    for p, looks_p in by_player.items():
        if not looks_p:
            raise DesignError(
                f"no card found in player {p}'s pool ({layout.zone('pool', p).name}): lay one or more cards of "
                "that player's design there, apart from each other, and photograph again"
            )
    return Designs({p: merge(lk) for p, lk in by_player.items()}, {p: register_face(f) for p, f in faces_of.items()})


TOKEN_RING_COVER = 0.9  # share of a token-sized circle that must lie on edges running round it
TOKEN_PX_PER_IN = 40.0


def _ring_cover(view: npt.NDArray[np.uint8], radii_px: list[float], angles: int = 48) -> npt.NDArray[np.float32]:
    """Per pixel: the share of the circle round it that lies on an edge facing its centre, best of ``radii_px``."""
    gx, gy = colour_gradients(view)
    magnitude = np.hypot(gx, gy)
    size = (view.shape[1], view.shape[0])
    covers = np.zeros((len(radii_px), *view.shape[:2]), np.float32)
    for a in np.linspace(0, 2 * np.pi, angles, endpoint=False):
        c, s = float(np.cos(a)), float(np.sin(a))
        radial = np.abs(gx * c + gy * s)
        facing = ((radial >= EDGE_MIN) & (radial >= 0.85 * magnitude)).astype(np.float32)
        for k, r_px in enumerate(radii_px):
            # The cover at a centre counts the edge r_px away in this direction: shift that map onto the centre.
            shift = np.float32([[1, 0, -r_px * c], [0, 1, -r_px * s]])
            covers[k] += cv2.warpAffine(facing, shift, size, flags=cv2.INTER_LINEAR)
    out: npt.NDArray[np.float32] = covers.max(axis=0) / angles
    return out


def count_life_tokens(image: npt.NDArray[np.uint8], frame: TableFrame, layout: FluxLayout) -> dict[str, int]:
    """Round tokens of the Life Token size in each Warlord zone, capped at 5 ("Life Tokens cap at 5").

    A token is a disc of known size lying on the Warlord card, whatever its
    colour: nearly all the circle of its radius round its centre lies on an
    edge facing that centre (a card corner or printed art covers far less).
    """
    ppi = TOKEN_PX_PER_IN
    r_px = layout.token_diameter_in / 2 * ppi
    out: dict[str, int] = {}
    for z in layout.zones:
        if z.kind != "warlord" or z.player is None:
            continue
        region = (
            int(z.x0_in * ppi),
            int(z.y0_in * ppi),
            int((z.x1_in - z.x0_in) * ppi),
            int((z.y1_in - z.y0_in) * ppi),
        )
        view = frame.rectify(image, ppi, region_px=region)
        cover = _ring_cover(view, [f * r_px for f in (0.92, 1.0, 1.08)])  # slack for print and lens
        window = int(2 * r_px) | 1
        peaks = (cover >= TOKEN_RING_COVER) & (cover == cv2.dilate(cover, np.ones((window, window), np.uint8)))
        ys, xs = np.nonzero(peaks)
        centres: list[tuple[int, int]] = []
        for y, x in sorted(zip(ys.tolist(), xs.tolist(), strict=True), key=lambda p: -cover[p[0], p[1]]):
            if all((x - a) ** 2 + (y - b) ** 2 > (1.6 * r_px) ** 2 for a, b in centres):  # one token, one count
                centres.append((x, y))
        out[z.player] = min(len(centres), flux_rules.LIFE_TOKEN_CAP)
    return out


def read_flux_table(
    image: npt.NDArray[np.uint8], frame: TableFrame, layout: FluxLayout, designs: Designs, finder: str = "auto"
) -> FluxReading:
    """Cards, their owners and zones, each pool's Source, Life Tokens. ``finder``: ``CARD_FINDERS``."""
    found = _view_and_cards(image, frame, layout, finder, designs.faces)
    looks = _looks(image, frame, found)
    cards = []
    for card, look in zip(found, looks, strict=True):
        zone = layout.zone_at(card.x_in, card.y_in)
        rc = ReadCard(card, zone.name if zone else None, zone.kind if zone else None, zone.player if zone else None)
        if zone is not None and zone.kind in SOURCE_ZONES and look is not None:
            rc.owner, rc.margin, rc.distances = designs.owner(look)
        cards.append(rc)
    pools = {}
    for p in layout.players:
        in_pool = [c for c in cards if c.zone_kind == "pool" and c.zone_player == p]
        own = sum(1 for c in in_pool if c.owner == p)
        unsure = sum(1 for c in in_pool if c.owner is None)
        opponent = len(in_pool) - own - unsure
        pools[p] = PoolReading(
            p,
            own,
            opponent,
            unsure,
            flux_rules.source_value(own, opponent + unsure),
            flux_rules.source_value(own + unsure, opponent),
        )
    return FluxReading(cards, pools, count_life_tokens(image, frame, layout))
