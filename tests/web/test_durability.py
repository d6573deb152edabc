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
