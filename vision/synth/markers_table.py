"""A table top with the kit's fiducial markers laid out on it, as a texture in table inches."""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import dictionary
from calibration.layout import Layout, MarkerPlacement

SUPERSAMPLE = 8  # samples per texture pixel side when painting a marker (edges anti-aliased to 1/64 px)
PAPER_MARGIN_IN = 0.25  # white paper around the printed marker


def marker_image(marker_id: int, pixels: int) -> npt.NDArray[np.uint8]:
    """The printed marker (black border included), ``pixels`` square."""
    out: npt.NDArray[np.uint8] = cv2.aruco.generateImageMarker(dictionary(), marker_id, pixels)
    return out


def table_texture(
    layout: Layout,
    px_per_in: float,
    rng: np.random.Generator,
    border_in: float = 2.0,
    mat_gray: int = 110,
    mat_noise: float = 18.0,
) -> npt.NDArray[np.uint8]:
    """Grayscale texture of the table (and a border of floor around it) with the markers on white paper."""
    w = int(round((layout.width_in + 2 * border_in) * px_per_in))
    h = int(round((layout.depth_in + 2 * border_in) * px_per_in))
    tex = np.full((h, w), 45, np.float32)  # the floor
    x0 = int(round(border_in * px_per_in))
    x1 = int(round((border_in + layout.width_in) * px_per_in))
    y1 = int(round((border_in + layout.depth_in) * px_per_in))
    # A mottled mat: smooth noise at a few scales.
    mat = np.full((y1 - x0, x1 - x0), float(mat_gray), np.float32)
    for scale in (4, 16, 64):
        small = rng.normal(0.0, 1.0, (max(2, mat.shape[0] // scale), max(2, mat.shape[1] // scale))).astype(np.float32)
        mat += mat_noise / 2 * cv2.resize(small, (mat.shape[1], mat.shape[0]), interpolation=cv2.INTER_CUBIC)
    tex[x0:y1, x0:x1] = mat
    for m in layout.markers:
        _paint_marker_exact(tex, m, px_per_in, border_in)
    out: npt.NDArray[np.uint8] = np.clip(tex, 0, 255).astype(np.uint8)
    return out


def _paint_marker_exact(tex: npt.NDArray[np.float32], m: MarkerPlacement, ppi: float, border_in: float) -> None:
    """Paint one marker on its paper exactly where the layout puts it, at any size, position and rotation.

    Calibration is judged against these textures to a few thousandths of an inch, so nothing is rounded
    to whole texture pixels: each pixel is the mean of SUPERSAMPLE x SUPERSAMPLE point samples of the
    printed pattern (texture pixel i covers table inches [i, i + 1) / ppi - border_in, as the camera samples it).
    """
    cells_n = dictionary().markerSize + 2  # the pattern plus its black border, in cells
    cells = marker_image(m.id, cells_n) > 127
    half_in = m.size_in / 2
    paper_half_in = half_in + PAPER_MARGIN_IN
    cx_px = (m.x_in + border_in) * ppi
    cy_px = (m.y_in + border_in) * ppi
    reach_px = paper_half_in * ppi * math.sqrt(2) + 1
    x0, x1 = max(0, math.floor(cx_px - reach_px)), min(tex.shape[1], math.ceil(cx_px + reach_px))
    y0, y1 = max(0, math.floor(cy_px - reach_px)), min(tex.shape[0], math.ceil(cy_px + reach_px))
    k = SUPERSAMPLE
    sub = (np.arange(k, dtype=np.float64) + 0.5) / k
    xs = ((np.arange(x0, x1)[:, None] + sub).ravel() - cx_px) / ppi
    cos_a, sin_a = math.cos(math.radians(m.rotation_deg)), math.sin(math.radians(m.rotation_deg))
    for row0 in range(y0, y1, 32):  # strips keep memory small on 4K textures
        row1 = min(row0 + 32, y1)
        ys = ((np.arange(row0, row1)[:, None] + sub).ravel() - cy_px) / ppi
        dx, dy = np.meshgrid(xs, ys)
        # Table offset -> the marker's own axes (the inverse of Layout's rotation).
        u = cos_a * dx + sin_a * dy
        v = -sin_a * dx + cos_a * dy
        on_paper = (np.abs(u) <= paper_half_in) & (np.abs(v) <= paper_half_in)
        on_marker = (np.abs(u) < half_in) & (np.abs(v) < half_in)
        col = np.clip(((u + half_in) / m.size_in * cells_n).astype(np.int64), 0, cells_n - 1)
        row = np.clip(((v + half_in) / m.size_in * cells_n).astype(np.int64), 0, cells_n - 1)
        value = np.where(on_marker & ~cells[row, col], 25.0, 245.0) * on_paper
        shape = (row1 - row0, k, x1 - x0, k)
        paint = value.reshape(shape).mean(axis=(1, 3)).astype(np.float32)
        cover = on_paper.reshape(shape).mean(axis=(1, 3)).astype(np.float32)
        tex[row0:row1, x0:x1] = tex[row0:row1, x0:x1] * (1 - cover) + paint


def paint_markers(tex: npt.NDArray[np.float32], layout: Layout, ppi: float, border_in: float) -> None:
    """Paint the kit's markers, each on its white paper (a 0.25" margin), into a top-down texture in place."""
    pad = int(round(0.25 * ppi))
    for mk in layout.markers:
        s = int(round(mk.size_in * ppi))
        # The marker's own corner is placed (the paper round it is only white): at 50 px/in its paper's
        # corner falls mid-pixel, and rounding that put every marker, so the whole calibration, 0.5 mm off.
        x0 = int(round((mk.x_in - mk.size_in / 2 + border_in) * ppi)) - pad
        y0 = int(round((mk.y_in - mk.size_in / 2 + border_in) * ppi)) - pad
        tex[y0 : y0 + s + 2 * pad, x0 : x0 + s + 2 * pad] = 245
        tex[y0 + pad : y0 + pad + s, x0 + pad : x0 + pad + s] = np.where(
            marker_image(mk.id, s)[..., None] > 127, 245, 25
        )
