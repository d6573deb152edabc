"""Identity across frames: each model keeps its id, unit and player as pieces are moved.

New detections are matched to the known models by position. Base size and team
colour, as the camera reads them, are evidence, not gates: the detector names
a base's size or rim colour wrongly now and then, so a mismatch costs distance
instead of forbidding the match (a round base is never matched to an oval of a
very different size). Pieces that stayed put are matched first. The unit being
activated (the rules say only it moves) is then matched as a group: the
translation most of its models agree on is found from the free pieces, and each
model takes the free piece nearest where that translation puts it; a model
with no piece there is left where it was and reported not seen, and it is
picked up again in a later frame when a free piece turns up beside its unit.
When two models could take the same piece the scene says the identity is
uncertain instead of guessing; a model that vanished, or a piece nobody can
account for, is a desync that asks the players for a correction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geometry.shapes import base_semi_axes_in

STAY_IN = 0.25  # a model within this of where it was has not moved (measurement jitter)
SIZE_STEP_COST_IN = 0.15  # a detection read one size off costs this much distance
TEAM_COST_IN = 0.3  # a detection read in the other team's colour
SIZE_RATIO_MAX = 1.35  # beyond this ratio of semi-axes a piece is a different piece, whatever else agrees
GROUP_TOLERANCE_IN = 0.5  # a unit's model lands within this of where the unit's translation puts it
MAX_MOVE_IN = 16.0  # no activation moves a model further (the longest moves plus a charge)
REACQUIRE_IN = 3.0  # a model lost in its unit's move is picked up again this close to a unit-mate
AMBIGUOUS_IN = 0.2  # two candidate pieces this close in cost: the identity is uncertain


@dataclass
class Tracked:
    id: str
    unit: str
    player: str
    base: str
    x: float
    y: float
    uncertain: bool = False
    lost: bool = False  # not seen when its unit last moved: may turn up again beside its unit


@dataclass(frozen=True)
class Move:
    model: str
    unit: str
    start: tuple[float, float]
    end: tuple[float, float]

    @property
    def length_in(self) -> float:
        return math.hypot(self.end[0] - self.start[0], self.end[1] - self.start[1])


@dataclass(frozen=True)
class TrackUpdate:
    moves: tuple[Move, ...]
    uncertain: tuple[str, ...]  # models whose identity could not be decided
    vanished: tuple[str, ...]  # known models not seen (picked up? hidden?)
    unexplained: tuple[int, ...]  # detections that match no known model
    desync: bool
    messages: tuple[str, ...]


@dataclass
class IdentityTracker:
    models: dict[str, Tracked] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_scene(cls, scene: dict[str, Any]) -> IdentityTracker:
        """Start from a scene the players confirmed (units assigned at deployment)."""
        owner = {u["id"]: u["player"] for u in scene["units"]}
        tracked = {
            m["id"]: Tracked(m["id"], m["unit"], owner[m["unit"]], str(m["base"]), float(m["x"]), float(m["y"]))
            for m in scene["models"]
        }
        return cls(tracked)

    def update(
        self, detections: list[dict[str, Any]], active_unit: str | None = None, hidden: set[str] | None = None
    ) -> TrackUpdate:
        """``detections``: [{"x", "y", "base", "player"}] from the latest settled frame."""
        hidden = hidden or set()
        matched: dict[str, int] = {}
        used: set[int] = set()
        # Pieces that stayed put first: cheapest pairs within jitter (the team colour is not needed here).
        # The activated unit is left to the group match: a short move puts its models near each other's places.
        stay = []
        for m in self.models.values():
            if m.unit == active_unit:
                continue
            for j, d in enumerate(detections):
                dist = math.hypot(d["x"] - m.x, d["y"] - m.y)
                size = _size_cost(m.base, str(d["base"]))
                if dist <= STAY_IN and size is not None:
                    stay.append((dist + size, m.id, j))
        for _, mid, j in sorted(stay):
            if mid not in matched and j not in used:
                matched[mid] = j
                used.add(j)
        # Then the units that moved, as groups: the activated unit first, or any unit with a model not found.
        uncertain: list[str] = []
        unmatched = [m for m in self.models.values() if m.id not in matched]
        units = sorted(
            {m.unit for m in unmatched}, key=lambda u: (u != active_unit, -sum(m.unit == u for m in unmatched), u)
        )
        for unit in units:
            if active_unit is not None and unit != active_unit:
                continue  # only the activated unit should have moved
            members = [m for m in unmatched if m.unit == unit and m.id not in matched]
            self._match_group(members, detections, matched, used, uncertain)
            for m in members:
                m.lost = m.id not in matched and m.id not in hidden
        # Models lost in an earlier move, seen again beside their unit.
        for m in self.models.values():
            if m.lost and m.id not in matched:
                mates = [o for o in self.models.values() if o.unit == m.unit and o.id != m.id and not o.lost]
                options = []
                for j, d in enumerate(detections):
                    beside = min((math.hypot(d["x"] - o.x, d["y"] - o.y) for o in mates), default=math.inf)
                    if j not in used and beside <= REACQUIRE_IN and _size_cost(m.base, str(d["base"])) is not None:
                        options.append((_cost(m, d, d["x"], d["y"]) + beside, j))  # the piece closest to its unit
                options.sort()
                if options:
                    matched[m.id] = options[0][1]
                    used.add(options[0][1])
                    if len(options) > 1 and options[1][0] - options[0][0] < AMBIGUOUS_IN:
                        uncertain.append(m.id)
        moves = []
        for mid, j in matched.items():
            m = self.models[mid]
            m.lost = False
            d = detections[j]
            if math.hypot(d["x"] - m.x, d["y"] - m.y) > STAY_IN:
                moves.append(Move(mid, m.unit, (m.x, m.y), (float(d["x"]), float(d["y"]))))
                m.x, m.y = float(d["x"]), float(d["y"])
            m.uncertain = mid in uncertain
        vanished = tuple(sorted(mid for mid in self.models if mid not in matched and mid not in hidden))
        unexplained = tuple(j for j in range(len(detections)) if j not in used)
        messages = []
        if vanished:
            messages.append(f"not seen: {', '.join(vanished)} (picked up or hidden?) - confirm or correct")
        if unexplained:
            messages.append(f"{len(unexplained)} piece(s) on the table match no known model - assign or remove them")
        if uncertain:
            messages.append(f"identity uncertain for {', '.join(uncertain)} - confirm which is which")
        for move in moves:
            self.history.append(
                {
                    "event": "move",
                    "unit": move.unit,
                    "model": move.model,
                    "from": list(move.start),
                    "to": list(move.end),
                    "length_in": round(move.length_in, 4),
                }
            )
        return TrackUpdate(
            tuple(moves), tuple(uncertain), vanished, unexplained, bool(vanished or unexplained), tuple(messages)
        )

    def _match_group(
        self,
        members: list[Tracked],
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        uncertain: list[str],
    ) -> None:
        """Match the models of one unit that moved: the translation most of them agree on, then each
        model to the free piece nearest where it puts it."""
        free = [j for j in range(len(detections)) if j not in used]
        hypotheses = [
            (detections[j]["x"] - m.x, detections[j]["y"] - m.y)
            for m in members
            for j in free
            if math.hypot(detections[j]["x"] - m.x, detections[j]["y"] - m.y) <= MAX_MOVE_IN
            and _size_cost(m.base, str(detections[j]["base"])) is not None
        ]
        if not hypotheses:
            return
        shifts = np.array(hypotheses)  # (H, 2)
        at = np.array([[m.x, m.y] for m in members])  # (M, 2)
        pieces = np.array([[detections[j]["x"], detections[j]["y"]] for j in free])  # (F, 2)
        predicted = at[None, :, :] + shifts[:, None, :]  # (H, M, 2)
        near = np.linalg.norm(predicted[:, :, None, :] - pieces[None, None, :, :], axis=3).min(axis=2)  # (H, M)
        placed = (near <= GROUP_TOLERANCE_IN).sum(axis=1)
        residual = np.where(near <= GROUP_TOLERANCE_IN, near, 0.0).sum(axis=1)
        best = int(np.lexsort((residual, -placed))[0])  # most models placed, then the tightest fit
        dx, dy = (float(v) for v in shifts[best])
        # Another translation that places as many models as well (one model seen of two alike, say):
        # which model is which cannot be told, and the scene says so.
        rivals = (
            (placed == placed[best])
            & (residual - residual[best] < AMBIGUOUS_IN)
            & (np.hypot(shifts[:, 0] - dx, shifts[:, 1] - dy) > GROUP_TOLERANCE_IN)
        )
        undecided = bool(rivals.any())
        pairs = []
        for m in members:
            for j in free:
                d = detections[j]
                off = math.hypot(d["x"] - m.x - dx, d["y"] - m.y - dy)
                if off <= GROUP_TOLERANCE_IN and _size_cost(m.base, str(d["base"])) is not None:
                    pairs.append((_cost(m, d, m.x + dx, m.y + dy), m.id, j))
        pairs.sort()
        for cost, mid, j in pairs:
            if mid in matched or j in used:
                continue
            rival_costs = [c for c, other, k in pairs if k == j and other != mid and other not in matched]
            if undecided or (rival_costs and min(rival_costs) - cost < AMBIGUOUS_IN):
                uncertain.append(mid)
            matched[mid] = j
            used.add(j)


def _size_cost(known: str, seen: str) -> float | None:
    """What a size read differently costs (inches of distance); None: too different to be the same piece."""
    if known == seen:
        return 0.0
    a = base_semi_axes_in(known)
    b = base_semi_axes_in(seen)
    ratio = max(a[0] / b[0], b[0] / a[0], a[1] / b[1], b[1] / a[1])
    if ratio > SIZE_RATIO_MAX:
        return None
    return SIZE_STEP_COST_IN * (1 + (ratio - 1) * 4)


def _cost(m: Tracked, d: dict[str, Any], x: float, y: float) -> float:
    """Distance from where ``m`` is expected, plus what its size and team read differently cost."""
    size = _size_cost(m.base, str(d["base"]))
    team = TEAM_COST_IN if d.get("player", m.player) != m.player else 0.0
    return math.hypot(d["x"] - x, d["y"] - y) + (size if size is not None else math.inf) + team
