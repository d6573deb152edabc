"""Players whose colours the camera can hardly tell apart are told so, with the distance behind it."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from calibration.layout import Layout
from calibration.lens import LensModel
from tablesight.cli import main
from tablesight.scene import Scene
from vision.analyze import analyze
from vision.colour import PLAYERS_ALIKE_DELTA_E, alike_players, describe_alike

GAMES_DIR = Path(__file__).resolve().parents[2] / "sample_images" / "games"
PHOTO = GAMES_DIR / "focal-point-900.jpg"


def test_only_pairs_closer_than_the_threshold_are_alike_closest_first() -> None:
    players = {"red": "#c82828", "crimson": "#b42832", "blue": "#1e5ac8", "navy": "#1e50b4", "white": "#e6e6e6"}
    pairs = alike_players(players)
    assert [(a, b) for a, b, _ in pairs] == [("blue", "navy"), ("red", "crimson")]
    assert all(0 < d < PLAYERS_ALIKE_DELTA_E for _, _, d in pairs) and pairs[0][2] <= pairs[1][2]
    assert alike_players({"red": "#c82828", "blue": "#1e5ac8"}) == []  # the usual two armies
    assert alike_players({}) == [] and alike_players({"red": "#c82828"}) == []
    # The same colour written two ways is one colour.
    assert alike_players({"a": "#d33", "b": "#dd3333"}) == [("a", "b", 0.0)]
    with pytest.raises(ValueError, match="'#12' is not a colour"):
        alike_players({"a": "#12", "b": "#c82828"})


def test_analysing_a_photo_for_alike_players_says_so_in_the_scene_and_on_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    truth = json.loads(PHOTO.with_suffix(".truth.json").read_text(encoding="utf-8"))
    layout = Layout.from_json(truth["layout"])
    lens = LensModel.load(GAMES_DIR / "lens.json")
    photo, empty = cv2.imread(str(PHOTO)), cv2.imread(str(PHOTO.with_suffix(".empty.jpg")))
    apart = analyze(photo, layout, empty, lens=lens, game="focal-point", players={"red": "#c82828", "blue": "#1e5ac8"})
    assert "players_alike" not in apart.scene["measurement"]
    alike = {"red": "#a52e88", "blue": "#942f80"}  # two purples 6.7 apart (near-mat tuning table 13030)
    scene = analyze(photo, layout, empty, lens=lens, game="focal-point", players=alike).scene
    assert scene["measurement"]["players_alike"] == [{"players": ["red", "blue"], "delta_e": 6.7}]
    Scene.from_dict(scene, "analysed with alike players")  # the schema knows the field
    assert "players red and blue have colours only 6.7 apart" in describe_alike(
        scene["measurement"]["players_alike"][0]
    )
    empty_path, lens_path = str(PHOTO.with_suffix(".empty.jpg")), str(GAMES_DIR / "lens.json")
    code = main(
        ["analyze", str(PHOTO), "--empty", empty_path, "--lens", lens_path, "--players", "red=#a52e88,blue=#942f80"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "players red and blue have colours only 6.7 apart (Lab)" in out and "confirm the teams" in out
