"""Whose Source card is it: each player's card design, registered once from the camera, and told apart.

A design is summed up by what survives a card being partly covered, turned
upside down or lit a little differently: the histogram of its colours (Lab)
and of its pattern's edge directions along the card's axes, and how busy the
pattern is. Two designs of nearly the same colour differ in pattern; two of
the same pattern differ in colour. Each design's face (vision/flux/faces.py)
is kept too: it tells where a card lies, not whose it is.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from vision.flux.faces import FACE_PX, Grey, cut_out, face_from_text, face_to_text

FORMAT = "tablesight-flux-designs/1"
CARD_PX = FACE_PX  # the card straightened out, 2 px per mm
INSET_MM = 4.0  # the border is left out: both players' cards may share it
UNSURE_MARGIN = 0.08  # relative gap between the two distances below which the owner is not called
Hist = npt.NDArray[np.float64]


class DesignError(ValueError):
    """A designs file or a registration that cannot be used (names the file or the player)."""


@dataclass(frozen=True)
class Look:
    colour: Hist  # Lab histogram (4 x 6 x 6), sums to 1
    pattern: Hist  # edge directions along the card's axes (12 bins, 0-180 degrees), sums to 1
    busy: float  # mean gradient magnitude inside the card
    pixels: int

    def to_json(self) -> dict[str, Any]:
        return {
            "colour": [round(float(v), 6) for v in self.colour],
            "pattern": [round(float(v), 6) for v in self.pattern],
            "busy": round(self.busy, 4),
            "pixels": self.pixels,
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> Look:
        try:
            colour = np.asarray(data["colour"], float)
            pattern = np.asarray(data["pattern"], float)
            busy, pixels = float(data["busy"]), int(data["pixels"])
        except (TypeError, KeyError, ValueError) as error:
            raise DesignError(f"{where}: expected colour, pattern, busy and pixels ({error})") from None
        if colour.shape != (144,) or pattern.shape != (12,):
            raise DesignError(f"{where}: histograms of the wrong size ({colour.shape}, {pattern.shape})")
        return cls(colour, pattern, busy, pixels)


def _hellinger(a: Hist, b: Hist) -> float:
    return float(math.sqrt(max(0.0, 1.0 - float(np.sum(np.sqrt(a * b))))))


def distance(a: Look, b: Look) -> float:
    return (
        _hellinger(a.colour, b.colour)
        + _hellinger(a.pattern, b.pattern)
        + 0.5 * abs(math.log((a.busy + 1.0) / (b.busy + 1.0)))
    )


def straighten(
    image: npt.NDArray[np.uint8],
    frame: TableFrame,
    corners_in: npt.NDArray[np.float64],
    above_in: list[npt.NDArray[np.float64]],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The card cut out of the photo and straightened (CARD_PX), and the mask of what of it shows."""
    w = CARD_PX[0]
    card, shown = cut_out(image, frame, corners_in, above_in)
    mask = shown * np.uint8(255)
    inset = int(round(INSET_MM * w / 63.0))
    mask[:inset] = 0
    mask[-inset:] = 0
    mask[:, :inset] = 0
    mask[:, -inset:] = 0
    mask = cv2.erode(mask, np.ones((5, 5), np.uint8))  # a little away from the card above's edge
    return card, mask


def look_of(card: npt.NDArray[np.uint8], mask: npt.NDArray[np.uint8]) -> Look | None:
    """The look of a straightened card where the mask shows it (None if almost nothing shows)."""
    keep = mask > 0
    n = int(keep.sum())
    if n < 300:
        return None
    lab = cv2.cvtColor(card, cv2.COLOR_BGR2LAB)[keep].astype(np.float64)
    colour, _ = np.histogramdd(lab, bins=(4, 6, 6), range=((0, 256), (0, 256), (0, 256)))
    colour = cv2.GaussianBlur(colour.astype(np.float32).reshape(4, 36), (3, 3), 0).astype(np.float64).ravel()
    grey = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY).astype(np.float32)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)[keep]
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)[keep]
    mag = np.hypot(gx, gy)
    ang = np.degrees(np.arctan2(gy, gx)) % 180.0
    pattern, _ = np.histogram(ang, bins=12, range=(0, 180), weights=mag)
    pattern = pattern.astype(np.float64) + 1e-3
    return Look(colour / max(colour.sum(), 1e-9), pattern / pattern.sum(), float(mag.mean()) / 8.0, n)


@dataclass(frozen=True)
class Designs:
    """Each player's registered Source card design."""

    looks: dict[str, Look]
    # Each design's face (vision/flux/faces.py), where it was registered; a designs file written before
    # faces were kept has none, and cards are then found without them.
    faces: dict[str, Grey] = field(default_factory=dict)

    def owner(self, look: Look) -> tuple[str | None, float, dict[str, float]]:
        """(player whose design it is, or None when too close to call; margin; distance to each design)."""
        dist = {p: distance(look, ref) for p, ref in self.looks.items()}
        ranked = sorted(dist, key=lambda p: dist[p])
        if len(ranked) < 2:
            return ranked[0] if ranked else None, 1.0, dist
        best, second = dist[ranked[0]], dist[ranked[1]]
        margin = (second - best) / max(second + best, 1e-9)
        return (ranked[0] if margin >= UNSURE_MARGIN else None), margin, dist

    def to_json(self) -> dict[str, Any]:
        players = {p: look.to_json() for p, look in self.looks.items()}
        for p, face in self.faces.items():
            players[p]["face_png"] = face_to_text(face)
        return {"format": FORMAT, "players": players}

    def save(self, path: str | Path) -> None:
        tmp = Path(f"{path}.tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1), encoding="utf-8")
        tmp.replace(path)  # never a half-written designs file

    @classmethod
    def load(cls, path: str | Path) -> Designs:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DesignError(
                f"{path}: no such designs file (register the designs first: tablesight flux register)"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise DesignError(f"{path}: not a readable JSON designs file ({error})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DesignError(f"{path}: format: expected {FORMAT!r}")
        players = data.get("players")
        if not isinstance(players, dict) or len(players) != 2:
            raise DesignError(f"{path}: players: expected two registered designs, got {players!r:.80}")
        looks = {str(p): Look.from_json(v, f"{path}: players.{p}") for p, v in players.items()}
        faces = {}
        for p, v in players.items():
            if isinstance(v, dict) and "face_png" in v:
                try:
                    faces[str(p)] = face_from_text(v["face_png"])
                except ValueError as error:
                    raise DesignError(f"{path}: players.{p}.face_png: {error}") from None
        return cls(looks, faces)


def merge(looks: list[Look]) -> Look:
    """One look from several cards of the same design (weighted by how much of each showed)."""
    w = np.array([lk.pixels for lk in looks], float)
    w /= w.sum()
    colour = sum(wi * lk.colour for wi, lk in zip(w, looks, strict=True))
    pattern = sum(wi * lk.pattern for wi, lk in zip(w, looks, strict=True))
    busy = float(sum(wi * lk.busy for wi, lk in zip(w, looks, strict=True)))
    return Look(np.asarray(colour), np.asarray(pattern), busy, int(sum(lk.pixels for lk in looks)))
