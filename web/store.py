"""The game kept in SQLite: games, snapshots (scene, rulings, thumbnail), corrections, confirmed rounds.

Every confirmed action is one committed transaction, so a server killed at any
moment restarts with everything the players confirmed. Only integer ids come
from requests; no request ever names a file.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    game TEXT NOT NULL,
    scenario TEXT,
    round INTEGER NOT NULL DEFAULT 1,
    active INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    created REAL NOT NULL,
    round INTEGER NOT NULL,
    reason TEXT NOT NULL,
    scene TEXT NOT NULL,
    rulings TEXT NOT NULL,
    thumbnail BLOB
);
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    created REAL NOT NULL,
    correction TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
    id INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    round INTEGER NOT NULL,
    confirmed REAL NOT NULL,
    score TEXT NOT NULL,
    snapshot_id INTEGER REFERENCES snapshots(id),
    UNIQUE (game_id, round)
);
"""


@dataclass(frozen=True)
class GameRow:
    id: int
    game: str
    scenario: str | None
    round: int
    created: float


TABLES = {"games", "snapshots", "corrections", "rounds"}


class StoreError(ValueError):
    """The games cannot be kept in the file given (not a database, another program's, a folder)."""


class GameStore:
    """One SQLite file; safe to share between the server's threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            # Read before anything is written: a file that is no SQLite, or another program's database, is left
            # exactly as it was.
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot keep the games there ({error}); give another --db") from None
        if tables and not tables & TABLES:
            self._db.close()
            held = ", ".join(sorted(tables)[:5])
            raise StoreError(f"{self.path}: not a tablesight game file (it holds the tables {held}); give another --db")
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._db.execute(sql, args))

    # ---- games -------------------------------------------------------------------
    def new_game(self, game: str, scenario: str | None = None, round_: int = 1) -> GameRow:
        with self._transaction() as db:
            db.execute("UPDATE games SET active = 0 WHERE active = 1")
            cursor = db.execute(
                "INSERT INTO games (created, game, scenario, round) VALUES (?, ?, ?, ?)",
                (time.time(), game, scenario, round_),
            )
            game_id = int(cursor.lastrowid or 0)
        found = self.game(game_id)
        assert found is not None
        return found

    def active_game(self) -> GameRow | None:
        rows = self._rows("SELECT * FROM games WHERE active = 1 ORDER BY id DESC LIMIT 1")
        return _game(rows[0]) if rows else None

    def game(self, game_id: int) -> GameRow | None:
        rows = self._rows("SELECT * FROM games WHERE id = ?", (game_id,))
        return _game(rows[0]) if rows else None

    def set_setup(self, game_id: int, game: str, scenario: str | None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE games SET game = ?, scenario = ? WHERE id = ?", (game, scenario, game_id))

    # ---- snapshots -----------------------------------------------------------------
    def add_snapshot(
        self,
        game_id: int,
        round_: int,
        reason: str,
        scene: dict[str, Any],
        rulings: list[dict[str, Any]],
        thumbnail: bytes | None,
    ) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO snapshots (game_id, created, round, reason, scene, rulings, thumbnail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, time.time(), round_, reason, json.dumps(scene), json.dumps(rulings), thumbnail),
            )
            return int(cursor.lastrowid or 0)

    def snapshots(self, game_id: int) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT id, created, round, reason FROM snapshots WHERE game_id = ? ORDER BY id",
            (game_id,),
        )
        return [dict(row) for row in rows]

    def snapshot(self, game_id: int, snapshot_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM snapshots WHERE game_id = ? AND id = ?", (game_id, snapshot_id))
        if not rows:
            return None
        row = dict(rows[0])
        row["scene"] = json.loads(row["scene"])
        row["rulings"] = json.loads(row["rulings"])
        return row

    def latest_snapshot(self, game_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT id FROM snapshots WHERE game_id = ? ORDER BY id DESC LIMIT 1", (game_id,))
        return self.snapshot(game_id, int(rows[0]["id"])) if rows else None

    # ---- corrections -----------------------------------------------------------------
    def add_correction(self, game_id: int, correction: dict[str, Any]) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO corrections (game_id, created, correction) VALUES (?, ?, ?)",
                (game_id, time.time(), json.dumps(correction)),
            )
            return int(cursor.lastrowid or 0)

    def replace_correction(self, correction_id: int, correction: dict[str, Any]) -> None:
        """A kept correction, said again (its ``id`` is the row's, not stored in it)."""
        body = {k: v for k, v in correction.items() if k != "id"}
        with self._transaction() as db:
            db.execute("UPDATE corrections SET correction = ? WHERE id = ?", (json.dumps(body), correction_id))

    def corrections(self, game_id: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, correction FROM corrections WHERE game_id = ? ORDER BY id", (game_id,))
        return [{"id": int(r["id"]), **json.loads(r["correction"])} for r in rows]

    # ---- rounds -------------------------------------------------------------------
    def confirm_round(self, game_id: int, round_: int, score: dict[str, Any], snapshot_id: int | None) -> None:
        """Record a round's score and move the game on to the next round, atomically."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO rounds (game_id, round, confirmed, score, snapshot_id) VALUES (?, ?, ?, ?, ?)",
                (game_id, round_, time.time(), json.dumps(score), snapshot_id),
            )
            db.execute("UPDATE games SET round = ? WHERE id = ?", (round_ + 1, game_id))

    def rounds(self, game_id: int) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT round, confirmed, score, snapshot_id FROM rounds WHERE game_id = ? ORDER BY round", (game_id,)
        )
        return [{**dict(r), "score": json.loads(r["score"])} for r in rows]

    def thumbnail(self, game_id: int, snapshot_id: int) -> bytes | None:
        rows = self._rows("SELECT thumbnail FROM snapshots WHERE game_id = ? AND id = ?", (game_id, snapshot_id))
        return bytes(rows[0]["thumbnail"]) if rows and rows[0]["thumbnail"] is not None else None


def _game(row: sqlite3.Row) -> GameRow:
    return GameRow(int(row["id"]), str(row["game"]), row["scenario"], int(row["round"]), float(row["created"]))
