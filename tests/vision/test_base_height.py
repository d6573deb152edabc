"""Bases are solids 3-5 mm tall: the camera sees their tops, moved away from its foot by parallax (the
base's height times its distance from the camera's foot over the camera's height: about 1 mm near a 2'x2'
table's corner), and the analysis puts each base back where it stands (vision/analyze.py,
``ground_positions``)."""

from __future__ import annotations

import cv2
import numpy as np
import shapely

from calibration.layout import Layout
from calibration.table_frame import TableFrame
from geometry.shapes import BASE_HEIGHT_IN
from vision.analyze import ground_positions
from vision.synth.camera import Camera
from vision.synth.table import BaseSolid, _draw_base

TABLE_IN = (24.0, 24.0)


def _camera() -> Camera:
    return Camera.looking_at_table(TABLE_IN, (1280, 720), tilt_deg=20.0, yaw_deg=5.0)


def _frame(camera: Camera, pose: bool = True) -> TableFrame:
    """The calibration a perfect fit of the kit's markers would give for this (distortion-free) camera."""
    H = camera.K @ np.c_[camera.R[:, 0], camera.R[:, 1], camera.t]
    rvec = cv2.Rodrigues(camera.R)[0] if pose else None
    return TableFrame(H / H[2, 2], Layout.default(*TABLE_IN), camera.size, None, camera.K, rvec, camera.t.copy())


def test_a_base_top_is_drawn_where_parallax_puts_it_and_its_near_side_shows() -> None:
    camera = _camera()
    photo = np.full((720, 1280, 3), 90, np.uint8)
    model = {"base": "32", "x": 4.0, "y": 5.0, "z": 0.0, "facing_deg": 0.0}  # far from the camera's foot
    solid = BaseSolid(height_in=0.15, top_scale=0.92)
    team, top = (0, 0, 255), (255, 255, 255)
    _draw_base(photo, camera, model, solid, team, top, np.array([1.0, 0.0]))
    white = np.argwhere((photo > 240).all(axis=2)).mean(axis=0)[::-1]
    seen_top = camera.project([[4.0, 5.0, -0.15]])[0]
    foot = camera.project([[4.0, 5.0, 0.0]])[0]
    assert np.hypot(*(white - seen_top)) < 0.5
    assert np.hypot(*(foot - seen_top)) > 0.6  # about 1 mm on the table here: as large as the error allowed
    # The side facing the camera's foot shows, in the team's colour, shaded: between the foot's edge and the
    # top's (a 60 mm base whose top is inset by 14 %).
    photo[:] = 90
    model["base"] = "60"
    _draw_base(photo, camera, model, BaseSolid(0.19, 0.86), team, top, np.array([1.0, 0.0]))
    towards = camera.centre_in[:2] - [4.0, 5.0]
    towards /= np.linalg.norm(towards)
    for share, colour in ((0.93, "side"), (0.75, "top"), (1.03, "mat")):
        at = camera.project([[*([4.0, 5.0] + towards * share * 30 / 25.4), 0.0]])[0]
        b, g, r = photo[int(round(at[1])), int(round(at[0]))].astype(int)
        if colour == "side":
            assert 60 < r < 200 and b < 20 and g < 20
        elif colour == "top":
            assert min(b, g, r) > 240
        else:
            assert (b, g, r) == (90, 90, 90)


def test_tops_seen_in_the_table_view_are_put_back_on_their_feet() -> None:
    camera = _camera()
    frame = _frame(camera)
    rng = np.random.default_rng(22)
    feet = rng.uniform(1, 23, (40, 2))
    hill = {"kind": "hill", "height_in": 1.5, "polygon": [[2, 2], [9, 2], [9, 9], [2, 9]]}
    on_hill = (feet[:, 0] > 2.5) & (feet[:, 0] < 8.5) & (feet[:, 1] > 2.5) & (feet[:, 1] < 8.5)
    ground_in = np.where(on_hill, 1.5, 0.0)
    # Where the top-down view of the table plane shows each top: its ray, met at the table.
    seen = frame.image_to_table(frame.table_to_image(feet, ground_in + BASE_HEIGHT_IN))
    assert np.hypot(*(seen - feet).T).max() > 0.05  # the parallax is there to undo
    x, y, z = ground_positions(seen[:, 0], seen[:, 1], frame, [hill])
    np.testing.assert_allclose(np.c_[x, y], feet, atol=1e-6)
    np.testing.assert_array_equal(z, ground_in)


def test_without_the_camera_pose_the_view_places_are_kept() -> None:
    frame = _frame(_camera(), pose=False)
    x, y, z = ground_positions(np.array([3.0, 12.0]), np.array([4.0, 20.0]), frame, [])
    np.testing.assert_array_equal(np.c_[x, y, z], [[3.0, 4.0, 0.0], [12.0, 20.0, 0.0]])


def test_a_base_on_a_hill_by_its_far_edge_stands_on_the_hill_and_one_beside_its_near_edge_on_the_mat() -> None:
    # A hill is a plateau (Grinding-Annihilation, Terrain: hills). The camera stands over (10.7, -2.4), 40" up; a
    # 1.2" hill lies across the table's far half. A base's top on the hill by its far edge lies on a ray that meets
    # the mat past that edge (by the hill's parallax, ~0.8" there): it was read as standing on the mat, 0.8" off.
    # Bases on the mat beside either edge stay on the mat.
    camera = _camera()
    frame = _frame(camera)
    hill = {"kind": "hill", "height_in": 1.2, "polygon": [[4, 14], [18, 14], [18, 21], [4, 21]]}
    radius_in = 32 / 25.4 / 2 + 0.05
    feet, ground_in = [], []
    for x_in in (6.0, 11.0, 16.0):
        feet += [(x_in, 21 - radius_in), (x_in, 14 + radius_in), (x_in, 14 - radius_in), (x_in, 23.0)]
        ground_in += [1.2, 1.2, 0.0, 0.0]  # by the far edge, by the near edge, before the near edge, past the far
    feet_in, z_true = np.array(feet), np.array(ground_in)
    seen = frame.image_to_table(frame.table_to_image(feet_in, z_true + BASE_HEIGHT_IN))
    # the parallax that misled the old reading: those rays meet the mat past the far edge
    outline = shapely.Polygon(hill["polygon"])
    assert not shapely.contains_xy(outline, seen[0::4, 0], seen[0::4, 1]).any()
    x, y, z = ground_positions(seen[:, 0], seen[:, 1], frame, [hill])
    np.testing.assert_array_equal(z, z_true)
    np.testing.assert_allclose(np.c_[x, y], feet_in, atol=1e-6)
