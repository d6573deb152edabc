"""Cards on the table found as rectangles of a known size, even overlapping in a fanned pile.

Every card is the same rectangle (63 x 88 mm) lying flat, so in the camera's
top view it has three unknowns: centre and rotation. Candidates come from a
vote: for each rotation the view is turned so a card's sides are upright, and
box filters count how much of a card-sized outline lies on edges there.
Each candidate's pose is then fitted onto the edges near its outline (the
vote is a few pixels off for a card that shows only part of its outline);
one that is close to passing is fitted again from starts a border's width to
each side (a lower card otherwise locks onto its own border's inner edge)
and then searched on the share of its outline on edges.
Candidates are taken cleanest outline first and kept while they explain
edges: a card above hides the parts of the cards below it, so each candidate
is judged, and fitted again, only on the part of its outline that no card
already kept is lying on, and must show enough of its face (a "card" seen
only in the gap between two cards shows mat). A candidate with another
card's side seen running across its face is not on top, and waits for the
card lying over it. The view's border (the table's edge) is no evidence
either way. Where the players' designs were registered, their faces settle
what the outline cannot (FACE_*): of the candidates overlapping the one
about to be kept, the card on top shows all of a design's face where its
pose puts it; a card below it, or a "card" a stripe off its true place,
does not; a "card" no design's face matches is no Source card.
Cards are returned top first.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

PX_PER_IN = 25.0  # the top view searched; a card is about 62 x 87 px, its 3 mm border 3 px
ANGLE_STEP_DEG = 1.5
EDGE_MIN = 6.0  # gradient (grey levels per pixel) that counts as an edge
MIN_VISIBLE_OUTLINE = 0.3  # a card must show this much of its outline ...
MIN_SUPPORT = 0.7  # ... and this much of what it shows must lie on edges
MIN_VISIBLE_AREA = 0.15  # of the card's face not under cards kept
MAX_CANDIDATES = 4000
CANDIDATE_CELL_PX = 4.0  # one vote kept per cell of this size and CANDIDATE_CELL_DEG (the fit moves a pose further)
CANDIDATE_CELL_DEG = 4.0
EXTRA_CANDIDATES = 2000
MIN_SIDE_SUPPORT = 0.45
SIDE_SHOWN_MIN = 6  # samples (of 24 a side)
RIM_DEPTH_PX = 1.5  # where a card's rim colour is read, inside its edge
RIM_TOLERANCE = 40.0  # grey levels (per channel) a rim may vary by
RANK_OUTLINE_WEIGHT = 0.25  # the order cards are taken in: support share + this x shown share of the outline
START_SHIFT_PX = 3.0  # a card's 3 mm border in the top view: how far a fit is started again to each side
RESTART_BELOW = 0.9  # support below which a fit is started again from shifted poses
START_SHIFTS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))  # in border widths
# The last search a pose gets, on the support itself, one axis at a time: x px, y px, rotation deg.
POSE_STEPS = np.array([(-1.0, -1.0, -1.5), (-0.5, -0.5, -0.75), (0.5, 0.5, 0.75), (1.0, 1.0, 1.5)])
VIEW_BORDER_PX = 4  # outline samples this near the view's border are not evidence
REFIT_SUPPORT = 0.4  # candidates uncovered by a kept card are fitted again from this much support
# Which passing candidate is on top: not one with another card's side seen running across its face. Seen:
# this far inside the face (past its 3 px border and the blur of the border's inner edge), on this many
# samples of one side (half a short side) and this share of those inside, each on a straight edge of one
# sign (STRAIGHT_TOLERANCE_PX) in that card's rim colour.
SHOW_THROUGH_MARGIN_PX = 7.0
SHOW_THROUGH_MIN = 12
SHOW_THROUGH_SHARE = 0.6
STRAIGHT_TOLERANCE_PX = 0.5
# Only candidates turned alike and ranked close contest the order. Cards overlapping in a row or a fan lie
# turned alike; the lines of a printed pattern (stripes, checks) trace "cards" turned a quarter across real
# ones, and "cards" shifted by a stripe, which rank lower than the real card they lie on.
CONTEST_MAX_TURN_DEG = 30.0
CONTEST_RANK_GAP = 0.1
TOP_CHECKS = 8  # passing candidates tried, best ranked first, for one that nothing shows through
# With the designs' faces registered (vision/flux/faces.py): of the card about to be kept and the passing
# candidates overlapping it, ranked within FACE_RANK_GAP of it (FACE_ALTERNATIVES best ranked, at most
# FACE_PER_CARD poses of one card), the one whose pose puts a face where the photo shows it is kept when
# it matches by FACE_MARGIN more; a "card" no face matches (FACE_MIN) is no Source card.
FACE_ALTERNATIVES = 12
FACE_PER_CARD = 3
FACE_RANK_GAP = 0.2
FACE_MARGIN = 0.1
FACE_MIN = 0.3
FACE_MOVE_GAIN = 0.1  # a kept card is moved onto its face seen a few millimetres off when it matches this much better

FloatArray = npt.NDArray[np.float64]


class FaceCheck(Protocol):
    """Where the registered designs' faces are seen (vision/flux/read.py): a card's corners in view px,
    the corners of the cards above it hiding what they hide. NaN where it says nothing (outside the zones
    of Source cards, too little showing)."""

    def score(self, corners_px: FloatArray, above_px: list[FloatArray]) -> float:
        """How well a face matches with the card where it is (within a print's and a fit's error)."""
        ...

    def placed(self, corners_px: FloatArray, above_px: list[FloatArray]) -> tuple[float, FloatArray]:
        """How well a face matches a few millimetres round, and where (view px from the card's centre)."""
        ...


@dataclass(frozen=True)
class FoundCard:
    x_in: float
    y_in: float
    rotation_deg: float  # the card's long side from the table's y axis, 0-180
    corners_in: FloatArray  # 4 x 2, table inches
    support: float  # share of the visible outline lying on edges
    visible_outline: float  # share of the outline not under a card above
    visible_area: float  # share of the card not under a card above


def colour_gradients(view: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Per pixel, the gradient of the colour channel that changes most there (edges that are only a change of hue count)."""
    img = cv2.GaussianBlur(view, (0, 0), 0.8).astype(np.float32)
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3) / 8
    if img.ndim == 2:
        return gx, gy
    strongest = np.argmax(gx**2 + gy**2, axis=2)[..., None]
    return np.take_along_axis(gx, strongest, 2)[..., 0], np.take_along_axis(gy, strongest, 2)[..., 0]


def card_corners(x: float, y: float, rotation_deg: float, w: float, h: float) -> FloatArray:
    """Corners of a w x h card centred at (x, y), its long side turned ``rotation_deg`` from the y axis."""
    a = math.radians(rotation_deg)
    c, s = math.cos(a), math.sin(a)
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    out: FloatArray = local @ np.array([[c, s], [-s, c]]) + np.array([x, y])
    return out


def _candidates(view: npt.NDArray[np.uint8], w_px: float, h_px: float) -> list[tuple[float, float, float, float]]:
    """(x_px, y_px, rotation_deg, outline score) of card-shaped outlines, by a vote over rotations: the
    best MAX_CANDIDATES, then up to EXTRA_CANDIDATES more from cells of pose not voted for yet."""
    hh, ww = view.shape[:2]
    diag = int(math.ceil(math.hypot(hh, ww))) + 4
    out: list[tuple[float, float, float, float]] = []
    # Sides are counted on their middle 80 %: corners may be rounded.
    long_px, short_px = int(round(0.8 * h_px)), int(round(0.8 * w_px))
    for deg in np.arange(0.0, 90.0, ANGLE_STEP_DEG):
        M = cv2.getRotationMatrix2D((ww / 2, hh / 2), float(deg), 1.0)
        M[:, 2] += (diag / 2 - ww / 2, diag / 2 - hh / 2)
        turned = cv2.warpAffine(view, M, (diag, diag), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        gx, gy = colour_gradients(turned)
        ax, ay = np.abs(gx), np.abs(gy)
        upright = ((ax >= EDGE_MIN) & (ax >= 2 * ay)).astype(np.float32)  # vertical edges
        level = ((ay >= EDGE_MIN) & (ay >= 2 * ax)).astype(np.float32)
        upright = cv2.dilate(upright, np.ones((1, 3), np.uint8))
        level = cv2.dilate(level, np.ones((3, 1), np.uint8))
        Minv = cv2.invertAffineTransform(M)
        for sw, sh, extra in ((w_px, h_px, 0.0), (h_px, w_px, 90.0)):
            side_v = cv2.boxFilter(upright, -1, (1, long_px if sw == w_px else short_px))
            side_h = cv2.boxFilter(level, -1, (short_px if sw == w_px else long_px, 1))
            dx, dy = int(round(sw / 2)), int(round(sh / 2))
            score = np.zeros(side_v.shape, np.float32)
            # left + right sides (length sh), top + bottom (length sw)
            score[:, dx:-dx] += sh * (side_v[:, : -2 * dx] + side_v[:, 2 * dx :])
            score[dy:-dy, :] += sw * (side_h[: -2 * dy, :] + side_h[2 * dy :, :])
            score *= np.float32(1.0 / (2 * (sw + sh)))
            peaks = (score >= 0.25) & (score == cv2.dilate(score, np.ones((5, 5), np.uint8)))
            ys, xs = np.nonzero(peaks)
            if len(xs) == 0:
                continue
            back = np.c_[xs, ys, np.ones(len(xs))] @ Minv.T
            # The view was turned by deg counter-clockwise on screen; a card upright there is turned deg clockwise here.
            rot = (extra + deg) % 180.0
            for (bx, by), s in zip(back, score[ys, xs], strict=True):
                if 0 <= bx < ww and 0 <= by < hh:
                    out.append((float(bx), float(by), float(rot), float(s)))
    out.sort(key=lambda c: -c[3])

    # A striped face votes for a plateau of equal peaks a pixel apart, thousands of them, which can
    # crowd the cards below out of the best MAX_CANDIDATES: after those, the best vote of each cell of
    # pose not yet voted for is kept too (EXTRA_CANDIDATES of them).
    def cell(c: tuple[float, float, float, float]) -> tuple[int, int, int]:
        return (int(c[0] // CANDIDATE_CELL_PX), int(c[1] // CANDIDATE_CELL_PX), int(c[2] // CANDIDATE_CELL_DEG))

    kept = out[:MAX_CANDIDATES]
    cells = {cell(c) for c in kept}
    for c in out[MAX_CANDIDATES:]:
        if len(kept) >= MAX_CANDIDATES + EXTRA_CANDIDATES:
            break
        if cell(c) not in cells:
            cells.add(cell(c))
            kept.append(c)
    return kept


class _EdgeEvidence:
    """Edge strength across a given direction at given points of the view (bilinear)."""

    def __init__(self, view: npt.NDArray[np.uint8]) -> None:
        gx, gy = colour_gradients(view)
        self.g = np.dstack([gx, gy])  # sampled as one two-channel image

    def across_strength(self, pts: FloatArray, normals: FloatArray) -> FloatArray:
        """Gradient across each point's side where the edge runs along it (0 where it runs another way)."""
        g = _colours_at(self.g, pts)
        gx, gy = g[..., 0], g[..., 1]
        across = np.abs(gx * normals[..., 0] + gy * normals[..., 1])
        along = np.abs(-gx * normals[..., 1] + gy * normals[..., 0])
        out: FloatArray = np.where(across >= 2 * along, across, 0.0)
        return out

    def on_edge(self, pts: FloatArray, normals: FloatArray) -> npt.NDArray[np.bool_]:
        """Whether an edge running along each point's side lies within 1.5 px of it."""
        strongest = np.zeros(pts.shape[:-1])
        for off in (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5):
            strongest = np.maximum(strongest, self.across_strength(pts + off * normals, normals))
        out: npt.NDArray[np.bool_] = strongest >= EDGE_MIN
        return out


def _outlines(poses: FloatArray, w_px: float, h_px: float, per_side: int = 24) -> tuple[FloatArray, FloatArray]:
    """Points along the middle 90 % of each side of many poses, with the side's outward normal:
    (N, 4 * per_side, 2) each."""
    corners = _corners_many(poses, w_px, h_px)
    a, b = corners, np.roll(corners, -1, axis=1)  # (N, 4, 2): each side from corner k to k + 1
    t = np.linspace(0.05, 0.95, per_side)[None, None, :, None]
    pts = a[:, :, None] + t * (b - a)[:, :, None]
    d = (b - a) / np.linalg.norm(b - a, axis=2, keepdims=True)
    n = np.stack([d[..., 1], -d[..., 0]], axis=2)
    outward = np.sign(((a + b) / 2 - corners.mean(axis=1, keepdims=True)) * n).sum(axis=2, keepdims=True)
    n = n * np.where(outward < 0, -1.0, 1.0)
    normals = np.broadcast_to(n[:, :, None], pts.shape)
    return pts.reshape(len(poses), -1, 2), np.ascontiguousarray(normals).reshape(len(poses), -1, 2)


def _corners_many(poses: FloatArray, w_px: float, h_px: float) -> FloatArray:
    """``card_corners`` of many (x, y, rotation) poses: (N, 4, 2)."""
    a = np.radians(poses[:, 2])
    c, s = np.cos(a)[:, None], np.sin(a)[:, None]
    lx = np.array([-w_px / 2, w_px / 2, w_px / 2, -w_px / 2])[None]
    ly = np.array([-h_px / 2, -h_px / 2, h_px / 2, h_px / 2])[None]
    out: FloatArray = np.stack([lx * c - ly * s + poses[:, :1], lx * s + ly * c + poses[:, 1:2]], axis=2)
    return out


def _fit_poses(
    poses: FloatArray,
    w_px: float,
    h_px: float,
    evidence: _EdgeEvidence,
    hidden: npt.NDArray[np.uint8] | None = None,
) -> FloatArray:
    """Each pose moved so its outline lies on the nearest card-like edges (a few Gauss-Newton steps).

    The vote puts a card that shows only part of its outline a few pixels and
    degrees off; judged there, its outline misses its own edges. Each outline
    sample looks along its normal for the nearest edge running its way; the
    pose that brings the samples onto those edges is solved by least squares,
    with samples far from the current fit (another card's edge) weighed down
    and samples under the cards kept so far (``hidden``) left out.
    """
    fitted = poses.astype(np.float64).copy()
    for window in (4.0, 2.5, 1.5):
        pts, normals = _outlines(fitted, w_px, h_px)
        turned, _ = _outlines(fitted + [0.0, 0.0, 0.5], w_px, h_px)
        offsets = np.arange(-window, window + 0.01, 0.5)
        strength = np.stack([evidence.across_strength(pts + o * normals, normals) for o in offsets])
        strongest = strength.max(axis=0)
        # The nearest edge that is strong enough, not the strongest: a card's border has two edges 3 px apart.
        strong = strength >= np.maximum(EDGE_MIN, 0.5 * strongest)[None]
        nearest = np.argmin(np.where(strong, np.abs(offsets)[:, None, None], np.inf), axis=0)
        shift = offsets[nearest]
        weight = (strongest >= EDGE_MIN) / (1.0 + (shift / 2.0) ** 2)
        if hidden is not None:
            weight = weight * ~_lookup(hidden, pts)
        jac = np.stack(
            [normals[..., 0], normals[..., 1], ((turned - pts) / 0.5 * normals).sum(axis=2)], axis=2
        )  # d(shift along the normal) / d(x px, y px, rotation deg)
        jtj = np.einsum("nsi,ns,nsj->nij", jac, weight, jac) + np.eye(3) * 1e-3
        jtr = np.einsum("nsi,ns,ns->ni", jac, weight, shift)
        step = np.linalg.solve(jtj, jtr[..., None])[..., 0]
        step[:, :2] = np.clip(step[:, :2], -window, window)
        step[:, 2] = np.clip(step[:, 2], -3.0, 3.0)
        enough = weight.sum(axis=1) >= 12  # too few edges seen: leave the pose as voted
        fitted[enough] += step[enough]
    return fitted


def _interiors(poses: FloatArray, w_px: float, h_px: float, across: int = 12, along: int = 16) -> FloatArray:
    """A grid of points inside each card (to measure how much of it is visible): (N, across * along, 2)."""
    corners = _corners_many(poses, w_px, h_px)
    u, v = np.meshgrid((np.arange(across) + 0.5) / across, (np.arange(along) + 0.5) / along)
    a, b, d = corners[:, None, 0], corners[:, None, 1], corners[:, None, 3]
    out: FloatArray = a + u.reshape(1, -1, 1) * (b - a) + v.reshape(1, -1, 1) * (d - a)
    return out


def _lookup(mask: npt.NDArray[np.uint8], pts: FloatArray) -> npt.NDArray[np.bool_]:
    h, w = mask.shape
    xi = np.clip(np.round(pts[..., 0]).astype(int), 0, w - 1)
    yi = np.clip(np.round(pts[..., 1]).astype(int), 0, h - 1)
    out: npt.NDArray[np.bool_] = mask[yi, xi] > 0
    return out


def _refine(
    x: float,
    y: float,
    rot: float,
    w_px: float,
    h_px: float,
    evidence: _EdgeEvidence,
    hidden: npt.NDArray[np.uint8],
) -> tuple[float, float, float]:
    """The pose within 1.5 px and 1.5 degrees whose visible outline lies on the strongest edges."""
    steps = np.arange(-1.5, 1.51, 0.5)
    trials = [(x + dx, y + dy, rot + dr) for dr in steps for dx in steps for dy in steps]
    pts, normals = _outlines(np.array(trials), w_px, h_px)
    g = _colours_at(evidence.g, pts)
    across = np.abs(g[..., 0] * normals[..., 0] + g[..., 1] * normals[..., 1])
    shown = ~_lookup(hidden, pts)
    score = (np.minimum(across, 4 * EDGE_MIN) * shown).sum(axis=1) / np.maximum(shown.sum(axis=1), 1)
    return trials[int(np.argmax(score))]


def _colours_at(view: npt.NDArray[np.uint8] | npt.NDArray[np.float32], pts: FloatArray) -> npt.NDArray[np.float32]:
    """Bilinear samples of ``view`` at points of any leading shape (..., 2)."""
    flat = pts.reshape(-1, 2).astype(np.float32)
    n = len(flat)
    cols = max(1024, -(-n // 30000))  # remap wants maps under 32767 rows and columns
    grid = np.zeros((-(-n // cols) * cols, 2), np.float32)
    grid[:n] = flat
    grid = grid.reshape(-1, cols, 2)
    out = cv2.remap(view, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    channels = view.shape[2] if view.ndim == 3 else 1
    result: npt.NDArray[np.float32] = out.reshape(-1, channels)[:n].reshape(*pts.shape[:-1], -1).astype(np.float32)
    return result


def _rim_colour(seen_edge: npt.NDArray[np.bool_], rim: npt.NDArray[np.float32]) -> FloatArray:
    """A card's rim colour (N, 1, C): the median over the samples (N, S, C) of its shown outline on edges."""
    masked = np.where(seen_edge[..., None], rim, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: candidates with no edge shown
        out: FloatArray = np.nanmedian(masked, axis=1, keepdims=True)
    return out


def _one_rim(
    seen_edge: npt.NDArray[np.bool_], rim: npt.NDArray[np.float32], colour: FloatArray | None = None
) -> npt.NDArray[np.bool_]:
    """Outline samples (N, S) on an edge whose rim colour (N, S, C) is the card's (``colour``, or
    ``_rim_colour``); samples far from it are not this card's."""
    if colour is None:
        colour = _rim_colour(seen_edge, rim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN colour: no edge shown
        same_rim = np.nanmax(np.abs(rim - colour), axis=2) <= RIM_TOLERANCE
    out: npt.NDArray[np.bool_] = seen_edge & same_rim
    return out


def find_cards(
    view: npt.NDArray[np.uint8],
    card_w_in: float,
    card_h_in: float,
    px_per_in: float = PX_PER_IN,
    ignore: npt.NDArray[np.uint8] | None = None,
    faces: FaceCheck | None = None,
) -> list[FoundCard]:
    """Cards in a top view of the table (``px_per_in``), top first.

    Greedy explanation: at each step the candidate whose visible outline puts
    the most outline on edges is kept (with the share thresholds met); the
    cards kept hide what lies under them from the candidates still waiting.
    A card's edge is told from the edges of patterns printed on cards by
    what lies just inside it: a card's rim is one colour all round (its
    border, or its plain back), a pattern's is not.
    ``ignore``: pixels where no card can lie (the kit's markers). ``faces``: where the registered designs'
    faces are seen (FACE_*)."""
    w_px, h_px = card_w_in * px_per_in, card_h_in * px_per_in
    evidence = _EdgeEvidence(view)
    candidates = _candidates(view, w_px, h_px)
    if not candidates:
        return []
    poses = _fit_poses(np.array([c[:3] for c in candidates]), w_px, h_px, evidence)
    # Votes for one card converge on one pose: keep the first (best voted) of each.
    _, first = np.unique(np.round(poses / [1.0, 1.0, 1.0]).astype(np.int64), axis=0, return_index=True)
    poses = poses[np.sort(first)]
    n = len(poses)
    outline_a, normals_a = _outlines(poses, w_px, h_px)
    interior_a = _interiors(poses, w_px, h_px)
    n_outline = outline_a.shape[1]
    on_edge_a = evidence.on_edge(outline_a, normals_a)
    rim = _colours_at(view, outline_a - RIM_DEPTH_PX * normals_a)

    def support(p: FloatArray, rim_colour: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
        """Share of each pose's shown outline on edges with one rim colour (as ``judge`` counts it), and
        that colour; ``rim_colour`` (N, 1, C): judge against these colours instead of each pose's own."""
        pts, nrm = _outlines(p, w_px, h_px)
        hidden = _lookup(covered, pts)
        seen = evidence.on_edge(pts, nrm) & ~hidden
        rim_p = _colours_at(view, pts - RIM_DEPTH_PX * nrm)
        if rim_colour is None:
            rim_colour = _rim_colour(seen, rim_p)
        good = _one_rim(seen, rim_p, rim_colour)
        out: FloatArray = good.sum(axis=1) / np.maximum((~hidden).sum(axis=1), 1)
        return out, rim_colour

    def place(idx: npt.NDArray[np.intp]) -> None:
        """Fit candidates ``idx`` again with what the cards kept so far hide left out, and re-sample them."""
        best = _fit_poses(poses[idx], w_px, h_px, evidence, covered)
        best_support, _ = support(best)
        # A card fitted onto its own border's inner edge is a stable wrong fit, a border's width off:
        # start again a border's width to each side and keep the start that explains most.
        a = np.radians(poses[idx, 2])
        u = np.stack([np.cos(a), np.sin(a)], axis=1)  # the card's short axis
        v = np.stack([-np.sin(a), np.cos(a)], axis=1)
        again = np.nonzero(best_support < RESTART_BELOW)[0]  # a card that explains its outline is left be
        for su, sv in START_SHIFTS if len(again) else ():
            start = poses[idx[again]].copy()
            start[:, :2] += START_SHIFT_PX * (su * u[again] + sv * v[again])
            fitted = _fit_poses(start, w_px, h_px, evidence, covered)
            s, _ = support(fitted)
            better = s > best_support[again] + 0.02
            best[again[better]], best_support[again[better]] = fitted[better], s[better]
        # Gauss-Newton leaves a card showing one side and a corner a pixel or a degree off; the support decides.
        best_support, rim_colour = support(best)  # one rim colour per card for all its trials: the median is slow
        rims = np.repeat(rim_colour, len(POSE_STEPS), axis=0)
        for _round in range(2):
            for axis, steps in enumerate(POSE_STEPS.T):
                trials = np.repeat(best[:, None, :], len(steps), axis=1)
                trials[:, :, axis] += steps
                s, _ = support(trials.reshape(-1, 3), rims)
                s = s.reshape(len(idx), len(steps))
                pick = np.argmax(s, axis=1)
                better = s[np.arange(len(idx)), pick] > best_support + 0.01
                best[better] = trials[better, pick[better]]
                best_support[better] = s[better, pick[better]]
        poses[idx] = best
        outline_a[idx], normals_a[idx] = _outlines(poses[idx], w_px, h_px)
        interior_a[idx] = _interiors(poses[idx], w_px, h_px)
        on_edge_a[idx] = evidence.on_edge(outline_a[idx], normals_a[idx])
        rim[idx] = _colours_at(view, outline_a[idx] - RIM_DEPTH_PX * normals_a[idx])

    # Cards kept so far, grown 2 px: what they hide of outlines. A "card" lying along the edges of cards
    # above it would find its outline on their edges; those edges are theirs, not its.
    covered = np.zeros(view.shape[:2], np.uint8)
    if ignore is not None:
        covered |= (ignore > 0).astype(np.uint8)
    # Cards kept so far, whole: what shows of a card's face. A "card" seen only in the gap between two
    # cards shows mat there, and next to nothing by this measure.
    covered_whole = covered.copy()
    # The view's border is the table's edge (or the end of what was searched): the mat ends there in an
    # edge that is no card's, and a "card" hanging off the table would find one of its sides on it.
    vh, vw = view.shape[:2]
    covered[:VIEW_BORDER_PX, :] = covered[vh - VIEW_BORDER_PX :, :] = 1
    covered[:, :VIEW_BORDER_PX] = covered[:, vw - VIEW_BORDER_PX :] = 1
    alive = ~_lookup(covered, poses[:, :2])
    explained = np.zeros(n, int)
    shown = np.zeros(n, int)
    sides_ok = np.zeros(n, bool)
    vis_area = np.zeros(n)

    def judge(idx: npt.NDArray[np.intp]) -> None:
        """Re-judge candidates ``idx`` against what the cards kept so far hide."""
        hidden = _lookup(covered, outline_a[idx])
        good = _one_rim(on_edge_a[idx] & ~hidden, rim[idx])
        explained[idx] = good.sum(axis=1)
        shown[idx] = (~hidden).sum(axis=1)
        # Every side that shows must be a card's side along most of what shows of it.
        side_shown = (~hidden).reshape(len(idx), 4, -1).sum(axis=2)
        side_good = good.reshape(len(idx), 4, -1).sum(axis=2)
        sides_ok[idx] = np.all((side_shown < SIDE_SHOWN_MIN) | (side_good >= MIN_SIDE_SUPPORT * side_shown), axis=1)
        vis_area[idx] = (~_lookup(covered_whole, interior_a[idx])).mean(axis=1)

    judge(np.arange(n))
    # Candidates close to passing get the full fit (several starts, then a search on the support).
    near = np.nonzero(
        alive & (shown >= MIN_VISIBLE_OUTLINE * n_outline) & (explained >= REFIT_SUPPORT * np.maximum(shown, 1))
    )[0]
    if len(near):
        place(near)
        judge(near)
    kept: list[FoundCard] = []
    reach = math.hypot(w_px, h_px)  # candidates farther than this from a kept card are not touched by it
    while alive.any():
        ok = (
            alive
            & (shown >= MIN_VISIBLE_OUTLINE * n_outline)
            & (explained >= MIN_SUPPORT * np.maximum(shown, 1))
            & (vis_area >= MIN_VISIBLE_AREA)
            & sides_ok
        )
        if not ok.any():
            break
        # Cleanest outline first: a card lying under others explains less of its outline than the card on top.
        rank = explained / np.maximum(shown, 1) + RANK_OUTLINE_WEIGHT * shown / n_outline
        layering = _Layering(poses, outline_a, normals_a, on_edge_a, rim, covered, evidence, w_px, h_px)
        k = _on_top(np.nonzero(ok)[0], rank, layering)
        above_px = [c.corners_in * px_per_in for c in kept] if faces is not None else []
        if faces is not None:
            by_face = _by_face(k, ok, rank, poses, w_px, h_px, faces, above_px)
            if by_face is None:
                alive[k] = False
                continue
            k = by_face
        x, y, rot = _refine(float(poses[k, 0]), float(poses[k, 1]), float(poses[k, 2]), w_px, h_px, evidence, covered)
        corners = card_corners(x, y, rot, w_px, h_px)
        if faces is not None:  # a card a few millimetres off its face is moved onto it
            here = faces.score(corners, above_px)
            there, shift = faces.placed(corners, above_px)
            if there >= here + FACE_MOVE_GAIN:
                x, y = x + float(shift[0]), y + float(shift[1])
                corners = card_corners(x, y, rot, w_px, h_px)
        kept.append(
            FoundCard(
                x / px_per_in,
                y / px_per_in,
                rot % 180.0,
                corners / px_per_in,
                float(explained[k]) / max(1, int(shown[k])),
                float(shown[k]) / n_outline,
                float(vis_area[k]),
            )
        )
        # The same card again (another vote for it) is done with; what it covers is hidden from now on.
        alive &= ~_votes_for(poses, x, y, rot, w_px)
        dist = np.hypot(poses[:, 0] - x, poses[:, 1] - y)
        alive[k] = False
        one = np.zeros_like(covered)
        cv2.fillPoly(one, [np.round(corners * 8).astype(np.int32)], 1, cv2.LINE_8, shift=3)
        covered |= cv2.dilate(one, np.ones((5, 5), np.uint8))
        covered_whole |= one
        touched = np.nonzero(alive & (dist < reach))[0]
        if len(touched):
            judge(touched)
            # Those now close to passing are fitted again without what is hidden, and judged there.
            near = touched[
                (shown[touched] >= MIN_VISIBLE_OUTLINE * n_outline)
                & (vis_area[touched] >= MIN_VISIBLE_AREA)
                & (explained[touched] >= REFIT_SUPPORT * np.maximum(shown[touched], 1))
            ]
            if len(near):
                place(near)
                judge(near)
    return kept


@dataclass(frozen=True)
class _Layering:
    """What the contest for the top place looks at: every candidate's pose, outline samples (with their
    normals, whether each is on an edge, the rim colour inside it) and what the cards kept so far cover."""

    poses: FloatArray
    outline: FloatArray
    normals: FloatArray
    on_edge: npt.NDArray[np.bool_]
    rim: npt.NDArray[np.float32]
    covered: npt.NDArray[np.uint8]
    evidence: _EdgeEvidence
    w_px: float
    h_px: float


def _on_top(ok: npt.NDArray[np.intp], rank: FloatArray, lay: _Layering) -> int:
    """The best ranked of the passing candidates ``ok`` that no other passing candidate shows through.

    A card on top hides what lies under it: another card's side seen running
    across its face says it is not on top. In a row overlapping by half a
    card, the card two places down can rank first by a hair (its far side
    lines up with the side of the card two places up, so it shows a whole
    outline); laid on top, it would hide the card between, whose side runs
    across its face. Two cards cannot each lie on the other: where the
    contested card's side shows across the contender's face too, one of them
    is a pattern's lines and the contest says nothing. Only candidates
    turned alike and ranked close (CONTEST_*) contest. When every candidate
    tried is seen through, the best ranked is taken.
    """
    order = ok[np.argsort(-rank[ok], kind="stable")]
    poses, w_px, h_px = lay.poses, lay.w_px, lay.h_px
    seen_through: list[int] = []
    for k in order:
        x, y, rot = poses[k]
        if len(seen_through) >= TOP_CHECKS:
            break
        if seen_through and _votes_for(poses[seen_through], x, y, rot, w_px).any():
            continue  # another vote for a card already seen through
        others = order[order != k]
        near = np.hypot(poses[others, 0] - x, poses[others, 1] - y) < math.hypot(w_px, h_px)
        alike = _turn_deg(poses[others, 2], rot) <= CONTEST_MAX_TURN_DEG
        close = rank[others] >= rank[k] - CONTEST_RANK_GAP
        others = others[near & alike & close & ~_votes_for(poses[others], x, y, rot, w_px)]
        if not len(others):
            return int(k)
        mine = np.full(len(others), k)
        if not (_side_across(others, mine, lay) & ~_side_across(mine, others, lay)).any():
            return int(k)
        seen_through.append(int(k))
    return int(order[0])


def _by_face(
    k: int,
    ok: npt.NDArray[np.bool_],
    rank: FloatArray,
    poses: FloatArray,
    w_px: float,
    h_px: float,
    faces: FaceCheck,
    above_px: list[FloatArray],
) -> int | None:
    """Of candidate ``k`` and the passing candidates overlapping it, ranked close (FACE_RANK_GAP), the one
    whose face matches a registered design best (by FACE_MARGIN); ``k`` where the faces say nothing; None
    when no face matches. A card on top shows all its face; one under it shows part of the other's face
    where its own should be, and a "card" a stripe off its true place shows its border on the pattern."""
    x, y, _ = poses[k]
    rivals = np.nonzero(
        ok & (np.hypot(poses[:, 0] - x, poses[:, 1] - y) < math.hypot(w_px, h_px)) & (rank >= rank[k] - FACE_RANK_GAP)
    )[0]
    tried = [k]
    for r in rivals[np.argsort(-rank[rivals], kind="stable")]:
        if len(tried) >= FACE_ALTERNATIVES:
            break
        xr, yr, rotr = poses[r]
        if r != k and _votes_for(poses[tried], xr, yr, rotr, w_px).sum() < FACE_PER_CARD:
            tried.append(int(r))  # a few poses of each card: many votes for one would crowd the others out
    scores = np.array(
        [
            faces.score(card_corners(float(poses[a, 0]), float(poses[a, 1]), float(poses[a, 2]), w_px, h_px), above_px)
            for a in tried
        ]
    )
    if np.isnan(scores[0]):
        return k
    best = int(np.nanargmax(scores))
    if scores[best] < FACE_MIN:
        return None
    return int(tried[best]) if scores[best] > scores[0] + FACE_MARGIN else k


def _votes_for(poses: FloatArray, x: float, y: float, rot: float, w_px: float) -> npt.NDArray[np.bool_]:
    """Which ``poses`` are votes for the card at (x, y, rot): near its centre and turned alike."""
    near = np.hypot(poses[:, 0] - x, poses[:, 1] - y) < 0.3 * w_px
    out: npt.NDArray[np.bool_] = near & (_turn_deg(poses[:, 2], rot) < 12)
    return out


def _turn_deg(a_deg: FloatArray, b_deg: float) -> FloatArray:
    """How far apart two card rotations are (a card turned half round is the same rectangle)."""
    gap = np.abs(a_deg - b_deg) % 180.0
    out: FloatArray = np.minimum(gap, 180.0 - gap)
    return out


def _side_across(side_of: npt.NDArray[np.intp], face_of: npt.NDArray[np.intp], lay: _Layering) -> npt.NDArray[np.bool_]:
    """Per pair i: whether a side of candidate ``side_of[i]`` is seen running across the face of candidate
    ``face_of[i]`` (SHOW_THROUGH_*), where no card kept so far covers it."""
    pts, w_px, h_px = lay.outline[side_of], lay.w_px, lay.h_px
    a = np.radians(lay.poses[face_of, 2])[:, None]
    rel = pts - lay.poses[face_of, None, :2]
    u = rel[..., 0] * np.cos(a) + rel[..., 1] * np.sin(a)  # along the face's short side
    v = -rel[..., 0] * np.sin(a) + rel[..., 1] * np.cos(a)
    inside = (np.abs(u) < w_px / 2 - SHOW_THROUGH_MARGIN_PX) & (np.abs(v) < h_px / 2 - SHOW_THROUGH_MARGIN_PX)
    inside &= ~_lookup(lay.covered, pts)
    seen = _one_rim(lay.on_edge[side_of] & inside, lay.rim[side_of])
    # Where each candidate's edges lie is measured once, however many pairs it is in.
    uniq, back = np.unique(side_of, return_inverse=True)
    where, sign = _edge_place_and_sign(lay.outline[uniq], lay.normals[uniq], lay.evidence)
    seen &= _straight_one_sign(where[back], sign[back], seen)
    n_inside = inside.reshape(len(side_of), 4, -1).sum(axis=2)
    n_seen = seen.reshape(len(side_of), 4, -1).sum(axis=2)
    out: npt.NDArray[np.bool_] = np.any(
        (n_seen >= SHOW_THROUGH_MIN) & (n_seen >= SHOW_THROUGH_SHARE * n_inside), axis=1
    )
    return out


def _edge_place_and_sign(
    pts: FloatArray, normals: FloatArray, evidence: _EdgeEvidence
) -> tuple[FloatArray, FloatArray]:
    """Per outline sample (N, S): where across its side (px, along the normal) the strongest edge
    running its way lies, and which way the colour changes there (+1 / -1)."""
    offsets = np.arange(-1.5, 1.51, 0.25)
    strength = np.stack([evidence.across_strength(pts + o * normals, normals) for o in offsets])
    where: FloatArray = offsets[np.argmax(strength, axis=0)]
    g = _colours_at(evidence.g, pts + where[..., None] * normals)
    sign: FloatArray = np.sign(g[..., 0] * normals[..., 0] + g[..., 1] * normals[..., 1])
    return where, sign


def _straight_one_sign(where: FloatArray, sign: FloatArray, seen: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Outline samples (N, 4 * per side) whose edge (``_edge_place_and_sign``) lies on one straight line
    with the other ``seen`` samples of their side, and changes colour the same way as most of them.

    A card's side is one straight edge of its border's colour. A printed
    stripe crossing the side at a slant is found at offsets that sweep back
    and forth; the line between printed checks changes sign from check to
    check."""
    n = len(where)
    where, sign = where.reshape(n, 4, -1), sign.reshape(n, 4, -1)
    m = seen.reshape(n, 4, -1)
    t = np.linspace(0.0, 1.0, where.shape[2])[None, None]

    def line_residual(keep: npt.NDArray[np.bool_]) -> FloatArray:
        """|offset - its least-squares line in t| per sample, the line fitted on ``keep`` of each side."""
        w = keep.astype(np.float64)
        s0, st, stt = w.sum(axis=2), (w * t).sum(axis=2), (w * t * t).sum(axis=2)
        sy, sty = (w * where).sum(axis=2), (w * t * where).sum(axis=2)
        det = s0 * stt - st * st
        slope = np.where(np.abs(det) > 1e-9, (s0 * sty - st * sy) / np.where(np.abs(det) > 1e-9, det, 1.0), 0.0)
        icpt = (sy - slope * st) / np.maximum(s0, 1.0)
        out: FloatArray = np.abs(where - (slope[..., None] * t + icpt[..., None]))
        return out

    # Fitted once on every seen sample, then again without the worst half (a stray edge pulls the line).
    resid = line_residual(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sides with nothing seen
        typical = np.nanmedian(np.where(m, resid, np.nan), axis=2, keepdims=True)
    resid = line_residual(m & (resid <= np.maximum(STRAIGHT_TOLERANCE_PX, np.nan_to_num(typical))))
    ok = m & (resid <= STRAIGHT_TOLERANCE_PX)
    major = np.where((sign * ok).sum(axis=2, keepdims=True) >= 0, 1.0, -1.0)
    out: npt.NDArray[np.bool_] = (ok & (sign == major)).reshape(n, -1)
    return out
