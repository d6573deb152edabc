"""A pinhole camera with lens distortion looking down at the table, and rendering of a flat texture.

World coordinates are table inches: x across, y down the view, and *w = -z*
pointing down into the table, so that (x, y, w) is right-handed like OpenCV's
camera frame (x right, y down, z forward). A point at height z above the table
is (x, y, -z) here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def _rot_x(deg: float) -> FloatArray:
    a = math.radians(deg)
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def _rot_z(deg: float) -> FloatArray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


@dataclass(frozen=True)
class Camera:
    K: FloatArray  # 3x3 intrinsics
    dist: FloatArray  # OpenCV distortion (k1, k2, p1, p2, k3)
    R: FloatArray  # world -> camera rotation
    t: FloatArray  # world -> camera translation
    size: tuple[int, int]  # (width, height) in pixels

    @classmethod
    def looking_at_table(
        cls,
        table_in: tuple[float, float],
        size: tuple[int, int],
        tilt_deg: float = 0.0,
        yaw_deg: float = 0.0,
        hfov_deg: float = 65.0,
        dist: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0),
        fill: float = 0.9,
    ) -> Camera:
        """A camera aimed at the table's centre, tilted from vertical, backed off until the table fills ``fill``."""
        w, h = size
        f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
        K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
        R = _rot_x(tilt_deg) @ _rot_z(yaw_deg)
        axis = R.T @ np.array([0.0, 0.0, 1.0])  # optical axis in world coordinates
        centre = np.array([table_in[0] / 2, table_in[1] / 2, 0.0])
        corners = np.array([[0, 0, 0], [table_in[0], 0, 0], [table_in[0], table_in[1], 0], [0, table_in[1], 0]], float)
        lo, hi = 1.0, 1000.0
        for _ in range(60):  # bisect the distance so the table's corners fill the frame
            d = math.sqrt(lo * hi)
            C = centre - d * axis
            cam = cls(K, np.asarray(dist, float), R, -R @ C, size)
            px = cam.project(corners)
            spread = max(np.ptp(px[:, 0]) / w, np.ptp(px[:, 1]) / h)
            inside = np.all(np.abs(px - np.array([w / 2, h / 2])) < np.array([w, h]) * fill / 2)
            if inside and spread <= fill:
                hi = d
            else:
                lo = d
        C = centre - hi * axis
        return cls(K, np.asarray(dist, float), R, -R @ C, size)

    @property
    def centre_in(self) -> FloatArray:
        """The camera's position in (x, y, w) table coordinates."""
        out: FloatArray = -self.R.T @ self.t
        return out

    def project(self, points_xyw: npt.ArrayLike) -> FloatArray:
        """Pixels (with distortion) of (x, y, w) table points."""
        pts = np.asarray(points_xyw, dtype=np.float64).reshape(-1, 3)
        rvec, _ = cv2.Rodrigues(self.R)
        px, _ = cv2.projectPoints(pts, rvec, self.t, self.K, self.dist)
        out: FloatArray = px.reshape(-1, 2)
        return out

    @cached_property
    def _rays(self) -> FloatArray:
        """The world direction of every pixel's ray (height, width, 3): the lens undone once per camera, as a
        render asks for the maps of a dozen planes and windows (of a 1080p table, 2.0 s of its 5.3 s)."""
        w, h = self.size
        u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        pix = np.stack([u.ravel(), v.ravel()], axis=1).reshape(-1, 1, 2)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-10)
        norm = cv2.undistortPoints(pix, self.K, self.dist, R=np.eye(3), P=np.eye(3), criteria=criteria).reshape(-1, 2)
        rays: FloatArray = (np.concatenate([norm, np.ones((len(norm), 1))], axis=1) @ self.R).reshape(h, w, 3)
        return rays

    def table_maps(
        self, plane_w: float = 0.0, window: tuple[int, int, int, int] | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """For every pixel (of ``window``: x0, y0, x1, y1, if given, inside the image), the (x, y) table
        position its ray meets on the plane w = plane_w."""
        x0, y0, x1, y1 = window if window is not None else (0, 0, *self.size)
        if not (0 <= x0 < x1 <= self.size[0] and 0 <= y0 < y1 <= self.size[1]):
            raise ValueError(f"window {window} is not inside the {self.size[0]}x{self.size[1]} image")
        w, h = x1 - x0, y1 - y0
        rays = self._rays[y0:y1, x0:x1].reshape(-1, 3)
        C = self.centre_in
        s = (plane_w - C[2]) / rays[:, 2]
        x = (C[0] + s * rays[:, 0]).reshape(h, w)
        y = (C[1] + s * rays[:, 1]).reshape(h, w)
        return x, y

    def render(
        self,
        texture: npt.NDArray[np.uint8],
        px_per_in: float,
        border_in: float = 0.0,
        background: int = 40,
        plane_w: float = 0.0,
        window: tuple[int, int, int, int] | None = None,
    ) -> npt.NDArray[np.uint8]:
        """Photograph a flat texture lying on the table (texture pixel (0,0) at table (-border, -border)), or
        lifted to the plane w = ``plane_w`` (negative: above the table); only ``window`` (x0, y0, x1, y1) of it."""
        x, y = self.table_maps(plane_w, window)
        # Pre-blur the texture to the scale it is sampled at, so remapping does not alias.
        scale = px_per_in / self._pixels_per_inch()
        tex = cv2.GaussianBlur(texture, (0, 0), max(0.5, 0.5 * scale)) if scale > 1.5 else texture
        map_x = ((x + border_in) * px_per_in - 0.5).astype(np.float32)
        map_y = ((y + border_in) * px_per_in - 0.5).astype(np.float32)
        value: int | tuple[int, int, int] = background if tex.ndim == 2 else (background,) * 3
        out: npt.NDArray[np.uint8] = cv2.remap(
            tex, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=value
        )
        return out

    def _pixels_per_inch(self) -> float:
        """Image pixels per table inch at the image centre (for anti-aliasing)."""
        C = self.centre_in
        depth = abs(C[2])
        return float(self.K[0, 0] / max(depth, 1e-6))


def photo_effects(
    image: npt.NDArray[np.uint8],
    rng: np.random.Generator,
    noise: float = 2.0,
    blur_px: float = 0.0,
    jpeg_quality: int | None = 90,
    light_gradient: float = 0.0,
) -> npt.NDArray[np.uint8]:
    """Uneven light, blur, sensor noise and JPEG compression, seeded."""
    out = image.astype(np.float32)
    if light_gradient:
        h, w = out.shape[:2]
        gx, gy = rng.uniform(-1, 1, 2)
        yy, xx = np.mgrid[0:h, 0:w]
        ramp = 1.0 + light_gradient * (gx * (xx / w - 0.5) + gy * (yy / h - 0.5))
        out *= ramp if out.ndim == 2 else ramp[..., None]
    if blur_px > 0:
        out = cv2.GaussianBlur(out, (0, 0), blur_px)
    if noise > 0:
        out += rng.normal(0.0, noise, out.shape).astype(np.float32)
    result = np.clip(out, 0, 255).astype(np.uint8)
    if jpeg_quality is not None:
        ok, data = cv2.imencode(".jpg", result, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)])
        result = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
    return result
