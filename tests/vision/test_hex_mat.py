"""The hex grid printed on a mat, found by the camera (vision/hex_mat.py).

Onefinity is played in hexes ("Distance between troopers is 3 hexes", onefinity-combat.md > Shooting): which
hex a trooper stands in is read from the mat's grid, so a scene from the camera must carry it (``table.hex``).
Rendered mats with three grids (the kit's 1.5" pointy one, and two others the renderer never draws by default)
check that the search is general.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from geometry.hexgrid import HexGrid
from vision.analyze import analyze, make_detector, to_confirm
from vision.hex_mat import HEX_PX_PER_IN, find_hex_mat, hex_mat_on, mat_grid, parse_hex_mat
from vision.synth import table as synth
from vision.synth.table import RenderedTable, render_table

GRIDS = [
    {"width_in": 1.5, "orientation": "pointy", "origin_x_in": 0.75, "origin_y_in": 0.75},
    {"width_in": 1.0, "orientation": "flat", "origin_x_in": 0.3, "origin_y_in": 0.9},
    {"width_in": 2.0, "orientation": "pointy", "origin_x_in": 1.1, "origin_y_in": 0.2},
]


def rendered(seed: int, game: str, grid: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> RenderedTable:
    monkeypatch.setitem(synth.HEX_MATS, "onefinity", grid)
    return render_table(seed, game)


def worst_centre_error_in(true_grid: dict[str, Any], found: dict[str, Any], width_in: float = 24.0) -> float:
    """Over every hex of the true grid on the table: how far the found grid puts the centre of the hex there."""
    truth, grid = HexGrid(**true_grid), HexGrid(**found)
    q, r = np.meshgrid(np.arange(-30, 31), np.arange(-30, 31))
    cx, cy = truth.to_table(q.ravel(), r.ravel())
    keep = (cx > 0) & (cx < width_in) & (cy > 0) & (cy < width_in)
    fx, fy = grid.to_table(*grid.to_hex(cx[keep], cy[keep]))
    return float(np.hypot(fx - cx[keep], fy - cy[keep]).max())


@pytest.mark.parametrize("grid", GRIDS, ids=["kit-1.5-pointy", "1.0-flat", "2.0-pointy"])
@pytest.mark.parametrize("seed", [920, 5003])  # a dark mat; a plain one
def test_the_grid_is_found_on_the_empty_table(seed: int, grid: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    table = rendered(seed, "onefinity", grid, monkeypatch)
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    found = hex_mat_on(table.empty, frame)
    assert found is not None and found.orientation == grid["orientation"]
    assert found.width_in == pytest.approx(grid["width_in"], rel=0.002)
    assert worst_centre_error_in(grid, found.spec()) < 0.05  # a hex's inradius is 0.5-1": no trooper changes hex


def printed_mat(grid: dict[str, Any], light_lines: bool, seed: int = 3) -> np.ndarray:
    """A 24" x 24" mat seen from straight above at HEX_PX_PER_IN: mottled, its hex outlines printed 0.04" wide,
    light on a dark mat or dark on a light one."""
    rng = np.random.default_rng(seed)
    size = int(24 * HEX_PX_PER_IN)
    mottle = cv2.GaussianBlur(rng.normal(0, 1, (size, size)).astype(np.float32), (0, 0), 6)
    base = (45.0 if light_lines else 170.0) + 25.0 * mottle / mottle.std()
    lines = np.zeros((size, size), np.uint8)
    hexes = HexGrid(**grid)
    q, r = np.meshgrid(np.arange(-40, 41), np.arange(-40, 41))
    cx, cy = hexes.to_table(q.ravel(), r.ravel())
    start = np.radians(30.0 if grid["orientation"] == "pointy" else 0.0) + np.arange(6) * np.pi / 3
    outlines = [
        # Pixel k spans k/ppi to (k+1)/ppi inches, as in the product's top-down views; cv2 counts from its centre.
        np.round(
            (np.c_[x + hexes.size_in * np.cos(start), y + hexes.size_in * np.sin(start)] * HEX_PX_PER_IN - 0.5) * 8
        ).astype(np.int32)
        for x, y in zip(cx, cy, strict=True)
        if -2 < x < 26 and -2 < y < 26
    ]
    cv2.polylines(lines, outlines, True, 255, 1, cv2.LINE_AA, 3)
    shade = 60.0 if light_lines else -60.0
    grey = np.clip(base + shade * lines.astype(np.float32) / 255 + rng.normal(0, 4, base.shape), 0, 255)
    return cv2.cvtColor(grey.astype(np.uint8), cv2.COLOR_GRAY2BGR)


@pytest.mark.parametrize("light_lines", [False, True], ids=["dark-on-light", "light-on-dark"])
@pytest.mark.parametrize("grid", GRIDS[1:], ids=["1.0-flat", "2.0-pointy"])
def test_outlines_printed_light_on_a_dark_mat_are_found_too(grid: dict[str, Any], light_lines: bool) -> None:
    found = find_hex_mat(printed_mat(grid, light_lines))
    assert found is not None and found.orientation == grid["orientation"]
    assert worst_centre_error_in(grid, found.spec()) < 0.02


@pytest.mark.parametrize("seed", [5000, 5003, 5007])
def test_a_plain_mat_has_no_grid(seed: int) -> None:
    table = render_table(seed, "focal-point")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    assert hex_mat_on(table.empty, frame) is None


def test_the_scene_from_a_photo_carries_the_grid_and_says_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    table = rendered(24, "onefinity", GRIDS[1], monkeypatch)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    detector = make_detector("auto")
    on_empty = analyze(table.image, table.layout, table.empty, lens=lens, game="onefinity", detector=detector).scene
    assert on_empty["measurement"]["hex_mat"]["from"] == "the empty table"
    # "Each unit is one trooper": until the players assign them, each base found is a unit of its own.
    assert len(on_empty["units"]) == len(on_empty["models"]) > 10
    assert all(m["unit"] == f"{m['unit'].split('-')[0]}-{m['id']}" for m in on_empty["models"])
    assert worst_centre_error_in(GRIDS[1], on_empty["table"]["hex"]) < 0.05
    on_photo = analyze(table.image, table.layout, None, lens=lens, game="onefinity", detector=detector).scene
    assert on_photo["measurement"]["hex_mat"]["from"] == "the photo"  # troopers on it hide some outlines
    assert worst_centre_error_in(GRIDS[1], on_photo["table"]["hex"]) < 0.05
    given = analyze(
        table.image, table.layout, table.empty, lens=lens, game="onefinity", detector=detector, hex_mat=GRIDS[1]
    ).scene
    assert given["table"]["hex"] == GRIDS[1] and given["measurement"]["hex_mat"] == {"from": "given"}
    assert not any("hex grid" in message for message in to_confirm(given))


def test_no_grid_on_the_mat_asks_the_players_for_it() -> None:
    table = render_table(5003, "focal-point")  # a plain mat, played as Onefinity
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    scene = analyze(table.image, table.layout, table.empty, lens=lens, game="onefinity").scene
    assert "hex" not in scene["table"] and scene["measurement"]["hex_mat"] == {"from": "not found"}
    assert to_confirm(scene)[0].startswith("no hex grid found on the mat") and "--hex-mat" in to_confirm(scene)[0]
    focal = analyze(table.image, table.layout, table.empty, lens=lens, game="focal-point").scene
    assert "hex_mat" not in focal["measurement"]  # a game not played in hexes does not look
    assert {m["unit"] for m in focal["models"]} <= {"unknown-found"}  # one unit a player, until assigned


def test_a_live_game_finds_the_grid_once_at_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    table = rendered(5003, "onefinity", GRIDS[2], monkeypatch)
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    found = mat_grid("onefinity", None, table.empty, frame)
    assert found is not None and worst_centre_error_in(GRIDS[2], found) < 0.05
    assert mat_grid("onefinity", GRIDS[0], table.empty, frame) == GRIDS[0]  # given by the players: kept
    assert mat_grid("focal-point", None, table.empty, frame) is None


def test_the_grid_given_on_the_command_line() -> None:
    assert parse_hex_mat("1.5,pointy,0.75,0.75") == GRIDS[0]
    for bad in ("1.5,round,0,0", "1.5,pointy", "wide,flat,0,0", "-1,flat,0,0"):
        with pytest.raises(ValueError, match="--hex-mat: expected WIDTH,pointy\\|flat,X,Y"):
            parse_hex_mat(bad)
