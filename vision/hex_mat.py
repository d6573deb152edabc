"""The hex grid printed on a mat, found in the top-down view of the table (games played in hexes: Onefinity).

A trooper stands in the hex that holds its centre, so the referee needs the grid exactly: its orientation,
the width of a hex (flat side to flat side) and where one hex's centre lies. The printed outlines are thin
dark lines. Their pattern repeats on the hex lattice, so its spectrum peaks on the six shortest vectors of
the reciprocal lattice: at 90, 30 and 150 degrees for pointy-topped hexes, 0, 60 and 120 for flat-topped
ones, 2 / (width * sqrt(3)) cycles per inch from the origin. That gives orientation and width roughly; a
correlation with the grid drawn at that width gives where the hexes lie; and a search that scores the line
darkness along every hex edge makes all three exact (a width 0.1 % off moves a hex 16 hexes away by 0.02").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from geometry.hexgrid import HexGrid

HEX_PX_PER_IN = 32.0  # the top-down view the grid is looked for in (outlines ~0.04" wide: about a pixel)
WIDTHS_IN = (0.6, 3.0)  # hex widths looked for (flat side to flat side)
# How much darker the mat is along the grid's edges than elsewhere (in the line map's spread). On 24 rendered
# hex mats (three grids, 1-2" wide, dark mats too) 0.85-2.9; on 24 plain mats, where the best grid any search
# finds lies on mottling, 0.02-0.13.
MIN_CONTRAST = 0.3
HEX_GAMES = ("onefinity",)  # games played in hexes: their rulings need the mat's grid (table.hex)
ORIENTATIONS = {"pointy": (30.0, 90.0, 150.0), "flat": (0.0, 60.0, 120.0)}  # reciprocal directions, degrees


@dataclass(frozen=True)
class HexMat:
    """A hex grid found on the mat, in table inches, and how clearly its outlines showed (``contrast``)."""

    width_in: float
    orientation: str
    origin_x_in: float
    origin_y_in: float
    contrast: float

    def spec(self) -> dict[str, Any]:
        """As a scene's ``table.hex``."""
        return {
            "width_in": round(self.width_in, 4),
            "orientation": self.orientation,
            "origin_x_in": round(self.origin_x_in, 4),
            "origin_y_in": round(self.origin_y_in, 4),
        }


def line_map(top: npt.NDArray[np.uint8], px_per_in: float, light: bool = False) -> npt.NDArray[np.float32]:
    """Thin dark lines in a top-down view (``light``: thin light lines, as a dark mat prints them): the black
    (white) top-hat of its grey, for lines up to ~0.15" wide, scaled."""
    grey = cv2.cvtColor(top, cv2.COLOR_BGR2GRAY) if top.ndim == 3 else top
    size = max(3, int(round(0.15 * px_per_in)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    hat = cv2.morphologyEx(grey, cv2.MORPH_TOPHAT if light else cv2.MORPH_BLACKHAT, kernel).astype(np.float32)
    # Outlines are straight for a third of an inch and more; a mottled mat's speckle is not. Averaged along
    # lines every 30 degrees (the edges of either orientation), the best direction at each pixel keeps the
    # outlines and smooths the speckle away.
    length = max(5, int(round(0.3 * px_per_in)) | 1)
    best = np.zeros_like(hat)
    for angle in range(0, 180, 30):
        line = np.zeros((length, length), np.float32)
        c, half = length // 2, length / 2.0
        dx, dy = math.cos(math.radians(angle)) * half, math.sin(math.radians(angle)) * half
        cv2.line(line, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1, cv2.LINE_AA)
        best = np.maximum(best, cv2.filter2D(hat, -1, line / line.sum()))
    return best / max(float(np.percentile(best, 99.5)), 1e-6)


def find_hex_mat(top: npt.NDArray[np.uint8], px_per_in: float = HEX_PX_PER_IN) -> HexMat | None:
    """The hex grid on the mat in ``top`` (a top-down view of the whole table at ``px_per_in``, table (0, 0) at
    its top-left corner), or None when no grid shows clearly."""
    h, w = top.shape[:2]
    if min(h, w) < 4 * WIDTHS_IN[0] * px_per_in:
        return None
    # Mats print their hexes dark on light or light on dark: the outlines are in the line map of the polarity
    # whose pattern stands out of its spectrum the more.
    maps = [line_map(top, px_per_in, light) for light in (False, True)]
    peaks = [_from_spectrum(lines, px_per_in) for lines in maps]
    k = int(peaks[1][2] > peaks[0][2])
    lines, (orientation, width_in, _) = maps[k], peaks[k]
    origin = _offset(lines, px_per_in, orientation, width_in)
    best = _refine(lines, px_per_in, orientation, width_in, origin)
    contrast = _contrast(lines, px_per_in, best)
    if contrast < MIN_CONTRAST:
        return None
    # The hex centre nearest the table's top-left corner as the origin: the same grid, easier to read.
    q, r = best.to_hex([0.0], [0.0])
    ox, oy = best.to_table(q, r)
    return HexMat(best.width_in, orientation, float(ox[0]), float(oy[0]), contrast)


def _from_spectrum(lines: npt.NDArray[np.float32], px_per_in: float) -> tuple[str, float, float]:
    """Orientation and (roughly) width: where the line pattern's spectrum peaks; and how far the peaks stand
    out of the spectrum (their power over the mean power)."""
    h, w = lines.shape
    window = np.outer(np.hanning(h), np.hanning(w)).astype(np.float32)
    power = np.abs(np.fft.fft2((lines - lines.mean()) * window)) ** 2
    power = np.fft.fftshift(power)
    cy, cx = h // 2, w // 2
    best = ("pointy", 1.0, -1.0)
    for orientation, angles in ORIENTATIONS.items():
        for width_in in np.geomspace(*WIDTHS_IN, 400):
            radius = 2.0 / (width_in * math.sqrt(3.0)) / px_per_in  # cycles per pixel
            score = 0.0
            for angle in angles:
                fx, fy = radius * math.cos(math.radians(angle)), -radius * math.sin(math.radians(angle))
                score += _bilinear(power, cy + fy * h, cx + fx * w)
            if score > best[2]:
                best = (orientation, float(width_in), score)
    return best[0], best[1], best[2] / len(ORIENTATIONS["pointy"]) / max(float(power.mean()), 1e-12)


def _bilinear(image: npt.NDArray[Any], y: float, x: float) -> float:
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    if not (0 <= y0 < image.shape[0] - 1 and 0 <= x0 < image.shape[1] - 1):
        return 0.0
    fy, fx = y - y0, x - x0
    top = image[y0, x0] * (1 - fx) + image[y0, x0 + 1] * fx
    bottom = image[y0 + 1, x0] * (1 - fx) + image[y0 + 1, x0 + 1] * fx
    return float(top * (1 - fy) + bottom * fy)


def _grid(width_in: float, ox: float, oy: float, orientation: str) -> HexGrid:
    return HexGrid(width_in, "pointy" if orientation == "pointy" else "flat", ox, oy)


def _edge_points(grid: HexGrid, width_in: float, depth_in: float, per_edge: int = 6) -> npt.NDArray[np.float64]:
    """Points along the edges of every hex with its centre on the table (inches), corners left out."""
    reach = int(math.ceil((width_in + depth_in) / (grid.size_in * 1.5))) + 2
    q, r = np.meshgrid(np.arange(-reach, reach + 1), np.arange(-reach, reach + 1))
    cx, cy = grid.to_table(q.ravel(), r.ravel())
    keep = (cx >= 0) & (cx <= width_in) & (cy >= 0) & (cy <= depth_in)
    cx, cy = cx[keep], cy[keep]
    start = math.radians(30.0 if grid.orientation == "pointy" else 0.0)
    corners = [(math.cos(start + k * math.pi / 3), math.sin(start + k * math.pi / 3)) for k in range(7)]
    t = (np.arange(per_edge) + 0.5) / per_edge * 0.8 + 0.1
    out = []
    for k in range(6):
        (ax, ay), (bx, by) = corners[k], corners[k + 1]
        px = ax + (bx - ax) * t
        py = ay + (by - ay) * t
        out.append(np.c_[(cx[:, None] + grid.size_in * px).ravel(), (cy[:, None] + grid.size_in * py).ravel()])
    return np.concatenate(out)


def _line_score(lines: npt.NDArray[np.float32], px_per_in: float, grid: HexGrid) -> float:
    """Mean line response along every hex edge of ``grid`` on the table."""
    h, w = lines.shape
    points = _edge_points(grid, w / px_per_in, h / px_per_in) * px_per_in - 0.5
    inside = (points[:, 0] >= 0) & (points[:, 0] < w - 1) & (points[:, 1] >= 0) & (points[:, 1] < h - 1)
    points = points[inside]
    if not len(points):
        return 0.0
    x0, y0 = np.floor(points[:, 0]).astype(int), np.floor(points[:, 1]).astype(int)
    fx, fy = points[:, 0] - x0, points[:, 1] - y0
    top = lines[y0, x0] * (1 - fx) + lines[y0, x0 + 1] * fx
    bottom = lines[y0 + 1, x0] * (1 - fx) + lines[y0 + 1, x0 + 1] * fx
    return float(np.mean(top * (1 - fy) + bottom * fy))


def _offset(lines: npt.NDArray[np.float32], px_per_in: float, orientation: str, width_in: float) -> tuple[float, float]:
    """Where the hexes lie: the shift of the grid drawn from (0, 0) that best matches the lines (to a pixel)."""
    h, w = lines.shape
    template = np.zeros((h, w), np.float32)
    grid = _grid(width_in, 0.0, 0.0, orientation)
    # Draw from a centre one lattice step inside, so that shifts within one hex cover the table.
    points = _edge_points(grid, w / px_per_in + 2 * width_in, h / px_per_in + 2 * width_in, 8) * px_per_in
    ij = np.round(points).astype(int)
    ok = (ij[:, 0] >= 0) & (ij[:, 0] < w) & (ij[:, 1] >= 0) & (ij[:, 1] < h)
    template[ij[ok, 1], ij[ok, 0]] = 1.0
    template = cv2.GaussianBlur(template, (0, 0), 1.0)
    spectrum = np.fft.fft2(lines - lines.mean()) * np.conj(np.fft.fft2(template - template.mean()))
    correlation = np.real(np.fft.ifft2(spectrum))
    dy, dx = np.unravel_index(int(np.argmax(correlation)), correlation.shape)
    return (dx % w) / px_per_in, (dy % h) / px_per_in


def _refine(
    lines: npt.NDArray[np.float32], px_per_in: float, orientation: str, width_in: float, origin: tuple[float, float]
) -> HexGrid:
    """Width and origin made exact: a pattern search on the line response along every hex edge."""
    params = np.array([width_in, origin[0], origin[1]], np.float64)
    # The spectrum's width is within a few per cent: try a few widths around it before the fine search.
    best_score = -1.0
    for factor in np.linspace(0.94, 1.06, 25):
        trial = np.array([width_in * factor, *origin])
        shift = _offset(lines, px_per_in, orientation, trial[0]) if abs(factor - 1.0) > 1e-9 else origin
        trial[1:] = shift
        score = _line_score(lines, px_per_in, _grid(*_params3(trial), orientation=orientation))
        if score > best_score:
            best_score, params = score, trial
    # The fine search moves the width about the hex nearest the table's middle, which stays put: a wider grid
    # is not also a shifted one there, so width and place are searched apart (about the corner, one step of
    # width would move the far hexes a whole pixel and the search would crawl along that valley).
    h, w = lines.shape
    first = _grid(*_params3(params), orientation=orientation)
    q0, r0 = (int(v[0]) for v in first.to_hex([w / px_per_in / 2], [h / px_per_in / 2]))

    def about_middle(values: npt.NDArray[np.float64]) -> HexGrid:
        dx, dy = _grid(float(values[0]), 0.0, 0.0, orientation).to_table([q0], [r0])
        return _grid(float(values[0]), float(values[1] - dx[0]), float(values[2] - dy[0]), orientation)

    mx, my = first.to_table([q0], [r0])
    params = np.array([params[0], mx[0], my[0]])
    steps = np.array([params[0] * 0.004, 1.0 / px_per_in, 1.0 / px_per_in])
    for _ in range(80):
        improved = False
        for k in range(3):
            for sign in (1.0, -1.0):
                trial = params.copy()
                trial[k] += sign * steps[k]
                score = _line_score(lines, px_per_in, about_middle(trial))
                if score > best_score:
                    best_score, params, improved = score, trial, True
        if not improved:
            steps /= 2.0
            if steps[1] < 0.002:
                break
    return about_middle(params)


def _params3(params: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    return float(params[0]), float(params[1]), float(params[2])


def _contrast(lines: npt.NDArray[np.float32], px_per_in: float, grid: HexGrid) -> float:
    """How much darker the mat is along the grid's edges than elsewhere, in units of the line map's spread."""
    on = _line_score(lines, px_per_in, grid)
    return (on - float(lines.mean())) / max(float(lines.std()), 1e-6)


def hex_mat_on(image: npt.NDArray[np.uint8], frame: Any) -> HexMat | None:
    """The hex grid on the mat in a photo of the table (best: the empty table), through its calibration
    (``calibration.table_frame.TableFrame``)."""
    return find_hex_mat(frame.rectify(image, HEX_PX_PER_IN), HEX_PX_PER_IN)


def parse_hex_mat(text: str) -> dict[str, Any]:
    """``WIDTH,ORIENTATION,X,Y`` (inches; pointy or flat; a hex centre) as a scene's ``table.hex``, or a clear
    error."""
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 4 or parts[1] not in ("pointy", "flat"):
            raise ValueError
        spec = {"width_in": float(parts[0]), "orientation": parts[1], "origin_x_in": float(parts[2])}
        spec["origin_y_in"] = float(parts[3])
        HexGrid(spec["width_in"], parts[1], spec["origin_x_in"], spec["origin_y_in"])  # type: ignore[arg-type]
    except ValueError:
        raise ValueError(
            f"--hex-mat: expected WIDTH,pointy|flat,X,Y (inches: a hex's width flat to flat, a hex centre), "
            f"got {text!r}"
        ) from None
    return spec


def describe_no_hex_mat() -> str:
    return (
        "no hex grid found on the mat: the rulings need it (which hex each trooper stands in); "
        "give it with --hex-mat WIDTH,pointy|flat,X,Y"
    )


def mat_grid(
    game: str, given: dict[str, Any] | None, image: npt.NDArray[np.uint8], frame: Any
) -> dict[str, Any] | None:
    """A live game's hex grid, at set-up: the one given, else the one found on the set-up frame (None: not a
    game played in hexes, or no grid found: the deployment frame's analysis asks the players for it)."""
    if given is not None or game not in HEX_GAMES:
        return given
    found = hex_mat_on(image, frame)
    return found.spec() if found is not None else None


def mat_grid_again(
    game: str, grid: dict[str, Any] | None, given: bool, image: npt.NDArray[np.uint8], frame: Any
) -> dict[str, Any] | None:
    """The grid found on the set-up frame ``image``, found again through ``frame``, a better map of it (markers hidden
    at set-up in view since: calibration/monitor.py's "refined"). Found through a map from two markers, a 1.5" grid
    was up to 0.025-0.062" off the mat's across a 24" table, against 0.016-0.018" through all four (docs/live.md, session 88).
    The grid the players ``given`` stays, and so does ``grid`` where none is found now."""
    if given:
        return grid
    return mat_grid(game, None, image, frame) or grid


def describe_set_up(game: str, grid: dict[str, Any] | None) -> str:
    """What the set-up says of the mat's grid in a game played in hexes ('' in any other game)."""
    if game not in HEX_GAMES:
        return ""
    if grid is None:
        return describe_no_hex_mat()
    return f'hex mat: {grid["width_in"]:.3g}" {grid["orientation"]} hexes'
