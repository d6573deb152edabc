"""How a terrain piece relates to a shot: between shooter and target, touching or holding the target.

Measured bases carry a sigma. Each relation also comes as a verdict that says *too close to call* when
moving the bases within ``SIGHT_SIGMAS`` of their sigma could flip it, tested with the bases' envelopes
as in geometry/sight.py: a base shrunk by its margin lies inside it wherever it moves, a grown one holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from geometry.distance import polygon_distance_in
from geometry.measure import EXACT_TOLERANCE_IN, Verdict
from geometry.shapes import Footprints
from geometry.sight import envelopes

_OUTLINE_SAMPLES = 64
_MIN_AREA_IN2 = 1e-9


@dataclass(frozen=True)
class CoverRelation:
    """One terrain piece against one shooter/target pair."""

    between: bool  # the piece lies in the corridor from shooter to target (not just under the shooter)
    touching: bool  # the target's base touches or overlaps the piece
    within: bool  # the target's base is wholly within the piece
    distance_in: float  # target base to piece, edge to edge
    # The same three as verdicts: too close to call where the bases' sigma could flip them (module docstring).
    between_verdict: Verdict = Verdict.NO
    touching_verdict: Verdict = Verdict.NO
    within_verdict: Verdict = Verdict.NO


def _gap(shooter: Footprints, target: Footprints, hull_of: tuple[Footprints, Footprints]) -> shapely.Geometry:
    """The convex hull of ``hull_of``'s two bases less ``shooter`` and ``target``: the open corridor."""
    hull = shapely.union(*(f.polygons(_OUTLINE_SAMPLES)[0] for f in hull_of)).convex_hull
    return hull.difference(shapely.union(shooter.polygons(_OUTLINE_SAMPLES)[0], target.polygons(_OUTLINE_SAMPLES)[0]))


def within_verdict(target: Footprints, polygon: shapely.Polygon) -> Verdict:
    """Is ``target[0]``'s base wholly within the piece: too close to call where its sigma could flip it."""
    if target.sigma_in[0] == 0:
        return _three_way(*(2 * [_within(target, polygon)]))
    small, big = envelopes(target)
    return _three_way(_within(big, polygon), _within(small, polygon))


def touching_verdict(target: Footprints, polygon: shapely.Polygon) -> Verdict:
    """Does ``target[0]``'s base touch or overlap the piece: too close to call where its sigma could flip it.
    The one relation that needs no shooter, so a rule that asks only this skips the corridor's geometry."""
    if target.sigma_in[0] == 0:
        return _three_way(*(2 * [bool(polygon_distance_in(target, polygon)[0] <= EXACT_TOLERANCE_IN)]))
    small, big = envelopes(target)
    return _three_way(
        bool(polygon_distance_in(small, polygon)[0] <= EXACT_TOLERANCE_IN),
        bool(polygon_distance_in(big, polygon)[0] <= EXACT_TOLERANCE_IN),
    )


def _within(target: Footprints, polygon: shapely.Polygon) -> bool:
    outline = target.boundary_points(_OUTLINE_SAMPLES)[0]
    inside = shapely.contains_xy(polygon, outline[:, 0], outline[:, 1]) | (
        shapely.distance(shapely.points(outline), polygon.exterior) <= EXACT_TOLERANCE_IN
    )
    return bool(np.all(inside)) and bool(shapely.contains_xy(polygon, target.x_in[0], target.y_in[0]))


def _three_way(surely: bool, maybe: bool) -> Verdict:
    return Verdict.YES if surely else Verdict.TOO_CLOSE if maybe else Verdict.NO


def cover_relation(shooter: Footprints, target: Footprints, polygon: shapely.Polygon) -> CoverRelation:
    """Relation of one terrain polygon to a shot from ``shooter[0]`` at ``target[0]``."""
    if len(shooter) != 1 or len(target) != 1:
        raise ValueError("cover_relation takes one shooter and one target footprint")
    # The open corridor between the bases: terrain under either base alone is not "between".
    between = bool(_gap(shooter, target, (shooter, target)).intersection(polygon).area > _MIN_AREA_IN2)
    distance_in = float(polygon_distance_in(target, polygon)[0])
    within = _within(target, polygon)
    touching = distance_in <= EXACT_TOLERANCE_IN
    verdicts = [_three_way(between, between), _three_way(touching, touching), _three_way(within, within)]
    if shooter.sigma_in[0] > 0 or target.sigma_in[0] > 0:
        small_s, big_s = envelopes(shooter)
        small_t, big_t = envelopes(target)
        # Surely in the corridor: inside the small bases' hull and outside the big bases; maybe: the other way.
        surely_gap = _gap(big_s, big_t, (small_s, small_t))
        maybe_gap = _gap(small_s, small_t, (big_s, big_t))
        verdicts = [
            _three_way(
                surely_gap.intersection(polygon).area > _MIN_AREA_IN2,
                maybe_gap.intersection(polygon).area > _MIN_AREA_IN2,
            ),
            touching_verdict(target, polygon),
            within_verdict(target, polygon),
        ]
    return CoverRelation(between, touching, within, distance_in, *verdicts)
