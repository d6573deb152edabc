"""What each model's figure looks like from above: evidence of which model a piece is, beside where it is.

A unit's models are often alike in base and team, so when a player spreads them as they move, their places alone
may not say which is which. Their figures often differ (a leader, a special weapon, a different paint scheme), and the
camera sees each figure standing on its base. A figure's look is the median colour (CIE Lab, as OpenCV scales it)
of the photo along rays through the base's middle, 0.3-0.9" above its top: the figure's body, seen from the
camera. The median keeps a neighbour's arm or a little mat in a gap from moving it.

A look is compared with the look a model was seen with before (their distance in Lab); the identity tracker weighs it
only where models differ by more than a still figure's looks differ from frame to frame (vision/live/tracker.py), so
a unit painted alike is matched by place alone, as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from calibration.table_frame import TableFrame
from geometry.shapes import BASE_HEIGHT_IN, base_semi_axes_in

Look = tuple[float, float, float]  # L, a, b (0-255 each, a and b centred on 128)

LOOK_HEIGHTS_IN = (0.3, 0.5, 0.7, 0.9)  # above the base's top: a figure's body (the renderer's stand 0.9-2.2" tall)
LOOK_RING_SHARE = 0.35  # ...and a ring this share of the base's smaller semi-axis round its middle
LOOK_ANGLES = 8
MIN_LOOK_SAMPLES = 8  # fewer samples in the photo than this (a base at its edge): no look


def figure_looks(photo: np.ndarray, frame: TableFrame, models: Sequence[dict[str, Any]]) -> list[Look | None]:
    """The look of the figure on each of ``models`` (a scene's models, in table inches), in the same order; None
    where too little of it is in the photo."""
    if not models:
        return []
    offsets = [(0.0, 0.0)] + [
        (math.cos(t), math.sin(t)) for t in np.linspace(0, 2 * math.pi, LOOK_ANGLES, endpoint=False)
    ]
    points, heights, owner = [], [], []
    for k, m in enumerate(models):
        radius = LOOK_RING_SHARE * min(base_semi_axes_in(str(m["base"])))
        for h in LOOK_HEIGHTS_IN:
            for dx, dy in offsets:
                points.append((float(m["x"]) + radius * dx, float(m["y"]) + radius * dy))
                heights.append(float(m.get("z", 0.0)) + BASE_HEIGHT_IN + h)
                owner.append(k)
    px = np.round(frame.table_to_image(np.array(points), np.array(heights))).astype(int)
    height, width = photo.shape[:2]
    inside = (px[:, 0] >= 0) & (px[:, 1] >= 0) & (px[:, 0] < width) & (px[:, 1] < height)
    lab = np.zeros((len(points), 3), float)
    if inside.any():
        bgr = photo[px[inside, 1], px[inside, 0]].reshape(-1, 1, 3).astype(np.uint8)
        lab[inside] = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).reshape(-1, 3)
    owners = np.array(owner)
    looks: list[Look | None] = []
    for k in range(len(models)):
        mine = lab[(owners == k) & inside]
        if len(mine) < MIN_LOOK_SAMPLES:
            looks.append(None)
            continue
        median = np.median(mine, axis=0)
        looks.append((float(median[0]), float(median[1]), float(median[2])))
    return looks
