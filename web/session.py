"""One game at the table: the latest detected scene, the players' corrections on top, rounds and scores.

The session is what the page talks to. It never trusts a request: every
correction is tried on a copy of the scene and validated before it is stored,
and everything the players confirm is committed to the ``GameStore`` at once.
"""

from __future__ import annotations

import copy
import csv
import io
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import shapely

from geometry.shapes import KNOWN_BASES
from rules.common import QuestionError, last_event
from rules.profiles import profile_for
from rules.reach import unit_reach
from rules.ruling import Ruling
from rules.systems import SYSTEMS, ask, system_for
from rules.table_facts import UnknownThingError, coherency_rulings, line_of_sight, measure
from tablesight.scene import Scene, SceneError
from vision.size_doubt import UNSURE_SIZE_IN
from web.corrections import CorrectionError, apply_all, apply_one
from web.picture import thumbnail_png
from web.store import GameStore

AUTO_SNAPSHOT_S = 60.0  # keep the table as seen at least this often, even without corrections
KEPT_MOVE_IN = 0.25  # a model shown further than this from where the table before had it: the table is kept again
# What the camera's scene says of the piece a model stands on (vision/live/identified.py), not of the model: where
# the camera's tracker gives a model another's piece (``camera_took``), these go with the piece.
PIECE_KEYS = ("x", "y", "sigma_in", "figure_lab")


class NotFoundError(LookupError):
    """An id the game does not have (answered with 404)."""


class ConflictError(ValueError):
    """A request that does not fit the game's state, e.g. confirming a round twice (answered with 409)."""


@dataclass
class CameraStatus:
    source: str  # "sample game", "camera 0", ...
    message: str
    markers_seen: tuple[int, ...] = ()
    markers_hidden: tuple[int, ...] = ()
    stale: bool = False
    # parts of the table something covers that no piece found accounts for (a hand held still): x0, y0, x1, y1
    covered: tuple[tuple[float, float, float, float], ...] = ()
    # models the camera knows but sees nowhere (picked up, or hidden): the players may say they left the table
    unseen: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "message": self.message,
            "markers_seen": list(self.markers_seen),
            "markers_hidden": list(self.markers_hidden),
            "stale": self.stale,
            "covered": [list(box) for box in self.covered],
            "unseen": list(self.unseen),
        }


MOVE_EVENTS = ("move", "charge", "advance", "retreat")  # the history's events a move-ok ruling reads


def _on_hex_edges(scene: Scene, system: Any) -> set[str]:
    """Models whose centre lies within 2 sigma of a hex edge, in a game played in hexes (Onefinity)."""
    hexes_maybe = getattr(system, "hexes_maybe", None)
    if hexes_maybe is None:
        return set()
    return {m.id for m in scene.models if len(hexes_maybe(scene, m)) > 1}


def _hex_choices(scene: Scene, model: Any) -> list[dict[str, Any]]:
    """The hexes a model measured on a hex edge may stand in (none when its hex is sure, or the game has none),
    each with its centre: putting the model there settles it."""
    system = system_for(scene.game) if scene.game in SYSTEMS else None
    if system is None or not hasattr(system, "hexes_maybe") or not scene.hex_spec:
        return []
    maybe = sorted(system.hexes_maybe(scene, model))
    if len(maybe) < 2:
        return []
    here = system.hex_of(scene, model)
    out = []
    for q, r in maybe:
        x, y = system.hex_centre(scene, q, r)
        out.append({"q": q, "r": r, "x": round(x, 3), "y": round(y, 3), "holds_centre": (q, r) == here})
    return out


def _safe_rulings(make: Any) -> tuple[list[Ruling], list[str]]:
    try:
        return list(make()), []
    except (QuestionError, UnknownThingError, KeyError, ValueError) as error:
        return [], [str(error)]


def _moves_seen(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The units the camera saw move from ``before`` to ``after``: with a move record ``before``'s history lacks, or
    with a model placed more than KEPT_MOVE_IN from where ``before`` has it, taken off, or put on. (A unit moved a
    model at a time keeps one record for its activation, made when its first model moved: the table kept then had its
    other models where they stood, and a restart took their moves since for new ones; page game seed 115.)"""
    old = before.get("history", [])
    units = {str(e.get("unit")) for e in after.get("history", []) if e.get("event") in MOVE_EVENTS and e not in old}
    was = {str(m.get("id")): m for m in before.get("models", [])}
    now = {str(m.get("id")): m for m in after.get("models", [])}
    for mid in was.keys() ^ now.keys():
        units.add(str((was.get(mid) or now[mid]).get("unit")))
    for mid in was.keys() & now.keys():
        a, b = was[mid], now[mid]
        if math.hypot(float(b["x"]) - float(a["x"]), float(b["y"]) - float(a["y"])) > KEPT_MOVE_IN:
            units.add(str(b.get("unit")))
    return sorted(units)


def _last_move(scene: Scene, system: Any, unit_id: str) -> dict[str, Any] | None:
    """The unit's latest move in the scene's history (the camera records them), where each model started,
    and the rules' word on it."""
    record = last_event(scene, unit_id, MOVE_EVENTS)
    if record is None:
        return None
    # last_event reads a copy of the scene: its record is ours to hand out
    out: dict[str, Any] = {
        "event": record["event"],
        "from": record.get("from", {}),
        "source": record.get("source", "players"),
    }
    if record.get("unseen_from"):  # (where these stood when the unit was activated was not seen: not judged)
        out["unseen_from"] = record["unseen_from"]
    if "move-ok" in system.questions:
        found, notes = _safe_rulings(lambda: [system.move_ok(scene, unit_id)])
        out["ruling"] = found[0].to_json() if found else None
        out["problems"] = notes
    return out


class GameSession:
    def __init__(self, store: GameStore, first_scene: dict[str, Any]) -> None:
        self.store = store
        self._lock = threading.RLock()
        game = store.active_game()
        resumed = store.latest_snapshot(game.id) if game is not None else None
        if game is None:
            round_ = first_scene.get("round")
            game = store.new_game(
                str(first_scene.get("game", "focal-point")),
                None,
                round_ if isinstance(round_, int) and round_ > 0 else 1,
            )
        self.game_id = game.id
        self.resumed = resumed is not None  # a game kept before this start (a restart mid-game)
        self.game = game.game
        self.scenario = game.scenario
        self.round = game.round
        self.corrections = store.corrections(game.id)
        self.base: dict[str, Any] = resumed["scene"] if resumed else copy.deepcopy(first_scene)
        self.camera = CameraStatus("sample game", "no camera: playing the bundled sample game")
        self.version = 0
        self.problems: list[str] = []
        self._last_snapshot_at = 0.0
        self._left_out: dict[Any, str] = {}  # kept corrections that no longer fit the table, by id: why (_build)
        self._scene, self.skipped = self._build(self.base, self.corrections, lenient=True)
        self._view: dict[str, Any] = {}
        self._unit_info: dict[str, dict[str, Any]] = {}  # per unit, for the scene of this version
        self._refresh()
        if resumed is None:
            self.snapshot("game started")

    # ---- building the scene ------------------------------------------------------------
    def _build(
        self, base: dict[str, Any], corrections: list[dict[str, Any]], lenient: bool = False
    ) -> tuple[Scene, list[str]]:
        """The corrected scene, and a note for each correction that did not apply. ``lenient`` (the game's start): a
        kept correction that no longer makes a valid scene (kept by an older version before its values were
        checked, session 74) is left out, with a note, instead of the saved game failing to start; those left out
        are remembered (``_left_out``) and left out of every later frame too. On a frame, a correction that does
        not fit that frame still means the frame is not used, as before."""
        usable = [c for c in corrections if c.get("id") not in self._left_out]
        data, skipped = apply_all(base, usable)
        try:
            return self._validated(data), skipped + list(self._left_out.values())
        except SceneError:
            if not lenient or not usable:
                raise
        self._validated(copy.deepcopy(base))  # a frame bad in itself is still refused (SceneError)
        current, kept = copy.deepcopy(base), []
        for correction in usable:
            trial = copy.deepcopy(current)
            apply_one(trial, correction)
            try:
                self._validated(trial)
            except SceneError as error:
                note = f"correction {correction.get('id', '?')} ({correction.get('op')}) left out: {error}"
                self._left_out[correction.get("id")] = note
                continue
            current = trial
            kept.append(correction)
        data, skipped = apply_all(base, kept)
        return self._validated(data), skipped + list(self._left_out.values())

    def _validated(self, data: dict[str, Any]) -> Scene:
        data["game"] = self.game
        data["round"] = self.round
        if self.scenario:
            data["scenario"] = {**data.get("scenario", {}), "name": self.scenario}
        return Scene.from_dict(data, "table")

    def _refresh(self) -> None:
        self.version += 1
        self._unit_info = {}
        self._view = self._make_view()

    def set_base(self, scene: dict[str, Any], camera: CameraStatus | None = None) -> None:
        """A new detected scene from the feed; corrections are replayed on it."""
        with self._lock:
            if camera is not None:
                self.camera = camera
            try:
                built, skipped = self._build(scene, self.corrections)
            except SceneError as error:
                # Keep the last good table; say why this frame was not used.
                self.problems = [f"frame not used: {error}"]
                self._refresh()
                return
            moved = _moves_seen(self.base, scene)
            self.base, self._scene, self.skipped, self.problems = copy.deepcopy(scene), built, skipped, []
            self._refresh()
            # Kept at each move the camera records, too: a restart goes on from the table as last seen
            # (CameraFeed.resume), and a table a minute old may have most units moved since.
            if moved:
                self.snapshot(f"seen moving: {', '.join(moved)}")
            elif time.monotonic() - self._last_snapshot_at > AUTO_SNAPSHOT_S:
                self.snapshot("as seen")

    def camera_took(self, onto: dict[str, str]) -> None:
        """The camera's tracker took the players' word on which piece is which (``IdentityTracker.take_identities``:
        {model: the model whose piece it now has}): the camera's table is read so from now on, and the corrections
        that said so now name where the camera reads each model (``seen_at``), so they follow it as any correction
        does (and, replayed on later frames or after a restart, do not move it again by the swap)."""
        with self._lock:
            base = copy.deepcopy(self.base)
            by_id = {m.get("id"): m for m in base.get("models", [])}
            was = copy.deepcopy(by_id)
            for mid, other in onto.items():
                if mid not in by_id or other not in was:
                    continue
                for key in PIECE_KEYS:
                    if key in was[other]:
                        by_id[mid][key] = was[other][key]
                    else:
                        by_id[mid].pop(key, None)
            said = {
                c["id"]: {**c, "seen_at": [float(by_id[c["model"]]["x"]), float(by_id[c["model"]]["y"])]}
                for c in self.corrections
                if c.get("op") == "move" and c.get("model") in onto and c.get("model") in by_id
            }
            corrections = [said.get(c["id"], c) for c in self.corrections]
            try:
                scene, skipped = self._build(base, corrections)
            except SceneError as error:  # (the camera's next table is read so anyway; this one stays as it was)
                self.problems = [f"the players' word on which model is which not shown yet: {error}"]
                self._refresh()
                return
            for correction in said.values():
                self.store.replace_correction(int(correction["id"]), correction)
            self.base, self.corrections, self._scene, self.skipped = base, corrections, scene, skipped
            self._refresh()
            self.snapshot(f"the camera took the players' word: {', '.join(sorted(onto))}")

    def off_table(self) -> list[dict[str, Any]]:
        """The game's models the table does not show now (not seen, the players asked about them), each as the
        latest snapshot that held it; not those the players deleted. A camera resumed after a restart holds them as
        picked up, as it did before (``CameraFeed.resume``)."""
        with self._lock:
            shown = {m.get("id") for m in self.base.get("models", [])} | {m.id for m in self._scene.models}
            deleted = self._taken_off()
            found: dict[str, dict[str, Any]] = {}
            for row in reversed(self.store.snapshots(self.game_id)):
                kept = self.store.snapshot(self.game_id, int(row["id"]))
                for model in (kept or {}).get("scene", {}).get("models", []):
                    mid = model.get("id")
                    if mid not in shown and mid not in deleted and mid not in found:
                        found[mid] = model
            return list(found.values())

    def set_camera(self, camera: CameraStatus) -> None:
        """No new table from this frame, but the camera has news (set-up, hands, hidden markers)."""
        with self._lock:
            if camera != self.camera:
                self.camera = camera
                self._refresh()

    def _taken_off(self) -> set[str]:
        return {
            str(c["model"]) for c in self.corrections if c.get("op") == "delete" and c.get("id") not in self._left_out
        }

    def taken_off(self) -> frozenset[str]:
        """The models the players deleted (casualties taken off, pieces that are no model): the camera forgets
        those it no longer sees (``CameraFeed.take_off``)."""
        with self._lock:
            return frozenset(self._taken_off())

    @property
    def scene(self) -> Scene:
        with self._lock:
            return self._scene

    def view(self) -> dict[str, Any]:
        with self._lock:
            return self._view

    # ---- the overlay -----------------------------------------------------------------------
    def _make_view(self) -> dict[str, Any]:
        scene = self._scene
        taken_off = self._taken_off()
        profile = profile_for(scene.game)
        system = system_for(scene.game)
        coherency, notes = _safe_rulings(lambda: coherency_rulings(scene, profile))
        by_unit = {r.subject[0]: r for r in coherency if r.subject}
        players = {p.id: p for p in scene.players}
        fp = scene.footprints()
        hex_spec = scene.hex_spec
        hex_mat = {"hex": hex_spec} if hex_spec else {}  # the page draws the mat's hexes
        on_edge = _on_hex_edges(scene, system) if hex_spec else set()
        models = []
        corrected = {c.get("model") for c in self.corrections if c.get("op") in ("move", "base")}
        corrected |= {c["model"]["id"] for c in self.corrections if c.get("op") == "add"}
        for k, m in enumerate(scene.models):
            player = scene.player_of(m)
            models.append(
                {
                    "id": m.id,
                    "unit": m.unit,
                    "player": player,
                    "color": players[player].color if player in players else None,
                    "x": m.x,
                    "y": m.y,
                    "rx": float(fp.a_in[k]),
                    "ry": float(fp.b_in[k]),
                    "facing_deg": m.facing_deg,
                    "sigma_in": m.sigma_in,
                    "base": m.base,
                    "base_sigma_in": m.base_sigma_in,
                    "unsure_size": m.base_sigma_in >= UNSURE_SIZE_IN,  # drawn for the players to check
                    "corrected": m.id in corrected,
                    "on_hex_edge": m.id in on_edge,  # which hex it stands in is unsure: the players say
                }
            )
        units = []
        for u in scene.units:
            ruling = by_unit.get(u.id)
            units.append(
                {
                    "id": u.id,
                    "name": u.name,
                    "player": u.player,
                    "models": [m.id for m in scene.models_of(u.id)],
                    "coherency": ruling.verdict.value if ruling else None,
                    "coherency_reasons": list(ruling.reasons) if ruling else [],
                    "coherency_rule": ruling.rule if ruling else None,
                }
            )
        objectives = []
        for o in scene.objectives:
            control: Ruling | None = None
            if "controls" in system.questions:
                found, more = _safe_rulings(lambda o=o: [system.controls(scene, o.id)])
                notes += more
                control = found[0] if found else None
            holder = control.subject[1] if control and len(control.subject) > 1 else None
            objectives.append(
                {
                    "id": o.id,
                    "x": o.x,
                    "y": o.y,
                    "r_in": o.diameter_mm / 2 / 25.4,
                    "controller": holder if holder in players else None,
                    "verdict": control.verdict.value if control else None,
                    "reasons": list(control.reasons) if control else [],
                    "rule": control.rule if control else None,
                }
            )
        terrain = [
            {
                "id": t.id,
                "kind": t.kind,
                "polygon": [list(p) for p in t.polygon],
                "blocks_sight": profile.sight_mode(t.kind, t.traits) is not None,
            }
            for t in scene.terrain
        ]
        return {
            "version": self.version,
            "game_id": self.game_id,
            "game": scene.game,
            "game_name": profile.name,
            "scenario": self.scenario,
            "round": self.round,
            "table": {"width_in": scene.width_in, "depth_in": scene.depth_in, **hex_mat},
            "players": [{"id": p.id, "name": p.name, "color": p.color} for p in scene.players],
            "models": models,
            "units": units,
            "objectives": objectives,
            "terrain": terrain,
            # (a model the players have said was taken off is no longer asked about)
            "camera": {**self.camera.to_json(), "unseen": [m for m in self.camera.unseen if m not in taken_off]},
            "problems": self.problems + notes,
            # corrections naming a piece the camera no longer shows (a casualty, a model lifted): kept, and
            # applied again when it is back; a note, not a problem
            "skipped": list(self.skipped),
            "corrections": len(self.corrections),
        }

    # ---- asking -------------------------------------------------------------------------
    def model_info(self, model_id: str) -> dict[str, Any]:
        scene = self.scene
        try:
            model = scene.model(model_id)
        except KeyError:
            raise NotFoundError(f"no model {model_id!r} on the table") from None
        unit = scene.unit(model.unit)
        return {
            "model": {
                "id": model.id,
                "base": model.base,
                "x": model.x,
                "y": model.y,
                "sigma_in": model.sigma_in,
                "base_sigma_in": model.base_sigma_in,
                "unsure_size": model.base_sigma_in >= UNSURE_SIZE_IN,
            },
            "bases": list(KNOWN_BASES),  # what the players may say it stands on instead
            "hexes": _hex_choices(scene, model),  # on a hex edge: the hexes it may stand in, for the players to say
            "unit": {"id": unit.id, "name": unit.name, "player": unit.player, "keywords": list(unit.keywords)},
            "profile": dict(unit.profile),
            "state": {**dict(unit.state), **dict(model.state)},
        }

    def measure(self, a_ref: str, b_ref: str) -> dict[str, Any]:
        scene = self.scene
        try:
            d = measure(scene, a_ref, b_ref)
        except UnknownThingError as error:
            raise NotFoundError(str(error)) from None
        out = d.to_json()
        out["text"] = f'{d.distance_in:.2f}" ± {2 * d.sigma_in:.2f}" (2σ)' if d.sigma_in else f'{d.distance_in:.2f}"'
        return out

    def unit_info(self, unit_id: str) -> dict[str, Any]:
        """Every page with a unit selected asks again on each update: answered once per table version."""
        with self._lock:
            version, cached = self.version, self._unit_info.get(unit_id)
        if cached is not None:
            return cached
        info = self._compute_unit_info(unit_id)
        with self._lock:
            if self.version == version:
                self._unit_info[unit_id] = info
        return info

    def _compute_unit_info(self, unit_id: str) -> dict[str, Any]:
        scene = self.scene
        try:
            unit = scene.unit(unit_id)
        except KeyError:
            raise NotFoundError(f"no unit {unit_id!r} in the game") from None
        system = system_for(scene.game)
        members = scene.models_of(unit.id)
        reach = unit_reach(scene, unit)
        targets = []
        for enemy in scene.units:
            if enemy.player == unit.player or not scene.models_of(enemy.id) or not members:
                continue
            entry: dict[str, Any] = {"unit": enemy.id, "name": enemy.name, "player": enemy.player}
            if "can-target" in system.questions:
                found, notes = _safe_rulings(lambda e=enemy: [system.can_target(scene, unit.id, e.id)])
                entry["ruling"] = found[0].to_json() if found else None
                entry["problems"] = notes
            try:
                sight = line_of_sight(scene, f"unit:{unit.id}", f"unit:{enemy.id}")
                entry["visible"] = sight.visible
                entry["sight_verdict"] = sight.verdict.value  # too close to call where the sigma could flip it
                entry["visible_fraction"] = sight.visible_fraction
                entry["blocked_by"] = list(sight.blocked_by)
                entry["lines"] = [
                    {
                        "from": [scene.model(p["observer"]).x, scene.model(p["observer"]).y],
                        "to": [scene.model(p["target"]).x, scene.model(p["target"]).y],
                        "visible": p["visible"],
                        "verdict": p["verdict"],
                        "blocked_by": p["blocked_by"],
                    }
                    for p in sight.pairs
                ]
            except (UnknownThingError, QuestionError) as error:
                entry["problems"] = [*entry.get("problems", []), str(error)]
            targets.append(entry)
        ranges = {}
        if members:
            fp = scene.footprints(members)
            bases = shapely.union_all(
                [shapely.Point(m.x, m.y).buffer(float(fp.a_in[k])) for k, m in enumerate(members)]
            )
            for name, dist in (("move", reach.move_in), ("threat", reach.threat_in)):
                if dist is not None:
                    ring = bases.buffer(dist, quad_segs=12)
                    ranges[name] = [list(map(list, g.exterior.coords)) for g in getattr(ring, "geoms", [ring])]
        return {
            "unit": {"id": unit.id, "name": unit.name, "player": unit.player, "models": [m.id for m in members]},
            "profile": dict(unit.profile),
            "state": dict(unit.state),
            "reach": reach.to_json(),
            "ranges": ranges,
            "targets": targets,
            "last_move": _last_move(scene, system, unit.id),
        }

    def ask(self, question: str, args: list[str], options: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = ask(self.scene, question, args, options)
        except UnknownThingError as error:
            raise NotFoundError(str(error)) from None
        return answer.to_json() if isinstance(answer, Ruling) else answer

    # ---- corrections and set-up ------------------------------------------------------------
    def correct(self, correction: dict[str, Any]) -> dict[str, Any]:
        """Validate on a copy, then store and apply; a bad correction changes nothing."""
        with self._lock:
            if correction.get("op") == "move":  # kept with where the camera read it (web/corrections.py)
                seen = next((m for m in self.base.get("models", []) if m.get("id") == correction.get("model")), None)
                if seen is not None:
                    correction = {**correction, "seen_at": [float(seen["x"]), float(seen["y"])]}
            trial, skipped = apply_all(self.base, [c for c in self.corrections if c.get("id") not in self._left_out])
            mid = correction.get("model")
            off_table = correction.get("op") == "delete" and all(m.get("id") != mid for m in trial["models"])
            # (a model the camera lost sight of may be deleted: the players say it left the table)
            if off_table and (mid not in self.camera.unseen or mid in self._taken_off()):
                raise CorrectionError(f"model: {mid!r} is neither on the table nor one the camera lost sight of")
            why = apply_one(trial, correction)
            if why is not None:
                raise CorrectionError(why)
            try:
                scene = self._validated(trial)
            except SceneError as error:
                raise CorrectionError(str(error).replace("table: ", "")) from None
            stored_id = self.store.add_correction(self.game_id, correction)
            self.corrections.append({"id": stored_id, **correction})
            self._scene, self.skipped = scene, skipped
            self._refresh()
            self.snapshot(f"correction {stored_id}: {correction['op']}")
            return {"id": stored_id, "version": self.version}

    def setup(self, game: str, scenario: str | None) -> dict[str, Any]:
        """Start a new game of this system (the table as now seen, corrections kept)."""
        with self._lock:
            if game not in SYSTEMS:
                raise CorrectionError(f"game: tablesight does not referee {game!r} (it does: {', '.join(SYSTEMS)})")
            if scenario is not None and game != "grinding-annihilation":
                raise CorrectionError(f"scenario: only grinding-annihilation has scenarios, not {game!r}")
            old = (self.game, self.scenario, self.round)
            self.game, self.scenario, self.round = game, scenario, 1
            try:
                scene, skipped = self._build(self.base, self.corrections)
            except SceneError as error:
                self.game, self.scenario, self.round = old
                raise CorrectionError(str(error)) from None
            row = self.store.new_game(game, scenario)
            for c in self.corrections:
                if c.get("id") not in self._left_out:  # what no longer fits the table stays behind
                    self.store.add_correction(row.id, {k: v for k, v in c.items() if k != "id"})
            self.game_id, self.corrections = row.id, self.store.corrections(row.id)
            self._left_out = {}
            self._scene, self.skipped = scene, skipped
            self._refresh()
            self.snapshot("set-up")
            return {"game_id": self.game_id, "game": game, "scenario": scenario}

    # ---- rounds --------------------------------------------------------------------------
    def round_score(self) -> dict[str, Any]:
        """What 'End round' proposes: the game's own scoring of the table as it is now."""
        scene = self.scene
        try:
            score = system_for(scene.game).score(scene)
        except QuestionError as error:
            raise ConflictError(f"cannot score this table: {error}") from None
        return {"round": self.round, "score": score, "version": self.version}

    def confirm_round(self, round_: int) -> dict[str, Any]:
        with self._lock:
            if round_ != self.round:
                raise ConflictError(f"round {round_} is not the round being played (round {self.round})")
            proposal = self.round_score()
            snapshot_id = self.snapshot(f"end of round {round_}")
            self.store.confirm_round(self.game_id, round_, proposal["score"], snapshot_id)
            self.round += 1
            self._scene, self.skipped = self._build(self.base, self.corrections)
            self._refresh()
            return {"confirmed": round_, "next_round": self.round, "score": proposal["score"]}

    # ---- keeping the game ------------------------------------------------------------------
    def snapshot(self, reason: str) -> int:
        with self._lock:
            scene = self._scene
            system = system_for(scene.game)
            rulings, notes = _safe_rulings(lambda: system.rulings(scene))
            self._last_snapshot_at = time.monotonic()
            return self.store.add_snapshot(
                self.game_id,
                self.round,
                reason,
                scene.to_dict(),
                [r.to_json() for r in rulings] + [{"problem": n} for n in notes],
                thumbnail_png(scene),
            )

    def reopen(self, snapshot_id: int) -> dict[str, Any]:
        found = self.store.snapshot(self.game_id, snapshot_id)
        if found is None:
            raise NotFoundError(f"no snapshot {snapshot_id} in game {self.game_id}")
        return found

    def export(self) -> dict[str, Any]:
        game = self.store.game(self.game_id)
        assert game is not None
        return {
            "format": "tablesight-game/1",
            "game": {"id": game.id, "game": game.game, "scenario": game.scenario, "round": game.round},
            "rounds": self.store.rounds(self.game_id),
            "corrections": self.store.corrections(self.game_id),
            "snapshots": [self._exported(s["id"]) for s in self.store.snapshots(self.game_id)],
            "current_scene": self.scene.to_dict(),
        }

    def _exported(self, snapshot_id: int) -> dict[str, Any]:
        found = self.store.snapshot(self.game_id, snapshot_id) or {}
        found.pop("thumbnail", None)  # served apart, as PNG
        return {**found, "thumbnail": f"/api/snapshots/{snapshot_id}/thumbnail.png"}

    def score_sheet_csv(self) -> str:
        rounds = self.store.rounds(self.game_id)
        players = [p.id for p in self.scene.players]
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["round", *players, "evidence"])
        for r in rounds:
            points = r["score"].get("vp", {})
            writer.writerow(
                [r["round"], *[points.get(p, "") for p in players], " | ".join(r["score"].get("evidence", []))]
            )
        return out.getvalue()
