"""The set-up frame: is it the empty table?

The first good frame of a live game (and each frame after the camera was moved and calibrated again) is taken
as the empty-table reference, which the detector checks every base against: a base whose edge looks as it did
on the empty table is no base (vision/detect_learned.py, MIN_SEEN_SHARE). A reference taken with models on the
table therefore hides every model that has not moved since: on three held-out photos used as their own set-up,
2 of 20, 0 of 15 and 1 of 8 bases were found. So the learned detector first reads the set-up frame without a
reference, and a frame that shows bases is not taken as the empty table:

- after a recalibration (the camera was moved), the set-up's reference stays wherever a base shows: it is in
  table inches, not the camera's pixels;
- at the first set-up, a frame showing SETUP_BASES_MIN bases or more is not taken at all: each frame is read
  as a single photo is (vision/analyze.py: against the table smoothed from it; nothing is reported as covering
  the table), and the players are told how to get a reference.

Read without a reference, an empty table can show a few "bases": woods' trees seen from above are round. So
a set-up frame showing fewer than SETUP_BASES_MIN is still taken as the empty table, saying what it saw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.monitor import MonitorReport, markers_used
from calibration.table_frame import TableFrame
from vision import covered
from vision.analyze import Analysis, Detector
from vision.detect_classical import MARKER_RADIUS_IN, Reference
from vision.detect_learned import LearnedDetector
from vision.detections import Detections
from vision.hex_mat import mat_grid_again
from vision.live.identified import IdentifiedScenes
from vision.live.motion import MotionGate

Image = npt.NDArray[np.uint8]
# Bases beside the markers on a first set-up frame (read without a reference) that make it no empty table. On
# the empty frames of 550 rendered tables (held-out 5000-5299, tuning 6200-6259, 6400-6519, 13000-13039,
# path-traced 7000-7029): none on the 520 flat ones; 1-3 on 9 of the 30 path-traced ones (woods' trees, round
# from above). With the models on, 527 of the 550 showed 5 or more (docs/live.md, session 42).
SETUP_BASES_MIN = 5
SET_UP_STILL_FRAMES = 3  # as many as the motion gate waits for before each analysis
WAITING_TO_SET_UP = "waiting for the table to be still to set up (hands off the table)"


class StillTable:
    """Whether the last SET_UP_STILL_FRAMES frames agree, nothing moving over the table. A live camera's set-up frame
    is taken only then: taken with a hand over the table (placing the camera, straightening the mat), the
    empty-table reference holds the hand, and the table under it is reported covered for the whole game."""

    def __init__(self, frames: int = SET_UP_STILL_FRAMES) -> None:
        self._gate = MotionGate()
        self._frames = frames
        self._quiet = -1  # frames that agree with the one before (the first has none before it)

    def update(self, frame_image: Image) -> bool:
        """Whether this frame and the ones before it, SET_UP_STILL_FRAMES in all, show the same table."""
        moving = self._gate.update(frame_image).state == "moving"
        self._quiet = 0 if moving else self._quiet + 1
        return self._quiet >= self._frames - 1


@dataclass(frozen=True)
class SetUp:
    """The reference to read the table against (None: none), how many bases the set-up frame showed, and what
    to tell the players."""

    reference: Reference | None
    bases_seen: int
    message: str
    empty_table: bool = False  # the frame was taken as the empty table: nothing on it to analyse


@dataclass
class EmptyTablePhoto:
    """The frame the reference was taken from, and the map it was read through: while the camera has not moved, the
    same pixels read through a better map (markers hidden at set-up back in view: calibration/monitor.py's "refined")
    make a better reference, its objective markers placed through that map too. What hid those markers (a card, a
    dice tray) is in it, and gone now: at the next analysis, that part of the reference is taken from the photo
    (``lifted_off``), or the players would be told for the rest of the game that something covers the table there."""

    image: Image
    frame: TableFrame
    markers_back: tuple[int, ...] = ()  # hidden at set-up, in view since
    lifted_pending: bool = False  # read again since the last analysis: what hid them is still in the reference

    def refined_by(self, report: MonitorReport) -> bool:
        """Whether ``report``'s map refines the map this photo was read through."""
        return report.state == "refined" and report.frame is not None and report.remap_from is self.frame

    def read_again(self, detector: Detector, report: MonitorReport) -> Reference | None:
        """The reference read again through ``report``'s map, where that refines the map this photo was read through
        (None: it does not, and the reference stays)."""
        if not self.refined_by(report) or report.frame is None:
            return None
        reference = detector.prepare(self.image, report.frame)  # (first: if it fails, nothing here has changed)
        back = set(markers_used(report.frame)) - set(markers_used(self.frame))
        self.markers_back = tuple(sorted(set(self.markers_back) | back))
        self.frame, self.lifted_pending = report.frame, True
        return reference

    def lifted_off(self, reference: Reference, photo: Image, frame: TableFrame, found: Detections) -> Reference | None:
        """``reference`` with what covered the markers back in view, and does not now, taken from ``photo`` (a settled
        frame, analysed with ``found`` pieces, through the map the reference was read again by): None if no reading
        again (``read_again``) waits for this."""
        if not self.lifted_pending or frame is not self.frame:
            return None
        self.lifted_pending = False
        layout = frame.layout
        back = [m for m in layout.markers if m.id in self.markers_back]
        empty_top = reference.rectified
        h, w = empty_top.shape[:2]
        top = frame.rectify(photo, w / layout.width_in, (0, 0, w, h))
        return Reference(covered.lifted_off(top, empty_top, frame, found, back), reference.objectives)


def read_set_up_again(
    photo: EmptyTablePhoto | None,
    detector: Detector,
    report: MonitorReport,
    identified: IdentifiedScenes,
    game: str,
    hex_mat: dict[str, Any] | None,
    hex_mat_given: bool,
) -> tuple[Reference, dict[str, Any] | None] | None:
    """The set-up read again through ``report``'s map, where that refines the map it was read through (markers hidden
    at set-up back in view): its reference, and a hex mat's grid found again (None: no refining, and both stay). The
    objective markers ``identified`` holds, read by the old map, are placed through the new one, and it takes the
    grid. Raises where the photo cannot be read again; nothing has changed then."""
    if photo is None or not photo.refined_by(report):
        return None
    grid = mat_grid_again(game, hex_mat, hex_mat_given, photo.image, report.frame)
    reference = photo.read_again(detector, report)
    if reference is None:
        return None
    identified.remap_objectives(report)
    identified.take_hex_mat(grid)
    return reference, grid


def analyse_lifting(
    analyse: Callable[[Reference | None], Analysis],
    photo: EmptyTablePhoto | None,
    reference: Reference | None,
    image: Image,
    frame: TableFrame,
) -> tuple[Analysis, Reference | None]:
    """``analyse`` (the frame ``image``) against ``reference``; where that shows what hid markers at set-up lifted off
    them (``EmptyTablePhoto.lifted_off``), against the reference taken from it there instead. Returns the analysis
    and the reference to use from now on."""
    result = analyse(reference)
    lifted = photo.lifted_off(reference, image, frame, result.detections) if photo and reference else None
    return (result, reference) if lifted is None else (analyse(lifted), lifted)


def take_reference(detector: Detector, frame_image: Image, frame: TableFrame, kept: Reference | None) -> SetUp:
    """The empty-table reference from ``frame_image`` if it shows no models; else ``kept`` (the set-up's, after a
    recalibration) or none. The classical detector finds bases only against an empty table, so it cannot check:
    its frame is taken as it is."""
    if not isinstance(detector, LearnedDetector):
        return SetUp(detector.prepare(frame_image, frame), 0, "set up from the empty table", True)
    reference = detector.prepare(frame_image, frame)
    bases = bases_beside_markers(detector, frame_image, frame, reference)
    if kept is not None and bases > 0:  # the camera was moved during the game: the set-up's empty table stays
        return SetUp(kept, bases, f"{bases} bases on the table: the empty-table reference taken at set-up is kept")
    if bases == 0:
        return SetUp(reference, bases, "set up from the empty table", True)
    if bases < SETUP_BASES_MIN:  # a tree, or a few models: taken as the empty table, and the players told
        message = f"set up from the empty table ({bases} round things on it: if models, clear the table and restart)"
        return SetUp(reference, bases, message, True)
    return SetUp(
        None,
        bases,
        f"the set-up frame shows {bases} bases, not the empty table: reading the table without an empty-table "
        "reference, so nothing is reported as covering it (clear the table and start again for that)",
    )


def bases_beside_markers(detector: LearnedDetector, frame_image: Image, frame: TableFrame, reference: Reference) -> int:
    """Bases the frame shows, read without a reference, leaving out those on the objective markers the set-up
    found (read with no empty table, a marker's disc is taken for a 40 mm base: its figure may show a plain
    disc from above)."""
    found, _, _ = detector.detect(frame_image, None, frame)
    markers = np.c_[reference.objectives.x_in, reference.objectives.y_in]
    bases = np.c_[found.x_in, found.y_in][found.kind == 0]
    if len(markers) and len(bases):
        to_marker_in = np.linalg.norm(bases[:, None] - markers[None], axis=2).min(axis=1)
        bases = bases[to_marker_in > MARKER_RADIUS_IN]
    return len(bases)
