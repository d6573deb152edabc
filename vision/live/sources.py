"""Where frames come from, behind one interface: camera, network stream, video file,
folder of images, or the renderer. A source that fails never takes the process down:
``ResilientSource`` reconnects with back-off and says the picture is stale meanwhile."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from vision.image_file import ImageFileError, read_image

Image = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")
# OpenCV opens a USB webcam at 640x480 unless asked for more: a 1080p webcam then sees a 44"x60" table at
# 9 px/in, where small bases and objective markers are missed (docs/live.md, session 61).
CAMERA_SIZE_PX = (1920, 1080)
CAMERA_WARM_UP_S = 1.0  # frames a USB camera takes in its first second are not handed out (exposure settling)


class FrameSource(Protocol):
    name: str

    def read(self) -> Image | None:
        """The next frame, or None if there is none right now (ended, stalled, broken)."""

    def close(self) -> None: ...


class CaptureSource:
    """An OpenCV capture: a USB camera index, an RTSP/HTTP URL, or a video file. A USB camera is asked for
    ``size_px`` (width, height) frames; streams and files come at the size they were made. A camera or a
    stream is read through ``NewestFrames``, so each read gets the newest frame; a video file, every frame."""

    def __init__(self, target: int | str, size_px: tuple[int, int] = CAMERA_SIZE_PX, wait_s: float = 3.0) -> None:
        self.name = f"camera {target}" if isinstance(target, int) else str(target)
        self._target = target
        self._cap: cv2.VideoCapture | None = None
        self._newest: NewestFrames | None = None
        self._live = is_live(str(target))
        self.finite = not self._live  # a video file: once it ends it stays ended
        self._wait_s = wait_s
        self.asked_px = size_px if is_camera(str(target)) else None
        self.note = ""  # what the players should know about the frames (a camera that gives fewer pixels than asked)

    def read(self) -> Image | None:
        if self._cap is None:
            cap = cv2.VideoCapture(self._target)
            if not cap.isOpened():
                cap.release()
                return None
            if self.asked_px is not None:
                # MJPG first: over USB 2 most webcams give 1080p only compressed (raw YUYV tops out near 720p).
                cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*"MJPG"))
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.asked_px[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.asked_px[1])
            self._cap = cap
            # A webcam's first frames after opening are dark or off-colour while its exposure and white balance
            # settle, and the first frame read is the set-up's empty table: a USB camera warms up first.
            warm_up_s = CAMERA_WARM_UP_S if self.asked_px is not None else 0.0
            self._newest = NewestFrames(cap, warm_up_s) if self._live else None
        if self._newest is not None:
            frame = self._newest.read(self._wait_s)
        else:
            ok, frame = self._cap.read()
            frame = frame if ok else None
        if frame is None:
            return None
        if self.asked_px is not None:
            self.note = smaller_than_asked(self.name, frame.shape, self.asked_px)
        return np.asarray(frame, dtype=np.uint8)

    def close(self) -> None:
        if self._newest is not None:
            self._newest.stop()  # it releases the capture itself: never from two threads at once
        elif self._cap is not None:
            self._cap.release()
        self._cap, self._newest = None, None


class NewestFrames:
    """Grabs a live capture's frames in a thread of its own as they come, and decodes one only when asked, so
    a read gets the frame the camera took after it was asked for, not the oldest one the driver or the stream
    still holds. The page reads a frame a second and a webcam sends 30: read in turn, a USB camera's frames
    fall a tick behind, and a network stream's pile up in its buffer until they are seconds old or dropped."""

    def __init__(self, cap: cv2.VideoCapture, warm_up_s: float = 0.0) -> None:
        self._cap = cap
        self._ready_at = time.monotonic() + warm_up_s  # no frame is handed out before (its grabs go on)
        self._wanted = threading.Event()
        self._frames: queue.Queue[Image | None] = queue.Queue(maxsize=1)
        self._stopping = threading.Event()
        self.failed = False
        self._thread = threading.Thread(target=self._grab, name="newest-frames", daemon=True)
        self._thread.start()

    def _grab(self) -> None:
        try:
            while not self._stopping.is_set():
                if not self._cap.grab():
                    self.failed = True
                    break
                if self._wanted.is_set():
                    self._wanted.clear()
                    ok, frame = self._cap.retrieve()
                    self._hand_over(frame if ok else None)
        except Exception:  # noqa: BLE001 - a driver error is a dropped camera, said by the reader
            self.failed = True
        finally:
            if self.failed:
                self._hand_over(None)  # wake a read waiting for a frame that will not come
            self._cap.release()

    def _hand_over(self, frame: Image | None) -> None:
        self._drain()  # a frame a read gave up waiting for is stale now
        with contextlib.suppress(queue.Full):
            self._frames.put_nowait(frame)

    def _drain(self) -> None:
        with contextlib.suppress(queue.Empty):
            while True:
                self._frames.get_nowait()

    def read(self, wait_s: float) -> Image | None:
        """The next frame the camera takes, or None if it has failed or sends none within ``wait_s``."""
        if self.failed:
            return None
        time.sleep(max(0.0, self._ready_at - time.monotonic()))
        self._drain()
        self._wanted.set()
        try:
            return self._frames.get(timeout=wait_s)
        except queue.Empty:
            return None  # stalled

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=1.0)  # a grab blocked in the driver ends on its own; the thread is a daemon


class FolderSource:
    """Images in a folder, in name order (a recorded game, or test frames)."""

    def __init__(self, folder: str | Path) -> None:
        self.name = str(folder)
        self.files = sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        self._next = 0

    finite = True  # a recording: once it ends it stays ended (opened again it would replay from the start)

    def read(self) -> Image | None:
        if self._next >= len(self.files):
            return None
        path = self.files[self._next]
        self._next += 1
        try:
            return read_image(path)
        except ImageFileError:  # empty, cut short, not an image: a broken frame, not the recording's end
            return np.empty((0, 0, 3), np.uint8)

    def close(self) -> None:
        self._next = len(self.files)


class StillSource:
    """One photo, shown as a camera that never moves (a Flux table photographed once, a demo)."""

    def __init__(self, path: str | Path) -> None:
        self.name = str(path)
        self._path = Path(path)

    def read(self) -> Image | None:
        try:
            return read_image(self._path)
        except ImageFileError:
            return None

    def close(self) -> None:
        pass


class IteratorSource:
    """Frames from any iterator (the renderer's scripted game, a test's fake camera)."""

    def __init__(self, frames: Iterator[Image | None], name: str = "frames") -> None:
        self.name = name
        self._frames = frames

    def read(self) -> Image | None:
        return next(self._frames, None)

    def close(self) -> None:
        pass


def smaller_than_asked(name: str, shape: tuple[int, ...], asked_px: tuple[int, int]) -> str:
    """'' when a camera gives at least the frames asked for; else what that costs, in words."""
    height, width = shape[:2]
    if width >= asked_px[0] and height >= asked_px[1]:
        return ""
    return (
        f"{name} gives {width}x{height} frames, not the {asked_px[0]}x{asked_px[1]} asked for: fewer pixels to "
        "the inch, so small bases, their sizes and objective markers read worse (--camera-size asks for another)"
    )


def open_source(spec: str, camera_size_px: tuple[int, int] = CAMERA_SIZE_PX) -> FrameSource:
    """'0' or '/dev/video0' (a camera, asked for ``camera_size_px`` frames), 'rtsp://...', 'http://...', a video file, a
    folder of images, or one photo."""
    if spec.isdigit():
        return CaptureSource(int(spec), camera_size_px)
    if is_camera(spec):
        return CaptureSource(spec, camera_size_px)
    path = Path(spec)
    # A recording is what it is: one that holds no frame tablesight can read is refused here, naming why (else it
    # reads as a recording that has ended, or a camera lost, before anything was seen).
    if path.is_dir():
        folder = FolderSource(path)
        if not folder.files:
            raise ValueError(f"{spec}: a folder with no photos in it ({', '.join(IMAGE_SUFFIXES)})")
        return folder
    if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES:
        read_image(path)  # raises ImageFileError, naming the file and what is wrong with it
        return StillSource(path)
    if path.is_file():
        _check_video(path)
        return CaptureSource(spec)
    if spec.startswith(("rtsp://", "http://", "https://")):
        return CaptureSource(spec)
    raise ValueError(
        f"{spec!r}: no such file or folder (a video, a photo, a folder of them), nor a camera index or URL"
    )


def _check_video(path: Path) -> None:
    """Raises ValueError, naming ``path``, where OpenCV cannot open it as a video or read its first frame."""
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise ValueError(f"{path}: not a video tablesight can read (nor a photo: {', '.join(IMAGE_SUFFIXES)})")
        ok, frame = cap.read()
        if not ok or frame is None:
            raise ValueError(f"{path}: a video with no frame tablesight can read")
    finally:
        cap.release()


def is_camera(spec: str) -> bool:
    """A camera on this machine: an index ('0') or a device (Linux's '/dev/video0')."""
    return spec.isdigit() or (spec.startswith("/dev/") and Path(spec).is_char_device())


def is_live(spec: str) -> bool:
    """A camera or a network stream: frames keep coming, and a pause in them is a drop-out to wait out (a folder,
    a video file or a photo ends)."""
    return is_camera(spec) or spec.startswith(("rtsp://", "http://", "https://"))


@dataclass(frozen=True)
class SourceStatus:
    frame: Image | None
    stale: bool  # no fresh frame: show the last good scene, marked stale
    message: str


def as_bgr(image: object) -> object:
    """A frame as the pipeline reads it, 8-bit BGR, from what a capture may give instead: grey (an infrared or
    mono camera), BGRA, or 16 bits a channel. Anything else is returned as it is (and then not taken as a frame)."""
    if not isinstance(image, np.ndarray) or image.size == 0:
        return image
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    if image.dtype != np.uint8:
        return image
    if image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 1):
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image


def looks_like_a_frame(image: object, shape: tuple[int, ...] | None) -> bool:
    """Garbage frames (None, empty, wrong size, uniformly one value) are not frames."""
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        return False
    if shape is not None and image.shape != shape:
        return False
    return bool(image.max() != image.min())


class ResilientSource:
    """Wraps a source: reconnects with exponential back-off, reports staleness, never raises."""

    def __init__(
        self,
        opener: Callable[[], FrameSource],
        max_backoff_s: float = 8.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._opener = opener
        self._source: FrameSource | None = None
        self._clock = clock
        self._backoff = 0.5
        self._max_backoff = max_backoff_s
        self._retry_at = 0.0
        self._shape: tuple[int, ...] | None = None
        self._ended = False  # a folder or a video file ran out: it is not opened again
        self.failures = 0

    def read(self) -> SourceStatus:
        now = self._clock()
        if self._ended:
            return SourceStatus(None, True, "the recording has ended; showing the last good scene")
        if self._source is None:
            if now < self._retry_at:
                return SourceStatus(None, True, f"camera lost; reconnecting in {self._retry_at - now:.1f} s")
            try:
                self._source = self._opener()
            except Exception as error:  # noqa: BLE001 - any failure to open is a dropped camera
                return self._failed(now, f"cannot open the camera ({error})")
        try:
            frame = self._source.read()
        except Exception as error:  # noqa: BLE001 - a driver error must not stop the referee
            return self._failed(now, f"the camera failed ({error})")
        if frame is None:
            if getattr(self._source, "finite", False):  # a recording's end: not a camera to reconnect
                self._ended = True
                return SourceStatus(None, True, "the recording has ended; showing the last good scene")
            return self._failed(now, "no frame from the camera (ended or stalled)")
        frame = as_bgr(frame)
        if isinstance(frame, np.ndarray) and frame.dtype != np.uint8:
            self.failures += 1
            return SourceStatus(None, True, f"a frame of {frame.dtype} pixels was skipped (8-bit colour expected)")
        if not looks_like_a_frame(frame, self._shape):  # as_bgr has made any 8-bit frame one of three channels
            self.failures += 1
            was = self._shape[1::-1] if self._shape is not None else None
            if isinstance(frame, np.ndarray) and frame.size > 0 and was is not None and frame.shape[1::-1] != was:
                got = frame.shape[1::-1]
                message = f"a {got[0]}x{got[1]} frame was skipped: the camera was set up on {was[0]}x{was[1]}"
                return SourceStatus(None, True, message)
            return SourceStatus(None, True, "a broken frame was skipped")
        self._shape = frame.shape
        self._backoff = 0.5
        return SourceStatus(frame, False, "live")

    def _failed(self, now: float, message: str) -> SourceStatus:
        self.failures += 1
        if self._source is not None:
            with contextlib.suppress(Exception):
                self._source.close()
        self._source = None
        self._retry_at = now + self._backoff
        self._backoff = min(self._backoff * 2, self._max_backoff)
        return SourceStatus(None, True, f"{message}; showing the last good scene")

    @property
    def note(self) -> str:
        """What the open source says the players should know about its frames ('' if nothing)."""
        return str(getattr(self._source, "note", ""))

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None
