"""Terrain footprints found on a rendered empty table (vision/terrain.py) against the true polygons."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely
import shapely.affinity

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from vision.analyze import make_detector
from vision.synth.table import render_table
from vision.terrain import footprint_under, terrain_footprints


@pytest.mark.parametrize("method", ["segmenter", "grabcut"])
def test_footprints_match_flat_pieces_and_cover_tall_ones(method: str) -> None:
    checked = 0
    for seed in (21, 24):
        table = render_table(seed, "focal-point", hard="none")
        lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
        frame = calibrate(table.empty, table.layout, lens)
        found = terrain_footprints(make_detector("learned"), table.empty, frame, method)  # type: ignore[arg-type]
        truth = [(t["kind"], t["height_in"], shapely.Polygon(t["polygon"])) for t in table.scene["terrain"]]
        assert all(any(f.intersects(p) for _, _, p in truth) for f in found)  # nothing found on bare mat
        for kind, height, poly in truth:
            best = max(found, key=lambda f: poly.intersection(f).area, default=shapely.Polygon())
            # Hills are drawn raised (their sides lean like walls); others over 1" tall have walls.
            if kind != "hill" and (kind not in ("blocking", "ruins") or height <= 1.0):  # the outline is the foot
                assert poly.intersection(best).area / poly.union(best).area >= 0.8, (seed, kind)
            else:  # walls lean away from the camera: the piece as seen covers its foot ...
                assert poly.intersection(best).area >= 0.85 * poly.area, (seed, kind)
                # ... and given the walls' height, footprint_under takes the lean out.
                foot = footprint_under(best, height, frame)
                seen_iou = poly.intersection(best).area / poly.union(best).area
                gain = 0.0 if kind == "hill" else 0.1  # a hill's sides lean less than tall walls
                assert poly.intersection(foot).area / poly.union(foot).area >= max(0.85, seen_iou + gain), (seed, kind)
            checked += 1
    assert checked >= 6


def _seen_from_camera(foot: shapely.Polygon, height_in: float, frame: object) -> shapely.Polygon:
    """The outline a prism ``height_in`` tall on ``foot`` makes on the table as the camera sees it:
    the foot, the top, and every wall between them, each mapped to the table plane along the camera's rays."""
    ring = np.asarray(foot.exterior.coords)[:-1]
    top = frame.image_to_table(frame.table_to_image(ring, z_in=height_in))  # type: ignore[attr-defined]
    walls = [shapely.Polygon([ring[k], ring[k - 1], top[k - 1], top[k]]).buffer(0) for k in range(len(ring))]
    return shapely.unary_union([foot, shapely.Polygon(top), *walls])


def test_footprint_under_recovers_the_foot_of_any_prism() -> None:
    """Property: for seeded feet (rectangles, L shapes) anywhere on a tilted camera's table and walls
    0.5-6" tall, the foot recovered from the exact outline as seen covers the foot and is the foot
    (IoU >= 0.99) when it is convex."""
    table = render_table(21, "focal-point", hard="none")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    rng = np.random.default_rng(5)
    for _ in range(40):
        cx, cy = rng.uniform(4, 20, 2)
        w, h = rng.uniform(1.5, 5, 2)
        foot = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        if rng.uniform() < 0.5:
            foot = foot.difference(shapely.box(cx, cy, cx + w, cy + h))  # an L
        foot = shapely.affinity.rotate(foot, rng.uniform(0, 90))
        height = float(rng.uniform(0.5, 6.0))
        seen = _seen_from_camera(foot, height, frame)
        assert seen.area > foot.area  # the walls do lean
        found = footprint_under(seen, height, frame)
        assert foot.intersection(found).area >= 0.99 * foot.area and found.within(seen.buffer(1e-6))
        if foot.equals(foot.convex_hull):
            assert foot.intersection(found).area / foot.union(found).area >= 0.99, (cx, cy, height)
        else:  # mat inside an L that walls lean over cannot be seen, and counts as foot
            assert foot.intersection(found).area / foot.union(found).area >= 0.9, (cx, cy, height)
    assert footprint_under(foot, 0.0, frame) is foot  # no walls, nothing to take out


def test_a_pieces_cast_shadow_is_given_back_to_the_mat() -> None:
    # A 3"x2" piece at 20 px/in on a mottled green mat, its shadow falling 0.4" to the right and below
    # (the mat darkened to 60 %): the outline is the piece, not the piece and its shadow.
    from vision.terrain import SEGMENT_PX_PER_IN, _segment

    ppi = SEGMENT_PX_PER_IN
    rng = np.random.default_rng(5)
    h, w = int(4.4 * ppi), int(5.4 * ppi)
    mat = np.empty((h, w, 3), np.float32)
    mat[:] = (60, 140, 70)
    mat += rng.normal(0, 6, (h, w, 1))
    x0, y0, x1, y1 = (int(v * ppi) for v in (1.0, 1.0, 4.0, 3.0))
    shift = int(0.4 * ppi)
    mat[y0 + shift : y1 + shift, x0 + shift : x1 + shift] *= 0.6  # the shadow
    mat[y0:y1, x0:x1] = (150, 120, 170)  # the piece on top
    patch = np.clip(mat, 0, 255).astype(np.uint8)
    box = (x0 - 2, y0 - 2, x1 + shift + 2, y1 + shift + 2)  # the detector's box takes the shadow in too
    found = _segment(patch, box, np.ones((h, w), bool))
    assert found is not None
    piece = shapely.box(x0, y0, x1, y1)
    assert piece.intersection(found).area / piece.union(found).area >= 0.93


def test_an_unknown_method_or_a_missing_segmenter_says_which(tmp_path: Path) -> None:
    from vision.detect_learned import ModelError
    from vision.terrain import TerrainSegmenter

    table = render_table(21, "focal-point", hard="none")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    with pytest.raises(ValueError, match="terrain method 'watershed'"):
        terrain_footprints(make_detector("learned"), table.empty, frame, "watershed")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="nothing.onnx: no terrain segmenter there"):
        TerrainSegmenter(tmp_path / "nothing.onnx")
    (tmp_path / "broken.onnx").write_bytes(b"not a network")
    with pytest.raises(ModelError, match="broken.onnx: not a model"):
        TerrainSegmenter(tmp_path / "broken.onnx")
