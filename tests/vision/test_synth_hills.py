"""The renderer's hills are plateaus: what lies on one (its bases) is seen at the hill's height, where the
analysis looks for it (vision/analyze.py lifts a base found on a hill to the hill's top)."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from geometry.shapes import base_semi_axes_in
from vision.synth.camera import Camera
from vision.synth.table import _raise_hill, ground_height_in, render_table


def test_a_spot_on_a_hill_is_seen_where_its_ray_meets_the_hilltop() -> None:
    table, ppi, border = (24.0, 24.0), 40.0, 2.0
    camera = Camera.looking_at_table(table, (1280, 720), tilt_deg=20.0, yaw_deg=5.0)
    texture = np.full((int((table[1] + 2 * border) * ppi), int((table[0] + 2 * border) * ppi), 3), 90, np.uint8)
    spot_in = (6.0, 7.0)  # a red spot on a hill near the table's corner, far from the camera's nadir
    px = [int((spot_in[0] + border) * ppi), int((spot_in[1] + border) * ppi)]
    texture[px[1] - 4 : px[1] + 4, px[0] - 4 : px[0] + 4] = (0, 0, 255)
    hill = {"kind": "hill", "height_in": 1.5, "polygon": [[4, 5], [9, 5], [9, 9], [4, 9]]}
    photo = camera.render(texture, ppi, border_in=border)
    empty = photo.copy()
    _raise_hill(camera, hill, [(photo, texture)], empty, ppi, border)
    red = np.argwhere((photo[..., 2] > 200) & (photo[..., 1] < 60))
    seen = red.mean(axis=0)[::-1]
    on_top = camera.project([[spot_in[0], spot_in[1], -1.5]])[0]
    flat = camera.project([[spot_in[0], spot_in[1], 0.0]])[0]
    assert np.hypot(*(seen - on_top)) < 1.0
    assert np.hypot(*(flat - on_top)) > 5.0  # the parallax the analysis corrects is real in the picture


def test_bases_stand_on_a_hill_or_beside_it_never_across_its_edge() -> None:
    tables_with_hills = bases_on_hills = 0
    for seed in range(6300, 6310):
        table = render_table(seed, "focal-point", hard="hills")
        hills = [t for t in table.scene["terrain"] if t["kind"] == "hill"]
        tables_with_hills += bool(hills)
        for m in table.scene["models"]:
            radius = base_semi_axes_in(m["base"])[0]
            assert m["z"] == round(ground_height_in(hills, m["x"], m["y"], radius), 4)
            bases_on_hills += m["z"] > 0
            if m["z"] == 0:
                base = shapely.Point(m["x"], m["y"]).buffer(radius + 0.02)
                assert not any(shapely.Polygon(h["polygon"]).intersects(base) for h in hills)
    assert tables_with_hills >= 3 and bases_on_hills >= 3


def test_a_window_of_the_table_maps_is_that_window_of_the_whole_maps() -> None:
    """The renderer undoes the lens once per camera; each window (a hill's) is cut from it, never recomputed."""
    camera = Camera.looking_at_table((44.0, 60.0), (640, 360), tilt_deg=25.0, yaw_deg=-7.0)
    whole_x, whole_y = camera.table_maps(-1.5)
    x, y = camera.table_maps(-1.5, (100, 40, 300, 200))
    assert x.shape == (160, 200) and np.array_equal(x, whole_x[40:200, 100:300])
    assert np.array_equal(y, whole_y[40:200, 100:300])
    ground = camera.project(np.c_[x[::37, ::41].ravel(), y[::37, ::41].ravel(), np.full(x[::37, ::41].size, -1.5)])
    want = np.stack(np.meshgrid(np.arange(100, 300, 41), np.arange(40, 200, 37)), axis=-1).reshape(-1, 2)
    assert np.abs(ground - want).max() < 0.01  # each pixel's ray does meet the plane there
    with pytest.raises(ValueError, match="not inside"):
        camera.table_maps(0.0, (600, 0, 700, 100))
