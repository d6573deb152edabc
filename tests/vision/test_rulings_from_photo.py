"""Rulings from an analysed photo equal the rulings from the true scene, except where marked too close to call.

Rules checked (Affinity: Focal Point, ../shared/rulebooks/affinity-focal-point.md): Coherency ("Models in a
formation must remain within 2 inches of at least one other model in the same formation"), Combat (targeting in
melee and at range), Objectives (Claiming Objectives, Contested Objectives) and Resolve. The roster (who is who,
base sizes) is the one the players
confirm; the positions and their sigmas are what the camera measured.
"""

from __future__ import annotations

import pytest

from calibration.lens import LensModel
from tablesight.ruling_agreement import compare, measured_scene, with_focal_point_roster
from tablesight.scene import Scene
from vision.analyze import analyze, make_detector
from vision.evaluate import match_scene
from vision.synth.table import render_table


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_rulings_from_the_analysed_photo_agree_with_the_truth_or_say_too_close(seed: int) -> None:
    table = render_table(seed, "focal-point")  # hard cases drawn by the seed, as in the evaluation set
    truth = with_focal_point_roster(table.scene)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    players = {p["id"]: p["color"] for p in truth["players"]}
    found = analyze(
        table.image,
        table.layout,
        table.empty,
        lens=lens,
        players=players,
        terrain=truth["terrain"],
        detector=make_detector("auto"),
    ).scene
    models, markers = match_scene(truth, found)
    pairs, marker_pairs = [(i, j) for i, j, _ in models], [(i, j) for i, j, _ in markers]
    Scene.from_dict(measured_scene(truth, found, pairs, marker_pairs), "measured")  # a valid scene
    result = compare(truth, found, pairs, marker_pairs)
    assert result.wrong == [], result.wrong
    assert result.judged >= 5  # cohesion, control and Resolve at least: the check has something to check
    assert result.agree >= result.too_close  # sigma honest, but not so wide that nothing is decided
