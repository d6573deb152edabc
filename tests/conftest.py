from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tablesight.cli import bundled_sample

# Property tests draw the same examples on every run (the brief: seed all randomness).
settings.register_profile("seeded", derandomize=True)
settings.load_profile("seeded")

SPEC_EXAMPLE: dict[str, Any] = {
    "format": "tablesight-scene/1",
    "game": "focal-point",
    "table": {"width_in": 24, "depth_in": 24},
    "players": [{"id": "red", "name": "Red"}, {"id": "blue", "name": "Blue"}],
    "units": [
        {
            "id": "wardens",
            "player": "red",
            "name": "Blade Wardens",
            "profile": {"type": "Threshold", "move": 5, "attack": 4, "hit": 4, "defense": 4, "hp": 8, "resolve": 3},
            "keywords": ["Leader"],
            "state": {"hp": 8, "strain_this_round": 0},
        },
        {
            "id": "shards",
            "player": "blue",
            "name": "Glass Knives",
            "profile": {"type": "Shard", "move": 6, "attack": 3, "hit": 4, "defense": 5, "hp": 6, "resolve": 4},
            "keywords": ["Ranged(12)"],
            "state": {"hp": 6},
        },
    ],
    "models": [
        {"id": "w1", "unit": "wardens", "base": "32", "x": 4.0, "y": 4.0},
        {"id": "w2", "unit": "wardens", "base": "32", "x": 6.5, "y": 4.0},
        {"id": "s1", "unit": "shards", "base": "25", "x": 14.0, "y": 9.0},
    ],
    "terrain": [{"id": "ruin", "kind": "blocking", "polygon": [[9, 5], [11, 5], [11, 8], [9, 8]], "height_in": 4}],
    "objectives": [{"id": "north", "x": 12, "y": 3, "diameter_mm": 40}],
    "round": 2,
}


@pytest.fixture
def spec_example() -> dict[str, Any]:
    """The example scene of ../shared/specs/scene-format.md (a fresh copy per test)."""
    return json.loads(json.dumps(SPEC_EXAMPLE))


@pytest.fixture
def write_scene(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(data: Any, name: str = "scene.json") -> Path:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path

    return write


@pytest.fixture
def sample_path() -> str:
    return bundled_sample()
