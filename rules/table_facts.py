"""Scene-level geometry questions: measure two things, line of sight, the at-a-glance check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from geometry.coherency import coherency
from geometry.distance import cross_distance_in, pairwise_distance_in, polygon_distance_in, vertical_gap_in
from geometry.measure import Comparison, Verdict, combine_any, compare_at_most
from geometry.shapes import Footprints
from geometry.sight import SIGHT_SIGMAS, Obstacle, Sight, SightLines
from rules.profiles import GameProfile, profile_for
from rules.ruling import Ruling
from tablesight.scene import Model, Scene

KINDS = ("model", "unit", "objective", "terrain")


class UnknownThingError(KeyError):
    """A reference to a model, unit, objective or terrain piece the scene does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Thing:
    kind: str
    id: str
    label: str
    models: tuple[Model, ...] = ()  # for models and units
    footprints: Footprints | None = None  # for models, units and objectives
    polygon: shapely.Polygon | None = None  # for terrain


def resolve(scene: Scene, ref: str) -> Thing:
    """Find what an id names; ``kind:id`` (e.g. ``unit:wardens``) settles clashes."""
    kind, _, ident = ref.rpartition(":")
    if kind and kind not in KINDS:
        raise UnknownThingError(f"{ref!r}: unknown kind {kind!r} (use one of {', '.join(KINDS)})")
    found: list[Thing] = []
    if kind in ("", "model"):
        found += [Thing("model", m.id, m.id, (m,), scene.footprints([m])) for m in scene.models if m.id == ident]
    if kind in ("", "unit"):
        for unit in scene.units:
            if unit.id == ident:
                members = scene.models_of(unit.id)
                if not members:
                    raise UnknownThingError(f"unit {ident!r} has no models on the table")
                found.append(Thing("unit", unit.id, unit.name, members, scene.footprints(members)))
    if kind in ("", "objective"):
        found += [
            Thing("objective", o.id, f"objective {o.id}", footprints=scene.objective_footprints([o]))
            for o in scene.objectives
            if o.id == ident
        ]
    if kind in ("", "terrain"):
        found += [Thing("terrain", t.id, f"terrain {t.id}", polygon=t.shape) for t in scene.terrain if t.id == ident]
    if not found:
        raise UnknownThingError(
            f"{scene.source}: nothing called {ident!r} (no model, unit, objective or terrain with that id)"
        )
    if len(found) > 1:
        kinds = ", ".join(f"{t.kind}:{t.id}" for t in found)
        raise UnknownThingError(f"{ident!r} is ambiguous in {scene.source}: say which of {kinds}")
    return found[0]


@dataclass(frozen=True)
class Distance:
    a: Thing
    b: Thing
    distance_in: float
    sigma_in: float
    vertical_in: float | None
    closest: tuple[str, str]  # ids of the closest parts (models for units)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": {"kind": self.a.kind, "id": self.a.id},
            "b": {"kind": self.b.kind, "id": self.b.id},
            "distance_in": round(self.distance_in, 6),
            "sigma_in": round(self.sigma_in, 6),
            "vertical_in": None if self.vertical_in is None else round(self.vertical_in, 6),
            "closest": list(self.closest),
        }


def _part_ids(thing: Thing) -> list[str]:
    return [m.id for m in thing.models] if thing.models else [thing.id]


def measure(scene: Scene, a_ref: str, b_ref: str) -> Distance:
    """Edge-to-edge distance; for units, the closest pair of their models."""
    a, b = resolve(scene, a_ref), resolve(scene, b_ref)
    if a.polygon is not None and b.polygon is not None:
        return Distance(a, b, float(a.polygon.distance(b.polygon)), 0.0, None, (a.id, b.id))
    if a.polygon is not None or b.polygon is not None:
        piece, polygon = (b, a.polygon) if a.polygon is not None else (a, b.polygon)
        assert piece.footprints is not None and polygon is not None
        d = polygon_distance_in(piece.footprints, polygon)
        k = int(np.argmin(d))
        part = _part_ids(piece)[k]
        closest = (a.id, part) if a.polygon is not None else (part, b.id)
        return Distance(a, b, float(d[k]), float(piece.footprints.sigma_in[k]), None, closest)
    assert a.footprints is not None and b.footprints is not None
    d = cross_distance_in(a.footprints, b.footprints)
    i, j = np.unravel_index(int(np.argmin(d)), d.shape)
    sigma = float(np.hypot(a.footprints.sigma_in[i], b.footprints.sigma_in[j]))
    vertical = float(vertical_gap_in(a.footprints[[i]], b.footprints[[j]])[0, 0])
    return Distance(a, b, float(d[i, j]), sigma, vertical, (_part_ids(a)[i], _part_ids(b)[j]))


def sight_lines(scene: Scene, profile: GameProfile, models_block: bool = False) -> SightLines:
    obstacles = []
    for piece in scene.terrain:
        mode = profile.sight_mode(piece.kind, piece.traits)
        if mode is not None:
            obstacles.append(Obstacle(piece.id, piece.shape, mode))
    if models_block:
        obstacles += base_obstacles(scene, "model")
    return SightLines(obstacles)


def base_obstacles(scene: Scene, prefix: str) -> list[Obstacle]:
    """Every model's base as an obstacle to sight, in ``scene.models``' order (``prefix:id``; round ones as exact
    discs), carrying its sigma; never an obstacle to its own sight lines."""
    if not scene.models:
        return []
    fp = scene.footprints()
    polygons = fp.polygons(32)
    out = []
    for k, m in enumerate(scene.models):
        sigma = float(fp.sigma_in[k])
        if fp.is_round[k]:
            out.append(Obstacle.round_base(f"{prefix}:{m.id}", m.x, m.y, float(fp.a_in[k]), m.id, sigma))
        else:
            out.append(Obstacle(f"{prefix}:{m.id}", polygons[k], owner=m.id, sigma_in=sigma))
    return out


def sight_doubt(visible: bool) -> str:
    """Why a sight ruling is too close to call (``geometry.sight``: the pieces' sigma could flip it)."""
    change = "hide it" if visible else "open a line of sight"
    return (
        f"Too close to call: moving the models within {SIGHT_SIGMAS:g} sigma of where they were measured "
        f"could {change}."
    )


@dataclass(frozen=True)
class LineOfSight:
    observer: Thing
    target: Thing
    visible: bool
    visible_fraction: float
    blocked_by: tuple[str, ...]
    pairs: tuple[dict[str, Any], ...]  # per observer model / target model
    verdict: Verdict = Verdict.YES  # visible: yes, no, or too close to call (a doubtful pair could flip it)

    def to_json(self) -> dict[str, Any]:
        return {
            "observer": {"kind": self.observer.kind, "id": self.observer.id},
            "target": {"kind": self.target.kind, "id": self.target.id},
            "verdict": self.verdict.value,
            "visible": self.visible,
            "visible_fraction": round(self.visible_fraction, 4),
            "blocked_by": list(self.blocked_by),
            "pairs": list(self.pairs),
        }


def line_of_sight(scene: Scene, observer_ref: str, target_ref: str, models_block: bool = False) -> LineOfSight:
    """Can any part of the target be seen from any part of the observer (models or units)?

    For units: visible if any observer model sees any target model; the visible
    fraction is that of the best-seen target model.
    """
    observer, target = resolve(scene, observer_ref), resolve(scene, target_ref)
    for thing in (observer, target):
        if not thing.models:
            raise UnknownThingError(f"line of sight is between models or units; {thing.kind} {thing.id!r} is neither")
    lines = sight_lines(scene, profile_for(scene.game), models_block)
    grid_i, grid_j = np.meshgrid(np.arange(len(observer.models)), np.arange(len(target.models)), indexing="ij")
    i, j = grid_i.ravel(), grid_j.ravel()
    assert observer.footprints is not None and target.footprints is not None
    results = lines.check(
        observer.footprints[i],
        target.footprints[j],
        [observer.models[k].id for k in i],
        [target.models[k].id for k in j],
    )
    pairs = tuple(
        {
            "observer": observer.models[a].id,
            "target": target.models[b].id,
            "visible": r.visible,
            "verdict": r.verdict.value,
            "visible_fraction": round(r.visible_fraction, 4),
            "blocked_by": list(r.blocked_by),
        }
        for a, b, r in zip(i, j, results, strict=True)
    )
    blocked = sorted({t for r in results for t in r.blocked_by})
    return LineOfSight(
        observer,
        target,
        any(r.visible for r in results),
        max(r.visible_fraction for r in results),
        tuple(blocked),
        pairs,
        sight_verdict(results),
    )


def sight_verdict(results: list[Sight]) -> Verdict:
    """Can any of these pairs see: yes when one surely can, too close to call when one might, else no."""
    if any(r.visible and not r.doubtful for r in results):
        return Verdict.YES
    return Verdict.TOO_CLOSE if any(r.doubtful for r in results) else Verdict.NO


def _fmt(value_in: float) -> str:
    return f'{value_in:.2f}"'


def coherency_rulings(scene: Scene, profile: GameProfile) -> list[Ruling]:
    rule = profile.coherency
    if rule is None:
        return []
    rulings = []
    for unit in scene.units:
        members = scene.models_of(unit.id)
        if not members:
            continue
        fp = scene.footprints(members)
        d = pairwise_distance_in(fp)
        sigma = np.hypot(fp.sigma_in[:, None], fp.sigma_in[None, :])
        vertical = vertical_gap_in(fp, fp) if rule.vertical_limit_in is not None else None
        need = rule.neighbours_needed(len(members))
        report = coherency(d, rule.limit_in, need, sigma, vertical, rule.vertical_limit_in)
        ids = [m.id for m in members]
        measurements = tuple(
            compare_at_most(
                f"{ids[k]} to nearest ({ids[report.nearest[k]]})",
                report.nearest_distance_in[k],
                rule.limit_in,
                float(sigma[k, report.nearest[k]]),
            )
            for k in range(len(members))
            if report.nearest[k] >= 0
        )
        reasons = _coherency_reasons(unit.name, ids, report, rule.limit_in, need, d)
        rulings.append(
            Ruling(
                question=f"Is {unit.name} in coherency?",
                verdict=report.verdict,
                reasons=tuple(reasons),
                measurements=measurements,
                rule=f"{profile.name} > {rule.rule}",
                subject=(unit.id,),
            )
        )
    return rulings


def _coherency_reasons(name: str, ids: list[str], report: Any, limit_in: float, need: int, d: np.ndarray) -> list[str]:
    neighbours = "another model" if need == 1 else f"{need} other models"
    if report.verdict is Verdict.YES:
        if len(ids) == 1:
            return [f"{name} has a single model, which is always in coherency."]
        worst = int(np.argmax(report.nearest_distance_in))
        return [
            f"{name} are in coherency: every model is within {_fmt(limit_in)} of {neighbours} "
            f"and they form one group (largest gap {_fmt(report.nearest_distance_in[worst])}, {ids[worst]})."
        ]
    state = "out of coherency" if report.verdict is Verdict.NO else "too close to call for coherency"
    reasons = []
    for k in report.lacking:
        others = np.argsort(np.where(np.arange(len(ids)) == k, np.inf, d[k]))[:need]
        near = ", ".join(f"{ids[o]} at {_fmt(d[k, o])}" for o in others)
        reasons.append(
            f"{name} are {state}: {ids[k]} has {report.possible_counts[k]} of the {need} models it needs "
            f"within {_fmt(limit_in)} (nearest: {near})."
        )
    prefix = f"{name} are too close to call for coherency: " if report.verdict is Verdict.TOO_CLOSE else ""
    for k in report.uncertain:
        reasons.append(
            f"{prefix}{ids[k]} is {_fmt(report.nearest_distance_in[k])} from {ids[report.nearest[k]]}, "
            f"within measuring error of {_fmt(limit_in)}: too close to call."
        )
    if len(report.groups) > 1:
        groups = "; ".join("(" + ", ".join(ids[i] for i in g) + ")" for g in report.groups)
        reasons.append(f"{name} are split into {len(report.groups)} groups: {groups}.")
    if not reasons:
        reasons.append(f"{name} are {state}.")
    return reasons


def engagement_rulings(scene: Scene, profile: GameProfile) -> list[Ruling]:
    """One ruling per pair of enemy models within (or too close to call for) the engagement distance."""
    if len(scene.models) < 2:
        return []
    fp = scene.footprints()
    d = pairwise_distance_in(fp)
    sigma = np.hypot(fp.sigma_in[:, None], fp.sigma_in[None, :])
    vertical = vertical_gap_in(fp, fp)
    owner = [scene.player_of(m) for m in scene.models]
    rulings = []
    limit = profile.engagement_in
    candidates = np.argwhere(np.triu(d <= limit + 2 * sigma + 1e-6, k=1))
    for i, j in candidates:
        if owner[i] == owner[j]:
            continue
        horizontal = compare_at_most("horizontal distance", float(d[i, j]), limit, float(sigma[i, j]))
        measurements: tuple[Comparison, ...] = (horizontal,)
        verdict = horizontal.verdict
        a, b = scene.models[i], scene.models[j]
        reason = (
            f"{a.id} ({scene.unit(a.unit).name}) is {horizontal.describe()} from {b.id} ({scene.unit(b.unit).name})."
        )
        if profile.engagement_vertical_in is not None:
            vert = compare_at_most("vertical distance", float(vertical[i, j]), profile.engagement_vertical_in)
            measurements += (vert,)
            if vert.verdict is Verdict.NO:
                verdict = Verdict.NO
                reason += f" Vertically they are {vert.describe()} apart."
        if verdict is Verdict.NO:
            continue
        rulings.append(
            Ruling(
                question=f"Is {a.id} within {profile.engagement_name} ({_fmt(limit)}) of {b.id}?",
                verdict=verdict,
                reasons=(reason,),
                measurements=measurements,
                rule=f"{profile.name} > {profile.engagement_rule}",
                subject=(a.id, b.id),
            )
        )
    return rulings


def nearest_enemies(scene: Scene) -> list[dict[str, Any]]:
    """For each unit, the closest enemy model to any of its models."""
    rows = []
    for unit in scene.units:
        mine = scene.models_of(unit.id)
        theirs = tuple(m for m in scene.models if scene.player_of(m) != unit.player)
        if not mine or not theirs:
            continue
        a, b = scene.footprints(mine), scene.footprints(theirs)
        d = cross_distance_in(a, b)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        rows.append(
            {
                "unit": unit.id,
                "model": mine[i].id,
                "enemy_unit": theirs[j].unit,
                "enemy_model": theirs[j].id,
                "distance_in": round(float(d[i, j]), 6),
                "sigma_in": round(float(np.hypot(a.sigma_in[i], b.sigma_in[j])), 6),
            }
        )
    return rows


@dataclass(frozen=True)
class CheckReport:
    scene: Scene
    rulings: tuple[Ruling, ...]
    nearest_enemy: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "scene": self.scene.source,
            "game": self.scene.game,
            "rulings": [r.to_json() for r in self.rulings],
            "nearest_enemy": list(self.nearest_enemy),
        }


def check(scene: Scene) -> CheckReport:
    """Every fact a referee wants at a glance: the game's rulings where tablesight knows
    the game, else the geometry (coherency, engagement)."""
    from rules.systems import SYSTEMS

    if scene.game in SYSTEMS:
        rulings = SYSTEMS[scene.game]().rulings(scene)
    else:
        profile = profile_for(scene.game)
        rulings = coherency_rulings(scene, profile) + engagement_rulings(scene, profile)
    return CheckReport(scene, tuple(rulings), tuple(nearest_enemies(scene)))


__all__ = ["check", "combine_any", "line_of_sight", "measure", "resolve"]
