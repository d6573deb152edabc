"""The photoreal slice's plumbing, checked without Blender: the camera handed to Blender sees what ours sees,
the lens bend puts points where the webcam model does, and the slice's truth is the flat renderer's plan."""

from __future__ import annotations

import subprocess
import sys

import cv2
import numpy as np
import pytest
import shapely

from geometry.shapes import BASE_HEIGHT_IN
from vision.synth.camera import Camera
from vision.synth.photoreal import SENSOR_MM, blender_camera, distort, plan_photoreal, table_top
from vision.synth.table import WEBCAM_DISTORTION, plan_table


def _blender_project(cam: dict, size: tuple[int, int], points_blender: np.ndarray) -> np.ndarray:
    """Blender's pinhole: camera looks down its -z, y up in the image; focal length from lens and sensor width."""
    R_world_from_cam = np.asarray(cam["rotation"])
    local = (points_blender - np.asarray(cam["location"])) @ R_world_from_cam  # world -> camera coordinates
    f_px = cam["lens_mm"] / SENSOR_MM * size[0]
    u = size[0] / 2 + f_px * local[:, 0] / -local[:, 2] - 0.5  # pixel centres at integers, as OpenCV
    v = size[1] / 2 - f_px * local[:, 1] / -local[:, 2] - 0.5
    return np.c_[u, v]


@pytest.mark.parametrize(("tilt", "yaw"), [(0.0, 0.0), (22.0, -7.0), (12.0, 5.0)])
def test_blender_camera_sees_the_table_where_our_camera_does(tilt: float, yaw: float) -> None:
    size = (1920, 1080)
    camera = Camera.looking_at_table((44.0, 60.0), size, tilt_deg=tilt, yaw_deg=yaw)  # no distortion
    cam = blender_camera(camera, (44.0, 60.0), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    table_pts = np.c_[rng.uniform(0, 44, 50), rng.uniform(0, 60, 50), -rng.uniform(0, 5, 50)]  # (x, y, w = -height)
    ours = camera.project(table_pts)
    theirs = _blender_project(cam, size, np.c_[table_pts[:, 0], -table_pts[:, 1], -table_pts[:, 2]])
    assert np.abs(ours - theirs).max() < 1e-6
    # Focused on the table's centre, which the camera looks at.
    centre_px = _blender_project(cam, size, np.array([[22.0, -30.0, 0.0]]))[0]
    assert np.allclose(centre_px, [(size[0] - 1) / 2, (size[1] - 1) / 2], atol=1e-6)


def test_distort_moves_a_rendered_dot_to_where_the_webcam_lens_puts_it() -> None:
    size = (960, 540)
    lens = Camera.looking_at_table((24.0, 24.0), size, tilt_deg=15.0, dist=WEBCAM_DISTORTION)
    pinhole = Camera(lens.K, np.zeros(5), lens.R, lens.t, size)
    for point in ([2.0, 3.0, 0.0], [21.0, 20.0, 0.0], [12.0, 12.0, 0.0]):
        raw = np.zeros((size[1], size[0]), np.uint8)
        u, v = pinhole.project([point])[0]
        cv2.circle(raw, (int(round(u * 16)), int(round(v * 16))), 3 * 16, 255, -1, cv2.LINE_AA, 4)
        bent = distort(raw, lens).astype(np.float64)
        ys, xs = np.mgrid[0 : size[1], 0 : size[0]]
        found = np.array([(bent * xs).sum(), (bent * ys).sum()]) / bent.sum()
        expected = lens.project([point])[0]
        assert np.hypot(*(found - expected)) < 0.1, (point, found, expected)
        assert np.hypot(*(expected - [u, v])) > 1.0 or point == [12.0, 12.0, 0.0]  # the lens did move the corners


def test_the_slice_plans_the_same_table_as_the_flat_renderer() -> None:
    job = plan_photoreal(7003, "grinding-annihilation", "crowded", (1920, 1080), 16)
    plan = plan_table(np.random.default_rng(7003), "grinding-annihilation", "crowded")
    assert [m["id"] for m in job["plan"].models] == [m["id"] for m in plan.models]
    assert job["plan"].tags == ["crowded"]
    sent = job["blender"]["models"]
    assert {m["player"] for m in sent} == {"red", "blue"}
    assert all(m["a"] >= m["b"] > 0 for m in sent)
    woods = [t for t in job["blender"]["terrain"] if t["kind"] == "woods"]
    assert all(len(t["trees"]) >= 2 for t in woods)
    texture = table_top(job["plan"], np.random.default_rng(0), job["ppi"])
    ppi, border = job["ppi"], 2.0
    # Objective markers are painted where the truth puts them (white or orange, not the mat).
    for obj in plan.objectives:
        pixel = texture[int((obj["y"] + border) * ppi), int((obj["x"] + border) * ppi)]
        assert tuple(pixel) in {(235, 235, 235), (20, 160, 230)}


def test_render_photoreal_without_blender_says_how_to_get_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = subprocess.run(
        [sys.executable, "-m", "tablesight", "render-photoreal", str(tmp_path / "slice"), "--count", "1"],
        capture_output=True,
        text=True,
        env={"TABLESIGHT_BLENDER_PYTHON": str(tmp_path / "nowhere" / "python"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode != 0
    assert "make photoreal-env" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_slice_resumes_without_rendering_what_is_there(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from vision.synth.photoreal import render_photoreal_dataset

    (tmp_path / "lens.json").write_text("{}", encoding="utf-8")
    for seed in (7000, 7001):
        (tmp_path / f"{seed:05d}.truth.json").write_text("{}", encoding="utf-8")
    # Both tables are there: Blender is never asked for (a missing Blender would raise).
    written = render_photoreal_dataset(tmp_path, 2, 7000, python=tmp_path / "no-blender" / "python")
    assert [p.name for p in written] == ["07000.jpg", "07001.jpg"]


def test_woods_and_difficult_ground_are_templates_the_bases_standing_in_them_rise_above() -> None:
    """Models stand in area terrain at the table's height (the truth's z is 0 there, as in the flat renderer).
    The path tracer once built woods and difficult ground as solids 0.2-0.9" tall, which swallowed the
    0.15"-tall bases standing in them: a base there must show above its template."""
    standing = 0
    for k, (game, hard) in enumerate([("focal-point", "none"), ("grinding-annihilation", "crowded")] * 3):
        job = plan_photoreal(7000 + k, game, hard, (960, 540), 16)
        pieces = job["blender"]["terrain"]
        for piece in pieces:
            assert ("template_in" in piece) == (piece["kind"] in ("woods", "difficult")), piece["kind"]
        for m in job["blender"]["models"]:
            base = shapely.Point(m["x"], m["y"]).buffer(m["b"])
            under = [p for p in pieces if "template_in" in p and shapely.Polygon(p["polygon"]).intersects(base)]
            for piece in under:
                standing += 1
                assert m["z"] == 0.0
                assert piece["template_in"] < 0.25 * BASE_HEIGHT_IN  # three quarters of the base's rim shows
    assert standing >= 3  # the plans do put models in woods and difficult ground
