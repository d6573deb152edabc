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
# The light is divided out before comparing: a lamp flickering or a webcam's exposure stepping changes every pixel by
# the same factor, and 3 % of a bright mat is 6-8 levels, past the tests' thresholds where the mat is lit unevenly
# (`eval_gate.py --flicker 0.03`: 5-24 analyses for nothing in 112 still frames, and 4 of 27 models put down never
# analysed, the flicker taken for hands). The factor is the ratio of the two frames over a sparse grid, near its
# median, so a hand or a moved model (far less than half the table) does not sway it. Divided out: 27/27 seen and 0
# false updates at 3 %; at 5 % (skirmish seed 103) 48/48 seen and 2 false in 196 frames (as-is: 22/48, 32), both
# from a light 16-19 % off; no change without flicker (88/88, 0; docs/live.md, session 90).
LIGHT_GRID_STEP = 4
LIGHT_MIN_LEVEL = 16  # darker pixels say little about a ratio
# Where both frames are this bright the camera clipped (white markers, glare): a level clipped under one light cannot
# be carried to another, so those pixels are not compared when the light changed (a white marker read as changed
# by 15 levels under a light 7 % brighter).
CLIPPED_LEVEL = 225
CLIPPED_REACH_PX = 5  # the small copy's blur
LIGHT_INLIER_RATIO = 0.08  # pixels this far from the median ratio are things that changed, not the light
# A camera whose rows are read one after another (a rolling shutter: webcams, phones) under a light flickering at twice
# the mains' rate shows bands across the frame, each lit differently, moving from frame to frame. The light is read
# band by band (a band is this many rows of the small copy, about 3 % of its height: a hand or a moved model covers
# far less than half of one's width), and a band lit by the mat too little to say takes the whole frame's light.
# `eval_gate.py --banding`: focal-point seed 102, bands 3 %: false updates 31 -> 0 of 112 still frames (27/27 seen
# both); skirmish seed 103, bands 5 % and flicker 3 %: seen 22/48 -> 48/48, false updates 60 -> 0 of 196 (session 91).
LIGHT_BAND_ROWS = 12
LIGHT_BAND_MIN_SAMPLES = 60
LIGHT_FLAT_SPREAD = 0.005  # bands read within this of each other are one light (a band is read within ~0.002)
# A webcam's white balance wanders by itself: its channels scaled apart, a few % each (a hand's skin in view, the
# light's colour). Once the light is divided out, what is left of each channel's scale is divided out too, for the
# comparison in colour; steps below this are left. `eval_gate.py --white-balance`, focal-point seed 102: channels
# 2 % apart, false updates 8 -> 0 of 112 still frames; 4 %, 57 -> 1 (27/27 seen both; session 91).
WHITE_BALANCE_STEP = 0.004


def brightest_channel(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Each pixel's largest channel (cv2's: numpy's max over channels took 4 ms on the small copy)."""
    blue, green, red = cv2.split(image)
    return cv2.max(cv2.max(blue, green), red)


def clipped(now: npt.NDArray[np.uint8], before: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Where the camera may have clipped in both frames: bright in both, or next to what is (the small copy is blurred,
    so a clipped glint lowers its neighbours too: a spot read 211 then 223 under a light 12 % brighter, not 236)."""
    near = cv2.dilate(cv2.min(now, before), np.ones((CLIPPED_REACH_PX, CLIPPED_REACH_PX), np.uint8))
    return near >= CLIPPED_LEVEL


def light_gain(now: npt.NDArray[np.uint8], before: npt.NDArray[np.uint8]) -> float:
    """How much brighter the whole of ``now`` is lit than ``before`` (grey copies of the same size)."""
    a = now[::LIGHT_GRID_STEP, ::LIGHT_GRID_STEP].astype(np.float32)
    b = before[::LIGHT_GRID_STEP, ::LIGHT_GRID_STEP].astype(np.float32)
    lit = b > LIGHT_MIN_LEVEL
    if int(lit.sum()) < 100:  # a black frame: no light to compare
        return 1.0
    a, b = a[lit], b[lit]
    ratio = a / b
    # The median alone is off by ~1 % on a dark table (a mat 38 levels grey, 1.073 read as 1.0625: levels are whole
    # numbers); the ratio of sums over the pixels near it is not, and still leaves out hands and moved models.
    near = np.abs(ratio - np.median(ratio)) < LIGHT_INLIER_RATIO
    return float(a[near].sum() / b[near].sum())


def light_gains_by_row(now: npt.NDArray[np.uint8], before: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """How much brighter each row of ``now`` is lit than of ``before`` (grey copies of the same size): the light read
    over bands of LIGHT_BAND_ROWS rows, each as ``light_gain`` reads the whole, and drawn smoothly between their
    middles. A band with too little light to read takes the whole frame's gain."""
    step = LIGHT_GRID_STEP
    a = now[::step, ::step].astype(np.float32)
    b = before[::step, ::step].astype(np.float32)
    whole = light_gain(now, before)
    per_band = max(LIGHT_BAND_ROWS // step, 1)  # grid rows a band
    bands = a.shape[0] // per_band
    if bands < 2:
        return np.full(now.shape[0], whole, np.float32)
    a = a[: bands * per_band].reshape(bands, -1)
    b = b[: bands * per_band].reshape(bands, -1)
    lit = b > LIGHT_MIN_LEVEL
    ratio = a / np.maximum(b, 1.0)
    enough = lit.sum(axis=1) >= LIGHT_BAND_MIN_SAMPLES
    median = np.median(np.where(lit, ratio, whole), axis=1)  # (np.nanmedian: 10 times slower)
    near = lit & (np.abs(ratio - median[:, None]) < LIGHT_INLIER_RATIO)
    sums = (np.where(near, a, 0.0).sum(axis=1), np.where(near, b, 0.0).sum(axis=1))
    gains = np.where(enough & (sums[1] > 0), sums[0] / np.maximum(sums[1], 1.0), whole)
    middles = (np.arange(bands) * per_band + (per_band - 1) / 2) * step  # (of the rows read)
    # (the rows beyond the first and last middles follow the light's slope there, not its last value)
    last = now.shape[0] - 1
    ends = (
        gains[0] - (gains[1] - gains[0]) * middles[0] / (middles[1] - middles[0]),
        gains[-1] + (gains[-1] - gains[-2]) * (last - middles[-1]) / (middles[-1] - middles[-2]),
    )
    xs = np.concatenate(([0.0], middles, [float(last)]))
    return np.interp(np.arange(now.shape[0]), xs, np.concatenate(([ends[0]], gains, [ends[1]]))).astype(np.float32)


@dataclass(frozen=True)
class GateDecision:
    state: str  # "still": nothing to do; "moving": hands over the table, hold; "settled": update
    changed_box: tuple[int, int, int, int] | None  # x, y, w, h in full-frame pixels, when settled
    changed_fraction: float


class MotionGate:
    def __init__(
        self,
        threshold: int = 18,
        still_frames: int = 3,
        min_fraction: float = 0.0001,
        change_threshold: int = 12,
        normalise_light: bool = True,
    ) -> None:
        # min_fraction: the share of the small copy that must change; two 25 mm bases moved on a 44"x60"
        # table change ~0.03 % of it (0.05 % missed them)
        self.threshold = threshold  # grey levels between two frames: a hand moving
        self.change_threshold = change_threshold  # levels of a channel since the last analysis: the table changed
        self.still_frames = still_frames
        self.min_fraction = min_fraction
        self.normalise_light = normalise_light
        self._stable: npt.NDArray[np.uint8] | None = None  # the last scene that was analysed (colour)
        self._stable_grey: npt.NDArray[np.uint8] | None = None
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

    def _lit_as_now(
        self, image: npt.NDArray[np.uint8], image_grey: npt.NDArray[np.uint8], grey_now: npt.NDArray[np.uint8]
    ) -> tuple[npt.NDArray[np.uint8], bool]:
        """``image`` as it would look under the light of now, and whether the light changed (never, when the gate does
        not normalise)."""
        if not self.normalise_light:
            return image, False
        gains = light_gains_by_row(grey_now, image_grey)
        if float(np.abs(gains - 1.0).max()) < 0.002:
            return image, False
        if float(gains.max() - gains.min()) < LIGHT_FLAT_SPREAD:  # one light over the frame: scaled at once (cheaper)
            return cv2.convertScaleAbs(image, alpha=float(gains.mean())), True
        shape = (-1, 1, 1) if image.ndim == 3 else (-1, 1)
        return cv2.convertScaleAbs(image.astype(np.float32) * gains.reshape(shape)), True

    def _balanced_as_now(
        self, image: npt.NDArray[np.uint8], now: npt.NDArray[np.uint8]
    ) -> tuple[npt.NDArray[np.uint8], bool]:
        """``image`` (colour, lit as ``now``) with each channel scaled as the camera's white balance scales it now, and
        whether it was (never, when the gate does not normalise)."""
        if not self.normalise_light:
            return image, False
        gains = [light_gain(now[:, :, c], image[:, :, c]) for c in range(3)]
        if max(abs(g - 1.0) for g in gains) < WHITE_BALANCE_STEP:
            return image, False
        return cv2.multiply(image, (*gains, 0.0)), True

    def update(self, frame: Image) -> GateDecision:
        small, grey = self._small(frame)
        if self._stable is None:
            self._stable, self._stable_grey, self._previous = small, grey, grey
            return GateDecision("settled", (0, 0, frame.shape[1], frame.shape[0]), 1.0)
        assert self._previous is not None and self._stable_grey is not None
        previous, relit = self._lit_as_now(self._previous, self._previous, grey)
        moving = cv2.absdiff(grey, previous) > self.threshold
        if relit:
            moving &= ~clipped(grey, previous)
        self._previous = grey
        if moving.mean() > self.min_fraction:
            self._quiet = 0
            return GateDecision("moving", None, float(moving.mean()))
        self._quiet += 1
        stable, relit = self._lit_as_now(self._stable, self._stable_grey, grey)
        stable, rebalanced = self._balanced_as_now(stable, small)
        relit = relit or rebalanced
        changed = brightest_channel(cv2.absdiff(small, stable)) > self.change_threshold
        if relit:
            changed &= ~clipped(brightest_channel(small), brightest_channel(stable))
        fraction = float(changed.mean())
        if (fraction <= self.min_fraction and not self._again) or self._quiet < self.still_frames:
            return GateDecision("still", None, fraction)
        self._again = False
        self._stable, self._stable_grey = small, grey
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
