"""The at-a-glance check on golden scenes (the bundled sample and hand-made variants)."""

from __future__ import annotations

from typing import Any

import pytest

from geometry.measure import Verdict
from rules.profiles import profile_for
from rules.table_facts import check, coherency_rulings, engagement_rulings, line_of_sight, measure
from tablesight.scene import Scene


def rulings_by_subject(scene: Scene) -> dict[tuple[str, ...], Any]:
    """The geometry rulings (coherency, engagement) keyed by what they are about."""
    profile = profile_for(scene.game)
    return {r.subject: r for r in coherency_rulings(scene, profile) + engagement_rulings(scene, profile)}


def test_bundled_sample_golden(sample_path: str) -> None:
    scene = Scene.load(sample_path)
    rulings = rulings_by_subject(scene)
    # Focal Point, Coherency (2"): w3 stands 2.02" from w2, measured to 0.02" (x2 sigma 0.028") -> too close.
    wardens = rulings[("wardens",)]
    assert wardens.verdict is Verdict.TOO_CLOSE
    assert wardens.reasons[0] == (
        'Blade Wardens are too close to call for coherency: w3 is 2.02" from w2, '
        'within measuring error of 2.00": too close to call.'
    )
    assert rulings[("lancers",)].verdict is Verdict.YES
    assert rulings[("knives",)].verdict is Verdict.YES
    # Focal Point, Combat 1. Check Range: "within 1 inch of an enemy model".
    melee = rulings[("l2", "c1")]
    assert melee.verdict is Verdict.YES
    assert melee.measurements[0].value_in == pytest.approx(0.909, abs=0.001)
    assert melee.rule == "Affinity: Focal Point > Combat > 1. Check Range"
    nearest = {row["unit"]: row for row in check(scene).nearest_enemy}
    assert nearest["wardens"]["enemy_model"] == "k1"


def test_spec_example_check_and_measure(spec_example: dict[str, Any]) -> None:
    scene = Scene.from_dict(spec_example, "example.json")
    rulings = rulings_by_subject(scene)
    # scene-format.md: "the Blade Wardens are in coherency (2")".
    assert rulings[("wardens",)].verdict is Verdict.YES
    assert measure(scene, "w1", "w2").distance_in == pytest.approx(1.24, abs=0.005)
    assert not [r for r in rulings.values() if len(r.subject) == 2]  # nobody within 1"


def test_one_model_out_reason_reads_like_a_referee(spec_example: dict[str, Any]) -> None:
    spec_example["models"].append({"id": "w3", "unit": "wardens", "base": "32", "x": 10.3, "y": 4.0})
    ruling = rulings_by_subject(Scene.from_dict(spec_example))[("wardens",)]
    assert ruling.verdict is Verdict.NO
    assert ruling.reasons[0] == (
        'Blade Wardens are out of coherency: w3 has 0 of the 1 models it needs within 2.00" (nearest: w2 at 2.54").'
    )


def test_grinding_annihilation_uses_two_neighbours_at_seven_and_vertical_limit(spec_example: dict[str, Any]) -> None:
    # grinding-annihilation.txt, Formation Cohesion: 2" horizontally and 5" vertically; two others at 7+ troops.
    spec_example["game"] = "grinding-annihilation"
    spec_example["models"] = [
        {"id": f"t{k}", "unit": "wardens", "base": "32", "x": 2.0 + 2.5 * k, "y": 4.0} for k in range(7)
    ] + [{"id": "s1", "unit": "shards", "base": "25", "x": 20.0, "y": 20.0}]
    ruling = rulings_by_subject(Scene.from_dict(spec_example))[("wardens",)]
    assert ruling.verdict is Verdict.NO
    assert any("t0 has 1 of the 2 models" in r for r in ruling.reasons)
    # Threat range 1" horizontally and 5" vertically: 0.5" apart but 6" up is not in threat range.
    spec_example["models"] = [
        {"id": "w1", "unit": "wardens", "base": "32", "x": 4.0, "y": 4.0},
        {"id": "s1", "unit": "shards", "base": "32", "x": 5.76, "y": 4.0, "z": 6.0},
        {"id": "s2", "unit": "shards", "base": "32", "x": 4.0, "y": 5.76, "z": 4.0},
    ]
    rulings = rulings_by_subject(Scene.from_dict(spec_example))
    assert ("w1", "s1") not in rulings
    assert rulings[("w1", "s2")].verdict is Verdict.YES


def test_unit_line_of_sight_aggregates_models(sample_path: str) -> None:
    scene = Scene.load(sample_path)
    result = line_of_sight(scene, "wardens", "knives")
    assert result.visible
    assert len(result.pairs) == 9
    assert "ruin" in result.blocked_by
