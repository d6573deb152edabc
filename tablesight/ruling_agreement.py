"""Do the rulings from an analysed photo agree with the rulings from the true scene?

The players confirm who is who (units, base sizes) as the live referee asks them
to; the camera measures where everything is and how sure it is. So the scene
judged here is the true roster with the *measured* positions and sigmas of the
pieces that were found. A ruling agrees when its verdict and answer are the
truth's, or when it says *too close to call*; it is wrong otherwise. Rulings
about a unit with a model the camera missed (or an objective such a model is
near) are counted apart: they cannot be judged from the photo.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from geometry.measure import Verdict
from rules.ruling import Ruling
from rules.table_facts import check
from tablesight.scene import Scene

NEAR_OBJECTIVE_IN = 6.0  # a missed model this close to an objective may change who holds it
FOCAL_POINT_PROFILE = {"type": "Threshold", "move": 5, "attack": 4, "hit": 4, "defense": 4, "hp": 8, "resolve": 3}


def with_focal_point_roster(scene: dict[str, Any]) -> dict[str, Any]:
    """A rendered table's units made playable Focal Point formations (every other one shoots: Ranged(12))."""
    units = [
        {**u, "profile": dict(FOCAL_POINT_PROFILE), "state": {"hp": 8}, "keywords": ["Ranged(12)"] if k % 2 else []}
        for k, u in enumerate(scene["units"])
    ]
    return {**scene, "game": "focal-point", "units": units}


# The rulebooks' own examples: Miniature Skirmish > Weapons ("a 'melee' weapon has a range of 0-1 inches and a
# 'ranged' weapon has a range of 1-12 inches"); Onefinity > Shooting (combi rifle, fire power by hex range).
SKIRMISH_PROFILE = {
    "speed": 3,
    "move": 5,
    "skill": 4,
    "defense": 5,
    "health": 3,
    "actions": 2,
    "weapons": [
        {"name": "blade", "range": [0, 1], "attacks": 3, "damage": 1},
        {"name": "rifle", "range": [1, 12], "attacks": 2, "damage": 1},
    ],
}
ONEFINITY_PROFILE = {
    "type": "light infantry",
    "armor": 1,
    "weapons": [{"name": "combi rifle", "fire_power": [[2, 1], [5, 3], [8, 1]]}],
}


def with_trooper_roster(scene: dict[str, Any], game: str) -> dict[str, Any]:
    """A rendered table played as ``game`` ('miniature-skirmish' or 'onefinity'), where every miniature acts
    alone: each model becomes a unit of its own (``<model id>t``) for the player of the unit it was drawn in."""
    profile = {"miniature-skirmish": SKIRMISH_PROFILE, "onefinity": ONEFINITY_PROFILE}[game]
    player_of = {u["id"]: u["player"] for u in scene["units"]}
    units = [
        {"id": f"{m['id']}t", "player": player_of[m["unit"]], "name": m["id"], "profile": profile, "state": {}}
        for m in scene["models"]
    ]
    models = [{**m, "unit": f"{m['id']}t"} for m in scene["models"]]
    return {**scene, "game": game, "units": units, "models": models, "first_player": "red"}


def with_roster(scene: dict[str, Any], game: str) -> dict[str, Any]:
    """A rendered table's truth made playable as ``game``: profiles where its rulings need them
    (Grinding-Annihilation's cohesion, threat range and objectives need none)."""
    if game == "focal-point":
        return with_focal_point_roster(scene)
    if game in ("miniature-skirmish", "onefinity"):
        return with_trooper_roster(scene, game)
    return {**scene, "game": game}


@dataclass
class Agreement:
    agree: int = 0
    too_close: int = 0
    wrong: list[tuple[str, str]] = field(default_factory=list)  # (truth's ruling, the photo's)
    not_judged: int = 0  # about a piece the camera missed
    missed_models: list[str] = field(default_factory=list)

    @property
    def judged(self) -> int:
        return self.agree + self.too_close + len(self.wrong)


def _key(ruling: Ruling) -> str:
    return ruling.question.split("?")[0]


def measured_scene(
    truth: dict[str, Any],
    found: dict[str, Any],
    model_pairs: list[tuple[int, int]],
    objective_pairs: list[tuple[int, int]],
    found_sizes: bool = False,
) -> dict[str, Any]:
    """The true roster with the found pieces where the camera measured them (``pairs``: truth index, found index),
    on the hex grid the camera found on the mat, if it found one.
    ``found_sizes``: each model on the base the camera read (the scene as analysed, before players confirm it),
    not the roster's."""
    models = []
    for i, j in model_pairs:
        t, f = truth["models"][i], found["models"][j]
        moved = {k: f[k] for k in ("x", "y", "z", "sigma_in")}
        if found_sizes:  # the read size, and its doubt
            moved["base"] = f["base"]
            moved["base_sigma_in"] = f.get("base_sigma_in", 0.0)
        if "x" in moved.get("base", t["base"]):  # an oval's facing is measured too
            moved["facing_deg"] = f["facing_deg"]
        models.append({**t, **moved})
    objectives = [
        {**truth["objectives"][i], **{k: found["objectives"][j][k] for k in ("x", "y", "sigma_in")}}
        for i, j in objective_pairs
    ]
    # The mat's hex grid as the camera found it (a game played in hexes); where it found none, the players give it.
    out = {**truth, "models": models, "objectives": objectives, "measurement": found["measurement"]}
    if "hex" in found.get("table", {}):
        out["table"] = {**truth["table"], "hex": found["table"]["hex"]}
    return out


def cover_rulings(scene: Scene) -> list[Ruling]:
    """Does each unit have cover from each enemy unit (the games that rule on cover)."""
    from rules.systems import SYSTEMS

    system = SYSTEMS[scene.game]() if scene.game in SYSTEMS else None
    if system is None or not hasattr(system, "cover"):
        return []
    return [
        system.cover(scene, target.id, attacker.id)
        for target in scene.units
        for attacker in scene.units
        if target.player != attacker.player and scene.models_of(target.id) and scene.models_of(attacker.id)
    ]


def _rulings(scene: Scene, with_cover: bool) -> dict[str, Ruling]:
    rulings = list(check(scene).rulings) + (cover_rulings(scene) if with_cover else [])
    return {_key(r): r for r in rulings}


def compare(
    truth: dict[str, Any],
    found: dict[str, Any],
    model_pairs: list[tuple[int, int]],
    objective_pairs: list[tuple[int, int]],
    found_sizes: bool = False,
    with_cover: bool = False,
) -> Agreement:
    """Every ruling of ``truth``'s game, judged on the truth and on the measured scene (``found_sizes``: see
    ``measured_scene``; ``with_cover``: cover from every enemy unit too)."""
    result = Agreement()
    seen = {i for i, _ in model_pairs}
    missed = [m for k, m in enumerate(truth["models"]) if k not in seen]
    result.missed_models = [m["id"] for m in missed]
    blind_units = {m["unit"] for m in missed}
    blind_objectives = {
        o["id"]
        for o in truth["objectives"]
        if any(math.hypot(o["x"] - m["x"], o["y"] - m["y"]) < NEAR_OBJECTIVE_IN for m in missed)
    }
    found_objectives = {truth["objectives"][i]["id"] for i, _ in objective_pairs}
    blind_objectives |= {o["id"] for o in truth["objectives"]} - found_objectives
    measured = measured_scene(truth, found, model_pairs, objective_pairs, found_sizes)
    true_rulings = _rulings(Scene.from_dict(truth, "truth"), with_cover)
    photo_rulings = _rulings(Scene.from_dict(measured, "measured"), with_cover)
    for key in sorted(set(true_rulings) | set(photo_rulings)):
        t, p = true_rulings.get(key), photo_rulings.get(key)
        about = set((t or p).subject)  # type: ignore[union-attr]
        if about & (blind_units | blind_objectives):
            result.not_judged += 1
        elif p is not None and p.verdict is Verdict.TOO_CLOSE:
            result.too_close += 1
        elif t is not None and p is not None and t.verdict == p.verdict and t.question == p.question:
            result.agree += 1
        else:
            result.wrong.append((_describe(t), _describe(p)))
    return result


def _describe(ruling: Ruling | None) -> str:
    if ruling is None:
        return "(no such ruling)"
    numbers = "; ".join(f"{m.name} {m.value_in:.3f} vs {m.threshold_in}" for m in ruling.measurements[:3])
    return f"{ruling.verdict.value}: {ruling.question} {numbers}".strip()
