"""Grinding-Annihilation's five Warfield Scenarios: deployment zones, objective
placement and Tactical Point scoring (grinding-annihilation.txt > Warfield Scenarios).

Table coordinates: x across the width, y along the depth; a scenario's "short
edges" are the table's shorter sides. ``scenario.attacker`` (a player id) takes
the zone at the low-coordinate end; the other player the opposite one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import shapely

from rules.common import QuestionError
from tablesight.scene import Scene

PLACEMENT_TOLERANCE_IN = 0.5  # a marker placed by hand counts as on its spot within this


@dataclass(frozen=True)
class Spec:
    name: str
    title: str
    min_table_in: tuple[float, float]  # short side, long side
    tp_cap_per_round: int | None  # objectives' TP per round; None: no cap
    first_scoring_round: int
    zones: Callable[[Scene, str, str], dict[str, shapely.Polygon]]
    spots: Callable[[Scene], list[tuple[float, float]]] | None  # fixed marker positions, if the scenario sets them
    rule: str


def _long_short(scene: Scene) -> tuple[float, float, bool]:
    """(short side length, long side length, whether the long side runs along y)."""
    w, d = scene.width_in, scene.depth_in
    return min(w, d), max(w, d), d >= w


def _strips(
    scene: Scene, attacker: str, other: str, depth: float, margin: float = 0.0, along_long_edges: bool = False
) -> dict[str, shapely.Polygon]:
    """Zones ``depth`` deep at both ends of the long axis (or along both long edges)."""
    w, d = scene.width_in, scene.depth_in
    _, _, long_is_y = _long_short(scene)
    at_short_ends = not along_long_edges
    if long_is_y == at_short_ends:  # zones at y = 0 and y = d
        near, far = shapely.box(margin, 0, w - margin, depth), shapely.box(margin, d - depth, w - margin, d)
    else:  # zones at x = 0 and x = w
        near, far = shapely.box(0, margin, depth, d - margin), shapely.box(w - depth, margin, w, d - margin)
    return {attacker: near, other: far}


def _along(scene: Scene, offset_long: float, offset_short: float) -> tuple[float, float]:
    """A point ``offset_long`` along the long axis and ``offset_short`` across it."""
    _, _, long_is_y = _long_short(scene)
    return (offset_short, offset_long) if long_is_y else (offset_long, offset_short)


def _exstintech_spots(scene: Scene) -> list[tuple[float, float]]:
    short, long, _ = _long_short(scene)
    # Centre; and 5" outside each 10" zone (along the long edges), 10" from each short edge.
    spots = [_along(scene, long / 2, short / 2)]
    for across in (10.0 + 5.0, short - 10.0 - 5.0):
        for along in (10.0, long - 10.0):
            spots.append(_along(scene, along, across))
    return spots


def _scientist_spots(scene: Scene) -> list[tuple[float, float]]:
    short, long, _ = _long_short(scene)
    return [_along(scene, long / 2, 5.0), _along(scene, long / 2, short / 2), _along(scene, long / 2, short - 5.0)]


def _no_mans_land_spots(scene: Scene) -> list[tuple[float, float]]:
    short, long, _ = _long_short(scene)
    return [
        _along(scene, along, across) for along in (20.0 + 8.0, long - 20.0 - 8.0) for across in (11.0, short - 11.0)
    ]


def _break_through_zones(scene: Scene, attacker: str, other: str) -> dict[str, shapely.Polygon]:
    # Attacker: 20" from its short edge. Defender: from 20" off the far short edge, 20" deep (its First Defence Line).
    short, long, long_is_y = _long_short(scene)
    near = _along(scene, 0, 0), _along(scene, 20.0, short)
    first = _along(scene, long - 40.0, 0), _along(scene, long - 20.0, short)
    return {attacker: _box(*near), other: _box(*first)}


def second_defence_line(scene: Scene) -> shapely.Polygon:
    """Break Through: the defender's Second Defence Line, from its zone to its own short edge."""
    short, long, _ = _long_short(scene)
    return _box(_along(scene, long - 20.0, 0), _along(scene, long, short))


def _box(a: tuple[float, float], b: tuple[float, float]) -> shapely.Polygon:
    return shapely.box(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))


SCENARIOS: dict[str, Spec] = {
    "war-of-control": Spec(
        "war-of-control",
        "War of Control",
        (44, 60),
        3,
        2,
        lambda s, a, o: _strips(s, a, o, 20.0),
        None,
        "War of Control > Capture and Control; Create The Warfield",
    ),
    "exstintech-recovery": Spec(
        "exstintech-recovery",
        "Exstintech Recovery",
        (40, 60),
        None,
        2,
        lambda s, a, o: _strips(s, a, o, 10.0, along_long_edges=True),
        _exstintech_spots,
        "Exstintech Recovery > Exstintech Caches; Create The Warfield",
    ),
    "scientist-capture": Spec(
        "scientist-capture",
        "Scientist Capture",
        (44, 66),
        None,
        1,
        lambda s, a, o: _strips(s, a, o, 15.0),
        _scientist_spots,
        "Scientist Capture > Scientist Capture; Create The Warfield",
    ),
    "no-mans-land": Spec(
        "no-mans-land",
        "No Man's Land",
        (44, 90),
        3,
        1,
        lambda s, a, o: _strips(s, a, o, 20.0, margin=5.0),
        _no_mans_land_spots,
        "No Man's Land > Over the Top; Blitzkrieg; Create The Warfield",
    ),
    "break-through": Spec(
        "break-through",
        "Break Through",
        (44, 90),
        None,
        99,
        _break_through_zones,
        None,
        "Break Through > Break the Line; Create The Warfield",
    ),
}


def scenario_of(scene: Scene) -> Spec:
    name = scene.extra("scenario", {}).get("name", "war-of-control")
    if name not in SCENARIOS:
        raise QuestionError(f"{scene.source}: unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    return SCENARIOS[name]


def deployment_zones(scene: Scene) -> dict[str, shapely.Polygon]:
    scenario = scene.extra("scenario", {})
    if scenario.get("deployment_zones"):
        return {p: shapely.Polygon(poly) for p, poly in scenario["deployment_zones"].items()}
    players = [p.id for p in scene.players]
    if len(players) != 2:
        raise QuestionError(f"{scene.source}: give scenario.deployment_zones (the default zones need two players)")
    attacker = scenario.get("attacker", players[0])
    if attacker not in players:
        raise QuestionError(f"{scene.source}: scenario.attacker {attacker!r} is not a player")
    other = players[1] if attacker == players[0] else players[0]
    return scenario_of(scene).zones(scene, attacker, other)
