"""Table calibration on rendered photos with known ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import calibration.monitor
from calibration.layout import Layout, LayoutError, MarkerPlacement
from calibration.lens import LensError, LensModel
from calibration.monitor import CalibrationMonitor, max_remap_in, refined_place
from calibration.table_frame import CalibrationError, TableFrame, calibrate
from tests.calibration.conftest import DISTORTION, SIZE, TABLE, photograph
from vision.synth.camera import Camera

LAYOUT = Layout.default(*TABLE)


def real_error_in(frame: TableFrame, camera: Camera, rng: np.random.Generator, z_in: float = 0.0) -> float:
    pts = rng.uniform([0, 0], TABLE, (3000, 2))
    truth_px = camera.project(np.c_[pts, np.full(len(pts), -z_in)])
    return float(np.sqrt(np.mean((frame.image_to_table(truth_px, z_in) - pts) ** 2)))


def hand_over_marker_0(photo: np.ndarray, camera: Camera) -> None:
    """A dark hand over marker 0 (at 1.5", 1.5"): hidden from the calibration."""
    centre = camera.project([[1.5, 1.5, 0.0]])[0]
    cv2.circle(photo, (int(centre[0]), int(centre[1])), 70, (30, 30, 30), -1)


def wedge_over_corner(photo: np.ndarray, camera: Camera, marker_id: int) -> None:
    """A grey wedge over one corner of a marker, as a terrain box's wall stands over its edge: ArUco still finds
    the marker, its outline bent."""
    m = LAYOUT.by_id()[marker_id]
    x, y = m.x_in + m.size_in / 2, m.y_in + m.size_in / 2
    wedge = np.array([[x - 0.6, y + 0.3], [x + 0.3, y + 0.3], [x + 0.3, y - 0.6]])
    cv2.fillPoly(photo, [camera.project(np.c_[wedge, np.zeros(3)]).astype(np.int32)], (70, 70, 70))


def test_accuracy_2ft_table_1080p_with_a_calibrated_lens(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    # Issue target: RMS <= 0.02" on a 2'x2' table at 1080p; reported sigma close to the real error.
    frame = calibrate(photograph(true_camera, texture), LAYOUT, estimated_lens)
    error = real_error_in(frame, true_camera, np.random.default_rng(1))
    assert frame.quality is not None
    assert error <= 0.02
    assert 1 / 3 <= frame.quality.sigma_mean_in / error <= 3
    assert frame.quality.markers_missing == ()


def test_lens_calibration_recovers_the_focal_length(true_camera: Camera, estimated_lens: LensModel) -> None:
    assert abs(estimated_lens.K[0, 0] - true_camera.K[0, 0]) / true_camera.K[0, 0] < 0.01
    assert estimated_lens.rms_px < 0.5
    assert estimated_lens.std is not None and len(estimated_lens.std) == 8


def test_the_lens_fit_leaves_out_decentring_unless_asked() -> None:
    """A webcam's lens barely decentres; fitted from 14 board views, p1 and p2 trade off against the
    principal point. Seed 6040's views (tuning table set) moved it 10 px with them; without them it stays
    within 3 px, and the fit is hardly worse (docs/calibration.md, session 18)."""
    from calibration.lens import calibrate_lens
    from vision.synth.charuco_views import charuco_views
    from vision.synth.table import WEBCAM_DISTORTION, WEBCAM_HFOV_DEG

    K = Camera.looking_at_table((24.0, 24.0), (1920, 1080), hfov_deg=WEBCAM_HFOV_DEG).K
    views = charuco_views(K, WEBCAM_DISTORTION, (1920, 1080), 14, np.random.default_rng(6040))
    plain, _ = calibrate_lens(views)
    decentred, _ = calibrate_lens(views, tangential=True)
    assert plain.dist[2] == plain.dist[3] == 0.0 and decentred.dist[2] != 0.0
    assert plain.cov is not None and all(v == 0.0 for v in plain.cov[6] + plain.cov[7])
    assert plain.cov[2][2] > 0.0  # the principal point's variance is still reported
    assert abs(plain.K[0, 2] - K[0, 2]) < 3.0 < abs(decentred.K[0, 2] - K[0, 2])
    assert plain.rms_px < 1.02 * decentred.rms_px


def test_points_above_the_table_land_where_they_stand(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    # A model on a 3" hill: its pixel mapped at z = 3 must give its true table position (parallax).
    frame = calibrate(photograph(true_camera, texture), LAYOUT, estimated_lens)
    assert real_error_in(frame, true_camera, np.random.default_rng(4), z_in=3.0) < 0.03
    flat = frame.image_to_table(true_camera.project([[12.0, 4.0, -3.0]]))[0]
    assert np.hypot(*(flat - [12.0, 4.0])) > 0.3  # ignoring the height would be wrong by this much
    back = frame.table_to_image([[12.0, 4.0]], z_in=3.0)
    assert np.allclose(back, true_camera.project([[12.0, 4.0, -3.0]]), atol=1.0)


def test_a_base_top_maps_as_the_flat_map_does_with_a_marker_hidden_and_a_lens_file_a_little_off(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    """A point above the table is found along the ray from the camera's centre through the flat map's point, so
    just above the table the map is the flat map's, and a base's top (0.15") is as sure as the flat map. The
    pose's own rays stray from the flat map where the lens file's centre is a little off and a marker is hidden:
    fresh table 59027 (marker 1 behind a terrain box) had every base 1-1.5 mm off that way (docs/calibration.md,
    session 59)."""
    photo = photograph(true_camera, texture)
    hand_over_marker_0(photo, true_camera)
    off = estimated_lens.perturbed([0, 0, 4.0, -3.0, 0, 0, 0, 0])  # a lens file's centre 4 and 3 px off
    frame = calibrate(photo, LAYOUT, off)
    assert frame.quality is not None and frame.quality.markers_missing == (0,)
    px = true_camera.project([[12.0, 12.0, 0.0], [20.0, 3.0, 0.0]])
    assert np.allclose(frame.image_to_table(px, 1e-4), frame.image_to_table(px), atol=1e-4)
    flat_error_in = real_error_in(frame, true_camera, np.random.default_rng(5))
    top_error_in = real_error_in(frame, true_camera, np.random.default_rng(5), z_in=0.15)
    assert top_error_in < 1.5 * flat_error_in + 0.002
    assert top_error_in < 0.01  # a quarter of a millimetre


def test_the_camera_is_found_where_it_stands(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    """The calibrated pose puts the camera where the renderer stood it, and says how obliquely it sees each
    point: the tangent of the ray's angle from the vertical (the base sigma grows with it)."""
    frame = calibrate(photograph(true_camera, texture), LAYOUT, estimated_lens)
    truth = -true_camera.R.T @ true_camera.t  # (x, y, w), w = -height
    found = frame.camera_centre_in()
    assert found is not None
    assert np.allclose(found, [truth[0], truth[1], -truth[2]], atol=0.01 * -truth[2])
    points = np.array([[truth[0], truth[1]], [12.0, 12.0], [0.0, 24.0]])
    expected = np.hypot(points[:, 0] - truth[0], points[:, 1] - truth[1]) / -truth[2]
    slope = frame.view_slope(points)
    assert slope is not None
    assert slope[0] == pytest.approx(0.0, abs=0.01)
    assert np.allclose(slope, expected, atol=0.01)
    assert slope[2] > slope[1] > 0.2  # 18 degrees of tilt: the table's middle is seen at tan 18 = 0.32
    flat = TableFrame(frame.H, frame.layout, frame.image_size)  # a homography alone: no pose, no slope
    assert flat.camera_centre_in() is None and flat.view_slope(points) is None


def test_round_trip_and_rectify(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel, tmp_path: Path
) -> None:
    photo = photograph(true_camera, texture)
    frame = calibrate(photo, LAYOUT, estimated_lens)
    pts = np.array([[1.0, 1.0], [12.0, 12.0], [23.0, 20.0]])
    assert np.allclose(frame.image_to_table(frame.table_to_image(pts)), pts, atol=1e-6)
    top = frame.rectify(photo, 20.0)
    assert top.shape[:2] == (480, 480)
    # The top-down view matches the table's own texture, pixel for pixel.
    border = int(2.0 * 160)
    truth = cv2.resize(
        texture[border : border + 24 * 160, border : border + 24 * 160], (480, 480), interpolation=cv2.INTER_AREA
    )
    gray = cv2.cvtColor(top, cv2.COLOR_BGR2GRAY) if top.ndim == 3 else top
    _, best, _, (x, y) = cv2.minMaxLoc(cv2.matchTemplate(truth, gray[20:460, 20:460], cv2.TM_CCOEFF_NORMED))
    assert best > 0.9 and (x, y) == (20, 20)
    frame.save(tmp_path / "c.json")
    again = TableFrame.load(tmp_path / "c.json")
    assert np.allclose(again.image_to_table(frame.table_to_image(pts)), pts, atol=1e-6)


def test_parts_of_the_view_made_at_once_are_each_the_part_rectify_makes(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    """``rectify_regions`` (the base refiner's crops, all mapped at once: docs/detector.md, session 74) gives each
    part to the bit as ``rectify`` makes it alone, and each part is that piece of the whole view: parts of every
    size, reaching off the table or not, at either scale."""
    photo = photograph(true_camera, texture)
    frame = calibrate(photo, LAYOUT, estimated_lens)
    rng = np.random.default_rng(74)
    for px_per_in in (12.8, 20.0):
        regions = [(int(x), int(y), int(w), int(h)) for x, y, w, h in rng.integers([-40, -40, 1, 1], 400, (30, 4))]
        regions += [(0, 0, 96, 96), (100, 50, 8, 8), (30, 30, 1, 1)]
        parts = frame.rectify_regions(photo, px_per_in, regions)
        assert len(parts) == len(regions)
        for (x0, y0, w, h), part in zip(regions, parts, strict=True):
            assert part.shape[:2] == (h, w)
            assert np.array_equal(part, frame.rectify(photo, px_per_in, (x0, y0, w, h)))
        whole = frame.rectify(photo, px_per_in)
        inside = (150, 120, 96, 64)  # well inside the table: the map interpolated from another grid, within 1 grey
        part = frame.rectify(photo, px_per_in, inside).astype(int)
        assert np.abs(part - whole[120:184, 150:246].astype(int)).max() <= 1
    assert frame.rectify_regions(photo, 20.0, []) == []


def test_a_marker_bent_by_something_over_its_edge_is_said_to_be_so_not_moved(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    """A terrain box's wall over a marker's corner bends the outline ArUco reads (held-out 05086: 12 px). Its
    corners then disagree with the map, and the players were told the marker was moved or the layout wrong; they
    are now told its outline looks bent, which clearing its edge mends (docs/calibration.md, session 59)."""
    photo = photograph(true_camera, texture)
    wedge_over_corner(photo, true_camera, 1)
    frame = calibrate(photo, LAYOUT, estimated_lens)
    assert frame.quality is not None
    bent = [w for w in frame.quality.warnings if "marker 1" in w]
    assert len(bent) == 1 and "looks bent" in bent[0] and "moved" not in bent[0]
    assert real_error_in(frame, true_camera, np.random.default_rng(3)) < 0.03
    clean = calibrate(photograph(true_camera, texture), LAYOUT, estimated_lens)
    assert clean.quality is not None and not any("bent" in w for w in clean.quality.warnings)


def test_with_a_marker_hidden_and_another_bent_the_table_is_mapped_from_the_lens_files_camera(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three markers, one bent by something over its edge: the markers' homography swings where no marker holds
    it and says it is unsure, and the table is mapped from the camera's pose with the lens file instead (fresh
    table 59079: 9.5 mm off at the hidden corner, 1.2 mm so; docs/calibration.md, session 59)."""
    import calibration.table_frame as table_frame

    photo = photograph(true_camera, texture)
    hand_over_marker_0(photo, true_camera)
    wedge_over_corner(photo, true_camera, 2)
    frame = calibrate(photo, LAYOUT, estimated_lens)
    assert frame.quality is not None and frame.quality.markers_used == (1, 2, 3)
    assert frame.quality.sigma_mean_in > table_frame.UNSURE_MAP_IN
    assert any("mapped from the camera's pose" in w for w in frame.quality.warnings)
    from_pose_in = real_error_in(frame, true_camera, np.random.default_rng(3), z_in=0.15)
    monkeypatch.setattr(table_frame, "UNSURE_MAP_IN", 1e9)  # the markers' homography kept, as before
    flat_in = real_error_in(calibrate(photo, LAYOUT, estimated_lens), true_camera, np.random.default_rng(3), z_in=0.15)
    assert from_pose_in < 0.01 < flat_in
    # With every marker seen the homography stays, however the lens file is
    clean = calibrate(photograph(true_camera, texture), LAYOUT, estimated_lens)
    assert clean.quality is not None and not any("camera's pose" in w for w in clean.quality.warnings)


def test_hidden_marker_and_moved_marker(true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel) -> None:
    photo = photograph(true_camera, texture)
    hand = photo.copy()
    hand_over_marker_0(hand, true_camera)
    frame = calibrate(hand, LAYOUT, estimated_lens)
    assert frame.quality is not None and frame.quality.markers_missing == (0,)
    assert any("not seen" in w for w in frame.quality.warnings)
    assert real_error_in(frame, true_camera, np.random.default_rng(2)) < 0.03
    # The layout says marker 2 is 1.5" from where it really lies: it is found out and ignored.
    wrong = Layout(
        24,
        24,
        tuple(MarkerPlacement(m.id, m.x_in - (1.5 if m.id == 2 else 0), m.y_in, m.size_in) for m in LAYOUT.markers),
    )
    frame = calibrate(photo, wrong, estimated_lens)
    assert frame.quality is not None
    assert [c.id for c in frame.quality.marker_checks if not c.inlier] == [2]
    assert any("marker 2" in w and "moved" in w for w in frame.quality.warnings)
    assert real_error_in(frame, true_camera, np.random.default_rng(3)) < 0.03
    # Two of the four moved, each its own way: two agree against two, so which moved cannot be told. An error.
    split = Layout(
        24,
        24,
        tuple(
            MarkerPlacement(m.id, m.x_in - (1.5 if m.id == 1 else 0), m.y_in - (1.5 if m.id == 3 else 0), m.size_in)
            for m in LAYOUT.markers
        ),
    )
    with pytest.raises(CalibrationError, match="only markers 0, 2 of 0, 1, 2, 3 agree"):
        calibrate(photo, split, estimated_lens)


def test_clear_errors(true_camera: Camera, texture: np.ndarray) -> None:
    blank = np.full((1080, 1920, 3), 120, np.uint8)
    with pytest.raises(CalibrationError, match="no calibration markers found"):
        calibrate(blank, LAYOUT)
    photo = photograph(true_camera, texture)
    covered = photo.copy()
    for x, y in ((22.5, 1.5), (22.5, 22.5), (1.5, 22.5)):
        c = true_camera.project([[x, y, 0.0]])[0]
        cv2.circle(covered, (int(c[0]), int(c[1])), 80, (20, 20, 20), -1)
    with pytest.raises(CalibrationError, match="only marker 0 is visible; at least 2"):
        calibrate(covered, LAYOUT)
    blurred = cv2.GaussianBlur(photo, (0, 0), 12)
    with pytest.raises(CalibrationError, match="blurred"):
        calibrate(blurred, LAYOUT)
    with pytest.raises(CalibrationError, match="empty or not an image"):
        calibrate(np.zeros((0, 0), np.uint8), LAYOUT)


SAMPLES = Path(__file__).parents[2] / "sample_images"


@pytest.mark.parametrize(
    ("kind", "field", "value", "message"),
    [
        ("lens", "dist", [0.1, 0.2, 0.0], "dist: expected 4, 5, 8, 12, 14 finite distortion coefficients"),
        (
            "lens",
            "K",
            [[1500.0, 0.0], [0.0, 1500.0]],
            "K: expected a camera matrix [[fx, s, cx], [0, fy, cy], [0, 0, 1]]",
        ),
        ("lens", "K", [[1500, 0, 960], [0, 1500, 540], [0, -1e9, 1]], "K: expected a camera matrix"),
        ("lens", "K", [[-5, 0, 960], [0, 1500, 540], [0, 0, 1]], "with fx, fy > 0"),
        ("lens", "image_size", [1920], "image_size: expected [width, height] in whole pixels"),
        ("lens", "cov", [[1.0]], "cov: expected the 8x8 covariance"),
        ("calibration", "H", [[1, 0], [0, 1]], "H: expected an invertible 3x3 matrix"),
        ("calibration", "H", [[0, 0, 0], [0, 0, 0], [0, 0, 0]], "H: expected an invertible 3x3 matrix"),
        ("calibration", "image_size", [1920, -1], "image_size: expected [width, height] in whole pixels"),
        ("calibration", "image_size", [True, True], "image_size: expected [width, height] in whole pixels"),
        ("lens", "image_size", [1920.5, 1080], "image_size: expected [width, height] in whole pixels"),
        ("calibration", "rvec", [0.1, 0.2], "rvec: expected 3 finite numbers"),
        ("calibration", "lens.dist", [1.0], "lens.dist: expected 4, 5, 8, 12, 14"),
    ],
)
def test_a_lens_or_calibration_file_with_a_value_opencv_cannot_take_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, field: str, value: object, message: str
) -> None:
    """A lens or calibration file edited by hand (or written by another tool) whose matrix or distortion OpenCV
    cannot use was read, then stopped `calibrate --lens` or `rectify --calibration` in OpenCV's asserts with a
    traceback (found by a scratch fuzz, /tmp/s74/calfuzz.py). It is now an error that names the file and the field,
    and the command exits 2."""
    from tablesight.cli import main

    source = SAMPLES / ("lens-1080p.json" if kind == "lens" else "table-24x24.calibration.json")
    data = json.loads(source.read_text(encoding="utf-8"))
    target = data
    *parents, last = field.split(".")
    for part in parents:
        target = target[part]
    target[last] = value
    path = tmp_path / f"broken-{kind}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    error = LensError if kind == "lens" else CalibrationError
    with pytest.raises(error) as caught:
        LensModel.load(path) if kind == "lens" else TableFrame.load(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value), str(caught.value)
    photo = str(SAMPLES / "table-24x24.jpg")
    argv = (
        ["calibrate", photo, "--lens", str(path)] if kind == "lens" else ["rectify", photo, "--calibration", str(path)]
    )
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2  # never written beside the shipped sample
    assert message in capsys.readouterr().err
    LensModel.load(SAMPLES / "lens-1080p.json")  # the files as shipped load
    TableFrame.load(SAMPLES / "table-24x24.calibration.json")


def test_a_saved_image_size_in_whole_floats_loads_as_whole_pixels(tmp_path: Path) -> None:
    """JSON written by another tool may give 1920.0 for 1920: the lens and the calibration both read it as whole
    pixels (one check serves both files, calibration/lens.py: image_size_problem), so a size said back to the
    players reads "1920x1080", not "1920.0x1080.0"."""
    for name, loader in (("lens-1080p.json", LensModel.load), ("table-24x24.calibration.json", TableFrame.load)):
        data = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
        data["image_size"] = [float(v) for v in data["image_size"]]
        path = tmp_path / name
        path.write_text(json.dumps(data), encoding="utf-8")
        size = loader(path).image_size  # type: ignore[attr-defined]
        assert size == tuple(int(v) for v in data["image_size"])
        assert all(type(v) is int for v in size), size


@pytest.mark.parametrize(
    ("markers", "message"),
    [
        ([{"id": 0, "x_in": 1.5, "y_in": 1.5}, {"id": 0, "x_in": 20, "y_in": 1.5}], "marker 0 is listed twice"),
        ([{"id": 0, "x_in": 1.5, "y_in": 1.5}, {"id": 1, "x_in": 2.5, "y_in": 1.5}], "markers 0 and 1 overlap"),
        (
            [{"id": 0, "x_in": 0.5, "y_in": 1.5}, {"id": 1, "x_in": 20, "y_in": 1.5}],
            "does not fit on the 24 x 24 in table",
        ),
        ([{"id": 0, "x_in": 1.5, "y_in": 1.5}], "at least 2 markers"),
        ([{"id": 0, "x_in": "left", "y_in": 1.5}, {"id": 1, "x_in": 20, "y_in": 1.5}], "malformed layout"),
    ],
)
def test_layouts_that_contradict_themselves(tmp_path: Path, markers: list[dict[str, object]], message: str) -> None:
    path = tmp_path / "layout.json"
    path.write_text(json.dumps({"table": {"width_in": 24, "depth_in": 24}, "markers": markers}), encoding="utf-8")
    with pytest.raises(LayoutError, match=message):
        Layout.load(path)


def test_edge_markers_anywhere_along_the_edges(true_camera: Camera, estimated_lens: LensModel) -> None:
    from vision.synth.markers_table import table_texture

    layout = Layout(
        24,
        24,
        (
            MarkerPlacement(4, 12.0, 1.5, 2.0),
            MarkerPlacement(5, 22.5, 12.0, 2.0, 90.0),
            MarkerPlacement(6, 12.0, 22.5, 2.0),
            MarkerPlacement(7, 1.5, 12.0, 2.0, 45.0),
        ),
    )
    texture = table_texture(layout, 160.0, np.random.default_rng(9))
    frame = calibrate(photograph(true_camera, texture), layout, estimated_lens)
    assert frame.quality is not None and set(frame.quality.markers_used) == {4, 5, 6, 7}
    assert real_error_in(frame, true_camera, np.random.default_rng(5)) < 0.03


def test_monitor_steady_hidden_and_bumped(true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel) -> None:
    monitor = CalibrationMonitor(LAYOUT, estimated_lens)
    assert monitor.update(photograph(true_camera, texture, seed=1)).state == "calibrated"
    assert monitor.update(photograph(true_camera, texture, seed=2)).state == "steady"
    hand = photograph(true_camera, texture, seed=3)
    c = true_camera.project([[1.5, 1.5, 0.0]])[0]
    cv2.circle(hand, (int(c[0]), int(c[1])), 70, (25, 25, 25), -1)
    report = monitor.update(hand)
    assert report.state == "steady" and report.hidden == (0,)
    nothing = np.full_like(hand, 90)
    kept = monitor.update(nothing)
    assert kept.state == "markers-hidden" and kept.stale and kept.frame is monitor.frame
    # Bump: the camera turns a quarter of a degree.
    turn = cv2.Rodrigues(np.array([0.004, 0.003, 0.0]))[0]
    bumped = Camera(true_camera.K, np.asarray(DISTORTION), turn @ true_camera.R, turn @ true_camera.t, SIZE)
    report = monitor.update(photograph(bumped, texture, seed=4))
    assert report.state == "recalibrated"
    assert report.frame is not None
    assert real_error_in(report.frame, bumped, np.random.default_rng(6)) < 0.03
    assert monitor.update(np.zeros((0, 0), np.uint8)).stale


def test_a_camera_knocked_while_a_hand_covers_a_marker_waits_for_it_before_recalibrating(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A player's hand knocks the camera and lies over marker 0. Recalibrated from the three markers left in view,
    # the map was further off than from all four, and it stayed so for the rest of the game: the hidden marker
    # had no patch to be checked by, so it never came back into the calibration.
    turn = cv2.Rodrigues(np.array([0.004, 0.003, 0.0]))[0]
    bumped = Camera(true_camera.K, np.asarray(DISTORTION), turn @ true_camera.R, turn @ true_camera.t, SIZE)
    knocked = photograph(bumped, texture, seed=4)
    hand_over_marker_0(knocked, bumped)
    clear = photograph(bumped, texture, seed=5)
    error_three = real_error_in(calibrate(knocked, LAYOUT, estimated_lens), bumped, np.random.default_rng(6))
    error_four = real_error_in(calibrate(clear, LAYOUT, estimated_lens), bumped, np.random.default_rng(6))
    assert error_three > 1.5 * error_four, (error_three, error_four)

    monkeypatch.setattr(calibration.monitor, "WAIT_ALL_MARKERS_FRAMES", 3)
    monitor = CalibrationMonitor(LAYOUT, estimated_lens)
    assert monitor.update(photograph(true_camera, texture, seed=1)).state == "calibrated"
    for _ in range(2):  # the frames are not read while the map would come from fewer markers
        report = monitor.update(knocked)
        assert (report.state, report.frame, report.stale, report.hidden) == ("moved", None, True, (0,))
        assert "markers 0 hidden: waiting for them to recalibrate" in report.message
    report = monitor.update(clear)  # the hand lifted
    assert report.state == "recalibrated" and report.frame is not None and report.frame.quality is not None
    assert set(report.frame.quality.markers_used) == {0, 1, 2, 3}
    assert real_error_in(report.frame, bumped, np.random.default_rng(6)) == pytest.approx(error_four, rel=0.2)
    assert monitor.update(photograph(bumped, texture, seed=7)).state == "steady"

    # A hand that stays (or a marker covered for good): after the wait, recalibrated from those in view, and said.
    monitor = CalibrationMonitor(LAYOUT, estimated_lens)
    monitor.update(photograph(true_camera, texture, seed=1))
    states = [monitor.update(knocked) for _ in range(4)]
    assert [r.state for r in states] == ["moved", "moved", "moved", "recalibrated"]
    assert states[-1].frame is not None and "from markers 1, 2, 3 only" in states[-1].message


def test_a_marker_covered_past_the_wait_comes_back_into_the_map_and_the_places_read_since_are_remapped(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A card left on marker 0 as the camera was knocked: after the wait, the table is mapped from markers 1-3. Before,
    # it stayed so for the rest of the game, the marker never looked for again once the card was lifted.
    monkeypatch.setattr(calibration.monitor, "WAIT_ALL_MARKERS_FRAMES", 2)
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 3)
    turn = cv2.Rodrigues(np.array([0.004, 0.003, 0.0]))[0]
    bumped = Camera(true_camera.K, np.asarray(DISTORTION), turn @ true_camera.R, turn @ true_camera.t, SIZE)
    knocked = photograph(bumped, texture, seed=4)
    hand_over_marker_0(knocked, bumped)
    monitor = CalibrationMonitor(LAYOUT, estimated_lens)
    monitor.update(photograph(true_camera, texture, seed=1))
    states = [monitor.update(knocked).state for _ in range(3)]
    assert states == ["moved", "moved", "recalibrated"]
    fewer = monitor.frame
    assert fewer is not None and fewer.quality is not None and fewer.quality.markers_used == (1, 2, 3)
    # Still covered: looked for every third steady frame, and not found; the map stays.
    assert [monitor.update(knocked).state for _ in range(3)] == ["steady"] * 3
    assert monitor.frame is fewer
    clear = photograph(bumped, texture, seed=5)  # the card lifted
    reports = [monitor.update(clear) for _ in range(3)]
    assert [r.state for r in reports] == ["steady", "steady", "refined"]
    refined = reports[-1]
    assert refined.frame is not None and refined.frame.quality is not None
    assert refined.frame.quality.markers_used == (0, 1, 2, 3) and refined.remap_from is fewer
    assert "marker 0 in view again: the table mapped from markers 0, 1, 2, 3" in refined.message
    error_fewer = real_error_in(fewer, bumped, np.random.default_rng(6))
    assert real_error_in(refined.frame, bumped, np.random.default_rng(6)) < error_fewer / 1.5
    # A place read through the old map is the same pixel read through the new one: at the truth, near enough.
    truth_in = np.array([[3.0, 20.0], [30.0, 40.0]])
    read_in = fewer.image_to_table(bumped.project(np.c_[truth_in, np.zeros(2)]))
    remapped_in = refined_place(fewer, refined.frame, read_in)
    assert np.abs(remapped_in - truth_in).max() < np.abs(read_in - truth_in).max()
    said_in = float(refined.message.split("by up to ")[1].split('"')[0])
    assert said_in == pytest.approx(max_remap_in(fewer, refined.frame), abs=0.006) and said_in > 0
    # Refined once: no more full detections, steady from then on.
    assert [monitor.update(clear).state for _ in range(4)] == ["steady"] * 4


def test_a_set_up_with_markers_under_a_card_is_mapped_from_them_all_once_the_card_is_lifted(
    true_camera: Camera, texture: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A dice tray on markers 0 and 1 as the table was set up, and no lens file: mapped from markers 2 and 3, the table
    # was inches off, and was never mapped again from all four (only a knocked camera was looked after so).
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 3)
    covered = photograph(true_camera, texture, seed=1)
    hand_over_marker_0(covered, true_camera)
    tray = true_camera.project([[22.5, 1.5, 0.0]])[0]  # marker 1, at the table's far corner of that edge
    cv2.circle(covered, (int(tray[0]), int(tray[1])), 70, (40, 60, 90), -1)
    monitor = CalibrationMonitor(LAYOUT)
    first = monitor.update(covered)
    assert first.state == "calibrated" and first.frame is not None and first.frame.quality is not None
    fewer = first.frame
    assert fewer.quality is not None and fewer.quality.markers_used == (2, 3)
    assert first.message.endswith("; uncover markers 0, 1 to map the table from them too"), first.message
    assert [monitor.update(covered).state for _ in range(3)] == ["steady"] * 3 and monitor.frame is fewer
    clear = photograph(true_camera, texture, seed=2)  # the tray lifted off
    reports = [monitor.update(clear) for _ in range(3)]
    assert [r.state for r in reports] == ["steady", "steady", "refined"]
    refined = reports[-1]
    assert refined.frame is not None and refined.frame.quality is not None and refined.remap_from is fewer
    assert refined.frame.quality.markers_used == (0, 1, 2, 3)
    assert "markers 0, 1 in view again" in refined.message and "places read since the set-up" in refined.message
    error_fewer = real_error_in(fewer, true_camera, np.random.default_rng(6))
    error_now = real_error_in(refined.frame, true_camera, np.random.default_rng(6))
    assert error_now < error_fewer / 3, (error_fewer, error_now)
    assert [monitor.update(clear).state for _ in range(4)] == ["steady"] * 4
    assert monitor.look_again(clear) is None  # none lacking now
    # Asked at once (the page's table settled after a change): looked for then, not RETRY_ALL_MARKERS_FRAMES later
    eager = CalibrationMonitor(LAYOUT)
    eager.update(covered)
    assert eager.look_again(covered) is None  # still under the card: the map from two stays
    assert eager.frame is not None and eager.frame.quality is not None and eager.frame.quality.markers_used == (2, 3)
    assert eager.update(clear).state == "steady"
    looked = eager.look_again(clear)
    assert looked is not None and looked.state == "refined" and looked.frame is not None
    assert looked.frame.quality is not None and looked.frame.quality.markers_used == (0, 1, 2, 3)


def test_without_a_lens_file_the_lens_is_read_again_from_every_marker_once_they_are_back(
    true_camera: Camera, texture: np.ndarray
) -> None:
    # Set up with marker 0 under a hand and no lens file: the lens's bend is read from markers 1-3. When marker 0 is
    # back, the table is mapped from all four with the bend read again from them all, as a set-up with all four
    # would have; before, the bend read from three stayed (on crowded table 54: 0.012" off at worst, not 0.006").
    covered = photograph(true_camera, texture, seed=1)
    hand_over_marker_0(covered, true_camera)
    monitor = CalibrationMonitor(LAYOUT)
    first = monitor.update(covered).frame
    assert first is not None and first.quality is not None and first.quality.markers_used == (1, 2, 3)
    assert first.lens is not None  # read from the three
    clear = photograph(true_camera, texture, seed=2)
    assert monitor.update(clear).state == "steady"
    refined = monitor.look_again(clear)
    assert refined is not None and refined.frame is not None and refined.frame.lens is not None
    assert monitor.lens is refined.frame.lens
    fresh = calibrate(clear, LAYOUT)  # set up with all four in view
    errors = [real_error_in(f, true_camera, np.random.default_rng(6)) for f in (first, refined.frame, fresh)]
    assert errors[1] == pytest.approx(errors[2], rel=0.05) and errors[1] < errors[0], errors


def test_a_marker_out_of_the_cameras_view_at_set_up_is_not_looked_for(
    texture: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A camera framed so that marker 0 is out of its view: no full detection every few frames looks for it, as for a
    # marker a card hides (it cannot come back while the camera stays).
    monkeypatch.setattr(calibration.monitor, "RETRY_ALL_MARKERS_FRAMES", 2)
    turned = Camera.looking_at_table(TABLE, SIZE, tilt_deg=18, yaw_deg=15, dist=DISTORTION)  # marker 1 lower down
    photo = photograph(turned, texture, seed=1)
    past_0_px = int(turned.project([[1.5, 3.5, 0.0]])[0][1])
    assert past_0_px < int(turned.project([[22.5, 0.5, 0.0]])[0][1])  # ...than marker 0's far side
    cropped = np.ascontiguousarray(photo[past_0_px:])  # the frame starts past marker 0
    monitor = CalibrationMonitor(LAYOUT)
    first = monitor.update(cropped)
    assert first.frame is not None and first.frame.quality is not None and first.frame.quality.markers_used == (1, 2, 3)
    assert "uncover" not in first.message  # nothing the players can lift
    full_detections = []
    real_calibrate = calibration.monitor.calibrate
    monkeypatch.setattr(
        calibration.monitor, "calibrate", lambda *a, **k: full_detections.append(1) or real_calibrate(*a, **k)
    )
    assert [monitor.update(cropped).state for _ in range(6)] == ["steady"] * 6
    assert not full_detections


def test_print_kit_pdf(tmp_path: Path) -> None:
    from calibration.fiducials import detect_markers
    from calibration.kit import DPI, MM, print_kit

    pages = print_kit(Layout.default(24, 24), tmp_path / "kit.pdf", "letter")
    data = (tmp_path / "kit.pdf").read_bytes()
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    assert data.count(b"/Type /Page ") == 4
    assert pages[0].shape == (int(11 * DPI), int(8.5 * DPI))
    found = detect_markers(pages[0])
    assert set(found) == {0, 1, 2, 3}
    side_px = np.linalg.norm(found[0][1] - found[0][0])
    assert side_px == pytest.approx(2.0 * DPI, abs=3)  # printed at true size: 2" markers
    assert pytest.approx(100 / 25.4 * DPI) == MM * 100
    with pytest.raises(ValueError, match="paper must be one of"):
        print_kit(Layout.default(24, 24), tmp_path / "x.pdf", "a3")


def test_small_blurred_markers_are_not_taken_for_moved_ones() -> None:
    """A 44"x60" table at 720p: its 3" markers are ~25 px across and their corners 1-2 px off.
    No marker may be thrown out as moved (the map would then hang on two markers, inches off)."""
    from calibration.lens import calibrate_lens
    from vision.synth.camera import photo_effects
    from vision.synth.charuco_views import charuco_views
    from vision.synth.markers_table import table_texture

    table, size = (44.0, 60.0), (1280, 720)
    rng = np.random.default_rng(100)  # benchmarks/eval_calibration.py's first lens for this camera
    lens, _ = calibrate_lens(
        charuco_views(Camera.looking_at_table(table, size, hfov_deg=65.0).K, DISTORTION, size, 16, rng)
    )
    layout = Layout.default(*table)
    for _ in range(4):
        camera = Camera.looking_at_table(
            table,
            size,
            tilt_deg=float(rng.uniform(0, 25)),
            yaw_deg=float(rng.uniform(-12, 12)),
            hfov_deg=65.0,
            dist=DISTORTION,
            fill=float(rng.uniform(0.8, 0.95)),
        )
        texture = table_texture(layout, 60.0, rng)
        effects = {
            "noise": rng.uniform(1, 3),
            "blur_px": rng.uniform(0.3, 1.0),
            "jpeg_quality": int(rng.integers(80, 96)),
        }
        photo = photo_effects(camera.render(texture, 60.0, border_in=2.0), rng, **effects, light_gradient=0.3)  # type: ignore[arg-type]
        frame = calibrate(photo, layout, lens)
        assert frame.quality is not None and all(c.inlier for c in frame.quality.marker_checks)
        assert real_error_in(frame, camera, np.random.default_rng(4)) < 0.05


def test_side_markers_sit_mid_long_edge_and_the_kit_prints_all_six(tmp_path: Path) -> None:
    from calibration.fiducials import detect_markers
    from calibration.kit import DPI, print_kit

    six = Layout.default(44, 60, side_markers=True)
    placed = {m.id: (m.x_in, m.y_in, m.size_in) for m in six.markers}
    # 3" markers on a table over 36", 0.5" in from the edges: the long edges are the 60" ones (x = 0 and 44)
    assert placed[4] == (2.0, 30.0, 3.0) and placed[5] == (42.0, 30.0, 3.0)
    assert {i: placed[i] for i in range(4)} == {
        m.id: (m.x_in, m.y_in, m.size_in) for m in Layout.default(44, 60).markers
    }
    wide = Layout.default(60, 44, side_markers=True).by_id()
    assert (wide[4].x_in, wide[4].y_in, wide[5].y_in) == (30.0, 2.0, 42.0)
    assert Layout.from_json(six.to_json()) == six
    pages = print_kit(six, tmp_path / "kit.pdf", "a4")
    # Four 3" markers fill an A4 page: the other two go on a page of their own, none left out.
    assert (tmp_path / "kit.pdf").read_bytes().count(b"/Type /Page ") == 5
    found = {i: c for page in pages[:2] for i, c in detect_markers(page).items()}
    assert set(found) == {0, 1, 2, 3, 4, 5}
    assert np.linalg.norm(found[5][1] - found[5][0]) == pytest.approx(3.0 * DPI, abs=3)


def test_marker_corners_are_the_meets_of_their_edges_not_pulled_by_blur_or_the_paper() -> None:
    # Held-out table 05141 (44"x60", blurred, 3" markers about 50 px across at the far end, their paper's
    # white margin 4 px): cornerSubPix's few pixels round each corner read them up to 2.7 px off, which put
    # the whole table map a millimetre and more off (docs/vision.md, session 38).
    from calibration.fiducials import _refine, detect_markers, to_gray
    from vision.synth.table import render_table

    table = render_table(5141, "grinding-annihilation")
    found = detect_markers(table.empty)
    assert set(found) == {0, 1, 2, 3}
    gray = to_gray(table.empty)
    edges, windows = [], []
    for m in table.layout.markers:
        true = table.camera.project(np.c_[m.corners_in(), np.zeros(4)])
        edges += list(np.hypot(*(found[m.id] - true).T))
        windows += list(np.hypot(*(_refine(gray, found[m.id]) - true).T))
    assert max(windows) > 2.0  # what the corner window alone makes of them
    assert max(edges) < 0.5 and float(np.median(edges)) < 0.15


def test_points_on_a_calibration_marker_square_are_told_apart_turned_or_not() -> None:
    # Objective markers found on a calibration marker are dropped (vision: a printed square part hidden by
    # terrain read as a 40 mm disc on fresh table 53022); this says where the squares are.
    layout = Layout(
        24.0, 24.0, (MarkerPlacement(0, 1.5, 1.5, 2.0), MarkerPlacement(1, 22.0, 22.0, 2.0, rotation_deg=45.0))
    )
    x = np.array([1.87, 2.49, 2.51, 12.0, 22.0 + 1.35, 22.0 + 0.7, 22.0 + 0.95])
    y = np.array([0.85, 2.49, 1.5, 12.0, 22.0, 22.0 + 0.7, 22.0 + 0.95])
    # The turned square's corner reaches 1.41" out along x, its edge only 1" out along the diagonal: (0.95,
    # 0.95) off its centre is outside it, though inside the same square unturned.
    assert layout.on_marker(x, y).tolist() == [True, True, False, False, True, True, False]
    assert layout.on_marker(np.zeros(0), np.zeros(0)).shape == (0,)


def test_a_blurred_photo_is_read_again_sharpened_for_the_markers_it_hides() -> None:
    # Tuning table 06209 blurred 2 px more (a webcam out of focus): ArUco reads three of its four markers. Read
    # again sharpened, the fourth is found too; its corners, refined on the blurred photo itself, lie as close
    # to where the camera puts them as the others' (a 2 px blur leaves every marker's corners 1-2 px off).
    # docs/calibration.md, session 57.
    from calibration.fiducials import detect_markers
    from vision.synth.table import render_table

    table = render_table(6209, "grinding-annihilation")
    _, buffer = cv2.imencode(".jpg", cv2.GaussianBlur(table.image, (0, 0), 2.0), [cv2.IMWRITE_JPEG_QUALITY, 92])
    blurred = cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    once = detect_markers(blurred)
    assert set(once) == {0, 1, 2}
    found = detect_markers(blurred, expected=[m.id for m in table.layout.markers])
    assert set(found) == {0, 1, 2, 3}
    assert all(np.array_equal(found[i], once[i]) for i in once)  # what was read at once is kept as it was
    error_px = {
        m.id: float(np.max(np.hypot(*(found[m.id] - table.camera.project(np.c_[m.corners_in(), np.zeros(4)])).T)))
        for m in table.layout.markers
    }
    assert error_px[3] <= max(error_px[i] for i in once) + 0.1 and error_px[3] < 2.0
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(blurred, table.layout, lens)
    assert frame.quality is not None and frame.quality.markers_used == (0, 1, 2, 3)


def test_without_a_lens_file_the_monitor_keeps_the_bend_it_read_first(true_camera: Camera, texture: np.ndarray) -> None:
    # No lens file: the first calibration reads the lens's bend from the markers (calibration/lens_from_markers.py)
    # and the monitor keeps it, so a bumped camera is recalibrated through the same lens (docs/calibration.md,
    # session 57). A plain homography through the markers is off by several times more.
    monitor = CalibrationMonitor(LAYOUT)
    first = monitor.update(photograph(true_camera, texture, seed=1))
    assert first.state == "calibrated" and first.frame is not None and first.frame.lens is not None
    assert monitor.lens is first.frame.lens
    assert "the lens's bend was read from the markers" in first.message  # watch and the page tell the players
    error = real_error_in(first.frame, true_camera, np.random.default_rng(1))
    assert error <= 0.02
    assert first.frame.quality is not None and error <= 2 * first.frame.quality.sigma_in
    plain = TableFrame(first.frame.H, LAYOUT, SIZE)  # no bend taken out: the old way, for scale
    assert real_error_in(plain, true_camera, np.random.default_rng(1)) > 2 * error
    turn = cv2.Rodrigues(np.array([0.004, 0.003, 0.0]))[0]
    bumped = Camera(true_camera.K, np.asarray(DISTORTION), turn @ true_camera.R, turn @ true_camera.t, SIZE)
    report = monitor.update(photograph(bumped, texture, seed=4))
    assert report.state == "recalibrated" and report.frame is not None and report.frame.lens is first.frame.lens
    assert real_error_in(report.frame, bumped, np.random.default_rng(6)) <= 0.02


@pytest.mark.parametrize("printed", [0.94, 0.97])
def test_a_kit_printed_below_full_size_is_mapped_from_its_markers_as_printed_and_the_players_told(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel, printed: float
) -> None:
    # The kit is an A4 PDF; printed "fit to page" on US Letter it comes out at 94 %. Its markers are then smaller
    # than the layout says, about their centres: the corners disagreed with the layout and the calibration failed
    # ("the markers disagree with the layout") or blamed the lens ("marker corners fit the table poorly").
    photo = photograph(true_camera, texture)
    said = Layout(24, 24, tuple(MarkerPlacement(m.id, m.x_in, m.y_in, m.size_in / printed) for m in LAYOUT.markers))
    frame = calibrate(photo, said, estimated_lens)
    assert frame.quality is not None
    assert real_error_in(frame, true_camera, np.random.default_rng(4)) <= 0.02  # as the issue asks of a true kit
    told = [w for w in frame.quality.warnings if "printed at" in w]
    assert len(told) == 1 and told[0].startswith(
        f'the markers measure 2.00" across, not the layout\'s {2 / printed:.2f}": the kit looks printed at {printed:.0%}'
    ), frame.quality.warnings
    assert not any("fit the table poorly" in w for w in frame.quality.warnings)
    # Printed at full size, nothing is said of it: blur shrinks a marker's outline by a pixel or so, not a scale.
    frame = calibrate(photo, LAYOUT, estimated_lens)
    assert frame.quality is not None and not any("printed at" in w for w in frame.quality.warnings)


def test_a_lens_file_made_at_another_photo_size_is_scaled_or_left_out_not_misapplied(
    true_camera: Camera, texture: np.ndarray, estimated_lens: LensModel
) -> None:
    # A lens calibrated at one size and a camera now sending another (a webcam set to 720p, or asked for 1080p by
    # `--camera-size`): the file's pixels were used as they were. On 40 rendered tables at 1080p a 720p lens file put
    # centres 6.15 mm off (median) with bases found 61 %, and a 640x480 one failed every calibration
    # (docs/calibration.md, session 61).
    photo = photograph(true_camera, texture)  # 1920x1080
    made_at_720p = estimated_lens.at_size((1280, 720))
    assert made_at_720p is not None and made_at_720p.image_size == (1280, 720)
    frame = calibrate(photo, LAYOUT, made_at_720p)
    assert frame.quality is not None
    assert "the lens file was calibrated at 1280x720: scaled to this photo's 1920x1080" in frame.quality.warnings
    assert real_error_in(frame, true_camera, np.random.default_rng(5)) <= 0.02
    # Scaled back, it is the lens it was made from, to the pixel.
    again = made_at_720p.at_size((1920, 1080))
    assert again is not None and np.allclose(again.K, estimated_lens.K) and np.allclose(again.dist, estimated_lens.dist)
    # Another aspect ratio is another view of the sensor: the file does not describe this photo, so it is left out.
    other_view = LensModel(estimated_lens.K * [[1 / 3], [4 / 9], [1]], estimated_lens.dist, (640, 480))
    assert other_view.at_size((1920, 1080)) is None
    frame = calibrate(photo, LAYOUT, other_view)
    assert frame.quality is not None
    assert any(
        w.startswith("the lens file was calibrated at 640x480, not for this photo's 1920x1080: left out")
        for w in frame.quality.warnings
    )
    assert real_error_in(frame, true_camera, np.random.default_rng(6)) <= 0.02
