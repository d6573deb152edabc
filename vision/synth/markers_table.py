"""A table top with the kit's fiducial markers laid out on it, as a texture in table inches."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import dictionary
from calibration.layout import Layout


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
        paper = m.size_in + 0.5  # white margin around the printed marker
        size_px = int(round(m.size_in * px_per_in))
        img = marker_image(m.id, size_px).astype(np.float32)
        sheet = np.full((int(round(paper * px_per_in)),) * 2, 245, np.float32)
        off = (sheet.shape[0] - size_px) // 2
        sheet[off : off + size_px, off : off + size_px] = np.where(img > 127, 245, 25)
        # Place the sheet rotated about the marker's centre by warping into the texture.
        cx = (m.x_in + border_in) * px_per_in
        cy = (m.y_in + border_in) * px_per_in
        a = np.radians(m.rotation_deg)
        half = sheet.shape[0] / 2
        # Sheet pixel -> texture pixel: rotate about the sheet centre, then move to the marker centre.
        M = np.array(
            [
                [np.cos(a), -np.sin(a), cx - np.cos(a) * half + np.sin(a) * half],
                [np.sin(a), np.cos(a), cy - np.sin(a) * half - np.cos(a) * half],
            ]
        )
        # Paint with a mask so only the sheet's area changes.
        warped = cv2.warpAffine(sheet, M, (w, h), flags=cv2.INTER_AREA, borderValue=0)
        mask = cv2.warpAffine(np.ones_like(sheet), M, (w, h), flags=cv2.INTER_AREA, borderValue=0)
        tex = tex * (1 - mask) + warped
    out: npt.NDArray[np.uint8] = np.clip(tex, 0, 255).astype(np.uint8)
    return out


def paint_markers(tex: npt.NDArray[np.float32], layout: Layout, ppi: float, border_in: float) -> None:
    """Paint the kit's markers, each on its white paper (a 0.25" margin), into a top-down texture in place."""
    pad = int(round(0.25 * ppi))
    for mk in layout.markers:
        s = int(round(mk.size_in * ppi))
        x0 = int(round((mk.x_in - mk.size_in / 2 - 0.25 + border_in) * ppi))
        y0 = int(round((mk.y_in - mk.size_in / 2 - 0.25 + border_in) * ppi))
        tex[y0 : y0 + s + 2 * pad, x0 : x0 + s + 2 * pad] = 245
        tex[y0 + pad : y0 + pad + s, x0 + pad : x0 + pad + s] = np.where(
            marker_image(mk.id, s)[..., None] > 127, 245, 25
        )
