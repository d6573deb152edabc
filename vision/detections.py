"""Detections: what a detector found, as a struct of arrays (one row per piece)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np
import numpy.typing as npt

from geometry.shapes import KNOWN_BASES

FloatArray = npt.NDArray[np.float64]
RIM_SAMPLE_RADII = (0.85, 0.9, 0.95, 1.0, 1.05, 1.1)  # times the base's radius: the rim, even with the
RIM_SAMPLE_ANGLES = 24  # centre a pixel or two off
RIM_SAMPLES = len(RIM_SAMPLE_RADII) * RIM_SAMPLE_ANGLES
# A rim sample differs from the empty table's colour there by more than this (BGR distance; sensor noise is
# a few units) where something stands on the table: the base, or the figure on it.
SEEN_DIFF_BGR = 20.0
ROUND_SIZES = tuple(b for b in KNOWN_BASES if "x" not in b)  # the columns of Detections.size_p, smallest first


def seen_share(rim_sample_bgr: npt.NDArray[np.float64], mat_sample_bgr: npt.NDArray[np.float64]) -> FloatArray:
    """(N,) share of each base's edge the camera sees: of the angles round it, those where just inside the
    edge (radii under 1) the photo differs from the empty table. Behind a wall the photo shows the wall, as
    the empty table does, so a base seen only as a sliver scores low. 1 where there is no empty table."""
    n = len(rim_sample_bgr)
    inside = np.array([r < 1.0 for r in RIM_SAMPLE_RADII])
    diff = np.linalg.norm(rim_sample_bgr - mat_sample_bgr, axis=-1).reshape(n, len(RIM_SAMPLE_RADII), -1)
    seen = (diff[:, inside] > SEEN_DIFF_BGR).any(axis=1).mean(axis=1)
    no_reference = np.isnan(mat_sample_bgr).any(axis=(1, 2)) if n else np.zeros(0, bool)
    return np.where(no_reference, 1.0, seen)


@dataclass(frozen=True)
class Detections:
    """Pieces found in a frame, positions in table inches (measured in the rectified view).

    ``kind``: 0 base, 1 objective marker. ``size`` is the standard base label
    ("32", "60x35") or "" for markers; ``facing_deg`` matters for ovals;
    ``measured_by`` names how the centre was found ("outline", "box", ...), which says how far off it may be.
    """

    x_in: FloatArray
    y_in: FloatArray
    a_in: FloatArray  # fitted semi-axis along facing
    b_in: FloatArray
    facing_deg: FloatArray
    kind: npt.NDArray[np.int8]
    size: npt.NDArray[np.str_]
    score: FloatArray  # 0..1, how well the outline fits
    colour_bgr: npt.NDArray[np.float64]  # (N, 3) rim colour sampled at the base's edge
    measured_by: npt.NDArray[np.str_]  # how the centre was measured: its uncertainty (vision.centre_sigma)
    # (N, K, 3) colours sampled around each base's edge, for telling teams apart where a figure hides
    # most of the rim; when a detector gives none, the single rim colour stands in.
    rim_sample_bgr: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, RIM_SAMPLES, 3)))
    # (N, K, 3) the empty table's colours at the same points: the mat a thin rim blurs into at its outer edge
    # (NaN where the detector had no empty-table frame).
    mat_sample_bgr: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, RIM_SAMPLES, 3)))
    # (N, len(ROUND_SIZES)) how likely the base refiner found each round size (NaN where it did not read the base)
    size_p: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, len(ROUND_SIZES))))
    # (N,) where the same place was also read as the other shape (an oval for a round base, a round base for an
    # oval): that reading's size and how far its centre lies from this one's; "" and 0 where it was not.
    other_size: npt.NDArray[np.str_] = field(default_factory=lambda: np.zeros(0, "<U8"))
    other_shape_in: FloatArray = field(default_factory=lambda: np.zeros(0))
    # (N,) how far the base refiner's views read the centre from their mean (vision/refiner.py: Refined.views_sd_in);
    # 0 where the refiner did not read it in several views (ovals, markers, the classical detector)
    views_sd_in: FloatArray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        n = len(self.x_in)
        if len(self.views_sd_in) == 0 and n:
            object.__setattr__(self, "views_sd_in", np.zeros(n))
        if len(self.size_p) == 0 and n:
            object.__setattr__(self, "size_p", np.full((n, len(ROUND_SIZES)), np.nan))
        if len(self.other_size) == 0 and n:
            object.__setattr__(self, "other_size", np.full(n, "", "<U8"))
            object.__setattr__(self, "other_shape_in", np.zeros(n))
        if len(self.rim_sample_bgr) == 0 and n:
            colours = np.asarray(self.colour_bgr, np.float64).reshape(n, 1, 3)
            object.__setattr__(self, "rim_sample_bgr", np.repeat(colours, RIM_SAMPLES, axis=1))
        if len(self.mat_sample_bgr) == 0 and n:
            object.__setattr__(self, "mat_sample_bgr", np.full(self.rim_sample_bgr.shape, np.nan))
        for f in fields(self):
            value = getattr(self, f.name)
            if len(value) != n:
                raise ValueError(f"Detections.{f.name}: {len(value)} rows, expected {n}")

    def __len__(self) -> int:
        return len(self.x_in)

    def __getitem__(self, index: npt.ArrayLike) -> Detections:
        idx = np.atleast_1d(np.asarray(index))
        return Detections(*(getattr(self, f.name)[idx] for f in fields(self)))

    @classmethod
    def empty(cls) -> Detections:
        return cls(
            np.zeros(0),
            np.zeros(0),
            np.zeros(0),
            np.zeros(0),
            np.zeros(0),
            np.zeros(0, np.int8),
            np.zeros(0, "<U8"),
            np.zeros(0),
            np.zeros((0, 3)),
            np.zeros(0, "<U32"),
        )

    @classmethod
    def concat(cls, parts: list[Detections]) -> Detections:
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))
