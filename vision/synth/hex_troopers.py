"""A rendered hex-mat table played as Onefinity is: one trooper to a hex, each placed by hand near its hex's centre.

``render_table`` scatters models anywhere, as on an open table. On a hex mat players put each trooper in a
hex, so the rulings benchmark (benchmarks/eval_rulings.py) moves every model of the same seeded table into
the hex nearest it (``models_at``) and takes off the bases a hex cannot hold (``lifted``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import shapely

from geometry.hexgrid import HexGrid
from geometry.shapes import base_semi_axes_in
from vision.synth.table import HEX_MATS, plan_table

TROOPER_BASES = (
    "25",
    "28.5",
    "32",
    "40",
)  # what one hex of the kit's 1.5" mat holds (40 mm: just, beside a smaller one)
PLACED_WITHIN_IN = 0.1  # how far from the hex's centre a hand puts a trooper
CLEAR_IN = 0.02  # the least gap left between two bases


def troopers_in_hexes(
    seed: int, game: str = "onefinity", hard: str | None = None
) -> tuple[dict[str, tuple[float, float]], frozenset[str]]:
    """For ``render_table(seed, game, hard=hard, models_at=..., lifted=...)``: each model that fits a hex moved
    near the centre of the free hex nearest it (not onto terrain it did not stand on), and the rest lifted."""
    spec = HEX_MATS[game]
    grid = HexGrid(float(spec["width_in"]), spec["orientation"], float(spec["origin_x_in"]), float(spec["origin_y_in"]))
    plan = plan_table(np.random.default_rng(seed), game, hard)
    width_in, depth_in = plan.table
    pieces = [(t["kind"], shapely.Polygon(t["polygon"])) for t in plan.terrain]
    hand = np.random.default_rng([seed, 77])  # a stream of its own: the table is drawn as without it
    taken: set[tuple[int, int]] = set()
    placed: list[tuple[float, float, float]] = []  # x, y, radius of the troopers put down so far
    models_at: dict[str, tuple[float, float]] = {}
    lifted: set[str] = set()
    for m in plan.models:
        spot = _spot(m, grid, hand, taken, placed, pieces, width_in, depth_in) if m["base"] in TROOPER_BASES else None
        if spot is None:
            lifted.add(m["id"])
            continue
        q, r, x, y = spot
        taken.add((q, r))
        placed.append((x, y, base_semi_axes_in(m["base"])[0]))
        models_at[m["id"]] = (x, y)
    return models_at, frozenset(lifted)


def _spot(
    model: dict[str, Any],
    grid: HexGrid,
    hand: np.random.Generator,
    taken: set[tuple[int, int]],
    placed: list[tuple[float, float, float]],
    pieces: list[tuple[str, shapely.Polygon]],
    width_in: float,
    depth_in: float,
) -> tuple[int, int, float, float] | None:
    """The free hex nearest the model that holds it, and where in it the hand puts it (None: none near)."""
    radius_in = base_semi_axes_in(model["base"])[0]
    q0, r0 = (int(v[0]) for v in grid.to_hex([model["x"]], [model["y"]]))
    was_on = {
        k for k, (_, p) in enumerate(pieces) if p.intersects(shapely.Point(model["x"], model["y"]).buffer(radius_in))
    }
    near = [(q0 + dq, r0 + dr) for dq in (-1, 0, 1) for dr in (-1, 0, 1) if abs(dq + dr) <= 1]  # it and 6 round it
    cx, cy = grid.to_table([h[0] for h in near], [h[1] for h in near])
    angle, reach = hand.uniform(0, 2 * math.pi), PLACED_WITHIN_IN * math.sqrt(hand.uniform())
    for k in np.argsort(np.hypot(cx - model["x"], cy - model["y"]), kind="stable"):
        x, y = float(cx[k]) + reach * math.cos(angle), float(cy[k]) + reach * math.sin(angle)
        footprint = shapely.Point(x, y).buffer(radius_in)
        if (
            near[k] in taken
            or not (radius_in < x < width_in - radius_in and radius_in < y < depth_in - radius_in)
            or any(math.hypot(x - px, y - py) < radius_in + pr + CLEAR_IN for px, py, pr in placed)
            or any(
                _blocks(kind, p, footprint) for j, (kind, p) in enumerate(pieces) if kind == "hill" or j not in was_on
            )
        ):
            continue
        return near[k][0], near[k][1], round(x, 4), round(y, 4)
    return None


def _blocks(kind: str, piece: shapely.Polygon, footprint: shapely.Polygon) -> bool:
    """Whether a base may not stand there: across a hill's edge (it stands wholly on a hill or off it, as the
    renderer and the analysis both take it), or on any other piece."""
    if kind == "hill":
        return piece.intersects(footprint) and not piece.contains(footprint)
    return piece.intersects(footprint)
