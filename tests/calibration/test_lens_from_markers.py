"""A camera without a lens file: its lens's bend read from the calibration markers (calibration/lens_from_markers.py;
docs/calibration.md, session 57)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from calibration.fiducials import detect_markers
from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.lens_from_markers import lens_from_markers
from calibration.table_frame import TableFrame, calibrate, calibrate_from_corners
from vision.synth.camera import Camera
from vision.synth.table import WEBCAM_DISTORTION, render_table


def _corners(camera: Camera, layout: Layout, noise_px: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The layout's marker corners on the table, and as ``camera`` sees them, found to ``noise_px``."""
    table = np.concatenate([m.corners_in() for m in layout.markers])
    seen = camera.project(np.c_[table, np.zeros(len(table))])
    return table, seen + np.random.default_rng(seed).normal(0.0, noise_px, seen.shape)


def _map_miss_px(lens: LensModel, table: np.ndarray, seen: np.ndarray, camera: Camera) -> np.ndarray:
    """How far the map through ``lens`` (the corners undistorted, a homography through them, bent back) puts 81
    points across the table from where ``camera`` sees them."""
    H, _ = cv2.findHomography(table, lens.undistort_points(seen), 0)
    xs, ys = np.meshgrid(np.linspace(2, 42, 9), np.linspace(2, 58, 9))
    grid = np.c_[xs.ravel(), ys.ravel()]
    mapped = lens.distort_points(cv2.perspectiveTransform(grid.reshape(-1, 1, 2), H).reshape(-1, 2))
    return np.hypot(*(mapped - camera.project(np.c_[grid, np.zeros(len(grid))])).T)


def test_the_bend_of_a_webcams_lens_is_read_from_four_markers() -> None:
    """Forty views of a 44"x60" table, tilted 0-25 degrees, by the renderer's webcam (k1 -0.08) and by a lens that
    does not bend, corners found to 0.1 px: the map through the lens read from the markers meets the camera's own
    view of the table to half a pixel, where a plain homography misses by pixels. (Its k1 need not be the lens's:
    the focal length one view gives is rough, and k1 makes up for it.)"""
    layout = Layout.default(44.0, 60.0)
    rng = np.random.default_rng(57)
    plain = LensModel(np.eye(3), np.zeros(5), (1920, 1080))  # no bend: a plain homography
    for k in range(40):
        bend = (WEBCAM_DISTORTION[0], 0.0)[k % 2]
        camera = Camera.looking_at_table(
            (44.0, 60.0), (1920, 1080), float(rng.uniform(0, 25)), float(rng.uniform(-10, 10)), 70.0, (bend, 0, 0, 0, 0)
        )
        table, seen = _corners(camera, layout, 0.1, k)
        lens = lens_from_markers(table, seen, (1920, 1080))
        assert lens is not None and lens.std is not None and lens.std[4] > 0
        assert float(np.max(_map_miss_px(lens, table, seen, camera))) < 0.5, k
        if bend:
            assert float(np.max(_map_miss_px(plain, table, seen, camera))) > 2.0, k


def test_a_misread_marker_is_left_out_of_the_bend() -> None:
    """One marker's corners 1.5 px off (part of it hidden): the bend is read from the other three."""
    layout = Layout.default(44.0, 60.0)
    camera = Camera.looking_at_table((44.0, 60.0), (1920, 1080), 15.0, 5.0, 70.0, WEBCAM_DISTORTION)
    table, seen = _corners(camera, layout, 0.05, 1)
    misread = seen.copy()
    misread[4:8] += np.array([1.5, -1.0])  # marker 1
    lens = lens_from_markers(table, misread, (1920, 1080))
    assert lens is not None and float(np.max(_map_miss_px(lens, table, seen, camera))) < 0.5
    assert lens_from_markers(table[:8], seen[:8], (1920, 1080)) is None  # two markers: too few


def test_markers_shrunk_by_blur_do_not_bend_the_lens() -> None:
    """Blur rounds a black square's corners and ArUco finds them inside: on the path-traced tables every marker
    read about 0.27 px small, and the bend was read 20-30 % too strong (docs/calibration.md, session 58). With
    each marker's corners 0.3 and 0.6 px in, k1 (at the camera's focal length) is still read within 5 % of the
    lens's, and the map meets the camera's view to a tenth of a pixel."""
    layout = Layout.default(44.0, 60.0)
    camera = Camera.looking_at_table((44.0, 60.0), (1920, 1080), 15.0, 3.0, 65.0, (-0.08, 0, 0, 0, 0))
    table, seen = _corners(camera, layout, 0.05, 4)
    centres = seen.reshape(-1, 4, 2).mean(axis=1, keepdims=True)
    outward = seen.reshape(-1, 4, 2) - centres
    outward /= np.linalg.norm(outward, axis=2, keepdims=True)
    for shrink_px in (0.3, 0.6):
        shrunk = (seen.reshape(-1, 4, 2) - shrink_px * outward).reshape(-1, 2)
        lens = lens_from_markers(table, shrunk, (1920, 1080))
        assert lens is not None
        k1_at_true_f = float(lens.dist[0]) * (camera.K[0, 0] / lens.K[0, 0]) ** 2
        assert abs(k1_at_true_f / -0.08 - 1) < 0.05, (shrink_px, k1_at_true_f)
        assert float(np.max(_map_miss_px(lens, table, seen, camera))) < 0.15, shrink_px


def test_a_camera_square_on_to_the_table_has_its_bend_read_too() -> None:
    """A webcam straight over the table (tilt 0.3 degrees): the homography tells no focal length, and before session
    58 no bend was read, leaving 2-3 px. The bend in pixels needs none: it is read, the focal length comes from
    the webcams' prior, and its doubt (a share of about 0.3) is carried by the lens's covariance."""
    layout = Layout.default(44.0, 60.0)
    camera = Camera.looking_at_table((44.0, 60.0), (1920, 1080), 0.3, 3.0, 65.0, WEBCAM_DISTORTION)
    table, seen = _corners(camera, layout, 0.05, 3)
    lens = lens_from_markers(table, seen, (1920, 1080))
    assert lens is not None and lens.std is not None
    assert float(np.max(_map_miss_px(lens, table, seen, camera))) < 0.3
    assert 0.2 < lens.std[0] / lens.K[0, 0] <= 0.3


def test_without_a_lens_file_the_table_map_takes_the_bend_out_and_says_so() -> None:
    """Tuning table 06200 calibrated without the webcam's lens file: the map meets the camera's own projection
    of the table to a few tenths of a pixel, where a plain homography misses by pixels; its sigma covers what is
    left, and the players are told to calibrate the lens for the best accuracy."""
    table = render_table(6200, "grinding-annihilation")
    frame = calibrate(table.empty, table.layout, None)
    assert frame.lens is not None and frame.quality is not None
    assert any("read from the markers" in w for w in frame.quality.warnings)
    assert frame.focal_sigma_share < 0.01 and not any("focal length" in w for w in frame.quality.warnings)
    xs, ys = np.meshgrid(np.linspace(2, 42, 9), np.linspace(2, 58, 9))
    grid = np.c_[xs.ravel(), ys.ravel()]
    truth = table.camera.project(np.c_[grid, np.zeros(len(grid))])
    miss_px = np.hypot(*(frame.table_to_image(grid) - truth).T)
    found = detect_markers(table.empty)
    ids = sorted(found)
    H_plain, _ = cv2.findHomography(
        np.concatenate([table.layout.by_id()[i].corners_in() for i in ids]), np.concatenate([found[i] for i in ids]), 0
    )
    plain = cv2.perspectiveTransform(grid.reshape(-1, 1, 2), H_plain).reshape(-1, 2)  # as before: no bend out
    assert float(np.max(np.hypot(*(plain - truth).T))) > 1.5
    assert float(np.max(miss_px)) < 0.6 and float(np.median(miss_px)) < 0.3
    miss_in = miss_px * frame.inches_per_pixel(grid)
    assert float(np.mean(miss_in <= 2 * frame.quality.sigma_in)) >= 0.9


def test_a_square_on_table_map_has_a_pose_and_says_how_unsure_it_is(tmp_path: Path) -> None:
    """Calibrated without a lens file from a camera square-on to the table: before session 58 the map had no pose
    (bases' tops could not be put back over their feet, and walls could not be pulled in). Now it has one, from
    the webcams' prior focal length, with that doubt in ``focal_sigma_share`` (which a saved calibration keeps),
    and the players are told. A tilted view (tuning 06200, below) tells its focal length and says nothing."""
    layout = Layout.default(44.0, 60.0)
    camera = Camera.looking_at_table((44.0, 60.0), (1920, 1080), 0.2, 2.0, 65.0, WEBCAM_DISTORTION)
    found = {m.id: camera.project(np.c_[m.corners_in(), np.zeros(4)]) for m in layout.markers}
    frame = calibrate_from_corners(found, layout, (1920, 1080))
    assert frame.rvec is not None and 0.2 < frame.focal_sigma_share <= 0.3
    assert frame.quality is not None and any("cannot tell its focal length" in w for w in frame.quality.warnings)
    top = camera.project(np.array([[40.0, 55.0, -0.15]]))  # a base's top near a far corner (w = -z: up)
    foot = frame.image_to_table(top, 0.15)[0]
    assert np.hypot(*(foot - [40.0, 55.0])) < 0.015  # the parallax (0.05" there) put back, to within its doubt
    frame.save(tmp_path / "frame.json")
    assert TableFrame.load(tmp_path / "frame.json").focal_sigma_share == round(frame.focal_sigma_share, 5)
