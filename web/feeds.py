"""Where the page's table comes from: the bundled sample game (no camera) or a camera.

A feed gives the next detected scene (a scene dict) and the camera's status.
``SampleFeed`` plays the bundled sample: units shuffle back and forth a little
each tick, deterministically, so the page shows a live table with nothing
plugged in. ``CameraFeed`` runs the real pipeline (calibration monitor,
detector, identity tracker) on frames from a source.
"""

from __future__ import annotations

import copy
import json
import math
from importlib import resources
from typing import Any, Protocol

from web.session import CameraStatus

SAMPLE = "samples/focal-point-skirmish.json"


def sample_scene() -> dict[str, Any]:
    text = resources.files("tablesight").joinpath(SAMPLE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def empty_scene(game: str, width_in: float, depth_in: float) -> dict[str, Any]:
    """The table before anything is seen on it."""
    return {
        "format": "tablesight-scene/1",
        "game": game,
        "table": {"width_in": width_in, "depth_in": depth_in},
        "players": [],
        "units": [],
        "models": [],
    }


class Feed(Protocol):
    def next(self) -> tuple[dict[str, Any] | None, CameraStatus]: ...

    def empty_scene(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class SampleFeed:
    """The sample game, each unit drifting along its own direction and back (period ``period_ticks``)."""

    def __init__(self, scene: dict[str, Any] | None = None, amplitude_in: float = 0.6, period_ticks: int = 40) -> None:
        self.start = scene if scene is not None else sample_scene()
        self.amplitude_in = amplitude_in
        self.period_ticks = period_ticks
        self.tick = 0

    def next(self) -> tuple[dict[str, Any] | None, CameraStatus]:
        self.tick += 1
        scene = copy.deepcopy(self.start)
        width, depth = scene["table"]["width_in"], scene["table"]["depth_in"]
        units = [u["id"] for u in scene.get("units", [])]
        for model in scene.get("models", []):
            k = units.index(model["unit"]) if model["unit"] in units else 0
            heading = 2 * math.pi * k / max(len(units), 1)
            step = self.amplitude_in * math.sin(2 * math.pi * (self.tick / self.period_ticks + k / 7))
            # Stay on the table whatever the start positions.
            model["x"] = min(max(model["x"] + step * math.cos(heading), 1.5), width - 1.5)
            model["y"] = min(max(model["y"] + step * math.sin(heading), 1.5), depth - 1.5)
        return scene, CameraStatus("sample game", f"no camera: playing the bundled sample game (tick {self.tick})")

    def empty_scene(self) -> dict[str, Any]:
        return empty_scene(self.start["game"], self.start["table"]["width_in"], self.start["table"]["depth_in"])

    def close(self) -> None:
        return None


class EmptyTableFeed(SampleFeed):
    """A table with no miniatures watched: the page's Flux mode, where the cards come from the Flux watch."""

    def __init__(self, scene: dict[str, Any], message: str) -> None:
        super().__init__(scene, amplitude_in=0.0)
        self.message = message

    def next(self) -> tuple[dict[str, Any] | None, CameraStatus]:
        scene, _ = super().next()
        return scene, CameraStatus("no miniatures camera", self.message)
