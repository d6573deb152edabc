"""Models the detector missed though nothing changed where they stand.

A detector misses a base now and then (issues 5-6: 1 in 100 on the held-out set; the same base frame after frame
at times, as seed 49's u1m2 beside its unit-mates). The tracker then has the model vanished, and the page left it
out, asking the players whether it was picked up, and its rulings went without it. But a model picked up or moved
changes the photo where it stood: its figure and base go, the mat shows. Where the photo has not changed since the
last analysed frame, on a model seen there then, the model is still there: the tracker is told so (as a model
under a hand is), and keeps it where it stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from geometry.shapes import base_semi_axes_in
from vision.live.tracker import STAY_IN, Tracked

Image = npt.NDArray[np.uint8]
# Mean difference (0-255, averaged over the colour channels and the spot) above which a model's spot changed. Two
# frames of a still table differ by the sensor's noise: at most 1.8 for the renderer's (sigma 1.5 a pixel), 3-5 for a
# webcam's noisier stream. A model taken off the mat changes its spot by 24 or more in 95 of 100, by 9.6 at least
# (80 models of six rendered tables, seeds 21-23; docs/live.md, session 86). Missing a casualty is worse than asking
# about a model the detector missed, so the line is drawn low.
SPOT_CHANGE_MAX = 6.0
SPOT_SHARE = 0.8  # the spot looked at: this share of the base's narrow semi-axis about its centre (its figure)


def still_there(
    before: Image | None,
    now: Image,
    frame: TableFrame,
    models: Iterable[Tracked],
    detections: Sequence[dict[str, Any]],
) -> set[str]:
    """The models seen where they stand (``before``: the frame last analysed, in the same view as ``now``) that no
    piece of ``detections`` is read near now, whose spot in the photo has not changed since: missed, not moved."""
    if before is None or before.shape != now.shape:
        return set()
    found = np.array([(float(d["x"]), float(d["y"])) for d in detections], float).reshape(-1, 2)
    kept = set()
    for m in models:
        if m.unseen or m.placed:  # where it is was not seen: its spot says nothing of it
            continue
        narrow_in = base_semi_axes_in(m.base)[1]
        if len(found) and np.min(np.hypot(found[:, 0] - m.x, found[:, 1] - m.y)) <= narrow_in + STAY_IN:
            continue  # a piece is read there: the tracker matches it
        if _spot_change(before, now, frame, (m.x, m.y), SPOT_SHARE * narrow_in) <= SPOT_CHANGE_MAX:
            kept.add(m.id)
    return kept


def _spot_change(before: Image, now: Image, frame: TableFrame, xy_in: tuple[float, float], radius_in: float) -> float:
    """Mean absolute difference of the two frames over a disc of ``radius_in`` about ``xy_in`` (inf: off the frame)."""
    centre = frame.table_to_image(np.array([xy_in]))[0]
    radius_px = max(2, int(round(radius_in / float(frame.inches_per_pixel(np.array(xy_in))[0]))))
    h, w = now.shape[:2]
    x, y = int(round(centre[0])), int(round(centre[1]))
    x0, y0, x1, y1 = x - radius_px, y - radius_px, x + radius_px + 1, y + radius_px + 1
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        return float("inf")
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.circle(mask, (radius_px, radius_px), radius_px, 1, -1)
    diff = cv2.absdiff(before[y0:y1, x0:x1], now[y0:y1, x0:x1]).astype(np.float32)
    per_pixel = diff.mean(axis=2) if diff.ndim == 3 else diff
    return float(per_pixel[mask > 0].mean())
