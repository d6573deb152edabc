"""The camera's focal length from the calibration markers alone, for a camera without a lens file, and how sure it is.

The focal length (with the table's map) gives the camera's pose, and the pose puts each base's top, seen 0.15"
above the table and moved away from the camera's foot by parallax, back over its foot. A tilted view tells the
focal length to a percent; a view nearly square-on to the table cannot tell it at all: the same photo is taken
from twice as high with twice the focal length. A homography's formula then gave focal lengths 1.5-3.8 times too
long on held-out tables tilted under a degree (05031, 05094), or none (docs/calibration.md, session 58).

So the focal length is the most likely one given the markers' corners (the pose refitted at each) and what
webcams have: a prior centred on a 70 degree horizontal field of view (a C920 or a phone's main camera), a
factor of 1.35 either way at one sigma, wide enough for 48-100 degrees at two. Where the corners decide, the prior
changes nothing; where they cannot, the focal length comes from the prior, with the prior's sigma, and the bases'
sigmas say so (vision/analyze.py).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from calibration.least import least_on_grid

FloatArray = npt.NDArray[np.float64]

PRIOR_FOCAL_WIDTHS = 0.71  # f / image width of a 70 degree horizontal field of view
PRIOR_SIGMA_LOG = 0.3  # of ln f
SEARCH_WIDTHS = (0.25, 4.0)  # f / image width: a 127 degree to a 14 degree field of view
COARSE_STEPS = 33
TOLERANCE_LOG = 1e-4
CURVATURE_STEP_LOG = 0.01


def centred_intrinsics(f_px: float, image_size: tuple[int, int]) -> FloatArray:
    """The camera matrix of focal length ``f_px`` (square pixels) with the principal point at the photo's centre."""
    w, h = image_size
    return np.array([[f_px, 0.0, (w - 1) / 2], [0.0, f_px, (h - 1) / 2], [0.0, 0.0, 1.0]])


def _sse_px2(f_px: float, table_xyz: FloatArray, ideal_px: FloatArray, image_size: tuple[int, int]) -> float:
    """The corners' squared misses (px^2) of the best pose at focal length ``f_px``."""
    K = centred_intrinsics(f_px, image_size)
    # IPPE: the planar pose, both of its mirror solutions weighed; then refined by Levenberg-Marquardt.
    ok, rvec, tvec = cv2.solvePnP(table_xyz, ideal_px, K, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        return math.inf
    ok, rvec, tvec = cv2.solvePnP(table_xyz, ideal_px, K, None, rvec, tvec, True, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        return math.inf
    seen, _ = cv2.projectPoints(table_xyz, rvec, tvec, K, None)
    return float(np.sum((seen.reshape(-1, 2) - ideal_px) ** 2))


def focal_from_markers(
    table_pts: FloatArray, ideal_px: FloatArray, image_size: tuple[int, int], noise_px: float
) -> tuple[float, float]:
    """The focal length (px) most likely given the corners ``ideal_px`` (the lens's bend taken out) of the table
    points ``table_pts`` (inches), found to ``noise_px`` per axis, with the principal point at the photo's centre;
    and its sigma, as a share of it (at most PRIOR_SIGMA_LOG: where the markers tell nothing)."""
    table_xyz = np.c_[np.asarray(table_pts, np.float64), np.zeros(len(table_pts))]
    ideal = np.asarray(ideal_px, np.float64).reshape(-1, 2)
    w = image_size[0]
    prior_log = math.log(PRIOR_FOCAL_WIDTHS * w)

    def cost(log_f: float) -> float:  # minus the log posterior
        misses = _sse_px2(math.exp(log_f), table_xyz, ideal, image_size) / (2 * noise_px**2)
        return misses + (log_f - prior_log) ** 2 / (2 * PRIOR_SIGMA_LOG**2)

    grid = np.linspace(math.log(SEARCH_WIDTHS[0] * w), math.log(SEARCH_WIDTHS[1] * w), COARSE_STEPS)
    log_f = least_on_grid(cost, grid, TOLERANCE_LOG)
    step = CURVATURE_STEP_LOG
    curvature = (cost(log_f + step) + cost(log_f - step) - 2 * cost(log_f)) / step**2
    sigma_log = 1.0 / math.sqrt(curvature) if curvature > 0 else PRIOR_SIGMA_LOG
    return math.exp(log_f), min(sigma_log, PRIOR_SIGMA_LOG)
