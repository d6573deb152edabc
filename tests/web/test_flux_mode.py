"""The page's Flux mode: pools read from a camera, what they can pay, Burn odds; faults keep the last reading.

Rules: ../shared/rulebooks/affinity-flux.md. The photo is a rendered
registration photo (each pool holds only its owner's cards), which the reader
gets back exactly (tests/vision/test_flux_read.py), so the pools are known.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from calibration.lens import LensModel
from vision.flux.designs import Designs
from vision.live.sources import IteratorSource, StillSource, open_source
from web.app import ServerConfig, create_app
from web.feeds import SampleFeed
from web.flux_watch import FluxWatch, burn_table
from web.guard import GuardConfig
from web.session import NotFoundError

from .conftest import FluxFiles


def watch_on(files: FluxFiles, frames: Iterator[np.ndarray | None]) -> FluxWatch:
    return FluxWatch(
        lambda: IteratorSource(frames, "fake camera"),
        files.layout,
        files.flux_layout,
        Designs.load(files.designs),
        "fake camera",
        LensModel.load(files.lens),
    )


def test_the_watch_reads_the_pools_and_keeps_them_when_the_camera_drops(flux_files: FluxFiles) -> None:
    """ "Your cards: 1 card = 1 Source" (Affinity: Flux > Source Cards > Spending Source)."""
    photo = cv2.imread(str(flux_files.photo))
    frames = iter([photo, photo, None])
    watch = watch_on(flux_files, frames)
    assert watch.view()["players"] == [] and watch.view()["stale"]
    watch.step()
    view = watch.view()
    assert not view["stale"] and view["read_s"] > 0
    for player, n in flux_files.pool_cards.items():
        row = next(p for p in view["players"] if p["player"] == player)
        assert (row["pool"]["own"], row["pool"]["opponent"], row["pool"]["unsure"]) == (n, 0, 0)
        assert row["pool"]["source"] == n and row["can_pay_up_to"] == [n, n]
        assert watch.can_pay(player, n)["verdict"] == "yes"
        short = watch.can_pay(player, n + 1)
        assert short["verdict"] == "no" and "1 short" in short["reason"]
        assert short["rule"] == "Affinity: Flux > Source Cards > Spending Source"
    in_pools = sum(1 for c in view["cards"] if c["zone_kind"] == "pool")
    assert in_pools == sum(flux_files.pool_cards.values())
    version = view["version"]
    watch.step()  # the same frame again: nothing is read again
    assert watch.view()["read_s"] == view["read_s"]
    watch.step()  # the camera ends: the last reading stays, marked stale
    dropped = watch.view()
    assert dropped["stale"] and "no frame" in dropped["message"] and dropped["version"] > version
    assert dropped["players"] == view["players"]
    with pytest.raises(NotFoundError, match="player 'C'"):
        watch.can_pay("C", 1)


def test_a_photo_without_markers_says_so_and_reads_nothing(flux_files: FluxFiles) -> None:
    blank = np.full((720, 1280, 3), 90, np.uint8)
    blank[::7] = 120  # not one flat colour, so not a garbage frame
    watch = watch_on(flux_files, iter([blank]))
    watch.step()
    view = watch.view()
    assert view["stale"] and view["players"] == [] and "marker" in view["message"]
    with pytest.raises(NotFoundError, match="no Flux table read yet"):
        watch.can_pay("A", 1)


def test_burn_odds_follow_the_roll_table() -> None:
    """ "Roll 1d6 (treat 1 as 2, cap at 5)"; "+1 to roll if the unit cost 4+ Source"; "+2 ... if 6+"
    (Affinity: Flux > The Burn)."""
    rows = {
        r["unit_cost"]: {o["value"]: Fraction(o["probability"]).limit_denominator(6) for o in r["outcomes"]}
        for r in burn_table()
    }
    assert rows[0] == {2: Fraction(1, 3), 3: Fraction(1, 6), 4: Fraction(1, 6), 5: Fraction(1, 3)}
    assert rows[4] == {3: Fraction(1, 3), 4: Fraction(1, 6), 5: Fraction(1, 2)}
    assert rows[6] == {4: Fraction(1, 3), 5: Fraction(2, 3)}


def test_one_photo_is_a_still_camera(flux_files: FluxFiles) -> None:
    source = open_source(str(flux_files.photo))
    assert isinstance(source, StillSource)
    first, second = source.read(), source.read()
    assert first is not None and second is not None and np.array_equal(first, second)


def test_the_api_serves_the_flux_mode(flux_files: FluxFiles, tmp_path: Path) -> None:
    config = ServerConfig(
        str(tmp_path / "game.sqlite"),
        tick_s=0.05,
        guard=GuardConfig(),
        feed_factory=lambda: SampleFeed(amplitude_in=0.0),
        flux_factory=lambda: FluxWatch(
            lambda: StillSource(flux_files.photo),
            flux_files.layout,
            flux_files.flux_layout,
            Designs.load(flux_files.designs),
            "photo",
            LensModel.load(flux_files.lens),
        ),
    )
    with TestClient(create_app(config), client=("127.0.0.1", 50000)) as client:
        deadline = time.monotonic() + 60
        while not client.get("/api/flux").json()["players"]:
            assert time.monotonic() < deadline, "the Flux table was not read within 60 s"
            time.sleep(0.2)
        view = client.get("/api/flux").json()
        assert view["enabled"] and {p["player"] for p in view["players"]} == set(flux_files.pool_cards)
        n = flux_files.pool_cards["A"]
        answer = client.get("/api/flux/can-pay", params={"player": "A", "cost": n}).json()
        assert answer["verdict"] == "yes" and answer["payment"]["own_cards"] == n
        bad = client.get("/api/flux/can-pay", params={"player": "A", "cost": -1})
        assert bad.status_code == 422 and "cost" in bad.json()["error"]
        missing = client.get("/api/flux/can-pay", params={"player": "Z", "cost": 1})
        assert missing.status_code == 404 and "'Z'" in missing.json()["error"]


def test_without_flux_mode_the_api_says_it_is_off(tmp_path: Path) -> None:
    config = ServerConfig(str(tmp_path / "game.sqlite"), tick_s=0.05, feed_factory=lambda: SampleFeed(amplitude_in=0.0))
    with TestClient(create_app(config), client=("127.0.0.1", 50000)) as client:
        assert client.get("/api/flux").json() == {"enabled": False}
        off = client.get("/api/flux/can-pay", params={"player": "A", "cost": 1})
        assert off.status_code == 404 and "--flux" in off.json()["error"]
