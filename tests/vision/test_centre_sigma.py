"""Each centre's sigma: by how it was measured and, for refined bases, how obliquely the camera saw it."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from geometry.shapes import BASE_HEIGHT_IN, MM_PER_IN
from vision.analyze import analyze
from vision.camera_quality import camera_quality
from vision.centre_sigma import CENTRE_SIGMA_MM, SLOPE_SIGMA, centre_sigma_in
from vision.detect_learned import LearnedDetector
from vision.synth.table import render_table


def test_a_refined_base_seen_obliquely_is_less_sure() -> None:
    slopes = [0.0, 0.2, 0.45, 0.7]
    for how in ("refined", "oval refined"):
        sigma_mm = centre_sigma_in(np.array([how] * 4), np.array(slopes)) * MM_PER_IN
        at_foot, per_slope, from_slope = SLOPE_SIGMA[how]
        assert sigma_mm[0] == pytest.approx(at_foot)
        assert np.all(np.diff(sigma_mm[1:]) > 0)  # the further from the camera's foot, the less sure
        assert sigma_mm[3] == pytest.approx(math.hypot(at_foot, (0.7 - from_slope) * per_slope))
        # No camera pose: the one sigma measured over all slopes.
        assert centre_sigma_in(np.array([how]))[0] * MM_PER_IN == pytest.approx(CENTRE_SIGMA_MM[how])
    # Others are measured by class alone (too few pieces to tell slopes apart).
    other = centre_sigma_in(np.array(["refined, partial", "marker box"]), np.array([0.7, 0.7])) * MM_PER_IN
    assert other == pytest.approx([CENTRE_SIGMA_MM["refined, partial"], CENTRE_SIGMA_MM["marker box"]])


def test_a_centre_measured_an_unknown_way_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'guessed'"):
        centre_sigma_in(np.array(["refined", "guessed"]), np.array([0.1, 0.1]))


def test_the_scene_gives_each_refined_base_the_sigma_of_its_view() -> None:
    """On a rendered table with a tilted camera: each refined base's sigma_in is the calibration's and the
    measuring's at that base's own view slope, so bases far from the camera's foot are reported less sure."""
    table = render_table(5000, "grinding-annihilation")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    game = "grinding-annihilation"
    result = analyze(table.image, table.layout, table.empty, frame, lens, game, detector=LearnedDetector())
    how = result.detections.measured_by[result.detections.kind == 0]
    models = result.scene["models"]
    refined = [k for k in range(len(models)) if how[k] == "refined"]
    assert len(refined) >= 5
    xy = np.array([[models[k]["x"], models[k]["y"]] for k in refined])
    slope = frame.view_slope(xy)
    assert slope is not None and np.ptp(slope) > 0.1
    calib_in = result.scene["measurement"]["calibration_error_in"]
    at_foot, per_slope, _ = SLOPE_SIGMA["refined"]
    # ...and what this photo's camera adds (vision/camera_quality.py: the renderer's blur reads up to 1.12 here)
    camera = camera_quality(table.image, frame).added_sigma_in(frame.inches_per_pixel(xy))
    expected = np.hypot(np.hypot(calib_in, np.hypot(at_foot, per_slope * slope) / MM_PER_IN), camera)
    reported = np.array([models[k]["sigma_in"] for k in refined])
    assert np.allclose(reported, expected, atol=2e-5)  # the scene rounds to 5 decimals
    assert reported[np.argmax(slope)] > reported[np.argmin(slope)]


def test_a_focal_length_the_markers_cannot_tell_makes_every_bases_parallax_less_sure() -> None:
    """A camera without a lens file looking almost straight down: the markers cannot tell its focal length, so the
    parallax put back at each base's top (its height times the view's slope) is as unsure as that focal length
    (calibration/focal_from_markers.py). The scene's sigma says so: each base's grows by height x slope x share,
    most where the camera sees the table most obliquely; with a sure focal length it is as before."""
    table = render_table(5000, "grinding-annihilation")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    game = "grinding-annihilation"
    detector = LearnedDetector()
    sure = analyze(table.image, table.layout, table.empty, frame, lens, game, detector=detector).scene["models"]
    unsure_frame = dataclasses.replace(frame, focal_sigma_share=0.3)
    unsure = analyze(table.image, table.layout, table.empty, unsure_frame, lens, game, detector=detector).scene[
        "models"
    ]
    assert len(sure) == len(unsure) >= 10
    xy = np.array([[m["x"], m["y"]] for m in sure])
    slope = frame.view_slope(xy)
    assert slope is not None
    z = np.array([m.get("z", 0.0) for m in sure])
    expected = np.hypot([m["sigma_in"] for m in sure], (z + BASE_HEIGHT_IN) * slope * 0.3)
    assert np.allclose([m["sigma_in"] for m in unsure], expected, atol=2e-5)
    assert float(np.max(expected - [m["sigma_in"] for m in sure])) > 0.002  # about 0.05 mm or more where oblique
