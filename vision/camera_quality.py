"""How well the camera sees, read from the photo itself, and the sigma a worse camera adds to every centre.

The per-piece sigmas (vision/centre_sigma.py) were fitted on photos as the renderer's camera takes them: blur
0.3-0.9 px, JPEG 82-95. A webcam out of focus, a phone streaming at JPEG 50 or a small sensor scaled up moves
the refined centres further than those sigmas say. On tuning tables 6200-6259 made worse
(benchmarks/worse_camera_set.py), the truth lay within 2 reported sigma along each axis for 88.9 % of the
bases blurred 1.5 px, 92.0 % at JPEG 50 and 90.7 % streamed, against 97.8 % as rendered (docs/vision.md,
session 56). Two readings say how much worse a photo is:
- **blur**: the calibration markers' black borders on white paper are the one edge in the photo whose true
  shape is known; how far their profile takes to rise says how blurred the photo is, whatever stands on the
  table;
- **JPEG**: a JPEG stores each 8x8 block's cosine coefficients as multiples of a step, coarser the lower the
  quality; the step shows in the photo as the period the decoded coefficients cluster on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.fiducials import CELLS_ACROSS, edge_profiles, outward_normal, to_gray
from calibration.table_frame import TableFrame

Image = npt.NDArray[np.uint8]

# ---- blur, from the markers' edges
EDGE_ROWS = 12  # profiles across each of a marker's four outer edges
EDGE_SPAN = (0.15, 0.85)  # of an edge, from its first corner: clear of the corners themselves
STEP_PX = 0.2  # along each profile
MIN_CONTRAST = 40.0  # grey levels between border and paper for a profile to count (a hand over it: none)
MIN_PROFILES = 8  # fewer: no reading (NaN)
# A step edge blurred by a Gaussian of sigma s rises from a quarter to three quarters of the way in 1.349 s.
# The profile stops short of the mat beyond the paper's 0.25" margin, so a strong blur reads low (2 px on top
# of the renderer's reads 1.31-2.13): the reading is an index that grows with the blur, not its exact sigma.
QUARTILE_WIDTH_PER_SIGMA = 1.349

# ---- JPEG, from the luma's 8x8 cosine coefficients
JPEG_COEFFICIENTS = ((0, 1), (1, 0), (1, 1))  # low frequencies: many blocks have them well above the step
JPEG_MAX_STEP = 30
JPEG_BLOCK_STRIDE = 2
JPEG_MIN_VALUES = 200  # coefficients over half a step needed to judge that step
JPEG_MIN_SCORE = 0.5  # how tightly they must cluster on its multiples (1: exactly)

# ---- the sigma they add: fitted on the tuning tables made worse (blur 1.0, 1.5 and 2.0 px; JPEG 70, 50 and
# 35; the stream: a 0.67 sensor scaled up, JPEG 60) so that 95 % or more lie within 2 sigma on each, and
# checked on held-out 05000-05059 made worse the same ways (docs/vision.md, session 56). Rendered photos read
# blur 0.61-1.12 and JPEG step 1-4.
SHARP_PX = 0.9  # blur reading the sigmas hold for
SIGMA_PX_PER_BLUR_PX = 1.0  # per-axis sigma added per pixel of blur reading beyond SHARP_PX
FINE_JPEG_STEP = 2.0  # JPEG step the sigmas hold for (quality 90 and better)
SIGMA_PX_PER_JPEG_STEP = 0.03  # per-axis sigma added per unit of step beyond FINE_JPEG_STEP
# The players are told from here. Blur readings, photo by photo: 0.61-1.12 on 390 rendered photos (held-out
# 5000-5299, tuning 6200-6259, path-traced 7600-7629); blurred 1.0 px more, 1.05-1.47 (median 1.20); 1.5 px,
# 1.19-1.82; 2.0 px, 1.31-2.13. JPEG: quality 65 and under.
BLURRED_PX = 1.2
COARSE_JPEG_STEP = 8.0
# From here a second size reader, trained for worse cameras, is asked too (vision/refiner.py:
# DEFAULT_CAMERA_SIZE_READER): past every reading of the renderer's camera. Asked on every photo it named sizes
# better on the tuning tables as rendered too, but 4 more wrong on the held-out 300 (35 -> 39), so a photo as
# good as the renderer's is read as before (docs/vision.md, session 57): a blurred photo (BLURRED_PX), or JPEG
# step 6 and over (quality 75 and under).
SECOND_READER_JPEG_STEP = 6.0

_N = 8
_DCT = np.array(
    [
        [np.sqrt((1 if k == 0 else 2) / _N) * np.cos(np.pi * (2 * n + 1) * k / (2 * _N)) for n in range(_N)]
        for k in range(_N)
    ]
)


@dataclass(frozen=True)
class CameraQuality:
    edge_blur_px: float  # NaN: the markers' edges could not be read
    jpeg_step: float  # 1: no JPEG step found (not a JPEG, or a fine one)

    @property
    def added_sigma_px(self) -> float:
        """The per-axis sigma, in photo pixels, this camera adds to every refined centre."""
        blur = (
            SIGMA_PX_PER_BLUR_PX * max(0.0, self.edge_blur_px - SHARP_PX) if not math.isnan(self.edge_blur_px) else 0.0
        )
        jpeg = SIGMA_PX_PER_JPEG_STEP * max(0.0, self.jpeg_step - FINE_JPEG_STEP)
        return float(np.hypot(blur, jpeg))

    @property
    def blurred(self) -> bool:
        """The blur reads BLURRED_PX or more: the players are told, and the refiner for blurred photos reads the
        centres (vision/refiner.py: DEFAULT_BLURRED_REFINER)."""
        return bool(not math.isnan(self.edge_blur_px) and self.edge_blur_px >= BLURRED_PX)

    @property
    def worse_than_rendered(self) -> bool:
        """Blurred, or JPEG'd past what the renderer's camera gives (SECOND_READER_JPEG_STEP): the sizes are read
        by both size readers."""
        return self.blurred or self.jpeg_step >= SECOND_READER_JPEG_STEP

    def added_sigma_in(self, inches_per_px: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """That sigma in inches, where the photo has ``inches_per_px``."""
        out: npt.NDArray[np.float64] = self.added_sigma_px * np.asarray(inches_per_px, np.float64)
        return out

    def note(self, added_in: float) -> dict[str, Any] | None:
        """The scene's ``measurement.camera``, where this camera is worse than the sigmas were fitted for (any
        sigma added); ``added_in``: the sigma added, in inches, where the photo sees the table at its median scale."""
        if self.added_sigma_px <= 0.0:
            return None
        return {
            **({"edge_blur_px": round(self.edge_blur_px, 2)} if not math.isnan(self.edge_blur_px) else {}),
            "jpeg_step": round(self.jpeg_step, 1),
            "added_sigma_in": round(added_in, 4),
            "blurred": self.blurred,
            "compressed": bool(self.jpeg_step >= COARSE_JPEG_STEP),
        }


def camera_quality(photo: Image, frame: TableFrame) -> CameraQuality:
    """How blurred and how coarsely compressed ``photo`` is (``frame``: where its calibration markers are)."""
    gray = to_gray(photo)  # once for both: a JPEG's luma is the same weighting of B, G and R
    return CameraQuality(marker_edge_blur_px(gray, frame), jpeg_step(gray))


def describe_camera(entry: dict[str, Any]) -> str | None:
    """What the players are told about a worse camera (None where it is only a little worse)."""
    faults = []
    if entry.get("blurred"):
        faults.append(f"blurred (the markers' edges read {entry['edge_blur_px']:.1f} px; refocus the camera)")
    if entry.get("compressed"):
        faults.append(f"coarsely compressed (JPEG step {entry['jpeg_step']:.0f}; raise the stream's quality)")
    if not faults:
        return None
    return (
        f'the photo is {" and ".join(faults)}: each centre is measured about {entry["added_sigma_in"]:.3f}" '
        "less surely, and sizes and teams are read less surely too"
    )


def camera_faults(measurement: dict[str, Any]) -> tuple[str, ...]:
    """What a scene's ``measurement`` says is wrong with the camera: "blurred", "compressed", both or neither."""
    note = measurement.get("camera", {})
    return tuple(fault for fault in ("blurred", "compressed") if note.get(fault))


def camera_news(measurement: dict[str, Any], said: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """What to tell the players about the camera at a frame after the deployment's (which said it with the rest
    to confirm), given the faults ``said`` so far: a fault that is new (a webcam's focus hunting, a stream's
    quality dropping), or that the camera reads well again; and the faults now. None: nothing new."""
    now = camera_faults(measurement)
    if set(now) - set(said):
        return describe_camera(measurement["camera"]), now
    if said and not now:
        return "the camera reads sharp and fine again: centres are measured as surely as before", now
    return None, now


def marker_edge_blur_px(photo: Image, frame: TableFrame) -> float:
    """The photo's blur as a Gaussian's sigma in pixels: the median over the profiles across the calibration
    markers' outer edges, where ``frame`` puts them. NaN where too few edges can be read (markers covered or
    out of the photo)."""
    gray = to_gray(photo).astype(np.float32)
    h, w = gray.shape[:2]
    widths: list[float] = []
    for placement in frame.layout.by_id().values():
        corners = frame.table_to_image(placement.corners_in())
        if not (np.all(corners >= 0) and np.all(corners[:, 0] < w) and np.all(corners[:, 1] < h)):
            continue
        widths += _edge_widths_px(gray, corners)
    if len(widths) < MIN_PROFILES:
        return float("nan")
    return float(np.median(widths)) / QUARTILE_WIDTH_PER_SIGMA


def _edge_widths_px(gray: npt.NDArray[np.float32], corners: npt.NDArray[np.float64]) -> list[float]:
    """For each profile across the marker's outer edges: how far it takes to rise from a quarter to three
    quarters of the way from the black border (inside) to the white paper (outside)."""
    centre = corners.mean(axis=0)
    cell_px = float(np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1))) / CELLS_ACROSS
    if cell_px < 3.0:  # a marker a few pixels across: its border is no edge to read
        return []
    offs = np.arange(-0.6 * cell_px, 0.45 * cell_px, STEP_PX)  # short of the mat beyond the paper's margin
    inside = offs < -0.4 * cell_px
    out: list[float] = []
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        _, prof = edge_profiles(gray, a, b, outward_normal(a, b, centre), offs, EDGE_SPAN, EDGE_ROWS)
        for row in prof:
            lo, hi = float(row[inside].mean()), float(row[offs > -0.05 * cell_px].max())
            if hi - lo < MIN_CONTRAST:
                continue
            rise = (row - lo) / (hi - lo)
            quarter, three = _first_crossing(rise, offs, 0.25), _first_crossing(rise, offs, 0.75)
            if quarter is not None and three is not None and three > quarter:
                out.append(three - quarter)
    return out


def _first_crossing(rise: npt.NDArray[np.float32], offs: npt.NDArray[np.float64], level: float) -> float | None:
    above = np.flatnonzero(rise >= level)
    if not len(above) or above[0] == 0:
        return None
    j = int(above[0])
    f = (level - float(rise[j - 1])) / max(float(rise[j] - rise[j - 1]), 1e-9)
    return float(offs[j - 1] + f * (offs[j] - offs[j - 1]))


def jpeg_step(photo: Image) -> float:
    """The JPEG quantisation step of the luma's lowest cosine coefficients (the median over JPEG_COEFFICIENTS):
    about 11 at quality 50, 6 at 75, 2 at 90; 1 where none shows (a PNG, or a photo whose noise came after its
    JPEG). A camera's frames are JPEG'd whole, so the blocks start at the photo's top-left pixel."""
    luma = to_gray(photo).astype(np.float64) - 128.0
    h, w = luma.shape[0] // _N * _N, luma.shape[1] // _N * _N
    if h == 0 or w == 0:
        return 1.0
    # Every other block each way: a quarter of the time (about 10 ms for 1080p), thousands of blocks still.
    grid = luma[:h, :w].reshape(h // _N, _N, w // _N, _N)[::JPEG_BLOCK_STRIDE, :, ::JPEG_BLOCK_STRIDE, :]
    blocks = grid.transpose(0, 2, 1, 3).reshape(-1, _N, _N)
    steps = []
    for u, v in JPEG_COEFFICIENTS:
        values = np.einsum("j,bjk,k->b", _DCT[u], blocks, _DCT[v]).astype(np.float32)
        found = 1
        for step in range(2, JPEG_MAX_STEP + 1):
            # Coefficients under half a step say nothing (zero is a multiple of every step); over it, a true
            # step puts them on its multiples, where a wrong one scatters their phases.
            phase = values[np.abs(values) > step / 2] * np.float32(2 * np.pi / step)
            if len(phase) >= JPEG_MIN_VALUES and np.hypot(np.cos(phase).mean(), np.sin(phase).mean()) > JPEG_MIN_SCORE:
                found = step  # the largest step that fits: its divisors fit too
        steps.append(found)
    return float(np.median(steps))
