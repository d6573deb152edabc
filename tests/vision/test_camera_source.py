"""What real cameras do that folders of rendered frames do not: open at 640x480 unless asked for more, send 30
frames a second while the referee reads far fewer, start dark, drop out, send grey, BGRA or 16-bit frames.

OpenCV opens a USB webcam at 640x480 unless told otherwise, whatever the camera can do; a 44"x60" table is then
seen at about 9 px/in, where small bases and objective markers are missed (docs/live.md, session 61)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.lens import LensModel
from tablesight.cli import main
from vision.live import sources
from vision.live.sources import CaptureSource, IteratorSource, ResilientSource, is_live, open_source
from vision.live.watch import watch
from vision.synth.table import render_table
from web.camera_feed import CameraFeed


class FakeCapture:
    """cv2.VideoCapture as a webcam driver answers: it records what it was asked and gives ``frame``."""

    made: list[FakeCapture] = []
    frame = np.zeros((480, 640, 3), np.uint8)

    def __init__(self, target: int | str) -> None:
        self.target = target
        self.asked: dict[int, float] = {}
        FakeCapture.made.append(self)

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return True

    def set(self, prop: int, value: float) -> bool:
        self.asked[prop] = value
        return True

    def read(self) -> tuple[bool, Any]:
        return True, FakeCapture.frame.copy()

    def grab(self) -> bool:
        time.sleep(1 / 30)  # a webcam's 30 frames a second
        return True

    def retrieve(self) -> tuple[bool, Any]:
        return True, FakeCapture.frame.copy()

    def release(self) -> None:
        pass


class ScriptedCamera:
    """A source that gives its frames in turn, then None (stalled or ended): a camera as a test scripts it."""

    name = "camera 0"

    def __init__(self, frames: list[Any]) -> None:
        self.frames = frames

    def read(self) -> Any:
        return self.frames.pop(0) if self.frames else None

    def close(self) -> None:
        pass


@pytest.fixture
def fake_capture(monkeypatch: pytest.MonkeyPatch) -> type[FakeCapture]:
    FakeCapture.made = []
    monkeypatch.setattr(sources.cv2, "VideoCapture", FakeCapture)
    monkeypatch.setattr(sources, "CAMERA_WARM_UP_S", 0.05)  # the warm-up has its own test
    return FakeCapture


def test_a_usb_camera_is_asked_for_full_hd_compressed_and_a_stream_or_file_is_not(
    fake_capture: type[FakeCapture],
) -> None:
    fake_capture.frame = np.full((1080, 1920, 3), 90, np.uint8)
    camera = open_source("0")
    assert camera.read() is not None
    asked = fake_capture.made[-1].asked
    assert asked[cv2.CAP_PROP_FRAME_WIDTH] == 1920 and asked[cv2.CAP_PROP_FRAME_HEIGHT] == 1080
    # MJPG: over USB 2 most webcams give 1080p only compressed.
    assert asked[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter.fourcc(*"MJPG")
    assert isinstance(camera, CaptureSource) and camera.note == ""  # it gave what was asked

    other = open_source("1", (1280, 720))
    assert other.read() is not None
    assert fake_capture.made[-1].asked[cv2.CAP_PROP_FRAME_WIDTH] == 1280

    # Linux names a camera by its device too ('/dev/video0'); /dev/null stands in for one here, a character device.
    device = open_source("/dev/null")
    assert isinstance(device, CaptureSource) and device.read() is not None
    assert fake_capture.made[-1].target == "/dev/null" and fake_capture.made[-1].asked[cv2.CAP_PROP_FRAME_WIDTH] == 1920
    assert is_live("/dev/null") and not is_live("/etc/hostname")

    for spec in ("rtsp://192.168.1.20:8554/table", "http://phone.local:8080/video"):
        stream = open_source(spec)
        assert stream.read() is not None
        assert fake_capture.made[-1].asked == {}  # a stream or a video comes at the size it was made
        assert isinstance(stream, CaptureSource) and stream.note == ""


def test_a_camera_that_gives_fewer_pixels_than_asked_says_so_at_set_up(fake_capture: type[FakeCapture]) -> None:
    # The set-up frame is a rendered empty 2'x2' table as a 1280x720 webcam sees it; 1920x1080 was asked for.
    table = render_table(21, "focal-point", hard="none", size=(1280, 720))
    fake_capture.frame = table.empty
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    events = list(watch(lambda: open_source("0"), table.layout, "focal-point", lens, max_frames=1))
    assert events[0].kind == "status" and "set up" in events[0].payload["message"]
    said = events[0].payload["message"]
    assert "camera 0 gives 1280x720 frames, not the 1920x1080 asked for" in said, said
    assert "--camera-size" in said

    # Asked for what it gives: nothing to say.
    events = list(watch(lambda: open_source("0", (1280, 720)), table.layout, "focal-point", lens, max_frames=1))
    assert "set up" in events[0].payload["message"] and "asked for" not in events[0].payload["message"]

    # The referee page's camera feed says it in its status line too.
    feed = CameraFeed(lambda: open_source("0"), table.layout, "camera 0", "focal-point", lens)
    scene, status = feed.next()
    assert scene is None and "set up" in status.message
    assert "camera 0 gives 1280x720 frames, not the 1920x1080 asked for" in status.message


def test_a_camera_back_at_another_size_after_a_drop_says_what_size_it_skips() -> None:
    # A camera that returns from a drop-out at another size cannot be read against the set-up's calibration:
    # its frames are skipped (the last good scene stays up), and the message says why instead of "broken frame".
    full = np.random.default_rng(1).integers(0, 255, (1080, 1920, 3)).astype(np.uint8)
    small = np.random.default_rng(2).integers(0, 255, (480, 640, 3)).astype(np.uint8)

    scripts = [ScriptedCamera([full, None]), ScriptedCamera([small])]
    now = [0.0]
    source = ResilientSource(lambda: scripts.pop(0), clock=lambda: now[0])
    assert source.read().frame is not None
    assert source.read().stale  # dropped
    now[0] += 1.0
    back = source.read()
    assert back.frame is None and back.stale
    assert back.message == "a 640x480 frame was skipped: the camera was set up on 1920x1080"


@pytest.mark.parametrize("bad", ["1920", "1920x", "axb", "0x1080", "1920x1080x3"])
def test_a_camera_size_that_is_not_width_x_height_is_refused_naming_it(
    bad: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["watch", "0", "--camera-size", bad]) != 0
    assert f"--camera-size '{bad}': give the frames asked for as WIDTHxHEIGHT in pixels" in capsys.readouterr().err
    db = tmp_path / "g.sqlite"
    assert main(["serve", "--camera", "0", "--camera-size", bad, "--db", str(db)]) != 0
    assert f"--camera-size '{bad}'" in capsys.readouterr().err


def test_watch_waits_for_a_camera_that_drops_out_and_goes_on_refereeing_when_it_is_back() -> None:
    # The live-table issue: "a camera that drops out is reconnected with back-off while the last good scene stays
    # on screen, marked stale". `watch` used to give up after 5 stale reads in a row, taken within a millisecond,
    # so a camera unplugged for a moment ended the game; a camera or stream is now waited for.
    table = render_table(21, "focal-point", hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}

    def unplugged() -> ScriptedCamera:
        raise OSError("USB unplugged")

    openers: list[Any] = [
        lambda: ScriptedCamera([table.empty, table.empty, None]),  # the set-up, then it drops out
        unplugged,
        lambda: ScriptedCamera([table.image] * 40),  # back, with the models deployed
    ]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    events = []
    slept_till_back = 0.0
    for event in watch(
        lambda: openers.pop(0)(),
        table.layout,
        "focal-point",
        lens,
        players,
        max_frames=200,
        give_up_after_stale=None,
        stale_wait_s=0.05,
        sleep=sleep,
    ):
        events.append(event)
        if event.payload.get("message", "").startswith("frames from the camera again"):
            slept_till_back = sum(slept)
        if event.kind == "ruling":
            break
    said = [e.payload["message"] for e in events if e.kind == "status"]
    assert sum("set up" in m for m in said) == 1, said  # the set-up is kept through the drop-out
    stale = [e.payload["message"] for e in events if e.kind == "status" and e.payload["stale"]]
    assert any("no frame from the camera" in m for m in stale) and any("USB unplugged" in m for m in stale), stale
    assert all(a.split(";")[0] != b.split(";")[0] for a, b in zip(stale, stale[1:], strict=False))  # each said once
    back = [m for m in said if m.startswith("frames from the camera again")]
    assert len(back) == 1, said
    assert 1.0 <= slept_till_back < 3.0  # waited through the back-off (0.5 s, then 1 s), not given up on
    rulings = [e for e in events if e.kind == "ruling"]
    assert rulings and said.index(back[0]) < events.index(rulings[0])  # refereeing went on after it came back


def test_a_camera_or_a_stream_is_waited_for_and_a_folder_or_video_ends() -> None:
    assert is_live("0") and is_live("rtsp://192.168.1.20:8554/table") and is_live("http://phone.local:8080/video")
    assert not is_live("game.mp4") and not is_live("frames/") and not is_live("table.jpg")


class NumberedCapture:
    """A live camera at 30 frames a second whose frames carry their number (pixel 0, two bytes); like a
    driver's or a stream's buffer, ``read`` gives the frames in turn however long ago they were taken."""

    made: list[NumberedCapture] = []
    unplugged = False

    def __init__(self, target: int | str) -> None:
        self.taken = 0
        self.released = False
        NumberedCapture.made.append(self)

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return True

    def set(self, prop: int, value: float) -> bool:
        return True

    def _frame(self, number: int) -> np.ndarray:
        frame = np.full((48, 64, 3), 100, np.uint8)
        frame[0, 0, :2] = number % 256, number // 256
        return frame

    def grab(self) -> bool:
        time.sleep(1 / 30)
        self.taken += 1
        return not NumberedCapture.unplugged

    def retrieve(self) -> tuple[bool, Any]:
        return True, self._frame(self.taken)

    def read(self) -> tuple[bool, Any]:
        self.taken += 1
        return True, self._frame(self.taken)

    def release(self) -> None:
        self.released = True


@pytest.fixture
def numbered_capture(monkeypatch: pytest.MonkeyPatch) -> type[NumberedCapture]:
    NumberedCapture.made, NumberedCapture.unplugged = [], False
    monkeypatch.setattr(sources.cv2, "VideoCapture", NumberedCapture)
    return NumberedCapture


def _number(frame: np.ndarray) -> int:
    return int(frame[0, 0, 0]) + 256 * int(frame[0, 0, 1])


def test_a_camera_or_stream_read_once_a_second_gives_its_newest_frame_not_the_oldest_it_holds(
    numbered_capture: type[NumberedCapture],
) -> None:
    # The page reads one frame a tick (1 s) from a camera that sends 30: read in turn, the frames would fall
    # further behind with every tick (a stream's buffer holds seconds of them).
    source = open_source("http://phone.local:8080/video")
    first = source.read()
    assert first is not None
    for _ in range(3):
        time.sleep(0.3)  # the page's tick, shortened
        before = _number(first)
        first = source.read()
        assert first is not None
        assert _number(first) - before >= 0.3 * 30 - 3, (before, _number(first))  # ~9 frames on, not the next one
    camera = NumberedCapture.made[-1]
    source.close()
    assert camera.released  # by the grabbing thread, as it stopped

    # A video file is read frame by frame: none may be skipped.
    video = open_source(str(Path(__file__)))  # any existing file that is not a photo opens as a video
    numbers = [_number(f) for f in (video.read(), video.read(), video.read()) if f is not None]
    assert numbers == [1, 2, 3]
    video.close()


def test_a_live_camera_that_stops_sending_is_a_drop_out_to_reconnect(
    numbered_capture: type[NumberedCapture], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "CAMERA_WARM_UP_S", 0.05)
    now = [0.0]
    source = ResilientSource(lambda: open_source("0"), clock=lambda: now[0])
    assert source.read().frame is not None
    NumberedCapture.unplugged = True
    statuses = [source.read() for _ in range(3)]  # its grabs fail: no frame, then the back-off
    assert all(s.frame is None and s.stale for s in statuses)
    assert any("no frame from the camera" in s.message for s in statuses)
    assert NumberedCapture.made[0].released
    NumberedCapture.unplugged = False
    now[0] += 1.0
    back = source.read()
    assert back.frame is not None and not back.stale and len(NumberedCapture.made) == 2  # opened anew
    source.close()


def test_a_usb_camera_hands_out_no_frame_from_its_first_second_and_a_stream_its_first_at_once(
    numbered_capture: type[NumberedCapture],
) -> None:
    # The first frame read is the set-up's empty table; a webcam's first frames after opening are dark or
    # off-colour while its exposure and white balance settle (vision/live/sources.py: CAMERA_WARM_UP_S).
    camera = open_source("0")
    first = camera.read()
    assert first is not None and _number(first) >= sources.CAMERA_WARM_UP_S * 30 - 5, _number(first)
    camera.close()
    stream = open_source("rtsp://192.168.1.20:8554/table")  # a phone's camera is already running
    first = stream.read()
    assert first is not None and _number(first) <= 3
    stream.close()


@pytest.mark.parametrize(
    ("kind", "convert"),
    [
        ("grey (a mono or infrared camera)", lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2GRAY)),
        ("BGRA", lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2BGRA)),
        ("16 bits a channel", lambda f: f.astype(np.uint16) * 257),
    ],
)
def test_frames_in_another_pixel_format_are_read_as_colour_frames(kind: str, convert: Any) -> None:
    # Each of these used to end `watch` with a traceback at the first frame (calibration or the detector's
    # array shapes); the page's feed failed at every tick.
    table = render_table(21, "focal-point", hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frames = [convert(table.empty)] + [convert(table.image)] * 5
    events = list(watch(lambda: IteratorSource(iter(frames)), table.layout, "focal-point", lens))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    assert said[0].startswith("set up from the empty table"), (kind, said)
    assert any(e.kind == "ruling" for e in events), kind  # the models were found and judged


def test_a_frame_the_pipeline_fails_on_is_said_once_and_the_game_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from vision.live import watch as watching

    table = render_table(21, "focal-point", hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    real_analyze = watching.analyze
    calls = []

    def flaky_analyze(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the detector ran out of memory")
        return real_analyze(*args, **kwargs)

    monkeypatch.setattr(watching, "analyze", flaky_analyze)
    moved = table.image.copy()
    moved[:40, :40] = 255  # a change the gate sees, so the table is analysed again
    frames = [table.empty] + [table.image] * 4 + [moved] * 4
    events = list(watch(lambda: IteratorSource(iter(frames)), table.layout, "focal-point", lens))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    failed = [m for m in said if m.startswith("a frame could not be read (analysis: the detector ran out of memory)")]
    assert len(failed) == 1, said
    assert len(calls) == 2 and any(e.kind == "ruling" for e in events)  # the next settled frame was read

    # Frames of float pixels cannot be read as colour: skipped, saying why, and `watch` goes on to the end.
    floats = [f.astype(np.float32) / 255 for f in frames]
    events = list(watch(lambda: IteratorSource(iter(floats)), table.layout, "focal-point", lens))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    assert said[0] == "a frame of float32 pixels was skipped (8-bit colour expected)", said


def test_a_recorded_game_reads_on_past_an_unreadable_file_and_once_ended_is_not_replayed(tmp_path: Path) -> None:
    # An empty or broken file in a folder of frames used to end `watch` there (taken for the recording's end); and
    # a folder that had ended was opened again after the back-off, replaying the game from its empty table (the
    # page's feed, read once a tick, did so).
    from vision.live.sources import FolderSource

    table = render_table(21, "focal-point", hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    cv2.imwrite(str(tmp_path / "000.png"), table.empty)
    (tmp_path / "001.png").write_bytes(b"")  # the recorder was stopped mid-write
    for k in range(2, 7):
        cv2.imwrite(str(tmp_path / f"{k:03d}.png"), table.image)
    events = list(watch(lambda: FolderSource(tmp_path), table.layout, "focal-point", lens))
    said = [e.payload["message"] for e in events if e.kind == "status"]
    assert "a broken frame was skipped" in said
    rulings = [k for k, e in enumerate(events) if e.kind == "ruling"]
    assert rulings and rulings[0] > said.index("a broken frame was skipped")  # read on past it
    assert said[-1] == "the recording has ended; showing the last good scene"

    opened = []

    def opener() -> FolderSource:
        opened.append(1)
        return FolderSource(tmp_path)

    now = [0.0]
    source = ResilientSource(opener, clock=lambda: now[0])
    frames = [source.read() for _ in range(7)]
    assert sum(f.frame is not None for f in frames) == 6
    for _ in range(5):
        now[0] += 10.0  # far past any back-off
        ended = source.read()
        assert ended.frame is None and ended.message == "the recording has ended; showing the last good scene"
    assert len(opened) == 1  # never opened again, so never replayed


def _hand_over(frame: np.ndarray, x_px: int) -> np.ndarray:
    """A player's hand and arm over the table (skin-coloured), as when placing the camera or the mat."""
    out = frame.copy()
    cv2.ellipse(out, (x_px, 600), (220, 120), 30, 0, 360, (120, 150, 205), -1)
    cv2.rectangle(out, (x_px + 100, 620), (x_px + 600, 760), (115, 145, 200), -1)
    return out


def test_a_live_cameras_set_up_waits_for_hands_to_leave_the_table() -> None:
    # The first frame is the empty-table reference: taken with a hand over the table, the hand stayed in it, and
    # "something covers 102 sq in of the table ... (a hand?): pieces under it cannot be seen" was said of every
    # later frame. A live camera's set-up now waits for SET_UP_STILL_FRAMES still frames.
    from vision.live.setup import WAITING_TO_SET_UP

    table = render_table(21, "focal-point", hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    frames = [_hand_over(table.empty, 900), _hand_over(table.empty, 700)] + [table.empty] * 3 + [table.image] * 5

    def said_of(settle: bool) -> tuple[list[str], int]:
        events = list(
            watch(
                lambda: IteratorSource(iter(frames)),
                table.layout,
                "focal-point",
                lens,
                players,
                settle_set_up=settle,
            )
        )
        return [e.payload["message"] for e in events if e.kind == "status"], sum(e.kind == "ruling" for e in events)

    said, rulings = said_of(True)
    assert said[0] == WAITING_TO_SET_UP and said[1].startswith("set up from the empty table"), said
    assert not any("covers" in m for m in said) and rulings > 0
    said, _ = said_of(False)  # a recording's first frame is its set-up, hand or not
    assert said[0].startswith("set up from the empty table") and any("something covers" in m for m in said)
    # The page's feed waits the same way.
    feed = CameraFeed(
        lambda: IteratorSource(iter(frames)), table.layout, "camera 0", "focal-point", lens, players, settle_set_up=True
    )
    statuses = [feed.next()[1].message for _ in range(len(frames))]
    assert statuses[:4] == [WAITING_TO_SET_UP] * 4 and statuses[4].startswith("set up from the empty table")
    assert not any("covers" in m for m in statuses)
