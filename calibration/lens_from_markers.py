"""The lens's barrel read from the calibration markers themselves, for a camera without a lens file.

A webcam's lens bends straight lines; without `tablesight calibrate-lens` the table map is a plain homography
and leaves that bend in: on tuning tables 6200-6259 (the renderer's webcam, k1 -0.08) base centres were off by
1.75 mm (median) and 3.37 mm (p95), and only 48 % of the errors lay within 2 reported sigma (docs/calibration.md,
session 57). The markers' 12-24 corners are found to a tenth of a pixel, and a homography cannot fit all of them
through a bent view: one radial term k1 (with the focal length the homography gives and the principal point at the
photo's centre) is the one that brings them back onto a plane. Its sigma comes from how sharply the fit's residual
rises either side, and goes into the calibration's sigma as a lens file's does.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from calibration.lens import LensModel

FloatArray = npt.NDArray[np.float64]

MIN_CORNERS = 12  # three markers: two leave the homography's 8 parameters too little to tell a bend from
K1_RANGE = (-0.5, 0.3)  # barrel to mild pincushion; webcams sit well inside
K1_STEP = 0.02  # the coarse search's step, then refined to K1_TOLERANCE
K1_TOLERANCE = 1e-4
MIN_CORNER_NOISE_PX = 0.05  # a fit tighter than this is luck: the sigma of k1 does not shrink below it
# A marker misread: leaving it out fits the rest this many times better (rendered tables fit to 0.03-0.15 px),
# looked for only where all of them miss by more than MIN_OUTLIER_RMS_PX
OUTLIER_FACTOR = 3.0
MIN_OUTLIER_RMS_PX = 0.2
# The least sigma of k1, as a share of it: on the path-traced tables 7600-7629 the markers read the lens 20-30 %
# more bent than its lens file
MODEL_SIGMA_SHARE = 0.25


def _residual_px2(k1: float, K: FloatArray, table_pts: FloatArray, raw_px: FloatArray) -> float:
    """The sum of squared misses (px^2) of the best homography through the corners undistorted with ``k1``."""
    ideal = cv2.undistortPoints(raw_px.reshape(-1, 1, 2), K, np.array([k1, 0.0, 0.0, 0.0, 0.0]), P=K).reshape(-1, 2)
    H, _ = cv2.findHomography(table_pts, ideal, 0)
    if H is None:
        return math.inf
    fitted = cv2.perspectiveTransform(table_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
    return float(np.sum((fitted - ideal) ** 2))


def _fit_k1(K: FloatArray, table_pts: FloatArray, raw_px: FloatArray) -> tuple[float, float, float]:
    """k1, its sigma, and the corners' rms miss (px) of the best fit through them."""

    def sse(k1: float) -> float:
        return _residual_px2(k1, K, table_pts, raw_px)

    grid = np.arange(K1_RANGE[0], K1_RANGE[1] + 1e-9, K1_STEP)
    best = float(grid[int(np.argmin([sse(float(k)) for k in grid]))])
    lo, hi = best - K1_STEP, best + K1_STEP  # golden-section search in the coarse minimum's bracket
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = sse(a), sse(b)
    while hi - lo > K1_TOLERANCE:
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = sse(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = sse(b)
    k1 = (lo + hi) / 2
    least = sse(k1)
    # Near its least, sum = least + c (k - k1)^2 with c the corners' information on k1 (the homography refitted
    # at each k); the corners' noise from the misses left over (2n coordinates less 8 + 1 parameters).
    step = 0.005
    c = (sse(k1 + step) + sse(k1 - step) - 2 * least) / (2 * step**2)
    noise_px2 = max(least / max(2 * len(table_pts) - 9, 1), MIN_CORNER_NOISE_PX**2)
    sigma_k1 = math.sqrt(noise_px2 / c) if c > 0 else abs(k1) + K1_STEP
    return k1, sigma_k1, math.sqrt(least / len(table_pts))


def lens_from_markers(
    table_pts: FloatArray, raw_px: FloatArray, image_size: tuple[int, int], K: FloatArray | None
) -> LensModel | None:
    """A one-term radial lens (k1, with its sigma in ``std``) that puts the markers' corners ``raw_px`` (as found,
    bent; four a marker, in order) on the plane of ``table_pts``; ``K``: the intrinsics the homography gives. None
    with fewer than MIN_CORNERS corners or no ``K``.

    One marker whose corners were misread (part hidden by terrain in the empty table: tuning table 06233) bends
    the fit to itself: with four or more, where leaving one out fits the rest OUTLIER_FACTOR times better, k1 is
    taken from the rest."""
    if K is None or len(table_pts) < MIN_CORNERS:
        return None
    table_pts, raw_px = np.asarray(table_pts, np.float64), np.asarray(raw_px, np.float64)
    k1, sigma_k1, rms_px = _fit_k1(K, table_pts, raw_px)
    markers = len(table_pts) // 4
    if markers >= 4 and rms_px > MIN_OUTLIER_RMS_PX:
        rest = [np.delete(np.arange(len(table_pts)), np.arange(4 * m, 4 * m + 4)) for m in range(markers)]
        fits = [_fit_k1(K, table_pts[rows], raw_px[rows]) for rows in rest]
        best = min(fits, key=lambda fit: fit[2])
        if best[2] * OUTLIER_FACTOR < rms_px:
            k1, sigma_k1, rms_px = best
    # One radial term, a focal length from one view and a centred principal point are a rough lens: its sigma is
    # at least a share of its bend (the corners' noise alone gave sigmas that held for 48 -> 81 % of path-traced
    # centres; docs/calibration.md, session 57).
    sigma_k1 = max(sigma_k1, MODEL_SIGMA_SHARE * abs(k1))
    return LensModel(
        np.asarray(K, np.float64).copy(),
        np.array([k1, 0.0, 0.0, 0.0, 0.0]),
        image_size,
        rms_px=rms_px,
        views=0,
        std=(0.0, 0.0, 0.0, 0.0, sigma_k1, 0.0, 0.0, 0.0),
    )
