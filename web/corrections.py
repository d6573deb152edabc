"""Players' corrections, replayed on every new frame so that they survive it.

Each correction is small JSON (``op`` plus ids and numbers) and idempotent:
replaying the whole list on the latest detected scene gives the table the
players confirmed. A correction whose piece is gone from the frame is skipped
and reported, never an error.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from geometry.shapes import KNOWN_BASES
from web.rosters import merge_roster, parse_roster, take_units_base

OPS = ("move", "add", "delete", "terrain", "assign", "roster", "base")
# A model the camera has seen move further than this since a player placed it has left the place they corrected:
# the correction no longer applies. Closer (the camera's jitter, a nudge, the sample game's drift) it follows the
# camera's reading, as the same offset.
MOVED_AWAY_IN = 1.5
# A model the players added (the camera missed it) and the camera's tracker took over is where they put it only while
# the tracker has it within its jitter allowance of there (vision/live/tracker.py, STAY_IN): the tracker keeps an
# unseen model exactly where the players put it until it moves, and reads one it sees within hundredths of an inch.
# Further off, it has moved, and the tracker's place stands, even when its unit comes back to within
# MOVED_AWAY_IN of that spot (it snapped back there: the page game, seed 45, a model 1.5" off for 45 frames).
ADDED_STILL_IN = 0.25


class CorrectionError(ValueError):
    """A correction that names something that does not exist or has the wrong shape."""


def _find(items: list[dict[str, Any]], ident: str) -> dict[str, Any] | None:
    return next((item for item in items if item.get("id") == ident), None)


def apply_one(scene: dict[str, Any], correction: dict[str, Any]) -> str | None:
    """Apply in place; return why it does not apply to this scene (None when it applied)."""
    op = correction.get("op")
    models: list[dict[str, Any]] = scene.setdefault("models", [])
    if op == "move":
        model = _find(models, correction["model"])
        if model is None:
            return f"model {correction['model']!r} is not on the table"
        # Where the camera read the model when the player placed it (corrections stored before it was kept: none).
        seen_x, seen_y = correction.get("seen_at", (model["x"], model["y"]))
        dx, dy = float(model["x"]) - float(seen_x), float(model["y"]) - float(seen_y)
        if math.hypot(dx, dy) > MOVED_AWAY_IN:
            return None  # moved on since (its unit's move): the camera's reading stands, nothing to report
        model["x"], model["y"] = float(correction["x"]) + dx, float(correction["y"]) + dy
        if dx == dy == 0.0:
            model["sigma_in"] = 0.0  # placed by a player: exact as far as the referee knows
        return None
    if op == "add":
        added = dict(correction["model"])
        tracked = _find(models, added["id"])  # the camera's tracker took the model over (vision/live/identified.py)
        if tracked is not None and math.dist((tracked["x"], tracked["y"]), (added["x"], added["y"])) > ADDED_STILL_IN:
            return None  # moved on since the players placed it: the camera's reading stands
        scene["models"] = [m for m in models if m.get("id") != added["id"]] + [added]
        return None
    if op == "delete":
        # (a model not on the table is where the correction says: off it; web/session.py checks it was known)
        scene["models"] = [m for m in models if m.get("id") != correction["model"]]
        return None
    if op == "terrain":
        piece = _find(scene.get("terrain", []), correction["terrain"])
        if piece is None:
            return f"terrain {correction['terrain']!r} is not on the table"
        piece["kind"] = str(correction["kind"])
        return None
    if op == "assign":
        missing = [m for m in correction["models"] if _find(models, m) is None]
        unit = _find(scene.get("units", []), correction["unit"])
        for model in models:
            if model.get("id") in correction["models"]:
                model["unit"] = correction["unit"]
                take_units_base(model, unit)
        return f"not on the table: {', '.join(missing)}" if missing else None
    if op == "base":
        model = _find(models, correction["model"])
        if model is None:
            return f"model {correction['model']!r} is not on the table"
        if correction["base"] not in KNOWN_BASES:
            raise CorrectionError(
                f"base: {correction['base']!r} is not a known base size (known: {', '.join(KNOWN_BASES)})"
            )
        model["base"] = str(correction["base"])
        model.pop("base_sigma_in", None)  # the players said which base it is: no doubt left in its size
        model.pop("other_base", None)  # ...nor in its shape
        return None
    if op == "roster":
        merged = merge_roster(scene, correction["roster"])
        scene.clear()
        scene.update(merged)
        return None
    raise CorrectionError(f"op: unknown correction {op!r} (use one of {', '.join(OPS)})")


def apply_all(base: dict[str, Any], corrections: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The corrected scene and a note for each correction that did not apply."""
    scene = copy.deepcopy(base)
    skipped: list[str] = []
    for correction in corrections:
        why = apply_one(scene, correction)
        if why is not None:
            skipped.append(f"correction {correction.get('id', '?')} ({correction.get('op')}): {why}")
    return scene, skipped


def check_roster_correction(text: str, fmt: str) -> dict[str, Any]:
    """A roster import as a correction (validated now, replayed on each frame)."""
    return {"op": "roster", "roster": parse_roster(text, fmt)}
