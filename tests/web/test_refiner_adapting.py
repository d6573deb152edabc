"""The base refiner adapted on a camera game's first confirmed rounds, in a process of its own
(web/refiner_adapting.py). A stand-in for `tablesight adapt` keeps these tests quick: the training
itself is tests/vision/test_training_smoke.py's."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from fastapi.testclient import TestClient

from calibration.layout import Layout
from vision.refiner import DEFAULT_REFINER
from vision.synth.table import render_table
from web.app import ServerConfig, create_app
from web.refiner_adapting import ADAPTED_NAME, RefinerAdapting

from .test_camera_feed import camera_feed

# `python FAKE adapt FRAMES --part refiner --out OUT`: records what it was given, then writes the shipped
# refiner as the adapted one.
FAKE_ADAPT = f"""
import json, shutil, sys
from pathlib import Path
_, verb, frames, _, part, _, out = sys.argv
Path(out).mkdir(parents=True)
Path(out, "given.json").write_text(json.dumps({{"verb": verb, "part": part, "frames": sorted(p.name for p in Path(frames).iterdir())}}))
shutil.copyfile({str(DEFAULT_REFINER)!r}, Path(out, {ADAPTED_NAME!r}))
"""


PROFILE = {"type": "Toll", "move": 5, "attack": 3, "hit": 4, "defense": 4, "hp": 6, "resolve": 3}


def fake_command(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_adapt.py"
    script.write_text(FAKE_ADAPT, encoding="utf-8")
    return [sys.executable, str(script)]


def keep_round(folder: Path, game_id: int, round_: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"game{game_id}-round{round_}.jpg").write_bytes(b"jpeg")
    (folder / f"game{game_id}-round{round_}.scene.json").write_text("{}")


def wait_for(adapting: RefinerAdapting, game_id: int) -> Path | None:
    for _ in range(200):
        found = adapting.refiner_for(game_id)
        if found is not None or "adapting to" not in adapting.note:
            return found
        time.sleep(0.05)
    raise AssertionError(f"the training never ended: {adapting.note}")


def test_a_games_refiner_is_adapted_on_its_own_frames_once_it_has_enough(tmp_path: Path) -> None:
    kept = tmp_path / "confirmed"
    adapting = RefinerAdapting(kept, after_rounds=2, command=fake_command(tmp_path))
    keep_round(kept, 1, 1)  # an earlier game's frame: other armies, not trained on
    keep_round(kept, 2, 1)
    (kept / "lens.json").write_text("{}")
    (kept / "layout.json").write_text("{}")
    assert adapting.round_kept(2) == "refiner: adapts to this table after 2 confirmed rounds (1 so far)"
    assert adapting.refiner_for(2) is None and not adapting.game_dir(2).exists()
    keep_round(kept, 2, 2)
    assert "adapting to this table on 2 confirmed rounds" in adapting.round_kept(2)
    assert adapting.note_for(1) == ""  # other games hear nothing of it
    adapted = wait_for(adapting, 2)
    assert adapted == adapting.game_dir(2) / "refiner" / ADAPTED_NAME and adapted.read_bytes()[:16]
    given = json.loads((adapting.game_dir(2) / "refiner" / "given.json").read_text())
    assert given == {
        "verb": "adapt",
        "part": "refiner",
        "frames": [
            "game2-round1.jpg",
            "game2-round1.scene.json",
            "game2-round2.jpg",
            "game2-round2.scene.json",
            "layout.json",
            "lens.json",
        ],
    }
    assert adapting.note_for(2) == "refiner: adapted to this table on 2 confirmed rounds, reading with it"
    keep_round(kept, 2, 3)
    adapting.round_kept(2)  # a later round: the game keeps the refiner it has, no second training
    assert adapting.refiner_for(2) == adapted and adapting.refiner_for(3) is None


def test_a_failed_training_leaves_the_shipped_refiner_and_says_where_to_look(tmp_path: Path) -> None:
    kept = tmp_path / "confirmed"
    failing = [sys.executable, "-c", "import sys; print('no torch here'); sys.exit(3)"]
    adapting = RefinerAdapting(kept, after_rounds=1, command=failing)
    keep_round(kept, 4, 1)
    adapting.round_kept(4)
    assert wait_for(adapting, 4) is None
    log = adapting.game_dir(4) / "adapt.log"
    assert adapting.note_for(4) == f"refiner: adapting failed (exit 3; see {log}); the shipped refiner reads the table"
    assert log.read_text().strip() == "no torch here"
    keep_round(kept, 4, 2)
    adapting.round_kept(4)  # not tried again in that game
    assert adapting.refiner_for(4) is None and "failed" in adapting.note_for(4)
    never = RefinerAdapting(kept, after_rounds=0, command=fake_command(tmp_path))
    assert never.round_kept(4) == "refiner: not adapted during games (--adapt-after 0)"
    assert never.refiner_for(4) is None


def test_the_page_reads_the_game_with_the_adapted_refiner_after_two_confirmed_rounds(tmp_path: Path) -> None:
    table = render_table(21, hard="none")
    feed = camera_feed(table, [table.empty] + [table.image] * 400)
    kept = tmp_path / "confirmed"
    adapting = RefinerAdapting(kept, after_rounds=2, command=fake_command(tmp_path))
    config = ServerConfig(
        str(tmp_path / "cam.sqlite"), tick_s=0.05, feed_factory=lambda: feed, confirmed_dir=str(kept), adapting=adapting
    )
    with TestClient(create_app(config), client=("127.0.0.1", 1)) as client:
        for _ in range(100):  # the ticker analyses the settled table in the background
            if client.get("/api/view").json()["models"]:
                break
            time.sleep(0.05)
        view = client.get("/api/view").json()
        game = view["game_id"]
        for unit in view["units"]:  # the players' rosters: the round's score needs each unit's profile
            roster = {
                "format": "tablesight-roster/1",
                "game": "focal-point",
                "player": {"id": unit["player"]},
                "units": [{"id": unit["id"], "name": unit["id"], "profile": PROFILE}],
            }
            assert client.post("/api/roster", json={"format": "json", "text": json.dumps(roster)}).status_code == 200
        first = client.post("/api/round/confirm", json={"round": 1}).json()
        assert first["kept_frame"] == str(kept / f"game{game}-round1.jpg")
        assert Layout.load(kept / "layout.json") == feed.layout  # adapt calibrates kept frames with this table's
        assert first["refiner"] == "refiner: adapts to this table after 2 confirmed rounds (1 so far)"
        second = client.post("/api/round/confirm", json={"round": 2}).json()
        assert "adapting to this table on 2 confirmed rounds" in second["refiner"]
        for _ in range(200):
            message = client.get("/api/calibration").json()["message"]
            if feed.refiner_path is not None and "reading with it" in message:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"the feed never took the adapted refiner: {message}")
        assert feed.refiner_path == adapting.game_dir(game) / "refiner" / ADAPTED_NAME
        assert feed.detector is not feed.base_detector
        new_game = client.post("/api/setup", json={"game": "focal-point"}).json()["game_id"]
        for _ in range(100):  # a new game starts again from the detector the feed was given
            if feed.refiner_path is None:
                break
            time.sleep(0.05)
        assert new_game != game and feed.refiner_path is None and feed.detector is feed.base_detector
