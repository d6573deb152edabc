"""Keeping a calibration good frame after frame: hidden markers, a bumped camera.

After a full calibration, the monitor keeps a small image patch around each
marker. Each new frame is checked cheaply by finding those patches near where
they were (template matching in a small window): a marker that moved means the
camera was bumped, and the table is recalibrated; a marker that cannot be found
is taken as hidden (a hand, a model) and the others carry on. With fewer than
two markers in view the last good calibration is kept, and the report says so. A camera knocked while a
hand covers a marker is not recalibrated from the others at once: the map from fewer markers can be off by a
twentieth of an inch or more, for the rest of the game, so the frames are not read until the marker is in view
again (or WAIT_ALL_MARKERS_FRAMES went by). Recalibrated from fewer after that wait (a card left on a marker), the
monitor looks for the missing markers every RETRY_ALL_MARKERS_FRAMES steady frames, and once they are back maps the
table from them all again: a "refined" report, whose ``remap_from`` is the map the places read since were read by.
A set-up calibrated with markers of the layout hidden (a dice tray on one) is looked after so too: from two markers
and no lens file its map was up to 0.8" off (docs/calibration.md, session 87).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import to_gray
from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import CalibrationError, TableFrame, calibrate

SEARCH_PX = 12  # how far a marker may have moved and still be found by the quick check
MATCH_MIN = 0.75  # normalised correlation below which a marker counts as hidden
DRIFT_PX = 0.75  # a shift this large on two or more markers means the camera moved
# A camera that moved while markers it was calibrated from are hidden waits this many frames (a few seconds of a
# webcam: a hand that knocked it is lifted) for them before recalibrating from fewer: measured on a 44"x60" table
# (docs/calibration.md, session 85), its map from three markers was 0.06" off at worst, from two 0.24".
WAIT_ALL_MARKERS_FRAMES = 60
# Recalibrated from fewer markers after that wait, a full detection (~23 ms on a 1080p frame) every this many steady
# frames looks for the missing ones: about once a second of a webcam, under 1 ms a frame.
RETRY_ALL_MARKERS_FRAMES = 30


@dataclass(frozen=True)
class MonitorReport:
    # "calibrated", "steady", "recalibrated", "moved" (waiting for hidden markers), "refined" (the markers missing from
    # a recalibration are back: the same view, mapped from them all), "markers-hidden", "uncalibrated"
    state: str
    frame: TableFrame | None
    shifts_px: dict[int, float]
    hidden: tuple[int, ...]
    message: str
    stale: bool = False  # true while the last good calibration is kept without confirmation
    # "refined": the map the table was read by until now. The camera did not move, so a place read by it is the pixel
    # ``remap_from.table_to_image(place)``, better mapped by ``frame`` (``refined_place``).
    remap_from: TableFrame | None = None


@dataclass
class _Patch:
    marker_id: int
    x0: int
    y0: int
    template: npt.NDArray[np.uint8]


class CalibrationMonitor:
    def __init__(self, layout: Layout, lens: LensModel | None = None) -> None:
        self.layout = layout
        self.lens = lens
        self._lens_given = lens is not None  # else the lens's bend is read from the markers
        self.frame: TableFrame | None = None
        self._patches: list[_Patch] = []
        self._waited = 0  # frames the camera has been seen moved with markers of its calibration hidden
        # Recalibrated from fewer markers than before the knock: those it lacks, and the steady frames since
        self._lacking: tuple[int, ...] = ()
        self._lacking_since = ""  # when the map came to lack them: "the set-up", "the knock"
        self._steady_frames = 0

    def update(self, image: npt.NDArray[np.uint8]) -> MonitorReport:
        if image is None or image.ndim not in (2, 3) or image.size == 0:
            return self._keep("the frame is empty or broken", ())
        if self.frame is None:
            report = self._full(image, "calibrated")
            if report.frame is not None:
                self._lacking, self._steady_frames = _could_come_back(report.frame), 0
                self._lacking_since = "the set-up"
            if self._lacking:  # the players can help: what lies on them is in the way
                names = ", ".join(map(str, self._lacking))
                which, them = ("marker", "it") if len(self._lacking) == 1 else ("markers", "them")
                said = f"{report.message}; uncover {which} {names} to map the table from {them} too"
                return replace(report, message=said)
            return report
        shifts, hidden = self._check(image)
        visible = [k for k in shifts if k not in hidden]
        if len(visible) < 2:
            # Hidden, or the camera moved too far for the quick check: try a full calibration.
            previous, previous_patches = self.frame, self._patches
            report = self._full(image, "recalibrated")
            if report.state == "recalibrated" and report.frame is not None and previous is not None:
                corners = np.concatenate([m.corners_in() for m in self.layout.markers])
                moved_px = float(
                    np.max(
                        np.linalg.norm(report.frame.table_to_image(corners) - previous.table_to_image(corners), axis=1)
                    )
                )
                if moved_px > DRIFT_PX:
                    why = f"the camera moved ({moved_px:.1f} px)"
                    return self._moved(
                        report, previous, previous_patches, shifts, why, ": recalibrated from a full detection"
                    )
                # Same view, markers merely hidden: the earlier calibration (from more markers) stays.
                self.frame, self._patches = previous, previous_patches
            return self._keep(
                f"markers {', '.join(map(str, hidden))} hidden: keeping the last good calibration",
                tuple(hidden),
                shifts,
            )
        moved = [k for k in visible if shifts[k] > DRIFT_PX]
        if len(moved) >= 2 or (len(moved) == 1 and len(visible) == 2):
            previous, previous_patches = self.frame, self._patches
            report = self._full(image, "recalibrated")
            if report.frame is not None and report.state == "recalibrated":
                why = f"the camera moved (markers {', '.join(map(str, moved))} shifted)"
                return self._moved(report, previous, previous_patches, shifts, why, "; recalibrated")
            return report
        self._waited = 0  # the view is the calibrated one (a knocked camera set back where it was)
        if self._lacking:
            self._steady_frames += 1
            if self._steady_frames % RETRY_ALL_MARKERS_FRAMES == 0:
                refined = self._refine(image, shifts)
                if refined is not None:
                    return refined
        note = f"steady; markers {', '.join(map(str, hidden))} hidden" if hidden else "steady"
        return MonitorReport("steady", self.frame, shifts, tuple(hidden), note)

    def look_again(self, image: npt.NDArray[np.uint8]) -> MonitorReport | None:
        """The markers the map lacks looked for now, not at the next RETRY_ALL_MARKERS_FRAMES: the table settled
        after a change (a card lifted off them, say), and ``image``, a frame ``update`` found steady, is about to be
        analysed. A "refined" report where they are back, else None (none lacking, or still missing)."""
        if not self._lacking or self.frame is None:
            return None
        return self._refine(image, {})

    # ---- helpers ---------------------------------------------------------------------
    def _moved(
        self,
        report: MonitorReport,
        previous: TableFrame,
        previous_patches: list[_Patch],
        shifts: dict[int, float],
        why: str,
        done: str,
    ) -> MonitorReport:
        """The camera moved, and ``report`` recalibrated it from a full detection. Where that found fewer of the
        markers than the calibration before used (a hand over one), the frame is not read (no table frame: the
        last scene stays, stale) and the next frames are checked against the old view again, until they are all in
        view or WAIT_ALL_MARKERS_FRAMES went by; then it is recalibrated from those it finds."""
        assert report.frame is not None
        missing = sorted(set(markers_used(previous)) - set(markers_used(report.frame)))
        if missing and self._waited < WAIT_ALL_MARKERS_FRAMES:
            self._waited += 1
            self.frame, self._patches = previous, previous_patches
            names = ", ".join(map(str, missing))
            message = f"{why}; markers {names} hidden: waiting for them to recalibrate"
            return MonitorReport("moved", None, shifts, tuple(missing), message, stale=True)
        self._waited = 0
        # (knocked again before they were back: those are still lacking too)
        lacking = (set(self._lacking) | set(missing)) - set(markers_used(report.frame))
        self._lacking, self._steady_frames = tuple(sorted(lacking)), 0
        self._lacking_since = "the knock"
        fewer = f" from markers {', '.join(map(str, markers_used(report.frame)))} only" if missing else ""
        return MonitorReport("recalibrated", report.frame, shifts, report.hidden, f"{why}{done}{fewer}")

    def _refine(self, image: npt.NDArray[np.uint8], shifts: dict[int, float]) -> MonitorReport | None:
        """The table mapped again from every marker in view, where the ones the calibration lacked since the set-up
        or a knock are back (None: still missing). The view is the same (the quick check found it steady)."""
        previous, previous_patches, previous_lens = self.frame, self._patches, self.lens
        assert previous is not None
        if not self._lens_given:  # the lens's bend read again, from more markers than it was
            self.lens = None
        report = self._full(image, "refined")
        self.lens = self.lens or previous_lens
        now = markers_used(report.frame) if report.frame is not None else ()
        back = sorted(set(self._lacking) & set(now))
        if report.frame is None or not back or not set(markers_used(previous)) <= set(now):
            self.frame, self._patches, self.lens = previous, previous_patches, previous_lens
            return None
        self._lacking = tuple(sorted(set(self._lacking) - set(now)))
        moved_in = max_remap_in(previous, report.frame)
        message = (
            f"marker{'s' if len(back) > 1 else ''} {', '.join(map(str, back))} in view again: the table mapped from markers "
            f'{", ".join(map(str, now))}; places read since {self._lacking_since} corrected by up to {moved_in:.2f}"'
        )
        return MonitorReport("refined", report.frame, shifts, report.hidden, message, remap_from=previous)

    def _full(self, image: npt.NDArray[np.uint8], state: str) -> MonitorReport:
        try:
            frame = calibrate(image, self.layout, self.lens)
        except CalibrationError as error:
            return self._keep(f"calibration failed ({error}); keeping the last good calibration", ())
        if self.lens is None and frame.lens is not None:
            # No lens file: the bend read from the markers at the first calibration is kept (a bumped camera keeps
            # its lens), so a recalibration from fewer markers maps the table as the first did.
            self.lens = frame.lens
        self.frame = frame
        self._patches = self._make_patches(image, frame)
        missing = frame.quality.markers_missing if frame.quality else ()
        # What the calibration warns of goes to the players too (watch and the page show this message): a lens
        # read from the markers, a focal length they cannot tell, a blurred photo.
        warnings = "; ".join(frame.quality.warnings) if frame.quality else ""
        message = f"{state} from {len(self._patches)} markers" + (f" ({warnings})" if warnings else "")
        return MonitorReport(state, frame, {}, tuple(missing), message)

    def _keep(self, message: str, hidden: tuple[int, ...], shifts: dict[int, float] | None = None) -> MonitorReport:
        state = "markers-hidden" if self.frame is not None else "uncalibrated"
        return MonitorReport(state, self.frame, shifts or {}, hidden, message, stale=self.frame is not None)

    def _make_patches(self, image: npt.NDArray[np.uint8], frame: TableFrame) -> list[_Patch]:
        gray = to_gray(image)
        h, w = gray.shape
        patches = []
        used = frame.quality.markers_used if frame.quality else tuple(m.id for m in frame.layout.markers)
        for m in frame.layout.markers:
            if m.id not in used:
                continue
            px = frame.table_to_image(m.corners_in())
            x0, y0 = np.floor(px.min(axis=0)).astype(int) - 2
            x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 2
            if x0 - SEARCH_PX < 0 or y0 - SEARCH_PX < 0 or x1 + SEARCH_PX > w or y1 + SEARCH_PX > h:
                continue
            patches.append(_Patch(m.id, int(x0), int(y0), gray[y0:y1, x0:x1].copy()))
        return patches

    def _check(self, image: npt.NDArray[np.uint8]) -> tuple[dict[int, float], list[int]]:
        gray = to_gray(image)
        shifts: dict[int, float] = {}
        hidden: list[int] = []
        for p in self._patches:
            th, tw = p.template.shape
            window = gray[p.y0 - SEARCH_PX : p.y0 + th + SEARCH_PX, p.x0 - SEARCH_PX : p.x0 + tw + SEARCH_PX]
            score = cv2.matchTemplate(window, p.template, cv2.TM_CCOEFF_NORMED)
            _, best, _, (bx, by) = cv2.minMaxLoc(score)
            if best < MATCH_MIN:
                hidden.append(p.marker_id)
                shifts[p.marker_id] = float("nan")
                continue
            dx = bx - SEARCH_PX + _parabola(score, bx, by, axis=1)
            dy = by - SEARCH_PX + _parabola(score, bx, by, axis=0)
            shifts[p.marker_id] = float(np.hypot(dx, dy))
        return shifts, hidden


def refined_place(old: TableFrame, new: TableFrame, xy_in: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Table places read through ``old``, mapped through ``new`` instead: the same pixels (the camera did not move)."""
    return new.image_to_table(old.table_to_image(np.atleast_2d(np.asarray(xy_in, float))))


def remapper(old: TableFrame, new: TableFrame) -> Callable[[tuple[float, float]], tuple[float, float]]:
    """``refined_place`` for one place at a time."""

    def to_new(xy_in: tuple[float, float]) -> tuple[float, float]:
        x, y = refined_place(old, new, xy_in)[0]
        return float(x), float(y)

    return to_new


def max_remap_in(old: TableFrame, new: TableFrame, step_in: float = 2.0) -> float:
    """How far, at most over the table, a place read through ``old`` moves when read through ``new``."""
    layout = old.layout
    xs, ys = np.meshgrid(np.arange(0, layout.width_in + 1e-9, step_in), np.arange(0, layout.depth_in + 1e-9, step_in))
    grid = np.c_[xs.ravel(), ys.ravel()]
    return float(np.max(np.linalg.norm(refined_place(old, new, grid) - grid, axis=1)))


def _could_come_back(frame: TableFrame) -> tuple[int, ...]:
    """The layout's markers that ``frame`` was not mapped from, though the photo holds where they lie: hidden (a card
    on one), not out of the camera's view, so looked for again."""
    width, height = frame.image_size
    back = []
    for marker in frame.layout.markers:
        if marker.id in markers_used(frame):
            continue
        px = frame.table_to_image(marker.corners_in())
        if np.all(px >= 0) and np.all(px[:, 0] < width) and np.all(px[:, 1] < height):
            back.append(marker.id)
    return tuple(back)


def markers_used(frame: TableFrame) -> tuple[int, ...]:
    """The markers ``frame`` maps the table from."""
    return frame.quality.markers_used if frame.quality else tuple(m.id for m in frame.layout.markers)


def _parabola(score: npt.NDArray[np.float32], x: int, y: int, axis: int) -> float:
    """Sub-pixel offset of a correlation peak along one axis."""
    if axis == 1:
        if x <= 0 or x >= score.shape[1] - 1:
            return 0.0
        a, b, c = score[y, x - 1], score[y, x], score[y, x + 1]
    else:
        if y <= 0 or y >= score.shape[0] - 1:
            return 0.0
        a, b, c = score[y - 1, x], score[y, x], score[y + 1, x]
    denom = a - 2 * b + c
    return float(0.5 * (a - c) / denom) if denom < 0 else 0.0
