"""kill -9 the server in the middle of a round: everything the players confirmed is there after a restart; a --db
that cannot hold the games is refused, and left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.server import Server


def test_kill_9_mid_round_loses_nothing_confirmed(tmp_path: Path) -> None:
    db = tmp_path / "game.sqlite"
    # A still table: a player's move correction follows the camera's drift since it was made (web/corrections.py),
    # and the sample game restarts its drift at tick 0 after the restart, so a drifting table moves k3 by chance.
    server = Server(db, "--tick", "0.1", "--motion", "0")
    try:
        game_id = server.get("/api/view")["game_id"]
        server.post("/api/corrections", {"correction": {"op": "move", "model": "k3", "x": 18.5, "y": 11.0}})
        server.post("/api/corrections", {"correction": {"op": "terrain", "terrain": "thicket", "kind": "blocking"}})
        score = server.post("/api/round/confirm", {"round": 2})["score"]
        server.post("/api/corrections", {"correction": {"op": "delete", "model": "w3"}})  # round 3 under way
        snapshots_before = server.get("/api/snapshots")
    finally:
        server.kill_9()  # no shutdown handler runs
    assert server.process.returncode == -9

    again = Server(db, "--tick", "0.1", "--motion", "0")
    try:
        view = again.get("/api/view")
        assert view["game_id"] == game_id and view["round"] == 3
        ids = {m["id"] for m in view["models"]}
        assert "w3" not in ids
        k3 = next(m for m in view["models"] if m["id"] == "k3")
        assert (k3["x"], k3["y"]) == (18.5, 11.0)
        assert next(t for t in view["terrain"] if t["id"] == "thicket")["kind"] == "blocking"
        rounds = again.get("/api/rounds")
        assert [r["round"] for r in rounds] == [2] and rounds[0]["score"] == score
        assert [c["op"] for c in again.get("/api/corrections")] == ["move", "terrain", "delete"]
        kept = {s["id"] for s in again.get("/api/snapshots")}
        assert {s["id"] for s in snapshots_before} <= kept
        # The game goes on: round 3 can be confirmed after the restart.
        assert again.post("/api/round/confirm", {"round": 3})["next_round"] == 4
    finally:
        again.stop()


def test_a_db_that_cannot_hold_the_games_is_refused_by_name_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `serve --db` pointed at a file that is no SQLite, at another program's database or at a folder ended in a
    # traceback; another program's database would have been given our tables (and WAL journaling) as well.
    import sqlite3

    from tablesight.cli import main

    junk = tmp_path / "photo.jpg"
    junk.write_bytes(bytes(range(256)) * 12)
    other = tmp_path / "recipes.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE recipes (name TEXT)")
    db.close()
    cases = [
        (junk, "cannot keep the games there (file is not a database); give another --db"),
        (other, "not a tablesight game file (it holds the tables recipes); give another --db"),
        (tmp_path, "cannot keep the games there (unable to open database file)"),
    ]
    for path, said in cases:
        before = path.read_bytes() if path.is_file() else None
        assert main(["serve", "--db", str(path), "--port", "8799"]) == 2
        out, err = capsys.readouterr()
        assert f"tablesight: error: {path}: {said}" in err and "referee page" not in out
        assert (path.read_bytes() if path.is_file() else None) == before  # nothing written to it


def test_a_game_kept_with_a_correction_that_no_longer_fits_starts_and_says_it_left_it_out(tmp_path: Path) -> None:
    """Before session 74 a roster whose values the rules read as numbers were not (`hp: null`) was kept as a
    correction, and broke every later view; once the scene's values were checked, the same saved game would not
    start at all. It starts now: the correction that no longer makes a valid table is left out and said, the
    others still apply, and a new such roster is refused."""
    from fastapi.testclient import TestClient

    from web.app import ServerConfig, create_app
    from web.feeds import SampleFeed
    from web.guard import GuardConfig
    from web.rosters import parse_roster
    from web.store import GameStore

    bad = (
        "format: tablesight-roster/1\ngame: focal-point\nplayer: {id: red, name: Red}\nunits:\n"
        "  - {id: wardens, name: Blade Wardens, profile: {move: 5, attack: 4, hit: 4, defense: 4, hp: null}}\n"
    )
    config = ServerConfig(
        str(tmp_path / "game.sqlite"),
        tick_s=0.05,
        guard=GuardConfig(),
        feed_factory=lambda: SampleFeed(amplitude_in=0.0),
    )
    with TestClient(create_app(config), client=("127.0.0.1", 50000)) as client:
        client.post(
            "/api/corrections", json={"correction": {"op": "terrain", "terrain": "thicket", "kind": "blocking"}}
        )
    store = GameStore(str(tmp_path / "game.sqlite"))
    active = store.active_game()
    assert active is not None
    store.add_correction(active.id, {"op": "roster", "roster": parse_roster(bad, "yaml")})  # as the old code kept it
    store.close()
    with TestClient(create_app(config), client=("127.0.0.1", 50000)) as client:
        view = client.get("/api/view").json()
        assert any(
            "(roster) left out: table: units[0].profile.hp: None is not of type 'number'" in note
            for note in view["skipped"]
        ), view["skipped"]
        assert next(t for t in view["terrain"] if t["id"] == "thicket")["kind"] == "blocking"  # the others apply
        assert client.get("/api/units/wardens").status_code == 200
        refused = client.post("/api/roster", json={"format": "yaml", "text": bad})
        assert refused.status_code == 400 and "profile.hp" in refused.json()["error"]
