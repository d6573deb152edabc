"""Rulings from an analysed photo equal the rulings from the true scene, except where marked too close to call.

Rules checked (Affinity: Focal Point, ../shared/rulebooks/affinity-focal-point.md): Coherency ("Models in a
formation must remain within 2 inches of at least one other model in the same formation"), Combat (targeting in
melee and at range), Objectives (Claiming Objectives, Contested Objectives) and Resolve. On a Grinding-Annihilation
table (../shared/rulebooks/grinding-annihilation.txt): Formation Cohesion (troops "within 2" horizontally and 5"
vertically of at least one other troop from that formation"), Threat Range ("within 1" horizontally and 5"
vertically of an enemy troop") and objective control. On a Miniature Skirmish table
(../shared/rulebooks/miniature-skirmish.md), every miniature alone: Weapons > Range ("a 'melee' weapon has a range
of 0-1 inches and a 'ranged' weapon has a range of 1-12 inches"). On a Onefinity hex mat
(../shared/rulebooks/onefinity-combat.md), one trooper to a hex: Shooting ("trooper in LoF and range"), fire power
by hexes, and Cover and Visibility (hidden behind 3/4 cover, and in cover by base contact). Cover is judged in
every game that rules on it.

The roster (who is who, base sizes) is the one the players confirm; the positions and their sigmas are what the
camera measured. The rulings must also hold with the base sizes as the camera read them, before the players
confirm anything.
"""

from __future__ import annotations

import pytest

from calibration.lens import LensModel
from tablesight.ruling_agreement import compare, measured_scene, with_roster
from tablesight.scene import Scene
from vision.analyze import analyze, make_detector
from vision.evaluate import match_scene
from vision.synth.hex_troopers import troopers_in_hexes
from vision.synth.table import render_table


@pytest.mark.parametrize(
    ("game", "seed"),
    [
        ("focal-point", 21),
        ("focal-point", 22),
        ("focal-point", 23),
        ("grinding-annihilation", 21),
        ("miniature-skirmish", 21),
        ("onefinity", 24),  # 19 troopers of both players, crowded
    ],
)
def test_rulings_from_the_analysed_photo_agree_with_the_truth_or_say_too_close(game: str, seed: int) -> None:
    if game == "onefinity":  # troopers stand in hexes, as players put them
        models_at, lifted = troopers_in_hexes(seed, game)
        table = render_table(seed, game, models_at=models_at, lifted=lifted)
    else:
        table = render_table(seed, game)  # hard cases drawn by the seed, as in the evaluation set
    truth = with_roster(table.scene, game)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in truth["players"]}
    found = analyze(
        table.image,
        table.layout,
        table.empty,
        lens=lens,
        game=game,
        players=players,
        terrain=truth["terrain"],
        detector=make_detector("auto"),
    ).scene
    if game == "onefinity":  # the hex grid too is what the camera found on the mat, and the rulings use it
        assert found["measurement"]["hex_mat"]["from"] == "the empty table"
        assert found["table"]["hex"]["width_in"] == pytest.approx(truth["table"]["hex"]["width_in"], rel=0.002)
    models, markers = match_scene(truth, found)
    pairs, marker_pairs = [(i, j) for i, j, _ in models], [(i, j) for i, j, _ in markers]
    measured = measured_scene(truth, found, pairs, marker_pairs)
    Scene.from_dict(measured, "measured")  # a valid scene
    assert measured["table"] == found["table"]  # the mat's grid as found, where the game has one
    for found_sizes in (False, True):
        # Cover too (Focal Point > Terrain, Grinding-Annihilation > Benefit of Cover, Onefinity > Cover and
        # Visibility): each unit from each enemy unit.
        result = compare(truth, found, pairs, marker_pairs, found_sizes, with_cover=True)
        assert result.wrong == [], (found_sizes, result.wrong)
        assert result.judged >= 5  # cohesion and control at least: the check has something to check
        assert result.agree >= result.too_close  # sigma honest, but not so wide that nothing is decided


def test_the_measured_scene_takes_the_base_sizes_the_camera_read_only_when_asked() -> None:
    truth = {
        "models": [{"id": "a", "unit": "u", "base": "32", "x": 1.0, "y": 1.0}],
        "objectives": [],
    }
    found = {
        "models": [
            {
                "id": "b1",
                "unit": "p-found",
                "base": "60x35",
                "x": 1.02,
                "y": 0.99,
                "z": 0.0,
                "sigma_in": 0.01,
                "facing_deg": 30.0,
            }
        ],
        "objectives": [],
        "measurement": {"sigma_in": 0.01},
    }
    roster = measured_scene(truth, found, [(0, 0)], [])["models"][0]
    assert (roster["id"], roster["base"], roster["x"]) == ("a", "32", 1.02) and "facing_deg" not in roster
    read = measured_scene(truth, found, [(0, 0)], [], found_sizes=True)["models"][0]
    assert (read["id"], read["base"], read["facing_deg"]) == ("a", "60x35", 30.0)
