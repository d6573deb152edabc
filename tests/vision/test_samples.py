"""The bundled sample photos of each game's table (sample_images/games/): valid truth, and perception finds them."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from calibration.layout import Layout
from calibration.lens import LensModel
from geometry.hexgrid import HexGrid
from tablesight.scene import Scene
from vision.analyze import analyze
from vision.evaluate import match_scene

GAMES_DIR = Path(__file__).resolve().parents[2] / "sample_images" / "games"
SAMPLES = sorted(p for p in GAMES_DIR.glob("*[0-9].jpg"))


def test_every_game_has_samples_with_a_valid_true_scene() -> None:
    games = {}
    for photo in SAMPLES:
        truth = json.loads(photo.with_suffix(".truth.json").read_text(encoding="utf-8"))
        scene = Scene.from_dict(truth["scene"], photo.name)
        games.setdefault(scene.game, []).append(photo)
        assert photo.with_suffix(".empty.jpg").exists()
    assert {g: len(v) >= 3 for g, v in games.items()} == {
        "focal-point": True,
        "grinding-annihilation": True,
        "onefinity": True,
    }


def test_onefinity_samples_are_on_a_hex_mat_the_scene_knows() -> None:
    for photo in GAMES_DIR.glob("onefinity-*[0-9].jpg"):
        table = json.loads(photo.with_suffix(".truth.json").read_text(encoding="utf-8"))["scene"]["table"]
        grid = HexGrid(**table["hex"])
        q, r = grid.to_hex([table["width_in"] / 2], [table["depth_in"] / 2])
        x, y = grid.to_table(q, r)  # the hex under the table's centre is within a hex of it
        assert abs(x[0] - table["width_in"] / 2) <= grid.width_in and abs(y[0] - table["depth_in"] / 2) <= grid.width_in


@pytest.mark.parametrize("photo", SAMPLES, ids=lambda p: p.stem)
def test_sample_photo_is_analysed_into_its_pieces(photo: Path) -> None:
    truth = json.loads(photo.with_suffix(".truth.json").read_text(encoding="utf-8"))
    scene = truth["scene"]
    lens = LensModel.load(GAMES_DIR / "lens.json")
    found = analyze(
        cv2.imread(str(photo)),
        Layout.from_json(truth["layout"]),
        cv2.imread(str(photo.with_suffix(".empty.jpg"))),
        lens=lens,
        game=scene["game"],
        players={p["id"]: p["color"] for p in scene["players"]},
        terrain=scene["terrain"],
    ).scene
    Scene.from_dict(found, f"analysed {photo.name}")
    matched, markers = match_scene(scene, found)
    # Measured on these nine photos: recall 77 % (68 % crowded, 92 % plain; the crowded 2'x2' one 48 %).
    # This guards the pipeline end to end, not the accuracy target (docs/vision.md).
    assert len(matched) >= 0.4 * len(scene["models"])
    assert len(markers) >= len(scene["objectives"]) - 1
