"""The lens's barrel read from the calibration markers themselves, for a camera without a lens file.

A webcam's lens bends straight lines; without `tablesight calibrate-lens` the table map is a plain homography
and leaves that bend in: on tuning tables 6200-6259 (the renderer's webcam, k1 -0.08) base centres were off by
1.75 mm (median) and 3.37 mm (p95), and only 48 % of the errors lay within 2 reported sigma (docs/calibration.md,
session 57). The markers' 12-24 corners are found to a tenth of a pixel, and a homography cannot fit all of them
through a bent view: one radial term k1 (the principal point at the photo's centre) is the one that brings them
back onto a plane, each marker allowed to read evenly a little large or small. Its sigma comes from how sharply
the fit's residual rises either side, and goes into the calibration's sigma as a lens file's does. The focal
length comes from the markers too, with the bend taken out (calibration/focal_from_markers.py).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from calibration.focal_from_markers import centred_intrinsics, focal_from_markers
from calibration.least import least_on_grid
from calibration.lens import LensModel

FloatArray = npt.NDArray[np.float64]

MIN_CORNERS = 12  # three markers: two leave the homography's 8 parameters too little to tell a bend from
K1_RANGE = (-0.5, 0.3)  # barrel to mild pincushion, at REFERENCE_FOCAL_WIDTHS; webcams sit well inside
# The bend in pixels depends on k1 / f^2 alone, so k1 is searched at a fixed focal length and scaled to the one the
# markers give: a homography's focal length was 1.5-3.8 times too long for views nearly square-on (tuning 06218,
# 06224), and a range at that focal length cut the bend short (06224 read -0.52, the range's end).
REFERENCE_FOCAL_WIDTHS = 0.8
K1_STEP = 0.02  # the coarse search's step, then refined to K1_TOLERANCE
K1_TOLERANCE = 1e-4
SWELLING_ROUNDS = 4  # the swellings change by 1e-4 px or less in the third (path-traced 07600, tuning 06209)
MIN_CORNER_NOISE_PX = 0.05  # a fit tighter than this is luck: the sigma of k1 does not shrink below it
# A marker misread: leaving it out fits the rest this many times better (rendered tables fit to 0.03-0.15 px),
# looked for only where all of them miss by more than MIN_OUTLIER_RMS_PX
OUTLIER_FACTOR = 3.0
MIN_OUTLIER_RMS_PX = 0.2
# The least sigma of k1, as a share of it: one radial term and a centred principal point are a rough lens. Read
# with the markers' swelling, k1 varies by 4-6 % from photo to photo on the tuning and path-traced tables (at the
# same focal length); 0.1 left 99.1 % of tuning 6200-6259's centre errors within 2 sigma, 0.25 99.6 %, none 98.9 %
# (docs/calibration.md, session 58).
MODEL_SIGMA_SHARE = 0.1


def _residual_px2(k1: float, K: FloatArray, table_pts: FloatArray, raw_px: FloatArray) -> float:
    """The sum of squared misses (px^2) of the best homography through the corners undistorted with ``k1``, each
    marker allowed an even swelling of its own (the mean outward move of its four corners).

    Blur rounds a black square's corners, and ArUco finds them inside: path-traced table 07600's four markers
    read 0.24-0.29 px small, flat tuning 06209's 0.11-0.21 px. A bend shrinks far markers against near ones, so a
    fit without the swelling read the path-traced lenses 20-30 % more bent than their lens file (docs/calibration.md,
    session 58)."""
    ideal = cv2.undistortPoints(raw_px.reshape(-1, 1, 2), K, np.array([k1, 0.0, 0.0, 0.0, 0.0]), P=K).reshape(-1, 2)
    markers = len(ideal) // 4
    outward = ideal.reshape(markers, 4, 2) - ideal.reshape(markers, 4, 2).mean(axis=1, keepdims=True)
    outward = (outward / np.linalg.norm(outward, axis=2, keepdims=True)).reshape(-1, 2)
    target = ideal
    for _ in range(SWELLING_ROUNDS):  # the homography and the swellings, in turn
        H, _ = cv2.findHomography(table_pts, target, 0)
        if H is None:
            return math.inf
        fitted = cv2.perspectiveTransform(table_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
        swelling_px = np.sum((ideal - fitted) * outward, axis=1).reshape(markers, 4).mean(axis=1)
        target = ideal - np.repeat(swelling_px, 4)[:, None] * outward
    return float(np.sum((target - fitted) ** 2))


def _fit_k1(K: FloatArray, table_pts: FloatArray, raw_px: FloatArray) -> tuple[float, float, float]:
    """k1, its sigma, and the corners' rms miss (px) of the best fit through them."""

    def sse(k1: float) -> float:
        return _residual_px2(k1, K, table_pts, raw_px)

    k1 = least_on_grid(sse, np.arange(K1_RANGE[0], K1_RANGE[1] + 1e-9, K1_STEP), K1_TOLERANCE)
    least = sse(k1)
    # Near its least, sum = least + c (k - k1)^2 with c the corners' information on k1 (the homography refitted
    # at each k); the corners' noise from the misses left over.
    step = 0.005
    c = (sse(k1 + step) + sse(k1 - step) - 2 * least) / (2 * step**2)
    free = 2 * len(table_pts) - 9 - len(table_pts) // 4  # coordinates less the homography, k1 and the swellings
    noise_px2 = max(least / max(free, 1), MIN_CORNER_NOISE_PX**2)
    sigma_k1 = math.sqrt(noise_px2 / c) if c > 0 else abs(k1) + K1_STEP
    return k1, sigma_k1, math.sqrt(least / len(table_pts))


def lens_from_markers(table_pts: FloatArray, raw_px: FloatArray, image_size: tuple[int, int]) -> LensModel | None:
    """A one-term radial lens that puts the markers' corners ``raw_px`` (as found, bent; four a marker, in order) on
    the plane of ``table_pts``, with the principal point at the photo's centre and the focal length the markers
    give (calibration/focal_from_markers.py). Its covariance holds k1's sigma, and the focal length's sigma moving
    k1 with it (the same bend in pixels: the focal length's doubt is the pose's, not the map's). None with fewer
    than MIN_CORNERS corners.

    One marker whose corners were misread (part hidden by terrain in the empty table: tuning table 06233) bends
    the fit to itself: with four or more, where leaving one out fits the rest OUTLIER_FACTOR times better, k1 is
    taken from the rest."""
    if len(table_pts) < MIN_CORNERS:
        return None
    table_pts, raw_px = np.asarray(table_pts, np.float64), np.asarray(raw_px, np.float64)
    f_ref = REFERENCE_FOCAL_WIDTHS * image_size[0]
    K_ref = centred_intrinsics(f_ref, image_size)
    k1, sigma_k1, rms_px = _fit_k1(K_ref, table_pts, raw_px)
    rows = np.arange(len(table_pts))
    markers = len(table_pts) // 4
    if markers >= 4 and rms_px > MIN_OUTLIER_RMS_PX:
        rest = [np.delete(rows, np.arange(4 * m, 4 * m + 4)) for m in range(markers)]
        fits = [(_fit_k1(K_ref, table_pts[kept], raw_px[kept]), kept) for kept in rest]
        best, kept = min(fits, key=lambda fit: fit[0][2])
        if best[2] * OUTLIER_FACTOR < rms_px:
            (k1, sigma_k1, rms_px), rows = best, kept
    ideal = cv2.undistortPoints(raw_px.reshape(-1, 1, 2), K_ref, np.array([k1, 0.0, 0.0, 0.0, 0.0]), P=K_ref)
    noise_px = max(rms_px / math.sqrt(2), MIN_CORNER_NOISE_PX)  # per axis
    f_px, f_share = focal_from_markers(table_pts[rows], ideal.reshape(-1, 2)[rows], image_size, noise_px)
    scale = (f_px / f_ref) ** 2  # the same bend at the markers' focal length
    k1, sigma_k1 = k1 * scale, sigma_k1 * scale
    # One radial term and a centred principal point are a rough lens: its sigma is at least a share of its bend.
    sigma_k1 = max(sigma_k1, MODEL_SIGMA_SHARE * abs(k1))
    sigma_f = f_share * f_px
    along_f = np.array([sigma_f, sigma_f, 0.0, 0.0, 2.0 * k1 * f_share, 0.0, 0.0, 0.0])
    cov = np.outer(along_f, along_f)
    cov[4, 4] += sigma_k1**2
    return LensModel(
        centred_intrinsics(f_px, image_size),
        np.array([k1, 0.0, 0.0, 0.0, 0.0]),
        image_size,
        rms_px=rms_px,
        views=0,
        std=tuple(float(v) for v in np.sqrt(np.diag(cov))),
        cov=tuple(tuple(float(v) for v in row) for row in cov),
    )
