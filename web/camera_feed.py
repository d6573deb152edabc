"""The page's table from a real camera: calibration monitor, motion gate, detector, identity tracker.

The first good frame is the set-up: the table calibrated from its markers and
the empty-table reference taken. After that, each settled frame is analysed
and matched to the models already known, so ids (and the players'
corrections, which name them) stay put from frame to frame.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.monitor import CalibrationMonitor, MonitorReport
from calibration.table_frame import CalibrationError
from vision.analyze import Detector, analyze, make_detector, to_confirm
from vision.camera_quality import camera_faults, camera_news
from vision.covered import describe
from vision.detect_classical import Reference
from vision.hex_mat import describe_set_up, mat_grid
from vision.live.appearance import figure_looks
from vision.live.deployment import go_on_with
from vision.live.identified import IdentifiedScenes
from vision.live.motion import MotionGate
from vision.live.setup import (
    WAITING_TO_SET_UP,
    EmptyTablePhoto,
    StillTable,
    analyse_lifting,
    read_set_up_again,
    take_reference,
)
from vision.live.sources import FrameSource, ResilientSource
from web.feeds import empty_scene
from web.session import CameraStatus


class CameraFeed:
    def __init__(
        self,
        opener: Callable[[], FrameSource],
        layout: Layout,
        name: str,
        game: str = "focal-point",
        lens: LensModel | None = None,
        players: dict[str, str] | None = None,
        detector: Detector | None = None,
        model_path: str | Path | None = None,
        hex_mat: dict[str, Any] | None = None,
        settle_set_up: bool = False,
        terrain: list[dict[str, Any]] | None = None,
    ) -> None:
        self.source = ResilientSource(opener)
        self.still = StillTable() if settle_set_up else None  # a live camera's set-up waits for a still table
        self.detector = detector if detector is not None else make_detector("auto")  # the learned model where shipped
        self.base_detector = self.detector
        self.model_path = model_path  # the detector's network, kept when the refiner is swapped (use_refiner)
        self.refiner_path: Path | None = None  # an adapted refiner in use (None: the detector as given)
        self.layout = layout
        self.name = name
        self.game = game
        self.lens = lens
        self.players = players
        self.hex_mat = hex_mat  # the mat's hex grid in a game played in hexes (None: found at set-up)
        self.hex_mat_given = hex_mat is not None  # (else found on the set-up frame, and found again on a better map)
        self.terrain = terrain  # the players' terrain (find-terrain): bases on hills are put on top
        self.monitor = CalibrationMonitor(layout, lens)
        self.gate = MotionGate()
        self.reference: Reference | None = None
        self.empty_photo: EmptyTablePhoto | None = None  # what the reference was taken from, read again on a better map
        self.set_up = False  # the first good frame sets up; its reference may be None (vision/live/setup.py)
        self.identified = IdentifiedScenes()  # the first settled frame's ids, kept
        self.kept: dict[str, Any] | None = None  # the game kept before a restart, to go on with (resume)
        self.kept_placed: tuple[str, ...] = ()  # ...and the models in it that the players added
        self.kept_off: tuple[dict[str, Any], ...] = ()  # ...and the game's models not on the table it kept
        self.last_photo: npt.NDArray[np.uint8] | None = None  # the frame the current scene was seen in
        self.covered: list[dict[str, Any]] = []  # what the last analysis found covering the table (vision/covered.py)
        self.camera_said: tuple[str, ...] = ()  # what the players were last told is wrong with the camera
        self.refined_said = ""  # the table mapped again from markers back in view: said until the next analysis
        self.unseen: tuple[str, ...] = ()  # the models the tracker knows that the last analysed scene left out

    def resume(
        self, kept: dict[str, Any], placed: Sequence[str] = (), off_table: Sequence[dict[str, Any]] = ()
    ) -> None:
        """The page's game kept before a restart (its current scene; ``placed``: the models in it the players added;
        ``off_table``: the game's models it does not show, as last kept): the first frame analysed goes on with it,
        its ids on the pieces where its models stand (IdentifiedScenes.resume), instead of naming the pieces afresh
        as a new deployment. The players' corrections name models by those ids."""
        if kept.get("models") and self.identified.tracker is None:
            self.kept, self.kept_placed = copy.deepcopy(kept), tuple(placed)
            self.kept_off = tuple(copy.deepcopy(list(off_table)))

    def _go_on(self, found: dict[str, Any]) -> str:
        """What the players are told of the game kept (``resume``), now that the first frame is analysed: gone on
        with where at least half its models stand on a piece the camera found, else another table's, not used."""
        assert self.kept is not None
        kept, self.kept = self.kept, None
        return go_on_with(self.identified, found, kept, self.kept_placed, self.kept_off)

    def use_refiner(self, refiner_path: Path | None) -> None:
        """Read the table with this base refiner from the next frame on (web/refiner_adapting.py); None: the
        detector the feed was given. The empty table's reference stays: it holds no refiner's reading."""
        if refiner_path == self.refiner_path:
            return
        self.detector = (
            self.base_detector if refiner_path is None else make_detector("auto", self.model_path, refiner_path)
        )
        self.refiner_path = refiner_path

    def take_units(self, scene: dict[str, Any]) -> dict[str, str]:
        """The units the players assigned on the page (their corrected scene): models are matched and their moves
        recorded by them, so the rules find each unit's last move under its own name. Returns the models that took
        another's piece, the players having put them there ({model: the model whose piece it took})."""
        return self.identified.take_units(scene)

    def take_off(self, ids: frozenset[str]) -> list[str]:
        """The models the players deleted on the page: those the camera does not see now are forgotten, so no piece
        is taken for one of them again (``IdentifiedScenes.take_off``). Returns the models forgotten."""
        gone = self.identified.take_off(ids)
        self.unseen = tuple(mid for mid in self.unseen if mid not in gone)
        return gone

    def keep_confirmed(self, scene: dict[str, Any], folder: Path, name: str) -> Path | None:
        """The photo and the scene the players confirmed on it: training data for `tablesight adapt`."""
        if self.last_photo is None:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        photo = folder / f"{name}.jpg"
        if not cv2.imwrite(str(photo), self.last_photo, [cv2.IMWRITE_JPEG_QUALITY, 95]):
            raise OSError(f"{photo}: cannot write the confirmed frame there")
        (folder / f"{name}.scene.json").write_text(json.dumps(scene) + "\n", encoding="utf-8")
        if self.lens is not None and not (folder / "lens.json").exists():
            self.lens.save(folder / "lens.json")
        if not (folder / "layout.json").exists():  # adapt calibrates each frame from the markers this table has
            (folder / "layout.json").write_text(json.dumps(self.layout.to_json()) + "\n", encoding="utf-8")
        return photo

    def _status(
        self, message: str, hidden: tuple[int, ...] = (), stale: bool = False, covered: bool = False
    ) -> CameraStatus:
        """``covered``: the table as last analysed is still what the camera shows, and what covered part of it
        then (a hand held still) is said again, and drawn, until the next analysis."""
        seen = tuple(sorted(m.id for m in self.layout.markers if m.id not in hidden))
        boxes = tuple(tuple(c["box_in"]) for c in self.covered) if covered else ()
        if boxes:
            message = "; ".join([message, *(describe(c) for c in self.covered)])
        return CameraStatus(self.name, message, seen, tuple(sorted(hidden)), stale, boxes, self.unseen)

    def next(self) -> tuple[dict[str, Any] | None, CameraStatus]:
        status = self.source.read()
        if status.frame is None:
            return None, self._status(status.message, stale=True)
        calib = self.monitor.update(status.frame)
        if calib.frame is None:
            return None, self._status(calib.message, calib.hidden, stale=True)
        if not self.set_up and self.still is not None and not self.still.update(status.frame):
            return None, self._status(WAITING_TO_SET_UP, calib.hidden)
        self._follow(calib)
        if not self.set_up or calib.state == "recalibrated":
            setup = take_reference(self.detector, status.frame, calib.frame, self.reference)
            self.reference, self.set_up = setup.reference, True
            self.empty_photo = EmptyTablePhoto(status.frame, calib.frame) if setup.empty_table else None
            self.hex_mat = mat_grid(self.game, self.hex_mat, status.frame, calib.frame)
            self.gate = MotionGate()
            if setup.empty_table:  # else the models on it are analysed from the next frame on
                self.gate.update(status.frame)
            told = [f"{setup.message}: {calib.message}", describe_set_up(self.game, self.hex_mat), self.source.note]
            said = "; ".join(filter(None, told))
            return None, self._status(said, calib.hidden)
        gate = self.gate.update(status.frame).state
        if gate == "moving":
            return None, self._status("hands over the table: waiting for it to settle", calib.hidden, calib.stale)
        if gate == "still":  # nothing changed since the last analysis
            return None, self._status(self.refined_said or calib.message, calib.hidden, calib.stale, covered=True)
        looked = self.monitor.look_again(status.frame)  # the table changed: a card lifted off markers the map lacks?
        if looked is not None:
            self._follow(looked)
            calib = looked
        table_frame = calib.frame
        if table_frame is None:  # (a refined report always has its map)
            return None, self._status(calib.message, calib.hidden, stale=True)
        deployment = self.identified.tracker is None  # this frame's models become the game's
        try:
            result, self.reference = analyse_lifting(
                partial(
                    analyze,
                    status.frame,
                    self.layout,
                    None,
                    table_frame,
                    self.lens,
                    self.game,
                    self.players,
                    self.terrain,
                    detector=self.detector,
                    mates_settle_sizes=deployment,  # later frames: the tracker knows the sizes
                    hex_mat=self.hex_mat,
                    find_hex_mat=False,  # found once, at set-up
                ),
                self.empty_photo,
                self.reference,
                status.frame,
                table_frame,
            )
        except CalibrationError as error:
            return None, self._status(f"frame not analysed: {error}", calib.hidden, stale=True)
        self.last_photo = status.frame
        looks = figure_looks(status.frame, table_frame, result.scene["models"])
        resumed = self._go_on(result.scene) if deployment and self.kept is not None else ""
        deployment = self.identified.tracker is None
        empty_top = self.reference.rectified if self.reference is not None else None
        scene, update = self.identified.identify(result.scene, looks, (status.frame, table_frame), empty_top)
        self.unseen = self.identified.unseen(scene)
        self.covered = result.scene["measurement"]["covered"]  # a hand held still, a tape measure left lying
        message = "; ".join(filter(None, [self.refined_said or calib.message, resumed]))
        self.refined_said = ""
        measurement = result.scene["measurement"]
        if deployment:  # alike colours, a coarse photo, unsure sizes: the players are asked to confirm
            message = "; ".join(filter(None, [message, *to_confirm(result.scene)]))
            self.camera_said = camera_faults(measurement)
        else:  # a camera that goes soft or coarse mid-game is told once, and when it is well again
            news, self.camera_said = camera_news(measurement, self.camera_said)
            message = "; ".join(filter(None, [message, news]))
        if update is not None and update.messages:  # not seen, unexplained, uncertain: the players are asked
            message = f"{message}; " + "; ".join(update.messages)
        return scene, self._status(message, calib.hidden, calib.stale, covered=True)

    def _follow(self, calib: MonitorReport) -> None:
        """What the calibration monitor said of this frame, for the places held, the empty-table reference and its
        objective markers (a map refined: markers back in view)."""
        if self.identified.follow_calibration(calib, self.gate):
            self.refined_said = calib.message  # said until the table is analysed again (a hand lifting the card)
            again = read_set_up_again(
                self.empty_photo, self.detector, calib, self.identified, self.game, self.hex_mat, self.hex_mat_given
            )
            if again is not None:
                self.reference, self.hex_mat = again

    def empty_scene(self) -> dict[str, Any]:
        return empty_scene(self.game, self.layout.width_in, self.layout.depth_in)

    def close(self) -> None:
        self.source.close()
