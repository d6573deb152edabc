"""Motion gating: re-detect only when the table is still again, and only where it changed."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
# The gate looks at a small grey copy: cheap and blind to sensor noise, yet wide enough that a 25 mm
# base on a 60" table is ~9 px (at 320 px it was ~4 px, and moving one small unit went unseen).
SMALL_WIDTH = 640


@dataclass(frozen=True)
class GateDecision:
    state: str  # "still": nothing to do; "moving": hands over the table, hold; "settled": update
    changed_box: tuple[int, int, int, int] | None  # x, y, w, h in full-frame pixels, when settled
    changed_fraction: float


class MotionGate:
    def __init__(self, threshold: int = 18, still_frames: int = 3, min_fraction: float = 0.0001) -> None:
        # min_fraction: the share of the small copy that must change; two 25 mm bases moved on a 44"x60"
        # table change ~0.03 % of it (0.05 % missed them)
        self.threshold = threshold
        self.still_frames = still_frames
        self.min_fraction = min_fraction
        self._stable: npt.NDArray[np.uint8] | None = None  # the last scene that was analysed
        self._previous: npt.NDArray[np.uint8] | None = None
        self._quiet = 0
        self._scale = 1.0

    def _small(self, frame: Image) -> npt.NDArray[np.uint8]:
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        self._scale = frame.shape[1] / SMALL_WIDTH
        small = cv2.resize(gray, (SMALL_WIDTH, int(round(gray.shape[0] / self._scale))), interpolation=cv2.INTER_AREA)
        out: npt.NDArray[np.uint8] = cv2.GaussianBlur(small, (5, 5), 0)
        return out

    def update(self, frame: Image) -> GateDecision:
        small = self._small(frame)
        if self._stable is None:
            self._stable = self._previous = small
            return GateDecision("settled", (0, 0, frame.shape[1], frame.shape[0]), 1.0)
        assert self._previous is not None
        moving = cv2.absdiff(small, self._previous) > self.threshold
        self._previous = small
        if moving.mean() > self.min_fraction:
            self._quiet = 0
            return GateDecision("moving", None, float(moving.mean()))
        self._quiet += 1
        changed = cv2.absdiff(small, self._stable) > self.threshold
        fraction = float(changed.mean())
        if fraction <= self.min_fraction or self._quiet < self.still_frames:
            return GateDecision("still", None, fraction)
        ys, xs = np.nonzero(changed)
        s = self._scale
        box = (
            int(xs.min() * s),
            int(ys.min() * s),
            int((xs.max() - xs.min() + 1) * s),
            int((ys.max() - ys.min() + 1) * s),
        )
        self._stable = small
        return GateDecision("settled", box, fraction)
