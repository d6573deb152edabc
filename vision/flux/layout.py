"""Where things lie on a Flux table: each player's Source Pool, board and Warlord, the Source deck and discard.

A Flux layout is a JSON file of named rectangles in table inches (x across,
y down the camera's top view). Cards are assigned to the zone holding their
centre. The default suits a 24"x24" table with the kit's corner markers:
player A sits at the near edge (large y), player B at the far edge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CARD_W_IN = 63.0 / 25.4  # a standard card, 63 x 88 mm
CARD_H_IN = 88.0 / 25.4
TOKEN_DIAMETER_IN = 16.0 / 25.4
ZONE_KINDS = ("pool", "board", "warlord", "deck", "discard")
FORMAT = "tablesight-flux-layout/1"


class FluxLayoutError(ValueError):
    """A Flux layout file that cannot be used (names the file, the field and the value)."""


@dataclass(frozen=True)
class Zone:
    name: str  # e.g. "A pool"
    kind: str  # one of ZONE_KINDS
    player: str | None  # whose zone; None for the shared deck and discard
    x0_in: float
    y0_in: float
    x1_in: float
    y1_in: float

    def contains(self, x_in: float, y_in: float) -> bool:
        return self.x0_in <= x_in <= self.x1_in and self.y0_in <= y_in <= self.y1_in

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "player": self.player,
            "rect_in": [self.x0_in, self.y0_in, self.x1_in, self.y1_in],
        }


@dataclass(frozen=True)
class FluxLayout:
    width_in: float
    depth_in: float
    players: tuple[str, str]
    zones: tuple[Zone, ...]
    card_w_in: float = CARD_W_IN
    card_h_in: float = CARD_H_IN
    token_diameter_in: float = TOKEN_DIAMETER_IN

    def zone_at(self, x_in: float, y_in: float) -> Zone | None:
        return next((z for z in self.zones if z.contains(x_in, y_in)), None)

    def zone(self, kind: str, player: str | None = None) -> Zone:
        for z in self.zones:
            if z.kind == kind and z.player == player:
                return z
        raise FluxLayoutError(f"layout has no {kind!r} zone for player {player!r}")

    @classmethod
    def default(cls, width_in: float = 24.0, depth_in: float = 24.0) -> FluxLayout:
        """Pools along the near and far edges, Warlords beside them, boards in front, deck and discard between."""
        w, d = width_in, depth_in
        m = 3.0  # clear of the kit's 2" corner markers
        zones = (
            Zone("A pool", "pool", "A", m + 5.0, d - 6.0, w - m, d - 0.5),
            Zone("A warlord", "warlord", "A", m, d - 6.0, m + 4.5, d - 0.5),
            Zone("A board", "board", "A", 0.5, d / 2 + 2.25, w - 0.5, d - 6.0),
            Zone("B pool", "pool", "B", m, 0.5, w - m - 5.0, 6.0),
            Zone("B warlord", "warlord", "B", w - m - 4.5, 0.5, w - m, 6.0),
            Zone("B board", "board", "B", 0.5, 6.0, w - 0.5, d / 2 - 2.25),
            Zone("deck", "deck", None, 0.5, d / 2 - 2.25, w / 2 - 0.5, d / 2 + 2.25),
            Zone("discard", "discard", None, w / 2 + 0.5, d / 2 - 2.25, w - 0.5, d / 2 + 2.25),
        )
        return cls(width_in, depth_in, ("A", "B"), zones)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "table": {"width_in": self.width_in, "depth_in": self.depth_in},
            "players": list(self.players),
            "card_mm": [round(self.card_w_in * 25.4, 3), round(self.card_h_in * 25.4, 3)],
            "token_diameter_mm": round(self.token_diameter_in * 25.4, 3),
            "zones": [z.to_json() for z in self.zones],
        }

    @classmethod
    def load(cls, path: str | Path) -> FluxLayout:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FluxLayoutError(f"{path}: no such Flux layout file") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise FluxLayoutError(f"{path}: not a readable JSON Flux layout ({error})") from None
        return cls.from_json(data, str(path))

    @classmethod
    def from_json(cls, data: Any, source: str = "<flux layout>") -> FluxLayout:
        def fail(field: str, problem: str) -> FluxLayoutError:
            return FluxLayoutError(f"{source}: {field}: {problem}")

        if not isinstance(data, dict):
            raise fail("(top)", f"expected an object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise fail("format", f"expected {FORMAT!r}, got {data.get('format')!r}")
        table = data.get("table")
        try:
            width, depth = float(table["width_in"]), float(table["depth_in"])  # type: ignore[index]
        except (TypeError, KeyError, ValueError):
            raise fail("table", f"expected {{'width_in': number, 'depth_in': number}}, got {table!r}") from None
        players = data.get("players")
        if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) and p for p in players)):
            raise fail("players", f"expected two player names, got {players!r}")
        if players[0] == players[1]:
            raise fail("players", f"the two players need different names, got {players!r}")
        card = data.get("card_mm", [63.0, 88.0])
        if not (isinstance(card, list) and len(card) == 2 and all(isinstance(v, int | float) and v > 0 for v in card)):
            raise fail("card_mm", f"expected [width, height] in millimetres, got {card!r}")
        token = data.get("token_diameter_mm", 16.0)
        if not (isinstance(token, int | float) and token > 0):
            raise fail("token_diameter_mm", f"expected a positive number, got {token!r}")
        raw_zones = data.get("zones")
        if not isinstance(raw_zones, list) or not raw_zones:
            raise fail("zones", f"expected a list of zones, got {raw_zones!r}")
        zones = []
        for k, z in enumerate(raw_zones):
            where = f"zones[{k}]"
            if not isinstance(z, dict):
                raise fail(where, f"expected an object, got {z!r}")
            if z.get("kind") not in ZONE_KINDS:
                raise fail(f"{where}.kind", f"expected one of {', '.join(ZONE_KINDS)}, got {z.get('kind')!r}")
            player = z.get("player")
            if player is not None and player not in players:
                raise fail(f"{where}.player", f"expected one of {players} or null, got {player!r}")
            rect = z.get("rect_in")
            if not (isinstance(rect, list) and len(rect) == 4 and all(isinstance(v, int | float) for v in rect)):
                raise fail(f"{where}.rect_in", f"expected [x0, y0, x1, y1] in inches, got {rect!r}")
            x0, y0, x1, y1 = (float(v) for v in rect)
            if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= depth):
                raise fail(f"{where}.rect_in", f"{rect} is not a rectangle on the {width:g}x{depth:g} table")
            zones.append(
                Zone(str(z.get("name") or f"{player or ''} {z['kind']}".strip()), z["kind"], player, x0, y0, x1, y1)
            )
        for p in players:
            if not any(z.kind == "pool" and z.player == p for z in zones):
                raise fail("zones", f"player {p!r} has no pool zone")
        return cls(
            width, depth, (players[0], players[1]), tuple(zones), card[0] / 25.4, card[1] / 25.4, float(token) / 25.4
        )
