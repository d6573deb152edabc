"""Motion gating: re-detect only when the table is still again, and only where it changed."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
# The gate looks at a small copy: cheap and blind to sensor noise, yet wide enough that a 25 mm
# base on a 60" table is ~9 px (at 320 px it was ~4 px, and moving one small unit went unseen). Hands are
# watched for in grey; what changed since the last analysis is looked for in colour, channel by channel: a
# model whose colours differ from the mat's in hue more than in brightness changed 0.002-0.003 % of the grey
# copy when it was moved (under ``min_fraction``: the move went unanalysed until the next unit's), 0.04 % of it
# in colour. A channel counts as changed from 12 levels on (18 before session 89: a 25 mm model close to the mat's
# colours, moved 5.2" on a 44"x60" table, changed 0.007 % of the copy by 18 levels, and went unanalysed for a whole
# activation; `python benchmarks/eval_gate.py`: 2 of 88 models put down unseen at 18, none at 12 or 8, and no
# false update at either on a still table with camera noise of 1.5-8 levels; docs/live.md, session 89).
SMALL_WIDTH = 640


@dataclass(frozen=True)
class GateDecision:
    state: str  # "still": nothing to do; "moving": hands over the table, hold; "settled": update
    changed_box: tuple[int, int, int, int] | None  # x, y, w, h in full-frame pixels, when settled
    changed_fraction: float


class MotionGate:
    def __init__(
        self, threshold: int = 18, still_frames: int = 3, min_fraction: float = 0.0001, change_threshold: int = 12
    ) -> None:
        # min_fraction: the share of the small copy that must change; two 25 mm bases moved on a 44"x60"
        # table change ~0.03 % of it (0.05 % missed them)
        self.threshold = threshold  # grey levels between two frames: a hand moving
        self.change_threshold = change_threshold  # levels of a channel since the last analysis: the table changed
        self.still_frames = still_frames
        self.min_fraction = min_fraction
        self._stable: npt.NDArray[np.uint8] | None = None  # the last scene that was analysed (colour)
        self._previous: npt.NDArray[np.uint8] | None = None  # the last frame (grey)
        self._quiet = 0
        self._scale = 1.0
        self._again = False  # the next still frame is analysed, changed or not (``analyse_again``)

    def analyse_again(self) -> None:
        """Have the next still frame analysed whatever changed: the table is mapped anew (a better calibration), and
        what is shown must be read through the new map. Not at once: a hand may be over the table now."""
        self._again = True

    def _small(self, frame: Image) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """The small copy in colour (3 channels) and in grey."""
        colour = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        self._scale = frame.shape[1] / SMALL_WIDTH
        size = (SMALL_WIDTH, int(round(frame.shape[0] / self._scale)))
        small = cv2.GaussianBlur(cv2.resize(colour, size, interpolation=cv2.INTER_AREA), (5, 5), 0)
        return small, cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)

    def update(self, frame: Image) -> GateDecision:
        small, grey = self._small(frame)
        if self._stable is None:
            self._stable, self._previous = small, grey
            return GateDecision("settled", (0, 0, frame.shape[1], frame.shape[0]), 1.0)
        assert self._previous is not None
        moving = cv2.absdiff(grey, self._previous) > self.threshold
        self._previous = grey
        if moving.mean() > self.min_fraction:
            self._quiet = 0
            return GateDecision("moving", None, float(moving.mean()))
        self._quiet += 1
        blue, green, red = cv2.split(cv2.absdiff(small, self._stable))
        changed = cv2.max(cv2.max(blue, green), red) > self.change_threshold  # (numpy's max over channels: 4 ms)
        fraction = float(changed.mean())
        if (fraction <= self.min_fraction and not self._again) or self._quiet < self.still_frames:
            return GateDecision("still", None, fraction)
        self._again = False
        self._stable = small
        if fraction <= self.min_fraction:  # analysed again as it is: the whole frame
            return GateDecision("settled", (0, 0, frame.shape[1], frame.shape[0]), fraction)
        ys, xs = np.nonzero(changed)
        s = self._scale
        box = (
            int(xs.min() * s),
            int(ys.min() * s),
            int((xs.max() - xs.min() + 1) * s),
            int((ys.max() - ys.min() + 1) * s),
        )
        return GateDecision("settled", box, fraction)
