"""The oval refiner: a small network that measures each oval base the detector proposes.

The detector's box says roughly where an oval is; the blob round it, its
facing. The refiner looks at a crop of the top-down view centred on the box and
turned so that this facing runs along the crop's x axis, and says which
standard oval it is, where its centre lies (an offset along and across the
facing) and how far the facing is off. It learned this from rendered tables
(``vision/training/oval_refiner.py``), where figures overhang their bases and
cast shadows, so it measures the base, not the figure on it.

Run time needs only onnxruntime (or OpenCV's dnn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from geometry.shapes import KNOWN_BASES
from vision.onnx_session import OnnxNetwork
from vision.refiner import to_blob

Image = npt.NDArray[np.uint8]
OVAL_PX_PER_IN = 22.0  # a 90x52 oval (3.5") and the box's error fit in the crop; 1 mm is 0.87 px
OVAL_CROP_PX = 96
OVAL_SIZES = [b for b in KNOWN_BASES if "x" in b]  # the network's size classes, in this order
# The ovals the renderer paints (vision/synth/table.py), so the only ones the network learned; a larger oval
# (105x70 and up) would not fit its crop, and keeps the measure of its box.
LEARNED_OVALS = ("60x35", "75x42", "90x52")
OVAL_OFFSET_SCALE_IN = 0.25  # the network's offsets are in units of this
FACING_SCALE_DEG = 10.0  # ...and its facing correction in units of this
DEFAULT_OVAL_REFINER = Path(__file__).parent / "models" / "oval-refiner.onnx"


class OvalRefinerError(ValueError):
    """The oval refiner's model file is missing or unreadable."""


@dataclass(frozen=True)
class OvalRefined:
    """The oval refiner's word on each crop: its size (and how sure), centre (inches) and facing (degrees)."""

    size: list[str]
    p_size: npt.NDArray[np.float64]
    x_in: npt.NDArray[np.float64]
    y_in: npt.NDArray[np.float64]
    facing_deg: npt.NDArray[np.float64]
    # P(an oval base is centred there); 1 from a refiner trained before it learned to say (session 28)
    p_oval: npt.NDArray[np.float64]


def oval_crop(photo: Image, frame: TableFrame, centre_in: tuple[float, float], facing_deg: float) -> Image:
    """The crop round ``centre_in`` turned to ``facing_deg``: crop pixel (u, v) shows the table point
    centre + R(facing) ((u + 0.5 - half), (v + 0.5 - half)) / OVAL_PX_PER_IN, so the facing runs along u."""
    ppi = OVAL_PX_PER_IN
    side = int(math.ceil(OVAL_CROP_PX * math.sqrt(2))) + 4  # holds the turned crop whatever the facing
    x0 = int(math.floor(centre_in[0] * ppi)) - side // 2
    y0 = int(math.floor(centre_in[1] * ppi)) - side // 2
    patch = frame.rectify(photo, ppi, (x0, y0, side, side))
    cos_f, sin_f = math.cos(math.radians(facing_deg)), math.sin(math.radians(facing_deg))
    lead = 0.5 - OVAL_CROP_PX / 2
    # patch pixel of a table point p: p * ppi - (x0, y0) - 0.5 (pixel k's centre is table (k + 0.5) / ppi)
    to_patch = np.array(
        [
            [cos_f, -sin_f, centre_in[0] * ppi - x0 - 0.5 + cos_f * lead - sin_f * lead],
            [sin_f, cos_f, centre_in[1] * ppi - y0 - 0.5 + sin_f * lead + cos_f * lead],
        ]
    )
    crop = cv2.warpAffine(
        patch,
        to_patch,
        (OVAL_CROP_PX, OVAL_CROP_PX),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(crop, np.uint8)


def to_table_offset(
    along_in: npt.NDArray[np.float64], across_in: npt.NDArray[np.float64], facing_deg: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """An offset along and across a facing, in table axes."""
    cos_f, sin_f = np.cos(np.radians(facing_deg)), np.sin(np.radians(facing_deg))
    return cos_f * along_in - sin_f * across_in, sin_f * along_in + cos_f * across_in


@dataclass
class OvalRefiner:
    model_path: Path = DEFAULT_OVAL_REFINER
    _network: OnnxNetwork | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        path = Path(self.model_path)
        if not path.is_file():
            raise OvalRefinerError(f"{path}: no oval refiner model there (train one: tablesight train-refiner --ovals)")
        self._network = OnnxNetwork(path, OvalRefinerError)
        probe = np.zeros((1, 3, OVAL_CROP_PX, OVAL_CROP_PX), np.float32)
        self._outputs = self._network.raw(probe).shape[1]

    @property
    def says_if_oval(self) -> bool:
        """Whether this refiner says if an oval is centred on its crop (trained with negatives, session 28)."""
        return bool(self._outputs > len(OVAL_SIZES) + 3)

    @staticmethod
    def available(model_path: Path = DEFAULT_OVAL_REFINER) -> bool:
        return Path(model_path).is_file()

    def measure(
        self, photo: Image, frame: TableFrame, centres_in: list[tuple[float, float]], facings_deg: list[float]
    ) -> OvalRefined:
        """Each oval proposal (its box's centre, the facing measured on its blob) measured: read once, then
        again on a crop centred and turned where the first reading put the oval (trained on crops near the
        truth, it reads those best). Tuning tables, ovals: centre p95 3.30 -> 1.60 mm (seeds 6200-6319) and
        3.98 -> 3.08 mm (6040-6199), sizes right 132 -> 135 of 138 there (docs/detector.md, session 19)."""
        first = self._read(photo, frame, centres_in, facings_deg)
        again = [(float(x), float(y)) for x, y in zip(first.x_in, first.y_in, strict=True)]
        return self._read(photo, frame, again, [float(f) for f in first.facing_deg])

    def measure_turned(
        self, photo: Image, frame: TableFrame, centre_in: tuple[float, float], facing_deg: float, sure_p: float
    ) -> tuple[OvalRefined, bool]:
        """One oval proposal measured as ``measure`` does, and where the refiner is less than ``sure_p`` sure an
        oval is there, measured again from the facing turned by 45, 90 and 135 degrees: the surest reading, and
        whether it came from a turned facing. A figure across an oval can turn its blob, and the facing measured
        on it, a right angle off; the refiner corrects a facing by some degrees, not by that."""
        seen = self.measure(photo, frame, [centre_in], [facing_deg])
        if seen.p_oval[0] >= sure_p or not self.says_if_oval:
            return seen, False
        turned = self.measure(photo, frame, [centre_in] * 3, [facing_deg + 45.0, facing_deg + 90.0, facing_deg + 135.0])
        k = int(np.argmax(turned.p_oval))
        if turned.p_oval[k] <= seen.p_oval[0]:
            return seen, False
        one = slice(k, k + 1)
        return (
            OvalRefined(
                [turned.size[k]],
                turned.p_size[one],
                turned.x_in[one],
                turned.y_in[one],
                turned.facing_deg[one],
                turned.p_oval[one],
            ),
            True,
        )

    def _read(
        self, photo: Image, frame: TableFrame, centres_in: list[tuple[float, float]], facings_deg: list[float]
    ) -> OvalRefined:
        """One reading of each oval, cropped round ``centres_in`` and turned to ``facings_deg``."""
        if not centres_in:
            empty = np.zeros(0)
            return OvalRefined([], empty, empty, empty, empty, empty)
        crops = [oval_crop(photo, frame, c, f) for c, f in zip(centres_in, facings_deg, strict=True)]
        assert self._network is not None
        raw = self._network.raw(to_blob(crops))
        logits = raw[:, : len(OVAL_SIZES)]
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        best = probs.argmax(axis=1)
        facing = np.array(facings_deg, np.float64)
        along = raw[:, len(OVAL_SIZES)] * OVAL_OFFSET_SCALE_IN
        across = raw[:, len(OVAL_SIZES) + 1] * OVAL_OFFSET_SCALE_IN
        dx, dy = to_table_offset(along, across, facing)
        centres = np.array(centres_in, np.float64)
        return OvalRefined(
            [OVAL_SIZES[k] for k in best],
            probs[np.arange(len(best)), best],
            centres[:, 0] + dx,
            centres[:, 1] + dy,
            (facing + raw[:, len(OVAL_SIZES) + 2] * FACING_SCALE_DEG) % 180.0,
            1.0 / (1.0 + np.exp(-raw[:, -1])) if self.says_if_oval else np.ones(len(best)),
        )
