"""The camera's lens: intrinsics and distortion from ChArUco views, saved and reused."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import to_gray

CHARUCO_SQUARES = (5, 7)  # columns, rows: fits an A4 or Letter page at 100 %
CHARUCO_SQUARE_MM = 30.0
CHARUCO_MARKER_MM = 22.0
CHARUCO_DICTIONARY = "DICT_4X4_50"  # not the table markers' dictionary, so the two never mix
MIN_VIEWS = 4
ASPECT_TOLERANCE = 0.01  # a lens file is scaled to photos of its own aspect ratio, within this


class LensError(ValueError):
    """Lens calibration could not be done or loaded; says why."""


DISTORTION_COUNTS = (4, 5, 8, 12, 14)  # the distortion vectors OpenCV takes


def image_size_problem(image_size: Any) -> str:
    """What is wrong with a saved ``image_size`` (a lens's or a calibration's), naming the field; '' where nothing
    is. JSON gives whole numbers as ints or floats (1920 or 1920.0); true and false are no sizes."""
    size = list(image_size) if isinstance(image_size, (list, tuple)) else image_size
    whole = (int, float, np.integer, np.floating)
    if not (
        isinstance(size, list)
        and len(size) == 2
        and all(isinstance(v, whole) and not isinstance(v, bool) and v > 0 and float(v).is_integer() for v in size)
    ):
        return f"image_size: expected [width, height] in whole pixels, got {image_size!r}"
    return ""


def lens_problem(K: Any, dist: Any, image_size: Any, cov: Any = None) -> str:
    """What is wrong with a lens's values, naming the field; '' where nothing is."""
    K, dist = np.asarray(K), np.asarray(dist)
    camera_matrix = (
        K.shape == (3, 3)
        and K.dtype.kind in "fiu"
        and bool(np.all(np.isfinite(K)))
        and K[0, 0] > 0
        and K[1, 1] > 0
        and K[1, 0] == 0
        and np.array_equal(K[2], [0.0, 0.0, 1.0])
    )
    if not camera_matrix:
        return f"K: expected a camera matrix [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0, got {K.tolist()!r}"
    if dist.size not in DISTORTION_COUNTS or not np.all(np.isfinite(dist)):
        counts = ", ".join(str(n) for n in DISTORTION_COUNTS)
        return f"dist: expected {counts} finite distortion coefficients, got {dist.ravel().tolist()!r}"
    if problem := image_size_problem(image_size):
        return problem
    if cov is not None and np.asarray(cov).shape != (8, 8):
        return f"cov: expected the 8x8 covariance of fx, fy, cx, cy, k1, k2, p1, p2, got shape {np.asarray(cov).shape}"
    return ""


def charuco_board() -> cv2.aruco.CharucoBoard:
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, CHARUCO_DICTIONARY))
    return cv2.aruco.CharucoBoard(CHARUCO_SQUARES, CHARUCO_SQUARE_MM, CHARUCO_MARKER_MM, d)


@dataclass(frozen=True)
class LensModel:
    K: npt.NDArray[np.float64]
    dist: npt.NDArray[np.float64]
    image_size: tuple[int, int]  # (width, height) it was calibrated at
    rms_px: float = 0.0
    views: int = 0
    std: tuple[float, ...] | None = None  # standard deviations of fx, fy, cx, cy, k1, k2, p1, p2 (from the fit)
    cov: tuple[tuple[float, ...], ...] | None = None  # their full 8x8 covariance (correlations included)

    def __post_init__(self) -> None:
        """A lens OpenCV can use, or a LensError naming the field: a lens file edited by hand or cut short used to
        reach OpenCV's asserts (``tablesight calibrate --lens`` printed a traceback)."""
        problem = lens_problem(self.K, self.dist, self.image_size, self.cov)
        if problem:
            raise LensError(problem)
        object.__setattr__(self, "image_size", tuple(int(v) for v in self.image_size))  # JSON's 1920.0 is 1920

    def perturbed(self, delta: npt.ArrayLike) -> LensModel:
        """The model with its parameters (fx, fy, cx, cy, k1, k2, p1, p2) moved by ``delta``."""
        d = np.asarray(delta, dtype=np.float64)
        K = self.K.copy()
        K[0, 0] += d[0]
        K[1, 1] += d[1]
        K[0, 2] += d[2]
        K[1, 2] += d[3]
        dist = np.zeros(5)
        dist[: min(5, len(self.dist))] = self.dist[:5]
        dist[:4] += d[4:8]
        return LensModel(K, dist, self.image_size)

    def uncertainty_directions(self) -> list[npt.NDArray[np.float64]]:
        """One-sigma moves of the parameters that together span their uncertainty:
        the covariance's principal axes when known (correlations kept), else each std alone."""
        if self.cov is not None:
            values, vectors = np.linalg.eigh(np.asarray(self.cov, dtype=np.float64))
            return [math.sqrt(v) * vectors[:, k] for k, v in enumerate(values) if v > 0]
        if self.std is not None:
            return [np.eye(8)[k] * s for k, s in enumerate(self.std[:8]) if s > 0]
        return []

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "tablesight-lens/1",
            "K": self.K.tolist(),
            "dist": self.dist.ravel().tolist(),
            "image_size": list(self.image_size),
            "rms_px": self.rms_px,
            "views": self.views,
            "std": None if self.std is None else list(self.std),
            "cov": None if self.cov is None else [list(row) for row in self.cov],
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> LensModel:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(
                np.array(data["K"], float),
                np.array(data["dist"], float),
                tuple(data["image_size"]),
                float(data.get("rms_px", 0)),
                int(data.get("views", 0)),
                tuple(float(v) for v in data["std"]) if data.get("std") else None,
                tuple(tuple(float(v) for v in row) for row in data["cov"]) if data.get("cov") else None,
            )
        except FileNotFoundError:
            raise LensError(f"{path}: no such lens file") from None
        except LensError as error:
            raise LensError(f"{path}: {error}") from None
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise LensError(f"{path}: not a tablesight lens file ({error!r})") from None

    def at_size(self, size: tuple[int, int]) -> LensModel | None:
        """This lens for photos of ``size`` (width, height): scaled where the aspect ratio is the one it was
        calibrated at (a webcam's smaller modes scale the same view down), None where it is not (another crop
        of the sensor, or the camera turned upright: the lens file does not describe those photos)."""
        if tuple(size) == tuple(self.image_size):
            return self
        sx, sy = size[0] / self.image_size[0], size[1] / self.image_size[1]
        if abs(sx / sy - 1) > ASPECT_TOLERANCE:
            return None
        K = self.K.copy()
        K[0, 0], K[1, 1] = K[0, 0] * sx, K[1, 1] * sy
        K[0, 2], K[1, 2] = (K[0, 2] + 0.5) * sx - 0.5, (K[1, 2] + 0.5) * sy - 0.5  # pixel centres
        scale = np.array([sx, sy, sx, sy, 1.0, 1.0, 1.0, 1.0])
        std = tuple(float(v) for v in np.asarray(self.std) * scale) if self.std else None
        cov = tuple(map(tuple, np.asarray(self.cov) * np.outer(scale, scale))) if self.cov else None
        return replace(self, K=K, image_size=(int(size[0]), int(size[1])), rms_px=self.rms_px * sx, std=std, cov=cov)

    def undistort_points(self, px: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Distorted pixels -> ideal pinhole pixels (same K)."""
        pts = np.asarray(px, dtype=np.float64).reshape(-1, 1, 2)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-10)
        out: npt.NDArray[np.float64] = cv2.undistortPoints(
            pts, self.K, self.dist, R=np.eye(3), P=self.K, criteria=criteria
        ).reshape(-1, 2)
        return out

    def distort_points(self, ideal_px: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Ideal pinhole pixels -> distorted pixels."""
        pts = np.asarray(ideal_px, dtype=np.float64).reshape(-1, 2)
        norm = np.concatenate([(pts - self.K[:2, 2]) / np.diag(self.K)[:2], np.ones((len(pts), 1))], axis=1)
        out, _ = cv2.projectPoints(norm, np.zeros(3), np.zeros(3), self.K, self.dist)
        result: npt.NDArray[np.float64] = out.reshape(-1, 2)
        return result


def find_charuco(image: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """(object points, image points) of the ChArUco corners seen, or None."""
    board = charuco_board()
    detector = cv2.aruco.CharucoDetector(board)
    corners, ids, _, _ = detector.detectBoard(to_gray(image))
    if ids is None or len(ids) < 6:
        return None
    obj, img = board.matchImagePoints(corners, ids)
    return np.asarray(obj, np.float64).reshape(-1, 3), np.asarray(img, np.float64).reshape(-1, 2)


def calibrate_lens(
    images: Sequence[npt.NDArray[np.uint8]], names: Sequence[str] | None = None, tangential: bool = False
) -> tuple[LensModel, list[str]]:
    """OpenCV's camera model from several ChArUco views. Returns the model and notes (skipped views).

    ``tangential``: also fit the decentring terms p1, p2. Off by default, as COLMAP's default camera model
    and most webcam calibrations leave them out: a webcam's lens barely has them, and from a dozen views
    of the board they trade off against the principal point. Measured on rendered webcams (docs/calibration.md):
    fitting them moved the principal point up to 10 px and left 0.31 px of mapping error, against 0.06 px
    without them."""
    notes = []
    objs, imgs = [], []
    size: tuple[int, int] | None = None
    for k, image in enumerate(images):
        name = names[k] if names else f"view {k}"
        h, w = image.shape[:2]
        if size is None:
            size = (w, h)
        elif size != (w, h):
            raise LensError(f"{name}: {w}x{h} differs from the first view's {size[0]}x{size[1]}")
        found = find_charuco(image)
        if found is None:
            notes.append(f"{name}: no ChArUco board found, skipped")
            continue
        objs.append(found[0].astype(np.float32))
        imgs.append(found[1].astype(np.float32))
    if len(objs) < MIN_VIEWS or size is None:
        raise LensError(
            f"lens calibration needs at least {MIN_VIEWS} views of the ChArUco board, found it in {len(objs)}"
        )
    flags = cv2.CALIB_FIX_K3 | (0 if tangential else cv2.CALIB_ZERO_TANGENT_DIST)
    rms, K, dist, rvecs, tvecs, std, _, _ = cv2.calibrateCameraExtended(objs, imgs, size, None, None, flags=flags)
    spread = tuple(float(v) for v in np.asarray(std).ravel()[:8])
    cov = _intrinsics_covariance(objs, imgs, K, dist, rvecs, tvecs, 8 if tangential else 6)
    return LensModel(np.asarray(K), np.asarray(dist).ravel(), size, float(rms), len(objs), spread, cov), notes


def _intrinsics_covariance(
    objs: list[Any], imgs: list[Any], K: Any, dist: Any, rvecs: Any, tvecs: Any, free: int = 8
) -> tuple[tuple[float, ...], ...]:
    """Covariance of (fx, fy, cx, cy, k1, k2, p1, p2) from the fit's Jacobian, every view's pose included.
    ``free``: how many of them were fitted (6: p1, p2 held at zero, so their rows and columns are zero)."""
    views = len(objs)
    blocks, residuals = [], []
    n_params = 8 + 6 * views
    for v in range(views):
        px, jac = cv2.projectPoints(objs[v], rvecs[v], tvecs[v], K, dist)
        residuals.append((px.reshape(-1, 2) - imgs[v].reshape(-1, 2)).ravel())
        J = np.zeros((jac.shape[0], n_params))
        J[:, 0:2] = jac[:, 6:8]  # fx, fy
        J[:, 2:4] = jac[:, 8:10]  # cx, cy
        J[:, 4:8] = jac[:, 10:14]  # k1, k2, p1, p2
        J[:, 8 + 6 * v : 14 + 6 * v] = jac[:, 0:6]  # this view's rvec, tvec
        blocks.append(J)
    J = np.concatenate(blocks)
    r = np.concatenate(residuals)
    fitted = [k for k in range(n_params) if k < free or k >= 8]
    sigma2 = float(r @ r) / max(len(r) - len(fitted), 1)
    cov = np.zeros((8, 8))
    cov[:free, :free] = sigma2 * np.linalg.pinv(J[:, fitted].T @ J[:, fitted])[:free, :free]
    return tuple(tuple(float(x) for x in row) for row in cov)
