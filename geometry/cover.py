"""How a terrain piece relates to a shot: between shooter and target, touching or holding the target."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from geometry.distance import polygon_distance_in
from geometry.measure import EXACT_TOLERANCE_IN
from geometry.shapes import Footprints

_OUTLINE_SAMPLES = 64
_MIN_AREA_IN2 = 1e-9


@dataclass(frozen=True)
class CoverRelation:
    """One terrain piece against one shooter/target pair."""

    between: bool  # the piece lies in the corridor from shooter to target (not just under the shooter)
    touching: bool  # the target's base touches or overlaps the piece
    within: bool  # the target's base is wholly within the piece
    distance_in: float  # target base to piece, edge to edge


def cover_relation(shooter: Footprints, target: Footprints, polygon: shapely.Polygon) -> CoverRelation:
    """Relation of one terrain polygon to a shot from ``shooter[0]`` at ``target[0]``."""
    if len(shooter) != 1 or len(target) != 1:
        raise ValueError("cover_relation takes one shooter and one target footprint")
    shooter_poly = shooter.polygons(_OUTLINE_SAMPLES)[0]
    target_poly = target.polygons(_OUTLINE_SAMPLES)[0]
    corridor = shapely.union(shooter_poly, target_poly).convex_hull
    # The open corridor between the bases: terrain under either base alone is not "between".
    gap = corridor.difference(shapely.union(shooter_poly, target_poly))
    between = bool(gap.intersection(polygon).area > _MIN_AREA_IN2)
    distance_in = float(polygon_distance_in(target, polygon)[0])
    outline = target.boundary_points(_OUTLINE_SAMPLES)[0]
    inside = shapely.contains_xy(polygon, outline[:, 0], outline[:, 1]) | (
        shapely.distance(shapely.points(outline), polygon.exterior) <= EXACT_TOLERANCE_IN
    )
    within = bool(np.all(inside)) and bool(shapely.contains_xy(polygon, target.x_in[0], target.y_in[0]))
    return CoverRelation(
        between=between,
        touching=distance_in <= EXACT_TOLERANCE_IN,
        within=within,
        distance_in=distance_in,
    )
