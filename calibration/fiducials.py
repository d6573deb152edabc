"""Finding the kit's ArUco markers in a frame, corners refined to a fraction of a pixel."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import MARKER_DICTIONARY

Corners = npt.NDArray[np.float64]  # (4, 2) pixels, ArUco order


def dictionary(name: str = MARKER_DICTIONARY) -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))


def _detector() -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    # Sub-pixel corner refinement: unbiased (AprilTag refinement measured +0.5 px here).
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.cornerRefinementWinSize = 5
    params.cornerRefinementMaxIterations = 50
    params.cornerRefinementMinAccuracy = 0.01
    return cv2.aruco.ArucoDetector(dictionary(), params)


_DETECTOR = _detector()


def to_gray(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    if image.ndim == 2:
        return image
    out: npt.NDArray[np.uint8] = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return out


CELLS_ACROSS = 7  # a 5x5 marker plus its one-cell black border on each side


def _refine(gray: npt.NDArray[np.uint8], corners: Corners) -> Corners:
    """Re-refine a marker's corners with a window scaled to its cells: a fixed window
    reaches across into the next cell on small markers and biases the corner."""
    side = float(np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)))
    half = int(max(2, min(6, round(0.35 * side / CELLS_ACROSS))))
    pts = corners.astype(np.float32).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 0.005)
    cv2.cornerSubPix(gray, pts, (half, half), (-1, -1), criteria)
    return pts.reshape(4, 2).astype(np.float64)


EDGE_SAMPLES = 20  # points along each of a marker's four outer edges, or each half of a long one
EDGE_HALVES = ((0.08, 0.5), (0.5, 0.92))  # of an edge, from its first corner: clear of the corners themselves
WHOLE_EDGE = (0.15, 0.85)
HALVED_EDGE_PX = 100.0  # edges longer than this are read in halves
EDGE_MIN_CONTRAST = 20.0  # grey levels between the black border and the white paper for a point to count
EDGE_MIN_POINTS = 6  # an edge with fewer points leaves the marker's corners as cornerSubPix put them


def outward_normal(a: Corners, b: Corners, centre: Corners) -> Corners:
    """The unit normal to a marker's edge a-b that points away from the marker's ``centre``."""
    t = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
    n = np.array([-t[1], t[0]])
    out: Corners = n if n @ ((a + b) / 2 - centre) > 0 else -n
    return out


def edge_profiles(
    gray: npt.NDArray[np.float32],
    a: Corners,
    b: Corners,
    outward: Corners,
    offs: npt.NDArray[np.float64],
    span: tuple[float, float],
    rows: int,
) -> tuple[Corners, npt.NDArray[np.float32]]:
    """Profiles across edge a-b: ``rows`` points along its ``span`` (shares of it from a), and the grey levels
    at ``offs`` pixels from each along ``outward`` (rows x offsets)."""
    along = a + np.linspace(*span, rows)[:, None] * (b - a)
    xy = along[:, None, :] + offs[None, :, None] * outward[None, None, :]
    prof = cv2.remap(gray, xy[..., 0].astype(np.float32), xy[..., 1].astype(np.float32), cv2.INTER_LINEAR)
    return along, prof


def _edge_line(
    gray: npt.NDArray[np.float32], a: Corners, b: Corners, outward: Corners, cell_px: float, span: tuple[float, float]
) -> Any:
    """A line (point, direction) through the points along edge a-b where the profile across it crosses half-way
    from the black border (inside) to the white paper (outside); None where too few points show the edge."""
    # Inside, the border is a cell of black; outside, the paper's white margin is 0.25" (0.58 of a cell on a 3"
    # marker) and then the mat: the profile stays short of the mat, and takes the paper's brightest as its white.
    # Samples at most 0.5 px apart: the half-way crossing is interpolated between two of them.
    offs = np.linspace(-0.6 * cell_px, 0.45 * cell_px, max(25, int(np.ceil(1.05 * cell_px / 0.5)) + 1))
    along, prof = edge_profiles(gray, a, b, outward, offs, span, EDGE_SAMPLES)
    inside = offs < -0.4 * cell_px  # well inside the black border
    lo, hi = prof[:, inside].mean(axis=1), prof[:, offs > -0.05 * cell_px].max(axis=1)
    half = (lo + hi) / 2
    points = []
    for row, mid, pt, contrast in zip(prof, half, along, hi - lo, strict=True):
        above = np.flatnonzero(row >= mid)
        if contrast < EDGE_MIN_CONTRAST or not len(above) or above[0] == 0:
            continue
        j = above[0]
        f = (mid - row[j - 1]) / (row[j] - row[j - 1])
        points.append(pt + (offs[j - 1] + f * (offs[j] - offs[j - 1])) * outward)
    if len(points) < EDGE_MIN_POINTS:
        return None
    vx, vy, x0, y0 = cv2.fitLine(np.array(points, np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    return np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)


def _edge_corners(gray: npt.NDArray[np.uint8], corners: Corners) -> Corners:
    """The corners as the meets of the marker's four outer edges, each a line fitted along it (a long edge: along
    each half, a corner from the halves next to it).
    cornerSubPix reads a few pixels round each corner, where blur and the paper's narrow margin on a far marker
    pull it: on 80 rendered tables (seeds 5000-5039) its corners were off by 0.32 px (median), 0.56 (p95), 3.6 px
    at worst; the edges' meets by 0.05, 0.17 and 0.41 px. Where an edge cannot be read, the corners stay."""
    g = gray.astype(np.float32)
    centre = corners.mean(axis=0)
    cell_px = float(np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1))) / CELLS_ACROSS
    starts, ends = [], []  # each edge's half at its first corner, and at its second
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        outward = outward_normal(a, b, centre)
        # A long edge is read in two halves, each corner from the halves next to it: a lens bends a marker's
        # edges a little, and a line along a whole edge 300 px long (a 4K photo) missed the corners by more.
        if float(np.linalg.norm(b - a)) > HALVED_EDGE_PX:
            near_a, near_b = (_edge_line(g, a, b, outward, cell_px, span) for span in EDGE_HALVES)
        else:  # a short edge bends too little to matter: one line along it all, from twice the points
            near_a = near_b = _edge_line(g, a, b, outward, cell_px, WHOLE_EDGE)
        if near_a is None or near_b is None:
            return corners
        starts.append(near_a)
        ends.append(near_b)
    out = np.empty((4, 2), np.float64)
    for k in range(4):  # corner k: where edge k - 1 (ending at it) meets edge k (starting at it)
        (p1, d1), (p2, d2) = ends[k - 1], starts[k]
        try:
            s = np.linalg.solve(np.array([d1, -d2]).T, p2 - p1)
        except np.linalg.LinAlgError:
            return corners
        out[k] = p1 + s[0] * d1
    if np.max(np.linalg.norm(out - corners, axis=1)) > cell_px:  # far from the detector's: something else's edge
        return corners
    return out


# A blurred photo blurs a far marker's cells into each other and ArUco reads none of it; the photo sharpened
# (unsharp mask: sigma, amount) gives its cells back. Tuning tables 6200-6259 blurred 2 px more: markers read
# 215 -> 234 of 240, tables with all four 39 -> 54; held-out 05000-05059 so: 225 -> 237, 47 -> 57; as rendered
# (held-out, hands over some markers) 238 -> 238 (docs/calibration.md, session 57).
RESCUE_SHARPEN = (2.0, 1.0)


def _sharpened(gray: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    sigma, amount = RESCUE_SHARPEN
    blurred = cv2.GaussianBlur(gray, (0, 0), sigma)
    out: npt.NDArray[np.uint8] = cv2.addWeighted(gray, 1.0 + amount, blurred, -amount, 0)
    return out


def _read_ids(gray: npt.NDArray[np.uint8]) -> tuple[dict[int, Corners], set[int]]:
    """ArUco's markers in ``gray``: id -> its raw corners, and the ids seen more than once."""
    corners, ids, _ = _DETECTOR.detectMarkers(gray)
    raw: dict[int, Corners] = {}
    duplicates: set[int] = set()
    for c, i in zip(corners, [] if ids is None else ids.ravel(), strict=True):
        key = int(i)
        if key in raw:
            duplicates.add(key)
        raw[key] = np.asarray(c, dtype=np.float64).reshape(4, 2)
    return raw, duplicates


def detect_markers(image: npt.NDArray[np.uint8], expected: Collection[int] = ()) -> dict[int, Corners]:
    """Marker id -> its 4 corners in pixels. A marker seen twice is dropped (it cannot be trusted).
    Where one of the ``expected`` ids is not seen, the photo is read again sharpened (``RESCUE_SHARPEN``) for
    it; every corner is refined on the photo itself."""
    gray = to_gray(image)
    raw, duplicates = _read_ids(gray)
    if any(i not in raw for i in expected):
        again, twice = _read_ids(_sharpened(gray))
        for key in set(expected) - set(raw):
            if key in again and key not in twice:
                raw[key] = again[key]
    return {key: _edge_corners(gray, _refine(gray, corners)) for key, corners in raw.items() if key not in duplicates}


def sharpness(image: npt.NDArray[np.uint8]) -> float:
    """Variance of the Laplacian: low for blurred photos."""
    return float(cv2.Laplacian(to_gray(image), cv2.CV_64F).var())
