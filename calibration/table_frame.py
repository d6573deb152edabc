"""Table calibration: fiducials -> the map between image pixels and table inches.

The map is a homography fitted to every detected marker corner (the markers that
agree on one view, then least squares on their corners) in undistorted pixels, so a calibrated lens is
used when there is one. With the camera's intrinsics the camera pose is
recovered too, for points above the table (a model on a hill, the top of a
base): they are found where their ray meets their own height.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import Corners, detect_markers, sharpness
from calibration.focal_from_markers import centred_intrinsics, focal_from_markers
from calibration.layout import Layout
from calibration.lens import LensError, LensModel, image_size_problem
from calibration.lens_from_markers import lens_from_markers

FloatArray = npt.NDArray[np.float64]
MOVED_PX = 2.0
MOVED_PX_NO_LENS = 8.0
MIN_MARKERS = 2
NOISE_LIMIT = 0.05  # corner noise above this share of a marker's side is disagreement, not blur
CORNER_NOISE_FACTOR = 4.0  # a corner further than this many times the corners' noise from a fit is an outlier
MIN_FOCAL_NOISE_PX = 0.05  # per axis: two markers' fit is tight by luck
UNSURE_FOCAL_SHARE = 0.1  # the players are told from here (a view tilted 3 degrees or more: under 0.04)
BLUR_LIMIT = 15.0  # Laplacian variance below which a photo is too blurred to trust
SIGMA_GRID = 9  # table points per side where the map's sigma is evaluated
# Something standing over a marker's edge (a terrain box's wall) bends the outline ArUco reads, and the marker's
# four corners stop making the square the map makes of it. Their parallelogram defect (c0 + c2 - c1 - c3) less the
# perspective's: 0.08 px (median) and 0.55 px (p99) over the 1,704 markers of the held-out, fresh and square-on
# empty tables; the four bent by a wall 2.9-12 px (docs/calibration.md, session 59). Told to the players, who can
# clear the marker's edge: otherwise it is taken for a marker moved off the layout, or bends the map.
BENT_PX = 2.0
# With a marker missing or ignored, the markers' homography can be unsure: its 8 parameters swing where no marker
# holds them, most when a kept marker is bent. Over this mean sigma (inches) a lens file's camera is used instead:
# its pose (6 parameters) is held by the same corners far better. Measured on 12 fresh tables with a marker hidden and
# another bent by a wedge (docs/calibration.md, session 59): over 0.02" the pose's map was better in 17 of 21 views
# (flat map up to 28 mm off, the pose's 4.8 mm); under it the flat map in 50 of 63.
UNSURE_MAP_IN = 0.02
# A kit printed below 100 % (an A4 page "fit" to US Letter is 94 %) makes every marker smaller than its layout,
# about its centre. Blur shrinks a marker's outline too, by 1.33 px at most over the held-out, fresh, path-traced,
# 720p and 480p sets (docs/calibration.md, session 61). So the markers' common scale is read from their corners;
# where it differs from 1 by PRINT_SCALE_MIN and PRINT_SCALE_PX or more on a side, the kit was printed at that
# scale: the map is fitted to the markers as printed and the players are told. A smaller difference is blur's.
PRINT_SCALE_MIN = 0.02
PRINT_SCALE_PX = 2.0
PRINT_FIT_PX = 1.0  # ...and the markers as printed fit one map to this (rms per corner): else one was moved
PRINT_SCALES = np.arange(0.80, 1.2001, 0.02)  # searched in these steps, then in tenths of one about the best


class CalibrationError(ValueError):
    """Calibration failed; says why in words a player can act on."""


@dataclass(frozen=True)
class MarkerCheck:
    id: int
    offset_in: float  # detected centre vs the layout, after the fit
    inlier: bool


@dataclass(frozen=True)
class Quality:
    markers_used: tuple[int, ...]
    markers_missing: tuple[int, ...]
    reprojection_rms_px: float
    reprojection_rms_in: float
    sigma_in: float  # 1-sigma error of a table position mapped anywhere on the table (worst over a grid)
    sigma_mean_in: float
    marker_checks: tuple[MarkerCheck, ...]
    sharpness: float
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "markers_used": list(self.markers_used),
            "markers_missing": list(self.markers_missing),
            "reprojection_rms_px": round(self.reprojection_rms_px, 4),
            "reprojection_rms_in": round(self.reprojection_rms_in, 5),
            "sigma_in": round(self.sigma_in, 5),
            "sigma_mean_in": round(self.sigma_mean_in, 5),
            "markers": [
                {"id": c.id, "offset_in": round(c.offset_in, 4), "inlier": c.inlier} for c in self.marker_checks
            ],
            "sharpness": round(self.sharpness, 1),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class TableFrame:
    """Pixels <-> table inches. The only place where that conversion happens."""

    H: FloatArray  # table inches (x, y, 1) -> undistorted pixels
    layout: Layout
    image_size: tuple[int, int]
    lens: LensModel | None = None
    K: FloatArray | None = None  # intrinsics (the lens's, or estimated from H)
    rvec: FloatArray | None = None  # pose: table (x, y, w=-z) -> camera
    tvec: FloatArray | None = None
    quality: Quality | None = field(default=None, compare=False)
    # The focal length's sigma, as a share of it: tiny from a lens file, up to 0.3 (calibration/focal_from_markers.py)
    # where the markers alone cannot tell it. The pose, and so the parallax put back at each base, is as sure.
    focal_sigma_share: float = 0.0

    # ---- mapping ---------------------------------------------------------------
    def _ideal(self, px: npt.ArrayLike) -> FloatArray:
        pts = np.asarray(px, dtype=np.float64).reshape(-1, 2)
        return self.lens.undistort_points(pts) if self.lens is not None else pts

    def image_to_table(self, px: npt.ArrayLike, z_in: float | npt.ArrayLike = 0.0) -> FloatArray:
        """Pixels -> table (x, y) inches of points at height ``z_in`` above the table."""
        ideal = self._ideal(px)
        z = np.broadcast_to(np.asarray(z_in, dtype=np.float64), (len(ideal),))
        flat = cv2.perspectiveTransform(ideal.reshape(-1, 1, 2), np.linalg.inv(self.H)).reshape(-1, 2)
        if not np.any(z) or self.K is None or self.rvec is None or self.tvec is None:
            if np.any(z) and (self.K is None or self.rvec is None):
                raise CalibrationError("heights need the camera pose, which this calibration does not have")
            return flat
        # Along the ray from the camera through the flat map's point, to its own height. The flat map (H) says
        # where the ray meets the table; the pose only where the camera is. (Rays from the pose itself stray
        # from H wherever the two fits differ, up to 2 mm where a marker is hidden: session 59.)
        centre = self.camera_centre_in()
        assert centre is not None
        keep = 1.0 - z / centre[2]
        out: FloatArray = centre[:2] + keep[:, None] * (flat - centre[:2])
        return out

    def camera_centre_in(self) -> FloatArray | None:
        """Where the camera is: (x, y) over the table and its height above it, in inches; None without a pose."""
        if self.rvec is None or self.tvec is None:
            return None
        R, _ = cv2.Rodrigues(self.rvec)
        centre = -R.T @ self.tvec.ravel()  # (x, y, w) with w = -z: a camera above the table has w < 0
        return np.array([centre[0], centre[1], -centre[2]], dtype=np.float64)

    def view_slope(self, xy_in: npt.ArrayLike) -> FloatArray | None:
        """How obliquely the camera sees each table point: the tangent of its ray's angle from the vertical
        (0 straight below the camera; 0.47 at 25 degrees). None without a pose."""
        centre = self.camera_centre_in()
        if centre is None or centre[2] <= 0:
            return None
        pts = np.asarray(xy_in, dtype=np.float64).reshape(-1, 2)
        out: FloatArray = np.hypot(pts[:, 0] - centre[0], pts[:, 1] - centre[1]) / centre[2]
        return out

    def table_to_image(self, xy_in: npt.ArrayLike, z_in: float | npt.ArrayLike = 0.0) -> FloatArray:
        """Table inches (at height z) -> pixels, with the lens's distortion."""
        pts = np.asarray(xy_in, dtype=np.float64).reshape(-1, 2)
        z = np.broadcast_to(np.asarray(z_in, dtype=np.float64), (len(pts),))
        if np.any(z):
            if self.K is None or self.rvec is None or self.tvec is None:
                raise CalibrationError("heights need the camera pose, which this calibration does not have")
            # The table point the ray through it meets (see image_to_table), mapped by H.
            centre = self.camera_centre_in()
            assert centre is not None
            pts = centre[:2] + (pts - centre[:2]) / (1.0 - z / centre[2])[:, None]
        ideal = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), self.H).reshape(-1, 2)
        return self.lens.distort_points(ideal) if self.lens is not None else ideal

    def rectify(
        self,
        image: npt.NDArray[np.uint8],
        px_per_in: float = 20.0,
        region_px: tuple[int, int, int, int] | None = None,
    ) -> npt.NDArray[np.uint8]:
        """A top-down view of the table at ``px_per_in`` (table (0, 0) at the top-left pixel's corner).
        ``region_px``: (x0, y0, width, height) of that view, to make just a part of it."""
        if region_px is None:
            region_px = (
                0,
                0,
                int(round(self.layout.width_in * px_per_in)),
                int(round(self.layout.depth_in * px_per_in)),
            )
        return self.rectify_regions(image, px_per_in, [region_px])[0]

    def rectify_regions(
        self, image: npt.NDArray[np.uint8], px_per_in: float, regions_px: list[tuple[int, int, int, int]]
    ) -> list[npt.NDArray[np.uint8]]:
        """Several parts of that view (each ``region_px`` as ``rectify`` takes it), each the same to the bit as
        ``rectify`` makes it; the table points of all are mapped to the photo at once (the base refiner's crops:
        docs/detector.md, session 74)."""
        # The map is smooth: compute it every RECTIFY_STEP_PX pixels and interpolate (exact to well under 0.01 px).
        step = RECTIFY_STEP_PX
        grids = []
        for x0, y0, w, h in regions_px:
            u, v = np.meshgrid(
                (np.arange(w // step + 2) * step + x0 + 0.5) / px_per_in,
                (np.arange(h // step + 2) * step + y0 + 0.5) / px_per_in,
            )
            grids.append(np.stack([u.ravel(), v.ravel()], axis=1))
        if not grids:
            return []
        mapped = self.table_to_image(np.concatenate(grids)).astype(np.float32)
        out = []
        start = 0
        for (_, _, w, h), grid in zip(regions_px, grids, strict=True):
            coarse = mapped[start : start + len(grid)].reshape(h // step + 2, w // step + 2, 2)
            start += len(grid)
            mx, my = _fine_grid(w, h)
            px = cv2.remap(coarse, mx, my, cv2.INTER_LINEAR)
            out.append(cv2.remap(image, px[..., 0], px[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT))
        return out

    def inches_per_pixel(self, xy_in: npt.ArrayLike) -> FloatArray:
        """Local scale of the map at table points (inches per pixel)."""
        pts = np.asarray(xy_in, dtype=np.float64).reshape(-1, 2)
        a = self.table_to_image(pts)
        b = self.table_to_image(pts + [0.01, 0.0])
        c = self.table_to_image(pts + [0.0, 0.01])
        dx = np.linalg.norm(b - a, axis=1) / 0.01
        dy = np.linalg.norm(c - a, axis=1) / 0.01
        out: FloatArray = 2.0 / (dx + dy)
        return out

    # ---- saving ------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": "tablesight-calibration/1",
            "H": self.H.tolist(),
            "layout": self.layout.to_json(),
            "image_size": list(self.image_size),
            "lens": self.lens.to_json() if self.lens is not None else None,
            "K": None if self.K is None else self.K.tolist(),
            "rvec": None if self.rvec is None else self.rvec.ravel().tolist(),
            "tvec": None if self.tvec is None else self.tvec.ravel().tolist(),
            "quality": self.quality.to_json() if self.quality is not None else None,
            "focal_sigma_share": round(self.focal_sigma_share, 5),
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> TableFrame:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            lens_data = data.get("lens")
            lens = None
            if lens_data:
                try:
                    lens = LensModel(
                        np.array(lens_data["K"], float),
                        np.array(lens_data["dist"], float),
                        tuple(lens_data["image_size"]),  # type: ignore[arg-type]
                    )
                except LensError as error:
                    raise CalibrationError(f"{path}: lens.{error}") from None
            problem = _saved_frame_problem(data)
            if problem:
                raise CalibrationError(f"{path}: {problem}")
            return cls(
                np.array(data["H"], float),
                Layout.from_json(data["layout"], str(path)),
                tuple(int(v) for v in data["image_size"]),  # type: ignore[arg-type]
                lens,
                None if data.get("K") is None else np.array(data["K"], float),
                None if data.get("rvec") is None else np.array(data["rvec"], float),
                None if data.get("tvec") is None else np.array(data["tvec"], float),
                focal_sigma_share=float(data.get("focal_sigma_share", 0.0)),  # files saved before session 58: 0
            )
        except FileNotFoundError:
            raise CalibrationError(f"{path}: no such calibration file") from None
        except CalibrationError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CalibrationError(f"{path}: not a tablesight calibration file ({error!r})") from None


def _saved_frame_problem(data: dict[str, Any]) -> str:
    """What is wrong with a saved calibration's map and pose, naming the field; '' where nothing is (the layout and
    the lens are checked by their own loaders)."""
    H = np.asarray(data["H"], float)
    if H.shape != (3, 3) or not np.all(np.isfinite(H)) or abs(np.linalg.det(H)) < 1e-12:
        return f"H: expected an invertible 3x3 matrix of finite numbers, got {data['H']!r}"
    if problem := image_size_problem(data["image_size"]):
        return problem
    for name, shape in (("K", (3, 3)), ("rvec", (3,)), ("tvec", (3,))):
        value = data.get(name)
        if value is not None and (
            np.asarray(value, float).reshape(-1).shape != (math.prod(shape),)
            or not np.all(np.isfinite(np.asarray(value, float)))
        ):
            return f"{name}: expected {' x '.join(map(str, shape))} finite numbers, got {value!r}"
    return ""


# ---- fitting ------------------------------------------------------------------------
def calibrate(image: npt.NDArray[np.uint8], layout: Layout, lens: LensModel | None = None) -> TableFrame:
    """Detect the layout's markers in a frame and fit the table map, with a quality report."""
    if image is None or image.size == 0 or image.ndim not in (2, 3):
        raise CalibrationError("the frame is empty or not an image")
    h, w = image.shape[:2]
    found = detect_markers(image, expected=[m.id for m in layout.markers])
    return calibrate_from_corners(found, layout, (w, h), lens, sharpness(image))


def calibrate_from_corners(
    found: dict[int, Corners],
    layout: Layout,
    image_size: tuple[int, int],
    lens: LensModel | None = None,
    sharp: float = float("nan"),
) -> TableFrame:
    placements = layout.by_id()
    used = sorted(i for i in found if i in placements)
    missing = tuple(sorted(set(placements) - set(used)))
    lens_said = ""
    if lens is not None and tuple(lens.image_size) != tuple(image_size):
        # A lens file made at another size: a webcam's smaller modes scale the same view, anything else is another
        # view of the sensor, read from the markers instead (as good, docs/calibration.md, session 58).
        made, now = "x".join(map(str, lens.image_size)), "x".join(map(str, image_size))
        lens = lens.at_size(image_size)
        lens_said = (
            f"the lens file was calibrated at {made}: scaled to this photo's {now}"
            if lens is not None
            else f"the lens file was calibrated at {made}, not for this photo's {now}: left out, and the lens's "
            "bend read from the markers (tablesight calibrate-lens at this size measures it better)"
        )
    if not used:
        hint = " (the photo looks blurred)" if sharp < BLUR_LIMIT else ""
        raise CalibrationError(
            f"no calibration markers found{hint}: expected ids {sorted(placements)}; print the kit (tablesight print-kit) and place them as the guide shows"
        )
    if len(used) < MIN_MARKERS:
        raise CalibrationError(
            f"only marker {used[0]} is visible; at least {MIN_MARKERS} of {sorted(placements)} are needed (missing: {list(missing)})"
        )
    laid_out = np.concatenate([placements[i].corners_in() for i in used])
    raw_px = np.concatenate([found[i] for i in used])
    image_pts = lens.undistort_points(raw_px) if lens is not None else raw_px
    centres = np.repeat(np.array([[placements[i].x_in, placements[i].y_in] for i in used]), 4, axis=0)
    scale, miss_px = print_scale(laid_out, centres, image_pts)
    printed = centres + scale * (laid_out - centres)
    # Without a lens model the table's edges bend by a few pixels: a wider threshold, or good markers look moved.
    threshold = MOVED_PX if lens is not None else MOVED_PX_NO_LENS
    sides_px = np.linalg.norm(np.roll(raw_px.reshape(-1, 4, 2), 1, axis=1) - raw_px.reshape(-1, 4, 2), axis=2)
    misprinted = (
        abs(1 - scale) >= PRINT_SCALE_MIN
        and abs(1 - scale) * float(np.mean(sides_px)) >= PRINT_SCALE_PX
        and miss_px <= PRINT_FIT_PX
    )
    table_pts = printed if misprinted else laid_out  # a kit printed small moved no marker
    marker_ok = _agreeing_markers(table_pts, image_pts, threshold)
    if marker_ok.sum() < MIN_MARKERS:
        raise CalibrationError("the markers disagree with the layout: fewer than two agree on where the table is")
    if 2 * marker_ok.sum() <= len(used):
        # No majority: which markers moved cannot be told (a table of another size than the layout's looks so).
        agree = [m for m, ok in zip(used, marker_ok, strict=True) if ok]
        raise CalibrationError(
            f"the markers disagree with the layout: only markers {', '.join(map(str, agree))} of "
            f"{', '.join(map(str, used))} agree on where the table is, too few to tell which were moved"
        )
    keep = np.repeat(marker_ok, 4)
    estimated = False
    if lens is None:
        # No lens file: the lens's barrel and the focal length read from the agreeing markers' corners
        # (calibration/lens_from_markers.py).
        lens = lens_from_markers(table_pts[keep], raw_px[keep], image_size)
        if lens is not None:
            estimated = True
            image_pts = lens.undistort_points(raw_px)
    H, _ = cv2.findHomography(table_pts[keep], image_pts[keep], 0)
    H = H / H[2, 2]

    if lens is not None:
        K = lens.K
        focal_share = float(lens.std[0]) / float(K[0, 0]) if lens.std else 0.0
    else:  # two markers: no bend can be read, but a focal length can
        noise_px = max(_fit_rms_px(H, table_pts[keep], image_pts[keep]), MIN_FOCAL_NOISE_PX)
        f_px, focal_share = focal_from_markers(table_pts[keep], image_pts[keep], image_size, noise_px)
        K = centred_intrinsics(f_px, image_size)
    obj = np.concatenate([table_pts[keep], np.zeros((int(keep.sum()), 1))], axis=1)
    ok, rvec, tvec = cv2.solvePnP(obj, image_pts[keep], K, None, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        rvec = tvec = None
    frame = TableFrame(H, layout, image_size, lens, K, rvec, tvec, focal_sigma_share=focal_share)
    bent = _bent_markers(table_pts, image_pts, used)
    quality = _quality(frame, table_pts, image_pts, keep, used, missing, marker_ok, sharp, estimated, bent)
    if lens_said:
        quality = replace(quality, warnings=(lens_said, *quality.warnings))
    if misprinted:
        size_in = float(np.mean([placements[i].size_in for i in used]))
        said = (
            f'the markers measure {scale * size_in:.2f}" across, not the layout\'s {size_in:.2f}": the kit looks printed '
            f"at {scale:.0%}; the table is mapped from the markers as printed, but print it at 100 % (check its "
            "ruler) or give their size in a --layout file"
        )
        quality = replace(quality, warnings=(said, *quality.warnings))
    fewer = int(marker_ok.sum()) < len(placements)
    if fewer and lens is not None and not estimated and rvec is not None and quality.sigma_mean_in > UNSURE_MAP_IN:
        R, _ = cv2.Rodrigues(rvec)
        H = K @ np.c_[R[:, 0], R[:, 1], np.asarray(tvec).ravel()]
        H = H / H[2, 2]
        quality = replace(
            quality,
            warnings=quality.warnings
            + (
                f"the markers' map was unsure (+/- {quality.sigma_mean_in:.2f}\" on average): the table is mapped "
                "from the camera's pose and its lens file instead",
            ),
        )
    return TableFrame(H, layout, image_size, lens, K, rvec, tvec, quality, focal_share)


def print_scale(laid_out: FloatArray, centres: FloatArray, image_pts: FloatArray) -> tuple[float, float]:
    """The one scale about their centres (1: as laid out) at which the markers' corners fit one map best, and the
    corners' rms miss (px) from that map: a marker moved off the layout leaves a miss no scale takes away."""

    def miss_px(scale: float) -> float:
        table_pts = centres + scale * (laid_out - centres)
        H, _ = cv2.findHomography(table_pts, image_pts, 0)
        if H is None:
            return math.inf
        fitted = cv2.perspectiveTransform(table_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
        return float(np.sum((fitted - image_pts) ** 2))

    step = float(PRINT_SCALES[1] - PRINT_SCALES[0])
    coarse = PRINT_SCALES[int(np.argmin([miss_px(float(k)) for k in PRINT_SCALES]))]
    scales = coarse + np.arange(-10, 11) * step / 10
    misses = np.array([miss_px(float(k)) for k in scales])
    best = int(np.argmin(misses))
    if 0 < best < len(scales) - 1 and np.all(np.isfinite(misses[best - 1 : best + 2])):
        # The parabola through the best scale and its neighbours, finer than the steps.
        a, b, c = misses[best - 1 : best + 2]
        bend = a - 2 * b + c
        if bend > 0:
            scale = float(scales[best] + 0.5 * (a - c) / bend * step / 10)
            return scale, math.sqrt(miss_px(scale) / len(image_pts))
    return float(scales[best]), math.sqrt(float(misses[best]) / len(image_pts))


def _bent_markers(table_pts: FloatArray, image_pts: FloatArray, used: list[int]) -> dict[int, float]:
    """Markers whose four corners are bent out of the square the map makes of them (BENT_PX): id -> pixels."""
    if len(used) < 2:
        return {}
    H, _ = cv2.findHomography(table_pts, image_pts, 0)
    if H is None:
        return {}
    expected = cv2.perspectiveTransform(table_pts.reshape(-1, 1, 2), H).reshape(-1, 4, 2)
    seen = image_pts.reshape(-1, 4, 2)
    out = {}
    for marker_id, mine, theirs in zip(used, seen, expected, strict=True):
        excess = float(np.linalg.norm(np.subtract(_defect(mine), _defect(theirs))))
        if excess > BENT_PX:
            out[marker_id] = excess
    return out


def _defect(corners_px: FloatArray) -> FloatArray:
    """How far a marker's four corners are from a parallelogram: c0 + c2 - c1 - c3 (0 for a square seen flat)."""
    out: FloatArray = corners_px[0] + corners_px[2] - corners_px[1] - corners_px[3]
    return out


def _agreeing_markers(table_pts: FloatArray, image_pts: FloatArray, base_px: float) -> npt.NDArray[np.bool_]:
    """Which markers agree on one view of the table (a marker that does not was moved or misread).

    Whole markers are the hypotheses, not corners (four corners of one marker make a map inches
    off across the table): every set of all markers, all but one and all but two is fitted. The
    corners' noise is the tightest fit's (blur shrinks small markers' outlines by a pixel or more);
    a marker agrees with a fit when its corners lie within ``base_px`` or 4 times that noise (when
    the noise is plausible for blur: under 5 % of a marker's side). The
    fit most markers agree with wins, ties to the closer one.
    """
    n = len(table_pts) // 4
    fits = []  # (markers fitted, each corner's miss)
    for size in range(n, max(MIN_MARKERS, n - 2) - 1, -1):
        for subset in itertools.combinations(range(n), size):
            rows = np.concatenate([np.arange(4 * m, 4 * m + 4) for m in subset])
            H, _ = cv2.findHomography(table_pts[rows], image_pts[rows], 0)
            if H is not None:
                fitted = cv2.perspectiveTransform(table_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
                fits.append((subset, np.linalg.norm(fitted - image_pts, axis=1)))
    if not fits:
        return np.zeros(n, dtype=bool)
    # Per-corner noise of a fit from k markers: 8k coordinates less the map's 8 parameters.
    smallest = min(3, n)
    noise = min(
        math.sqrt(float(np.sum(miss.reshape(-1, 4)[list(subset)] ** 2)) / max(4 * len(subset) - 4, 1))
        for subset, miss in fits
        if len(subset) >= smallest
    )
    # Blur moves corners a small part of a marker's side; a fit missing by more is no measure of noise.
    side_px = float(
        np.median(np.linalg.norm(image_pts - np.roll(image_pts.reshape(-1, 4, 2), 1, axis=1).reshape(-1, 2), axis=1))
    )
    threshold = max(base_px, CORNER_NOISE_FACTOR * noise) if noise <= NOISE_LIMIT * side_px else base_px
    best: tuple[int, float] = (-1, math.inf)
    best_ok = np.zeros(n, dtype=bool)
    for _, miss in fits:
        ok = (miss <= threshold).reshape(-1, 4).all(axis=1)
        score = (int(ok.sum()), float(np.sqrt(np.mean(miss.reshape(-1, 4)[ok] ** 2))) if ok.any() else math.inf)
        if score[0] > best[0] or (score[0] == best[0] and score[1] < best[1]):
            best, best_ok = score, ok
    return best_ok


def _fit_rms_px(H: FloatArray, table_pts: FloatArray, image_pts: FloatArray) -> float:
    """The corners' per-axis rms miss (px) of the map ``H``."""
    fitted = cv2.perspectiveTransform(table_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
    return float(np.sqrt(np.mean((fitted - image_pts) ** 2)))


def _project(h8: FloatArray, table_pts: FloatArray) -> FloatArray:
    H = np.append(h8, 1.0).reshape(3, 3)
    p = np.concatenate([table_pts, np.ones((len(table_pts), 1))], axis=1) @ H.T
    out: FloatArray = p[:, :2] / p[:, 2:3]
    return out


def _without_swelling(resid: FloatArray, corners_px: FloatArray) -> FloatArray:
    """Corner residuals less each marker's even swelling (the mean outward move of its 4 corners)."""
    out = resid.copy()
    for m in range(len(resid) // 4):
        sl = slice(4 * m, 4 * m + 4)
        outward = corners_px[sl] - corners_px[sl].mean(axis=0)
        outward /= np.linalg.norm(outward, axis=1, keepdims=True)
        swell = float(np.mean(np.sum(resid[sl] * outward, axis=1)))
        out[sl] -= swell * outward
    return out


def _quality(
    frame: TableFrame,
    table_pts: FloatArray,
    image_pts: FloatArray,
    keep: npt.NDArray[np.bool_],
    used: list[int],
    missing: tuple[int, ...],
    marker_ok: npt.NDArray[np.bool_],
    sharp: float,
    lens_estimated: bool = False,
    bent: dict[int, float] | None = None,
) -> Quality:
    h8 = (frame.H / frame.H[2, 2]).ravel()[:8]
    resid = _project(h8, table_pts[keep]) - image_pts[keep]
    n = len(resid)
    rms_px = float(np.sqrt(np.mean(np.sum(resid**2, axis=1)) / 2))  # per axis
    # Blur and lighting swell or shrink a printed marker's outline evenly, which leaves its centre (and so
    # the map) where it was: take each marker's even swelling out before judging the corners' noise.
    spread = _without_swelling(resid, image_pts[keep])
    dof = max(2 * n - 8 - n // 4, 1)
    sigma_px = float(np.sqrt(np.sum(spread**2) / dof))
    # Covariance of the homography from the corner residuals, propagated to table points.
    J = np.zeros((2 * n, 8))
    for k in range(8):
        step = 1e-7 * max(abs(h8[k]), 1e-3)
        d = h8.copy()
        d[k] += step
        J[:, k] = ((_project(d, table_pts[keep]) - _project(h8, table_pts[keep])) / step).ravel()
    cov_h = sigma_px**2 * np.linalg.pinv(J.T @ J)
    lay = frame.layout
    gx, gy = np.meshgrid(np.linspace(0, lay.width_in, SIGMA_GRID), np.linspace(0, lay.depth_in, SIGMA_GRID))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    pix = _project(h8, grid)
    sig = []
    for X, x in zip(grid, pix, strict=True):
        G = np.zeros((2, 8))
        for k in range(8):
            step = 1e-7 * max(abs(h8[k]), 1e-3)
            d = h8.copy()
            d[k] += step
            Hd = np.append(d, 1.0).reshape(3, 3)
            back = cv2.perspectiveTransform(x.reshape(1, 1, 2), np.linalg.inv(Hd)).ravel()
            G[:, k] = (back - X) / step
        cov = G @ cov_h @ G.T
        sig.append(math.sqrt(max(np.trace(cov), 0.0) / 2))
    if frame.lens is not None and frame.lens.uncertainty_directions():
        # The lens model's own uncertainty: move its parameters one sigma along each principal
        # axis of their covariance, refit the map to the same corners, see where the grid lands.
        raw_grid = frame.lens.distort_points(pix)
        raw_corners = frame.lens.distort_points(image_pts[keep])
        lens_var = np.zeros(len(grid))
        for delta in frame.lens.uncertainty_directions():
            other = frame.lens.perturbed(delta)
            Hk, _ = cv2.findHomography(table_pts[keep], other.undistort_points(raw_corners), 0)
            moved = cv2.perspectiveTransform(
                other.undistort_points(raw_grid).reshape(-1, 1, 2), np.linalg.inv(Hk)
            ).reshape(-1, 2)
            lens_var += np.sum((moved - grid) ** 2, axis=1) / 2
        sig = list(np.sqrt(np.asarray(sig) ** 2 + lens_var))
    scale = frame.inches_per_pixel(grid)
    rms_in = rms_px * float(np.mean(scale))
    # Where does each marker's centre land, compared with the layout?
    checks = []
    placements = lay.by_id()
    for idx, marker_id in enumerate(used):
        corners = image_pts[4 * idx : 4 * idx + 4]
        centre_px = corners.mean(axis=0)
        centre_in = cv2.perspectiveTransform(centre_px.reshape(1, 1, 2), np.linalg.inv(frame.H)).ravel()
        p = placements[marker_id]
        checks.append(
            MarkerCheck(
                marker_id, float(math.hypot(centre_in[0] - p.x_in, centre_in[1] - p.y_in)), bool(marker_ok[idx])
            )
        )
    warnings = []
    if missing:
        warnings.append(
            f"marker(s) {', '.join(map(str, missing))} not seen (hidden by a hand or a model?); calibrated from {len(used)}"
        )
    bent = bent or {}
    for c in checks:
        if c.id in bent:  # not moved: something over its edge
            outcome = "it was ignored" if not c.inlier else "the map may be off near it"
            warnings.append(
                f"marker {c.id}'s outline looks bent by {bent[c.id]:.1f} px (something over its edge?): {outcome}; "
                "clear its edges"
            )
        elif not c.inlier:
            warnings.append(
                f'marker {c.id} is {c.offset_in:.2f}" from where the layout puts it: it was moved or the layout is wrong; it was ignored'
            )
    if rms_px > 1.0:
        warnings.append(
            f"marker corners fit the table poorly ({rms_px:.2f} px): is the table flat, the lens calibrated?"
        )
    if sharp == sharp and sharp < BLUR_LIMIT:
        warnings.append(f"the photo looks blurred (sharpness {sharp:.0f}); refocus the camera")
    if frame.lens is None:
        warnings.append("no lens calibration: straight lines near the edges may bend (tablesight calibrate-lens)")
    elif lens_estimated:
        k1, k1_sigma = float(frame.lens.dist.ravel()[0]), float((frame.lens.std or (0.0,) * 8)[4])
        # k1's sigma less the part that moves with the focal length (the same bend in pixels: the pose's doubt)
        k1_sigma = math.sqrt(max(k1_sigma**2 - (2 * k1 * frame.focal_sigma_share) ** 2, 0.0))
        warnings.append(
            f"no lens calibration: the lens's bend was read from the markers (k1 {k1:+.3f} +/- {k1_sigma:.3f}); "
            "tablesight calibrate-lens measures it better"
        )
    if frame.focal_sigma_share > UNSURE_FOCAL_SHARE:
        warnings.append(
            f"the camera looks almost straight down, so the markers cannot tell its focal length "
            f"(+/- {frame.focal_sigma_share:.0%}): the parallax of a base's top is put back less surely; "
            "tablesight calibrate-lens measures it"
        )
    return Quality(
        tuple(used),
        missing,
        rms_px,
        rms_in,
        float(max(sig)),
        float(np.mean(sig)),
        tuple(checks),
        sharp,
        tuple(warnings),
    )


RECTIFY_STEP_PX = 8  # TableFrame.rectify maps every 8th pixel of the view and interpolates between them


@functools.lru_cache(maxsize=8)
def _fine_grid(w: int, h: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Where each pixel of a w x h view falls on the coarse map's grid (the same for every view of that size)."""
    mx, my = np.meshgrid(
        np.arange(w, dtype=np.float32) / RECTIFY_STEP_PX, np.arange(h, dtype=np.float32) / RECTIFY_STEP_PX
    )
    mx.flags.writeable = False
    my.flags.writeable = False
    return mx, my
