"""A scripted stretch of a live game: the camera knocked while a card lies over two calibration markers, a unit
moved under the card, then the card lifted (calibration/monitor.py's wait, recalibration from fewer, "refined")."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import pytest

import calibration.monitor
from calibration.lens import LensModel
from vision.synth.table import RenderedTable, lay_card, render_table

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


def knocked_under_a_card(monkeypatch: pytest.MonkeyPatch, seed: int = 45) -> CardGame:
    """Unit u1 (two models by marker 0's corner on seed 45's table) moves 1.5" each way under the card. The monitor
    waits 3 frames for the markers (not 60) and looks for them again every 3 steady frames (not 30)."""
    monkeypatch.setattr(calibration.monitor, "WAIT_ALL_MARKERS_FRAMES", 3)
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 3)
    table = render_table(seed, GAME, hard="none")
    moved = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    unit = [m["id"] for m in table.scene["models"] if m["unit"] == "u1"]
    moved.update({mid: (moved[mid][0] + 1.5, moved[mid][1] - 1.5) for mid in unit})
    after = render_table(seed, GAME, hard="none", models_at=moved)
    hand = render_table(seed, GAME, hard="none", models_at=moved, hand_at=moved[unit[0]])
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    turn = cv2.getRotationMatrix2D(tuple(table.camera.K[:2, 2]), TURN_DEG, 1.0)

    def knocked(image: np.ndarray, card: bool) -> np.ndarray:
        image = lay_card(table, image, set(CARD_ON)) if card else image
        return cv2.warpAffine(image, turn, image.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)

    shots = [table.empty] + [table.image] * 5 + [knocked(table.image, True)] * 6
    shots += [knocked(hand.image, True)] + [knocked(after.image, True)] * 5 + [knocked(after.image, False)] * 6
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    return CardGame(table, shots, moved, unit, lens, players)
