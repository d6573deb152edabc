"""Terrain footprints found on a rendered empty table (vision/terrain.py) against the true polygons."""

from __future__ import annotations

import shapely

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from vision.analyze import make_detector
from vision.synth.table import render_table
from vision.terrain import terrain_footprints


def test_footprints_match_flat_pieces_and_cover_tall_ones() -> None:
    checked = 0
    for seed in (21, 24):
        table = render_table(seed, "focal-point", hard="none")
        lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
        frame = calibrate(table.empty, table.layout, lens)
        found = terrain_footprints(make_detector("learned"), table.empty, frame)  # type: ignore[arg-type]
        truth = [(t["kind"], t["height_in"], shapely.Polygon(t["polygon"])) for t in table.scene["terrain"]]
        assert all(any(f.intersects(p) for _, _, p in truth) for f in found)  # nothing found on bare mat
        for kind, height, poly in truth:
            best = max(found, key=lambda f: poly.intersection(f).area, default=shapely.Polygon())
            if height <= 1.0:  # flat pieces (and low hills): the outline is the footprint
                assert poly.intersection(best).area / poly.union(best).area >= 0.8, (seed, kind)
            else:  # walls lean away from the camera: the piece as seen covers its foot
                assert poly.intersection(best).area >= 0.85 * poly.area, (seed, kind)
            checked += 1
    assert checked >= 6
