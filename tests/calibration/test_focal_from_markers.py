"""The focal length read from the calibration markers, for a camera without a lens file
(calibration/focal_from_markers.py; docs/calibration.md, session 58)."""

from __future__ import annotations

import math

import numpy as np

from calibration.focal_from_markers import PRIOR_FOCAL_WIDTHS, PRIOR_SIGMA_LOG, focal_from_markers
from calibration.layout import Layout
from vision.synth.camera import Camera

SIZE = (1920, 1080)


def _corners(tilt_deg: float, hfov_deg: float, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A 44"x60" table's marker corners, as a pinhole camera sees them (found to 0.05 px), and its focal length."""
    camera = Camera.looking_at_table((44.0, 60.0), SIZE, tilt_deg, 4.0, hfov_deg, (0, 0, 0, 0, 0))
    table = np.concatenate([m.corners_in() for m in Layout.default(44.0, 60.0).markers])
    seen = camera.project(np.c_[table, np.zeros(len(table))])
    return table, seen + np.random.default_rng(seed).normal(0.0, 0.05, seen.shape), float(camera.K[0, 0])


def test_a_tilted_view_tells_the_focal_length_to_a_percent_whatever_the_lens() -> None:
    """Views tilted 8-25 degrees by lenses of 50-95 degrees: the markers alone give the focal length within 2 %,
    and say they are sure of it (the prior, centred on 70 degrees, does not pull it)."""
    rng = np.random.default_rng(58)
    for k in range(12):
        hfov = float(rng.uniform(50, 95))
        table, seen, f_true = _corners(float(rng.uniform(8, 25)), hfov, k)
        f_px, share = focal_from_markers(table, seen, SIZE, 0.05)
        assert abs(math.log(f_px / f_true)) < 0.02, (k, hfov, f_px, f_true)
        assert share < 0.05, (k, share)


def test_a_square_on_view_takes_the_webcams_prior_and_says_how_unsure_it_is() -> None:
    """A camera square-on to the table (tilt 0.2 degrees) cannot tell its focal length from one view: the answer is
    near the prior's, with the prior's sigma, and the true focal lengths of 55-85 degree webcams lie within 2 sigma
    of it. Before session 58 such a view gave no focal length, or one 1.5-3.8 times too long."""
    for k, hfov in enumerate((55.0, 65.0, 75.0, 85.0)):
        table, seen, f_true = _corners(0.2, hfov, k)
        f_px, share = focal_from_markers(table, seen, SIZE, 0.05)
        assert share > 0.2, (hfov, share)
        assert abs(math.log(f_px / (PRIOR_FOCAL_WIDTHS * SIZE[0]))) < 0.1, (hfov, f_px)
        assert abs(math.log(f_px / f_true)) < 2 * share, (hfov, f_px, f_true, share)
        assert share <= PRIOR_SIGMA_LOG
