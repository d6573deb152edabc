"""The players' deployment for ``watch``: their units, from a scene file, laid over the first frame it reads.

``watch`` has no page to lasso units on, so its tracker knew each player's models only as one lump
(``red-found``) and could not tell which unit moved (docs/live.md, session 63). The players' word comes in
as a scene file: the page's game export (its current scene) or ``analyze --json``'s scene with each model's
unit filled in. Each of its models is matched to the piece the camera found under its base (bases cannot
overlap, so a piece within a model's own base is that model); the model keeps the file's id, unit and base
and the camera's place. A model in the file that the camera missed is placed where the file has it, as the
page does with a model the players add; a piece no model of the file stands on stays in its player's lump.
A file most of whose models stand where the camera found nothing is another deployment's, and is not used.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geometry.shapes import base_semi_axes_in
from tablesight.scene import Scene, SceneError, read_json
from vision.analyze import PLAYERS_MODELS
from vision.live.appearance import Look
from vision.live.identified import IdentifiedScenes

GAME_EXPORT = "tablesight-game/1"  # the page's /api/export.json: the scene is its current_scene


@dataclass(frozen=True)
class Deployed:
    scene: dict[str, Any]  # the first frame's scene, its models named and grouped as the file has them
    not_seen: list[dict[str, Any]]  # the file's models no piece stood on: placed where the file has them
    notes: list[str]  # what the players are told: how much of the file the camera found


def load_deployment(path: str | Path, game: str) -> dict[str, Any]:
    """The scene in ``path`` (a scene file, or the page's game export), checked: a scene of ``game`` that
    assigns models to units of the game. Errors name the file and what is wrong."""
    source = str(path)
    data = read_json(path)
    if isinstance(data, dict) and data.get("format") == GAME_EXPORT:
        data = data.get("current_scene")
        source = f"{source} (current_scene)"
    scene = _scene_of_game(data, source, game, "the deployment")
    units = {u["id"] for u in scene["units"] if not str(u["id"]).endswith(PLAYERS_MODELS)}
    if not any(m["unit"] in units for m in scene["models"]):
        raise SceneError(
            source,
            [("models", f"no model is in a unit of the game (each player's are one '{PLAYERS_MODELS}' lump)")],
        )
    return scene


def load_kept(path: str | Path, game: str) -> dict[str, Any] | None:
    """The game an earlier ``watch --keep`` kept in ``path`` (its last scene: ids, units, each move), checked as
    a scene of ``game``; None where there is no such file yet (the game starts now). Errors name the file."""
    if not Path(path).exists():
        if not Path(path).absolute().parent.is_dir():  # else found only when the first analysed frame is kept
            raise ValueError(f"{path}: cannot keep the game there: no such folder {Path(path).absolute().parent}")
        return None
    return _scene_of_game(read_json(path), str(path), game, "the game kept")


def _scene_of_game(data: Any, source: str, game: str, what: str) -> dict[str, Any]:
    """``data`` checked as a scene (errors name ``source``) of the ``game`` watched."""
    scene = Scene.from_dict(data, source).to_dict()
    if scene["game"] != game:
        raise SceneError(source, [("game", f"{what} is of {scene['game']!r}, the game watched is {game!r}")])
    return scene


def go_on_with(
    identified: IdentifiedScenes,
    found: dict[str, Any],
    kept: dict[str, Any],
    placed: Sequence[str] = (),
    off_table: Sequence[dict[str, Any]] = (),
) -> str:
    """A game kept before a restart (the page's saved scene, ``watch --keep``'s file) and the first frame analysed
    since (``found``): gone on with (``IdentifiedScenes.resume``: its ids on the pieces where its models stand)
    where at least half its models stand on a piece the camera found, else another table's, and not used. What
    the players are told."""
    standing, total = len(found_under(found, kept)), len(kept["models"])
    if standing * 2 < total:
        return (
            f"the game kept has {total} models, {standing} of them where the camera finds a piece: not this "
            "table, so its pieces are named afresh"
        )
    identified.resume(kept, placed, off_table)
    return f"game resumed: {standing} of its {total} models found where they were kept"


def found_under(found: dict[str, Any], deployment: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The ``deployment``'s models the camera found a piece under, by the index of that piece in ``found``'s
    models: the nearest piece within each model's own base, nearest pairs first (bases cannot overlap)."""
    pairs = []
    for j, piece in enumerate(found["models"]):
        for model in deployment["models"]:
            reach_in = base_semi_axes_in(model["base"])[0]  # its own base: no other model's centre lies there
            distance_in = math.dist((piece["x"], piece["y"]), (model["x"], model["y"]))
            if distance_in <= reach_in:
                pairs.append((distance_in, j, model["id"]))
    named: dict[int, dict[str, Any]] = {}
    taken: set[str] = set()
    by_id = {m["id"]: m for m in deployment["models"]}
    for _, j, mid in sorted(pairs):
        if j not in named and mid not in taken:
            named[j] = by_id[mid]
            taken.add(mid)
    return named


def lay_over(found: dict[str, Any], deployment: dict[str, Any]) -> Deployed:
    """``found`` (the first frame analysed) with the ``deployment``'s ids, units and bases on the pieces under
    the deployment's models; the camera's places and sigmas stay."""
    named = found_under(found, deployment)
    taken = {m["id"] for m in named.values()}
    by_id = {m["id"]: m for m in deployment["models"]}
    scene = copy.deepcopy(found)
    models, unnamed = [], []
    for j, piece in enumerate(scene["models"]):
        model = named.get(j)
        if model is None:
            if piece["id"] in by_id:  # the camera's own id is one of the file's: kept apart
                piece["id"] = f"{piece['id']}-seen"
            unnamed.append(piece["id"])
        else:
            piece.update(id=model["id"], unit=model["unit"], base=model["base"])
        models.append(piece)
    scene["models"] = models
    lumps = {m["unit"] for m in models if m["id"] in unnamed}
    scene["units"] = copy.deepcopy(deployment["units"]) + [u for u in found["units"] if u["id"] in lumps]
    players = {p["id"]: p for p in found.get("players", [])} | {p["id"]: p for p in deployment.get("players", [])}
    held = {u["player"] for u in scene["units"]}
    scene["players"] = [copy.deepcopy(p) for pid, p in players.items() if pid in held]
    not_seen = [{**copy.deepcopy(m), "sigma_in": 0.0} for m in deployment["models"] if m["id"] not in taken]
    if len(taken) * 2 < len(by_id):  # a file saved at another deployment (another game, or later in this one)
        return Deployed(
            copy.deepcopy(found),
            [],
            [
                f"deployment: only {len(taken)} of the file's {len(by_id)} models stand where the camera found a "
                "piece: the file is not this deployment's, and is not used (each player's models stay one lump)"
            ],
        )
    notes = [f"deployment: {len(taken)} of the file's {len(by_id)} models found on the table, with their units"]
    if not_seen:
        ids = ", ".join(m["id"] for m in not_seen)
        notes.append(f"deployment: not found by the camera, placed where the file has them: {ids}")
    if unnamed:
        notes.append(f"deployment: pieces on no model of the file, left in their player's models: {', '.join(unnamed)}")
    return Deployed(scene, not_seen, notes)


def deploy(
    identified: IdentifiedScenes,
    found: dict[str, Any],
    deployment: dict[str, Any],
    looks: Sequence[Look | None] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The game's first scene: ``found`` (the first frame analysed) with the players' ``deployment`` laid over it
    and taken as the deployment by ``identified``; the file's models the camera missed are tracked as ones the
    players placed. ``looks``: the figure on each of ``found``'s models (``figure_looks``), in their order.
    Returns the scene and what the players are told."""
    laid = lay_over(found, deployment)  # (its models in found's order)
    first, _ = identified.identify(laid.scene, looks)
    scene = {**first, "models": first["models"] + laid.not_seen}
    identified.take_units(scene)
    return scene, laid.notes
