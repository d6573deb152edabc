"""Scripted stretches of a live game with a card over two calibration markers: the camera knocked while it lies there,
a unit moved under the card, then the card lifted (calibration/monitor.py's wait, recalibration from fewer,
"refined"); or the card there from the set-up on, with no lens file (the table mapped from two markers to begin with)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import pytest

import calibration.monitor
from calibration.lens import LensModel
from geometry.hexgrid import HexGrid
from vision.live.sources import IteratorSource
from vision.live.watch import Event, watch
from vision.synth.table import HEX_MATS, RenderedTable, lay_card, render_table

GAME = "grinding-annihilation"
CARD_ON = (0, 1)  # the markers the card covers: two along one edge, the map from the other two is off most
TURN_DEG = 1.5


@dataclass(frozen=True)
class CardGame:
    table: RenderedTable
    shots: list[np.ndarray]  # the frames: set-up, deployment, knocked with the card, a unit moved, the card lifted
    moved: dict[str, tuple[float, float]]  # where every model stands after the move
    unit: list[str]  # the models that moved
    lens: LensModel
    players: dict[str, str]


def _unit_u1_moved(
    seed: int,
) -> tuple[RenderedTable, dict[str, tuple[float, float]], list[str], RenderedTable, RenderedTable]:
    """The table; where every model stands after unit u1 moved 1.5" each way; u1's models; the table after the move,
    and with the hand that moved it still over its first model."""
    table = render_table(seed, GAME, hard="none")
    moved = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    unit = [m["id"] for m in table.scene["models"] if m["unit"] == "u1"]
    moved.update({mid: (moved[mid][0] + 1.5, moved[mid][1] - 1.5) for mid in unit})
    after = render_table(seed, GAME, hard="none", models_at=moved)
    hand = render_table(seed, GAME, hard="none", models_at=moved, hand_at=moved[unit[0]])
    return table, moved, unit, after, hand


def knocked_under_a_card(monkeypatch: pytest.MonkeyPatch, seed: int = 45) -> CardGame:
    """Unit u1 (two models by marker 0's corner on seed 45's table) moves 1.5" each way under the card. The monitor
    waits 3 frames for the markers (not 60) and looks for them again every 3 steady frames (not 30)."""
    monkeypatch.setattr(calibration.monitor, "WAIT_ALL_MARKERS_FRAMES", 3)
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 3)
    table, moved, unit, after, hand = _unit_u1_moved(seed)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    turn = cv2.getRotationMatrix2D(tuple(table.camera.K[:2, 2]), TURN_DEG, 1.0)

    def knocked(image: np.ndarray, card: bool) -> np.ndarray:
        image = lay_card(table, image, set(CARD_ON)) if card else image
        return cv2.warpAffine(image, turn, image.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)

    shots = [table.empty] + [table.image] * 5 + [knocked(table.image, True)] * 6
    shots += [knocked(hand.image, True)] + [knocked(after.image, True)] * 5 + [knocked(after.image, False)] * 6
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    return CardGame(table, shots, moved, unit, lens, players)


def set_up_under_a_card(monkeypatch: pytest.MonkeyPatch, seed: int = 45) -> CardGame:
    """The card lies over markers 0 and 1 from the set-up (the empty table) on, and the players have no lens file:
    the table is mapped from markers 2 and 3. Unit u1 moves 1.5" each way; then the card is lifted. The monitor looks
    for the markers every 3 steady frames (not 30). ``lens``: the true one, to compare with (not the players')."""
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 3)
    table, moved, unit, after, hand = _unit_u1_moved(seed)

    def carded(image: np.ndarray) -> np.ndarray:
        return lay_card(table, image, set(CARD_ON))

    shots = [carded(table.empty)] + [carded(table.image)] * 4 + [carded(hand.image)] + [carded(after.image)] * 4
    shots += [after.image] * 6
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    return CardGame(table, shots, moved, unit, lens, players)


def hex_mat_under_a_card(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[RenderedTable, list[np.ndarray], dict[str, str]]:
    """Onefinity's table (a 1.5" hex mat) with the card over markers 0 and 1 from the set-up on, then lifted, nothing
    moved: the table, the frames, the players. The monitor looks for the markers every 3 steady frames (not 30)."""
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 3)
    table = render_table(21, "onefinity", hard="none")
    shots = [lay_card(table, table.empty, set(CARD_ON))] + [lay_card(table, table.image, set(CARD_ON))] * 4
    shots += [table.image] * 6
    return table, shots, {p["id"]: p["color"] for p in table.scene["players"]}


def hex_grid_off_in(grid: dict[str, Any], table: RenderedTable) -> float:
    """How far, at most over ``table``, a hex centre of ``grid`` lies from the nearest centre of the mat's grid."""
    found, mat = (
        HexGrid(**{k: g[k] for k in HexGrid.__dataclass_fields__}) for g in (grid, HEX_MATS[table.scene["game"]])
    )
    w, d = table.layout.width_in, table.layout.depth_in
    xs, ys = np.meshgrid(np.linspace(0.5, w - 0.5, 30), np.linspace(0.5, d - 0.5, 30))
    cx, cy = found.to_table(*found.to_hex(xs.ravel(), ys.ravel()))
    tx, ty = mat.to_table(*mat.to_hex(cx, cy))
    return float(np.hypot(cx - tx, cy - ty).max())


def watched(card: CardGame, lens: LensModel | None) -> list[Event]:
    """What `watch` says of the card game's frames, read with ``lens`` (None: no lens file)."""
    shots = iter(card.shots)
    return list(
        watch(lambda: IteratorSource(shots), card.table.layout, GAME, lens, card.players, max_frames=len(card.shots))
    )
