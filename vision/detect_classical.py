"""Classical base and marker detection: no learning, no torch.

Works in the rectified top-down view, where a base lying on the table is a
circle (or ellipse) of a known size in pixels. An empty-table reference frame
(taken at set-up) is subtracted to find what was put down; circle proposals
(Hough) are then refined by a robust fit of the outline's edge points in a ring
around each proposal, which ignores the arcs hidden by a figure that
overhangs its base. The fit gives a sub-pixel centre and the size, snapped to
the nearest standard base.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from geometry.shapes import KNOWN_BASES, MM_PER_IN, base_semi_axes_in
from vision.camera_quality import CameraQuality
from vision.detections import RIM_SAMPLE_ANGLES, RIM_SAMPLE_RADII, Detections

Image = npt.NDArray[np.uint8]
ROUND = [b for b in KNOWN_BASES if "x" not in b]
OVALS = [b for b in KNOWN_BASES if "x" in b]
OBJECTIVE_MM = 40.0
MARKER_RADIUS_IN = OBJECTIVE_MM / 2 / MM_PER_IN  # an objective marker's radius on the table
SIZE_TOLERANCE = 0.10  # fitted radius within 10 % of a standard size
MIN_SUPPORT = 0.40  # share of the outline that must be seen
STRONG_SUPPORT = 0.9  # with this much of the outline seen, a centre is 4x surer (vision/centre_sigma.py)


@dataclass(frozen=True)
class Reference:
    """The empty table as set up (rectified), with the objective markers found on it."""

    rectified: Image
    objectives: Detections

    @classmethod
    def set_up(cls, rectified: Image, objectives: Detections, frame: TableFrame) -> Reference:
        """The set-up's reference, less any marker found centred on a calibration marker: no objective is put down
        there, and a printed square part hidden by terrain can read as a disc (fresh table 53022)."""
        return cls(rectified, objectives[~frame.layout.on_marker(objectives.x_in, objectives.y_in)])


@dataclass(frozen=True)
class ClassicalDetector:
    px_per_in: float = 40.0
    diff_threshold: float = 28.0

    def prepare(self, empty: Image, frame: TableFrame) -> Reference:
        """Set-up, once per calibration: the empty table rectified, and the objective markers on it."""
        ref = frame.rectify(empty, self.px_per_in)
        return Reference.set_up(ref, self._objectives(ref), frame)

    def detect(
        self, photo: Image, reference: Reference, frame: TableFrame, camera: CameraQuality | None = None
    ) -> tuple[Detections, dict[str, float], Image]:
        """Bases in table inches (plus the reference's objective markers); timings; the rectified photo.
        ``camera`` is not used: the classical detector reads every camera alike."""
        times = {}
        start = time.perf_counter()
        top = frame.rectify(photo, self.px_per_in)
        times["rectify_ms"] = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        fg = self._foreground(top, reference.rectified)
        times["foreground_ms"] = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        bases = self._bases(top, fg, reference.rectified)
        times["bases_ms"] = (time.perf_counter() - start) * 1e3
        return Detections.concat([bases, reference.objectives]), times, top

    # ---- foreground ------------------------------------------------------------------
    def _foreground(self, top: Image, ref: Image) -> npt.NDArray[np.uint8]:
        a = cv2.GaussianBlur(top, (0, 0), 1.0).astype(np.int16)
        b = cv2.GaussianBlur(ref, (0, 0), 1.0).astype(np.int16)
        diff = np.abs(a - b).max(axis=2) if a.ndim == 3 else np.abs(a - b)
        mask = (diff > self.diff_threshold).astype(np.uint8) * 255
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
        out: npt.NDArray[np.uint8] = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
        return out

    # ---- bases -------------------------------------------------------------------------
    def _bases(self, top: Image, fg: npt.NDArray[np.uint8], empty_top: Image) -> Detections:
        ppi = self.px_per_in
        radii = {b: base_semi_axes_in(b)[0] * ppi for b in ROUND}
        r_min, r_max = min(radii.values()), max(radii.values())
        ovals = self._ovals(fg)
        fg_round = fg.copy()
        for ex, ey, la, _, size, facing in ovals:
            sb = base_semi_axes_in(size)[1] * ppi
            cv2.ellipse(
                fg_round, (int(round(ex)), int(round(ey))), (int(la * 1.15), int(sb * 1.3)), facing, 0, 360, 0, -1
            )
        fg = fg_round
        blurred = cv2.GaussianBlur(fg, (0, 0), 1.5)
        circles = cv2.HoughCircles(
            blurred,
            cv2.HOUGH_GRADIENT_ALT,
            dp=1.0,
            minDist=r_min * 0.8,
            param1=80,
            param2=0.55,
            minRadius=int(r_min * 0.85),
            maxRadius=int(r_max * 1.15),
        )
        edges = self._edge_points(fg)
        found: list[tuple[float, float, float, float, str]] = []
        if circles is not None:
            for cx, cy, r in circles.reshape(-1, 3):
                fit = self._fit_circle(edges, float(cx), float(cy), float(r))
                if fit is None:
                    continue
                fx, fy, fr, support = fit
                size = min(radii, key=lambda k: abs(radii[k] - fr))
                if abs(radii[size] - fr) > SIZE_TOLERANCE * radii[size] or support < MIN_SUPPORT:
                    continue
                found.append((fx, fy, radii[size], support, size))
        # Keep the best of overlapping fits (two proposals for one base).
        found.sort(key=lambda f: -f[3])
        kept: list[tuple[float, float, float, float, str]] = []
        for f in found:
            if all(math.hypot(f[0] - k[0], f[1] - k[1]) > 0.7 * min(f[2], k[2]) for k in kept):
                kept.append(f)
        rows: list[tuple[float, ...]] = [*kept, *ovals]  # type: ignore[list-item]
        if not rows:
            return Detections.empty()
        # Fits are in pixel indices; pixel k's centre is table (k + 0.5) / ppi (TableFrame.rectify).
        x = (np.array([r[0] for r in rows]) + 0.5) / ppi
        y = (np.array([r[1] for r in rows]) + 0.5) / ppi
        sizes = np.array([r[4] for r in rows], dtype="<U8")
        axes = np.array([base_semi_axes_in(s) for s in sizes])
        facing = np.array([r[5] if len(r) > 5 else 0.0 for r in rows])
        colours = np.array([self._rim_colour(top, r[0], r[1], r[2]) for r in rows])
        # Round bases round their standard radius, ovals round their short one (as in the learned path).
        rim_px = [r[2] if len(r) <= 5 else ax[1] * ppi for r, ax in zip(rows, axes, strict=True)]
        samples = np.array([self.rim_sample(top, r[0], r[1], rr) for r, rr in zip(rows, rim_px, strict=True)])
        mats = np.array([self.rim_sample(empty_top, r[0], r[1], rr) for r, rr in zip(rows, rim_px, strict=True)])
        return Detections(
            x,
            y,
            axes[:, 0],
            axes[:, 1],
            facing,
            np.zeros(len(rows), np.int8),
            sizes,
            np.array([r[3] for r in rows]),
            colours,
            np.array([_measured_by(r) for r in rows], dtype="<U32"),
            samples,
            mats,
        )

    @staticmethod
    def _edge_points(fg: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
        contours, _ = cv2.findContours(fg, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        if not contours:
            return np.zeros((0, 2))
        return np.concatenate([c.reshape(-1, 2) for c in contours]).astype(np.float64)

    @staticmethod
    def _fit_circle(
        edges: npt.NDArray[np.float64], cx: float, cy: float, r: float
    ) -> tuple[float, float, float, float] | None:
        """Robust circle through the outline points near a proposal (RANSAC, then least squares)."""
        d = np.hypot(edges[:, 0] - cx, edges[:, 1] - cy)
        near = edges[(d > 0.7 * r) & (d < 1.3 * r)]
        if len(near) < 12:
            return None
        rng = np.random.default_rng(0)
        best, best_inliers = None, None
        tol = max(1.0, 0.04 * r)
        for _ in range(60):
            p = near[rng.choice(len(near), 3, replace=False)]
            fit = _circle_3(p)
            if fit is None or not (0.7 * r < fit[2] < 1.3 * r):
                continue
            inliers = np.abs(np.hypot(near[:, 0] - fit[0], near[:, 1] - fit[1]) - fit[2]) < tol
            if best_inliers is None or inliers.sum() > best_inliers.sum():
                best, best_inliers = fit, inliers
        if best is None or best_inliers is None:
            return None
        fx, fy, fr = _circle_lsq(near[best_inliers])
        # Support: the share of the circle's perimeter with an edge point close by.
        angles = np.arctan2(near[best_inliers, 1] - fy, near[best_inliers, 0] - fx)
        bins = np.unique(((angles + np.pi) / (2 * np.pi) * 36).astype(int) % 36)
        return fx, fy, fr, len(bins) / 36.0

    def _ovals(self, fg: npt.NDArray[np.uint8]) -> list[tuple[float, float, float, float, str, float]]:
        """Oval bases: elongated blobs that fit a standard oval, with their facing."""
        ppi = self.px_per_in
        contours, _ = cv2.findContours(fg, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        out = []
        for c in contours:
            if len(c) < 20:
                continue
            (ex, ey), (w, h), angle = cv2.fitEllipse(c)
            long_px, short_px = max(w, h) / 2, min(w, h) / 2
            if long_px < 1.25 * short_px:
                continue
            best = min(
                OVALS,
                key=lambda s: (
                    abs(base_semi_axes_in(s)[0] * ppi - long_px) + abs(base_semi_axes_in(s)[1] * ppi - short_px)
                ),
            )
            la, sb = (v * ppi for v in base_semi_axes_in(best))
            if abs(la - long_px) > 0.15 * la or abs(sb - short_px) > 0.2 * sb:
                continue
            facing = angle + (90.0 if w < h else 0.0)
            out.append((ex, ey, la, 0.6, best, facing % 180.0))
        return out

    @staticmethod
    def rim_sample(
        top: Image, cx: float, cy: float, r: float, r_across: float | None = None, facing_deg: float = 0.0
    ) -> npt.NDArray[np.float64]:
        """Colours (K, 3) on rings just inside and outside a base's edge (radius ``r`` px), evenly round
        it: the team's rim shows in some of them even where a figure hides the rest. An oval: ``r`` along
        its facing, ``r_across`` across it."""
        ang = np.linspace(0, 2 * np.pi, RIM_SAMPLE_ANGLES, endpoint=False)
        along, across = r * np.cos(ang), (r if r_across is None else r_across) * np.sin(ang)
        c, s = math.cos(math.radians(facing_deg)), math.sin(math.radians(facing_deg))
        dx, dy = along * c - across * s, along * s + across * c
        mx = np.concatenate([cx + k * dx for k in RIM_SAMPLE_RADII]).astype(np.float32)[None]
        my = np.concatenate([cy + k * dy for k in RIM_SAMPLE_RADII]).astype(np.float32)[None]
        out = cv2.remap(top, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return out.reshape(-1, top.shape[2] if top.ndim == 3 else 1).astype(np.float64)

    def _rim_colour(self, top: Image, cx: float, cy: float, r: float) -> npt.NDArray[np.float64]:
        mask = np.zeros(top.shape[:2], np.uint8)
        cv2.circle(mask, (int(round(cx)), int(round(cy))), int(r * 0.96), 255, max(1, int(r * 0.08)))
        pixels = top[mask > 0].reshape(-1, top.shape[2] if top.ndim == 3 else 1)
        return np.median(pixels, axis=0).astype(np.float64) if len(pixels) else np.zeros(3)

    # ---- objective markers -----------------------------------------------------------
    def _objectives(self, ref: Image) -> Detections:
        ppi = self.px_per_in
        r = MARKER_RADIUS_IN * ppi
        gray = cv2.cvtColor(ref, cv2.COLOR_BGR2GRAY) if ref.ndim == 3 else ref
        edges = cv2.Canny(cv2.GaussianBlur(gray, (0, 0), 1.2), 30, 90)
        circles = cv2.HoughCircles(
            cv2.GaussianBlur(gray, (0, 0), 1.2),
            cv2.HOUGH_GRADIENT_ALT,
            dp=1.0,
            minDist=r,
            param1=90,
            param2=0.8,
            minRadius=int(r * 0.9),
            maxRadius=int(r * 1.1),
        )
        pts = np.argwhere(edges > 0)[:, ::-1].astype(np.float64)
        rows = []
        if circles is not None:
            for cx, cy, rr in circles.reshape(-1, 3):
                fit = self._fit_circle(pts, float(cx), float(cy), float(rr))
                if fit is None or fit[3] < 0.8 or abs(fit[2] - r) > 0.08 * r:
                    continue
                rows.append(((fit[0] + 0.5) / ppi, (fit[1] + 0.5) / ppi, fit[3]))  # pixel k: (k + 0.5) / ppi
        if not rows:
            return Detections.empty()
        n = len(rows)
        radius_in = MARKER_RADIUS_IN
        return Detections(
            np.array([r_[0] for r_ in rows]),
            np.array([r_[1] for r_ in rows]),
            np.full(n, radius_in),
            np.full(n, radius_in),
            np.zeros(n),
            np.ones(n, np.int8),
            np.full(n, "", dtype="<U8"),
            np.array([r_[2] for r_ in rows]),
            np.zeros((n, 3)),
            np.full(n, "marker outline, reference", dtype="<U32"),
        )


def _measured_by(row: tuple[float, ...]) -> str:
    """How a base's centre was found: an oval's blob ellipse, or a circle fit on much or little of the outline."""
    if len(row) > 5:
        return "ellipse"
    return "circle" if row[3] >= STRONG_SUPPORT else "circle, weak"


def _circle_3(p: npt.NDArray[np.float64]) -> tuple[float, float, float] | None:
    (x1, y1), (x2, y2), (x3, y3) = p
    d = 2 * (x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2))
    if abs(d) < 1e-9:
        return None
    s1, s2, s3 = x1 * x1 + y1 * y1, x2 * x2 + y2 * y2, x3 * x3 + y3 * y3
    ux = (s1 * (y2 - y3) + s2 * (y3 - y1) + s3 * (y1 - y2)) / d
    uy = (s1 * (x3 - x2) + s2 * (x1 - x3) + s3 * (x2 - x1)) / d
    return ux, uy, math.hypot(x1 - ux, y1 - uy)


def _circle_lsq(p: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    """Algebraic (Kasa) circle fit."""
    A = np.c_[2 * p[:, 0], 2 * p[:, 1], np.ones(len(p))]
    b = (p**2).sum(axis=1)
    cx, cy, c = np.linalg.lstsq(A, b, rcond=None)[0]
    return float(cx), float(cy), float(math.sqrt(max(c + cx * cx + cy * cy, 0.0)))
