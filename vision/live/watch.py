"""``tablesight watch``: the head-less referee. Frames in, rulings out as they change.

The first settled frame after the set-up is the deployment: its models' ids are the game's, and every
later frame is matched to them (``IdentifiedScenes``). Moves are printed as they are recorded, and what
the tracker cannot reconcile (a model not seen, a piece nobody accounts for, two models that could be
each other) is printed as a desync, asking the players to confirm or correct."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.monitor import CalibrationMonitor, MonitorReport
from vision.analyze import PLAYERS_MODELS, Detector, analyze, make_detector, to_confirm
from vision.camera_quality import camera_faults, camera_news
from vision.covered import describe
from vision.detect_classical import Reference
from vision.hex_mat import describe_set_up, mat_grid
from vision.live.appearance import figure_looks
from vision.live.deployment import deploy, go_on_with
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

if TYPE_CHECKING:
    from tablesight.scene import Scene


@dataclass
class Event:
    kind: str  # "status", "ruling", "move", "desync"
    payload: dict[str, Any]

    def text(self) -> str:
        if self.kind == "ruling":
            p = self.payload
            return f"[{p['verdict'].upper():>9}] {p['question']} - {'; '.join(p['reasons'])}"
        if self.kind == "move":
            p = self.payload
            guess = " (estimated: not seen there)" if p.get("estimated") else ""
            guess += f" (corrected: {p['corrected']})" if p.get("corrected") else ""
            sigma = float(p.get("length_sigma_in", 0.0))
            unsure = f' +/- {sigma:.2f}"' if sigma >= 0.005 else ""  # 1 sigma, from how both ends were measured
            return f'(move) {p["model"]} of {p["unit"]} moved {p["length_in"]:.2f}"{unsure}{guess}'
        return f"({self.kind}) {self.payload.get('message', '')}"

    def json_line(self) -> str:
        return json.dumps({"kind": self.kind, **self.payload})


def watch(
    opener: Callable[[], FrameSource],
    layout: Layout,
    game: str = "focal-point",
    lens: LensModel | None = None,
    players: dict[str, str] | None = None,
    max_frames: int | None = None,
    give_up_after_stale: int | None = 5,
    detector: Detector | None = None,
    hex_mat: dict[str, Any] | None = None,
    stale_wait_s: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    settle_set_up: bool = False,
    deployment: dict[str, Any] | None = None,
    terrain: list[dict[str, Any]] | None = None,
    kept: dict[str, Any] | None = None,
    keep: Callable[[Scene], None] | None = None,
) -> Iterator[Event]:
    """The first good frame is the set-up (calibration and the empty-table reference). ``detector``:
    make_detector's (default 'auto', the shipped networks; adapted ones from ``tablesight adapt``).
    ``hex_mat``: the mat's hex grid (a scene's ``table.hex``) in a game played in hexes; None: found at set-up.
    ``give_up_after_stale``: stale reads in a row after which the source is taken to have ended (a folder or a
    video; None: never, a camera); ``stale_wait_s``: the pause after each, so a camera that drops out is
    waited for through the source's back-off instead of given up on within a millisecond. ``settle_set_up``: a
    live camera's set-up waits for the table to be still (``StillTable``); a recording's first frame is its set-up.
    ``deployment``: the players' units (``vision/live/deployment.py: load_deployment``), laid over the first
    frame analysed; None: each player's models are one lump, named by the camera's ids (the models of a lump
    that moved together are matched as one unit: ``IdentityTracker.moved_blocks``), and no move is judged.
    ``terrain``: the table's pieces (``find-terrain --out``, kinds and heights given): a base on a hill is put on
    its top (``vision.analyze.ground_positions``) and the rulings see the terrain; None: the deployment file's
    terrain, if it has any. ``kept``: the game as an earlier watch kept it (``keep``'s last scene), gone on with
    from the first frame analysed, its ids, units and moves, where its models stand on the table
    (``go_on_with``; before ``deployment``, which lays over only a game not gone on with). ``keep``: given each
    scene analysed, with its ids and moves, to keep the game (``tablesight watch --keep FILE``); a failure to keep
    it is said, and the game goes on."""
    from rules.common import QuestionError
    from rules.profiles import profile_for
    from rules.systems import SYSTEMS
    from rules.table_facts import UnknownThingError, coherency_rulings, engagement_rulings
    from tablesight.scene import Scene, SceneError

    def geometry_rulings(scene: Scene) -> list[Any]:
        # Until the players assign units and rosters, the referee judges what geometry alone decides.
        profile = profile_for(scene.game)
        return coherency_rulings(scene, profile) + engagement_rulings(scene, profile)

    system = SYSTEMS[game]() if game in SYSTEMS else None
    not_judged: set[str] = set()  # units whose moves the rules cannot judge (no move in their profile): said once

    def judge_moves(scene: Scene, units: list[str]) -> Iterator[Event]:
        """The rules' word on each unit's move (move-ok), from where its models stood when it was activated; a
        player's lump of unassigned models is no unit the rules move (``--deployment`` names the units)."""
        if system is None or "move-ok" not in system.questions:
            return
        for unit_id in units:
            if unit_id.endswith(PLAYERS_MODELS):
                continue
            try:
                ruling = system.move_ok(scene, unit_id)
            except (QuestionError, UnknownThingError, KeyError, ValueError) as error:
                if unit_id not in not_judged:
                    not_judged.add(unit_id)
                    yield Event(
                        "status", {"message": f"{unit_id}'s moves are recorded, not judged: {error}", "stale": False}
                    )
                continue
            yield Event("ruling", ruling.to_json())

    if terrain is None and deployment is not None:
        terrain = list(deployment.get("terrain", [])) or None
    source = ResilientSource(opener)
    still = StillTable() if settle_set_up else None
    monitor = CalibrationMonitor(layout, lens)
    gate = MotionGate()
    detector = detector if detector is not None else make_detector("auto")
    reference: Reference | None = None
    empty_photo: EmptyTablePhoto | None = None  # what the reference was taken from, read again on a better map
    hex_mat_given = hex_mat is not None  # (else found on the set-up frame, and found again on a better map)
    set_up = False  # the first good frame sets up; its reference may be None (models on it: vision/live/setup.py)
    identified = IdentifiedScenes()
    # The moves already printed, by id (held here, so no later entry can take an id over): the tracker may
    # take wrong moves back out of its history and make them again, so a count of entries would not do.
    printed: dict[int, dict[str, Any]] = {}
    printed_in: dict[int, float] = {}  # ...and the length each was printed with
    last_desync = ""
    last: dict[str, str] = {}
    last_message = ""
    last_covered = ""
    camera_said: tuple[str, ...] = ()  # what the players were last told is wrong with the camera
    stale_run = 0
    frames = 0

    def said_once(message: str) -> list[Event]:
        """A stale status, unless it was the last thing said (a fault that recurs at every frame)."""
        nonlocal last_message
        if message == last_message:
            return []
        last_message = message
        return [Event("status", {"message": message, "stale": True})]

    def follow(calib: MonitorReport) -> Iterator[Event]:
        """What the calibration monitor said of this frame, for the places held, the moves printed, the empty-table
        reference and its objective markers (a map refined: markers back in view)."""
        nonlocal reference, hex_mat
        if not identified.follow_calibration(calib, gate):
            return
        yield Event("status", {"message": calib.message, "stale": False})
        # The moves printed whose ends were read through the map before: printed again, measured in the new one
        for entry in identified.tracker.history if identified.tracker is not None else []:
            if id(entry) in printed and entry["length_in"] != printed_in[id(entry)]:
                printed_in[id(entry)] = entry["length_in"]
                fields = {k: v for k, v in entry.items() if k != "event"}
                yield Event("move", {**fields, "corrected": "the table mapped from more markers"})
        try:
            again = read_set_up_again(empty_photo, detector, calib, identified, game, hex_mat, hex_mat_given)
        except Exception as error:  # noqa: BLE001 - the reference and grid read through the map before stay
            again = None
            yield from said_once(_unreadable("set-up", error))
        if again is not None:
            reference, hex_mat = again

    try:
        while max_frames is None or frames < max_frames:
            frames += 1
            status = source.read()
            if status.frame is None:
                stale_run += 1
                # Said once, not at each tick of its count-down ("camera lost; reconnecting in 0.5 s", "... 0.2 s").
                if status.message.split(";")[0] != last_message.split(";")[0]:
                    last_message = status.message
                    yield Event("status", {"message": status.message, "stale": True})
                if give_up_after_stale is not None and stale_run >= give_up_after_stale:
                    return
                sleep(stale_wait_s)
                continue
            if stale_run and set_up:
                last_message = "frames from the camera again"
                yield Event("status", {"message": f"{last_message} ({stale_run} reads missed)", "stale": False})
            stale_run = 0
            try:
                calib = monitor.update(status.frame)
            except Exception as error:  # noqa: BLE001 - one frame that cannot be read must not end the game
                yield from said_once(_unreadable("calibration", error))
                continue
            if calib.frame is None:
                if calib.message != last_message:
                    last_message = calib.message
                    yield Event("status", {"message": calib.message, "stale": True})
                continue
            if not set_up and still is not None and not still.update(status.frame):
                yield from said_once(WAITING_TO_SET_UP)
                continue
            yield from follow(calib)
            if not set_up or calib.state == "recalibrated":
                try:
                    setup = take_reference(detector, status.frame, calib.frame, reference)
                    hex_mat = mat_grid(game, hex_mat, status.frame, calib.frame)
                except Exception as error:  # noqa: BLE001 - set up from a later frame
                    yield from said_once(_unreadable("set-up", error))
                    continue
                reference, set_up = setup.reference, True
                empty_photo = EmptyTablePhoto(status.frame, calib.frame) if setup.empty_table else None
                gate = MotionGate()
                if setup.empty_table:  # else the models on it are analysed from the next frame on
                    gate.update(status.frame)
                said = [f"{setup.message}: {calib.message}", describe_set_up(game, hex_mat), source.note]
                message = "; ".join(filter(None, said))
                yield Event("status", {"message": message, "stale": False})
                continue
            decision = gate.update(status.frame)
            if decision.state != "settled":
                continue
            looked = monitor.look_again(status.frame)  # the table changed: a card lifted off markers the map lacks?
            if looked is not None:
                yield from follow(looked)
                calib = looked
            table_frame = calib.frame
            if table_frame is None:  # (a refined report always has its map)
                continue
            deploying = identified.tracker is None  # later frames: the tracker knows the sizes (analyze)
            try:
                result, reference = analyse_lifting(
                    partial(
                        analyze,
                        status.frame,
                        layout,
                        None,
                        table_frame,
                        lens,
                        game,
                        players,
                        terrain,
                        detector=detector,
                        mates_settle_sizes=deploying,
                        hex_mat=hex_mat,
                        find_hex_mat=False,  # found once, at set-up
                    ),
                    empty_photo,
                    reference,
                    status.frame,
                    table_frame,
                )
            except Exception as error:  # noqa: BLE001 - the last scene stays; the next settled frame is read
                yield from said_once(_unreadable("analysis", error))
                continue
            if deploying:  # alike colours, a coarse photo, unsure sizes: the players are asked to confirm
                for message in to_confirm(result.scene):
                    yield Event("status", {"message": message, "stale": False})
                camera_said = camera_faults(result.scene["measurement"])
            else:  # a camera that goes soft or coarse mid-game is told once, and when it is well again
                news, camera_said = camera_news(result.scene["measurement"], camera_said)
                if news:
                    yield Event("status", {"message": news, "stale": False})
            covered = "; ".join(describe(c) for c in result.scene["measurement"]["covered"])
            if covered != last_covered:  # a hand held still over the table, a tape measure left on it; and gone again
                yield Event("status", {"message": covered or "nothing covers the table any more", "stale": False})
                last_covered = covered
            looks = figure_looks(status.frame, table_frame, result.scene["models"])
            if deploying and kept is not None:  # a restart: the game kept goes on, where its models stand
                yield Event("status", {"message": go_on_with(identified, result.scene, kept), "stale": False})
                kept = None
            if deployment is not None and identified.tracker is None:  # the players' units on the first frame
                found, notes = deploy(identified, result.scene, deployment, looks)
                update = None
                for note in notes:
                    yield Event("status", {"message": note, "stale": False})
            else:
                empty_top = reference.rectified if reference is not None else None
                found, update = identified.identify(result.scene, looks, (status.frame, table_frame), empty_top)
            moved_now: list[str] = []  # units with a move printed at this frame
            if update is not None and identified.tracker is not None:
                for entry in identified.tracker.history:
                    if entry.get("event") == "move" and id(entry) not in printed:
                        printed[id(entry)] = entry
                        printed_in[id(entry)] = entry["length_in"]
                        moved_now += [entry["unit"]] if entry["unit"] not in moved_now else []
                        yield Event("move", {k: v for k, v in entry.items() if k != "event"})
                desync = "; ".join(update.messages)
                if desync != last_desync:
                    if desync:
                        yield Event("desync", {"message": desync})
                    else:
                        yield Event("status", {"message": "every model accounted for again", "stale": False})
                    last_desync = desync
            try:
                scene = Scene.from_dict(found, "live")
            except SceneError as error:
                yield Event("desync", {"message": f"the frame could not be turned into a scene: {error}"})
                continue
            if keep is not None:
                try:
                    keep(scene)
                except OSError as error:  # a full disk, a folder gone: the game goes on, unkept, and says so
                    yield from said_once(f"the game could not be kept: {error}")
            rulings = geometry_rulings(scene)
            now = {r.question: r.verdict.value for r in rulings}
            for ruling in rulings:
                if last.get(ruling.question) != ruling.verdict.value:
                    yield Event("ruling", ruling.to_json())
            last = now
            yield from judge_moves(scene, moved_now)
    finally:
        source.close()  # a camera's grabbing thread stops, and the camera is let go


def _unreadable(stage: str, error: Exception) -> str:
    """What to say of a frame the pipeline failed on; the game goes on from the next frame with the last scene."""
    return f"a frame could not be read ({stage}: {error}); the last scene stays"
