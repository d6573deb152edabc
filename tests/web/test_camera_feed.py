"""The page fed by a camera: rendered photos through the real pipeline (calibration, detector, tracker)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from calibration.lens import LensModel
from calibration.monitor import refined_place
from tests.knocked_card import GAME, hex_grid_off_in, hex_mat_under_a_card, knocked_under_a_card, set_up_under_a_card
from vision.analyze import make_detector
from vision.live.sources import IteratorSource
from vision.synth.table import RenderedTable, render_table
from web.app import ServerConfig, create_app
from web.camera_feed import CameraFeed


def lift_one_model(table: RenderedTable, model_id: str) -> np.ndarray:
    """The photo with one model picked up: its pixels (and round about) replaced by the empty table's."""
    polygon = next(o[2] for o in table.outlines_px if o[0] == "base" and o[1] == model_id)
    x0, y0 = np.floor(polygon.min(axis=0)).astype(int) - 12
    x1, y1 = np.ceil(polygon.max(axis=0)).astype(int) + 12
    image = table.image.copy()
    image[y0:y1, x0:x1] = table.empty[y0:y1, x0:x1]
    return image


def camera_feed(table: RenderedTable, shots: list[Any]) -> CameraFeed:
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    # The classical detector: these tests are about the feed (set-up, gate, ids), not detection accuracy.
    classical = make_detector("classical")
    return CameraFeed(
        lambda: IteratorSource(iter(shots)), table.layout, "test camera", "focal-point", lens, players, classical
    )


def test_set_up_then_models_found_and_ids_kept_when_one_is_picked_up() -> None:
    table = render_table(21, hard="none")
    lifted = lift_one_model(table, "u2m1")  # a model standing alone, at (19.3, 14.7)
    feed = camera_feed(table, [table.empty] + [table.image] * 5 + [lifted] * 5)
    scene, status = feed.next()
    assert scene is None and "set up" in status.message
    assert status.markers_seen == tuple(sorted(m.id for m in feed.layout.markers)) and status.markers_hidden == ()
    scenes, statuses = [], []
    for _ in range(10):
        scene, status = feed.next()
        if scene is not None:
            scenes.append(scene)
            statuses.append(status)
    assert len(scenes) == 2, "one analysis per settled change: the deployed table, then the lifted model"
    first, later = scenes
    truth = table.scene["models"]
    found = [(m["x"], m["y"]) for m in first["models"]]
    near = sum(any(math.hypot(t["x"] - x, t["y"] - y) < 0.25 for x, y in found) for t in truth)
    # The detector's own accuracy is issue 5's business (the classical one: 57 % recall); on this table it
    # finds 3 of 9 since the renderer paints bases half a texture pixel nearer their true place (was 4).
    assert near >= 3
    before = {m["id"]: (m["x"], m["y"]) for m in first["models"]}
    after = {m["id"]: (m["x"], m["y"]) for m in later["models"]}
    assert len(after) == len(before) - 1  # the lifted model is left out, not renamed
    gone = [i for i in before if i not in after]
    # The id that went is the one the feed had given to the lifted model (the piece nearest its place).
    assert gone[0] == min(before, key=lambda i: math.hypot(before[i][0] - 19.301, before[i][1] - 14.733))
    assert f"not seen: {gone[0]}" in statuses[1].message  # and the page says so, asking the players
    for ident, (x, y) in after.items():  # every other model keeps its id and its place
        assert ident in before and math.hypot(x - before[ident][0], y - before[ident][1]) < 0.1
    scene, status = feed.next()  # the source has run dry: stale, no crash
    assert scene is None and status.stale


def test_the_page_shows_the_camera_and_marker_status(tmp_path: Path) -> None:
    table = render_table(21, hard="none")
    config = ServerConfig(
        str(tmp_path / "cam.sqlite"),
        tick_s=0.05,
        feed_factory=lambda: camera_feed(table, [table.empty] + [table.image] * 20),
    )
    with TestClient(create_app(config), client=("127.0.0.1", 1)) as client:
        camera = client.get("/api/calibration").json()
        assert camera["source"] == "test camera" and len(camera["markers_seen"]) == 4
        for _ in range(100):  # the ticker analyses the settled table in the background
            view = client.get("/api/view").json()
            if len(view["models"]) >= 0.6 * len(table.scene["models"]):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the camera's models never reached the page: {view['camera']}")


def test_a_model_hidden_after_its_unit_moved_stays_on_the_page_where_the_move_put_it() -> None:
    # Three models of one unit move 3" together; the third then stands behind terrain, unseen. The page
    # keeps it where the unit's move put it, with the guess's uncertainty, so rulings can say too close to
    # call; a model gone with nothing to say where (picked up) is left out, as before.
    table = render_table(21, hard="none")
    feed = camera_feed(table, [])

    def analysed(models: list[tuple[str, float, float]]) -> dict[str, Any]:
        return {
            "format": "tablesight-scene/1",
            "game": "focal-point",
            "table": {"width_in": 24, "depth_in": 24},
            "players": [{"id": "red"}, {"id": "blue"}],
            "units": [{"id": "a", "player": "red"}, {"id": "b", "player": "blue"}],
            "models": [
                {"id": f"m{k}", "unit": unit, "base": "32", "x": x, "y": y, "sigma_in": 0.02}
                for k, (unit, x, y) in enumerate(models)
            ],
        }

    deployed = [("a", 5.0, 5.0), ("a", 7.0, 5.0), ("a", 9.0, 5.0), ("b", 15.0, 15.0)]
    feed.identified.identify(analysed(deployed))
    moved, _ = feed.identified.identify(analysed([("a", 5.0, 8.0), ("a", 7.0, 8.0), ("b", 15.0, 15.0)]))
    shown = {m["id"]: m for m in moved["models"]}
    assert (shown["m2"]["x"], shown["m2"]["y"]) == (9.0, 8.0)
    assert shown["m2"]["sigma_in"] > 0.45 and shown["m0"]["sigma_in"] == 0.02
    picked_up, _ = feed.identified.identify(analysed([("a", 5.0, 8.0), ("a", 7.0, 8.0)]))
    assert "m3" not in {m["id"] for m in picked_up["models"]}


def test_a_hand_held_still_over_the_table_is_reported_on_the_page() -> None:
    # The motion gate waits while a hand moves; one held still is analysed like the rest of the table, and the
    # page says that something covers part of it (vision/covered.py): the base under it cannot be seen.
    table = render_table(5010, hard="none")
    under = min(table.scene["models"], key=lambda m: math.hypot(m["x"] - 11.6, m["y"] - 8.3))
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}
    feed = CameraFeed(
        lambda: IteratorSource(iter([table.empty] + [table.image] * 5 + [handled.image] * 5)),
        table.layout,
        "test camera",
        "focal-point",
        lens,
        players,
        make_detector("learned"),
    )
    frames = [feed.next() for _ in range(11)]
    analysed = [k for k, (scene, _) in enumerate(frames) if scene is not None]
    assert len(analysed) == 2  # the deployed table, then the table with the hand held still
    deployed, handled_at = (frames[k][1] for k in analysed)
    assert "something covers" not in deployed.message and deployed.covered == ()
    assert "something covers" in handled_at.message and "pieces under it cannot be seen" in handled_at.message
    # ...and it is said, and its box drawn, for as long as the camera shows that table still (not one tick only)
    later = [status for _, status in frames[analysed[1] :]]
    assert all("something covers" in s.message and s.covered == handled_at.covered for s in later), later
    (x0, y0, x1, y1), *_ = handled_at.covered
    assert x0 < under["x"] < x1 and y0 < under["y"] < y1
    assert handled_at.to_json()["covered"] == [list(box) for box in handled_at.covered]


def test_players_with_colours_too_alike_are_told_at_deployment_only() -> None:
    # vision/colour.py: alike_players. The page asks the players to confirm the teams when the camera can
    # hardly tell their colours apart; once the deployment's ids are the game's, the tracker keeps the teams.
    table = render_table(21, hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    moved = lift_one_model(table, "u2m1")
    feed = CameraFeed(
        lambda: IteratorSource(iter([table.empty] + [table.image] * 5 + [moved] * 5)),
        table.layout,
        "test camera",
        "focal-point",
        lens,
        {"red": "#a52e88", "blue": "#942f80"},
        make_detector("classical"),
    )
    statuses = [status for scene, status in (feed.next() for _ in range(11)) if scene is not None]
    assert len(statuses) == 2
    assert "players red and blue have colours only 6.7 apart" in statuses[0].message
    assert "have colours only" not in statuses[1].message


def test_a_camera_seeing_the_table_too_coarsely_is_told_at_deployment_only() -> None:
    # vision/resolution.py: a 1280x720 webcam over a 44"x60" table sees it at 8-10 pixels to the inch, where base
    # sizes and teams are read less surely (docs/vision.md, session 45). The page asks the players to confirm them.
    game = "grinding-annihilation"
    table = render_table(21005, game, size=(1280, 720))
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    moved = table.image
    for model in table.scene["models"][:4]:  # a unit picked up: enough change for the gate at 720p
        moved = lift_one_model(dataclasses.replace(table, image=moved), model["id"])
    feed = CameraFeed(
        lambda: IteratorSource(iter([table.empty] + [table.image] * 5 + [moved] * 5)),
        table.layout,
        "test camera",
        game,
        lens,
        {p["id"]: p["color"] for p in table.scene["players"]},
        make_detector("classical"),
    )
    statuses = [status for scene, status in (feed.next() for _ in range(11)) if scene is not None]
    assert len(statuses) == 2
    assert "the camera sees 100% of the table at under 12 pixels to the inch" in statuses[0].message
    assert "pixels to the inch" not in statuses[1].message


def test_a_camera_streaming_coarsely_mid_game_is_told_once_and_when_it_is_well_again() -> None:
    # vision/camera_quality.py: a phone streaming as a webcam drops to JPEG 40 after the deployment (and a model is
    # picked up, so the table is analysed again). The page says so at that frame, and again when the stream is
    # fine (a second model picked up), not at every frame between.
    def coarse(image: np.ndarray) -> np.ndarray:
        _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 40])
        return cv2.imdecode(data, cv2.IMREAD_COLOR)

    table = render_table(21, hard="none")
    one_gone = lift_one_model(table, "u2m1")
    two_gone = lift_one_model(dataclasses.replace(table, image=one_gone), table.scene["models"][0]["id"])
    frames = [table.empty] + [table.image] * 5 + [coarse(one_gone)] * 5 + [two_gone] * 5
    feed = camera_feed(table, frames)
    statuses = [status for scene, status in (feed.next() for _ in range(len(frames))) if scene is not None]
    assert len(statuses) == 3, [s.message for s in statuses]
    deployed, coarsened, mended = (s.message for s in statuses)
    assert "compressed" not in deployed
    assert "coarsely compressed (JPEG step" in coarsened and "raise the stream's quality" in coarsened
    assert "fine again" in mended and "compressed" not in mended


RAIDERS_YAML = """
format: tablesight-roster/1
game: focal-point
player: {id: red, name: Red, color: "#a028a0"}
units:
  - id: raiders
    name: Ember Raiders
    profile: {type: Troop, move: 5, attack: 2, hit: 4, defense: 4, hp: 3, resolve: 3}
    models: 3
"""


def test_a_move_the_camera_sees_is_judged_under_the_unit_the_players_assigned(tmp_path: Path) -> None:
    # Issue 7, identity and move history: the players import a roster and lasso the deployment's models into
    # its unit on the page. The camera's tracker takes their units, so when that unit moves, its move is
    # recorded under the unit's own name, from where each model stood, and the rules judge it (Focal Point,
    # Activation: "Move"; the Raiders move 5"). Before, the move went under the placeholder "red-found" unit
    # and the unit's page said nothing of it.
    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    raiders = ("u1m1", "u1m2", "u1m4")  # unit u1, red, 25 mm bases round (8, 7.5)
    moved = render_table(21, hard="none", models_at={**at, **{k: (at[k][0] - 3.0, at[k][1] + 1.0) for k in raiders}})
    assigned = threading.Event()

    def frames() -> Iterator[np.ndarray]:
        yield table.empty
        while not assigned.is_set():
            yield table.image
        while True:
            yield moved.image

    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}

    def feed() -> CameraFeed:
        source = lambda: IteratorSource(frames())  # noqa: E731
        return CameraFeed(source, table.layout, "test camera", "focal-point", lens, players, make_detector("auto"))

    config = ServerConfig(str(tmp_path / "cam.sqlite"), tick_s=0.05, feed_factory=feed)
    with TestClient(create_app(config), client=("127.0.0.1", 1)) as client:
        view = wait_for(client, lambda v: len(v["models"]) == len(at), "the deployment")
        found = {m["id"]: (m["x"], m["y"]) for m in view["models"]}
        ids = [min(found, key=lambda i: math.dist(found[i], at[k])) for k in raiders]
        assert all(math.dist(found[i], at[k]) < 0.1 for i, k in zip(ids, raiders, strict=True))
        assert client.post("/api/roster", json={"format": "yaml", "text": RAIDERS_YAML}).status_code == 200
        assert client.post("/api/assign", json={"unit": "raiders", "models": ids}).status_code == 200
        assert client.get("/api/units/raiders").json()["last_move"] is None
        time.sleep(0.3)  # a tick hands the tracker the players' units
        assigned.set()
        wait_for(client, lambda v: math.dist(model_at(v, ids[0]), found[ids[0]]) > 2.0, "the raiders' move")
        unit = client.get("/api/units/raiders").json()
    move = unit["last_move"]
    assert move is not None and move["source"] == "camera"
    for i, k in zip(ids, raiders, strict=True):
        assert math.dist(move["from"][i], at[k]) < 0.1  # where each model stood when the unit was activated
    assert move["ruling"]["verdict"] == "yes", move["ruling"]  # 3.2" moved, 5" allowed


def wait_for(client: TestClient, done: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    """The page's view once ``done`` holds of it (the ticker analyses frames in the background)."""
    for _ in range(300):
        view = client.get("/api/view").json()
        if done(view):
            return view
        time.sleep(0.1)
    raise AssertionError(f"{what} never reached the page: {view['camera']}")


def model_at(view: dict[str, Any], model_id: str) -> tuple[float, float]:
    model = next(m for m in view["models"] if m["id"] == model_id)
    return model["x"], model["y"]


def test_a_game_resumed_after_a_restart_keeps_the_players_units_on_their_models(tmp_path: Path) -> None:
    # Issue 7: "players assign units once (at deployment) and the assignment survives the game", and the brief: a
    # saved game is never corrupted. The players lasso the raiders; the server stops; they move the raiders 3.2"
    # (Focal Point, Activation: "Move"; 5" allowed) while it is down, and start it again. Each analysed frame names
    # its pieces b1, b2, ... in the order found, so the camera taking the restarted table as a new deployment would
    # put the kept correction (raiders = these three ids) on whichever pieces got those names. Gone on with from the
    # kept scene, the ids stay on the raiders, and their move is recorded and judged under their name.
    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    raiders = ("u1m1", "u1m2", "u1m4")  # unit u1, red, 25 mm bases round (8, 7.5)
    to = {k: (at[k][0] - 3.0, at[k][1] + 1.0) for k in raiders}
    moved = render_table(21, hard="none", models_at={**at, **to})
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in table.scene["players"]}

    def feed(frames: list[np.ndarray]) -> Callable[[], CameraFeed]:
        def opened() -> CameraFeed:
            source = lambda: IteratorSource(itertools.chain(frames, itertools.repeat(frames[-1])))  # noqa: E731
            return CameraFeed(source, table.layout, "test camera", "focal-point", lens, players, make_detector("auto"))

        return opened

    db = str(tmp_path / "kept.sqlite")
    first = ServerConfig(db, tick_s=0.05, feed_factory=feed([table.empty, table.image]))
    with TestClient(create_app(first), client=("127.0.0.1", 1)) as client:
        view = wait_for(client, lambda v: len(v["models"]) == len(at), "the deployment")
        found = {m["id"]: (m["x"], m["y"]) for m in view["models"]}
        ids = [min(found, key=lambda i: math.dist(found[i], at[k])) for k in raiders]
        assert client.post("/api/roster", json={"format": "yaml", "text": RAIDERS_YAML}).status_code == 200
        assert client.post("/api/assign", json={"unit": "raiders", "models": ids}).status_code == 200
    # The restart: the camera sees the table as the players left it, raiders moved; no empty table to set up on.
    again = ServerConfig(db, tick_s=0.05, feed_factory=feed([moved.image]))
    with TestClient(create_app(again), client=("127.0.0.1", 1)) as client:
        # each raider's id on its own piece, where it went
        view = wait_for(
            client,
            lambda v: all(math.dist(model_at(v, i), to[k]) < 0.1 for i, k in zip(ids, raiders, strict=True)),
            "the raiders' ids on their pieces",
        )
        assert all(next(m for m in view["models"] if m["id"] == i)["unit"] == "raiders" for i in ids)
        for i, xy in found.items():  # and every other model's on its own, where it stood
            if i not in ids:
                assert math.dist(model_at(view, i), xy) < 0.1
        move = client.get("/api/units/raiders").json()["last_move"]
    assert move is not None and move["source"] == "camera"
    for i, k in zip(ids, raiders, strict=True):
        assert math.dist(move["from"][i], at[k]) < 0.1
    assert move["ruling"]["verdict"] == "yes", move["ruling"]


def test_a_kept_game_goes_on_where_its_models_stand_and_not_on_another_table() -> None:
    # The restart's first frame is matched to the kept game where at least half its models stand on a piece the
    # camera finds (the players moved some while the server was down); a game kept of another table is not used,
    # and the pieces are named afresh, as at a deployment, rather than each kept model being reported missing.
    table = render_table(21, hard="none")
    at = {m["id"]: (m["x"], m["y"]) for m in table.scene["models"]}
    kept = {**table.scene, "models": [{**m, "id": f"k{n}"} for n, m in enumerate(table.scene["models"])]}
    elsewhere = {**kept, "models": [{**m, "x": m["x"] + 6.0} for m in kept["models"]]}
    for game, resumed in ((kept, True), (elsewhere, False)):
        feed = camera_feed(table, [table.empty] + [table.image] * 5)
        feed.detector = make_detector("auto")
        feed.resume(game)
        scenes = [feed.next() for _ in range(6)]
        scene, status = next((sc, st) for sc, st in scenes if sc is not None)
        if resumed:
            assert f"game resumed: 9 of its {len(at)} models found where they were kept" in status.message
            assert sorted(m["id"] for m in scene["models"]) == sorted(m["id"] for m in kept["models"])
        else:
            assert "not this table" in status.message and "game resumed" not in status.message
            assert all(m["id"].startswith("b") for m in scene["models"]) and len(scene["models"]) == len(at)


def test_a_card_lifted_off_markers_after_a_knock_has_the_places_read_since_mapped_from_every_marker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The camera is knocked while a card lies over markers 0 and 1: after the wait the table is mapped from markers 2
    # and 3 (calibration/monitor.py), and a unit moves. When the card is lifted, the page maps the table from all four
    # again and reads the places read since through the new map; before, the map from two stayed for the game.
    card = knocked_under_a_card(monkeypatch)
    moved, unit = card.moved, card.unit
    feed = CameraFeed(
        lambda: IteratorSource(iter(card.shots)),
        card.table.layout,
        "test camera",
        GAME,
        card.lens,
        card.players,
        make_detector("auto"),
    )
    scenes, said, records = [], [], []
    for _ in card.shots:
        scene, status = feed.next()
        said.append(status.message)
        if scene is not None:
            scenes.append((scene, feed.monitor.frame))
            records.append(copy.deepcopy(feed.identified.tracker.history if feed.identified.tracker else []))
    assert any("recalibrated from markers 2, 3 only" in s for s in said)
    (deployed, _), (knocked_scene, fewer), (moved_scene, _), (refined_scene, full) = scenes
    assert fewer is not None and full is not None and fewer.quality is not None and full.quality is not None
    assert fewer.quality.markers_used == (2, 3) and full.quality.markers_used == (0, 1, 2, 3)
    assert any("markers 0, 1 in view again: the table mapped from markers 0, 1, 2, 3" in s for s in said)

    def shown(scene: dict[str, Any]) -> dict[str, tuple[float, float]]:
        return {m["id"]: (m["x"], m["y"]) for m in scene["models"]}

    def truth_of(place: tuple[float, float]) -> str:
        return min(moved, key=lambda mid: math.dist(moved[mid], place))

    before, now = shown(moved_scene), shown(refined_scene)
    ids = {truth_of(xy): pid for pid, xy in before.items()}
    for mid in moved:
        pid = ids[mid]
        if mid in unit:  # read through the map from two markers, then through the one from four (or read again, surer)
            expected = refined_place(fewer, full, before[pid])[0]
            assert math.dist(now[pid], expected) < 0.03, (mid, now[pid], expected)
        else:  # read before the knock: right, and kept
            assert now[pid] == before[pid] == shown(deployed)[pid]
    off_before = sum(math.dist(before[ids[mid]], moved[mid]) for mid in unit)
    off_now = sum(math.dist(now[ids[mid]], moved[mid]) for mid in unit)
    assert off_now < off_before - 0.02, (off_before, off_now)
    # The unit's moves, from where it stood before the knock: both ends in one map now, and no new move recorded
    true_in = math.hypot(1.5, 1.5)
    lengths_before, lengths_now = (sorted((h["model"], h["length_in"]) for h in moves) for moves in records[2:])
    assert [m for m, _ in lengths_now] == sorted(ids[mid] for mid in unit) == [m for m, _ in lengths_before]
    assert sum(abs(n - true_in) for _, n in lengths_now) < sum(abs(b - true_in) for _, b in lengths_before)
    assert all(abs(n - true_in) < 0.02 for _, n in lengths_now), lengths_now


def test_a_hex_mat_found_at_a_set_up_under_a_card_is_found_again_once_the_card_is_lifted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Onefinity is played on a 1.5" hex mat (its rulebook counts ranges and moves in hexes), which the page finds on
    # the set-up frame. Set up with a card over markers 0 and 1 and no lens file, it is found through the map from
    # markers 2 and 3, up to 0.06" off the mat's across the table: a model standing that close to a hex's edge is put
    # in the next hex. Once the card is lifted and the table mapped from all four, the grid is found again.
    table, shots, players = hex_mat_under_a_card(monkeypatch)
    feed = CameraFeed(lambda: IteratorSource(iter(shots)), table.layout, "test camera", "onefinity", None, players)
    scenes, said = [], []
    for _ in shots:
        scene, status = feed.next()
        said.append(status.message)
        if scene is not None:
            scenes.append(scene)
    assert 'hex mat: 1.5" pointy hexes' in said[0] and "calibrated from 2 markers" in said[0], said[0]
    assert any("markers 0, 1 in view again" in s for s in said), said
    before, after = (hex_grid_off_in(s["table"]["hex"], table) for s in (scenes[0], scenes[-1]))
    assert before > 0.04 and after < 0.025, (before, after)


def test_a_card_on_markers_from_the_set_up_on_is_lifted_and_the_table_mapped_from_every_marker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A card over markers 0 and 1 as the table is set up, and no lens file: the table is mapped from markers 2 and 3,
    # and on seed 45's table the places read so are up to 0.4" off. When the card is lifted the page maps the table
    # from all four: the places held, the objective markers and the unit's move are read again through the new map,
    # and the set-up's empty table no longer holds the card (or the page would say for the rest of the game that
    # something covers the table there).
    card = set_up_under_a_card(monkeypatch)
    feed = CameraFeed(
        lambda: IteratorSource(iter(card.shots)), card.table.layout, "test camera", GAME, None, card.players
    )
    scenes, said, records = [], [], []
    for _ in card.shots:
        scene, status = feed.next()
        said.append(status.message)
        if scene is not None:
            scenes.append(scene)
            records.append(copy.deepcopy(feed.identified.tracker.history if feed.identified.tracker else []))
    assert "calibrated from 2 markers" in said[0] and "marker(s) 0, 1 not seen" in said[0]
    back = [k for k, s in enumerate(said) if "markers 0, 1 in view again" in s]
    assert back and "places read since the set-up corrected by up to" in said[back[0]], said
    deployed, moved_scene, refined_scene = scenes
    objectives = [(o["x"], o["y"]) for o in card.table.scene["objectives"]]

    def off_in(scene: dict[str, Any]) -> tuple[float, float]:
        """How far, at most, the scene's models and objective markers are from the truth."""
        models = max(min(math.dist((m["x"], m["y"]), xy) for xy in card.moved.values()) for m in scene["models"])
        markers = max(min(math.dist((o["x"], o["y"]), xy) for xy in objectives) for o in scene["objectives"])
        return models, markers

    assert min(off_in(moved_scene)) > 0.1, off_in(moved_scene)  # read through the map from two markers
    models_in, markers_in = off_in(refined_scene)
    assert models_in < 0.08 and markers_in < 0.02, (models_in, markers_in)
    assert {m["id"] for m in refined_scene["models"]} == {m["id"] for m in deployed["models"]}
    # The unit's move, both ends read through the map from two: measured in the new map now
    true_in = math.hypot(1.5, 1.5)
    lengths_before, lengths_now = ([h["length_in"] for h in moves] for moves in records[1:])
    assert len(lengths_now) == len(card.unit) == len(lengths_before)
    assert sum(abs(n - true_in) for n in lengths_now) < sum(abs(b - true_in) for b in lengths_before)
    assert all(abs(n - true_in) < 0.035 for n in lengths_now), lengths_now
    # Nothing said to cover the table where the card lay, from the lift on
    assert not any("something covers" in s for s in said[back[0] :]), said[back[0] :]
    assert not refined_scene["measurement"]["covered"]
