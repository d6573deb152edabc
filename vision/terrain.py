"""Terrain footprints: where each piece of terrain stands, as a polygon in table inches.

Found once per table, on the empty-table frame: the learned detector proposes a
box per piece; round it (grown to where walls may lean, and a margin of mat), the
terrain segmenter, a small U-Net trained on rendered tables, marks the piece as
the camera sees it, and the largest region's outline, simplified, is the
footprint. Without the segmenter's file (or asked to), GrabCut separates the
piece from the mat by colour instead and gives the piece's cast shadow (the
mat's colour, darker) back to the mat. Its rule category (blocking, woods, ...)
is the players' to give. Tall pieces are seen with their walls leaning away
from the camera, so their region reaches past the footprint on the far side:
the outline is the piece as seen. Given the height of its walls (the players'
to give, with the category), ``footprint_under`` takes the lean out and returns
the foot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import shapely
import shapely.affinity

from calibration.table_frame import CalibrationError, TableFrame
from vision.detect_learned import CLASSES, DETECT_PX_PER_IN, LearnedDetector, ModelError
from vision.onnx_session import OnnxNetwork

Image = npt.NDArray[np.uint8]
SEGMENT_PX_PER_IN = 20.0
MARGIN_IN = 0.6  # mat around the box, for GrabCut's background model
SIMPLIFY_IN = 0.08  # outline simplification tolerance
MIN_AREA_IN2 = 1.0
SEGMENTER_MODEL = Path(__file__).parent / "models" / "terrain-segmenter.onnx"
SEGMENTER_INPUT_PX = 80  # each patch is stretched to this square for the segmenter
OUTLINE_UPSAMPLE = 4  # the segmenter's answer is outlined at this many times the patch's resolution
BEYOND_EDGE_IN = 3.0  # how far past the table's edge a piece's lean is looked for
LEAN_HEIGHT_IN = 5.0  # walls this tall (most terrain is lower): measured 87.2 % at IoU >= 0.9 vs 83.8 % with 3"
MAX_SHADOW_SHARE = 0.4  # more "shadow" than this in a region: the piece itself is mat-coloured, keep it
SHADOW_RATIO = (0.35, 0.93)  # a shadow darkens every channel of the mat to within this share of it
SHADOW_CHROMA = 1.18  # ... by about the same share (max/min ratio across channels): the mat's colour
SHADOW_BLUR_IN = 0.075  # smoothing before the shadow test (sigma)
OPEN_IN = 0.25  # specks narrower than this are dropped from the region


@dataclass(frozen=True)
class TerrainPatch:
    """The rectified view round one terrain box: what the segmenter cuts the piece from."""

    image: Image  # at SEGMENT_PX_PER_IN, its top-left pixel's corner at (origin_px) in the table's pixels
    origin_px: tuple[int, int]
    box_px: tuple[float, float, float, float]  # the detector's box grown by the lean, in the patch's pixels
    on_table: npt.NDArray[np.bool_]  # pixels on the table (past its edge only a wall leaning over it is seen)


def terrain_boxes_in(detector: LearnedDetector, empty: Image, frame: TableFrame) -> npt.NDArray[np.float64]:
    """The detector's terrain boxes on the empty table, (N, 4) x0, y0, x1, y1 in table inches."""
    top = frame.rectify(empty, DETECT_PX_PER_IN)
    boxes, cls, _ = detector.boxes(top, detector.setup_threshold)
    found: npt.NDArray[np.float64] = boxes[cls == CLASSES.index("terrain")] / DETECT_PX_PER_IN
    return found


def terrain_patches(detector: LearnedDetector, empty: Image, frame: TableFrame) -> list[TerrainPatch]:
    """One patch per terrain box the detector finds on the empty table."""
    return [terrain_patch(empty, frame, box) for box in terrain_boxes_in(detector, empty, frame)]


def terrain_patch(empty: Image, frame: TableFrame, box_in: npt.NDArray[np.float64]) -> TerrainPatch:
    """The patch round a terrain box (x0, y0, x1, y1 inches): the box grown to where its walls may lean,
    and a margin of mat round it."""
    width_in, depth_in = frame.layout.width_in, frame.layout.depth_in
    ppi = SEGMENT_PX_PER_IN
    box = _with_lean(box_in, frame)
    # Walls near the table's edge lean past it: cut the piece seen there whole, or pulling the lean
    # back (footprint_under) would cut its foot short too.
    x0, y0 = max(box[0] - MARGIN_IN, -BEYOND_EDGE_IN), max(box[1] - MARGIN_IN, -BEYOND_EDGE_IN)
    x1, y1 = min(box[2] + MARGIN_IN, width_in + BEYOND_EDGE_IN), min(box[3] + MARGIN_IN, depth_in + BEYOND_EDGE_IN)
    ox, oy = int(x0 * ppi), int(y0 * ppi)
    image = frame.rectify(empty, ppi, (ox, oy, int((x1 - x0) * ppi), int((y1 - y0) * ppi)))
    h_px, w_px = image.shape[:2]
    u, v = np.meshgrid((np.arange(w_px) + ox + 0.5) / ppi, (np.arange(h_px) + oy + 0.5) / ppi)
    on_table = (u >= 0) & (u <= width_in) & (v >= 0) & (v <= depth_in)
    box_px = (box[0] * ppi - ox, box[1] * ppi - oy, box[2] * ppi - ox, box[3] * ppi - oy)
    return TerrainPatch(image, (ox, oy), box_px, on_table)


def segmenter_input(patch: TerrainPatch) -> npt.NDArray[np.float32]:
    """The segmenter's input for ``patch``: (4, S, S), its colours (BGR, 0..1) and its box (1 inside),
    stretched to S x S (S = SEGMENTER_INPUT_PX)."""
    side = SEGMENTER_INPUT_PX
    h_px, w_px = patch.image.shape[:2]
    shrink = cv2.INTER_AREA if max(h_px, w_px) > side else cv2.INTER_LINEAR
    colour = cv2.resize(patch.image, (side, side), interpolation=shrink).astype(np.float32) / 255.0
    box = np.zeros((h_px, w_px), np.float32)
    x0, y0, x1, y1 = (int(round(v)) for v in patch.box_px)
    box[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)] = 1.0
    box = cv2.resize(box, (side, side), interpolation=cv2.INTER_AREA if max(h_px, w_px) > side else cv2.INTER_LINEAR)
    return np.concatenate([colour.transpose(2, 0, 1), box[None]]).astype(np.float32)


class TerrainSegmenter:
    """A small U-Net (``vision/training/terrain_segmenter.py``) that marks which pixels of a patch are the
    piece as the camera sees it (foot, walls and top), trained on rendered tables' terrain."""

    def __init__(self, path: Path = SEGMENTER_MODEL) -> None:
        if not path.exists():
            raise ModelError(f"{path}: no terrain segmenter there (tablesight train-terrain makes one)")
        self._net = OnnxNetwork(path, ModelError)

    def outline_px(self, patch: TerrainPatch) -> shapely.Polygon | None:
        """The piece seen in ``patch``, in the patch's pixels: the largest region the segmenter marks."""
        logits = self._net.raw(segmenter_input(patch)[None])[0, 0]
        h_px, w_px = patch.image.shape[:2]
        up = OUTLINE_UPSAMPLE
        big = cv2.resize(logits.astype(np.float32), (w_px * up, h_px * up), interpolation=cv2.INTER_LINEAR)
        return _largest_region((big > 0).astype(np.uint8) * 255, up)


def terrain_footprints(
    detector: LearnedDetector, empty: Image, frame: TableFrame, method: str = "auto"
) -> list[shapely.Polygon]:
    """One polygon (table inches) per terrain piece the detector boxes on the empty table, each cut from its
    patch by ``method``: 'segmenter' (the shipped network), 'grabcut' (colour alone) or 'auto' (the network
    where its file is there)."""
    if method not in ("auto", "segmenter", "grabcut"):
        raise ValueError(f"terrain method {method!r}: expected auto, segmenter or grabcut")
    segmenter = None
    if method == "segmenter" or (method == "auto" and SEGMENTER_MODEL.exists()):
        segmenter = TerrainSegmenter(SEGMENTER_MODEL)
    ppi = SEGMENT_PX_PER_IN
    found: list[shapely.Polygon] = []
    for patch in terrain_patches(detector, empty, frame):
        if segmenter is not None:
            footprint = segmenter.outline_px(patch)
        else:
            footprint = _segment(patch.image, patch.box_px, patch.on_table)
        if footprint is None:
            continue
        ox, oy = patch.origin_px
        poly = shapely.affinity.affine_transform(footprint, [1 / ppi, 0, 0, 1 / ppi, ox / ppi, oy / ppi])
        if poly.area >= MIN_AREA_IN2 and not any(poly.intersection(f).area > 0.5 * poly.area for f in found):
            found.append(poly)
    return found


def _segment(
    patch: Image, box_px: tuple[float, float, float, float], on_table: npt.NDArray[np.bool_]
) -> shapely.Polygon | None:
    """GrabCut inside the box (the margin is mat; past the table's edge, probably not the piece: only a wall
    leaning over it is); the largest foreground region's simplified outline."""
    h, w = patch.shape[:2]
    bx0, by0 = max(int(box_px[0]), 1), max(int(box_px[1]), 1)
    bx1, by1 = min(int(np.ceil(box_px[2])), w - 1), min(int(np.ceil(box_px[3])), h - 1)
    if bx1 - bx0 < 4 or by1 - by0 < 4:
        return None
    mask = np.full((h, w), cv2.GC_BGD, np.uint8)
    inside = mask[by0:by1, bx0:bx1]
    inside[:] = np.where(on_table[by0:by1, bx0:bx1], cv2.GC_PR_FGD, cv2.GC_PR_BGD)
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)  # GrabCut's GMM initialisation: the same answer every time
    cv2.grabCut(patch, mask, None, bgd, fgd, 4, cv2.GC_INIT_WITH_MASK)
    fg = np.isin(mask, (cv2.GC_FGD, cv2.GC_PR_FGD)).astype(np.uint8) * 255
    # GrabCut takes the piece's cast shadow for part of it (darker than the mat, unlike it). A shadow is
    # the mat's own colour, darker: dropped, unless it would be much of the region (a piece that is
    # a darker shade of the mat).
    shade = _shadow(patch, fg == 0) & (fg > 0)
    if shade.sum() < MAX_SHADOW_SHARE * (fg > 0).sum():
        fg[shade] = 0
    open_px = max(3, round(OPEN_IN * SEGMENT_PX_PER_IN)) | 1
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((open_px, open_px), np.uint8))
    return _largest_region(fg, 1)


def _largest_region(fg: npt.NDArray[np.uint8], scale: int) -> shapely.Polygon | None:
    """The simplified outline, in the patch's pixels, of the largest region of the mask ``fg`` (drawn at
    ``scale`` times the patch's resolution)."""
    contours, _ = cv2.findContours(fg, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    outline = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64)
    if len(outline) < 3:
        return None
    poly = shapely.Polygon((outline + 0.5) / scale).buffer(0)  # the mask's pixel centres
    if isinstance(poly, shapely.MultiPolygon):
        poly = max(poly.geoms, key=lambda g: g.area)
    if poly.is_empty:
        return None
    return poly.simplify(SIMPLIFY_IN * SEGMENT_PX_PER_IN)


def footprint_under(seen: shapely.Polygon, wall_height_in: float, frame: TableFrame) -> shapely.Polygon:
    """The foot of a walled piece from its outline as seen (``terrain_footprints``) and its walls' height.

    Seen from the camera, the walls sweep the foot away from the point under the lens: the outline
    is every point of the foot raised from the table to the top of the walls. Pulling the outline
    back along the camera's rays to the walls' height (each point moved to where its ray meets
    that height) undoes the sweep's far end, and the foot is what both outlines cover.
    Needs the camera pose (a calibration with a lens model or a tilted view).
    """
    if wall_height_in <= 0 or seen.is_empty:
        return seen
    ring = np.asarray(seen.exterior.coords)[:-1]
    pulled = frame.image_to_table(frame.table_to_image(ring), z_in=wall_height_in)
    foot = seen.intersection(shapely.Polygon(pulled).buffer(0))
    if isinstance(foot, shapely.MultiPolygon | shapely.GeometryCollection):
        parts = [g for g in getattr(foot, "geoms", []) if isinstance(g, shapely.Polygon)]
        foot = max(parts, key=lambda g: g.area) if parts else shapely.Polygon()
    return foot if isinstance(foot, shapely.Polygon) else shapely.Polygon()


def _shadow(patch: Image, mat: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Pixels that are the mat in shadow: the mat's colour, every channel darkened by about the same share."""
    if mat.sum() < 50:
        return np.zeros(mat.shape, bool)
    smooth = cv2.GaussianBlur(patch, (0, 0), SHADOW_BLUR_IN * SEGMENT_PX_PER_IN).astype(np.float32)
    ref = np.median(smooth[mat], axis=0) + 1.0
    ratio = (smooth + 1.0) / ref
    lo, hi = ratio.min(axis=2), ratio.max(axis=2)
    return (hi <= SHADOW_RATIO[1]) & (lo >= SHADOW_RATIO[0]) & (hi / lo <= SHADOW_CHROMA)


def _with_lean(box_in: npt.NDArray[np.float64], frame: TableFrame) -> npt.NDArray[np.float64]:
    """The box grown to where walls up to LEAN_HEIGHT_IN tall on it would be seen (the detector boxes the
    foot; the walls lean away from the camera, and GrabCut must see all of the piece to cut it whole)."""
    corners = np.array([[box_in[0], box_in[1]], [box_in[2], box_in[1]], [box_in[2], box_in[3]], [box_in[0], box_in[3]]])
    try:
        leaned = frame.image_to_table(frame.table_to_image(corners, LEAN_HEIGHT_IN))
    except CalibrationError:  # no camera pose: nothing to grow by
        return box_in
    pts = np.r_[corners, leaned]
    return np.array([pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max()])
