"""Figures' looks as evidence of which model is which (vision/live/appearance.py, and their weight in
vision/live/tracker.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from vision.live.appearance import figure_looks
from vision.live.identified import IdentifiedScenes
from vision.live.tracker import LOOK_SAME_LAB
from vision.synth.table import render_table

# Unit a's two alike models (32 mm, red) and one of blue's far off.
SCENE: dict[str, Any] = {
    "players": [{"id": "red"}, {"id": "blue"}],
    "units": [{"id": "a", "player": "red"}, {"id": "o", "player": "blue"}],
    "models": [
        {"id": "a1", "unit": "a", "base": "32", "x": 10.0, "y": 10.0},
        {"id": "a2", "unit": "a", "base": "32", "x": 11.5, "y": 10.0},
        {"id": "o1", "unit": "o", "base": "32", "x": 20.0, "y": 20.0},
    ],
}
RED_CLOAK, GREEN_CLOAK, GREY = (120.0, 170.0, 150.0), (130.0, 110.0, 100.0), (90.0, 128.0, 128.0)


def scene_at(a1: tuple[float, float], a2: tuple[float, float]) -> dict[str, Any]:
    """The table as analysed: fresh ids (the detector's), in a placeholder unit per player, as analyze names them."""
    return {
        "players": SCENE["players"],
        "units": [{"id": "red-found", "player": "red"}, {"id": "blue-found", "player": "blue"}],
        "models": [
            {"id": "p1", "unit": "red-found", "base": "32", "x": a1[0], "y": a1[1]},
            {"id": "p2", "unit": "red-found", "base": "32", "x": a2[0], "y": a2[1]},
            {"id": "p3", "unit": "blue-found", "base": "32", "x": 20.0, "y": 20.0},
        ],
    }


def play(looks: dict[str, tuple[float, float, float]] | None) -> tuple[dict[str, Any], Any]:
    """Unit a moves: a1 comes down on the very spot a2 stood, a2 2.6" on (Grinding-Annihilation, Move Phase: "you
    can move any of its troops you choose to ... along any path ... It can be moved over friendly troops"). Its
    models' places alone read that as a2 standing still and a1 moving 4.1"."""
    identified = IdentifiedScenes()
    order = ["a1", "a2", "o1"]
    first = [looks[k] for k in order] if looks else None
    identified.identify(SCENE, first)
    assert identified.tracker is not None
    # (a deployment the players confirmed: its own ids and units)
    now = scene_at((11.52, 10.02), (14.07, 9.8))
    seen = [looks[k] for k in order] if looks else None
    out, update = identified.identify(now, seen)
    return {m["id"]: (m["x"], m["y"]) for m in out["models"]}, update


def test_two_alike_models_of_a_unit_are_told_apart_by_their_figures_where_their_places_alone_mislead() -> None:
    places, update = play({"a1": RED_CLOAK, "a2": GREEN_CLOAK, "o1": GREY})
    assert math.dist(places["a1"], (11.52, 10.02)) < 0.01 and math.dist(places["a2"], (14.07, 9.8)) < 0.01
    lengths = {m.model: round(m.length_in, 2) for m in update.moves}
    assert lengths == {"a1": 1.52, "a2": 2.58}  # each model's own move, not 4.1" for one and none for the other
    assert not update.uncertain and not update.desync
    # By place alone (no photo, or figures painted alike), the tracker takes the places' word, as before.
    for looks in (None, {"a1": GREY, "a2": (94.0, 124.0, 130.0), "o1": GREY}):
        if looks:
            assert math.dist(looks["a1"], looks["a2"]) < LOOK_SAME_LAB
        places, update = play(looks)
        # (a2 kept where it stood: read 0.03" off there, within the jitter of a still model)
        assert math.dist(places["a2"], (11.52, 10.02)) < 0.05 and math.dist(places["a1"], (14.07, 9.8)) < 0.01
        assert [m.model for m in update.moves] == ["a1"]


def test_a_figures_look_is_read_alike_where_it_moves_and_unlike_its_unit_mates_on_a_rendered_table() -> None:
    # Focal Point table 21, its camera's own calibration: each figure's look read on the models' true places, then
    # with u2m1 moved 2" (the renderer paints each figure a colour of its own, in its light at each place).
    table = render_table(21, hard="none")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    models = table.scene["models"]
    looks = dict(zip([m["id"] for m in models], figure_looks(table.image, frame, models), strict=True))
    at = {m["id"]: (m["x"], m["y"]) for m in models}
    moved_to = (at["u2m1"][0] - 2.0, at["u2m1"][1])
    moved = render_table(21, hard="none", models_at={**at, "u2m1": moved_to})
    [moved_look] = figure_looks(
        moved.image, frame, [{**next(m for m in models if m["id"] == "u2m1"), "x": moved_to[0]}]
    )
    assert all(look is not None for look in looks.values()) and moved_look is not None
    assert math.dist(looks["u2m1"], moved_look) < LOOK_SAME_LAB / 2
    # ...and each figure still where it stood is read again alike (the photo's own noise apart)
    again = figure_looks(table.image, frame, models)
    assert all(math.dist(looks[m["id"]], a) < 1.0 for m, a in zip(models, again, strict=True) if a)
    mates = [m["id"] for m in models if m["unit"] == "u2" and m["id"] != "u2m1"]
    assert mates and all(math.dist(looks["u2m1"], looks[k]) > LOOK_SAME_LAB for k in mates)
    # A base at the photo's edge, its figure out of it, has no look.
    assert figure_looks(table.image, frame, [{"x": -30.0, "y": -30.0, "base": "32"}]) == [None]


def test_watch_tells_which_of_two_alike_models_went_where_by_their_figures(tmp_path: Path) -> None:
    # Focal Point table 21 through `watch` (no deployment file: each player's models one lump, as the players have not
    # assigned units). u4's two 32 mm models, 1.5" apart: u4m1 is put down on the spot u4m2 stood, u4m2 2.6" on
    # (Focal Point, Turn Structure: one unit moves at a time; Grinding-Annihilation, Move Phase: a troop "can be moved
    # over friendly troops"). By place, u4m2 still stands there and u4m1 moved 4.1"; its figure says otherwise.
    import cv2

    from vision.live.sources import FolderSource
    from vision.live.watch import watch

    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    m1, m2 = at["u4m1"], at["u4m2"]
    landed = {"u4m1": (m2[0] + 0.02, m2[1] + 0.02), "u4m2": (m2[0] + 2.57, m2[1] - 0.22)}
    moved = render_table(21, hard="none", models_at={**at, **landed})
    for k, frame in enumerate([table.empty] + [table.image] * 4 + [moved.image] * 4):
        cv2.imwrite(str(tmp_path / f"{k:03d}.png"), frame)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    events = list(watch(lambda: FolderSource(tmp_path), table.layout, "focal-point", lens, players))
    moves = [e.payload for e in events if e.kind == "move"]
    assert len(moves) == 2, moves
    by_start = {min(("u4m1", "u4m2"), key=lambda k: math.dist(at[k], move["from"])): move for move in moves}
    assert set(by_start) == {"u4m1", "u4m2"}
    for mid, move in by_start.items():
        assert math.dist(move["from"], at[mid]) < 0.1 and math.dist(move["to"], landed[mid]) < 0.1, (mid, move)
    assert abs(by_start["u4m1"]["length_in"] - math.dist(m1, landed["u4m1"])) < 0.05
