"""Analysed scenes with the ids of the first one kept: what the page's camera feed and ``watch`` show.

Each settled frame is analysed on its own, and its models get fresh ids. The
first analysed scene (the deployment) fixes the ids; every later one is matched
to the models already known by ``IdentityTracker``, so ids, units and the
players' corrections (which name them) stay put from frame to frame. Each
unit's latest move goes into the scene's ``history`` as the rules read it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.monitor import MonitorReport, remapper
from calibration.table_frame import TableFrame
from vision.analyze import PLAYERS_MODELS
from vision.live.appearance import Look
from vision.live.motion import MotionGate
from vision.live.still_there import still_there
from vision.live.tracker import IdentityTracker, Tracked, TrackUpdate


def keep_look(model: dict[str, Any], look: Look | None) -> None:
    """``model`` (a scene's) keeps its figure's look (``figure_lab``), so a game kept and resumed after a restart
    tells alike models apart by it from its first frame, as before the restart (a unit moved while the page was
    down: its models' places alone may not say which is which)."""
    if look is not None:
        model["figure_lab"] = [round(float(v), 1) for v in look]


@dataclass
class IdentifiedScenes:
    tracker: IdentityTracker | None = None
    first: dict[str, Any] | None = field(default=None, repr=False)  # the deployment: its ids are the game's
    added: int = 0  # pieces that turned up after the deployment, each kept from then on as new1, new2, ...
    placed: set[str] = field(default_factory=set)  # models the players added: their word keeps them on the table
    # The places the tracker held when the camera was last knocked and recalibrated: read through the map before, and
    # right (the table did not move); a place read since went through the new map (``refine_map``).
    held_at_recalibration: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    # The frame the last scene was analysed from, in the camera's view now (None after a knock: other pixels)
    analysed_photo: npt.NDArray[np.uint8] | None = field(default=None, repr=False)

    def identify(
        self,
        scene: dict[str, Any],
        looks: Sequence[Look | None] | None = None,
        photo: tuple[npt.NDArray[np.uint8], TableFrame] | None = None,
        empty_top: npt.NDArray[np.uint8] | None = None,
    ) -> tuple[dict[str, Any], TrackUpdate | None]:
        """``scene`` (just analysed) with the known ids; None for the update at the first (deployment) scene.
        ``looks``: each of its models' figure as the photo shows it (``figure_looks``), in the order of its models:
        evidence of which is which where a unit's models are alike otherwise (None: matched by place alone).
        ``photo``: the frame ``scene`` was analysed from, and its table map. A model the detector missed where the
        photo shows nothing changed since the frame analysed before is kept where it stands, not asked about
        (``vision/live/still_there.py``), where it shows the model, not a wall that hides it (``empty_top``: the
        empty table's top-down view, the analysis's reference's).

        A piece that turns up (reinforcements set up, a model the tracker lost put down elsewhere) gets the next
        new id (``new1``, ...) and keeps it: it is tracked from then on, so the players' corrections naming it
        (assign it to a unit, delete it) stay on it. A model not seen after its unit moved is shown where the
        unit's move put it, with that guess's uncertainty added to its ``sigma_in``; other vanished ones are
        left out (the update's messages ask the players about them)."""
        before, self.analysed_photo = self.analysed_photo, (photo[0] if photo is not None else None)
        if self.tracker is None or self.first is None:
            self.first = copy.deepcopy(scene)
            self.tracker = IdentityTracker.from_scene(scene)
            self.tracker.placeholder_units = placeholder_units(scene)
            scene = copy.deepcopy(scene)
            for model, look in zip(scene["models"], looks or [], strict=False):
                self.tracker.models[model["id"]].look = look
                keep_look(model, look)
            return scene, None
        player_of = {u["id"]: u["player"] for u in scene["units"]}
        detections = [
            {
                "x": m["x"],
                "y": m["y"],
                "base": str(m["base"]),
                "player": player_of[m["unit"]],
                "sigma_in": float(m.get("sigma_in", 0.0)),
                "raw": m,
                "look": look,
            }
            for m, look in zip(scene["models"], looks or [None] * len(scene["models"]), strict=True)
        ]
        still = (
            set()
            if photo is None
            else still_there(
                before,
                photo[0],
                photo[1],
                self.tracker.models.values(),
                detections,
                empty_top,
                self.tracker.moved_in_activation(),
            )
        )
        update = self.tracker.update(detections, hidden=still)
        for j in update.unexplained:
            self._adopt(detections[j], scene)
        out = copy.deepcopy(self.first)
        by_id = {m["id"]: m for m in out["models"]}
        models = []
        for tracked in self.tracker.models.values():
            if tracked.id in update.vanished and tracked.sigma_in == 0.0 and tracked.id not in self.placed:
                continue  # gone, with nothing to say where: the players are asked
            # (a model the players added stays where it was last known: their add correction says it is there)
            model = by_id[tracked.id]
            model["x"], model["y"] = tracked.x, tracked.y
            # As sure as the measurement that put it there (a base seen in part less so), and when not seen after
            # its unit moved, shown where that move put it with the guess's uncertainty too.
            if tracked.place_sigma_in or "sigma_in" in model:
                model["sigma_in"] = round(tracked.place_sigma_in, 5)
            keep_look(model, tracked.look)
            models.append(model)
        out["models"] = models
        # Each unit's latest move, from where its models stood: the rules judge it (move-ok).
        moves = [copy.deepcopy(event) for event in self.tracker.activations.values()]
        if moves:
            out["history"] = out.get("history", []) + moves
        return out, update

    def resume(
        self, kept: dict[str, Any], placed: Sequence[str] = (), off_table: Sequence[dict[str, Any]] = ()
    ) -> None:
        """Go on with a game kept earlier (the page's saved scene after a restart: its ids, units and places are the
        game's): the next analysed scene is matched to it as a later frame of the same game, not taken as a new
        deployment, so the players' corrections, which name the models, stay on them. What moved while no one
        watched is matched as any move is (not told which unit); a model not found is asked about.
        ``placed``: the models the players added (the camera had missed them): tracked again as ones the players
        placed, from where the kept scene has them (moved with their unit since, say), as ``take_units`` adopts them.
        ``off_table``: the game's models the kept scene does not show (not seen, the players asked about them; as last
        kept): held as picked up, as they were before the restart, so one that turns up is matched as any model
        picked up is (before, the resumed game had forgotten it: its piece went to a casualty of its unit, or was
        named a new model: page games skirmish seed 165, focal-point seed 167)."""
        self.first = copy.deepcopy(kept)
        units = {str(u["id"]) for u in kept.get("units", [])}
        ids = {str(m["id"]) for m in kept.get("models", [])}
        off = [copy.deepcopy(m) for m in off_table if str(m.get("unit")) in units and str(m.get("id")) not in ids]
        self.first["models"] = self.first.get("models", []) + off
        self.tracker = IdentityTracker.from_scene(self.first)
        for mid in (str(m["id"]) for m in off):
            self.tracker.models[mid].lost = self.tracker.models[mid].gone = True
        self.tracker.placeholder_units = placeholder_units(kept)
        # Each unit's latest move the camera recorded is the tracker's again (the scenes shown add it, as before the
        # restart): a unit restarted mid-activation (a model at a time) goes on from where it began, not from where
        # its models moved so far stood when the game was kept.
        # (the tracker keeps them in the order they began: the last is the unit whose activation may be going on)
        history = self.first.get("history", [])
        latest = {
            str(e["unit"]): k
            for k, e in enumerate(history)
            if e.get("event") == "move" and e.get("source") == "camera" and str(e.get("unit")) in units
        }
        for unit, k in sorted(latest.items(), key=lambda item: item[1]):
            self.tracker.activations[unit] = history[k]
            self.tracker.moving_unit = unit
        self.first["history"] = [e for k, e in enumerate(history) if k not in latest.values()]
        for mid in placed:
            if mid in self.tracker.models:
                model = self.tracker.models[mid]
                model.lost = model.gone = model.placed = True
                self.placed.add(mid)
        # (a piece that turns up from now on gets a new id the kept game has not used)
        self.added = max(
            (int(m["id"][3:]) for m in self.first["models"] if re.fullmatch(r"new\d+", str(m["id"]))), default=0
        )

    def follow_calibration(self, report: MonitorReport, gate: MotionGate) -> bool:
        """What the camera's calibration monitor said of this frame, for the places held: knocked and recalibrated,
        the places read from now on go through the new map (``recalibrated``); the same view mapped better (markers
        back in view), the places read through the map before are read through the new one (``refine_map``) and the
        next still frame is analysed, so what is shown is too. Returns whether the map was refined."""
        if report.state == "recalibrated":
            self.recalibrated()
        if report.state != "refined" or report.remap_from is None or report.frame is None:
            return False
        self.refine_map(remapper(report.remap_from, report.frame))
        gate.analyse_again()
        return True

    def take_hex_mat(self, grid: dict[str, Any] | None) -> None:
        """The mat's hex grid, found again on the set-up frame through a better map: the scenes shown from now on
        have it (they keep the deployment scene's table)."""
        if self.first is not None and grid is not None:
            self.first["table"]["hex"] = copy.deepcopy(grid)

    def remap_objectives(self, report: MonitorReport) -> None:
        """The objective markers were read through ``report.remap_from`` (the set-up's map, from fewer markers than
        are in view now): read through the refined map instead, as the set-up's reference is read again."""
        if self.first is None or report.remap_from is None or report.frame is None:
            return
        to_new = remapper(report.remap_from, report.frame)
        for objective in self.first.get("objectives", []):
            x, y = to_new((objective["x"], objective["y"]))
            objective["x"], objective["y"] = round(x, 4), round(y, 4)

    def recalibrated(self) -> None:
        """The camera was knocked and the table mapped again from its markers: what is read from now on goes through
        the new map, and what the tracker holds now went through the one before."""
        self.held_at_recalibration = None if self.tracker is None else self.tracker.held_places()
        self.analysed_photo = None

    def refine_map(self, to_new: Callable[[tuple[float, float]], tuple[float, float]]) -> int:
        """The map since the last recalibration is bettered (the markers it lacked back in view; the camera still):
        the places read through it, and only those, are mapped by ``to_new``. Returns how many models moved so."""
        if self.tracker is None:
            return 0
        held = self.held_at_recalibration if self.held_at_recalibration is not None else np.empty((0, 2))
        remapped = self.tracker.remap_places(to_new, held)
        self.held_at_recalibration = self.tracker.held_places()  # mapped right, all of them: not mapped again
        return remapped

    def take_off(self, ids: set[str] | frozenset[str]) -> list[str]:
        """The players' word that these models left the table (the page's delete corrections): those the camera
        does not see now are forgotten by the tracker (``IdentityTracker.take_off``), so none of them is taken back
        onto a piece, nor asked about again. Returns the models forgotten."""
        if self.tracker is None:
            return []
        gone = self.tracker.take_off(ids)
        self.placed -= set(gone)
        return gone

    def unseen(self, shown: dict[str, Any]) -> tuple[str, ...]:
        """The models the camera knows that ``shown`` (its latest scene) leaves out: picked up, or hidden, with
        nothing to say where. The page lists them, so the players can say which were taken off the table."""
        if self.tracker is None:
            return ()
        on_table = {str(m["id"]) for m in shown.get("models", [])}
        return tuple(sorted(mid for mid in self.tracker.models if mid not in on_table))

    def _adopt(self, detection: dict[str, Any], scene: dict[str, Any]) -> None:
        """A piece no known model accounts for, kept as a model of the game from now on."""
        assert self.tracker is not None and self.first is not None
        self.added += 1
        model = {**copy.deepcopy(detection["raw"]), "id": f"new{self.added}"}
        if model["unit"] not in {u["id"] for u in self.first["units"]}:
            unit = next(u for u in scene["units"] if u["id"] == model["unit"])
            self.first["units"].append(copy.deepcopy(unit))
            if unit["player"] not in {p["id"] for p in self.first["players"]}:
                self.first["players"].append({"id": unit["player"]})
            self.tracker.placeholder_units |= placeholder_units({"units": [unit]})
        sigma_in = float(detection.get("sigma_in", 0.0))
        self._track(model, detection["player"], measured_sigma_in=sigma_in, look=detection.get("look"))

    def _adopt_placed(self, model: dict[str, Any], player: str) -> None:
        """A model the players added where the camera saw none (missed at the deployment, say): tracked from now
        on as one not seen yet, so the camera's piece for it, when it sees one beside its unit-mates, is this
        model and not a new piece; until then the players' place for it stands."""
        self.placed.add(model["id"])
        # gone: not asked about, the players placed it; lost: picked up beside its unit-mates when seen
        self._track({**copy.deepcopy(model), "sigma_in": 0.0}, player, lost=True, gone=True, placed=True)

    def _track(self, model: dict[str, Any], player: str, **state: Any) -> None:
        """``model`` (a scene's dict) one of the game's from now on: in the deployment's scene and tracked."""
        assert self.tracker is not None and self.first is not None
        self.first["models"].append(model)
        x, y = float(model["x"]), float(model["y"])
        self.tracker.models[model["id"]] = Tracked(
            model["id"], model["unit"], player, str(model["base"]), x, y, **state
        )

    def take_units(self, scene: dict[str, Any]) -> dict[str, str]:
        """The units, players and bases the players gave the models (the page's corrected scene): the tracker
        matches and records moves by them from the next frame on, so each unit's moves are the rules' to judge
        by its own name. Models the players put on each other's pieces take those pieces (the players' answer to
        "which is which": ``IdentityTracker.take_identities``); returns {model: the model whose piece it took}."""
        if self.tracker is None:
            return {}
        player_of = {u["id"]: u["player"] for u in scene.get("units", [])}
        for model in scene.get("models", []):
            if model["id"] not in self.tracker.models and model.get("unit") in player_of:
                self._adopt_placed(model, player_of[model["unit"]])
        units = {
            m["id"]: (m["unit"], player_of[m["unit"]], str(m["base"]))
            for m in scene.get("models", [])
            if m.get("unit") in player_of
        }
        self.tracker.take_units(units, placeholder_units(scene))
        return self.tracker.take_identities({m["id"]: (float(m["x"]), float(m["y"])) for m in scene.get("models", [])})


def placeholder_units(scene: dict[str, Any]) -> set[str]:
    """The scene's units that are no unit of the game: each player's models lumped together until the players
    assign them (vision/analyze.py)."""
    return {str(u["id"]) for u in scene.get("units", []) if str(u["id"]).endswith(PLAYERS_MODELS)}
