"""The base refiner adapted to the players' table while they play (``serve --camera``).

Once the players have confirmed ``after_rounds`` rounds of a camera game, the frames the server kept of
that game (``serve --keep-frames``) go to ``tablesight adapt --part refiner`` in a process of its own:
the server never imports the training stack, and a slow or failed training never holds up the page.
When it ends well, the game is read with the adapted refiner from then on; a new game starts again
from the shipped one. Within one game the same armies stay on the table, so a game's first 2 confirmed
frames were enough in session 37's and 38's measurements (docs/detector.md: sizes 78.7 -> 98.4 % and
90.4 -> 98.7 % on a crowded near-mat table).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ADAPT_AFTER_ROUNDS = 2  # a game's confirmed rounds before its refiner is adapted (0: never)
ADAPTED_NAME = "adapted-refiner.onnx"  # what `tablesight adapt --part refiner` writes in its --out folder


def can_train() -> bool:
    """Whether this Python has the training stack (the ``train`` extra) that ``tablesight adapt`` needs."""
    return importlib.util.find_spec("torch") is not None


class RefinerAdapting:
    """Adapts the refiner on each camera game's first confirmed rounds, one training at a time.

    ``kept_dir``: where the server keeps confirmed frames (``game{id}-round{n}.jpg`` and ``.scene.json``,
    the camera's ``lens.json`` and the table's ``layout.json``). ``command``: how to run the CLI (tests give a stand-in)."""

    def __init__(
        self, kept_dir: str | Path, after_rounds: int = ADAPT_AFTER_ROUNDS, command: Sequence[str] | None = None
    ) -> None:
        self.kept_dir = Path(kept_dir).expanduser()
        self.after_rounds = after_rounds
        self.command = list(command) if command else [sys.executable, "-m", "tablesight.cli"]
        self.note = "" if after_rounds > 0 else "refiner: not adapted during games (--adapt-after 0)"
        self._job: subprocess.Popen[bytes] | None = None
        self._job_game: int | None = None
        self._job_rounds = 0
        self._adapted: dict[int, Path] = {}  # game id -> its adapted refiner
        self._failed: set[int] = set()  # games whose training failed: not tried again
        self._note_game: int | None = None  # the game the note is about

    def note_for(self, game_id: int) -> str:
        """What the page says about the refiner in ``game_id`` ('' before its first confirmed round)."""
        return self.note if self._note_game == game_id or self.after_rounds <= 0 else ""

    def _say(self, game_id: int, note: str) -> str:
        self.note, self._note_game = note, game_id
        return note

    def _frames(self, game_id: int) -> list[Path]:
        photos = sorted(self.kept_dir.glob(f"game{game_id}-round*.jpg"))
        return [p for p in photos if p.with_suffix(".scene.json").is_file()]

    def game_dir(self, game_id: int) -> Path:
        """Where a game's training runs: its frames (frames/), the adapted refiner (refiner/), adapt.log."""
        return self.kept_dir / f"adapt-game{game_id}"

    def round_kept(self, game_id: int) -> str:
        """A round of ``game_id`` was confirmed and its frame kept: start the training when it is time.
        Returns what the page should say."""
        if self.after_rounds <= 0 or game_id in self._adapted or game_id in self._failed or self._job is not None:
            return self.note_for(game_id)
        frames = self._frames(game_id)
        if len(frames) < self.after_rounds:
            return self._say(
                game_id,
                f"refiner: adapts to this table after {self.after_rounds} confirmed rounds ({len(frames)} so far)",
            )
        work = self.game_dir(game_id)
        shutil.rmtree(work, ignore_errors=True)
        (work / "frames").mkdir(parents=True)
        for photo in frames:  # this game's frames alone: other games had other armies on the table
            shutil.copyfile(photo, work / "frames" / photo.name)
            shutil.copyfile(photo.with_suffix(".scene.json"), work / "frames" / photo.with_suffix(".scene.json").name)
        for name in ("lens.json", "layout.json"):  # the camera's lens and the table's markers (CameraFeed keeps them)
            if (self.kept_dir / name).is_file():
                shutil.copyfile(self.kept_dir / name, work / "frames" / name)
        argv = [*self.command, "adapt", str(work / "frames"), "--part", "refiner", "--out", str(work / "refiner")]
        with open(work / "adapt.log", "wb") as log:
            try:
                self._job = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
            except OSError as error:
                self._failed.add(game_id)
                return self._say(
                    game_id, f"refiner: could not start adapting ({error}); the shipped refiner reads the table"
                )
        self._job_game, self._job_rounds = game_id, len(frames)
        return self._say(
            game_id,
            f"refiner: adapting to this table on {len(frames)} confirmed rounds in the background "
            "(a minute or two on a laptop); the shipped refiner reads the table meanwhile",
        )

    def refiner_for(self, game_id: int) -> Path | None:
        """The refiner the game should be read with now: its adapted one once trained, else None (the
        shipped one). Looks in on a running training without waiting for it."""
        job = self._job
        if job is not None and job.poll() is not None:
            game, self._job, self._job_game = self._job_game, None, None
            assert game is not None
            onnx = self.game_dir(game) / "refiner" / ADAPTED_NAME
            if job.returncode == 0 and onnx.is_file():
                self._adapted[game] = onnx
                self._say(
                    game, f"refiner: adapted to this table on {self._job_rounds} confirmed rounds, reading with it"
                )
            else:
                self._failed.add(game)
                self._say(
                    game,
                    f"refiner: adapting failed (exit {job.returncode}; see {self.game_dir(game) / 'adapt.log'}); "
                    "the shipped refiner reads the table",
                )
        return self._adapted.get(game_id)

    def reject(self, game_id: int, why: str) -> None:
        """The game's adapted refiner could not be used (``why``): the shipped one reads the table."""
        self._adapted.pop(game_id, None)
        self._failed.add(game_id)
        self._say(game_id, f"refiner: the adapted one could not be loaded ({why}); the shipped refiner reads the table")

    def close(self) -> None:
        """Stop a training still running (the server is shutting down)."""
        if self._job is not None and self._job.poll() is None:
            self._job.terminate()
            try:
                self._job.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._job.kill()
