"""Golden scenes, perft-style: tests/golden/<game>/*.json hold a scene, the rulebook line
it tests, and the rulings expected; every file is one test."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rules.common import QuestionError
from rules.systems import ask
from tablesight.scene import Scene

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
FILES = sorted(GOLDEN.glob("*/*.json"))


def test_there_are_enough_golden_scenes() -> None:
    per_game = {folder.name: len(list(folder.glob("*.json"))) for folder in GOLDEN.iterdir() if folder.is_dir()}
    assert per_game.get("focal-point", 0) >= 25
    assert per_game.get("miniature-skirmish", 0) >= 10
    assert per_game.get("onefinity", 0) >= 10
    assert per_game.get("grinding-annihilation", 0) >= 25


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_golden_scene(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["rule"], "every golden scene cites the rule it tests"
    scene = Scene.from_dict(case["scene"], str(path))
    for expect in case["expect"]:
        check_expectation(scene, expect)


def check_expectation(scene: Scene, expect: dict[str, Any]) -> None:
    question, *args = expect["ask"]
    options = {key: expect.get(key) for key in ("range", "weapon", "from", "roll", "targets")}
    if "error" in expect:
        with pytest.raises(QuestionError, match=re.escape(expect["error"])):
            ask(scene, question, args, options)
        return
    answer = ask(scene, question, args, options)
    if isinstance(answer, dict) and "order" in expect:
        assert [[a["tier"], a["player"]] for a in answer["activations"]] == expect["order"], answer
        return
    if isinstance(answer, dict):
        assert answer["vp"] == expect["vp"], answer
        assert answer["winner"] == expect["winner"], answer
        return
    label = f"{expect['ask']}: {answer.verdict} / {answer.reasons}"
    assert answer.verdict.value == expect["verdict"], label
    if "reason" in expect:
        assert any(expect["reason"] in reason for reason in answer.reasons), label
    if "value" in expect:
        assert answer.measurements[0].value_in == pytest.approx(expect["value"], abs=0.005), label
    if "value_max" in expect:
        assert max(m.value_in for m in answer.measurements) == pytest.approx(expect["value_max"], abs=0.01), label
