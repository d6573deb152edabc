"""Cards found by a learned detector: a small YOLO oriented-box model run with OpenCV's dnn (no torch).

The edge-vote finder (cards.py) must see enough of a card's outline to trust
it, and a card low in a fan or an overlapping row shows little. The model,
trained on rendered Flux tables (vision/training/cards_dataset.py), sees the
card's shape from what shows of its face and rim. It looks at the table's top
view at ``CARD_PX_PER_IN``; each card it proposes is then put in order and
measured on the edges of the reader's 25 px/in view:

* **Order**: of two overlapping cards, the one on top shows its outline
  across the other's face; the one below has its outline hidden there. The
  cards are sorted top first by these pairwise verdicts.
* **Pose**: top first, each card's pose is fitted onto the edges near its
  outline (cards.py's fit), with the parts hidden by the cards above left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.flux.cards import (
    PX_PER_IN,
    RIM_DEPTH_PX,
    RIM_TOLERANCE,
    FoundCard,
    _colours_at,
    _EdgeEvidence,
    _fit_poses,
    _interiors,
    _lookup,
    _outlines,
    card_corners,
)

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
CARD_CLASSES = ["card"]
CARD_PX_PER_IN = 12.8  # the view the model sees: a card is ~32 x 44 px, a 24" table 307 px
MODEL_DIR = Path(__file__).resolve().parent.parent / "models"
DEFAULT_CARD_MODEL = MODEL_DIR / "cards-yolo11n-obb.onnx"
ORDER_INSET_PX = 2.0  # outline samples this far inside another card are over or under it


class CardModelError(ValueError):
    """The card model file is missing or unreadable."""


def model_view(view: Image, view_px_per_in: float = PX_PER_IN) -> Image:
    """The reader's top view shrunk to the model's scale (the same way in training and at run time)."""
    f = CARD_PX_PER_IN / view_px_per_in
    size = (max(1, round(view.shape[1] * f)), max(1, round(view.shape[0] * f)))
    out: Image = cv2.resize(view, size, interpolation=cv2.INTER_AREA)
    return out


@dataclass
class LearnedCardFinder:
    model_path: Path = DEFAULT_CARD_MODEL
    score_threshold: float = 0.4
    nms_iou: float = 0.6  # cards in a fan overlap a lot; two proposals for one card overlap more
    _net: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        path = Path(self.model_path)
        if not path.is_file():
            raise CardModelError(f"{path}: no card model there (train one with `tablesight train-card-finder`)")
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as error:
            raise CardModelError(f"{path}: not a model cv2.dnn can read ({str(error).strip()[:200]})") from error

    @staticmethod
    def available(model_path: Path = DEFAULT_CARD_MODEL) -> bool:
        return Path(model_path).is_file()

    def proposals(self, view: Image, view_px_per_in: float = PX_PER_IN) -> tuple[FloatArray, FloatArray]:
        """(x_px, y_px, rotation_deg) of each card the model sees, in ``view``'s pixels, and its score.
        Rotation as ``card_corners``: the long side from the y axis."""
        small = model_view(view, view_px_per_in)
        h, w = small.shape[:2]
        ph, pw = -(-h // 32) * 32, -(-w // 32) * 32
        padded = np.zeros((ph, pw, 3), np.uint8)
        padded[:h, :w] = small
        self._net.setInput(cv2.dnn.blobFromImage(padded, 1 / 255.0, (pw, ph), swapRB=True))
        out = np.asarray(self._net.forward())[0].T  # (N, 6): cx, cy, w, h, score, angle (radians)
        out = out[out[:, 4] >= self.score_threshold]
        if not len(out):
            return np.zeros((0, 3)), np.zeros(0)
        rects = [((float(r[0]), float(r[1])), (float(r[2]), float(r[3])), math.degrees(float(r[5]))) for r in out]
        keep = np.asarray(
            cv2.dnn.NMSBoxesRotated(rects, out[:, 4].tolist(), self.score_threshold, self.nms_iou), np.int64
        ).reshape(-1)
        out = out[keep]
        sx, sy = view.shape[1] / w, view.shape[0] / h
        # The box's w axis runs along (cos a, sin a); a card's long side runs along (-sin r, cos r).
        rot = np.degrees(out[:, 5]) + np.where(out[:, 3] >= out[:, 2], 0.0, 90.0)
        poses = np.c_[out[:, 0] * sx, out[:, 1] * sy, rot % 180.0]
        return poses.astype(np.float64), out[:, 4].astype(np.float64)

    def find(
        self,
        view: Image,
        card_w_in: float,
        card_h_in: float,
        px_per_in: float = PX_PER_IN,
        ignore: npt.NDArray[np.uint8] | None = None,
    ) -> list[FoundCard]:
        """Cards in a top view of the table (``px_per_in``), top first (as ``cards.find_cards``)."""
        w_px, h_px = card_w_in * px_per_in, card_h_in * px_per_in
        poses, _ = self.proposals(view, px_per_in)
        if ignore is not None and len(poses):
            poses = poses[~_lookup(ignore, poses[:, :2])]
        if not len(poses):
            return []
        evidence = _EdgeEvidence(view)
        poses = _fit_poses(poses, w_px, h_px, evidence)
        order = stacking_order(poses, w_px, h_px, evidence, view)
        covered = np.zeros(view.shape[:2], np.uint8)  # cards above, shrunk 2 px: what they hide of outlines
        covered_whole = np.zeros_like(covered)  # cards above, whole: what they hide of faces
        kept: list[FoundCard] = []
        for k in order:
            pose = _fit_poses(poses[k : k + 1], w_px, h_px, evidence, covered)[0] if kept else poses[k]
            pts, normals = _outlines(pose[None], w_px, h_px)
            hidden = _lookup(covered, pts[0])
            on_edge = evidence.on_edge(pts, normals)[0]
            shown = int((~hidden).sum())
            corners = card_corners(float(pose[0]), float(pose[1]), float(pose[2]), w_px, h_px)
            kept.append(
                FoundCard(
                    float(pose[0]) / px_per_in,
                    float(pose[1]) / px_per_in,
                    float(pose[2]) % 180.0,
                    corners / px_per_in,
                    float((on_edge & ~hidden).sum()) / max(shown, 1),
                    shown / len(hidden),
                    float((~_lookup(covered_whole, _interiors(pose[None], w_px, h_px)[0])).mean()),
                )
            )
            one = np.zeros_like(covered)
            cv2.fillPoly(one, [np.round(corners * 8).astype(np.int32)], 1, cv2.LINE_8, shift=3)
            covered |= cv2.erode(one, np.ones((5, 5), np.uint8))
            covered_whole |= one
        return kept


def _inside(pts: FloatArray, pose: FloatArray, w_px: float, h_px: float, inset_px: float) -> npt.NDArray[np.bool_]:
    """Which points lie inside the card at ``pose``, at least ``inset_px`` from its sides."""
    a = math.radians(float(pose[2]))
    d = pts - pose[:2]
    lx = d[:, 0] * math.cos(a) + d[:, 1] * math.sin(a)  # along the card's short side
    ly = -d[:, 0] * math.sin(a) + d[:, 1] * math.cos(a)  # along its long side
    out: npt.NDArray[np.bool_] = (np.abs(lx) < w_px / 2 - inset_px) & (np.abs(ly) < h_px / 2 - inset_px)
    return out


def stacking_order(poses: FloatArray, w_px: float, h_px: float, evidence: _EdgeEvidence, view: Image) -> list[int]:
    """Indices of ``poses``, top card first.

    Of two overlapping cards, the one above shows its outline as an edge across
    the other's face; the outline of the one below is hidden there. Each pair's
    verdict is the share of each outline, inside the other card, lying on
    edges; a card is taken when no card left is above it (in a cycle, the one
    above the most)."""
    n = len(poses)
    pts, normals = _outlines(poses, w_px, h_px)
    on_edge = evidence.on_edge(pts, normals)
    reach = math.hypot(w_px, h_px)
    near = [[j for j in range(n) if j != i and math.hypot(*(poses[i, :2] - poses[j, :2])) < reach] for i in range(n)]
    # inside[i][j]: which of card i's outline samples lie inside card j
    inside = [{j: _inside(pts[i], poses[j], w_px, h_px, ORDER_INSET_PX) for j in near[i]} for i in range(n)]
    # A card's own edge has its rim just inside it, one colour all round; a pattern's edge (the card
    # above's face where this outline is hidden) does not: an edge counts only with the rim's colour.
    rim = _colours_at(view, pts - RIM_DEPTH_PX * normals)
    good = np.zeros_like(on_edge)
    for i in range(n):
        free = on_edge[i].copy()
        for j in near[i]:
            free &= ~inside[i][j]
        ref_at = free if free.sum() >= 6 else on_edge[i]
        if not ref_at.any():
            continue
        ref = np.median(rim[i][ref_at], axis=0)
        good[i] = on_edge[i] & (np.abs(rim[i] - ref).max(axis=1) <= RIM_TOLERANCE)

    above = np.zeros((n, n), bool)  # above[i, j]: card i lies on card j
    for i in range(n):
        for j in near[i]:
            if j < i or not (inside[i][j].any() or inside[j][i].any()):
                continue  # done, or side by side / only corners touching
            s_i = float(good[i][inside[i][j]].mean()) if inside[i][j].sum() >= 3 else 0.5
            s_j = float(good[j][inside[j][i]].mean()) if inside[j][i].sum() >= 3 else 0.5
            above[i, j], above[j, i] = s_i > s_j, s_j >= s_i
    left = list(range(n))
    order = []
    while left:
        free = [k for k in left if not above[left, k].any()]
        pick = free[0] if free else max(left, key=lambda k: int(above[k, left].sum()) - int(above[left, k].sum()))
        order.append(pick)
        left.remove(pick)
    return order
