"""How far a base's edge may lie from where its read size puts it, when the size was read unsurely.

Every ruling measures from base edges, so a base read one size small stands a whole step of radius apart from
its neighbours: 40 mm read as 25 mm moves its edge 0.3". A size the base refiner read with probability 0.53
is no fact to rule on, so each round base's edge gets a sigma from the refiner's own probabilities: the root of
the expected squared radius error, were the base truly any of the other sizes. A size read surely gives
(almost) nothing. Rulings combine it with the centre's sigma (``tablesight.scene.Scene.footprints``), so a
ruling that hangs on an unsure size says *too close to call* instead of guessing (docs/vision.md, session 46).
The sizes are few and far apart, so the root of the mean square can leave a size the refiner still gives some
chance beyond the rulings' 2 sigma: 25 mm at P 0.05 under a 32 mm read is 0.14" off, against 2 x 0.05". So the
sigma is also at least half the way to the furthest size given TAIL_P or more (docs/vision.md, session 52).
"""

from __future__ import annotations

from math import erfc, sqrt
from typing import Any

import numpy as np
import numpy.typing as npt

from geometry.measure import DEFAULT_SIGMAS
from geometry.shapes import KNOWN_BASES, base_semi_axes_in
from vision.detections import ROUND_SIZES

RADII_IN = np.array([base_semi_axes_in(s)[0] for s in ROUND_SIZES])
# The standard sizes of each shape (is it an oval?), smallest first: a size's steps either way (size_step_sigma_in).
SIZES_BY_SHAPE = {
    oval: sorted((s for s in KNOWN_BASES if ("x" in s) == oval), key=lambda s: base_semi_axes_in(s)[0])
    for oval in (False, True)
}
# A size given this chance or more lies within DEFAULT_SIGMAS of the edge the rulings allow: the chance a normal
# error passes 2 sigma on one side (2.3 %).
TAIL_P = 0.5 * erfc(DEFAULT_SIGMAS / sqrt(2))
EDGE_SIGMA_SHOWN_IN = 0.001  # less doubt than this is left out of the scene: a size read surely
# Doubt worth a player's look (0.031": 25 mm against 28.5 mm at 4 to 1): named among what the players confirm
# at deployment (``unsure_sizes``, through vision.analyze.to_confirm); the rulings already widen for it.
UNSURE_SIZE_IN = 0.03


def base_edge_sigma_in(size_p: npt.ArrayLike, sizes: list[str]) -> npt.NDArray[np.float64]:
    """(N,) sigma of each base's edge, in inches, from the refiner's size probabilities ``size_p`` (N,
    len(ROUND_SIZES); NaN rows: not read by it) about the size it was given (``sizes``). Ovals, and bases the
    refiner did not read, get 0: nothing is known of their doubt. Each is the root of the expected squared radius
    error, and at least the furthest size given TAIL_P or more over DEFAULT_SIGMAS."""
    p = np.asarray(size_p, dtype=np.float64).reshape(len(sizes), len(ROUND_SIZES))
    out = np.zeros(len(sizes))
    for k, size in enumerate(sizes):
        if size not in ROUND_SIZES or np.isnan(p[k]).any():
            continue
        chosen_in = RADII_IN[ROUND_SIZES.index(size)]
        off_in = np.abs(RADII_IN - chosen_in)
        rms_in = float(np.sqrt(np.sum(p[k] * off_in**2)))  # each row sums to 1 (softmax)
        out[k] = max(rms_in, float(off_in[p[k] >= TAIL_P].max(initial=0.0)) / DEFAULT_SIGMAS)
    return out


def other_shape_sigma_in(
    sizes: list[str], other_sizes: npt.ArrayLike, other_shape_in: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(centre sigma, edge sigma), inches, of each base whose place was also read as the other shape (a round base
    and an oval: ``Detections.other_size``, ``other_shape_in``), 0 elsewhere: each puts the other reading within
    the rulings' DEFAULT_SIGMAS. Its centre lies ``other_shape_in`` away; its edge, on the worst side, that plus
    the most their semi-axes differ, so the edge's sigma holds both (rulings add it to the centre's)."""
    other = [str(o) for o in np.asarray(other_sizes).reshape(-1)]
    distance_in = np.asarray(other_shape_in, np.float64).reshape(-1)
    centre, edge = np.zeros(len(sizes)), np.zeros(len(sizes))
    for k, (size, alt) in enumerate(zip(sizes, other, strict=True)):
        if not alt:
            continue
        mine, theirs = base_semi_axes_in(size), base_semi_axes_in(alt)
        centre[k] = distance_in[k] / DEFAULT_SIGMAS
        edge[k] = (distance_in[k] + max(abs(m - t) for m in mine for t in theirs)) / DEFAULT_SIGMAS
    return centre, edge


def size_step_sigma_in(sizes: list[str]) -> npt.NDArray[np.float64]:
    """(N,) edge sigma, inches, that puts the standard sizes next to each of ``sizes`` (a step smaller and a step
    larger, of its shape: round or oval) within the rulings' DEFAULT_SIGMAS: for a base read from only part of
    it, whose size may be one step off either way."""
    out = np.zeros(len(sizes))
    for k, size in enumerate(sizes):
        same_shape = SIZES_BY_SHAPE["x" in size]
        if size not in same_shape:
            continue
        at = same_shape.index(size)
        mine = base_semi_axes_in(size)
        steps = [
            max(abs(m - t) for m, t in zip(mine, base_semi_axes_in(same_shape[j]), strict=True))
            for j in (at - 1, at + 1)
            if 0 <= j < len(same_shape)
        ]
        out[k] = max(steps, default=0.0) / DEFAULT_SIGMAS
    return out


def unsure_sizes(models: list[dict[str, Any]], least_in: float = UNSURE_SIZE_IN) -> str | None:
    """One line naming the bases whose size was read unsurely (``base_sigma_in`` at least ``least_in``), most
    doubtful first; None when there are none."""
    unsure = sorted(
        (m for m in models if float(m.get("base_sigma_in", 0.0)) >= least_in),
        key=lambda m: -float(m["base_sigma_in"]),
    )
    if not unsure:
        return None
    named = ", ".join(
        f'{m["id"]} ({m["base"]} mm{_or_other(m)}, edge +/-{float(m["base_sigma_in"]):.2f}")' for m in unsure
    )
    return f"sizes read unsurely, check these bases (rulings from them allow for it): {named}"


def _or_other(model: dict[str, Any]) -> str:
    """ ", or a 60x35 oval?" for a base whose place was also read as that other shape (``other_base``), else ""."""
    other = str(model.get("other_base", ""))
    if not other:
        return ""
    return f", or a {other} oval?" if "x" in other else f", or a {other} mm round base?"
