"""A small top-down drawing of a scene: the thumbnail kept with each snapshot."""

from __future__ import annotations

import cv2
import numpy as np

from tablesight.scene import Scene
from vision.colour import hex_to_bgr


def _bgr(color: str | None, fallback: tuple[int, int, int]) -> tuple[int, int, int]:
    if not color or not color.startswith("#"):
        return fallback
    try:
        return hex_to_bgr(color)
    except ValueError:
        return fallback


def thumbnail_png(scene: Scene, width_px: int = 240) -> bytes:
    """PNG bytes: mat, terrain, objectives, bases coloured by player."""
    scale = width_px / scene.width_in
    height_px = max(1, round(scene.depth_in * scale))
    image = np.full((height_px, width_px, 3), (60, 92, 62), np.uint8)
    for piece in scene.terrain:
        points = np.round(np.array(piece.polygon) * scale).astype(np.int32)
        cv2.fillPoly(image, [points], (70, 70, 80) if piece.kind == "blocking" else (50, 120, 90))
    for objective in scene.objectives:
        centre = (round(objective.x * scale), round(objective.y * scale))
        cv2.circle(image, centre, max(2, round(objective.diameter_mm / 50.8 * scale)), (40, 200, 230), -1)
    colors = {p.id: _bgr(p.color, (200, 200, 200)) for p in scene.players}
    fp = scene.footprints()
    for k, model in enumerate(scene.models):
        color = colors.get(scene.player_of(model), (200, 200, 200))
        axes = (max(1, round(float(fp.a_in[k]) * scale)), max(1, round(float(fp.b_in[k]) * scale)))
        centre = (round(model.x * scale), round(model.y * scale))
        cv2.ellipse(image, centre, axes, float(np.degrees(fp.facing_rad[k])), 0, 360, color, -1)
    ok, encoded = cv2.imencode(".png", image)
    if not ok:  # pragma: no cover - only on a broken OpenCV build
        raise RuntimeError("could not encode the thumbnail")
    return encoded.tobytes()
