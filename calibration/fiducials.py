"""Finding the kit's ArUco markers in a frame, corners refined to a fraction of a pixel."""

from __future__ import annotations

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


def detect_markers(image: npt.NDArray[np.uint8]) -> dict[int, Corners]:
    """Marker id -> its 4 corners in pixels. A marker seen twice is dropped (it cannot be trusted)."""
    gray = to_gray(image)
    corners, ids, _ = _DETECTOR.detectMarkers(gray)
    found: dict[int, Corners] = {}
    duplicates: set[int] = set()
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel(), strict=True):
        key = int(i)
        if key in found:
            duplicates.add(key)
        found[key] = _refine(gray, np.asarray(c, dtype=np.float64).reshape(4, 2))
    for key in duplicates:
        del found[key]
    return found


def sharpness(image: npt.NDArray[np.uint8]) -> float:
    """Variance of the Laplacian: low for blurred photos."""
    return float(cv2.Laplacian(to_gray(image), cv2.CV_64F).var())
