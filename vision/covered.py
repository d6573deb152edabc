"""Parts of the table a photo shows covered by something no piece found explains: a hand, a tape measure.

A piece under a hand has no pixel in the photo (the renders' truth counts them: 18 of the held-out set's 3541
bases, docs/vision.md, session 40), and nothing can find it there. So the analysis says where the photo differs
from the empty table and no base, figure or marker found accounts for it: the players then know that pieces
there may be missing, and can take the hand away and look again.

Where a found base accounts for a change: its disc and a margin, drawn out away from the camera's foot as far as
a tall figure on it leans in the top-down view (FIGURE_HEIGHT_IN x how obliquely the camera sees it there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import MarkerPlacement
from calibration.table_frame import TableFrame
from vision.colour import colour_gain
from vision.detections import Detections

Image = npt.NDArray[np.uint8]
COVER_PX_PER_IN = 8.0  # coarse: a hand is inches across, a 25 mm base 8 px
# BGR units between the photo and the empty table, after the light's change is taken out (BGR, not Lab: OpenCV's
# first Lab conversion in a process takes 70 ms). Tuning tables 6200-6259, 6400-6519 and near-mat 13000-13039:
# at 30, hands seen on 52 of 52 tables and something on 1 of 168 without one (a strip at the table's edge); at 35
# and 40, 50 of 52 and none.
CHANGED_BGR = 35.0
FIGURE_HEIGHT_IN = 2.5  # the tallest figure a base accounts for (the renders' stand up to 2.2")
FIGURE_MARGIN_IN = 0.4  # round a base: its figure's overhang and reach, its shadow
MARKER_MARGIN_IN = 0.2  # round a marker: its edge blurred, a pixel or two off
LIGHT_PATCH_IN = 8.0  # wider than a hand and its wrist: the light is what changed over most of such a patch
LIGHT_SHRINK = 4  # ...measured at 2 px/in
MIN_COVERED_SQ_IN = 4.0  # a change this large that no piece accounts for is reported (a palm is 10 or more)
# ...with what changed round it, this far: the part of a hand over pieces found beside it. Tuning tables' photos
# with a hand (6200-6259, 6400-6519, 13000-13039): missed bases inside a reported box 29 of 33 at 1", 30 at 2" and 3"
REACH_ON_IN = 2.0
# A piece whose read edge comes this near a cover may be partly under it: the part seen is what was read, so its
# place and size are in doubt (vision/analyze.py). Tuning tables' photos with a hand (6200-6259, near-mat
# 13000-13039): of the bases found with a cover's edge under 0.7" from theirs, 4 of 23 were read beyond their 2
# sigma and 2 the wrong size; from 0.7" to 2.5", none of 27.
BESIDE_COVER_IN = 0.75
# A card lifted off a calibration marker: the cover it leaves (its part beyond the marker's square) is this near the
# square, or touches it.
LIFTED_REACH_IN = 0.5


@dataclass(frozen=True)
class Covers:
    """What covers the table: the parts no piece found accounts for, and which pieces found may be partly under
    one (``beside``, one flag a piece of the detections read, in their order)."""

    regions: list[Covered]
    beside: npt.NDArray[np.bool_]

    @classmethod
    def none(cls, pieces: int) -> Covers:
        """Nothing covers the table, and none of ``pieces`` pieces found is beside a cover."""
        return cls([], np.zeros(pieces, bool))


@dataclass(frozen=True)
class Covered:
    """A part of the table covered by something no piece found accounts for: its middle, area and bounding box
    (x0, y0, x1, y1), in inches."""

    x_in: float
    y_in: float
    area_sq_in: float
    box_in: tuple[float, float, float, float]


def find_covers(
    top: Image,
    empty_top: Image,
    frame: TableFrame,
    found: Detections,
    gain: npt.NDArray[np.float64] | None = None,
) -> Covers:
    """Where the photo's top-down view ``top`` differs from the empty table's, ``empty_top`` (each of the whole
    table, at any scale), over MIN_COVERED_SQ_IN or more that no piece of ``found`` (in that view's inches)
    accounts for; and the pieces of ``found`` whose edge comes within BESIDE_COVER_IN of such a part. ``gain``:
    the photo's colour gain against the empty table (``vision.colour.colour_gain``), by which the empty table is
    brought into the photo's light first."""
    ppi = COVER_PX_PER_IN
    w, h = int(round(frame.layout.width_in * ppi)), int(round(frame.layout.depth_in * ppi))
    if h < 2 or w < 2:
        return Covers.none(len(found))
    changed, covered = _unexplained(top, empty_top, frame, found, gain)
    beside = _beside(covered, found)
    for _ in range(int(round(REACH_ON_IN * ppi))):
        covered = cv2.bitwise_and(cv2.dilate(covered, np.ones((3, 3), np.uint8)), changed)
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(covered, connectivity=8)
    regions = [
        Covered(
            round(float(centroids[k][0] + 0.5) / ppi, 2),
            round(float(centroids[k][1] + 0.5) / ppi, 2),
            round(float(stats[k, cv2.CC_STAT_AREA]) / ppi**2, 1),
            (
                round(float(stats[k, cv2.CC_STAT_LEFT]) / ppi, 2),
                round(float(stats[k, cv2.CC_STAT_TOP]) / ppi, 2),
                round(float(stats[k, cv2.CC_STAT_LEFT] + stats[k, cv2.CC_STAT_WIDTH]) / ppi, 2),
                round(float(stats[k, cv2.CC_STAT_TOP] + stats[k, cv2.CC_STAT_HEIGHT]) / ppi, 2),
            ),
        )
        for k in range(1, n)
    ]
    return Covers(regions, beside)


def lifted_off(
    top: Image, empty_top: Image, frame: TableFrame, found: Detections, markers: Sequence[MarkerPlacement]
) -> Image:
    """``empty_top`` (the empty table's top-down view) with what covered these calibration markers when it was taken,
    and is gone now, taken from ``top`` (the photo's, at the same scale): the markers' squares, and each cover (as
    ``find_covers`` finds them, before they reach on over pieces) that comes within LIFTED_REACH_IN of one. A card
    left on a calibration marker at set-up and lifted off it: with the marker in view again, the card is gone."""
    ppi = COVER_PX_PER_IN
    h, w = empty_top.shape[:2]
    gain = colour_gain(top, empty_top)
    _, covered = _unexplained(top, empty_top, frame, found, gain)
    _, labels = cv2.connectedComponents(covered, connectivity=8)
    squares = _calibration_squares(frame, markers, labels.shape)
    near = cv2.dilate(squares, np.ones((2 * int(LIFTED_REACH_IN * ppi) + 1,) * 2, np.uint8))
    met = np.unique(labels[(near > 0) & (labels > 0)])
    lifted = ((squares > 0) | np.isin(labels, met)).astype(np.uint8)
    lifted = cv2.resize(lifted, (w, h), interpolation=cv2.INTER_NEAREST)
    out = empty_top.copy()
    out[lifted > 0] = top[lifted > 0]
    return out


def _unexplained(
    top: Image,
    empty_top: Image,
    frame: TableFrame,
    found: Detections,
    gain: npt.NDArray[np.float64] | None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """At COVER_PX_PER_IN: where ``top`` differs from ``empty_top``, and the parts of it over MIN_COVERED_SQ_IN that
    no piece of ``found`` accounts for (``find_covers``)."""
    ppi = COVER_PX_PER_IN
    w, h = int(round(frame.layout.width_in * ppi)), int(round(frame.layout.depth_in * ppi))
    seen = cv2.resize(top, (w, h), interpolation=cv2.INTER_AREA)
    empty = cv2.resize(empty_top, (w, h), interpolation=cv2.INTER_AREA)
    # A webcam's exposure drifts: 20 % darker, a textured mat differs from the empty one by more than CHANGED_BGR
    # even after the light's change is taken out below (8 of 39 hand-free held-out photos said covered).
    diff = seen.astype(np.float64) - empty.astype(np.float64) * (np.ones(3) if gain is None else gain)
    # The light changed over the table (a cloud, the camera's exposure, someone leaning over): what changed over
    # a wide patch round each point, more than half of LIGHT_PATCH_IN across, is not a cover there.
    diff -= _local_median(diff, int(LIGHT_PATCH_IN * ppi) | 1)
    changed = (np.linalg.norm(diff, axis=2) > CHANGED_BGR).astype(np.uint8)
    changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    unexplained = changed.copy()
    unexplained[_accounted(found, frame, (h, w))] = 0
    # No piece stands on a calibration marker's square: what changed there is the square itself, seen sharper or
    # blurrier than at set-up (a webcam's focus drifts; the crowded renders of table 54 said each of its four covered).
    unexplained[_calibration_squares(frame, frame.layout.markers, (h, w)) > 0] = 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(unexplained, connectivity=8)
    big = [k for k in range(1, n) if stats[k, cv2.CC_STAT_AREA] >= MIN_COVERED_SQ_IN * ppi**2]
    # (find_covers: a cover reaches on over the pieces found beside it, a hand over a crowd, grown through what changed)
    return changed, np.isin(labels, big).astype(np.uint8)


def _calibration_squares(frame: TableFrame, markers: Sequence[MarkerPlacement], shape: tuple[int, int]) -> Image:
    """1 on these calibration markers' printed squares, and MARKER_MARGIN_IN round them (at COVER_PX_PER_IN)."""
    ppi = COVER_PX_PER_IN
    mask = np.zeros(shape, np.uint8)
    for marker in markers:
        corners = marker.corners_in()
        centre = corners.mean(axis=0)
        reach = 1 + MARKER_MARGIN_IN / (marker.size_in / 2)  # corners pushed out from the centre by the margin
        cv2.fillConvexPoly(mask, np.round((centre + reach * (corners - centre)) * ppi).astype(np.int32), 1)
    return mask


def _beside(cover: npt.NDArray[np.uint8], found: Detections) -> npt.NDArray[np.bool_]:
    """Each piece of ``found`` whose edge (its longer semi-axis from its centre) comes within BESIDE_COVER_IN of a
    pixel of ``cover`` (at COVER_PX_PER_IN): the cover proper, before it is grown over the pieces beside it."""
    if not len(found) or not cover.any():
        return np.zeros(len(found), bool)
    ppi = COVER_PX_PER_IN
    # Each pixel's distance to the nearest covered one, in inches.
    distance_in = cv2.distanceTransform((cover == 0).astype(np.uint8), cv2.DIST_L2, 5) / ppi
    h, w = cover.shape
    col = np.clip((np.asarray(found.x_in) * ppi).astype(np.int64), 0, w - 1)
    row = np.clip((np.asarray(found.y_in) * ppi).astype(np.int64), 0, h - 1)
    edge_in = np.maximum(np.asarray(found.a_in), np.asarray(found.b_in))
    return np.asarray(distance_in[row, col] - edge_in < BESIDE_COVER_IN, bool)


def _local_median(diff: npt.NDArray[np.float64], side_px: int) -> npt.NDArray[np.float64]:
    """Each channel's median over the ``side_px`` square round each pixel (differences, to 0.5 of a unit),
    taken on a view LIGHT_SHRINK times coarser (the light changes smoothly; a wide median is slow)."""
    h, w = diff.shape[:2]
    small = cv2.resize(diff.astype(np.float32), (max(1, w // LIGHT_SHRINK), max(1, h // LIGHT_SHRINK)), cv2.INTER_AREA)
    shifted = np.clip(np.round(small * 2 + 128), 0, 255).astype(np.uint8)
    side = max(3, min(side_px // LIGHT_SHRINK, 255) | 1)
    out = np.stack([cv2.medianBlur(np.ascontiguousarray(shifted[..., c]), side) for c in range(3)], axis=2)
    light = cv2.resize((out.astype(np.float32) - 128) / 2, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.asarray(light, np.float64)


def _accounted(found: Detections, frame: TableFrame, shape: tuple[int, int]) -> npt.NDArray[np.bool_]:
    """The pixels (at COVER_PX_PER_IN) the pieces found account for: each base's disc and figure, each marker."""
    ppi = COVER_PX_PER_IN
    mask = np.zeros(shape, np.uint8)
    foot = frame.camera_centre_in()
    slopes = frame.view_slope(np.c_[found.x_in, found.y_in]) if len(found) else None
    for k in range(len(found)):
        x, y = float(found.x_in[k]), float(found.y_in[k])
        reach = float(max(found.a_in[k], found.b_in[k])) + (
            FIGURE_MARGIN_IN if found.kind[k] == 0 else MARKER_MARGIN_IN
        )
        tip = (x, y)
        if found.kind[k] == 0 and foot is not None and slopes is not None:
            away = np.array([x - foot[0], y - foot[1]])
            norm = float(np.hypot(*away))
            if norm > 1e-6:
                lean = away / norm * FIGURE_HEIGHT_IN * float(slopes[k])
                tip = (x + float(lean[0]), y + float(lean[1]))
        radius_px = int(np.ceil(reach * ppi))
        ends = [(int(round(px * ppi)), int(round(py * ppi))) for px, py in ((x, y), tip)]
        cv2.circle(mask, ends[0], radius_px, 1, -1)
        cv2.circle(mask, ends[1], radius_px, 1, -1)
        cv2.line(mask, ends[0], ends[1], 1, 2 * radius_px)
    return mask.astype(bool)


def describe_beside(model_ids: list[str]) -> str:
    """What the players are told of the bases a scene says stand beside what covers the table
    (``measurement.beside_cover``)."""
    return (
        f"beside what covers the table, perhaps partly under it, check these bases (their places and sizes are "
        f"read from the part seen; rulings from them allow for it): {', '.join(model_ids)}"
    )


def describe(covered: dict[str, Any]) -> str:
    """What the players are told of one part of the table a scene says is covered (``measurement.covered``)."""
    x0, y0, x1, y1 = covered["box_in"]
    return (
        f'something covers {covered["area_sq_in"]:.0f} sq in of the table (x {x0:.1f}-{x1:.1f}", y {y0:.1f}-{y1:.1f}") '
        "that no piece found accounts for (a hand?): pieces under it cannot be seen"
    )
