"""Rendered photos of the kit's ChArUco board, for testing lens calibration."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from calibration.lens import CHARUCO_SQUARE_MM, CHARUCO_SQUARES, charuco_board
from vision.synth.camera import Camera, photo_effects

MM_PER_IN = 25.4


def board_texture(px_per_in: float) -> tuple[npt.NDArray[np.uint8], tuple[float, float]]:
    """The board with a white margin; returns the texture and the board's size in inches."""
    cols, rows = CHARUCO_SQUARES
    w_in = cols * CHARUCO_SQUARE_MM / MM_PER_IN
    h_in = rows * CHARUCO_SQUARE_MM / MM_PER_IN
    img = charuco_board().generateImage((int(round(w_in * px_per_in)), int(round(h_in * px_per_in))), marginSize=0)
    return img, (w_in, h_in)


def charuco_views(
    K: npt.NDArray[np.float64], dist: npt.ArrayLike, size: tuple[int, int], count: int, rng: np.random.Generator
) -> list[npt.NDArray[np.uint8]]:
    """``count`` photos of the board from varied angles by a camera with intrinsics K and distortion."""
    ppi = 150.0
    tex, (w_in, h_in) = board_texture(ppi)
    border = 1.0
    padded = np.full((tex.shape[0] + int(2 * border * ppi), tex.shape[1] + int(2 * border * ppi)), 255, np.uint8)
    o = int(border * ppi)
    padded[o : o + tex.shape[0], o : o + tex.shape[1]] = tex
    views = []
    for _ in range(count):
        cam = Camera.looking_at_table(
            (w_in, h_in),
            size,
            tilt_deg=float(rng.uniform(-40, 40)),
            yaw_deg=float(rng.uniform(-180, 180)),
            fill=float(rng.uniform(0.35, 0.6)),
        )
        # Keep the wanted intrinsics; the pose search used a default focal length, so re-aim with ours.
        scale = K[0, 0] / cam.K[0, 0]
        centre = np.array([w_in / 2, h_in / 2, 0.0])
        C = centre + (cam.centre_in - centre) * scale
        # Turn the camera so the board lands anywhere in the frame, corners included:
        # distortion is strongest there, and the table reaches there.
        half_fov = np.arctan2(np.array(size) / 2, K[0, 0])
        pan, tilt = rng.uniform(-0.8, 0.8, 2) * half_fov
        turn = _rotation(tilt, -pan)
        R = turn @ cam.R
        shot = Camera(K, np.asarray(dist, float), R, -R @ C, size)
        img = shot.render(padded, ppi, border_in=border, background=90)
        views.append(photo_effects(img, rng, noise=1.5, blur_px=0.4, jpeg_quality=92))
    return views


def _rotation(about_x: float, about_y: float) -> npt.NDArray[np.float64]:
    cx, sx, cy, sy = np.cos(about_x), np.sin(about_x), np.cos(about_y), np.sin(about_y)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    out: npt.NDArray[np.float64] = rx @ ry
    return out
