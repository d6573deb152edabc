"""The live table: camera faults never kill the process, motion gating, identity across moves."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.live.motion import MotionGate, light_gain, light_gains_by_row
from vision.live.sources import FolderSource, IteratorSource, ResilientSource, looks_like_a_frame, open_source
from vision.live.tracker import LOST_SIGMA_IN, IdentityTracker, Tracked

FRAME = (np.random.default_rng(0).integers(0, 255, (120, 160, 3))).astype(np.uint8)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FlakyCamera:
    """Returns a script of frames, Nones (stalls) and errors."""

    name = "flaky"

    def __init__(self, script: list[object]) -> None:
        self.script = list(script)

    def read(self) -> object:
        item = self.script.pop(0) if self.script else None
        if isinstance(item, Exception):
            raise item
        return item

    def close(self) -> None:
        pass


def test_camera_faults_are_survived_and_reported_stale() -> None:
    clock = FakeClock()
    cameras = [
        FlakyCamera([FRAME, None]),  # stalls after one frame
        FlakyCamera([RuntimeError("USB unplugged")]),
        FlakyCamera([np.zeros((120, 160, 3), np.uint8), np.zeros((10, 10, 3), np.uint8), "garbage", FRAME, FRAME]),
    ]
    opened: list[int] = []

    def opener() -> FlakyCamera:
        if not cameras:
            raise OSError("no camera")
        opened.append(1)
        return cameras.pop(0)

    source = ResilientSource(opener, clock=clock)
    first = source.read()
    assert first.frame is not None and not first.stale
    stalled = source.read()
    assert stalled.frame is None and stalled.stale and "last good scene" in stalled.message
    waiting = source.read()  # within the back-off: no reconnect attempt yet
    assert waiting.stale and "reconnecting in" in waiting.message and len(opened) == 1
    clock.t += 1.0
    error = source.read()
    assert error.stale and "USB unplugged" in error.message
    clock.t += 5.0
    results = [source.read() for _ in range(5)]
    assert [r.frame is not None for r in results] == [False, False, False, True, True]
    assert all(r.stale for r in results[:3])
    for _ in range(3):
        clock.t += 20.0
        gone = source.read()
        assert gone.stale  # the source ends for good: still no exception


def test_back_off_grows_and_is_capped() -> None:
    clock = FakeClock()
    source = ResilientSource(lambda: FlakyCamera([]), max_backoff_s=4.0, clock=clock)
    waits = []
    for _ in range(6):
        status = source.read()
        assert status.stale
        waits.append(source._retry_at - clock.t)
        clock.t = source._retry_at
    assert waits == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_garbage_frames_are_recognised() -> None:
    assert looks_like_a_frame(FRAME, None)
    assert not looks_like_a_frame(None, None)
    assert not looks_like_a_frame(np.zeros((0, 0), np.uint8), None)
    assert not looks_like_a_frame(np.full((120, 160, 3), 7, np.uint8), None)
    assert not looks_like_a_frame(FRAME[:60], FRAME.shape)


def test_sources_by_name(tmp_path: object) -> None:
    import cv2

    folder = tmp_path / "frames"  # type: ignore[operator]
    folder.mkdir()
    for k in range(3):
        cv2.imwrite(str(folder / f"{k:03d}.png"), FRAME)
    source = open_source(str(folder))
    assert isinstance(source, FolderSource)
    assert [source.read() is not None for _ in range(4)] == [True, True, True, False]
    assert IteratorSource(iter([FRAME])).read() is not None
    with pytest.raises(ValueError, match="'no-such-thing': no such file or folder .*, nor a camera index or URL"):
        open_source("no-such-thing")


def test_a_recording_with_no_frame_to_read_is_refused_at_once_naming_why(tmp_path: Path) -> None:
    """`watch` given an empty folder, a photo that is no image or a video OpenCV cannot open said "the recording has
    ended" or "camera lost; reconnecting" before anything was seen, for ever: a recording is what it is, so it is
    refused when opened, saying what is wrong with it."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("round 1", encoding="utf-8")
    (tmp_path / "table.jpg").write_text("not a photo", encoding="utf-8")
    (tmp_path / "game.mp4").write_bytes(b"\x00" * 2048)
    for name, why in (
        ("empty", r"a folder with no photos in it \(.jpg"),
        ("table.jpg", r"not an image tablesight can read \(not PNG/JPEG"),
        ("game.mp4", r"not a video tablesight can read"),
    ):
        with pytest.raises(ValueError, match=f"{name}: {why}"):
            open_source(str(tmp_path / name))


def test_motion_gate_holds_while_hands_move_and_updates_where_things_changed() -> None:
    table = np.full((540, 960, 3), 120, np.uint8)
    table[::40] = 100  # some texture
    gate = MotionGate()
    assert gate.update(table).state == "settled"  # the first frame is analysed
    assert [gate.update(table).state for _ in range(5)] == ["still"] * 5
    hand = table.copy()
    hand[200:400, 300:600] = (90, 140, 200)
    states = [gate.update(hand).state]
    moved = table.copy()
    moved[100:130, 700:730] = 30  # a model now stands here
    states += [gate.update(moved).state for _ in range(4)]
    assert states[:2] == ["moving", "moving"]  # hand in, hand out
    assert "settled" in states
    settled = next(k for k, s in enumerate(states) if s == "settled")
    assert all(s == "still" for s in states[2:settled])  # waits until the table is still
    decision = MotionGate()
    decision.update(table)
    for _ in range(3):
        last = decision.update(moved)
    box = [d for d in (decision.update(moved),) if d.state == "settled"] or [last]
    assert box[0].changed_box is not None
    x, y, w, h = box[0].changed_box
    assert x <= 700 and y <= 100 and x + w >= 730 and y + h >= 130 and w < 200


def test_motion_gate_sees_one_small_base_moved_on_a_big_table() -> None:
    # A 25 mm base on a 44"x60" table at 1080p is ~18 px across; moving it changes ~0.03 % of the frame
    # (the gate used to need 0.05 % and missed small units moved on big tables).
    rng = np.random.default_rng(3)
    mat = np.full((1080, 1920, 3), 120, np.uint8)

    def frame_with_base_at(x: int) -> np.ndarray:
        img = mat.copy()
        cv2.circle(img, (x, 500), 9, (80, 80, 80), -1)  # a dark-ish base on a mid-grey mat
        return np.clip(img + rng.normal(0, 1.5, img.shape), 0, 255).astype(np.uint8)

    gate = MotionGate()
    for _ in range(5):
        gate.update(frame_with_base_at(900))
    states = [gate.update(frame_with_base_at(1000)).state for _ in range(5)]
    assert "settled" in states
    decision = MotionGate()
    for _ in range(5):
        decision.update(frame_with_base_at(900))
    quiet = [decision.update(frame_with_base_at(900)).state for _ in range(5)]
    assert "settled" not in quiet and "moving" not in quiet  # sensor noise alone is not motion


def test_motion_gate_sees_a_model_close_to_the_mats_colours_moved_yet_not_a_noisy_camera() -> None:
    """A model 16 levels from the mat in every channel, moved: at 18 levels of change the gate saw 0.007 % of its
    copy change and analysed nothing (page game seed 101, Grinding-Annihilation: a model shown 5.2" from where it
    stood for a whole activation). A still table through a noisy camera (8 levels, 1 sigma) is still no change."""
    rng = np.random.default_rng(5)
    mat = np.full((1080, 1920, 3), (70, 90, 80), np.uint8)

    def frame_with_model_at(x: int, noise: float = 1.5) -> np.ndarray:
        img = mat.copy()
        cv2.circle(img, (x, 500), 12, (86, 106, 96), -1)
        return np.clip(img + rng.normal(0, noise, img.shape), 0, 255).astype(np.uint8)

    gate = MotionGate()
    for _ in range(5):
        gate.update(frame_with_model_at(900))
    assert "settled" in [gate.update(frame_with_model_at(1060)).state for _ in range(5)]
    noisy = MotionGate()
    for _ in range(5):
        noisy.update(frame_with_model_at(900, noise=8.0))
    assert [noisy.update(frame_with_model_at(900, noise=8.0)).state for _ in range(8)] == ["still"] * 8


def test_motion_gate_sees_a_model_that_differs_from_the_mat_in_hue_not_brightness() -> None:
    # A green mat and a red-and-blue figure as bright as it: in grey the move changed under 0.01 % of the gate's
    # copy, so it went unanalysed until the next unit moved, and the tracker then had two units moved at once to
    # untangle (the scripted game a model at a time, seed 45: two of u3's models swapped for the rest of the game).
    rng = np.random.default_rng(4)
    mat = np.full((1080, 1920, 3), (60, 140, 60), np.uint8)  # BGR, grey 107

    def frame_with_model_at(x: int) -> np.ndarray:
        img = mat.copy()
        cv2.circle(img, (x, 500), 9, (200, 100, 100), -1)  # grey 111: 4 levels from the mat's
        return np.clip(img + rng.normal(0, 1.5, img.shape), 0, 255).astype(np.uint8)

    assert abs(int(cv2.cvtColor(frame_with_model_at(900), cv2.COLOR_BGR2GRAY)[500, 900]) - 107) < 8
    gate = MotionGate()
    for _ in range(5):
        gate.update(frame_with_model_at(900))
    states = [gate.update(frame_with_model_at(1000)).state for _ in range(5)]
    assert "settled" in states and "moving" not in states  # no hand seen; the change is found once still
    quiet = [gate.update(frame_with_model_at(1000)).state for _ in range(5)]
    assert set(quiet) == {"still"}  # analysed once, then still


def test_motion_gate_divides_out_a_flickering_light_yet_sees_a_model_moved_under_it() -> None:
    """A light (or a webcam's exposure) 5-8 % brighter or darker from frame to frame changes a bright mat by 10-15
    levels everywhere: without dividing it out the gate took it for hands over the table and analysed a still table again
    and again (`eval_gate.py --flicker 0.03`). With it, a still table stays still, and a model moved is seen."""
    rng = np.random.default_rng(6)
    mat = np.full((1080, 1920, 3), (150, 190, 170), np.uint8)
    mat[:, :960] = (110, 150, 130)  # lit unevenly: brighter on the right

    def frame_with_model_at(x: int, gain: float) -> np.ndarray:
        img = mat.copy()
        cv2.circle(img, (x, 500), 12, (60, 60, 60), -1)
        return np.clip(img * gain + rng.normal(0, 1.5, img.shape), 0, 255).astype(np.uint8)

    gains = [1.0, 1.07, 0.93, 1.05, 0.95, 1.0, 1.08, 0.94, 1.0, 1.0, 1.0, 1.06]
    as_is = MotionGate(normalise_light=False)
    as_is.update(frame_with_model_at(1200, 1.0))
    assert "moving" in [as_is.update(frame_with_model_at(1200, g)).state for g in gains]  # the flaw it mends
    gate = MotionGate()
    gate.update(frame_with_model_at(1200, 1.0))
    assert [gate.update(frame_with_model_at(1200, g)).state for g in gains] == ["still"] * len(gains)
    assert "settled" in [gate.update(frame_with_model_at(1400, g)).state for g in gains]
    grey = [cv2.cvtColor(frame_with_model_at(x, g), cv2.COLOR_BGR2GRAY) for x, g in ((1400, 1.04), (1200, 1.0))]
    assert abs(light_gain(grey[0], grey[1]) - 1.04) < 0.01  # the moved model does not sway it


def test_motion_gate_divides_out_bands_of_light_yet_sees_a_model_moved_under_them() -> None:
    """A webcam reads its rows one after another: under a light flickering at twice the mains' rate each frame shows
    bands lit 4 % brighter and darker, moving from frame to frame. The light read over the whole frame cannot divide
    them out (a bright mat's band 8-10 levels off, both ways at once): the gate held the table as moving. Read band
    by band, a still table stays still and a model moved is seen."""
    rng = np.random.default_rng(7)
    mat = np.full((1080, 1920, 3), (150, 190, 170), np.uint8)
    mat[:, :960] = (110, 150, 130)  # lit unevenly
    rows = np.arange(1080)[:, None, None]

    def frame_with_model_at(x: int, phase: float) -> np.ndarray:
        img = mat.copy()
        cv2.circle(img, (x, 500), 12, (60, 60, 60), -1)
        bands = 1.0 + 0.04 * np.sin(2 * np.pi * rows * 3.3 / 1080 + phase)
        return np.clip(img * bands + rng.normal(0, 1.5, img.shape), 0, 255).astype(np.uint8)

    phases = [float(p) for p in rng.uniform(0, 2 * np.pi, 12)]
    gate = MotionGate()
    gate.update(frame_with_model_at(1200, 0.0))
    assert [gate.update(frame_with_model_at(1200, p)).state for p in phases] == ["still"] * len(phases)
    assert "settled" in [gate.update(frame_with_model_at(1400, p)).state for p in phases]
    grey = [cv2.cvtColor(frame_with_model_at(x, p), cv2.COLOR_BGR2GRAY) for x, p in ((1400, 1.0), (1200, 0.0))]
    small = [cv2.resize(g, (640, 360), interpolation=cv2.INTER_AREA) for g in grey]
    ratio = (1 + 0.04 * np.sin(2 * np.pi * np.arange(360) * 3.3 / 360 + 1.0)) / (
        1 + 0.04 * np.sin(2 * np.pi * np.arange(360) * 3.3 / 360)
    )
    assert np.abs(light_gains_by_row(small[0], small[1]) - ratio).max() < 0.01  # the moved model does not sway it


def test_motion_gate_divides_out_a_wandering_white_balance_yet_sees_a_model_moved() -> None:
    """A webcam's white balance scales its colour channels apart, a few % each, by itself: a bright mat's channel 8-12
    levels off with the light unchanged in grey. The gate took a still table for changed (`eval_gate.py
    --white-balance 0.02`: 8 analyses for nothing in 112 still frames). Each channel's scale divided out, a still table
    stays still and a model moved is seen."""
    rng = np.random.default_rng(8)
    mat = np.full((1080, 1920, 3), (150, 200, 170), np.uint8)
    mat[:, :960] = (110, 150, 130)

    def frame_with_model_at(x: int, balance: tuple[float, float, float]) -> np.ndarray:
        img = mat.copy()
        cv2.circle(img, (x, 500), 12, (60, 60, 60), -1)
        return np.clip(img * np.array(balance) + rng.normal(0, 1.5, img.shape), 0, 255).astype(np.uint8)

    balances = [(1.0, 1.0, 1.0), (1.06, 0.96, 1.0), (0.95, 1.0, 1.05), (1.0, 1.07, 0.94), (1.05, 1.0, 0.95)]
    as_grey_only = MotionGate()
    as_grey_only._balanced_as_now = lambda image, now: (image, False)  # type: ignore[method-assign]
    as_grey_only.update(frame_with_model_at(1200, balances[0]))
    assert "settled" in [as_grey_only.update(frame_with_model_at(1200, b)).state for b in balances * 2]
    gate = MotionGate()
    gate.update(frame_with_model_at(1200, balances[0]))
    assert [gate.update(frame_with_model_at(1200, b)).state for b in balances * 2] == ["still"] * 10
    assert "settled" in [gate.update(frame_with_model_at(1400, b)).state for b in balances * 2]


SCENE = {
    "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
    "models": [
        {"id": "a1", "unit": "a", "base": "32", "x": 5.0, "y": 5.0},
        {"id": "a2", "unit": "a", "base": "32", "x": 6.5, "y": 5.0},
        {"id": "b1", "unit": "b", "base": "32", "x": 15.0, "y": 15.0},
        {"id": "b2", "unit": "b", "base": "25", "x": 16.5, "y": 15.0},
    ],
}


def dets(positions: dict[str, tuple[float, float]]) -> list[dict[str, object]]:
    base = {m["id"]: m["base"] for m in SCENE["models"]}
    owner = {"a1": "red", "a2": "red", "b1": "blue", "b2": "blue"}
    return [{"x": x, "y": y, "base": base[k], "player": owner[k]} for k, (x, y) in positions.items()]


def piece(xy: tuple[float, float], base: str, player: str = "red") -> dict[str, Any]:
    """A piece the detector read at ``xy`` (inches), of ``base`` in ``player``'s colour."""
    return {"x": xy[0], "y": xy[1], "base": base, "player": player}


def test_identity_kept_and_moves_recorded() -> None:
    tracker = IdentityTracker.from_scene(SCENE)
    update = tracker.update(dets({"a1": (5.0, 5.05), "a2": (6.5, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)}))
    assert update.moves == () and not update.desync
    # Unit a advances 4" (activated); b stays.
    update = tracker.update(
        dets({"a1": (9.0, 5.0), "a2": (10.5, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)}), active_unit="a"
    )
    assert {m.model: round(m.length_in, 3) for m in update.moves} == {"a1": 4.0, "a2": 4.0}
    assert tracker.models["a1"].x == 9.0 and tracker.history[-1]["length_in"] == 4.0


def test_a_model_nudged_less_than_the_jitter_allowance_is_moved_and_recorded() -> None:
    """Affinity: Focal Point, Coherency: models must stay within 2" of one in their formation, so players nudge a
    model a tenth or two of an inch to keep it. The tracker took any model read within STAY_IN (0.25") of where it
    stood as still, and kept it there: after the nudge its rulings measured from where it had been, surely (a scratch
    game of random moves, /tmp/s75/trackid.py: 113 of 25,272 model-updates off by 0.2" or more). A sure read beyond
    NUDGE_IN is a move now; a still base's re-read (0.02-0.04" at p99) and a read unsure by more than a third of the
    offset are not."""
    tracker = IdentityTracker.from_scene(SCENE)
    still = tracker.update(dets({"a1": (5.03, 5.0), "a2": (6.5, 4.97), "b1": (15.0, 15.0), "b2": (16.5, 15.04)}))
    assert still.moves == () and (tracker.models["a1"].x, tracker.models["a2"].y) == (5.0, 5.0)
    # Unit a nudged 0.15" (told it is activated, and not told): each way the move is recorded and the places kept.
    for told in ("a", None):
        tracker = IdentityTracker.from_scene(SCENE)
        update = tracker.update(
            dets({"a1": (5.15, 5.0), "a2": (6.5, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)}), active_unit=told
        )
        assert [(m.model, round(m.length_in, 3)) for m in update.moves] == [("a1", 0.15)], told
        assert (tracker.models["a1"].x, tracker.models["a1"].y) == (5.15, 5.0)
        assert tracker.history[-1]["model"] == "a1" and tracker.history[-1]["length_in"] == 0.15
    # A read as far off but unsure (its base partly hidden: sigma 0.1") is no nudge: the model stays.
    tracker = IdentityTracker.from_scene(SCENE)
    unsure = dets({"a1": (5.15, 5.0), "a2": (6.5, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)})
    unsure[0]["sigma_in"] = 0.1
    assert tracker.update(unsure, active_unit="a").moves == () and tracker.models["a1"].x == 5.0
    # While another unit is activated, a model of unit b keeps its place however its piece is read (the rules move
    # one unit at a time; a piece within its own base is its own).
    tracker = IdentityTracker.from_scene(SCENE)
    update = tracker.update(
        dets({"a1": (9.0, 5.0), "a2": (10.5, 5.0), "b1": (15.15, 15.0), "b2": (16.5, 15.0)}), active_unit="a"
    )
    assert sorted(m.model for m in update.moves) == ["a1", "a2"] and tracker.models["b1"].x == 15.0


def test_places_read_through_a_map_from_fewer_markers_are_remapped_when_the_markers_are_back() -> None:
    """A camera knocked while a card lay on a marker is mapped from the markers in view (calibration/monitor.py),
    off by up to 0.24" from two. When the card is lifted the table is mapped from them all again ("refined"): the
    places read through the map from fewer are mapped through the new one, those read before the knock (right: the
    table did not move) are not. Before, nothing was remapped: a still model read through the new map was taken
    as nudged 0.18" (Affinity: Focal Point, Movement measures a move from where the model stood), and a move begun
    under the one map and ended under the other was measured half in each."""
    from vision.live.identified import IdentifiedScenes

    def read(places: dict[str, tuple[float, float]], off_per_in: float) -> dict[str, Any]:
        """The scene analysed through a map whose x is off by ``off_per_in`` times y (0: the right map)."""
        models = [
            {**m, "x": places[m["id"]][0] + off_per_in * places[m["id"]][1], "y": places[m["id"]][1]}
            for m in SCENE["models"]
        ]
        return {**copy.deepcopy(SCENE), "models": models}

    def fewer_to_full(xy: tuple[float, float]) -> tuple[float, float]:
        return xy[0] - 0.012 * xy[1], xy[1]

    def flat(places: dict[str, tuple[float, float]]) -> list[float]:
        return [v for mid in sorted(places) for v in places[mid]]

    deployed = {m["id"]: (m["x"], m["y"]) for m in SCENE["models"]}
    moved = {**deployed, "b1": (18.0, 15.0), "b2": (19.5, 15.0)}  # unit b moved 3" while the card lay there
    for remapped in (True, False):
        identified = IdentifiedScenes()
        identified.identify(read(deployed, 0.0))
        identified.recalibrated()  # knocked: the map from fewer markers from now on
        _, update = identified.identify(read(moved, 0.012))
        assert update is not None and sorted(m.model for m in update.moves) == ["b1", "b2"]
        if remapped:
            assert identified.refine_map(fewer_to_full) == 2  # the card lifted: b's places read since, not a's
        _, update = identified.identify(read(moved, 0.0))
        assert update is not None and identified.tracker is not None
        if not remapped:  # what it did before
            assert sorted(m.model for m in update.moves) == ["b1", "b2"]
            continue
        assert update.moves == ()
        assert flat(identified.tracker.places()) == pytest.approx(flat(moved))
        moves = identified.tracker.history
        assert [(e["model"], e["from"], e["to"], e["length_in"]) for e in moves] == [
            ("b1", [15.0, 15.0], pytest.approx([18.0, 15.0]), pytest.approx(3.0)),
            ("b2", [16.5, 15.0], pytest.approx([19.5, 15.0]), pytest.approx(3.0)),
        ]
        assert identified.tracker.activations["b"]["from"] == {"b1": [15.0, 15.0], "b2": [16.5, 15.0]}
        # Mapped once: a marker back later maps nothing again.
        assert identified.refine_map(fewer_to_full) == 0 and flat(identified.tracker.places()) == pytest.approx(
            flat(moved)
        )


def test_a_place_mapped_to_a_better_map_is_read_again_through_it_once() -> None:
    """A place read through a map from three markers (a card on the fourth) and mapped to the map from all four when
    the card is lifted is that map's guess at it: the base's centre was found in a view rectified through the old map.
    A GA page game (seed 115, the card lifted before activation 6) kept u5m1 0.053" off where it stood until it
    moved at activation 13, its move's start (Grinding-Annihilation, Movement: measured from where it stood). Read
    again through the better map, still, that reading is its place: once, at the next update; no move."""
    from vision.live.identified import IdentifiedScenes

    def read(off_in: float, b1_off_in: float = 0.0) -> dict[str, Any]:
        """SCENE read ``off_in`` off along x (through a map that far off), b1 ``b1_off_in`` more."""
        models = [{**m, "x": m["x"] + off_in + (b1_off_in if m["id"] == "b1" else 0.0)} for m in SCENE["models"]]
        return {**copy.deepcopy(SCENE), "models": models}

    identified = IdentifiedScenes()
    identified.identify(read(0.08))  # set up with the card on a marker: the map from three, 0.08" off here
    identified.identify(read(0.08))
    assert identified.refine_map(lambda xy: (xy[0] - 0.03, xy[1])) == 4  # the mapping's guess: 0.05" off still
    _, update = identified.identify(read(0.0))  # read again through the new map: where they stand
    assert update is not None and update.moves == ()
    places = identified.tracker.places() if identified.tracker else {}
    assert places["b1"] == pytest.approx((15.0, 15.0)) and places["a1"] == pytest.approx((5.0, 5.0))
    _, update = identified.identify(read(0.0, 0.06))  # from then on a still model's place is kept, read as it may be
    assert update is not None and update.moves == ()
    assert identified.tracker is not None and identified.tracker.places()["b1"] == pytest.approx((15.0, 15.0))


def test_vanished_and_unexplained_pieces_are_a_desync() -> None:
    tracker = IdentityTracker.from_scene(SCENE)
    update = tracker.update(
        dets({"a1": (5.0, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)})
        + [{"x": 20.0, "y": 3.0, "base": "60x35", "player": "red"}]
    )
    assert update.desync
    assert update.vanished == ("a2",) and update.unexplained == (3,)
    assert any("not seen: a2" in m for m in update.messages)
    quiet = IdentityTracker.from_scene(SCENE).update(
        dets({"a1": (5.0, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)}), hidden={"a2"}
    )
    assert not quiet.vanished  # known to be under a hand: not a desync


ROW = {
    "format": "tablesight-scene/1",
    "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
    "models": [{"id": f"a{k}", "unit": "a", "base": "32", "x": 5.0 + 1.5 * k, "y": 5.0} for k in range(1, 5)]
    + [{"id": f"b{k}", "unit": "b", "base": "32", "x": 5.0 + 1.5 * k, "y": 8.0} for k in range(1, 5)],
}


def row_dets(shift_in: float, skip: frozenset[str] = frozenset(), **misread: str) -> list[dict[str, object]]:
    """Unit a moved ``shift_in`` along x, unit b where it was; ``misread``: id -> the size the camera read."""
    out = []
    for m in ROW["models"]:
        if m["id"] in skip:
            continue
        x = m["x"] + (shift_in if m["unit"] == "a" else 0.0)
        player = "red" if m["unit"] == "a" else "blue"
        out.append({"x": x, "y": m["y"], "base": misread.get(m["id"], m["base"]), "player": player, "id": m["id"]})
    return out


# ROW and a third unit, c: three blue models standing 3" behind unit b, bases alike
BEHIND = [{"id": f"c{k}", "unit": "c", "base": "32", "x": 5.0 + 1.5 * k, "y": 11.0} for k in range(1, 4)]
THREE_ROWS = {**ROW, "units": [*ROW["units"], {"id": "c", "player": "blue"}], "models": [*ROW["models"], *BEHIND]}


def three_rows_dets(shift_in: float, skip: frozenset[str] = frozenset()) -> list[dict[str, object]]:
    """``row_dets`` and unit c's pieces, where it stands."""
    return row_dets(shift_in, skip) + [{**m, "player": "blue"} for m in BEHIND if m["id"] not in skip]


def test_a_unit_moved_less_than_its_spacing_keeps_every_identity() -> None:
    # Unit a slides 1.4" along its own row (bases 1.5" apart): each model now stands 0.1" from where its
    # neighbour stood. Nearest-first matching would swap every id; the unit's common translation does not.
    tracker = IdentityTracker.from_scene(ROW)
    dets_ = row_dets(1.4)
    update = tracker.update(dets_, active_unit="a")
    assert not update.desync
    for m in ROW["models"]:
        want = m["x"] + (1.4 if m["unit"] == "a" else 0.0)
        assert tracker.models[m["id"]].x == pytest.approx(want)
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]
    assert all(mv.length_in == pytest.approx(1.4) for mv in update.moves)


def test_not_told_which_unit_moved_the_frame_shows_it_and_every_identity_is_kept() -> None:
    # The page and `watch` are not told which unit the players activated. The rules move one unit at a time
    # (Focal Point, Turn Structure: "Players alternate activating one formation at a time"), so the frame
    # itself says which: unit a's rear model has no piece under it any more. Slid 1.4" along its own row,
    # a is read as one block, not as its rear model leapfrogging 6" while the rest stand in their mates'
    # places (the same pieces, all accounted for, but 6" of movement against 4 x 1.4").
    tracker = IdentityTracker.from_scene(ROW)
    assert tracker.moved_units(row_dets(1.4)) == ["a"]
    update = tracker.update(row_dets(1.4))
    assert not update.desync
    for m in ROW["models"]:
        assert tracker.models[m["id"]].x == pytest.approx(m["x"] + (1.4 if m["unit"] == "a" else 0.0))
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]
    assert tracker.activations["a"]["from"]["a1"] == [6.5, 5.0]


def test_not_told_a_unit_moved_a_model_at_a_time_keeps_the_models_that_stayed() -> None:
    # Read a model at a time where that accounts for more: a4 alone moved 3" forward, a1-a3 stood still.
    tracker = IdentityTracker.from_scene(ROW)
    dets_ = row_dets(0.0)
    dets_[3] = {**dets_[3], "y": 2.0}
    update = tracker.update(dets_)
    assert [mv.model for mv in update.moves] == ["a4"] and update.moves[0].length_in == pytest.approx(3.0)
    assert not update.desync


def test_not_told_a_model_of_another_unit_missed_this_frame_stays_where_it_was() -> None:
    # Unit a slides 1.4" while the detector misses b3 this frame. Both units show a model with no piece
    # under it; a's reading accounts for every piece but b3's, so b is still (the rules move one unit at a
    # time): b3 is asked about, not dragged along some translation of b's, and b's others keep their places.
    tracker = IdentityTracker.from_scene(ROW)
    dets_ = row_dets(1.4, skip=frozenset({"b3"}))
    for d in dets_:
        if d["id"] in ("b1", "b2", "b4"):
            d["x"] = float(d["x"]) + 0.3  # b's pieces measured 0.3" off (a crowd): still b's, within their bases
    assert tracker.moved_units(dets_) == ["a", "b"]  # a's rear model, and b3
    update = tracker.update(dets_)
    assert update.vanished == ("b3",) and not update.unexplained
    for m in ROW["models"]:
        assert tracker.models[m["id"]].x == pytest.approx(m["x"] + (1.4 if m["unit"] == "a" else 0.0))
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]


def test_the_players_units_replace_each_players_placeholder_unit() -> None:
    # Before the players assign units, all of a player's models are one placeholder unit (vision/analyze.py):
    # no unit the rules move one at a time, so the frame is not read as one unit's move. Once the page hands
    # the tracker the players' units, moves are recorded (and judged) under those units' names.
    from vision.live.identified import IdentifiedScenes

    def analysed(shift_in: float) -> dict[str, object]:
        return {
            "format": "tablesight-scene/1",
            "game": "focal-point",
            "units": [{"id": "red-found", "player": "red"}, {"id": "blue-found", "player": "blue"}],
            "models": [
                {"id": d["id"], "unit": f"{d['player']}-found", "base": "32", "x": d["x"], "y": d["y"]}
                for d in row_dets(shift_in)
            ],
        }

    identified = IdentifiedScenes()
    identified.identify(analysed(0.0))
    assert identified.tracker is not None and identified.tracker.placeholder_units == {"red-found", "blue-found"}
    confirmed = analysed(0.0)
    confirmed["units"] = [{"id": "lancers", "player": "red"}, {"id": "wardens", "player": "blue"}]
    for m in confirmed["models"]:  # type: ignore[attr-defined]
        m["unit"] = "lancers" if m["id"].startswith("a") else "wardens"
    identified.take_units(confirmed)
    assert not identified.tracker.placeholder_units and identified.tracker.models["a1"].unit == "lancers"
    out, update = identified.identify(analysed(1.4))
    assert update is not None and sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]
    moves = [h for h in out["history"] if h["event"] == "move"]
    assert [h["unit"] for h in moves] == ["lancers"] and moves[0]["from"]["a1"] == [6.5, 5.0]


def test_a_model_missed_while_its_players_placeholder_unit_moves_is_not_dragged_along() -> None:
    # Before the players assign units, all red models are one placeholder unit. Unit a (red) moves 4"; c1,
    # a red model of another real unit 10" away, is missed this frame. It was dragged 4" along with a (the
    # placeholder's translation) and its "move" recorded; it now stays where it was seen, and is asked about.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "red-found", "player": "red"}, {"id": "blue-found", "player": "blue"}],
        "models": [{**m, "unit": "red-found" if m["unit"] == "a" else "blue-found"} for m in ROW["models"]]
        + [{"id": "c1", "unit": "red-found", "base": "32", "x": 20.0, "y": 15.0}],
    }
    tracker = IdentityTracker.from_scene(scene)
    tracker.placeholder_units = {"red-found", "blue-found"}  # as vision/live/identified.py sets it
    update = tracker.update(row_dets(4.0))
    assert update.vanished == ("c1",)
    assert (tracker.models["c1"].x, tracker.models["c1"].y) == (20.0, 15.0)
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]
    assert not any(h["model"] == "c1" for h in tracker.history)


def test_a_model_missed_beside_the_models_of_its_players_lump_that_moved_together_moves_with_them() -> None:
    # Grinding-Annihilation, Formation Cohesion: a formation ends any kind of move as a single cohesive group. Three
    # red 25 mm models of the player's lump (no units assigned) stand 1" apart and move 9.2" together; the detector
    # misses the third one's piece where it is put down (a rendered game, seed 49: nearest piece 1.34"). Seen where
    # it stood until now, its place empty, beside the two that moved: it is shown where their shift puts it, not
    # where it stood 9.2" away. (A lump model far from them, missed, is not dragged along: the test above.)
    tracker = _one_unit("red-found", "25", {"a1": (32.505, 51.642), "a2": (33.59, 51.498), "a3": (34.927, 51.568)})
    tracker.placeholder_units = {"red-found"}
    update = tracker.update(
        [{"x": x, "y": y, "base": "25", "player": "red"} for x, y in [(24.5, 47.151), (25.596, 46.994)]]
    )
    assert update.vanished == ("a3",)
    a3 = tracker.models["a3"]
    assert a3.guessed and math.dist((a3.x, a3.y), (26.932, 47.081)) < 0.1  # where it stands
    assert [h.get("estimated", False) for h in tracker.history if h["model"] == "a3"] == [True]


@pytest.mark.parametrize("mates_move", [False, True])
def test_a_casualty_of_a_lump_comes_back_only_beside_models_of_it_that_moved_on_their_shift(mates_move: bool) -> None:
    # The Miniature Skirmish Game, Actions ("Move"), a miniature at a time; a scripted game (seed 140, blue's lump:
    # no units assigned, a blurred camera). u2m5 (40 mm) was taken off as a casualty. The oval u8m1 (60x35) moved
    # 4.6" to where an arm lying on the table hid most of it; its end was read as a 50 mm round piece. The lump's
    # group match paired the casualty alone to that piece, 15.7" from where it fell (its pairing set the group's shift
    # by itself), and the reading scored best: one spurious 15.7" move. A lump is no unit that moves together: its
    # casualty comes down only beside two or more of its models that moved now, on their shift.
    start = {"u2m5": (28.1515, 25.8194), "u8m1": (17.8887, 21.6384), "b1": (20.0, 30.0), "b2": (21.5, 30.0)}
    bases = {"u2m5": "40", "u8m1": "60x35", "b1": "40", "b2": "40"}
    tracker = IdentityTracker.from_scene(
        {
            "format": "tablesight-scene/1",
            "units": [{"id": "blue-found", "player": "blue"}],
            "models": [
                {"id": mid, "unit": "blue-found", "base": bases[mid], "x": x, "y": y} for mid, (x, y) in start.items()
            ],
        }
    )
    tracker.placeholder_units = {"blue-found"}  # as vision/live/identified.py sets it
    oval = {"x": 17.8887, "y": 21.6384, "base": "60x35", "player": "blue", "sigma_in": 0.03}
    b = [{"x": x, "y": y, "base": "40", "player": "blue", "sigma_in": 0.03} for x, y in (start["b1"], start["b2"])]
    tracker.update([oval, *b])  # u2m5 taken off
    assert tracker.models["u2m5"].gone
    if not mates_move:
        piece = {"x": 14.5418, "y": 18.0451, "base": "50", "player": "blue", "sigma_in": 0.105}
        update = tracker.update([piece, *b])  # the oval hidden but for its end
        assert update.returned == () and tracker.models["u2m5"].gone and update.unexplained == (0,)
        assert not any(move.model == "u2m5" for move in update.moves)
        return
    # b1 and b2 move 2.3" together and u2m5 is put down with them, on their shift: it came down with them.
    moved = [{**d, "x": d["x"] + 2.3} for d in b]
    back = {"x": start["u2m5"][0] + 2.35, "y": start["u2m5"][1] - 0.05, "base": "40", "player": "blue"}
    update = tracker.update([oval, *moved, back])
    assert update.returned == ("u2m5",) and update.unexplained == ()
    assert (tracker.models["u2m5"].x, tracker.models["u2m5"].y) == (back["x"], back["y"])


def test_a_casualty_taken_off_is_not_put_back_far_off_its_units_move_while_a_mate_is_left_without_a_piece() -> None:
    # Focal Point, Removing Models ("remove models to represent casualties") and Moving ("each model moves up to its
    # Move"); a page game (seed 144, models put down up to 0.6" off their unit's shift on each axis). u1m5 was
    # removed as a casualty at the round's start; then its four mates moved about 5.6", spread too far for one shift
    # to reach them all (GROUP_REACH_IN). The group match paired three (u1m3 to u1m2's piece); u1m5, picked up the
    # update before, was taken back onto the fourth piece 5" off the move its mates made, and u1m2 was reported not
    # seen. A model picked up earlier is not put back further off its unit's move than REACQUIRE_IN on a piece that a
    # mate seen until now, left without one, could be.
    start = {
        "u1m1": (14.7447, 10.4438),
        "u1m2": (16.1665, 10.2107),
        "u1m3": (17.7111, 10.3087),
        "u1m4": (13.0496, 13.879),
        "u1m5": (13.4593, 10.733),
    }
    looks = {
        "u1m1": (83.5, 154.0, 76.1),
        "u1m2": (124.0, 163.1, 144.9),
        "u1m3": (99.4, 136.0, 101.1),
        "u1m4": (58.0, 168.9, 82.0),
        "u1m5": (151.0, 109.0, 121.0),
    }
    models = [{"id": mid, "unit": "u1", "base": "32", "x": x, "y": y} for mid, (x, y) in start.items()]
    models += [{"id": "v1", "unit": "v", "base": "40", "x": 16.2969, "y": 17.5855}]
    tracker = IdentityTracker.from_scene(
        {
            "format": "tablesight-scene/1",
            "units": [{"id": "u1", "player": "red"}, {"id": "v", "player": "blue"}],
            "models": models,
        }
    )
    for mid, look in looks.items():
        tracker.models[mid].look = look
    blue = {"x": 16.2969, "y": 17.5855, "base": "40", "player": "blue"}

    def piece(x: float, y: float, look: tuple[float, float, float], player: str = "red") -> dict[str, Any]:
        return {"x": x, "y": y, "base": "32", "player": player, "look": look, "sigma_in": 0.015}

    tracker.update([blue, *(piece(*start[mid], looks[mid]) for mid in start if mid != "u1m5")])
    assert tracker.models["u1m5"].gone
    # (u1m4's piece read in blue's colour, as it was)
    put = {
        "u1m1": piece(11.9027, 15.8719, (83.0, 154.0, 76.5)),
        "u1m2": piece(14.2807, 15.4551, (124.0, 164.0, 145.0)),
        "u1m3": piece(15.1175, 16.5803, (98.5, 136.0, 102.0)),
        "u1m4": piece(9.1566, 18.9446, (56.0, 167.0, 84.0), "blue"),
    }
    update = tracker.update([blue, *put.values()])
    assert {mid: (tracker.models[mid].x, tracker.models[mid].y) for mid in put} == {
        mid: (d["x"], d["y"]) for mid, d in put.items()
    }
    assert tracker.models["u1m5"].gone and update.returned == ()
    assert not any(move.model == "u1m5" for move in update.moves)


@pytest.mark.parametrize("piece_stood_before", [True, False])
def test_a_model_that_leaves_the_table_is_not_moved_onto_a_piece_that_stood_there_already(
    piece_stood_before: bool,
) -> None:
    # The Miniature Skirmish Game, Actions ("Move"); a scripted game (seed 140, blue's lump: no units assigned, a
    # blurred camera). The oval u8m1 (60x35) moved to where an arm lying on the table hid most of it; its end was
    # read as a 50 mm round piece no model accounted for. An update later u2m4 (40 mm) was taken off as a casualty,
    # and the lump's match moved it 9.3" onto that piece: a spurious move, and the casualty shown on the oval's spot.
    # The update after, u2m4 picked up as the tracker then knew, the match put it back there. Both stood on the table
    # at once, so u2m4 is not that piece: it is reported not seen, the piece left to the players. (A piece put down
    # just as u2m4 left may be u2m4, moved: as before.)
    start = {"u2m1": (23.31, 17.33), "u2m3": (25.55, 20.94), "u2m4": (22.3667, 23.1463), "u8m1": (17.8887, 21.6384)}
    bases = {"u2m1": "40", "u2m3": "40", "u2m4": "40", "u8m1": "60x35"}
    tracker = IdentityTracker.from_scene(
        {
            "format": "tablesight-scene/1",
            "units": [{"id": "blue-found", "player": "blue"}, {"id": "r", "player": "red"}],
            "models": [
                {"id": mid, "unit": "blue-found", "base": bases[mid], "x": x, "y": y} for mid, (x, y) in start.items()
            ]
            + [{"id": "r1", "unit": "r", "base": "60", "x": 14.4874, "y": 6.7955}],
        }
    )
    tracker.placeholder_units = {"blue-found"}  # as vision/live/identified.py sets it
    red = {"x": 14.4874, "y": 6.7955, "base": "60", "player": "red", "sigma_in": 0.04}
    seen = [
        red,
        *(
            {"x": x, "y": y, "base": "40", "player": "blue", "sigma_in": 0.04}
            for x, y in (start["u2m1"], start["u2m3"])
        ),
    ]
    end = {"x": 14.5394, "y": 18.0644, "base": "50", "player": "blue", "sigma_in": 0.11}
    here = {"x": start["u2m4"][0], "y": start["u2m4"][1], "base": "40", "player": "blue", "sigma_in": 0.04}
    tracker.update([*seen, here, *([end] if piece_stood_before else [])])  # u8m1 under the arm
    assert tracker.models["u8m1"].gone
    update = tracker.update([*seen, end])  # u2m4 taken off
    if piece_stood_before:
        assert not update.moves and "u2m4" in update.vanished and update.unexplained == (3,)
        assert (tracker.models["u2m4"].x, tracker.models["u2m4"].y) == start["u2m4"]
        # ...nor put back on it at the next update, picked up as it is now (as the lump's match did, an update later)
        # (red's r1 moves 3.6": the match, trying it as the unit that moved, put u2m4 back as a model seen late)
        moved = {**red, "x": 17.7427, "y": 5.234}
        update = tracker.update([moved, *seen[1:], end])
        assert [move.model for move in update.moves] == ["r1"]
        assert not update.returned and "u2m4" in update.vanished and update.unexplained == (3,)
    else:
        assert [move.model for move in update.moves] == ["u2m4"]


@pytest.mark.parametrize("looks_known", [True, False])
def test_a_unit_spread_past_one_shift_keeps_each_model_on_the_piece_its_figure_looks_like(looks_known: bool) -> None:
    # The Miniature Skirmish Game, Actions ("Move": each miniature moves on its own); a page game (seed 149, models
    # put down up to 0.6" off their unit's shift on each axis). u4's three models moved 2.4-3.5"; m3 came down
    # 0.248" from where m2 had stood, and no shift reaches all three within GROUP_REACH_IN. The match that paired all
    # three read m2 as still (within the jitter, STAY_IN) and gave m3 a 4.8" move onto m2's piece, though each
    # figure looks like its own model's and no other's. A piece whose figure is one model's alone is reached twice as
    # far off the shift; with no looks to go by the reading is a guess, and the players are asked.
    start = {"m1": (13.5526, 12.7705), "m2": (15.6267, 14.1302), "m3": (17.5038, 12.9665)}
    put = {"m1": (10.7977, 14.8862), "m2": (13.2764, 15.1623), "m3": (15.3964, 14.2231)}
    looks = {"m1": (190.8, 122.4, 155.3), "m2": (72.7, 149.4, 134.1), "m3": (100.1, 123.1, 167.1)}
    tracker = _one_unit("u4", "40", start)
    if looks_known:
        for mid, look in looks.items():
            tracker.models[mid].look = look
    seen = [
        {
            "x": x,
            "y": y,
            "base": "40",
            "player": "red",
            "sigma_in": 0.016,
            **({"look": looks[mid]} if looks_known else {}),
        }
        for mid, (x, y) in put.items()
    ]
    update = tracker.update(seen)
    shown = {mid: (tracker.models[mid].x, tracker.models[mid].y) for mid in put}
    if looks_known:
        assert shown == put and not update.uncertain
    else:
        assert shown == put or {"m2", "m3"} <= set(update.uncertain)


def test_two_alike_models_put_down_each_nearer_the_others_place_are_told_apart_by_their_figures() -> None:
    # The Miniature Skirmish Game, Actions ("Move": each miniature moves on its own); a page game (seed 162, models
    # put down up to 0.5" off their unit's shift on each axis). u2's three 28.5 mm models moved 3.2-4.6"; m1 and m3
    # each came down nearer where the shift puts the other, so their places paired them the wrong way round (both
    # called uncertain), though m1's figure is 90 apart from m3's in look and each piece's figure is within 6 of its
    # own model's. The swap held for the game (the players asked once). Where places cannot tell two alike models
    # apart and both figures say which is which, the figures decide (the players are still asked).
    start = {"m1": (16.1514, 24.8388), "m2": (14.7077, 24.8885), "m3": (13.4613, 24.9729)}
    put = {"m1": (16.2186, 21.3181), "m2": (12.9102, 20.6277), "m3": (14.1573, 21.8638)}
    looks = {"m1": (135.45, 92.3, 165.05), "m2": (61.7, 107.65, 138.85), "m3": (145.0, 78.3, 174.7)}
    read = {"m1": (129.0, 94.0, 164.5), "m2": (60.0, 109.0, 137.0), "m3": (139.5, 79.5, 174.0)}
    tracker = _one_unit("u2", "28.5", start)
    for mid, look in looks.items():
        tracker.models[mid].look = look
    update = tracker.update(
        [{"x": x, "y": y, "base": "28.5", "player": "red", "look": read[mid]} for mid, (x, y) in put.items()]
    )
    assert {mid: (tracker.models[mid].x, tracker.models[mid].y) for mid in put} == put
    assert {move.model: round(move.length_in, 2) for move in update.moves} == {"m1": 3.52, "m2": 4.62, "m3": 3.19}
    assert set(update.uncertain) == {"m2", "m3"}


def test_the_tracker_takes_the_players_word_on_which_piece_is_which_model_only_as_a_whole_exchange() -> None:
    # Focal Point, Activation (Move): the page asks which is which where the camera is unsure; the players answer
    # by dragging each model onto its own piece. Models put on each other's pieces (two, or round a ring of three)
    # take those pieces: place and figure's look. One model dragged onto another's piece alone, or nudged within
    # its own base, names no exchange: the tracker keeps its pieces (the page's correction places it).
    start = {"m1": (10.0, 10.0), "m2": (11.5, 10.0), "m3": (13.0, 10.0)}
    tracker = _one_unit("u1", "25", start)
    for k, mid in enumerate(start):
        tracker.models[mid].look = (50.0 * (k + 1), 128.0, 128.0)
    assert tracker.take_identities({"m1": start["m2"], "m2": (11.6, 10.1), "m3": start["m3"]}) == {}
    assert tracker.take_identities({"m1": (10.3, 10.0), **{mid: start[mid] for mid in ("m2", "m3")}}) == {}
    assert (tracker.models["m1"].x, tracker.models["m1"].y) == start["m1"]
    assert tracker.take_identities({"m1": (11.55, 10.05), "m2": (9.98, 10.0), "m3": start["m3"]}) == {
        "m1": "m2",
        "m2": "m1",
    }
    assert {mid: (m.x, m.y, m.look) for mid, m in tracker.models.items()} == {
        "m1": (11.5, 10.0, (100.0, 128.0, 128.0)),
        "m2": (10.0, 10.0, (50.0, 128.0, 128.0)),
        "m3": (13.0, 10.0, (150.0, 128.0, 128.0)),
    }
    # (round a ring: m1 onto the piece m2 has now, m2 onto m3's, m3 onto m1's)
    assert tracker.take_identities({"m1": (10.0, 10.0), "m2": (13.0, 10.0), "m3": (11.5, 10.0)}) == {
        "m1": "m2",
        "m2": "m3",
        "m3": "m1",
    }
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {
        "m1": (10.0, 10.0),
        "m2": (13.0, 10.0),
        "m3": (11.5, 10.0),
    }
    moved = tracker.update(
        [{"x": x + 3.0, "y": y, "base": "25", "player": "red"} for x, y in ((10.0, 10.0), (13.0, 10.0), (11.5, 10.0))]
    )
    assert {move.model for move in moved.moves} == {"m1", "m2", "m3"}
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {
        "m1": (13.0, 10.0),
        "m2": (16.0, 10.0),
        "m3": (14.5, 10.0),
    }


def test_a_model_not_seen_is_not_picked_up_again_on_a_piece_whose_figure_is_a_unit_mates() -> None:
    # The Miniature Skirmish Game, Actions ("Move"); a page game (seed 165): u1's 32 mm models stood behind a wall.
    # m3 was not found after a restart (picked up, as far as the tracker knew); m2 was put down out of sight and
    # shown where its unit's move put it. Then m3 came down in view, its base read in the other player's colour,
    # its figure within 10 of m3's and 44 from m2's. m2, not seen since, was picked up again on it (4.1" off), and
    # m3 was reported gone: the piece's figure was surely m3's, not m2's. A piece whose figure is surely not a
    # model's but a unit-mate's is not that model's; here m3 takes it as one read in the other colour (asked).
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "u1", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": [
            {"id": "m1", "unit": "u1", "base": "32", "x": 24.6682, "y": 20.6414},
            {"id": "m2", "unit": "u1", "base": "32", "x": 24.7752, "y": 19.1314},
            {"id": "m3", "unit": "u1", "base": "32", "x": 29.9727, "y": 22.199},
            {"id": "b1", "unit": "b", "base": "50", "x": 10.0, "y": 10.0},
        ],
    }
    tracker = IdentityTracker.from_scene(scene)
    looks = {"m1": (124.2, 113.9, 153.2), "m2": (125.5, 139.0, 137.8), "m3": (148.6, 113.6, 111.5)}
    for mid, look in (looks | {"b1": (90.0, 120.0, 150.0)}).items():
        tracker.models[mid].look = look
    tracker.models["m2"].lost = tracker.models["m2"].guessed = True  # shown on its unit's move
    tracker.models["m3"].lost = tracker.models["m3"].gone = True  # not found after the restart
    read_blue = {"x": 28.6477, "y": 21.54, "base": "32", "player": "blue", "look": (154.5, 112.5, 119.0)}
    update = tracker.update(
        [
            {"x": 24.6708, "y": 20.6455, "base": "32", "player": "red", "look": (141.0, 117.0, 165.0)},
            read_blue,
            {"x": 10.0, "y": 10.0, "base": "50", "player": "blue", "look": (90.0, 120.0, 150.0)},
        ]
    )
    assert (tracker.models["m3"].x, tracker.models["m3"].y) == (read_blue["x"], read_blue["y"])
    assert update.uncertain == ("m3",) and "m2" in update.vanished
    assert (tracker.models["m2"].x, tracker.models["m2"].y) == (24.7752, 19.1314)


def test_a_casualty_the_players_took_off_is_not_taken_back_onto_a_unit_mates_piece() -> None:
    # Focal Point, Removing Models: "remove models to represent casualties". m2 is picked up (hidden in a hand),
    # then m3 is removed as a casualty, and the players say so on the page (its delete). m2 comes down where m3
    # stood: held as picked up, the casualty was put back where it stood and m2 stayed missing. Told it left the
    # table, the tracker forgets m3, and the piece is m2's.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "u1", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": [
            {"id": "m1", "unit": "u1", "base": "32", "x": 10.0, "y": 10.0},
            {"id": "m2", "unit": "u1", "base": "32", "x": 11.5, "y": 10.0},
            {"id": "m3", "unit": "u1", "base": "32", "x": 13.0, "y": 10.0},
            {"id": "b1", "unit": "b", "base": "50", "x": 30.0, "y": 20.0},
        ],
    }

    def piece(x: float, y: float, player: str = "red", base: str = "32") -> dict[str, Any]:
        return {"x": x, "y": y, "base": base, "player": player}

    blue = piece(30.0, 20.0, "blue", "50")
    for told in (False, True):
        tracker = IdentityTracker.from_scene(scene)
        tracker.update([piece(10.0, 10.0), piece(13.0, 10.0), blue])  # m2 in a hand
        update = tracker.update([piece(10.0, 10.0), blue])  # m3 removed
        assert update.vanished == ("m2", "m3")
        if told:
            assert tracker.take_off({"m3", "m1"}) == ["m3"]  # (m1, seen on its piece, stays tracked)
        update = tracker.update([piece(10.0, 10.0), piece(13.0, 10.0), blue])
        if told:
            assert "m3" not in tracker.models and (tracker.models["m2"].x, tracker.models["m2"].y) == (13.0, 10.0)
            assert not update.vanished and not update.unexplained
        else:  # (before: the casualty back on the table, m2 missing)
            assert (tracker.models["m3"].x, tracker.models["m3"].y) == (13.0, 10.0) and update.vanished == ("m2",)


def test_a_piece_left_by_a_lumps_move_goes_to_the_model_just_missed_not_to_a_casualty_that_stood_nearer() -> None:
    # Focal Point, Removing Models: "remove models to represent casualties". a5, of red's lump (no units assigned),
    # was removed as a casualty. Then four of its 25 mm models move about 2.6" together (0.3" off on each axis; a
    # rendered game, seed 55); a2 comes down 1.5" off their shift and its base is read as 28.5 mm. Its piece, 1.15"
    # from where a2 stood, went to the casualty, 1.07" from where a5 had stood: a model picked up earlier is put back
    # where it stood (within its own base) or on its unit's shift, not anywhere near its old place.
    start = {"a1": (5.214, 26.926), "a2": (6.826, 26.507), "a3": (7.906, 27.364), "a4": (5.047, 28.731)}
    tracker = _one_unit("red-found", "25", start | {"a5": (6.876, 28.634)})
    tracker.placeholder_units = {"red-found"}
    tracker.models["a5"].gone = tracker.models["a5"].lost = True
    put = {"a1": (5.691, 29.509), "a2": (7.178, 27.613), "a3": (8.355, 29.822), "a4": (5.439, 31.314)}
    seen = [{"x": x, "y": y, "base": "28.5" if mid == "a2" else "25", "player": "red"} for mid, (x, y) in put.items()]
    update = tracker.update(seen)
    assert {mid: (tracker.models[mid].x, tracker.models[mid].y) for mid in put} == put
    assert update.vanished == ("a5",) and not update.returned


@pytest.mark.parametrize("a4_at_x", [11.0, 14.0])  # a in coherency (a 2" chain), and a4 3" adrift of its mates
def test_a_players_unassigned_models_that_move_together_keep_their_ids(a4_at_x: float) -> None:
    # No units assigned (watch without --deployment): all red models are one lump, so no unit can be read as the
    # one that moved. Unit a slides 1.4" along its own row (bases 1.5" apart): matched model by model, each took
    # the place its neighbour had left and the front model "moved" 5.9" (a swapped id per model). The models
    # that moved together are now tried as one unit (the rules move one unit at a time: Focal Point, Turn
    # Structure), also when the unit has drifted out of coherency and is no one chain.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "red-found", "player": "red"}, {"id": "blue-found", "player": "blue"}],
        "models": [
            {
                **m,
                "unit": "red-found" if m["unit"] == "a" else "blue-found",
                "x": a4_at_x if m["id"] == "a4" else m["x"],
            }
            for m in ROW["models"]
        ]
        + [{"id": "c1", "unit": "red-found", "base": "32", "x": 20.0, "y": 15.0}],  # another red unit, still
    }
    tracker = IdentityTracker.from_scene(scene)
    tracker.placeholder_units = {"red-found", "blue-found"}  # as vision/live/identified.py sets it
    before = {m.id: (m.x, m.y) for m in tracker.models.values()}
    moved = [{**d, "x": d["x"] + (a4_at_x - 11.0 if d["id"] == "a4" else 0.0)} for d in row_dets(1.4)] + [
        {"x": 20.0, "y": 15.0, "base": "32", "player": "red"}
    ]
    update = tracker.update(moved)
    assert not update.desync
    assert {mv.model: round(mv.length_in, 3) for mv in update.moves} == {"a1": 1.4, "a2": 1.4, "a3": 1.4, "a4": 1.4}
    for mid, (x, y) in before.items():
        assert (tracker.models[mid].x, tracker.models[mid].y) == pytest.approx(
            (x + 1.4 if mid.startswith("a") else x, y)
        ), mid


def test_a_model_not_seen_moves_with_its_unit_only_when_the_unit_moved_as_one() -> None:
    # a5 was added by the players where the camera sees nothing (a blind corner). Players move a unit a model at a
    # time: a4 first, 3" on, while a1-a3 stand where they stood. a5 was guessed to have moved 3" with a4 and shown
    # there, 0.5" unsure, while it stood in its corner: every later frame had it wrong. Mates seen still where
    # they stood say the unit moves a model at a time, and a5 stays; moved all at once, a5 goes with them.
    def tracker_with_a5() -> IdentityTracker:
        tracker = IdentityTracker.from_scene(ROW)
        tracker.models["a5"] = Tracked("a5", "a", "red", "32", 5.0, 3.0, lost=True, gone=True, placed=True)
        return tracker

    one_model = [{**d, "x": d["x"] + (3.0 if d["id"] == "a4" else 0.0)} for d in row_dets(0.0)]
    tracker = tracker_with_a5()
    update = tracker.update(one_model)
    assert [(mv.model, round(mv.length_in, 3)) for mv in update.moves] == [("a4", 3.0)]
    assert (tracker.models["a5"].x, tracker.models["a5"].y) == (5.0, 3.0)
    assert not any(h["model"] == "a5" for h in tracker.history)
    tracker = tracker_with_a5()
    tracker.update(row_dets(3.0))  # the whole unit 3" on
    assert (tracker.models["a5"].x, tracker.models["a5"].y) == pytest.approx((8.0, 3.0))
    assert [h["model"] for h in tracker.history if h.get("estimated")] == ["a5"]


def test_an_unseen_model_coming_out_of_a_blind_corner_is_the_one_its_units_shift_puts_there() -> None:
    # a5 and a6, alike, were added by the players in a corner the camera never sees. The unit is moved a model at a
    # time, 4" to the left (Grinding-Annihilation, Move Phase: each model of the formation moves in turn): a1-a4
    # first, then a6, then a5. The piece a6 is put down on could be either of the two unseen models' by the photo;
    # it was given to whichever came first in the roster (a5), and the two swapped for the rest of the game. The
    # shift a1-a4 made this activation puts a6 there and a5 1.5" off: a6 takes it, still reported uncertain.
    tracker = IdentityTracker.from_scene(ROW)
    for mid, x in (("a5", 5.0), ("a6", 6.5)):
        tracker.models[mid] = Tracked(mid, "a", "red", "32", x, 3.0, lost=True, gone=True, placed=True)
    shift_in = -4.0
    at = {m["id"]: (float(m["x"]), float(m["y"])) for m in ROW["models"]}

    def frame(seen: dict[str, tuple[float, float]]) -> list[dict[str, object]]:
        return [
            {"x": x, "y": y, "base": "32", "player": "red" if mid.startswith("a") else "blue"}
            for mid, (x, y) in seen.items()
        ]

    for mid in ("a1", "a2", "a3", "a4"):
        at[mid] = (at[mid][0] + shift_in, at[mid][1])
        update = tracker.update(frame(at))
        assert [mv.model for mv in update.moves] == [mid]
    at["a6"] = (6.5 + shift_in, 3.0)
    update = tracker.update(frame(at))
    assert (tracker.models["a6"].x, tracker.models["a6"].y) == pytest.approx(at["a6"])
    assert "a6" in update.uncertain  # which of the two it is, the photo cannot tell
    at["a5"] = (5.0 + shift_in, 3.0)
    tracker.update(frame(at))
    assert (tracker.models["a5"].x, tracker.models["a5"].y) == pytest.approx(at["a5"])
    assert tracker.activations["a"]["from"]["a5"] == [5.0, 3.0] and tracker.activations["a"]["from"]["a6"] == [6.5, 3.0]


def test_a_piece_put_down_while_a_unit_is_moving_is_that_units_before_a_picked_up_piece_of_the_lump() -> None:
    # Unit u moves a model at a time, 4" to the left; u5 was added by the players in a corner the camera never
    # sees. Meanwhile f1, a piece the players left unassigned (in red's lump), is lifted off the table. When u5 is
    # put down beside its unit-mates, the piece was f1's (its lump came first by name, and a piece picked up may
    # be put down anywhere), u5 stayed in the corner and f1 "moved" 2.8". The unit whose activation is going on
    # accounts for it first (Grinding-Annihilation, Move Phase: "After you have finished moving that formation,
    # select another").
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "u", "player": "red"}, {"id": "red-found", "player": "red"}],
        "models": [{"id": f"u{k}", "unit": "u", "base": "32", "x": 5.0 + 1.5 * k, "y": 5.0} for k in range(1, 5)]
        + [{"id": "f1", "unit": "red-found", "base": "32", "x": 3.0, "y": 1.0}],
    }
    tracker = IdentityTracker.from_scene(scene)
    tracker.placeholder_units = {"red-found"}
    tracker.models["u5"] = Tracked("u5", "u", "red", "32", 5.0, 3.0, lost=True, gone=True, placed=True)
    at = {m["id"]: (float(m["x"]), float(m["y"])) for m in scene["models"]}

    def frame() -> list[dict[str, object]]:
        return [{"x": x, "y": y, "base": "32", "player": "red"} for x, y in at.values()]

    for mid in ("u1", "u2", "u3", "u4"):
        at[mid] = (at[mid][0] - 4.0, at[mid][1])
        assert [mv.model for mv in tracker.update(frame()).moves] == [mid]
    del at["f1"]
    assert "f1" in tracker.update(frame()).vanished
    at["u5"] = (1.0, 3.0)
    update = tracker.update(frame())
    assert [(mv.model, round(mv.length_in, 3)) for mv in update.moves] == [("u5", 4.0)]
    assert (tracker.models["f1"].x, tracker.models["f1"].y) == (3.0, 1.0) and update.vanished == ("f1",)


def test_a_unit_put_down_a_little_off_one_common_shift_keeps_every_identity() -> None:
    # Players move each model of a unit about 4.5" on, not exactly alike (Grinding-Annihilation, Move Phase: each
    # model moves up to its Move). a2 and a3 come down 0.4-0.8" short of a0 and a1. Matched cheapest pair first
    # (a piece to the model the unit's shift puts nearest it), a1 took a0's piece, the others slid along, and one
    # piece was left to no model: a desync. The pairing with the least cost in all keeps each id.
    models = [{"id": f"a{k}", "unit": "a", "base": "25", "x": 10.0 + 1.2 * k, "y": 10.0} for k in range(4)]
    tracker = IdentityTracker.from_scene(
        {"format": "tablesight-scene/1", "units": [{"id": "a", "player": "red"}], "models": models}
    )
    put = {"a0": (10.39, 14.47), "a1": (11.77, 14.49), "a2": (12.96, 13.64), "a3": (14.4, 13.78)}
    update = tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in put.values()])
    assert not update.desync
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put


def _one_unit(unit: str, base: str, start: dict[str, tuple[float, float]]) -> IdentityTracker:
    models = [{"id": mid, "unit": unit, "base": base, "x": x, "y": y} for mid, (x, y) in start.items()]
    return IdentityTracker.from_scene(
        {"format": "tablesight-scene/1", "units": [{"id": unit, "player": "red"}], "models": models}
    )


def test_a_unit_whose_models_each_came_down_off_its_shift_is_matched_on_the_shift_they_share() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move, so five 50 mm models moved about 4.5" come
    # down up to 0.7" off one common shift (a rendered game, models put down 0.3" off it on each axis). The shift one
    # model and its piece make brought only two others within 0.5"; a wrong shift, by one gap of the formation, put
    # three models there, and every identity went to a neighbour's piece. The shift the pieces share, re-estimated
    # from all the models it reaches, and the pairing it gives played out in full, keep each.
    start = {
        "a1": (19.87, 7.99),
        "a2": (22.46, 7.47),
        "a3": (25.42, 8.56),
        "a4": (20.09, 11.16),
        "a5": (23.38, 10.02),
    }
    put = {"a1": (24.31, 9.96), "a2": (27.2, 8.72), "a3": (29.58, 9.63), "a4": (24.84, 12.43), "a5": (27.57, 11.38)}
    tracker = _one_unit("a", "50", start)
    update = tracker.update([{"x": x, "y": y, "base": "50", "player": "red"} for x, y in put.values()], "a")
    assert not update.desync and not update.uncertain
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put


def test_two_models_put_down_a_gap_apart_off_their_shift_keep_their_ids_though_one_size_is_misread() -> None:
    # Two alike 25 mm models moved 3" on (Grinding-Annihilation, Move Phase), one put down 1.1" further left than
    # the other; the camera reads one of the two pieces as 28.5 mm. No shift one model and its piece make brings
    # the other within reach (0.9"), and the first model was given its mate's piece (the size that read right),
    # its mate reported not seen. The shift between the two brings both within 0.6", each to its own piece.
    tracker = _one_unit("a", "25", {"a1": (37.4, 37.19), "a2": (37.69, 38.73)})
    pieces = [
        {"x": 36.11, "y": 40.08, "base": "28.5", "player": "red"},
        {"x": 37.5, "y": 41.67, "base": "25", "player": "red"},
    ]
    update = tracker.update(pieces, "a")
    assert not update.vanished and not update.unexplained
    assert (tracker.models["a1"].x, tracker.models["a1"].y) == (36.11, 40.08)
    assert (tracker.models["a2"].x, tracker.models["a2"].y) == (37.5, 41.67)


@pytest.mark.parametrize("told", [True, False])
def test_a_model_standing_still_whose_base_is_read_far_off_its_size_on_its_spot_is_still_that_model(told: bool) -> None:
    # Onefinity is played a trooper at a time (its activation moves one trooper, Move action), and the page is not told
    # who. On table 47 (eval_page_game.py --game onefinity --model-at-a-time) a 28.5 mm trooper standing still was
    # read once as 40 mm, 0.006" from its spot: too far off its size to be its base, so the page said it was not seen
    # and its piece a new model, which the next frame's moves then took for another trooper's (identity 96.5 %).
    # A base does not change size and nothing is put down on a model's spot while it stands there: a piece read
    # there is that model, and nothing moves or goes missing.
    tracker = IdentityTracker.from_scene(ROW)
    update = tracker.update(row_dets(4.0, b2="50"), active_unit="a" if told else None)
    assert not update.vanished and not update.unexplained and not update.desync, update
    assert (tracker.models["b2"].x, tracker.models["b2"].y, tracker.models["b2"].base) == (8.0, 8.0, "32")
    assert {mv.model for mv in update.moves} == {"a1", "a2", "a3", "a4"}
    # A piece read that far off its size a little way off the spot (a figure's top beside it, say) is not taken for it
    tracker = IdentityTracker.from_scene(ROW)
    pieces = row_dets(4.0, frozenset({"b2"})) + [{"x": 8.3, "y": 8.0, "base": "50", "player": "blue"}]
    update = tracker.update(pieces, active_unit="a" if told else None)
    assert "b2" in update.vanished and tracker.models["b2"].x == 8.0


def test_two_alike_models_put_down_beyond_reach_of_their_units_shift_keep_their_own_pieces() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move, so a player may spread a unit as it goes.
    # A scripted game (eval_live_game.py --seed 64 --jitter 0.3) put two of six alike 32 mm models down 0.9" off
    # the unit's shift, past the group match's reach (GROUP_REACH_IN) from its guess at it. One was paired within
    # reach to its mate's piece, the other picked up again beside its mates on the piece left, and the two ids
    # stayed swapped for the rest of the game (identity 93.7 %). Re-paired by the least offsets from the move the
    # six share, each keeps its own piece, told which unit moved or not.
    start = {
        "u7m1": (29.707, 11.01),
        "u7m2": (31.232, 10.929),
        "u7m3": (32.513, 11.151),
        "u7m4": (29.43, 12.368),
        "u7m5": (31.0, 12.543),
        "u7m6": (32.408, 12.704),
    }
    put = {
        "u7m1": (32.359, 8.474),
        "u7m2": (33.026, 9.805),
        "u7m3": (35.203, 9.761),
        "u7m4": (31.716, 10.474),
        "u7m5": (33.626, 11.086),
        "u7m6": (35.216, 11.136),
    }
    for told in ("u7", None):
        tracker = _one_unit("u7", "32", start)
        update = tracker.update([{"x": x, "y": y, "base": "32", "player": "red"} for x, y in put.values()], told)
        assert not update.vanished and not update.unexplained, told
        assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put, told
        lengths = {m.model: round(m.length_in, 2) for m in update.moves}
        assert lengths["u7m1"] == round(math.dist(start["u7m1"], put["u7m1"]), 2) == 3.67, lengths


def test_a_unit_read_one_place_short_with_a_model_left_over_has_every_model_paired_to_its_own_piece() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move, so a player may spread a unit as it goes.
    # Replays of scripted games with models put down 0.5" off their unit's shift (each axis) found two ways a unit
    # lost a model: (a) four 25 mm models slid along their own line, one 1.4" off the shift: each model was paired to
    # its neighbour's piece, the last left without one and its own piece left over; (b) four 40 mm models 2" apart,
    # one 0.9" off: past the group match's reach, and its piece more than 3" from any mate's (REACQUIRE_IN). Both
    # were reported as a model not seen and a piece unexplained. Paired with all of the unit's pieces, the move they
    # share is the same for any pairing: the least offsets from it give each model its own piece.
    cases = [
        (
            "25",
            {"m1": (20.9, 53.16), "m2": (22.18, 53.35), "m3": (23.23, 53.13), "m4": (20.41, 54.67)},
            {"m1": (23.37, 51.47), "m2": (24.75, 50.93), "m3": (25.91, 51.62), "m4": (21.78, 51.45)},
        ),
        (
            "40",
            {"m1": (33.01, 8.17), "m2": (33.98, 10.77), "m3": (35.22, 12.75), "m4": (30.08, 14.35)},
            {"m1": (29.24, 6.13), "m2": (30.42, 8.52), "m3": (31.53, 11.2), "m4": (27.58, 12.12)},
        ),
    ]
    for base, start, put in cases:
        for told in ("a", None):
            tracker = _one_unit("a", base, start)
            update = tracker.update([{"x": x, "y": y, "base": base, "player": "red"} for x, y in put.values()], told)
            assert not update.vanished and not update.unexplained, (base, told)
            assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put, (base, told)
            assert sorted(m.model for m in update.moves) == ["m1", "m2", "m3", "m4"], (base, told)


def test_two_alike_models_whose_pieces_fit_either_way_are_both_called_uncertain() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move. Two alike 32 mm models side by side move
    # 3.25" and come down one above the other: either pairing is as far off the move they share (0.02" apart in all).
    # Which is which is a guess, so the update says so of both (the tracker before session 78 named one of them).
    for told in ("a", None):
        tracker = _one_unit("a", "32", {"a1": (10.0, 10.0), "a2": (11.5, 10.0)})
        pieces = [(13.95, 10.75), (14.0, 9.25)]
        update = tracker.update([{"x": x, "y": y, "base": "32", "player": "red"} for x, y in pieces], told)
        assert sorted(update.uncertain) == ["a1", "a2"], told
        assert any("identity uncertain for" in line and "a2" in line for line in update.messages), update.messages
        assert {(m.x, m.y) for m in tracker.models.values()} == set(pieces), told
        assert all(m.uncertain for m in tracker.models.values()), told


def test_three_alike_models_whose_pieces_fit_as_well_turned_round_a_ring_are_all_called_uncertain() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move. Three alike 25 mm models in a triangle move
    # 3" and each comes down halfway towards the next: the pieces fit the move as well turned round the ring (each
    # model one piece along) as they do as put down, while no two models' pieces swapped fit nearly as well. Which is
    # which is a guess for all three, so the update says so of all three (before session 93 only of the two a swap
    # of pieces named).
    radius_in = 2.4 / math.sqrt(3)  # a triangle of side 2.4": the pieces come down 1.2" apart
    corners = [
        (10 + radius_in * math.cos(math.radians(90 + 120 * k)), 10 + radius_in * math.sin(math.radians(90 + 120 * k)))
        for k in range(3)
    ]
    halfway = [
        ((corners[k][0] + corners[(k + 1) % 3][0]) / 2 + 3.0, (corners[k][1] + corners[(k + 1) % 3][1]) / 2)
        for k in range(3)
    ]
    for told in ("a", None):
        tracker = _one_unit("a", "25", {f"a{k}": xy for k, xy in enumerate(corners)})
        update = tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in halfway], told)
        assert sorted(update.uncertain) == ["a0", "a1", "a2"], told
        assert not update.vanished and not update.unexplained, told
        assert {(m.x, m.y) for m in tracker.models.values()} == set(halfway), told


def test_a_spread_unit_with_a_model_the_players_placed_is_paired_by_its_move_not_turned_round_a_ring() -> None:
    # Miniature Skirmish Game, Actions: a miniature can move up to its movement range in inches. Page game skirmish
    # seed 122 (eval_page_game.py --jitter 0.5 ...) moved a unit of five alike 25 mm models spread, each put down up
    # to 1.1" off their common shift; one (m3) the camera never saw at deployment, so the players placed it. The group
    # match paired m2, m3 and m5 one piece round a ring, and the re-pairing by the least offsets from the move left
    # out m3 (its place was not seen) and summed the offsets: three models a little off beat one 2" off, and the
    # ring stood, said of none, for the rest of the game (identity 84.40 %). The players' place is where it stood, and
    # by the squares of the offsets (players' placing errors are about normal) and the figures' looks each model
    # keeps its own piece; the pieces fit nearly as well round the ring, so the three are called uncertain.
    start = {
        "m1": (26.685, 20.632),
        "m2": (28.004, 20.649),
        "m3": (29.443, 20.679),
        "m4": (26.929, 21.689),
        "m5": (28.346, 21.692),
    }
    looks = {
        "m1": (34.0, 153.6, 97.4),
        "m2": (97.8, 115.4, 138.3),
        "m4": (87.7, 122.4, 144.4),
        "m5": (201.0, 106.8, 195.0),
    }
    put = {
        "m1": (24.33, 23.089),
        "m2": (26.85, 23.992),
        "m3": (28.576, 22.047),
        "m4": (25.462, 24.139),
        "m5": (27.939, 23.355),
    }
    seen_looks = {
        "m1": (32.0, 152.0, 99.0),
        "m2": (78.5, 179.5, 68.0),  # (read unlike its look at deployment, as the page read it)
        "m3": (195.5, 114.0, 174.5),
        "m4": (86.0, 123.0, 143.0),
        "m5": (197.5, 108.0, 192.0),
    }
    for told in ("a", None):
        tracker = _one_unit("a", "25", start)
        for mid, look in looks.items():
            tracker.models[mid].look = look
        placed = tracker.models["m3"]
        placed.placed = placed.lost = placed.gone = True  # as the page adopts a model the players added
        pieces = [
            {"x": x, "y": y, "base": "25", "player": "red", "look": seen_looks[mid]} for mid, (x, y) in put.items()
        ]
        update = tracker.update(pieces, told)
        assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put, told
        assert sorted(update.uncertain) == ["m2", "m3", "m5"], told
        assert not update.vanished and not update.unexplained, told


def test_a_casualty_is_not_put_back_on_the_piece_of_a_unit_mate_spread_past_reach_of_its_units_shift() -> None:
    # Miniature Skirmish Game, Damage Application: "Targets are removed if their health reaches 0 or less." Page game
    # skirmish seed 122: m5 of a unit of five alike 25 mm models was removed as a casualty; then its four mates moved
    # about 3" spread as they came down, m2 and m3 past the match's reach from any one shift. The match put the
    # casualty back on m2's piece (on the shift, 0.6" off) and left m1, seen standing until then, without one; the
    # pieces were then dealt again among the models that moved, and m2 was reported not seen while the casualty
    # stood on its piece for the rest of the round. A model picked up before takes only a piece no unit-mate can.
    start = {
        "m1": (25.013, 25.778),
        "m2": (27.728, 25.837),
        "m3": (28.551, 24.128),
        "m4": (26.057, 26.143),
        "m5": (28.968, 26.331),
    }
    looks = {
        "m1": (30.7, 152.5, 100.5),
        "m2": (77.9, 177.3, 71.5),
        "m3": (194.5, 114.6, 176.7),
        "m4": (86.2, 123.1, 143.5),
        "m5": (193.7, 110.4, 190.8),
    }
    put = {"m1": (22.702, 23.682), "m2": (25.301, 22.96), "m3": (25.435, 20.919), "m4": (24.332, 23.646)}
    seen_looks = {
        "m1": (30.5, 152.5, 99.0),
        "m2": (80.0, 178.0, 68.5),
        "m3": (196.0, 115.0, 176.0),
        "m4": (86.5, 123.0, 143.0),
    }
    for told in ("a", None):
        tracker = _one_unit("a", "25", start)
        for mid, look in looks.items():
            tracker.models[mid].look = look
        tracker.models["m5"].gone = tracker.models["m5"].lost = True  # taken off: not seen since, asked about once
        pieces = [
            {"x": x, "y": y, "base": "25", "player": "red", "look": seen_looks[mid]} for mid, (x, y) in put.items()
        ]
        update = tracker.update(pieces, told)
        assert {mid: (tracker.models[mid].x, tracker.models[mid].y) for mid in put} == put, told
        assert update.vanished == ("m5",) and not update.returned and not update.messages, told
        assert (tracker.models["m5"].x, tracker.models["m5"].y) == start["m5"], told


def test_a_model_read_nudged_where_a_spread_mate_came_down_on_its_spot_is_called_uncertain_with_the_mates() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move. Tracker replays (replay_tracker.py, table
    # 219, models put down 0.5" off their shift): three alike 28.5 mm models moved about 2.4", spread as they came
    # down; m3 came down 0.19" from the spot m1 left, and m1 came down 1" off the shift, past the match's reach. The
    # tracker read m1 as nudged 0.19" on its spot and m3 as moved 4.35" onto m1's piece, and said nothing. A still
    # base is read again within 0.04": a model read surely off its spot, while its alike mates moved, may be a mate
    # put down there, so the update calls it and those mates uncertain.
    start = {"m1": (36.08, 14.78), "m2": (35.61, 16.32), "m3": (38.94, 14.0)}
    put = {"m1": (34.71, 15.0), "m2": (33.04, 17.0), "m3": (35.93, 14.9)}
    for told in ("a", None):
        tracker = _one_unit("a", "28.5", start)
        pieces = [{"x": x, "y": y, "base": "28.5", "player": "red", "sigma_in": 0.015} for x, y in put.values()]
        update = tracker.update(pieces, told)
        assert {(m.x, m.y) for m in tracker.models.values()} == set(put.values()), told
        assert sorted(update.uncertain) == ["m1", "m2", "m3"], told
        assert any("identity uncertain for m1, m2, m3" in line for line in update.messages), update.messages
    # A model of the unit left where it stood, read there again (within 0.02"), while its mates move: no doubt.
    tracker = _one_unit("a", "28.5", start)
    still = {"m1": (36.09, 14.79), "m2": (33.04, 18.32), "m3": (36.37, 16.0)}
    update = tracker.update(
        [{"x": x, "y": y, "base": "28.5", "player": "red", "sigma_in": 0.015} for x, y in still.values()]
    )
    assert not update.uncertain, update.uncertain
    assert (tracker.models["m1"].x, tracker.models["m1"].y) == start["m1"]


def test_a_unit_of_three_with_one_missed_read_one_place_along_its_line_is_called_uncertain() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move. Tracker replays with the detector missing
    # pieces (replay_tracker.py --miss 0.03, table 204, models 0.3" off their shift): three 40 mm models moved about
    # 3.6", m4 missed. The two pieces fit a move one place along the unit's line (m4 and m1 on them, 5" moved, 0.27"
    # each off) a little better than the true one (m1 and m2, 0.37" each off): 0.2" apart in all, at the edge of
    # AMBIGUOUS_IN, and the tracker named m4 and m1 silently. For a unit put down that spread (0.3" off its move,
    # the pieces' own spread) either reading is about as likely, so the update says which is which is a guess.
    start = {"m1": (35.97, 34.11), "m2": (37.79, 32.71), "m4": (33.47, 35.32)}
    put = {"m1": (34.97, 30.71), "m2": (37.45, 28.95)}
    for told in ("a", None):
        tracker = _one_unit("a", "40", start)
        pieces = [{"x": x, "y": y, "base": "40", "player": "red", "sigma_in": 0.015} for x, y in put.values()]
        update = tracker.update(pieces, told)
        on_pieces = {mid for mid, m in tracker.models.items() if (m.x, m.y) in set(put.values())}
        assert len(on_pieces) == 2 and len(update.vanished) == 1, told
        assert on_pieces - {"m1", "m2"} <= set(update.uncertain), (told, update.uncertain)
        assert any("identity uncertain for" in line for line in update.messages), update.messages


def _random_unit_move(
    seed: int, jitter_in: float
) -> tuple[dict[str, tuple[float, float]], list[tuple[float, float]], str] | None:
    """A unit of 2-6 alike models in a line or a block of threes, 0.3-1" apart edge to edge, moved 1-6" one way,
    each model put down off that shift (normal, ``jitter_in`` on each axis) where bases do not overlap. Returns the
    models' places, where each came down, and their base; None when no such landing was drawn."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    base = str(rng.choice(["25", "32", "40"]))
    base_in = int(base) / 25.4
    gap_in = base_in + rng.uniform(0.3, 1.0)
    line = rng.random() < 0.5
    layout = [(k * gap_in, 0.0) if line else ((k % 3) * gap_in, (k // 3) * gap_in) for k in range(n)]
    turn, heading, length_in = rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi), rng.uniform(1.0, 6.0)
    start = [
        (20 + x * math.cos(turn) - y * math.sin(turn), 20 + x * math.sin(turn) + y * math.cos(turn)) for x, y in layout
    ]
    for _ in range(100):
        end = [
            (
                x + length_in * math.cos(heading) + rng.normal(0, jitter_in),
                y + length_in * math.sin(heading) + rng.normal(0, jitter_in),
            )
            for x, y in start
        ]
        if all(math.dist(a, b) >= base_in for i, a in enumerate(end) for b in end[i + 1 :]):
            return {f"a{k}": xy for k, xy in enumerate(start)}, end, base
    return None


def test_units_whose_models_come_down_0_3_inches_off_their_shift_keep_their_ids() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move; players keep a unit's formation near
    # enough, each model put down a little off the unit's common shift. 300 seeded units, 0.3" off on each axis,
    # measured 0.01" off: the tracker before session 65 kept every id in 271, session 65's in 295, session 76's in
    # 297, session 77's, its alike models re-paired by the least offsets from their shared move, in 298 (and none the
    # old one kept was lost), and this one, a model left over paired with the rest (session 78), in all 300. Spread
    # wider, 0.5" on each axis: session 76's kept 247, session 77's 264, this one 295. The rest are put down over a
    # gap's worth off, where which is which is a guess either way.
    for jitter_in, least in ((0.3, 300), (0.5, 293)):
        kept = drawn = 0
        for seed in range(300):
            move = _random_unit_move(seed, jitter_in)
            if move is None:
                continue
            start, end, base = move
            rng = np.random.default_rng(1000 + seed)
            tracker = _one_unit("a", base, start)
            seen = [
                {"x": x + rng.normal(0, 0.01), "y": y + rng.normal(0, 0.01), "base": base, "player": "red"}
                for x, y in end
            ]
            tracker.update(seen)
            drawn += 1
            kept += all(
                math.dist((tracker.models[f"a{k}"].x, tracker.models[f"a{k}"].y), xy) < 0.1 for k, xy in enumerate(end)
            )
        assert drawn == 300
        assert kept >= least, (jitter_in, kept)


def test_lumps_moved_with_a_model_picked_up_earlier_and_a_mate_missed_keep_their_ids() -> None:
    # Grinding-Annihilation, Formation Cohesion: a formation ends any kind of move as a single cohesive group. The
    # models of a player's lump (not assigned to units yet) in a line or a block move 1-6", each put down 0.3" off
    # the common shift on each axis. One of them was picked up earlier (not seen since) and is put down with the
    # rest; the detector misses another's piece in this frame. Seeded: 194 formations of 4-6 models. The tracker
    # before this gave every seen piece its own model in 129; session 66's in 161; session 78's, which pairs a piece
    # left over to a unit's model left without one, in 160. Most of the rest are a line slid along by a gap, which
    # the pieces explain as well without the picked-up model.
    kept = drawn = 0
    for seed in range(300):
        move = _random_unit_move(seed, 0.3)
        if move is None or len(move[0]) < 4:
            continue
        start, end, base = move
        rng = np.random.default_rng(2000 + seed)
        picked_up, missed = (f"a{k}" for k in rng.choice(len(start), 2, replace=False))
        tracker = _one_unit("a", base, start)
        tracker.placeholder_units = {"a"}
        tracker.models[picked_up].gone = tracker.models[picked_up].lost = True
        put = {f"a{k}": xy for k, xy in enumerate(end) if f"a{k}" != missed}
        seen = [
            {"x": x + rng.normal(0, 0.01), "y": y + rng.normal(0, 0.01), "base": base, "player": "red"}
            for x, y in put.values()
        ]
        tracker.update(seen)
        drawn += 1
        kept += all(math.dist((tracker.models[mid].x, tracker.models[mid].y), xy) < 0.1 for mid, xy in put.items())
    assert drawn == 194
    assert kept >= 158, kept


def test_a_pair_slid_along_its_line_with_its_rear_model_put_down_by_its_mates_old_place_is_all_moved() -> None:
    # Grinding-Annihilation, Formation Cohesion: a formation ends any kind of move as a single cohesive group. Two
    # 40 mm models of a player's lump (not assigned to units yet, not told which moved) slide 2.4" along their line,
    # each put down 0.3" off the common shift on each axis (a rendered game, seed 51): the rear one lands 0.24" from
    # where the front one stood, within the 0.25" a model still where it stood is read. Read as "the front one still,
    # the rear one leapfrogged 4.6"" (0.24" off plus 0.2") it was cheaper than both moved, 0.9" apart off their
    # common shift; the two stayed swapped all game. A still model is read again within 0.04", so being read 0.24"
    # from where it stood weighs 4x.
    tracker = _one_unit("a", "40", {"a1": (18.526, 13.533), "a2": (20.756, 14.005)})
    tracker.placeholder_units = {"a"}
    put = {"a1": (20.988, 13.943), "a2": (23.15, 13.511)}
    update = tracker.update([{"x": x, "y": y, "base": "40", "player": "red"} for x, y in put.values()])
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put
    assert sorted((mv.model, round(mv.length_in, 1)) for mv in update.moves) == [("a1", 2.5), ("a2", 2.4)]


def test_a_model_not_seen_stays_put_while_its_unit_moves_a_model_at_a_time() -> None:
    # Grinding-Annihilation, Move Phase: the players activate u (they tell the page) and move its three 25 mm models
    # one at a time (a rendered game, seed 49). a3 stands where the camera cannot see it (shown where its unit's last
    # move put it, marked not seen). a1 moves 3.9" while a2 is read still where it stood: a3 was guessed to move with
    # a1, then again with a2 (7.9" from where it stood), and two estimated moves went into the history. Nothing shows
    # a3 left: it stays shown where it was until it is seen.
    tracker = _one_unit("a", "25", {"a1": (24.494, 47.153), "a2": (25.591, 46.993), "a3": (26.922, 47.065)})
    tracker.models["a3"].lost = tracker.models["a3"].guessed = True
    for pieces in ([(21.803, 50.023), (25.594, 46.986)], [(21.805, 50.02), (22.888, 49.867)]):
        update = tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in pieces], "a")
        assert update.vanished == ("a3",) and (tracker.models["a3"].x, tracker.models["a3"].y) == (26.922, 47.065)
    assert [h["model"] for h in tracker.history] == ["a1", "a2"]
    pieces = [(21.805, 50.019), (22.877, 49.863), (24.235, 49.953)]
    update = tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in pieces], "a")
    assert not update.vanished and (tracker.models["a3"].x, tracker.models["a3"].y) == (24.235, 49.953)
    assert [(h["model"], round(h["length_in"], 2)) for h in tracker.history][-1] == ("a3", 3.94)


def _random_activation(
    seed: int,
) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]], str, list[list[str]], str]:
    """A unit of 3-6 alike models (a line, or two ranks) moved 3-8" a model at a time, each put down 0.3" off the
    common shift on each axis, in a random order; at one step two models leave their places in one settled frame.
    Returns where they stood and end, the base, the models moved at each settled frame, and one of the two (the
    detector misses its piece from then on)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    base = str(rng.choice(["25", "32"]))
    across_in = float(base) / 25.4
    gap_in = across_in + rng.uniform(0.1, 0.5)
    per_rank = n if n <= 3 or rng.random() < 0.5 else math.ceil(n / 2)
    start = {f"a{k}": (20 + (k % per_rank) * gap_in, 20 + (k // per_rank) * gap_in) for k in range(n)}
    angle = rng.uniform(0, 2 * math.pi)
    shift = np.array([math.cos(angle), math.sin(angle)]) * rng.uniform(3, 8)
    end: dict[str, tuple[float, float]] = {}
    for mid, xy in start.items():
        for _ in range(50):  # put down clear of the bases already down and of those still waiting
            x, y = np.array(xy) + shift + rng.normal(0, 0.3, 2)
            if all(math.dist((x, y), q) > across_in + 0.05 for q in [*end.values(), *start.values()]):
                end[mid] = (float(x), float(y))
                break
    order = [str(mid) for mid in rng.permutation(list(start))]
    two = int(rng.integers(0, n - 1))
    missed = order[two + int(rng.integers(0, 2))]
    steps = [order[:two], [order[two], order[two + 1]], order[two + 2 :]]
    frames = [[mid] for mid in steps[0]] + [steps[1]] + [[mid] for mid in steps[2]]
    return start, end, base, frames, missed


def _kept_over_random_activations(told: bool, one_at_a_time: bool) -> tuple[int, int]:
    """Of 200 seeded ``_random_activation`` units (those put down clear of one another), how many end with every seen
    piece given its own model, and how many were drawn. ``told``: the tracker is told the unit moves;
    ``one_at_a_time``: the two that leave together in one frame leave in two."""
    kept = drawn = 0
    for seed in range(200):
        start, end, base, frames, missed = _random_activation(seed)
        if len(end) < len(start):
            continue
        if one_at_a_time:
            frames = [[mid] for movers in frames for mid in movers]
        rng = np.random.default_rng(1000 + seed)
        tracker = _one_unit("a", base, start)
        now = dict(start)
        for movers in frames:
            now |= {mid: end[mid] for mid in movers}
            seen = [
                {"x": x + rng.normal(0, 0.01), "y": y + rng.normal(0, 0.01), "base": base, "player": "red"}
                for mid, (x, y) in now.items()
                if not (mid == missed and now[mid] == end[mid])
            ]
            tracker.update(seen, "a" if told else None)
        drawn += 1
        kept += all(
            math.dist((tracker.models[mid].x, tracker.models[mid].y), xy) < 0.1
            for mid, xy in end.items()
            if mid != missed
        )
    return kept, drawn


def test_a_unit_moved_a_model_at_a_time_with_two_leaving_at_once_and_one_missed_keeps_its_ids() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move, and a player moves a unit's models one at
    # a time (not told which unit). Seeded: 200 units drawn, 192 put down clear of one another. At one step two
    # models leave in one settled frame and the detector misses one of them from then on: which made the piece seen
    # is a coin toss, settled (or not) by the shift the models moved later make. The tracker before this session
    # gave every seen piece its own model at the end in 162; this one in 179, and none it kept is lost. Most of the
    # rest are a line slid along by a gap, which the pieces explain as well the other way round.
    kept, drawn = _kept_over_random_activations(told=False, one_at_a_time=False)
    assert drawn == 192
    assert kept >= 176, kept


def test_a_model_put_down_well_off_its_units_shift_is_picked_up_beside_where_its_mates_now_stand() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move, so a player puts five 25 mm models down
    # about 4.4" on, one of them (a4) 1.2" off where the others' common shift would put it: beyond the reach of the
    # unit's match (a rendered game, seed 46, 0.3" off on each axis). A model left without a piece is picked up
    # again on a piece within 3" of a unit-mate, but that was measured from where the mates had stood, 3.1" from
    # a4's piece: a4 was reported not seen and its piece unknown for the rest of the game.
    start = {"a1": (15.723, 47.943), "a2": (16.735, 48.064), "a3": (17.786, 48.098), "a4": (15.667, 49.186)}
    start["a5"] = (16.741, 49.221)
    put = {"a1": (19.131, 50.361), "a2": (20.848, 50.132), "a3": (22.043, 50.239), "a4": (18.62, 51.715)}
    put["a5"] = (21.038, 51.754)
    tracker = _one_unit("a", "25", start)
    update = tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in put.values()])
    assert not update.desync and not update.vanished and not update.unexplained
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put


def test_a_model_moved_first_of_its_crowded_unit_keeps_its_id_when_the_players_said_which_unit_moves() -> None:
    # Grinding-Annihilation, Move Phase: the players activate u (they tell the page) and move its models one at a
    # time, 28.5 mm models in two ranks, a3 first, 2.2" (a rendered game, seed 46). Each model and each piece
    # make a guess at the unit's shift. The dozen played out, the likeliest by a lower bound, were five shifts
    # (a gap or two along or across the ranks) made over by near-alike pieces, within 0.1" of one another; the
    # one a3's piece makes was not among them: a3 was given a2's piece, a2 was taken for lost, and a3's piece was
    # left to no model.
    start = {"a1": (22.36, 40.31), "a2": (23.565, 40.054), "a3": (24.772, 40.107), "a4": (22.524, 41.568)}
    start |= {"a5": (23.752, 41.539), "a6": (25.034, 41.43)}
    put = dict(start) | {"a3": (26.62, 38.864)}
    tracker = _one_unit("a", "28.5", start)
    update = tracker.update([{"x": x, "y": y, "base": "28.5", "player": "red"} for x, y in put.values()], "a")
    assert not update.desync and not update.uncertain
    assert [(mv.model, round(mv.length_in, 2)) for mv in update.moves] == [("a3", 2.23)]
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put


def test_models_already_moved_in_their_activation_keep_their_pieces_when_the_last_one_is_not_seen() -> None:
    # Grinding-Annihilation, Move Phase: the players activate u (they tell the page) and move its three 25 mm models
    # one at a time, about 9.2" each (a rendered game, seed 49). a1 and a2 are put down; then a3 is moved too, and
    # the detector misses its piece in that frame. a1's piece is 0.01" from where a1 was put down. It was given to
    # a3 instead (an 11.3" move, 2.4" off the shift a1 and a2 made), and a1 was reported not seen. The reading that
    # keeps a1 and a2 where they were was the cheapest, but readings within 0.2" of it are weighed by how far their
    # shift is from the one a1 and a2 made, and its shift, moving no model, was (0, 0). a1 and a3 then stayed
    # swapped all game.
    tracker = _one_unit("a", "25", {"a1": (32.512, 51.652), "a2": (33.586, 51.498), "a3": (34.928, 51.568)})
    pieces = [(24.494, 47.153), (33.586, 51.498), (34.928, 51.568)]
    tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in pieces], "a")
    pieces = [(24.5, 47.152), (25.591, 46.993), (34.925, 51.568)]
    tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in pieces], "a")
    pieces = [(24.501, 47.152), (25.594, 46.995)]  # (a3 not among them)
    update = tracker.update([{"x": x, "y": y, "base": "25", "player": "red"} for x, y in pieces], "a")
    assert update.vanished == ("a3",) and not update.moves
    assert [(m.x, m.y) for m in tracker.models.values()][:2] == [(24.494, 47.153), (25.591, 46.993)]
    # a3 is shown where its mates' shift puts it (it stands at (26.932, 47.081)), marked not seen there.
    a3 = tracker.models["a3"]
    assert a3.guessed and math.dist((a3.x, a3.y), (26.932, 47.081)) < 0.05


def test_which_model_made_a_piece_is_settled_by_the_shift_its_unit_mates_make_later_in_the_activation() -> None:
    # Grinding-Annihilation, Move Phase: a unit of three 25 mm models moved one at a time, 0.3" off one common
    # shift, not told which unit (a rendered game, seed 49). Two models left their places in one settled frame and
    # one piece was seen, 6.5" from a2 and 4.8" from a3: either could have made it (reported unsure). a2 was given
    # it. Then a1 moved 4.3", by a shift that puts a3 0.5" from that piece and a2 nowhere near: the activation
    # matched again from where it began gives the piece to a3, and a2 is the model not seen.
    start = {"a1": (23.783, 47.206), "a2": (25.029, 46.554), "a3": (26.625, 47.201)}
    tracker = _one_unit("a", "25", start)
    update = tracker.update(
        [{"x": x, "y": y, "base": "25", "player": "red"} for x, y in [(23.787, 47.208), (30.866, 49.435)]]
    )
    assert update.uncertain and update.vanished  # one of a2 and a3 has the piece, the other is not seen
    update = tracker.update(
        [{"x": x, "y": y, "base": "25", "player": "red"} for x, y in [(27.555, 49.227), (30.866, 49.437)]]
    )
    models = tracker.models
    assert (models["a1"].x, models["a1"].y) == (27.555, 49.227) and (models["a3"].x, models["a3"].y) == (30.866, 49.437)
    assert models["a2"].lost and models["a2"].guessed and update.vanished == ("a2",)
    assert math.dist((models["a2"].x, models["a2"].y), (28.772, 48.028)) < 0.8  # where it truly stands
    # the history: each model's move once, from where the activation began; a2's estimated
    moves = {h["model"]: h for h in tracker.history if h["event"] == "move"}
    assert sorted(moves) == ["a1", "a2", "a3"] and len(tracker.history) == 3
    assert moves["a3"]["from"] == list(start["a3"]) and moves["a3"]["length_in"] == pytest.approx(4.8, abs=0.01)
    assert moves["a2"].get("estimated") and not moves["a3"].get("estimated")


def test_a_model_put_down_beyond_its_units_shift_and_picked_up_beside_its_mates_is_not_also_guessed() -> None:
    # Grinding-Annihilation, Move Phase: each model moves up to its Move, so a player puts one of three 50 mm models
    # down 1" off where the others' common shift would put it. No one translation brings it within reach of its
    # piece; it is picked up beside its unit-mates instead. It was then also taken for lost and moved again to where
    # the translation put it, 1.3" from its piece, with a second, estimated move in the history.
    tracker = _one_unit("a", "50", {"a0": (11.98, 48.83), "a1": (13.97, 48.59), "a2": (15.74, 47.56)})
    put = {"a0": (12.64, 44.8), "a1": (15.11, 45.51), "a2": (16.49, 42.99)}
    update = tracker.update([{"x": x, "y": y, "base": "50", "player": "red"} for x, y in put.values()], "a")
    assert not update.vanished and not update.unexplained
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == put
    assert not any(m.lost or m.guessed for m in tracker.models.values())
    assert sorted(h["model"] for h in tracker.history) == ["a0", "a1", "a2"]
    assert not any(h.get("estimated") for h in tracker.history)


def test_a_casualty_is_asked_about_once_and_not_raised_by_a_model_moved_where_it_stood() -> None:
    # b2 is removed as a casualty (Focal Point, Removing Models: "remove models to represent casualties"). The players are
    # asked about it once, not at every later frame. Then a2 is moved onto the spot where b2 stood: that piece
    # is a2's (a2's own spot is empty), not b2 back from the dead with a2 gone missing, as it was read before.
    tracker = IdentityTracker.from_scene(ROW)
    dead = frozenset({"b2"})
    update = tracker.update(row_dets(0.0, skip=dead))
    assert update.vanished == ("b2",) and any("not seen: b2" in m for m in update.messages)
    update = tracker.update(row_dets(0.0, skip=dead))
    assert update.vanished == ("b2",) and not any("not seen" in m for m in update.messages)
    dets_ = row_dets(0.0, skip=dead)
    dets_[1] = {**dets_[1], "y": 8.0}  # a2 (8.0, 5.0) -> (8.0, 8.0), where b2 stood
    update = tracker.update(dets_)
    assert [mv.model for mv in update.moves] == ["a2"] and update.moves[0].length_in == pytest.approx(3.0)
    assert update.vanished == ("b2",) and update.returned == () and not update.unexplained
    assert (tracker.models["a2"].x, tracker.models["a2"].y) == (8.0, 8.0)
    # Its unit then moves 4": b2 is not taken to have moved with it (no guessed move, no model shown).
    dets_ = [{**d, "x": float(d["x"]) + 4.0} if d["id"].startswith("b") else d for d in dets_]
    update = tracker.update(dets_)
    assert sorted(mv.model for mv in update.moves) == ["b1", "b3", "b4"] and update.vanished == ("b2",)
    assert not tracker.models["b2"].guessed and not any(h.get("model") == "b2" for h in tracker.history)


def test_a_model_picked_up_and_put_down_on_its_units_shift_is_that_model_not_a_mate_the_detector_missed() -> None:
    # A player's lump (red models not assigned to units yet) from a rendered game. r1 was not seen for a while and
    # is taken as picked up. Then its formation moves 2.3" and r1 is put down with it (Grinding-Annihilation,
    # Formation Cohesion: a formation ends any kind of move as a single cohesive group), while the detector
    # misses r4's piece in this frame. The piece 0.17" from where the formation's shift puts r1 is r1's. It was
    # given to r4 instead, 1.3" off the shift its mates share, because a picked-up model seen again counted
    # against a reading as if it were a casualty put back.
    start = {"r1": (6.947, 48.181), "r2": (8.465, 48.07), "r3": (10.01, 48.655), "r4": (7.26, 49.524)}
    start |= {"r5": (8.64, 49.49), "f1": (20.0, 40.0)}
    tracker = _one_unit("red-found", "28.5", start)
    tracker.placeholder_units = {"red-found"}  # as vision/live/identified.py sets it
    tracker.models["r1"].gone = tracker.models["r1"].lost = True
    put = {"r1": (9.391, 48.377), "r2": (10.742, 48.208), "r3": (12.283, 48.791), "r5": (10.921, 49.674)}
    put["f1"] = start["f1"]
    update = tracker.update([{"x": x, "y": y, "base": "28.5", "player": "red"} for x, y in put.values()])
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items() if mid in put} == put
    assert update.vanished == ("r4",) and update.returned == ("r1",) and not update.uncertain
    assert (tracker.models["r4"].x, tracker.models["r4"].y) != put["r1"]


def test_two_unit_mates_the_detector_misses_in_turn_keep_their_ids() -> None:
    # The camera misses b2 for one frame, then b3 for the next, while b2 is seen again where it stood (no unit
    # moved). Not told which unit moved, the tracker read b3 moved onto b2's spot, b2 still picked up, and at the
    # next frame, all four seen, b2 took b3's piece: the two had swapped ids for good. A model not seen for one
    # frame only, seen again where it stood while its unit stood still and a unit-mate is missed, was missed too.
    tracker = IdentityTracker.from_scene(ROW)
    update = tracker.update(row_dets(0.0, skip=frozenset({"b2"})))
    assert update.vanished == ("b2",)
    update = tracker.update(row_dets(0.0, skip=frozenset({"b3"})))
    assert update.vanished == ("b3",) and update.moves == () and update.returned == ("b2",)
    assert (tracker.models["b2"].x, tracker.models["b2"].y) == (8.0, 8.0)
    update = tracker.update(row_dets(0.0))
    assert not update.vanished and not update.moves and not update.unexplained
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {m["id"]: (m["x"], m["y"]) for m in ROW["models"]}


def test_alike_models_of_two_units_standing_still_the_detector_misses_in_turn_keep_their_ids() -> None:
    # Unit c stands 3" behind unit b, bases alike. The camera misses c2 for one frame; in the next, unit a moves 3"
    # (Grinding-Annihilation, Move Phase: one unit is activated at a time) while the camera misses b3 and sees c2
    # again where it stood. Not told which unit moved, the tracker read "b3 moved onto c2's spot, c2 still picked
    # up" (one model unaccounted for, against two), so it took two units moving at once for a detector's two misses;
    # at the next frame c2 took b3's piece and the two had swapped ids for good. A model missed for one frame, seen
    # again where it stood, while a model of another unit standing still is missed now, was missed too.
    tracker = IdentityTracker.from_scene(THREE_ROWS)
    update = tracker.update(three_rows_dets(0.0, frozenset({"c2"})))
    assert update.vanished == ("c2",)
    update = tracker.update(three_rows_dets(3.0, frozenset({"b3"})))
    assert update.vanished == ("b3",) and update.returned == ("c2",) and not update.unexplained
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]
    assert all(mv.length_in == pytest.approx(3.0) for mv in update.moves)
    update = tracker.update(three_rows_dets(3.0, frozenset()))
    assert not update.vanished and not update.moves and not update.unexplained
    want = {m["id"]: (m["x"] + (3.0 if m["unit"] == "a" else 0.0), m["y"]) for m in THREE_ROWS["models"]}
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == want


def test_a_guessed_model_seen_again_says_nothing_of_another_units_model_missed_now() -> None:
    # Unit a moves 3" with a2 missed (guessed on the shift) and c2, of a unit standing still, missed too. Then a moves
    # 3" more, a2 seen again, c2 seen again where it stood and b3 missed (the detector missing two standing models
    # in turn, as in the test above). A reading that lost a model seen until now, while a guessed model was seen
    # again, counted that against itself whichever unit the lost model was of, as though the guessed model's piece
    # were the lost one's: "b3 moved onto c2's spot" won, and b3 and c2 swapped ids. Only the guessed model's own
    # unit-mates lost now count so.
    tracker = IdentityTracker.from_scene(THREE_ROWS)
    update = tracker.update(three_rows_dets(3.0, frozenset({"a2", "c2"})))
    assert update.vanished == ("a2", "c2") and tracker.models["a2"].guessed
    update = tracker.update(three_rows_dets(6.0, frozenset({"b3"})))
    assert update.vanished == ("b3",) and update.returned == ("c2",) and not update.unexplained
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4"]
    want = {m["id"]: (m["x"] + (6.0 if m["unit"] == "a" else 0.0), m["y"]) for m in THREE_ROWS["models"]}
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == want  # (b3 shown where it stood)


def test_a_pair_whose_one_piece_went_to_the_wrong_model_is_paired_again_when_both_are_seen() -> None:
    # A rendered game's unit of two alike models (replay_tracker.py --miss 0.03, table 205) moves 3.7" while the
    # camera misses b1: its one piece could be either model's, and went to b1 (called uncertain). In the next frame
    # unit a moves (not told) and both of b's pieces are seen. Matching b's move again from where it stood pairs them
    # right, but a reading was weighed by the length of every move it recorded, so the redone moves counted in full
    # (3.7" each) against the guessed b2 moving 2.4" onto b1's piece: the two kept each other's ids. A move is now
    # weighed from where the model was shown before the update.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": [
            {"id": "a1", "unit": "a", "base": "32", "x": 20.0, "y": 20.0},
            {"id": "b1", "unit": "b", "base": "32", "x": 7.53, "y": 48.20},
            {"id": "b2", "unit": "b", "base": "32", "x": 8.71, "y": 48.06},
        ],
    }
    a1 = {"x": 20.0, "y": 20.0, "base": "32", "player": "red"}
    b1 = {"x": 6.99, "y": 44.55, "base": "32", "player": "blue"}
    b2 = {"x": 8.17, "y": 44.42, "base": "32", "player": "blue"}
    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update([a1, b2])
    assert update.uncertain == ("b1",) and update.vanished == ("b2",)
    update = tracker.update([{**a1, "x": 23.0}, b1, b2])
    assert not update.vanished and not update.unexplained and not update.uncertain
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {
        "a1": (23.0, 20.0),
        "b1": (6.99, 44.55),
        "b2": (8.17, 44.42),
    }
    b_moves = {mv.model: mv for mv in update.moves if mv.unit == "b"}
    assert b_moves["b1"].start == (7.53, 48.20) and b_moves["b2"].start == (8.71, 48.06)
    # b2's move runs from where it was seen to where it is seen: as sure as b1's, not a guess's 0.5"
    assert b_moves["b2"].sigma_in == b_moves["b1"].sigma_in < 0.05
    recorded = [e for e in tracker.history if e.get("unit") == "b"]
    assert sorted(e["model"] for e in recorded) == ["b1", "b2"] and not any("estimated" in e for e in recorded)


def test_not_told_a_model_lost_in_its_units_last_move_seen_again_as_another_unit_moves_pairs_that_move_again() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 201). Unit c, six alike
    # models, moves about 3.3", spread as it comes down, while the camera misses c3: c3 took c2's piece (called
    # uncertain) and c2 was guessed on the shift. In the next frame unit a moves (not told) and all of c is seen.
    # Read as any unit moving, the lost c2 was group-matched alone and took c3's piece, so the two kept each
    # other's ids for good; c's move is now matched again from where it stood, as for a lost model reacquired.
    c_at = {
        "c1": (25.70, 10.32),
        "c2": (28.89, 11.15),
        "c3": (29.68, 9.63),
        "c4": (26.10, 13.26),
        "c5": (28.53, 13.25),
        "c6": (30.19, 13.12),
    }
    c_to = {
        "c1": (23.09, 7.94),
        "c2": (27.53, 8.50),
        "c3": (25.96, 6.85),
        "c4": (23.61, 11.20),
        "c5": (25.53, 12.15),
        "c6": (27.85, 10.99),
    }
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "c", "player": "blue"}],
        "models": [{"id": "a1", "unit": "a", "base": "32", "x": 10.0, "y": 30.0}]
        + [{"id": mid, "unit": "c", "base": "40", "x": x, "y": y} for mid, (x, y) in c_at.items()],
    }
    a1 = {"x": 10.0, "y": 30.0, "base": "32", "player": "red"}
    c_pieces = {mid: piece(xy, "40", "blue") for mid, xy in c_to.items()}
    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update([a1] + [piece for mid, piece in c_pieces.items() if mid != "c3"])
    assert update.uncertain == ("c3",) and update.vanished == ("c2",)
    update = tracker.update([{**a1, "x": 13.0}, *c_pieces.values()])
    assert not update.vanished and not update.unexplained and not update.uncertain
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items() if m.unit == "c"} == c_to
    # c's moves made again from where each model stood, seen at both ends: the guessed one taken back
    c_moves = {mv.model: mv for mv in update.moves if mv.unit == "c"}
    assert sorted(c_moves) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert all(c_moves[mid].start == c_at[mid] for mid in c_moves)
    assert abs(c_moves["c3"].length_in - math.dist(c_at["c3"], c_to["c3"])) < 1e-9
    assert not any("estimated" in e for e in tracker.history if e.get("unit") == "c")


def test_a_unit_moved_with_a_model_missed_leaves_out_the_model_whose_leaving_out_fits_its_move_best() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 204). Unit b, three alike
    # models, moves about 5", spread as it comes down, while the camera misses b1. The group match paired b1 to b3's
    # piece (b1 and b2 moved alike, b3 put down 1" off their shift) and left b3 without one: no piece was left over
    # for a model left without one to take. Of the sets of models its pieces could be, the one whose move they fit
    # best (the least offsets from its mean move) is now taken: b3 keeps its own piece and b1 is the model missed.
    # By little: on b2's move, b3's piece is 1.81" off where it puts b3 and 2.06" off where it puts b1, so for a unit
    # that spread b3 is called uncertain (session 93), until all three are seen again.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": [
            {"id": "a1", "unit": "a", "base": "32", "x": 10.0, "y": 10.0},
            {"id": "b1", "unit": "b", "base": "32", "x": 37.05, "y": 45.17},
            {"id": "b2", "unit": "b", "base": "32", "x": 38.79, "y": 45.25},
            {"id": "b3", "unit": "b", "base": "32", "x": 35.78, "y": 47.66},
        ],
    }
    a1 = {"x": 10.0, "y": 10.0, "base": "32", "player": "red"}
    b_to = {"b1": (35.76, 40.04), "b2": (37.70, 41.31), "b3": (34.06, 42.02)}
    b_pieces = {mid: piece(xy, "32", "blue") for mid, xy in b_to.items()}
    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update([a1, b_pieces["b2"], b_pieces["b3"]])
    assert update.vanished == ("b1",) and update.uncertain == ("b3",)
    assert [(tracker.models[mid].x, tracker.models[mid].y) for mid in ("b2", "b3")] == [b_to["b2"], b_to["b3"]]
    # b1 not seen, shown where b's move puts it (guessed), within the 0.5" a guess is unsure by
    assert (
        tracker.models["b1"].guessed and math.dist((tracker.models["b1"].x, tracker.models["b1"].y), b_to["b1"]) < 0.5
    )
    update = tracker.update([{**a1, "x": 13.0}, *b_pieces.values()])
    assert not update.vanished and not update.unexplained and not update.uncertain
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items() if m.unit == "b"} == b_to
    b1_moves = [e for e in tracker.history if e.get("model") == "b1"]
    assert len(b1_moves) == 1 and b1_moves[0]["to"] == list(b_to["b1"]) and "estimated" not in b1_moves[0]


@pytest.mark.parametrize("told", [True, False])
def test_a_unit_of_two_spread_as_it_comes_down_is_matched_whole_not_onto_a_missed_models_spot(told: bool) -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 207). The camera misses b3
    # for a frame; then unit a, two alike models, moves 2.3" and 3.7", one put down 1.4" off the other's shift.
    # Each model's nearest piece to the shift the other made was the same piece, so every guess at a's shift paired
    # one model only, all as good: a2 went 8.5" onto b3's spot, b3 (seen again there) was lost, and, not told, b's
    # last move was matched again onto a's pieces. A guess is now also re-estimated from the models paired one
    # piece each, which pairs both of a's models.
    b_at = {"b1": (19.93, 32.36), "b2": (21.50, 33.73), "b3": (22.54, 32.19), "b4": (19.41, 34.67)}
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "red"}],
        "models": [
            {"id": "a1", "unit": "a", "base": "28.5", "x": 13.89, "y": 27.57},
            {"id": "a2", "unit": "a", "base": "28.5", "x": 15.18, "y": 27.90},
        ]
        + [{"id": mid, "unit": "b", "base": "28.5", "x": x, "y": y} for mid, (x, y) in b_at.items()],
    }

    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update(
        [piece(xy, "28.5") for xy in [(13.89, 27.57), (15.18, 27.90)]]
        + [piece(b_at[m], "28.5") for m in ("b1", "b2", "b4")]
    )
    assert update.vanished == ("b3",)
    a_to = {"a1": (11.53, 24.76), "a2": (13.53, 26.34)}
    update = tracker.update(
        [piece(xy, "28.5") for xy in [*b_at.values(), *a_to.values()]], active_unit="a" if told else None
    )
    assert not update.vanished and not update.unexplained and not update.uncertain
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {**a_to, **b_at}
    assert sorted((mv.model, round(mv.length_in, 2)) for mv in update.moves) == [("a1", 3.67), ("a2", 2.27)]


def test_not_told_a_model_missed_for_a_frame_seen_again_as_its_unit_moves_spread_comes_down_with_it() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 226). The camera misses b5
    # for a frame; then unit b moves about 2.5", spread as it comes down, b5 seen again 1.3" off its mates' median
    # move, while c2, standing 12" away, is missed. b5 counted as put back (a model picked up earlier, seen again:
    # one unaccounted for), so "c2 moved 12" onto b5's piece, b5 still picked up" accounted for more and won. A
    # model put down with its unit comes down off their shared move as its mates do, so within twice the group
    # match's reach of their median move it counts as moved with them.
    b_at = {
        "b1": (14.73, 42.53),
        "b2": (17.75, 42.32),
        "b3": (18.69, 43.71),
        "b4": (16.33, 45.92),
        "b5": (18.44, 45.28),
    }
    b_to = {
        "b1": (15.36, 40.32),
        "b2": (18.28, 39.75),
        "b3": (19.26, 40.66),
        "b4": (16.56, 43.78),
        "b5": (17.72, 43.13),
    }
    c_at = {"c1": (16.03, 29.51), "c2": (18.28, 30.99)}
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "b", "player": "red"}, {"id": "c", "player": "red"}],
        "models": [{"id": mid, "unit": "b", "base": "25", "x": x, "y": y} for mid, (x, y) in b_at.items()]
        + [{"id": mid, "unit": "c", "base": "28.5", "x": x, "y": y} for mid, (x, y) in c_at.items()],
    }

    tracker = IdentityTracker.from_scene(scene)
    b_seen = [piece(xy, "25") for mid, xy in b_at.items() if mid != "b5"]
    update = tracker.update(b_seen + [piece(xy, "28.5") for xy in c_at.values()])
    assert update.vanished == ("b5",)
    update = tracker.update([piece(xy, "25") for xy in b_to.values()] + [piece(c_at["c1"], "28.5")])
    assert update.vanished == ("c2",) and not update.unexplained
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {**b_to, **c_at}
    assert sorted(mv.model for mv in update.moves) == ["b1", "b2", "b3", "b4", "b5"]


def test_a_model_lost_in_its_units_move_is_picked_up_again_out_of_coherency_by_the_spread_it_came_down_with() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 221), told which unit moves.
    # Unit a, four alike models, moves about 4" while the camera misses a4, guessed on the unit's move, 1" short of
    # where it came down. In the next frame b moves and all of a is seen. a4's piece stands 3.7" (2.6" edge to
    # edge) from its nearest mate's: coherency (2", Grinding-Annihilation, Formation Cohesion) widened by the two
    # models' being put down off their move, but beyond the 3" (centre to centre) a lost model looked for a piece
    # in, so a4 stayed lost beside a piece no model explained. A lost model now looks within coherency of a mate,
    # edge to edge, give or take each one's being put down off the move.
    a_at = {"a1": (22.91, 7.51), "a2": (24.77, 8.22), "a3": (24.75, 6.63), "a4": (20.52, 7.01)}
    a_to = {"a1": (19.19, 7.69), "a2": (21.65, 7.76), "a3": (20.25, 5.66), "a4": (15.75, 6.39)}
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": [{"id": mid, "unit": "a", "base": "28.5", "x": x, "y": y} for mid, (x, y) in a_at.items()]
        + [{"id": "b1", "unit": "b", "base": "32", "x": 40.0, "y": 30.0}],
    }

    b1 = piece((40.0, 30.0), "32", "blue")
    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update([piece(xy, "28.5") for mid, xy in a_to.items() if mid != "a4"] + [b1], active_unit="a")
    assert update.vanished == ("a4",) and tracker.models["a4"].guessed
    update = tracker.update([piece(xy, "28.5") for xy in a_to.values()] + [{**b1, "x": 43.0}], active_unit="b")
    assert not update.vanished and not update.unexplained and not update.uncertain
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items() if m.unit == "a"} == a_to
    # a4's guessed move ends where it is seen now, from where it stood
    a4_moves = [e for e in tracker.history if e.get("model") == "a4"]
    assert len(a4_moves) == 1 and a4_moves[0]["from"] == list(a_at["a4"]) and a4_moves[0]["to"] == list(a_to["a4"])
    assert "estimated" not in a4_moves[0]


def test_a_casualty_taken_off_earlier_does_not_take_the_place_of_a_model_its_unit_moved() -> None:
    # b3 is picked up (a casualty) and stays off; b's other two models then move 4.5" along their line. Their
    # pieces stand 1.4" apart, as b2 and b3 stood, not 1.5" as b1 and b2: a model the camera missed may give its
    # piece back to the set of models whose move the pieces fit best, but one picked up earlier only takes a piece
    # no model explains. (Casualties are removed from the table: Affinity: Focal Point, Removing Models.)
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "b", "player": "blue"}],
        "models": [
            {"id": "b1", "unit": "b", "base": "32", "x": 10.0, "y": 20.0},
            {"id": "b2", "unit": "b", "base": "32", "x": 11.5, "y": 20.0},
            {"id": "b3", "unit": "b", "base": "32", "x": 12.9, "y": 20.0},
        ],
    }

    def pieces(*xs: float) -> list[dict[str, Any]]:
        return [piece((x, 20.0), "32", "blue") for x in xs]

    tracker = IdentityTracker.from_scene(scene)
    assert tracker.update(pieces(10.0, 11.5)).vanished == ("b3",)
    tracker.update(pieces(10.0, 11.5))
    update = tracker.update(pieces(14.5, 15.9), active_unit="b")
    assert update.vanished == ("b3",) and tracker.models["b3"].gone
    assert [(tracker.models[mid].x, tracker.models[mid].y) for mid in ("b1", "b2")] == [(14.5, 20.0), (15.9, 20.0)]
    assert sorted(mv.model for mv in update.moves) == ["b1", "b2"]


@pytest.mark.parametrize("told", [True, False])
def test_a_casualty_does_not_come_back_on_a_second_read_of_a_moving_models_base(told: bool) -> None:
    # Grinding-Annihilation: a destroyed troop "is removed from the warfield", and a moved troop "cannot end its move
    # on top of another troop". b3 is removed; b1 and b2 then move (3, -2). The detector reads b2's base twice: once
    # where it stands, once 0.82" off, beside it, where b3 would stand had it come down with its unit. Two 32 mm
    # bases 0.82" apart would overlap by 0.44": the second piece is no room for b3, and no 3.6" move of b3 is
    # recorded. It is b2's base read twice, no new piece to ask the players about (seen in a rendered game, seed 90:
    # a 32 mm base read as two 25 mm pieces, the second one in every frame after).
    tracker = _one_unit("b", "32", {"b1": (10.0, 20.0), "b2": (11.5, 20.0), "b3": (13.0, 20.0)})
    stood = [piece((10.0, 20.0), "32"), piece((11.5, 20.0), "32")]
    assert tracker.update(stood).vanished == ("b3",)
    tracker.update(stood)
    moved = [piece((13.0, 18.0), "32"), piece((14.5, 18.0), "32"), piece((15.3, 18.2), "32")]
    update = tracker.update(moved, active_unit="b" if told else None)
    assert update.returned == () and update.vanished == ("b3",) and tracker.models["b3"].gone
    assert sorted(mv.model for mv in update.moves) == ["b1", "b2"]
    assert update.unexplained == () and not any("match no known model" in text for text in update.messages)
    assert [(tracker.models[mid].x, tracker.models[mid].y) for mid in ("b1", "b2")] == [(13.0, 18.0), (14.5, 18.0)]


def test_a_second_read_of_a_models_base_is_no_new_model_but_a_piece_put_down_touching_it_is() -> None:
    # A moved troop "cannot end its move on top of another troop" (Grinding-Annihilation, Move Phase): a piece
    # overlapping a model's piece by more than the jitter is that model's base read again, not a model the page should
    # add (IdentifiedScenes adopts each piece no model accounts for as new1, ...). One put down base to base with it
    # (reinforcements, say) is a new piece, and the players are asked about it.
    tracker = _one_unit("b", "32", {"b1": (10.0, 20.0)})
    doubled = tracker.update([piece((10.0, 20.0), "32"), piece((10.8, 20.2), "25")])
    assert doubled.unexplained == () and not doubled.desync and doubled.moves == ()
    touching = tracker.update([piece((10.0, 20.0), "32"), piece((11.13, 20.0), "25")])
    assert touching.unexplained == (1,) and any("match no known model" in text for text in touching.messages)
    assert (tracker.models["b1"].x, tracker.models["b1"].y) == (10.0, 20.0)


def test_not_told_a_model_of_the_unit_that_moved_before_missed_now_does_not_take_the_moving_units_piece() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 200). Unit b moves 3"; then
    # unit a moves about 3", spread as it comes down, while the camera misses b1, standing 3.7" from a3's new place.
    # "Any unit moved" group-matches the unit that moved last first, so b1 took a3's piece, a3 and a2 each took the
    # piece of the mate ahead, and a1 was left behind as a guess: shorter moves in all than a's true ones (a guess
    # is not counted), with one model unaccounted for either way. Only one unit is activated at a time
    # (Grinding-Annihilation, Move Phase), so of readings that account for as much, the one moving fewer units wins.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "red"}],
        "models": [
            {"id": "a1", "unit": "a", "base": "32", "x": 20.81, "y": 49.41},
            {"id": "a2", "unit": "a", "base": "32", "x": 23.03, "y": 50.03},
            {"id": "a3", "unit": "a", "base": "32", "x": 25.50, "y": 50.11},
            {"id": "b1", "unit": "b", "base": "32", "x": 29.45, "y": 41.21},
            {"id": "b2", "unit": "b", "base": "32", "x": 31.0, "y": 40.5},
        ],
    }
    tracker = IdentityTracker.from_scene(scene)
    b_moved = {"a1": (20.81, 49.41), "a2": (23.03, 50.03), "a3": (25.50, 50.11), "b1": (29.45, 44.21)}
    b_moved["b2"] = (31.0, 43.5)
    update = tracker.update([{"x": x, "y": y, "base": "32", "player": "red"} for x, y in b_moved.values()])
    assert sorted(mv.model for mv in update.moves) == ["b1", "b2"]
    a_moved = {"a1": (24.15, 48.52), "a2": (25.37, 48.24), "a3": (27.76, 47.49), "b2": (31.0, 43.5)}
    update = tracker.update([{"x": x, "y": y, "base": "32", "player": "red"} for x, y in a_moved.values()])
    assert update.vanished == ("b1",) and not update.unexplained and not update.uncertain
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3"]
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {**a_moved, "b1": b_moved["b1"]}


def test_a_model_missed_for_a_frame_before_its_spread_unit_moves_is_paired_by_its_move_as_its_mates() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03 --jitter 0.5, table 225): six 50 mm models in
    # two rows. The camera misses u4 for a frame while the unit stands; then the unit is named and moves about 3",
    # spread as the players put it down. The group match leaves u2 and u4 without a piece (put down past its reach),
    # and pairing the moved models again by their least offsets from the shared move (_pair_alike_by_shift) left
    # out u4, as a model whose place was a guess: it had only been missed, and was seen where it stood. u4 then took
    # u2's piece, u5 u4's, and u2 was guessed. A model picked up or missed keeps the place it was seen at.
    before = {"u1": (32.71, 33.51), "u2": (34.74, 33.53), "u3": (36.97, 33.41)}
    before |= {"u4": (32.35, 35.54), "u5": (34.48, 35.54), "u6": (36.68, 35.5)}
    after = {"u1": (31.2, 35.35), "u2": (32.44, 37.24), "u3": (35.53, 35.61)}
    after |= {"u4": (30.37, 39.45), "u5": (33.08, 39.85), "u6": (35.06, 38.02)}
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "u", "player": "red"}, {"id": "o", "player": "blue"}],
        "models": [{"id": mid, "unit": "u", "base": "50", "x": x, "y": y} for mid, (x, y) in before.items()]
        + [{"id": "o1", "unit": "o", "base": "32", "x": 10.0, "y": 10.0}],
    }
    tracker = IdentityTracker.from_scene(scene)
    blue = {"x": 10.0, "y": 10.0, "base": "32", "player": "blue"}
    red = [{"x": x, "y": y, "base": "50", "player": "red"} for mid, (x, y) in before.items() if mid != "u4"]
    update = tracker.update([*red, blue], active_unit="o")
    assert update.vanished == ("u4",)
    red = [{"x": x, "y": y, "base": "50", "player": "red"} for x, y in after.values()]
    update = tracker.update([*red, blue], active_unit="u")
    assert not update.vanished and not update.unexplained
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == {**after, "o1": (10.0, 10.0)}
    assert sorted(mv.model for mv in update.moves) == sorted(after)


def test_not_told_a_model_kept_where_it_stood_but_read_off_there_weighs_against_the_reading() -> None:
    # Positions from a rendered game (replay_tracker.py --miss 0.03, table 227). Unit a, two 40 mm models, slides
    # 3.04" along its own line, a1 coming down 0.37" from where a2 stood, while the camera misses b2 in the unit
    # standing behind. "b moved: b2 onto a2's new piece, a2 still where it stood" explained as much as the truth,
    # with shorter moves (4.26" squared against twice 3.04"), so it won, a2 kept 0.37" off its place, a1 lost.
    # A model kept still is read again within hundredths of an inch: how far off its nearest piece is read now
    # weighs against the reading, STAY_WEIGHT times over, as in the group match.
    a_from = {"a1": (8.09, 21.42), "a2": (9.7, 19.3)}
    a_to = {"a1": (9.92, 19.0), "a2": (11.53, 16.87)}
    b_at = {"b1": (9.2, 12.52), "b2": (11.0, 12.65), "b3": (12.82, 12.51), "b4": (9.5, 14.34), "b5": (11.3, 14.25)}
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "red"}],
        "models": [
            {"id": mid, "unit": mid[0], "base": "40", "x": x, "y": y} for mid, (x, y) in (a_from | b_at).items()
        ],
    }
    tracker = IdentityTracker.from_scene(scene)
    seen = {mid: xy for mid, xy in (a_to | b_at).items() if mid != "b2"}
    update = tracker.update([{"x": x, "y": y, "base": "40", "player": "red"} for x, y in seen.values()])
    assert update.vanished == ("b2",) and not update.unexplained
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2"]
    assert all(mv.length_in == pytest.approx(3.04, abs=0.01) for mv in update.moves)
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == a_to | b_at


def test_a_lone_model_missed_in_the_frame_after_its_move_is_found_where_it_went_when_the_next_unit_is_named() -> None:
    # A hero, a unit of one model (Grinding-Annihilation, Move Phase: each unit is activated in turn), is moved 4"
    # and the camera misses its base in the settled frame after. The players then name unit b: the rules move only
    # b, so the hero's piece, seen now, was left unexplained and the hero shown missing for the rest of the game (or
    # until its next activation). A model of the unit named last, missed since, takes a piece no model explains
    # within a move's reach; its move is recorded as its unit's.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "hero", "player": "red"}, *ROW["units"]],
        "models": [{"id": "h1", "unit": "hero", "base": "40", "x": 20.0, "y": 5.0}, *ROW["models"]],
    }
    tracker = IdentityTracker.from_scene(scene)
    hero = {"x": 20.0, "y": 9.0, "base": "40", "player": "red", "id": "h1"}
    update = tracker.update(row_dets(0.0), active_unit="hero")
    assert update.vanished == ("h1",)
    update = tracker.update([*row_dets(1.0), hero], active_unit="a")
    assert not update.vanished and not update.unexplained and "h1" not in update.uncertain
    assert (tracker.models["h1"].x, tracker.models["h1"].y) == (20.0, 9.0)
    hero_move = next(mv for mv in update.moves if mv.model == "h1")
    assert hero_move.unit == "hero" and hero_move.length_in == pytest.approx(4.0)
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4", "h1"]
    # Two pieces it could be, as near: it takes the nearer, and is called uncertain.
    tracker = IdentityTracker.from_scene(scene)
    tracker.update(row_dets(0.0), active_unit="hero")
    other = {**hero, "x": 20.1, "y": 1.0}
    update = tracker.update([*row_dets(1.0), hero, other], active_unit="a")
    assert update.uncertain == ("h1",) and update.unexplained == (len(row_dets(1.0)) + 1,)


def test_a_model_moved_onto_the_spot_of_a_casualty_taken_off_just_before_is_that_model() -> None:
    # The other side of the rule above: a2 is moved onto the spot b2 stood on, the frame after b2 was taken off
    # as a casualty (Focal Point, Removing Models). a2's piece is a2's: no mate of b2 is missed, so b2 is not
    # taken to be back with a2 gone missing. Likewise b1, b2's unit-mate, moved onto it as its unit moves on.
    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(0.0, skip=frozenset({"b2"})))
    dets_ = row_dets(0.0, skip=frozenset({"b2"}))
    dets_[1] = {**dets_[1], "y": 8.0}  # a2 (8.0, 5.0) -> (8.0, 8.0), where b2 stood
    update = tracker.update(dets_)
    assert [mv.model for mv in update.moves] == ["a2"] and update.vanished == ("b2",) and update.returned == ()

    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(0.0, skip=frozenset({"b2"})))
    # unit b slides 1.5" along its row: b1 comes down on b2's spot
    moved = [{**d, "x": float(d["x"]) + 1.5} if str(d["id"]).startswith("b") else d for d in row_dets(0.0)]
    update = tracker.update([d for d in moved if d["id"] != "b2"])
    assert sorted(mv.model for mv in update.moves) == ["b1", "b3", "b4"] and update.vanished == ("b2",)


def test_a_model_picked_up_and_put_back_where_it_stood_keeps_its_id() -> None:
    # b3 is lifted (to check its base, or under a hand held still) and put back on its spot two frames on.
    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(0.0, skip=frozenset({"b3"})))
    tracker.update(row_dets(0.0, skip=frozenset({"b3"})))
    update = tracker.update(row_dets(0.0))
    assert update.returned == ("b3",) and not update.vanished and not update.unexplained and update.moves == ()


def test_reinforcements_set_up_mid_game_keep_their_new_ids_and_are_tracked() -> None:
    # Grinding-Annihilation, Move Phase, Reinforcements: "if you have any Reserve Formations ... set them up on
    # the battlefield". Pieces that turn up after the deployment were numbered new1, new2, ... afresh at each
    # frame, in the detector's order: a second one set up later took new1 from the first, and a player's
    # correction naming new1 followed it to the wrong piece. Each now keeps the id it was given, and moves.
    from vision.live.identified import IdentifiedScenes

    def analysed(pieces: list[tuple[float, float]]) -> dict[str, object]:
        return {
            "format": "tablesight-scene/1",
            "game": "grinding-annihilation",
            "players": [{"id": "red"}],
            "units": [{"id": "red-found", "player": "red"}],
            "models": [
                {"id": f"b{k + 1}", "unit": "red-found", "base": "32", "x": x, "y": y, "sigma_in": 0.02}
                for k, (x, y) in enumerate(pieces)
            ],
        }

    deployed = [(5.0, 5.0), (6.5, 5.0)]
    identified = IdentifiedScenes()
    identified.identify(analysed(deployed))
    out, update = identified.identify(analysed([*deployed, (20.0, 3.0)]))
    assert update is not None and any("match no known model" in m for m in update.messages)
    assert {m["id"]: (m["x"], m["y"]) for m in out["models"]}["new1"] == (20.0, 3.0)
    out, update = identified.identify(analysed([(2.0, 20.0), *deployed, (20.0, 3.0)]))  # a second, listed first
    at = {m["id"]: (m["x"], m["y"]) for m in out["models"]}
    assert at["new1"] == (20.0, 3.0) and at["new2"] == (2.0, 20.0)
    out, update = identified.identify(analysed([(2.0, 20.0), *deployed, (20.0, 3.0)]))
    assert update is not None and not update.messages  # told once, when they turned up
    out, update = identified.identify(analysed([(2.0, 20.0), *deployed, (20.0, 7.0)]))  # new1 advances 4"
    assert update is not None and [(mv.model, round(mv.length_in, 3)) for mv in update.moves] == [("new1", 4.0)]
    assert {m["id"]: (m["x"], m["y"]) for m in out["models"]}["new1"] == (20.0, 7.0)


def red_a_blue_b(models: list[dict[str, Any]]) -> dict[str, Any]:
    """A Focal Point scene of ``models``: unit a red's, unit b blue's."""
    return {
        "format": "tablesight-scene/1",
        "game": "focal-point",
        "players": [{"id": "red"}, {"id": "blue"}],
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": models,
    }


def analysed(shift_in: float, skip: frozenset[str]) -> dict[str, Any]:
    """ROW's table as analysed, unit a moved ``shift_in`` along x, the models in ``skip`` not seen."""
    return red_a_blue_b(
        [
            {"id": d["id"], "unit": "a" if d["player"] == "red" else "b", "base": "32", "x": d["x"], "y": d["y"]}
            for d in row_dets(shift_in, skip=skip)
        ]
    )


def test_a_model_the_players_added_is_the_cameras_piece_once_it_sees_one_beside_its_unit() -> None:
    # The detector missed a3 at the deployment; the players added it on the page (an `add` correction, replayed
    # on every frame). The tracker never heard of it: when the camera later saw it, after its unit moved, it was
    # a new piece (new1) while the players' a3 stayed where they had put it. The tracker now takes it over.
    from vision.live.identified import IdentifiedScenes

    identified = IdentifiedScenes()
    deployment = analysed(0.0, frozenset({"a3"}))
    identified.identify(deployment)
    placed = {"id": "a3", "unit": "a", "base": "32", "x": 9.5, "y": 5.0}  # where the players put it
    identified.take_units({**deployment, "models": [*deployment["models"], placed]})  # type: ignore[list-item]
    out, update = identified.identify(analysed(0.0, frozenset({"a3"})))  # still not seen: the players' place
    assert update is not None and not update.messages
    assert {m["id"]: (m["x"], m["y"]) for m in out["models"]}["a3"] == (9.5, 5.0)
    out, update = identified.identify(analysed(4.0, frozenset({"a3"})))  # a moved 4"; a3 still not seen
    a3 = next(m for m in out["models"] if m["id"] == "a3")  # moved with its unit, as sure as that guess
    assert (a3["x"], a3["y"]) == (13.5, 5.0) and a3["sigma_in"] == pytest.approx(LOST_SIGMA_IN)
    out, update = identified.identify(analysed(4.0, frozenset()))  # the camera sees a3 there now
    assert update is not None and not update.unexplained
    a3 = next(m for m in out["models"] if m["id"] == "a3")
    assert (a3["x"], a3["y"]) == (13.5, 5.0) and a3["sigma_in"] == 0.0
    out, update = identified.identify(analysed(4.0, frozenset({"a3"})))  # missed again: where it was last seen,
    a3 = next(m for m in out["models"] if m["id"] == "a3")  # not back where the players first put it
    assert (a3["x"], a3["y"]) == (13.5, 5.0)


def test_a_resumed_game_keeps_a_model_the_players_added_moving_with_its_unit() -> None:
    # After a restart the page goes on from the kept scene (IdentifiedScenes.resume). a3, which the players added
    # because the camera missed it, is tracked as placed again, from where the kept scene has it: not asked about
    # while unseen, and moved with its unit when the unit moves (Focal Point, Activation: "Move", the unit's
    # models). Resumed as a plain model instead, it is reported not seen and left behind (eval_page_game.py,
    # seed 45 restarted before activation 12: a player-added u9 model 1.6" off for 45 model-frames).
    from vision.live.identified import IdentifiedScenes

    kept = analysed(0.0, frozenset())  # a3 at (9.5, 5.0), where the players put it
    identified = IdentifiedScenes()
    identified.resume(kept, placed=["a3"])
    out, update = identified.identify(analysed(0.0, frozenset({"a3"})))
    assert update is not None and not update.messages and not update.moves
    assert {m["id"]: (m["x"], m["y"]) for m in out["models"]}["a3"] == (9.5, 5.0)
    out, update = identified.identify(analysed(4.0, frozenset({"a3"})))  # a moved 4"; a3 still not seen
    assert {m["id"]: (m["x"], m["y"]) for m in out["models"]}["a3"] == (13.5, 5.0)
    plain = IdentifiedScenes()
    plain.resume(kept)
    out, update = plain.identify(analysed(0.0, frozenset({"a3"})))
    assert update is not None and any("not seen: a3" in text for text in update.messages)


def test_a_game_resumed_mid_activation_judges_the_unit_from_where_it_began() -> None:
    # Affinity: Focal Point, 5.2 Activation: a unit's move is judged from where its models stood when it was
    # activated. Moved a model at a time, the page restarted after a1's move: the kept game has a's record (a1 from
    # (1, 5)). Resumed, the tracker knew no record: a2's move made a new one, from where each model stood at the
    # restart, a1's 4" move lost (the page game, seed 115, restarted before activation 10). It goes on with the record.
    from vision.live.identified import IdentifiedScenes

    def table(a2_x: float) -> dict[str, Any]:
        return red_a_blue_b(
            [
                {"id": "a1", "unit": "a", "base": "32", "x": 5.0, "y": 5.0},
                {"id": "a2", "unit": "a", "base": "32", "x": a2_x, "y": 5.0},
                {"id": "b1", "unit": "b", "base": "32", "x": 15.0, "y": 15.0},
            ]
        )

    began = {"a1": [1.0, 5.0], "a2": [2.5, 5.0]}
    b_earlier = {"event": "move", "unit": "b", "from": {"b1": [15.0, 11.0]}, "source": "camera"}
    kept = {**table(2.5), "history": [b_earlier, {"event": "move", "unit": "a", "from": began, "source": "camera"}]}
    identified = IdentifiedScenes()
    identified.resume(kept)
    out, update = identified.identify(table(2.5))
    assert update is not None and not update.moves and not update.messages
    out, update = identified.identify(table(6.5))  # a2's turn
    assert update is not None and [(mv.model, round(mv.length_in, 3)) for mv in update.moves] == [("a2", 4.0)]
    records = [e for e in out["history"] if e.get("event") == "move"]
    assert [e["unit"] for e in records] == ["b", "a"]  # each once, in the order they began
    assert records[-1]["from"] == began


@pytest.mark.parametrize("kept_with_looks", [True, False])
def test_a_game_resumed_tells_alike_models_moved_while_the_page_was_down_apart_by_their_kept_looks(
    kept_with_looks: bool,
) -> None:
    # Grinding-Annihilation, Move Phase ("Each time you move a formation, you can move any of its troops you
    # choose to"): a formation of four alike 28.5 mm troops moved 2.7-4.3" while the page was down, each put down
    # off their shared move (the page game, seed 153, restarted before activation 5). Resumed, the tracker knew no
    # figure's look, and paired b9 and b10 the wrong way round for the rest of the game (ids off in 262 of 2888
    # model-frames). The scene the page keeps now holds each figure's look (``figure_lab``), and the resumed game
    # tells them apart by it, as it did before the restart.
    from vision.live.identified import IdentifiedScenes

    stood = {"b9": (11.9567, 22.3783), "b10": (10.6678, 22.5148), "b11": (13.6396, 22.6109), "b19": (10.3807, 23.6921)}
    looks = {
        "b9": (91.8, 154.7, 107.4),
        "b10": (156.9, 150.7, 100.5),
        "b11": (93.2, 113.0, 131.1),
        "b19": (138.7, 94.9, 151.3),
    }
    put = {"b9": (14.5432, 21.6236), "b10": (14.7801, 23.6903), "b11": (16.6862, 22.0963), "b19": (13.035, 24.7468)}
    seen_looks = {
        "b9": (93.0, 151.5, 108.0),
        "b10": (159.0, 152.0, 99.0),
        "b11": (94.0, 112.5, 131.5),
        "b19": (141.0, 96.0, 152.0),
    }

    def table(at: dict[str, tuple[float, float]]) -> dict[str, Any]:
        models = [{"id": mid, "unit": "a", "base": "28.5", "x": x, "y": y} for mid, (x, y) in at.items()]
        return red_a_blue_b([*models, {"id": "c1", "unit": "b", "base": "32", "x": 30.0, "y": 40.0}])

    before = IdentifiedScenes()  # the page before the restart: its deployment, and a frame of a still table
    before.identify(table(stood), [*looks.values(), None])
    kept, _ = before.identify(table(stood), [*looks.values(), None])
    assert {m["id"]: m.get("figure_lab") for m in kept["models"]} == {
        **{k: list(v) for k, v in looks.items()},
        "c1": None,
    }
    if not kept_with_looks:  # a game kept by an older version, or a scene written by hand
        kept = {**kept, "models": [{k: v for k, v in m.items() if k != "figure_lab"} for m in kept["models"]]}
    resumed = IdentifiedScenes()
    resumed.resume(kept)
    out, update = resumed.identify(table(put), [*seen_looks.values(), None])
    assert update is not None
    shown = {m["id"]: (m["x"], m["y"]) for m in out["models"] if m["id"] != "c1"}
    if kept_with_looks:
        assert shown == put
        assert {mv.model for mv in update.moves} == set(put)
    else:  # by place alone b9 and b10 read the other way round: a guess, and the players are asked
        assert shown != put and {"b9", "b10"} <= set(update.uncertain)


@pytest.mark.parametrize("told_off_table", [True, False])
def test_a_game_resumed_remembers_its_models_the_kept_table_did_not_show(told_off_table: bool) -> None:
    # The Miniature Skirmish Game, Actions ("Move"); page games seed 165 and 167: a model put down out of sight
    # (behind a wall) is not on the table the page shows, and so not in the scene it keeps. Resumed after a restart,
    # the game had forgotten it: when it came down in view its piece was named a new model (or went to a casualty
    # of its unit). The page now hands the resumed camera the game's models its table does not show, as last kept
    # (``GameSession.off_table``); they are held as picked up, as before the restart, and one that turns up is its
    # own model again.
    from vision.live.identified import IdentifiedScenes

    stood = {"a1": (10.0, 10.0), "a2": (11.5, 10.0), "a3": (13.0, 10.0)}

    def table(at: dict[str, tuple[float, float]]) -> dict[str, Any]:
        models = [{"id": mid, "unit": "a", "base": "32", "x": x, "y": y} for mid, (x, y) in at.items()]
        return red_a_blue_b([*models, {"id": "c1", "unit": "b", "base": "32", "x": 30.0, "y": 40.0}])

    before = IdentifiedScenes()
    deployed, _ = before.identify(table(stood))
    kept, update = before.identify(table({"a1": stood["a1"], "a2": stood["a2"]}))  # a3 out of sight
    assert update is not None and update.vanished == ("a3",)
    assert "a3" not in {m["id"] for m in kept["models"]}
    resumed = IdentifiedScenes()
    last_kept = [m for m in deployed["models"] if m["id"] == "a3"]
    resumed.resume(kept, (), last_kept if told_off_table else ())
    resumed.identify(table({"a1": stood["a1"], "a2": stood["a2"]}))  # the first frame after the restart
    back = {"a1": stood["a1"], "a2": stood["a2"], "a3": (13.2, 10.1)}  # a3 in view again, nudged
    out, update = resumed.identify(table(back))
    assert update is not None
    shown = {m["id"]: (m["x"], m["y"]) for m in out["models"] if m["id"] != "c1"}
    if told_off_table:
        assert shown == back and update.returned == ("a3",)
    else:  # (the game as it was: a new model)
        assert shown == {"a1": stood["a1"], "a2": stood["a2"], "new1": (13.2, 10.1)}


def test_a_unit_moved_while_the_page_was_down_keeps_a_model_on_the_piece_its_figure_stands_on() -> None:
    # Affinity: Focal Point, 5.2 Activation (a unit's models move one at a time here). Page game seed 158: u5 moved
    # while the page was down; one model (b12) was seen after, and b9 and b10 were guessed on its shift. Next time u5
    # was activated, b10 was seen again (its figure's look, kept over the restart, read within 1), b12 was picked up,
    # and b9 put down. Matching the whole activation again from its (guessed) start gave b10's piece to b12, whose
    # figure is 37 apart from it, and reported b10 not seen. A re-match that gives a model a piece whose figure is
    # surely not its own but a mate's is not taken.
    scene = red_a_blue_b(
        [
            {"id": "b9", "unit": "a", "base": "28.5", "x": 19.5377, "y": 7.1285, "figure_lab": [82.9, 158.1, 111.1]},
            {"id": "b10", "unit": "a", "base": "28.5", "x": 17.8518, "y": 13.4776, "figure_lab": [115.0, 106.5, 115.8]},
            {"id": "b12", "unit": "a", "base": "28.5", "x": 19.7499, "y": 13.2971, "figure_lab": [141.5, 107.3, 143.8]},
            {"id": "c1", "unit": "b", "base": "32", "x": 30.0, "y": 30.0},
        ]
    )
    tracker = IdentityTracker.from_scene(scene)

    def piece(x: float, y: float, look: tuple[float, float, float]) -> dict[str, Any]:
        return {"x": x, "y": y, "base": "28.5", "player": "red", "sigma_in": 0.016, "look": look}

    c1 = {"x": 30.0, "y": 30.0, "base": "32", "player": "blue"}
    b12_seen = piece(15.2483, 13.7068, (138.0, 110.0, 142.0))
    update = tracker.update([b12_seen, c1])  # resumed: a moved while the page was down, b12 alone seen
    assert [mv.model for mv in update.moves] == ["b12"] and set(update.vanished) == {"b9", "b10"}
    c1 = {**c1, "x": 33.0}
    tracker.update([b12_seen, c1])  # b's activation
    b10_seen = piece(11.9076, 16.1451, (114.0, 106.0, 116.0))
    update = tracker.update([b10_seen, b12_seen, c1])  # a again: b10 seen where it came down
    assert [mv.model for mv in update.moves] == ["b10"]
    tracker.update([b10_seen, c1])  # b12 picked up
    update = tracker.update([piece(12.0549, 8.4688, (82.0, 159.0, 111.0)), b10_seen, c1])  # b9 down, b12 hidden
    assert [mv.model for mv in update.moves] == ["b9"] and "b12" in update.vanished
    assert (tracker.models["b10"].x, tracker.models["b10"].y) == (11.9076, 16.1451)


def test_a_size_or_team_read_wrongly_does_not_lose_the_model() -> None:
    # The camera reads a3 as a 28.5 mm base in blue: size and team are evidence, not gates.
    tracker = IdentityTracker.from_scene(ROW)
    dets_ = row_dets(4.0, a3="28.5")
    dets_[2]["player"] = "blue"
    update = tracker.update(dets_, active_unit="a")
    assert tracker.models["a3"].x == pytest.approx(5.0 + 4.5 + 4.0)
    assert not update.vanished and not update.unexplained
    # ... but a piece of a very different size is not the same model.
    tracker = IdentityTracker.from_scene(ROW)
    update = tracker.update(row_dets(4.0, a3="60x35"), active_unit="a")
    assert update.vanished == ("a3",) and len(update.unexplained) == 1


def test_one_model_seen_of_two_alike_is_uncertain_not_a_silent_guess() -> None:
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}],
        "models": [
            {"id": "a1", "unit": "a", "base": "32", "x": 5.0, "y": 5.0},
            {"id": "a2", "unit": "a", "base": "32", "x": 8.0, "y": 5.0},
        ],
    }
    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update([{"x": 6.0, "y": 9.0, "base": "32", "player": "red"}], active_unit="a")
    assert len(update.uncertain) == 1 and len(update.vanished) == 1
    assert any("identity uncertain" in m for m in update.messages)
    # Both seen: the unit's translation decides, nothing is uncertain.
    tracker = IdentityTracker.from_scene(scene)
    both = [{"x": 6.0, "y": 9.0, "base": "32", "player": "red"}, {"x": 9.0, "y": 9.0, "base": "32", "player": "red"}]
    update = tracker.update(both, active_unit="a")
    assert update.uncertain == () and tracker.models["a1"].x == 6.0 and tracker.models["a2"].x == 9.0


def test_a_model_not_seen_after_its_unit_moved_is_picked_up_again_beside_it() -> None:
    tracker = IdentityTracker.from_scene(ROW)
    update = tracker.update(row_dets(4.0, skip=frozenset({"a2"})), active_unit="a")
    # Said so, and shown where its unit's move put it, with that guess's uncertainty; the move is in the
    # history as estimated.
    assert update.vanished == ("a2",) and tracker.models["a2"].x == pytest.approx(12.0)
    assert tracker.models["a2"].sigma_in == pytest.approx(LOST_SIGMA_IN)
    guess = next(h for h in tracker.history if h["model"] == "a2")
    assert guess["estimated"] and guess["from"] == [8.0, 5.0] and guess["length_in"] == pytest.approx(4.0)
    update = tracker.update(row_dets(4.0), active_unit="b")  # a later frame, b activated but stayed
    assert not update.desync and tracker.models["a2"].sigma_in == 0.0
    assert tracker.models["a2"].x == pytest.approx(12.0)
    # Seen where the guess put it: the estimated move is confirmed, not made twice.
    assert [h for h in tracker.history if h["model"] == "a2"] == [
        {
            "event": "move",
            "unit": "a",
            "model": "a2",
            "from": [8.0, 5.0],
            "to": [12.0, 5.0],
            "length_in": 4.0,
            "length_sigma_in": 0.0,  # the pieces here carry no sigma of their own
        }
    ]
    # Two free pieces near the unit: the lost model takes the one beside its unit-mates, not the other.
    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(4.0, skip=frozenset({"a2"})), active_unit="a")
    stray = {"x": 16.5, "y": 7.2, "base": "32", "player": "red"}  # 2.7" from a4; the gap at x=12 is 1.5" from a1 and a3
    update = tracker.update([stray, *row_dets(4.0)], active_unit="b")
    assert tracker.models["a2"].x == pytest.approx(12.0) and update.unexplained == (0,)


def test_a_model_hidden_through_two_moves_of_its_unit_follows_both_in_its_history() -> None:
    # a2 stands behind terrain after each of two moves of its unit; its mates moved 4" then 3" along x.
    # The scene shows it where both moves put it, and the history has both moves, estimated.
    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(4.0, skip=frozenset({"a2"})), active_unit="a")
    tracker.update(row_dets(7.0, skip=frozenset({"a2"})), active_unit="a")
    assert tracker.models["a2"].lost and tracker.models["a2"].x == pytest.approx(15.0)
    assert [(h["length_in"], h.get("estimated")) for h in tracker.history if h["model"] == "a2"] == [
        (4.0, True),
        (3.0, True),
    ]
    # Its unit moves again, 2" more, and this time it is seen: the move runs from where the guesses put it.
    update = tracker.update(row_dets(9.0), active_unit="a")
    assert not update.desync and not tracker.models["a2"].lost and tracker.models["a2"].sigma_in == 0.0
    assert tracker.models["a2"].x == pytest.approx(17.0)
    assert [round(mv.length_in, 3) for mv in update.moves if mv.model == "a2"] == [2.0]


def test_a_model_the_rules_keep_still_holds_its_piece_however_badly_it_is_measured() -> None:
    # Unit a is activated; b1's piece is read 0.45" off (a figure overhanging its base in a crowd). Only
    # the activated unit moves, and bases cannot overlap, so that piece is still b1's: no move, no desync.
    tracker = IdentityTracker.from_scene(ROW)
    dets_ = row_dets(4.0)
    b1 = next(d for d in dets_ if d["id"] == "b1")
    b1["y"] = 8.45
    update = tracker.update(dets_, active_unit="a")
    assert not update.desync and {mv.model for mv in update.moves} == {"a1", "a2", "a3", "a4"}
    assert (tracker.models["b1"].x, tracker.models["b1"].y) == (6.5, 8.0)


def test_a_lone_model_takes_the_piece_of_its_own_size_and_colour() -> None:
    # One model in its unit: every free piece within reach "places" it. Size and colour decide, not the order.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
        "models": [
            {"id": "a1", "unit": "a", "base": "60", "x": 20.0, "y": 20.0},
            {"id": "b1", "unit": "b", "base": "50", "x": 30.0, "y": 30.0},
        ],
    }
    tracker = IdentityTracker.from_scene(scene)
    stray = {"x": 27.0, "y": 24.0, "base": "50", "player": "blue"}  # a piece nobody accounts for, listed first
    own = {"x": 17.0, "y": 22.0, "base": "60", "player": "red"}
    update = tracker.update([stray, own, {"x": 30.0, "y": 30.0, "base": "50", "player": "blue"}], active_unit="a")
    assert (tracker.models["a1"].x, tracker.models["a1"].y) == (17.0, 22.0)
    assert update.unexplained == (0,)


def test_a_move_guessed_with_a_model_missing_is_matched_again_when_it_shows() -> None:
    # Unit a (two alike) moves 3" but only one of its pieces is seen: which model it is cannot be told,
    # and a guess is marked uncertain. When the other piece shows in a later frame, the move is matched
    # again from where the unit stood: both ids right, and the history holds the true moves only.
    tracker = IdentityTracker.from_scene(ROW)
    before = {m.id: (m.x, m.y) for m in tracker.models.values()}
    dets_ = row_dets(3.0, skip=frozenset({"a1", "a2", "a3"}))  # a4 seen, at 6.5 + 4.5 + 3
    update = tracker.update(dets_, active_unit="a")
    assert update.uncertain  # the lone piece could be any of them
    update = tracker.update(row_dets(3.0), active_unit="b")  # all seen now; b activated but stayed
    for mid, (x, y) in before.items():
        moved = 3.0 if mid.startswith("a") else 0.0
        assert (tracker.models[mid].x, tracker.models[mid].y) == pytest.approx((x + moved, y)), mid
    moves = [h for h in tracker.history if h["event"] == "move"]
    assert sorted(h["model"] for h in moves) == ["a1", "a2", "a3", "a4"]
    assert all(h["length_in"] == pytest.approx(3.0) for h in moves)
    assert not update.uncertain and not update.desync
    # The same, but a4 stays hidden when the others show: the move is matched again from a1-a3, and a4's
    # guessed place and estimated move follow the corrected translation (3", not the first guess's 7.5").
    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(3.0, skip=frozenset({"a1", "a2", "a3"})), active_unit="a")
    update = tracker.update(row_dets(3.0, skip=frozenset({"a4"})), active_unit="b")
    for mid in ("a1", "a2", "a3", "a4"):
        assert tracker.models[mid].x == pytest.approx(before[mid][0] + 3.0), mid
    assert tracker.models["a4"].lost and tracker.models["a4"].sigma_in > 0 and update.vanished == ("a4",)
    moves = [h for h in tracker.history if h["event"] == "move"]
    assert sorted(h["model"] for h in moves) == ["a1", "a2", "a3", "a4"]
    assert all(h["length_in"] == pytest.approx(3.0) for h in moves)
    assert [h["model"] for h in moves if h.get("estimated")] == ["a4"]


def test_watch_a_folder_game_prints_rulings_and_ends_cleanly(tmp_path: object) -> None:
    import cv2

    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    folder = tmp_path / "game"  # type: ignore[operator]
    folder.mkdir()
    table = render_table(21, hard="none")
    cv2.imwrite(str(folder / "000.png"), table.empty)  # the set-up frame: the empty table
    for k in range(1, 5):
        cv2.imwrite(str(folder / f"{k:03d}.png"), table.image)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    events = list(watch(lambda: FolderSource(folder), table.layout, "focal-point", lens, players))
    kinds = [e.kind for e in events]
    assert kinds[0] == "status" and "set up" in events[0].payload["message"]
    assert "ruling" in kinds  # the models were found and judged
    assert events[-1].kind == "status" and events[-1].payload["stale"]  # the folder ended: stale, no crash
    assert all(e.json_line().startswith("{") for e in events)
    assert "move" not in kinds  # nothing moved


@pytest.mark.parametrize(("mat", "says"), [("onefinity", 'hex mat: 1.5" pointy hexes'), ("focal-point", "no hex grid")])
def test_watch_says_at_set_up_what_hex_grid_it_found(tmp_path: object, mat: str, says: str) -> None:
    # Onefinity is played in hexes: the set-up says which grid the camera found on the mat (the kit's 1.5" pointy
    # hexes), or asks for it when the mat shows none.
    import cv2

    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    folder = tmp_path / "game"  # type: ignore[operator]
    folder.mkdir()
    table = render_table(21, mat, hard="none")
    cv2.imwrite(str(folder / "000.png"), table.empty)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    events = list(watch(lambda: FolderSource(folder), table.layout, "onefinity", lens))
    assert events[0].kind == "status" and "set up" in events[0].payload["message"]
    assert says in events[0].payload["message"], events[0].payload


def test_watch_says_once_at_deployment_when_the_players_colours_are_too_alike(tmp_path: object) -> None:
    # vision/colour.py: alike_players, as the page's status says it (tests/web/test_camera_feed.py): the
    # head-less referee tells the players to confirm the teams at the deployment frame, and only there.
    import cv2

    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    folder = Path(str(tmp_path))
    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    moved = render_table(21, hard="none", models_at={**at, "u2m1": (at["u2m1"][0] - 2.0, at["u2m1"][1])})
    for k, frame in enumerate([table.empty] + [table.image] * 4 + [moved.image] * 4):
        cv2.imwrite(str(folder / f"{k:03d}.png"), frame)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    alike = {"red": "#a52e88", "blue": "#942f80"}
    events = list(watch(lambda: FolderSource(folder), table.layout, "focal-point", lens, alike))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    warnings = [m for m in said if "have colours only" in m]
    assert len(warnings) == 1 and warnings[0].startswith("players red and blue have colours only 6.7 apart (Lab)")
    assert said.index(warnings[0]) == 1  # right after the set-up, before anything the later frames say
    assert [round(e.payload["length_in"], 1) for e in events if e.kind == "move"] == [2.0]  # later frames analysed
    apart = {p["id"]: p["color"] for p in table.scene["players"]}
    quiet = list(watch(lambda: FolderSource(folder), table.layout, "focal-point", lens, apart))
    assert not [e for e in quiet if "have colours only" in e.payload.get("message", "")]


def test_watch_says_when_a_hand_held_still_covers_the_table(tmp_path: object) -> None:
    # A hand held still over held-out table 5010's base is analysed like the table round it (the motion gate
    # waits only while things move): watch says that something covers the table there, and when it is gone.
    import cv2

    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    table = render_table(5010, hard="none")
    under = min(table.scene["models"], key=lambda m: math.hypot(m["x"] - 11.6, m["y"] - 8.3))
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    folder = Path(str(tmp_path))
    for k, frame in enumerate([table.empty] + [table.image] * 4 + [handled.image] * 4 + [table.image] * 4):
        cv2.imwrite(str(folder / f"{k:03d}.png"), frame)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    events = list(watch(lambda: FolderSource(folder), table.layout, "focal-point", lens, players))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    covers = [k for k, m in enumerate(said) if m.startswith("something covers")]
    assert len(covers) == 1, said
    assert said[covers[0] + 1 :].count("nothing covers the table any more") == 1


def test_watch_keeps_ids_and_prints_a_move_as_it_is_recorded(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 7, "move history" and `watch`: one model (u2m1, standing alone) is moved 2" between still
    # stretches of frames. The deployment's ids are kept, and the move is printed with its length.
    import cv2

    import vision.live.watch as watching
    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    # Unit-mates settle unsure sizes at the deployment only; after it the tracker knows each model's size and
    # matches on each piece's own read (docs/live.md, session 35).
    settle_sizes: list[bool] = []

    def analyze(*args: Any, **kwargs: Any) -> Any:
        settle_sizes.append(args[10] if len(args) > 10 else kwargs.get("mates_settle_sizes", True))
        return real_analyze(*args, **kwargs)

    real_analyze = watching.analyze
    monkeypatch.setattr(watching, "analyze", analyze)

    folder = tmp_path / "game"  # type: ignore[operator]
    folder.mkdir()
    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    x, y = at["u2m1"]
    moved = render_table(21, hard="none", models_at={**at, "u2m1": (x - 2.0, y)})
    frames = [table.empty] + [table.image] * 4 + [moved.image] * 4
    for k, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"{k:03d}.png"), frame)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    events = list(watch(lambda: FolderSource(folder), table.layout, "focal-point", lens, players))
    moves = [e.payload for e in events if e.kind == "move"]
    assert len(moves) == 1, [e.text() for e in events]
    assert abs(moves[0]["length_in"] - 2.0) <= 0.05
    assert math.hypot(moves[0]["from"][0] - x, moves[0]["from"][1] - y) <= 0.1
    assert moves[0]["to"][0] == pytest.approx(x - 2.0, abs=0.1)
    # The length's 1-sigma comes from both ends' measurements (the deployment's and the move's: two refined
    # bases, 0.45 mm each with the calibration's share), and is printed with it.
    sigma = moves[0]["length_sigma_in"]
    assert 0.005 < sigma < 0.05
    text = next(e.text() for e in events if e.kind == "move")
    head = f'(move) {moves[0]["model"]} of {moves[0]["unit"]} moved {moves[0]["length_in"]:.2f}"'
    assert text == f'{head} +/- {sigma:.2f}"', text
    assert settle_sizes[0] is True and len(settle_sizes) >= 2 and not any(settle_sizes[1:])


def test_watch_says_the_markers_under_a_card_are_back_and_records_no_move_for_the_new_map(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `watch` (the page's head-less form) follows the calibration monitor as the page does
    # (IdentifiedScenes.follow_calibration): knocked while a card lies over markers 0 and 1, the table is mapped from
    # 2 and 3; when the card is lifted, from all four, and the players are told. The places read through the map
    # from two are read through the new one: the unit that moved under the card is no model nudged.
    from tests.knocked_card import knocked_under_a_card, watched

    card = knocked_under_a_card(monkeypatch)
    events = watched(card, card.lens)
    said = [e.payload.get("message", "") for e in events if e.kind == "status"]
    assert any("recalibrated from markers 2, 3 only" in s for s in said), said
    back = [k for k, e in enumerate(events) if "markers 0, 1 in view again" in str(e.payload.get("message", ""))]
    assert len(back) == 1, said
    moves = [(k, e.payload) for k, e in enumerate(events) if e.kind == "move" and "corrected" not in e.payload]
    assert len(moves) == len(card.unit) and all(k < back[0] for k, _ in moves)
    assert all(abs(m["length_in"] - math.hypot(1.5, 1.5)) < 0.06 for _, m in moves), moves
    # ...printed again when the card is lifted, their ends read since the knock measured in the map from all four
    corrected = [(k, e.payload) for k, e in enumerate(events) if e.kind == "move" and "corrected" in e.payload]
    assert {m["model"] for _, m in corrected} == {m["model"] for _, m in moves} and all(
        k > back[0] for k, _ in corrected
    )
    assert all(abs(m["length_in"] - math.hypot(1.5, 1.5)) < 0.03 for _, m in corrected), corrected


def test_watch_maps_a_set_up_made_with_markers_under_a_card_from_them_all_once_it_is_lifted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `watch` set up while a card lay over markers 0 and 1, with no lens file: when the card is lifted it says the
    # table is mapped from all four, as the page does, records no move for the places read through the new map, and
    # does not go on saying that something covers the table where the card lay (the set-up's empty table had it).
    from tests.knocked_card import set_up_under_a_card, watched

    card = set_up_under_a_card(monkeypatch)
    events = watched(card, None)
    said = [str(e.payload.get("message", "")) for e in events if e.kind == "status"]
    back = [k for k, s in enumerate(said) if "markers 0, 1 in view again" in s]
    assert len(back) == 1 and "places read since the set-up" in said[back[0]], said
    assert not any("something covers" in s for s in said), said
    moves = [e.payload for e in events if e.kind == "move"]
    # The unit's, printed as recorded (read through the map from two), then again measured in the new map; none for
    # the new map itself.
    recorded = [m for m in moves if "corrected" not in m]
    corrected = [m for m in moves if "corrected" in m]
    assert len(recorded) == len(corrected) == len(card.unit), moves
    assert {m["model"] for m in corrected} == {m["model"] for m in recorded}
    true_in = math.hypot(1.5, 1.5)
    assert sum(abs(m["length_in"] - true_in) for m in corrected) < sum(abs(m["length_in"] - true_in) for m in recorded)
    assert all(abs(m["length_in"] - true_in) < 0.035 for m in corrected), corrected
    line = next(e for e in events if e.kind == "move" and "corrected" in e.payload).text()
    assert line.endswith('" (corrected: the table mapped from more markers)'), line


def test_watch_finds_a_hex_mat_found_at_a_set_up_under_a_card_again_once_the_card_is_lifted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As the page does (tests/web/test_camera_feed.py): Onefinity's 1.5" hex mat, found at a set-up whose markers 0
    # and 1 lay under a card, is found again through the map from all four once the card is lifted; the scenes
    # judged and kept (`watch --keep`) from then on have that grid, not the one found through the map from two.
    from tablesight.scene import Scene
    from tests.knocked_card import hex_grid_off_in, hex_mat_under_a_card
    from vision.live.watch import watch

    table, shots, players = hex_mat_under_a_card(monkeypatch)
    kept: list[Scene] = []
    frames = iter(shots)
    events = list(
        watch(
            lambda: IteratorSource(frames),
            table.layout,
            "onefinity",
            None,
            players,
            max_frames=len(shots),
            keep=kept.append,
        )
    )
    assert any("markers 0, 1 in view again" in str(e.payload.get("message", "")) for e in events)
    assert len(kept) >= 2
    before, after = (hex_grid_off_in(s.to_dict()["table"]["hex"], table) for s in (kept[0], kept[-1]))
    assert before > 0.04 and after < 0.025, (before, after)


def test_a_piece_measured_unsurely_makes_its_move_and_place_unsure_too() -> None:
    # How sure a move's length is comes from how both its ends were measured: a base seen only as a sliver
    # behind a wall is measured with a sigma several times a clear one's (vision/centre_sigma.py).
    tracker = IdentityTracker.from_scene(ROW)
    dets = row_dets(4.0)
    for d in dets:
        d["sigma_in"] = 0.02
    dets[1]["sigma_in"] = 0.12  # a2, seen in part
    update = tracker.update(dets, active_unit="a")
    by_model = {mv.model: mv for mv in update.moves}
    assert by_model["a1"].sigma_in == pytest.approx(0.02)  # the deployment scene gave no sigma: 0 at the start
    assert by_model["a2"].sigma_in == pytest.approx(0.12)
    entry = next(h for h in tracker.history if h["model"] == "a2")
    assert entry["length_sigma_in"] == pytest.approx(0.12)
    assert tracker.models["a2"].place_sigma_in == pytest.approx(0.12)
    # Its next move starts where it was measured unsurely: both ends count.
    dets = row_dets(6.0)
    for d in dets:
        d["sigma_in"] = 0.02
    update = tracker.update(dets, active_unit="a")
    a2 = next(mv for mv in update.moves if mv.model == "a2")
    assert a2.sigma_in == pytest.approx(math.hypot(0.12, 0.02))


def test_a_model_lost_and_seen_again_in_part_keeps_both_uncertainties_in_its_move() -> None:
    tracker = IdentityTracker.from_scene(ROW)
    tracker.update(row_dets(4.0, skip=frozenset({"a2"})), active_unit="a")
    guess = next(h for h in tracker.history if h["model"] == "a2")
    assert guess["estimated"] and guess["length_sigma_in"] == pytest.approx(LOST_SIGMA_IN)
    assert tracker.models["a2"].place_sigma_in == pytest.approx(LOST_SIGMA_IN)
    dets = row_dets(4.0)
    dets[1] |= {"x": 12.1, "sigma_in": 0.12}  # a2 seen again, as a sliver, 0.1" from the guess
    tracker.update(dets, active_unit="b")
    assert "estimated" not in guess and guess["length_in"] == pytest.approx(4.1)
    assert guess["length_sigma_in"] == pytest.approx(0.12)  # no longer a guess: as sure as the sliver
    assert tracker.models["a2"].place_sigma_in == pytest.approx(0.12)


def test_identified_scenes_show_each_model_as_sure_as_the_piece_that_placed_it() -> None:
    from vision.live.identified import IdentifiedScenes

    def scene(a2_at: float, a2_sigma: float) -> dict[str, object]:
        models = [
            {"id": "m1", "unit": "u1", "base": "32", "x": 5.0, "y": 5.0, "sigma_in": 0.02},
            {"id": "m2", "unit": "u1", "base": "32", "x": a2_at, "y": 5.0, "sigma_in": a2_sigma},
        ]
        return {
            "format": "tablesight-scene/1",
            "players": [{"id": "red"}],
            "units": [{"id": "u1", "player": "red"}],
            "models": models,
        }

    identified = IdentifiedScenes()
    identified.identify(scene(6.5, 0.02))
    out, update = identified.identify(scene(9.5, 0.12))  # m2 moved 3", now seen only in part
    assert update is not None and [mv.model for mv in update.moves] == ["m2"]
    m2 = next(m for m in out["models"] if m["id"] == "m2")
    assert m2["x"] == 9.5 and m2["sigma_in"] == pytest.approx(0.12)
    # Seen clearly later, still in place: not moved again, and its place now as sure as that clear piece.
    out, update = identified.identify(scene(9.5, 0.02))
    assert update is not None and not update.moves
    m2 = next(m for m in out["models"] if m["id"] == "m2")
    assert m2["x"] == 9.5 and m2["sigma_in"] == pytest.approx(0.02)


def test_a_unit_moved_a_model_at_a_time_is_one_activation_from_where_it_began() -> None:
    # Players move a unit's models one by one and the table settles between: the rules judge the whole
    # activation from where each model stood when it began, not from the last settled frame.
    tracker = IdentityTracker.from_scene(SCENE)
    tracker.update(dets({"a1": (9.0, 5.0), "a2": (6.5, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)}))
    tracker.update(dets({"a1": (9.0, 5.0), "a2": (10.5, 5.0), "b1": (15.0, 15.0), "b2": (16.5, 15.0)}))
    assert tracker.activations["a"]["from"] == {"a1": [5.0, 5.0], "a2": [6.5, 5.0]}
    assert "b" not in tracker.activations
    # Then b moves, and a again: a's new activation starts where its first one ended.
    tracker.update(dets({"a1": (9.0, 5.0), "a2": (10.5, 5.0), "b1": (15.0, 12.0), "b2": (16.5, 12.0)}))
    tracker.update(dets({"a1": (9.0, 8.0), "a2": (10.5, 8.0), "b1": (15.0, 12.0), "b2": (16.5, 12.0)}))
    assert tracker.activations["b"]["from"] == {"b1": [15.0, 15.0], "b2": [16.5, 15.0]}
    assert tracker.activations["a"]["from"] == {"a1": [9.0, 5.0], "a2": [10.5, 5.0]}
    assert len(tracker.history) == 6  # every model's every move, for the replay


def test_the_rules_judge_a_move_the_camera_saw() -> None:
    # affinity-focal-point.md > Activation: a formation moves up to its Move characteristic (5" here for
    # Threshold); Formations > Coherency: within 2" of another model of the formation after the move.
    from rules.systems import ask
    from tablesight.scene import Scene
    from vision.live.identified import IdentifiedScenes

    profile = {"type": "Threshold", "move": 5, "attack": 4, "hit": 4, "defense": 4, "hp": 8, "resolve": 3}

    def scene(a_dx: float, b_dy: float) -> dict[str, object]:
        places = {
            "a1": (5.0 + a_dx, 5.0),
            "a2": (6.5 + a_dx, 5.0),
            "b1": (15.0, 15.0 + b_dy),
            "b2": (16.5, 15.0 + b_dy),
        }
        return {
            "format": "tablesight-scene/1",
            "game": "focal-point",
            "table": {"width_in": 24, "depth_in": 24},
            "players": [{"id": "red"}, {"id": "blue"}],
            "units": [
                {"id": u, "player": p, "name": u, "profile": profile, "state": {"hp": 8}}
                for u, p in (("a", "red"), ("b", "blue"))
            ],
            "models": [
                {"id": k, "unit": k[0], "base": "32", "x": x, "y": y, "sigma_in": 0.02} for k, (x, y) in places.items()
            ],
        }

    identified = IdentifiedScenes()
    identified.identify(scene(0.0, 0.0))
    out, _ = identified.identify(scene(4.0, 0.0))  # a advances 4"
    out, _ = identified.identify(scene(4.0, -6.5))  # b moves 6.5" (more than its 5")
    assert {e["unit"] for e in out["history"]} == {"a", "b"}
    legal = ask(Scene.from_dict(out), "move-ok", ["a"], {})
    too_far = ask(Scene.from_dict(out), "move-ok", ["b"], {})
    assert legal.to_json()["verdict"] == "yes" and too_far.to_json()["verdict"] == "no"
    lengths = [m["value_in"] for m in too_far.to_json()["measurements"]]
    assert lengths == [pytest.approx(6.5, abs=1e-3)] * 2


def test_watch_says_when_the_camera_streams_coarsely_mid_game(tmp_path: object) -> None:
    # vision/camera_quality.py: a phone streaming as a webcam drops to JPEG 40 after the deployment, as a model
    # moves. watch says it once, at that frame (the page does the same: tests/web/test_camera_feed.py).
    import cv2

    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    folder = Path(str(tmp_path))
    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    moved = render_table(21, hard="none", models_at={**at, "u2m1": (at["u2m1"][0] - 2.0, at["u2m1"][1])})
    _, data = cv2.imencode(".jpg", moved.image, [cv2.IMWRITE_JPEG_QUALITY, 40])
    coarse = cv2.imdecode(data, cv2.IMREAD_COLOR)
    for k, frame in enumerate([table.empty] + [table.image] * 4 + [coarse] * 4):
        cv2.imwrite(str(folder / f"{k:03d}.png"), frame)  # PNG: the frames keep the stream's JPEG as it came
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    events = list(watch(lambda: FolderSource(folder), table.layout, "focal-point", lens, players))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    told = [m for m in said if "coarsely compressed" in m]
    assert len(told) == 1 and "raise the stream's quality" in told[0], said
    assert said.index(told[0]) >= 1  # not with the set-up
    assert [round(e.payload["length_in"], 1) for e in events if e.kind == "move"] == [2.0]  # the move still read


def test_watch_given_the_players_deployment_names_each_move_by_its_model_and_unit(tmp_path: Path) -> None:
    # watch has no page to lasso units on: each player's models were one lump ("red-found"), its rulings asked
    # whether that lump was in coherency, and a unit's move was printed as b4, b8, b9 of red-found. The
    # deployment file (the players' scene) names them: a unit's move is the rules' to judge by that unit (Focal
    # Point, Turn Structure: "Players alternate activating one formation at a time"), and coherency is judged per
    # unit (Focal Point, Coherency).
    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    table = render_table(21, hard="none")
    truth = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    moved = {mid: ((x - 3.0, y) if mid.startswith("u1m") else (x, y)) for mid, (x, y) in truth.items()}
    after = render_table(21, hard="none", models_at=moved)  # unit u1 moved 3" left, the rest where they stood
    cv2.imwrite(str(tmp_path / "000.png"), table.empty)
    for k in range(1, 9):
        cv2.imwrite(str(tmp_path / f"{k:03d}.png"), (table if k < 5 else after).image)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)

    def moves(deployment: dict[str, Any] | None) -> tuple[list[Any], list[dict[str, Any]]]:
        events = list(
            watch(
                lambda: FolderSource(tmp_path),
                table.layout,
                "focal-point",
                lens,
                players,
                None,
                5,
                deployment=deployment,
            )
        )
        return events, [e.payload for e in events if e.kind == "move"]

    deployed = copy.deepcopy(table.scene)  # the players' scene, with each unit's profile from their roster
    for unit in deployed["units"]:
        unit["profile"] = {"type": "Toll", "move": 5 if unit["id"] == "u1" else 6, "hp": 2, "defense": 4}
        unit["state"] = {"hp": 2}
    events, told = moves(deployed)
    said = [e.payload["message"] for e in events if e.kind == "status"]
    assert "deployment: 9 of the file's 9 models found on the table, with their units" in said
    assert sorted((m["model"], m["unit"]) for m in told) == [("u1m1", "u1"), ("u1m2", "u1"), ("u1m4", "u1")]
    assert all(m["length_in"] == pytest.approx(3.0, abs=0.1) for m in told)
    rulings = [e.payload for e in events if e.kind == "ruling"]
    assert {"Is Unit 1 in coherency?", "Is Unit 2 in coherency?"} <= {r["question"] for r in rulings}
    # The move is judged as it is recorded, from where each model stood: 3" of Unit 1's 5" (Focal Point,
    # Activation: "Move the entire formation up to Move stat in inches (maintain coherency)").
    judged = [r for r in rulings if r["question"].startswith("Was the move")]
    assert [(r["question"], r["verdict"]) for r in judged] == [("Was the move of Unit 1 legal?", "yes")]
    deployed["units"][0]["profile"]["move"] = 2  # a unit with a 2" move that went 3"
    events, _ = moves(deployed)
    judged = [e.payload for e in events if e.kind == "ruling" and e.payload["question"].startswith("Was the move")]
    assert [r["verdict"] for r in judged] == ["no"] and any('2"' in reason for reason in judged[0]["reasons"])
    # Without it: the same moves, of the camera's ids in a player's lump.
    events, lumped = moves(None)
    assert {m["unit"] for m in lumped} == {"red-found"} and len(lumped) == 3
    assert not {m["model"] for m in lumped} & set(truth)


def test_watch_started_again_with_its_kept_game_goes_on_with_the_players_units(tmp_path: Path) -> None:
    # Issue 7: "Players assign units once (at deployment) and the assignment survives the game". A watch stopped
    # mid-game (Ctrl-C, the laptop's lid) and started again named every piece afresh: the players' units were
    # lost, and the next move was printed as a lump's. With --keep it goes on with the game kept, as the page does
    # after a restart (docs/live.md, session 85). Focal Point, Turn Structure: "Players alternate activating one
    # formation at a time"; a move is the formation's, by its name.
    from calibration.lens import LensModel
    from tablesight.scene import Scene, SceneError
    from vision.live.deployment import load_kept
    from vision.live.watch import watch
    from vision.synth.table import render_table

    table = render_table(21, hard="none")
    truth = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    left = {mid: ((x - 3.0, y) if mid.startswith("u1m") else (x, y)) for mid, (x, y) in truth.items()}
    up = {mid: ((x, y + 3.0) if mid.startswith("u1m") else (x, y)) for mid, (x, y) in left.items()}
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    kept_file = tmp_path / "game.json"

    def run(frames: list[np.ndarray], **options: Any) -> tuple[list[Any], list[dict[str, Any]]]:
        folder = tmp_path / f"frames{len(list(tmp_path.glob('frames*')))}"
        folder.mkdir()
        for k, frame in enumerate(frames):
            cv2.imwrite(str(folder / f"{k:03d}.png"), frame)
        source = lambda: FolderSource(folder)  # noqa: E731
        events = list(watch(source, table.layout, "focal-point", lens, players, None, 5, **options))
        return events, [e.payload for e in events if e.kind == "move"]

    def keep(scene: Scene) -> None:
        scene.save(kept_file)

    first = [table.empty] + [table.image] * 4 + [render_table(21, hard="none", models_at=left).image] * 4
    _, moved = run(first, deployment=copy.deepcopy(table.scene), keep=keep)
    assert sorted(m["model"] for m in moved) == ["u1m1", "u1m2", "u1m4"]
    kept = load_kept(kept_file, "focal-point")
    assert kept is not None and {m["id"]: m["unit"] for m in kept["models"]}["u1m2"] == "u1"
    # Started again on the table as it stands (no empty table to set up from), then u1 moves 3" up.
    again = [render_table(21, hard="none", models_at=left).image] * 5 + [
        render_table(21, hard="none", models_at=up).image
    ] * 4
    events, moved = run(again, kept=kept, keep=keep)
    said = [e.payload["message"] for e in events if e.kind == "status"]
    assert "game resumed: 9 of its 9 models found where they were kept" in said, said
    assert sorted((m["model"], m["unit"]) for m in moved) == [("u1m1", "u1"), ("u1m2", "u1"), ("u1m4", "u1")]
    for move in moved:
        assert move["length_in"] == pytest.approx(3.0, abs=0.1)
        assert math.dist(move["from"], left[move["model"]]) <= 0.1
    now = {m["id"]: (m["x"], m["y"]) for m in (load_kept(kept_file, "focal-point") or {})["models"]}
    assert all(math.dist(now[mid], up[mid]) <= 0.1 for mid in truth)  # the file follows the game
    # Without the kept game: the pieces are named afresh, the move is a player's lump's.
    _, lumped = run(again)
    assert {m["unit"] for m in lumped} == {"red-found"} and not {m["model"] for m in lumped} & set(truth)
    # A kept file that is no scene of the game says so, naming it.
    kept_file.write_text('{"game": "focal-point", "models": 3}')
    with pytest.raises(SceneError, match="game.json"):
        load_kept(kept_file, "focal-point")
    assert load_kept(tmp_path / "none.json", "focal-point") is None  # no file yet: a new game


def test_watch_given_the_tables_terrain_measures_a_move_off_a_hill_from_the_hilltop(tmp_path: Path) -> None:
    # Issue 7, "every move recorded with its length": a unit standing on a 2" hill walks 6.5" off it. The camera
    # sees each base's top, 2" higher there than on the mat, moved away from it by parallax; only given the hill
    # (find-terrain's file, its kind and height the players': watch --terrain) is each base put back on the
    # hilltop where it stands. Grinding-Annihilation, Movement: a model's move is measured from where it stood.
    from calibration.lens import LensModel
    from vision.live.sources import FolderSource
    from vision.live.watch import watch
    from vision.synth.table import render_table

    table = render_table(27, "grinding-annihilation", hard="hills")  # u3 stands on t10, a hill 2" high
    assert {m["id"]: m["z"] for m in table.scene["models"] if m["unit"] == "u3"} == {
        "u3m3": 2.0,
        "u3m4": 2.0,
        "u3m5": 2.0,
    }
    truth = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    moved = {mid: ((x, y + 6.5) if mid.startswith("u3m") else (x, y)) for mid, (x, y) in truth.items()}
    after = render_table(27, "grinding-annihilation", hard="hills", models_at=moved)
    assert all(m["z"] == 0.0 for m in after.scene["models"])  # off the hill, on the mat
    cv2.imwrite(str(tmp_path / "000.png"), table.empty)
    for k in range(1, 9):
        cv2.imwrite(str(tmp_path / f"{k:03d}.png"), (table if k < 5 else after).image)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)

    def moves(terrain: list[dict[str, Any]] | None) -> list[tuple[float, float]]:
        """Each move's start off the true start, and its length off the true 6.5" (inches)."""
        events = watch(
            lambda: FolderSource(tmp_path),
            table.layout,
            "grinding-annihilation",
            lens,
            players,
            None,
            5,
            terrain=terrain,
        )
        found = [e.payload for e in events if e.kind == "move"]
        assert len(found) == 3, found  # the three models of u3, nothing else
        starts = [min(math.dist(m["from"], truth[t]) for t in ("u3m3", "u3m4", "u3m5")) for m in found]
        return [(start, m["length_in"] - 6.5) for start, m in zip(starts, found, strict=True)]

    on_hilltop = moves(table.scene["terrain"])
    assert all(start <= 0.08 and abs(error) <= 0.08 for start, error in on_hilltop), on_hilltop
    # Without the terrain the same bases were read 0.3" off, on the mat, and their moves 0.3" short.
    on_the_mat = moves(None)
    assert all(start >= 0.2 and error <= -0.2 for start, error in on_the_mat), on_the_mat


def test_a_model_put_down_where_the_camera_cannot_see_it_leaves_its_mates_on_their_pieces() -> None:
    # Grinding-Annihilation, Move Phase: the players activate u (they tell the page) and move its six 32 mm models one
    # at a time (a rendered game, seed 57). The first, a2, comes down behind a 4.9" wall, where no camera sees it; the
    # other five are read still where they stood. a2 was matched to a4's piece (a move of 2.2", landing within 0.03"
    # of where a4 stood) and a4 guessed to have moved on with it, out of view: moving a2 cost nothing, and a4 read
    # still cost a little more than a model moved with its unit. A model put down on the very spot a mate stands, the
    # mate then seen nowhere, is a coincidence; a2 taken off the table out of view is not.
    start = {
        "a1": (7.33, 46.31),
        "a2": (9.07, 45.83),
        "a3": (10.36, 45.99),
        "a4": (7.71, 47.55),
        "a5": (9.01, 47.30),
        "a6": (10.33, 47.42),
    }
    tracker = _one_unit("a", "32", start)
    read = {"a1": (7.33, 46.31), "a3": (10.38, 45.99), "a4": (7.74, 47.56), "a5": (9.03, 47.30), "a6": (10.36, 47.42)}
    update = tracker.update([{"x": x, "y": y, "base": "32", "player": "red"} for x, y in read.values()], "a")
    assert update.vanished == ("a2",) and not update.moves and not tracker.history
    assert {mid: (m.x, m.y) for mid, m in tracker.models.items()} == start  # a2 shown where it was, not seen
    assert tracker.models["a2"].lost and not any(tracker.models[mid].unseen for mid in read)


def test_a_unit_moved_a_model_at_a_time_it_was_told_of_keeps_its_ids_when_one_comes_down_out_of_sight() -> None:
    # Grinding-Annihilation, Move Phase: the players activate a unit (they tell the page) and move its models one at a
    # time. One of them comes down where the detector never sees it (behind a wall, say). Seeded: 192 units of 3-6
    # models drawn clear of one another. A model put down on the spot a mate stands read still, that mate then seen
    # nowhere, costs a reading more (a coincidence), and half the guesses at the unit's shift played out are made by
    # pieces put down now: the tracker before this gave every seen piece its own model in 182, this one in 190, and
    # none it kept is lost.
    kept, drawn = _kept_over_random_activations(told=True, one_at_a_time=True)
    assert drawn == 192
    assert kept >= 189, kept


def test_a_model_put_down_out_of_sight_in_its_turn_is_shown_on_its_mates_shift_and_known_when_it_shows() -> None:
    # Grinding-Annihilation, Move Phase: a player moves a unit's five 28.5 mm models one at a time, 4.2" on, 0.3" off
    # the common shift (not told which unit moves: the page does not know). The fourth to move, a4, comes down where
    # the detector misses it, close beside its mates. Its piece is gone from where it stood and no new one shows: it
    # is its turn, so it is shown where its mates' shift puts it, marked not seen. (The tracker before this took it
    # for picked up and left it where it stood; when the unit was next activated and a1 moved away from beside it,
    # a4's piece showed, and a1 was given it: both ids wrong for the rest of the game (a rendered game, seed 45).)
    start = {"a1": (8.03, 51.54), "a2": (9.32, 51.58), "a3": (11.42, 52.02), "a4": (8.34, 52.80), "a5": (9.80, 53.01)}
    put = {"a3": (14.26, 48.20), "a2": (11.85, 48.00), "a1": (10.61, 48.51), "a5": (12.32, 49.78), "a4": (10.87, 49.73)}
    tracker = IdentityTracker.from_scene(
        {
            "format": "tablesight-scene/1",
            "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
            "models": [{"id": mid, "unit": "a", "base": "28.5", "x": x, "y": y} for mid, (x, y) in start.items()]
            + [{"id": "b1", "unit": "b", "base": "50", "x": 20.0, "y": 40.0}],
        }
    )

    def pieces(a: dict[str, tuple[float, float]], b1: tuple[float, float] = (20.0, 40.0)) -> list[dict[str, Any]]:
        seen = [{"x": x, "y": y, "base": "28.5", "player": "red"} for x, y in a.values()]
        return [*seen, {"x": b1[0], "y": b1[1], "base": "50", "player": "blue"}]

    now = dict(start)
    for mid, xy in put.items():
        now[mid] = xy
        tracker.update(pieces({k: v for k, v in now.items() if k != "a4" or v == start["a4"]}))
    a4 = tracker.models["a4"]
    assert a4.guessed and a4.lost and math.dist((a4.x, a4.y), put["a4"]) < 0.5
    assert all(math.dist((tracker.models[k].x, tracker.models[k].y), xy) < 0.05 for k, xy in put.items() if k != "a4")
    tracker.update(pieces({k: v for k, v in now.items() if k != "a4"}, b1=(24.0, 40.0)))  # another unit moves
    now["a1"] = (8.69, 48.54)  # a's next activation: a1 moves off, and a4 is seen where it stands
    update = tracker.update(pieces(now, b1=(24.0, 40.0)))
    assert {k: (m.x, m.y) for k, m in tracker.models.items() if k != "b1"} == now
    assert not tracker.models["a4"].unseen and not update.vanished and not update.unexplained
    # (a1's own match, alone, could as well have taken a4's piece, 1.2" on: it says so, and the reading that accounts
    # for every piece and model gave it the other)
    assert set(update.uncertain) <= {"a1"}


def test_a_model_missed_for_a_frame_in_its_units_activation_and_seen_back_in_place_made_no_move() -> None:
    # A unit moved a model at a time: a1 has moved 3"; then the detector misses a2, still where it stood, for one
    # settled frame. It was gone from its place with nothing else moving, as if its turn had come: shown on its
    # mates' shift, marked not seen. Seen back where it stood the next frame, it never moved: the guessed move is
    # taken out of the history (a 0" move recorded there was a move the rules would have judged).
    tracker = _one_unit("a", "32", {"a1": (10.0, 10.0), "a2": (11.5, 10.0), "a3": (13.0, 10.0)})
    seen = {"a1": (10.0, 13.0), "a2": (11.5, 10.0), "a3": (13.0, 10.0)}

    def pieces(skip: str = "") -> list[dict[str, Any]]:
        return [{"x": x, "y": y, "base": "32", "player": "red"} for mid, (x, y) in seen.items() if mid != skip]

    tracker.update(pieces())
    tracker.update(pieces(skip="a2"))
    assert tracker.models["a2"].guessed and (tracker.models["a2"].x, tracker.models["a2"].y) == (11.5, 13.0)
    update = tracker.update(pieces())
    assert not update.desync and {mid: (m.x, m.y) for mid, m in tracker.models.items()} == seen
    assert not tracker.models["a2"].unseen
    assert [(h["model"], h["length_in"]) for h in tracker.history if h["event"] == "move"] == [("a1", 3.0)]


def _table(models: dict[str, tuple[str, str, tuple[float, float]]], players: dict[str, str]) -> IdentityTracker:
    """A tracker from a confirmed deployment: model id -> (unit, base, (x, y)); ``players``: unit -> player."""
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": unit, "player": player} for unit, player in players.items()],
        "models": [{"id": mid, "unit": u, "base": b, "x": x, "y": y} for mid, (u, b, (x, y)) in models.items()],
    }
    return IdentityTracker.from_scene(scene)


@pytest.mark.parametrize("told", [True, False])
def test_a_base_put_down_partly_hidden_and_read_smaller_is_its_model_with_its_place_unsure(told: bool) -> None:
    # A rendered game (seed 52): u5's one model on a 60 mm round base (Grinding-Annihilation, Move Phase: a unit
    # moves its models) was put down half under a hand left lying on the table. The detector read the part it saw as
    # a 60x35 oval, 0.3" off the base's centre, and no 60x35 model is on the table: the tracker showed u5m1 back where
    # it stood, not seen, and the piece as unexplained, until the base was read round again. The piece fits inside
    # the base; no other model explains it, no other piece u5m1: it is u5m1, its place unsure by the hidden part.
    tracker = _table(
        {
            "u5m1": ("u5", "60", (10.14, 17.14)),
            "u1m1": ("u1", "32", (4.0, 4.0)),
            "u1m2": ("u1", "32", (5.5, 4.0)),
            "u2m1": ("u2", "60", (11.49, 9.84)),
        },
        {"u5": "red", "u1": "red", "u2": "blue"},
    )
    still = [
        {"x": 4.0, "y": 4.0, "base": "32", "player": "red"},
        {"x": 5.5, "y": 4.0, "base": "32", "player": "red"},
        {"x": 11.49, "y": 9.84, "base": "60", "player": "blue"},
    ]
    true_at = (9.64, 13.59)
    part = {"x": 9.62, "y": 13.29, "base": "60x35", "player": "red", "sigma_in": 0.02}
    update = tracker.update([*still, part], active_unit="u5" if told else None)
    m = tracker.models["u5m1"]
    assert not update.desync and not m.unseen and (m.x, m.y) == (9.62, 13.29)
    # the true centre lies up to 1.18" - 0.69" across the oval: sigma (1.18 - 0.69) / sqrt(3) = 0.28"
    assert m.measured_sigma_in == pytest.approx(0.284, abs=0.005)
    assert any("u5m1: its 60 base read as a 60x35 piece (partly hidden?)" in text for text in update.messages)
    (move,) = [h for h in tracker.history if h["event"] == "move"]
    true_length = math.dist((10.14, 17.14), true_at)
    assert abs(move["length_in"] - true_length) <= 2 * move["length_sigma_in"]
    # Read the same way while another unit moves: it stays, as it is.
    moved = [still[0], {**still[1], "y": 6.0}, still[2]]
    update = tracker.update([*moved, part], active_unit="u1" if told else None)
    assert not update.desync and (tracker.models["u5m1"].x, tracker.models["u5m1"].y) == (9.62, 13.29)
    assert not any("u5m1" in text for text in update.messages)  # asked once
    # The hand lifted, its base read in full where it stands: the same place, measured better, and no move of its own.
    full = {"x": true_at[0], "y": true_at[1], "base": "60", "player": "red", "sigma_in": 0.02}
    update = tracker.update([*moved, full], active_unit="u1" if told else None)
    m = tracker.models["u5m1"]
    assert not update.desync and (m.x, m.y) == true_at and m.measured_sigma_in == 0.02
    assert [h["model"] for h in tracker.history if h["event"] == "move"] == ["u5m1", "u1m2"]


@pytest.mark.parametrize("told", [True, False])
def test_an_oval_put_down_behind_a_building_and_read_round_is_its_model_not_a_casualty_back(told: bool) -> None:
    # A rendered page game (Affinity: Focal Point, seed 107, a model at a time, casualties): u4's one model on a
    # 60x35 mm oval moved 3.8" to stand behind a tall building, whose roof hid the oval's far half from the camera.
    # The detector read the half it saw as a 40 mm round base (wider than the oval by 14 %, 0.11" off its centre).
    # Read as no piece of u4m1's, the reading that moved the least took it for u1m4, a red 50 mm casualty taken off
    # the table at the round's start 3.3" away, back on a blue piece; u4m1 was shown nowhere for the rest of the game.
    # The piece is u4m1's, its place unsure by the hidden part (Focal Point 5.2: a unit moves its models).
    tracker = _table(
        {
            "u4m1": ("u4", "60x35", (16.65, 10.53)),
            "u1m4": ("u1", "50", (15.33, 13.58)),
            "u1m1": ("u1", "50", (17.0, 16.0)),
            "u5m2": ("u5", "50", (10.56, 10.91)),
        },
        {"u4": "blue", "u1": "red", "u5": "blue"},
    )
    still = [
        {"x": 17.0, "y": 16.0, "base": "50", "player": "red"},
        {"x": 10.56, "y": 10.91, "base": "50", "player": "blue"},
    ]
    tracker.update([{"x": 16.65, "y": 10.53, "base": "60x35", "player": "blue"}, *still])
    update = tracker.update([{"x": 16.65, "y": 10.53, "base": "60x35", "player": "blue"}, *still])  # u1m4 taken off
    assert tracker.models["u1m4"].gone
    part = {"x": 12.99, "y": 11.17, "base": "40", "player": "blue", "sigma_in": 0.09}
    update = tracker.update([part, *still], active_unit="u4" if told else None)
    m = tracker.models["u4m1"]
    assert (m.x, m.y) == (12.99, 11.17) and not m.unseen and m.measured_sigma_in > 0.2
    assert tracker.models["u1m4"].gone and "u1m4" not in update.returned
    assert not update.unexplained


@pytest.mark.parametrize("told", [True, False])
def test_a_casualty_is_not_taken_back_onto_a_piece_in_the_other_players_colour(told: bool) -> None:
    # Affinity: Focal Point, Casualties: "When a formation's HP drops, remove models to represent casualties." u1m4
    # (red, 50 mm) is taken off. A blue 40 mm piece then turns up 2.9" from where it fell, one no model on the table
    # explains (a base misread in part, a model the players have not added yet). Not told which unit moved, the
    # reading that moved the fewest models took it for u1m4 back in play, silently. A casualty comes back off its
    # own spot only on a piece of its own colour: this one is asked about. A red piece there is u1m4, put back.
    def game(piece_player: str) -> tuple[IdentityTracker, Any]:
        tracker = _table(
            {
                "u1m4": ("u1", "50", (15.33, 13.58)),
                "u1m1": ("u1", "50", (17.0, 16.0)),
                "u5m2": ("u5", "50", (10.56, 10.91)),
            },
            {"u1": "red", "u5": "blue"},
        )
        still = [
            {"x": 17.0, "y": 16.0, "base": "50", "player": "red"},
            {"x": 10.56, "y": 10.91, "base": "50", "player": "blue"},
        ]
        tracker.update(still)  # u1m4 taken off
        assert tracker.models["u1m4"].gone
        piece = {"x": 13.0, "y": 11.5, "base": "40", "player": piece_player, "sigma_in": 0.02}
        return tracker, tracker.update([piece, *still], active_unit="u5" if told else None)

    tracker, update = game("blue")
    assert tracker.models["u1m4"].gone and (tracker.models["u1m4"].x, tracker.models["u1m4"].y) == (15.33, 13.58)
    assert update.returned == () and update.unexplained == (0,)
    assert any("match no known model" in message for message in update.messages)
    if not told:
        tracker, update = game("red")
        assert update.returned == ("u1m4",) and (tracker.models["u1m4"].x, tracker.models["u1m4"].y) == (13.0, 11.5)


@pytest.mark.parametrize("case", ["its own", "looks unlike it", "another size", "a blue model missing"])
def test_a_model_lost_behind_terrain_is_seen_again_on_a_piece_read_in_the_other_players_colour(case: str) -> None:
    # Affinity: Focal Point, Turn Structure: players activate "one formation at a time", here a model at a time. Page
    # game focal-point seed 131: u5m1 (red, 25 mm, its figure painted green, blue's colour) was put down where a
    # building hid it whole, and taken for picked up; in its unit's next activation it came down in view 6.4" from
    # where it was last seen, its yellow rim thin beside the green figure, and the piece was read blue. A casualty
    # comes back only on a piece of its own colour, so the page took the piece for a new blue model and showed u5m1
    # nowhere for the rest of the game. No blue model can be that piece, it is read u5m1's size, its figure looks
    # like u5m1's: it is u5m1, and the players are asked to confirm. Where the look or the size differ, or a blue
    # model is missing, the piece is asked about as before.
    tracker = _table(
        {
            "u5m1": ("u5", "25", (12.2218, 11.656)),
            "u5m2": ("u5", "25", (13.5868, 11.4084)),
            "u2m1": ("u2", "25", (18.7089, 15.5072)),
            "u2m2": ("u2", "25", (20.0, 15.5)),
        },
        {"u5": "red", "u2": "blue"},
    )
    looks = {"u5m1": (92.8, 111.1, 141.3), "u5m2": (35.5, 135.5, 108.4), "u2m1": (60.0, 150.0, 90.0)}
    looks["u2m2"] = looks["u2m1"]
    for mid, look in looks.items():
        tracker.models[mid].look = look
    blue = [
        {"x": 18.7089, "y": 15.5072, "base": "25", "player": "blue", "sigma_in": 0.015, "look": looks["u2m1"]},
        {"x": 20.0, "y": 15.5, "base": "25", "player": "blue", "sigma_in": 0.015, "look": looks["u2m2"]},
    ]
    u5m2 = {"x": 13.5868, "y": 11.4084, "base": "25", "player": "red", "sigma_in": 0.015, "look": looks["u5m2"]}
    tracker.update([u5m2, *blue])  # u5m1 put down out of sight
    assert tracker.models["u5m1"].gone
    look = (97.5, 110.0, 142.0) if case != "looks unlike it" else (50.0, 128.0, 128.0)
    piece = {"x": 7.4779, "y": 15.9117, "base": "28.5" if case == "another size" else "25", "player": "blue"}
    piece |= {"sigma_in": 0.015, "look": look}
    still = [u5m2, *(blue[:1] if case == "a blue model missing" else blue)]
    update = tracker.update([piece, *still])
    u5m1 = tracker.models["u5m1"]
    if case == "its own":
        assert update.returned == ("u5m1",) and update.unexplained == ()
        assert (u5m1.x, u5m1.y, u5m1.player) == (7.4779, 15.9117, "red") and u5m1.uncertain
        assert "u5m1" in update.uncertain
        assert any("u5m1: seen again on a piece read in blue's colour" in message for message in update.messages)
        # Where u5m1 stood when u5 was activated was not seen (it came down out of sight in u5's activation before):
        # its move is recorded from where it was last seen, and the record says so; the rules do not judge it.
        record = tracker.activations["u5"]
        assert record["from"]["u5m1"] == [12.2218, 11.656] and record["unseen_from"] == ["u5m1"]
        # seen again still there, read blue again: kept, no new question about the piece
        again = tracker.update([piece, *still])
        assert again.unexplained == () and (tracker.models["u5m1"].x, tracker.models["u5m1"].y) == (7.4779, 15.9117)
    else:  # the piece asked about (or, a blue model missing, taken for that model moved), u5m1 still gone
        assert update.returned == () and u5m1.gone and (u5m1.x, u5m1.y) == (12.2218, 11.656)
        assert update.unexplained == (() if case == "a blue model missing" else (0,))
        assert not any("seen again on a piece read in" in message for message in update.messages)


def test_a_model_the_players_placed_moves_from_where_they_put_it_its_start_not_called_unseen() -> None:
    # Grinding-Annihilation, Move Phase: a formation's troops move together. Page game seed 45: the camera never saw
    # u9m1 at the deployment (behind a building) and the players added it where it stands. When u9 moved, its move
    # was judged from there: the players' word is its place, not a place the camera did not see (unlike a model
    # picked up, whose start ``unseen_from`` names).
    tracker = _table(
        {"u9m1": ("u9", "28.5", (4.537, 48.995)), "u9m2": ("u9", "28.5", (5.853, 48.837))},
        {"u9": "red"},
    )
    placed = tracker.models["u9m1"]
    placed.lost = placed.gone = placed.placed = True  # as the page adopts a model the players added
    dx, dy = 3.3, 1.72
    tracker.update(
        [
            {"x": 4.537 + dx, "y": 48.995 + dy, "base": "28.5", "player": "red", "sigma_in": 0.015},
            {"x": 5.853 + dx, "y": 48.837 + dy, "base": "28.5", "player": "red", "sigma_in": 0.015},
        ]
    )
    record = tracker.activations["u9"]
    assert record["from"] == {"u9m1": [4.537, 48.995], "u9m2": [5.853, 48.837]}
    assert "unseen_from" not in record
    assert (tracker.models["u9m1"].x, tracker.models["u9m1"].y) == (4.537 + dx, 48.995 + dy)


def test_a_small_piece_is_no_big_base_partly_hidden() -> None:
    # Only a piece covering 40 % of the base's area or more can be that base partly hidden: a 25 mm piece left
    # unexplained is no 60 mm model that vanished, and neither is a piece in the other player's colour.
    tracker = _table({"u5m1": ("u5", "60", (10.0, 10.0))}, {"u5": "red"})
    update = tracker.update(
        [
            {"x": 10.0, "y": 13.0, "base": "25", "player": "red"},
            {"x": 10.0, "y": 7.0, "base": "60x35", "player": "blue"},
        ],
        active_unit="u5",
    )
    assert update.vanished == ("u5m1",) and update.unexplained == (0, 1)
    assert (tracker.models["u5m1"].x, tracker.models["u5m1"].y) == (10.0, 10.0)


def test_the_page_shows_a_base_read_in_part_as_its_model_not_as_a_new_piece() -> None:
    # The page and watch follow the table through IdentifiedScenes. A 60 mm base put down half under a hand left on
    # the table, read as a 60x35 oval (seed 52), was adopted as a new model ("new1") beside u5m1 shown where it
    # had stood. It is u5m1, with its own 60 mm base, its place as unsure as the part seen allows.
    from vision.live.identified import IdentifiedScenes

    def scene(u5m1: dict[str, Any]) -> dict[str, Any]:
        return {
            "format": "tablesight-scene/1",
            "players": [{"id": "red"}, {"id": "blue"}],
            "units": [{"id": "u5", "player": "red"}, {"id": "u2", "player": "blue"}],
            "models": [
                {"id": "u5m1", "unit": "u5", **u5m1},
                {"id": "u2m1", "unit": "u2", "base": "60", "x": 11.49, "y": 9.84, "sigma_in": 0.02},
            ],
        }

    identified = IdentifiedScenes()
    identified.identify(scene({"base": "60", "x": 10.14, "y": 17.14, "sigma_in": 0.02}))
    out, update = identified.identify(scene({"base": "60x35", "x": 9.62, "y": 13.29, "sigma_in": 0.02}))
    assert update is not None and not update.desync
    assert [m["id"] for m in out["models"]] == ["u5m1", "u2m1"]
    u5m1 = out["models"][0]
    assert (u5m1["base"], u5m1["x"], u5m1["y"]) == ("60", 9.62, 13.29) and u5m1["sigma_in"] == pytest.approx(
        0.285, abs=0.005
    )


def test_a_spread_unit_seen_whole_again_after_a_model_was_missed_is_paired_by_its_move() -> None:
    # Grinding-Annihilation, Move Phase: unit c (three alike 32 mm models in a line, 2.1" apart) moves 3" up the
    # table, the players spreading it as they put it down (c3 lands 1" off the others' shift), and the camera
    # misses c3's base in that settled frame. The two pieces seen then fit "c2 and c3 moved 4.1" along the line"
    # as well as "c1 and c2 moved 3"", and the update calls them uncertain. When unit d is named next, c3's piece
    # shows: the whole unit, seen again, is paired by the move it shares (each model the least off it), not left
    # with c1 on c3's piece and every id one place along.
    scene = {
        "format": "tablesight-scene/1",
        "units": [{"id": "c", "player": "red"}, {"id": "d", "player": "blue"}],
        "models": [
            {"id": "c1", "unit": "c", "base": "32", "x": 28.76, "y": 9.34},
            {"id": "c2", "unit": "c", "base": "32", "x": 31.11, "y": 9.28},
            {"id": "c3", "unit": "c", "base": "32", "x": 33.20, "y": 9.33},
            {"id": "d1", "unit": "d", "base": "25", "x": 10.0, "y": 30.0},
        ],
    }
    moved = {"c1": (28.21, 12.28), "c2": (30.39, 12.37), "c3": (32.61, 13.43)}

    def pieces(ids: list[str]) -> list[dict[str, object]]:
        out = [{"x": moved[k][0], "y": moved[k][1], "base": "32", "player": "red"} for k in ids]
        return [*out, {"x": 10.0, "y": 31.0, "base": "25", "player": "blue"}]  # d1 moves 1" on its turn

    tracker = IdentityTracker.from_scene(scene)
    tracker.update(pieces(["c1", "c2"])[:2], active_unit="c")
    update = tracker.update(pieces(["c1", "c2", "c3"]), active_unit="d")
    assert {k: (tracker.models[k].x, tracker.models[k].y) for k in moved} == moved
    assert not update.vanished and not update.unexplained
    # Each model's move, as recorded, from where it stood to its own piece.
    moves = {h["model"]: h["length_in"] for h in tracker.history if h.get("event") == "move" and h["unit"] == "c"}
    start = {m["id"]: (m["x"], m["y"]) for m in scene["models"]}
    assert moves == {k: pytest.approx(math.dist(start[k], moved[k]), abs=1e-3) for k in moved}


def test_not_told_a_lone_model_missed_after_its_move_shows_late_beside_the_next_unit_moving() -> None:
    # Not told which unit moves. The scout (a unit of one model) moves 2"; then a hero (one model too) is moved 4"
    # and the camera misses it in that settled frame, so no unit is seen moving, the hero only gone. In the next
    # frame unit a moves 4", the hero's piece shows where it went, and the camera misses the scout. Read as "a
    # moved", the hero's piece was left unexplained, so the reading "any unit moved" won; there the scout, the unit
    # last seen moving, went on with its activation onto a's nearest piece 7" off, and a1 was lost. A model gone
    # since the last frame only now takes a piece no model of the unit tried as moving explains.
    scene = {
        "format": "tablesight-scene/1",
        "units": [*ROW["units"], {"id": "hero", "player": "red"}, {"id": "scout", "player": "red"}],
        "models": [
            *ROW["models"],
            {"id": "h1", "unit": "hero", "base": "32", "x": 20.0, "y": 20.0},
            {"id": "s1", "unit": "scout", "base": "32", "x": 14.0, "y": 12.0},
        ],
    }
    hero = {"x": 20.0, "y": 20.0, "base": "32", "player": "red"}
    scout = {"x": 16.0, "y": 12.0, "base": "32", "player": "red"}
    tracker = IdentityTracker.from_scene(scene)
    update = tracker.update([*row_dets(0.0), hero, scout])
    assert [mv.model for mv in update.moves] == ["s1"]
    update = tracker.update([*row_dets(0.0), scout])
    assert update.vanished == ("h1",)
    update = tracker.update([*row_dets(4.0), {**hero, "x": 24.0}])
    assert sorted(mv.model for mv in update.moves) == ["a1", "a2", "a3", "a4", "h1"]
    assert update.vanished == ("s1",) and not update.unexplained
    assert (tracker.models["s1"].x, tracker.models["s1"].y) == (16.0, 12.0)
    assert (tracker.models["h1"].x, tracker.models["h1"].y) == (24.0, 20.0)
