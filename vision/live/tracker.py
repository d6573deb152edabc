"""Identity across frames: each model keeps its id, unit and player as pieces are moved.

New detections are matched to the known models by position (nearest first),
only between compatible pieces (same base size, same team colour). A model
that moved far is matched by elimination, preferring the unit being activated
(the rules say only it moves). When that still leaves a choice, the scene says
the identity is uncertain instead of guessing; a model that vanished, or a
piece nobody can account for, is a desync that asks the players for a
correction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

STAY_IN = 0.25  # a model within this of where it was has not moved (measurement jitter)


@dataclass
class Tracked:
    id: str
    unit: str
    player: str
    base: str
    x: float
    y: float
    uncertain: bool = False


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
        known = [m for m in self.models.values()]
        pairs = []
        for m in known:
            for j, d in enumerate(detections):
                if d["base"] == m.base and d.get("player", m.player) == m.player:
                    pairs.append((math.hypot(d["x"] - m.x, d["y"] - m.y), m.id, j))
        pairs.sort()
        matched: dict[str, int] = {}
        used: set[int] = set()
        # Pieces that stayed put first: nearest pairs within jitter.
        for dist, mid, j in pairs:
            if dist <= STAY_IN and mid not in matched and j not in used:
                matched[mid] = j
                used.add(j)
        # Then the moved ones, the activated unit first, each to the nearest free compatible piece.
        remaining = [m for m in known if m.id not in matched]
        remaining.sort(key=lambda m: (m.unit != active_unit, m.id))
        uncertain: list[str] = []
        for m in remaining:
            options = sorted((dist, j) for dist, mid, j in pairs if mid == m.id and j not in used)
            if not options:
                continue
            if active_unit is not None and m.unit != active_unit and options[0][0] > STAY_IN:
                continue  # only the activated unit should have moved
            others = [
                o
                for o in remaining
                if o.id != m.id
                and o.id not in matched
                and any(mid == o.id and j == options[0][1] for _, mid, j in pairs)
            ]
            if (
                others
                and len(options) > 1
                and abs(options[1][0] - options[0][0]) < 0.5
                and any(o.unit != m.unit for o in others)
            ):
                uncertain.append(m.id)
            matched[m.id] = options[0][1]
            used.add(options[0][1])
        moves = []
        for mid, j in matched.items():
            m = self.models[mid]
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
