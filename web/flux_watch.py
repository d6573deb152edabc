"""The page's Flux mode: each player's Source pool, what it can pay and the Burn odds, from the camera.

Reading a Flux photo takes seconds (docs/flux.md), so the watch reads a
frame only when the motion gate calls the table settled and changed; in
between, and while the camera is lost, the page keeps the last reading and
marks it stale. The arithmetic is the rulebook's (``rules.flux``).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.monitor import CalibrationMonitor
from calibration.table_frame import CalibrationError, TableFrame
from rules import flux as flux_rules
from vision.flux.designs import Designs
from vision.flux.layout import FluxLayout
from vision.flux.read import FluxReading, read_flux_table
from vision.live.motion import MotionGate
from vision.live.sources import FrameSource, ResilientSource
from web.session import NotFoundError

Reader = Callable[[npt.NDArray[np.uint8], TableFrame, FluxLayout, Designs], FluxReading]

# The Burn's modifier changes at unit cost 4 and 6, so three rows cover every unit.
BURN_ROWS = ((0, "unit cost 0-3"), (4, "unit cost 4-5"), (6, "unit cost 6+"))
MAX_COST = 20  # a cost asked of the page; the rulebook's costs are far below this


@functools.cache  # the same table for every game: worked out once, not on every poll of the page
def burn_table() -> list[dict[str, Any]]:
    """The exact odds of the Source a Burn brings, per modifier band ("The Burn" roll table)."""
    rows = []
    for cost, label in BURN_ROWS:
        odds = flux_rules.burn_odds(cost).to_json()
        rows.append({"unit_cost": cost, "label": label, **odds, "rule": f"{flux_rules.GAME} > The Burn"})
    return rows


class FluxWatch:
    """Reads the Flux table from a frame source; ``step`` is called from a worker thread, ``view`` from the API."""

    def __init__(
        self,
        opener: Callable[[], FrameSource],
        layout: Layout,
        flux_layout: FluxLayout,
        designs: Designs,
        name: str,
        lens: LensModel | None = None,
        reader: Reader = read_flux_table,
    ) -> None:
        self.source = ResilientSource(opener)
        self.monitor = CalibrationMonitor(layout, lens)
        self.gate = MotionGate()
        self.flux_layout = flux_layout
        self.designs = designs
        self.name = name
        self.reader = reader
        self.reading: FluxReading | None = None
        self.read_at: float | None = None  # wall-clock time of the frame behind ``reading``
        self.read_s: float | None = None  # how long that reading took
        self.message = "waiting for the first frame"
        self.stale = True
        self.version = 0  # bumps whenever the view changes, so the page redraws only then
        self._lock = threading.Lock()

    def say(self, message: str, stale: bool) -> None:
        with self._lock:
            if (message, stale) != (self.message, self.stale):
                self.message, self.stale = message, stale
                self.version += 1

    def step(self) -> None:
        """Look at one frame; read the table if it settled on something new.

        A frame that cannot be read (no markers, a broken picture) is reported in the
        view; any other error reaches the caller, which reports it the same way."""
        status = self.source.read()
        if status.frame is None:
            self.say(status.message, stale=True)
            return
        report = self.monitor.update(status.frame)
        if report.frame is None:
            self.say(report.message, stale=True)
            return
        gate = self.gate.update(status.frame).state
        if gate == "moving":
            self.say("hands over the table: keeping the last reading", stale=True)
            return
        if gate == "still" and self.reading is not None:
            self.say(report.message, stale=report.stale)
            return
        started = time.perf_counter()
        try:
            reading = self.reader(status.frame, report.frame, self.flux_layout, self.designs)
        except (CalibrationError, ValueError) as error:
            self.say(f"frame not read: {error}", stale=True)
            return
        with self._lock:
            self.reading = reading
            self.read_at = time.time()
            self.read_s = time.perf_counter() - started
            self.message, self.stale = report.message, report.stale
            self.version += 1

    def view(self) -> dict[str, Any]:
        with self._lock:
            reading, message, stale, version = self.reading, self.message, self.stale, self.version
            read_at, read_s = self.read_at, self.read_s
        players = []
        if reading is not None:
            for p, pool in reading.pools.items():
                players.append(
                    {
                        "player": p,
                        "pool": pool.to_json(),
                        # What the pool can pay for sure, and at most if every unsure card is the player's.
                        "can_pay_up_to": [pool.low, pool.high],
                        "life_tokens": reading.life_tokens.get(p),
                        "life_token_cap": flux_rules.LIFE_TOKEN_CAP,
                    }
                )
        return {
            "enabled": True,
            "source": self.name,
            "message": message,
            "stale": stale,
            "version": version,
            "read_at": read_at,
            "read_s": None if read_s is None else round(read_s, 2),
            "players": players,
            "cards": [] if reading is None else [c.to_json() for c in reading.cards],
            "burn": burn_table(),
        }

    def can_pay(self, player: str, cost: int) -> dict[str, Any]:
        with self._lock:
            reading = self.reading
        if reading is None:
            raise NotFoundError("no Flux table read yet: point the camera at the table and wait for it to settle")
        if player not in reading.pools:
            raise NotFoundError(f"player {player!r}: expected one of {', '.join(reading.pools)}")
        return reading.pools[player].can_pay(cost)
