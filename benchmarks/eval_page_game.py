"""The scripted game of ``eval_live_game.py`` played through the referee page, as players use it.

``eval_live_game.py`` drives the tracker itself: it starts it from the true units and tells it which unit each
activation moves. The page does neither. Here each frame goes through what the page's ticker runs
(``web.app.read_frame``: the camera feed, its tracker handed the players' units, the game session with the
players' corrections), and the players do at the deployment what the page lets them: import each army's roster,
lasso each unit's models into it, and add a model the camera missed where it stands. Nobody tells the page which
unit moves. What is scored is what the page shows (``GameSession.view``, ``unit_info``):

- identity: at every frame, each model's id (the one the players gave it at the deployment) sits on that model's
  own piece of the table the page last analysed;
- moves: each unit's last move as the page records it (``last_move``: where each model stood when the unit was
  activated) against the truth, and each model's length moved, start to where the page shows it now;
- hands: no update while a hand is over the table;
- casualties (``--casualties``): a model removed from the table at a round's start, which the players leave to the
  page (or, with ``--players-take-off``, say was taken off where the page lists it as not seen), is not shown
  standing on another model's piece;
- models put down: each, once the table is still after it, shown within 0.25" of where it stands (a move the motion
  gate lets by leaves the identity score whole, since that is against the table last analysed, and shows here).

Run: ``python benchmarks/eval_page_game.py [--game focal-point] [--seed 45] [--rounds 4] [--model-at-a-time] [--jitter 0.3] [--casualties] [--bump K] [--flicker 0.03] [--banding 0.03] [--white-balance 0.02] [--terrain found|true|none] [--players-answer] [--players-take-off]``.
Seeded; a few minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from eval_live_game import (
    add_game_option,
    add_terrain_option,
    casualty,
    check_light_fractions,
    light_bands,
    move_steps,
    opening_table,
    players_terrain,
    script,
)

from calibration.lens import LensModel
from calibration.monitor import RETRY_ALL_MARKERS_FRAMES, WAIT_ALL_MARKERS_FRAMES
from calibration.table_frame import calibrate
from geometry.shapes import base_semi_axes_in
from vision.analyze import make_detector
from vision.live.sources import IteratorSource
from vision.synth.table import lay_card, render_table
from web.app import read_frame, start_session
from web.camera_feed import CameraFeed
from web.corrections import check_roster_correction
from web.session import MOVE_EVENTS, GameSession
from web.store import GameStore

IDENTITY_RADIUS_IN = 0.25  # a model placed by the players at the deployment: this close to its piece


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--still-frames", type=int, default=4, help="frames of the still table after each move")
    parser.add_argument("--model-at-a-time", action="store_true", help="each unit moved one model at a time")
    parser.add_argument("--trace", action="store_true", help="at the end, the model-frames each model's id was off")
    parser.add_argument(
        "--jitter", type=float, default=0.0, help="inches (1 sigma) each model is put down off its unit's shift"
    )
    parser.add_argument(
        "--restart",
        type=int,
        default=None,
        help="the page is restarted (a new feed, the game resumed from its file) before this activation (1: the "
        "first), which the players play while it is down",
    )
    parser.add_argument(
        "--casualties",
        action="store_true",
        help="at the start of rounds 2-4 one model (of the biggest unit) is lifted off the table as a casualty",
    )
    parser.add_argument(
        "--bump",
        type=int,
        default=None,
        help="before this activation the camera is knocked: turned BUMP_DEG about its axis for the rest of the game",
    )
    parser.add_argument("--bump-deg", type=float, default=1.5)
    parser.add_argument(
        "--bump-covering",
        type=int,
        default=None,
        metavar="MARKER",
        help="the hand that knocks the camera lies over this calibration marker for a few frames",
    )
    parser.add_argument(
        "--bump-in-move", action="store_true", help="the camera is knocked by the hand moving activation K's unit"
    )
    parser.add_argument(
        "--card",
        default=None,
        metavar="MARKERS",
        help="a card lies over these calibration markers (comma-separated) from the knock on (--bump), past the "
        "page's wait for them, or else from the set-up on: the table is mapped from the others",
    )
    parser.add_argument(
        "--card-activations", type=int, default=6, help="the card is lifted after this many activations"
    )
    parser.add_argument(
        "--no-lens", action="store_true", help="the players have no lens file: the page reads the lens from the markers"
    )
    parser.add_argument(
        "--flicker",
        type=float,
        default=0.0,
        help="each frame's brightness scaled by 1 + this (1 sigma): a flickering light, a webcam's exposure stepping",
    )
    parser.add_argument(
        "--banding",
        type=float,
        default=0.0,
        help="bands of light across each frame, this much brighter and darker (a rolling shutter under a flickering "
        "light), moving from frame to frame",
    )
    parser.add_argument(
        "--white-balance",
        type=float,
        default=0.0,
        help="each frame's colour channels scaled apart by 1 + this (1 sigma each): a webcam's white balance wandering",
    )
    parser.add_argument(
        "--players-answer",
        action="store_true",
        help="where the page asks which model is which (identity uncertain), the players drag each model it names "
        "onto its own piece",
    )
    parser.add_argument(
        "--players-take-off",
        action="store_true",
        help="the players press Taken off for each casualty the page lists as not seen by the camera",
    )
    add_game_option(parser)
    add_terrain_option(parser)
    args = parser.parse_args()
    check_light_fractions(parser, args)
    game = args.game
    started = time.perf_counter()
    first, off_table = opening_table(args.seed, game)
    scene = first.scene
    activations = script(scene, args.rounds, np.random.default_rng(args.seed), args.jitter)
    lens = LensModel(first.camera.K, first.camera.dist, first.camera.size)
    players = {p["id"]: p["color"] for p in scene["players"]}
    unit_of = {m["id"]: m["unit"] for m in scene["models"]}
    radius_of = {m["id"]: base_semi_axes_in(m["base"])[1] for m in scene["models"]}
    noise = np.random.default_rng(args.seed + 1)
    print(
        f"{game} seed {args.seed}: {len(scene['models'])} models in {len(scene['units'])} units, "
        f"{len(activations)} activations over {args.rounds} rounds, through the page (not told which unit moves)"
    )

    shown: list[np.ndarray] = []  # the frame the camera shows now

    def frames() -> Any:
        while True:
            yield shown[-1]

    detector = make_detector("auto")
    terrain = players_terrain(args.terrain, scene, detector, first.empty, calibrate(first.empty, first.layout, lens))
    wait_frames = 0  # after a knock with a card down: the frames the players wait (about 3 s of a webcam)

    def camera() -> CameraFeed:
        return CameraFeed(
            lambda: IteratorSource(frames()),
            first.layout,
            "scripted camera",
            game,
            None if args.no_lens else lens,
            players,
            detector,
            terrain=terrain,
        )

    feed = camera()
    folder = Path(tempfile.mkdtemp(prefix="page-game-"))
    session = GameSession(GameStore(folder / "game.sqlite"), feed.empty_scene())
    truth = {m["id"]: (m["x"], m["y"]) for m in scene["models"]}
    page_id: dict[str, str] = {}  # true model -> the id the players gave it on the page
    counts = {
        "model_frames": 0,
        "identity": 0,
        "hand_frames": 0,
        "false_updates": 0,
        "dead_frames": 0,
        "dead_shown": 0,
        "analyses": 0,
        "asked_uncertain": 0,
        "answered": 0,
        "taken_off": 0,
    }
    removed: set[str] = set(off_table)  # casualties, off the table (and on a hex mat those no hex held)
    dead_on: dict[str, str] = {}  # casualty -> a model whose piece the page showed it on
    analysed = dict(truth)  # the table as the page last analysed it
    off: dict[str, int] = {}  # model -> frames its id was off

    turn: list[np.ndarray] = []  # the knocked camera's roll, as an image rotation about the principal point
    knocked_said: list[str] = []  # what the page said of its camera once it was knocked

    card_markers = {int(k) for k in args.card.split(",")} if args.card is not None else set()
    card_on = [False]
    refined_said: list[str] = []  # what the page said when the markers under the card were back in view
    # (activation phase, model) -> how far the page shows it from where it stands, after each activation
    place_off: dict[str, list[float]] = {}
    # each model put down, how far from where it stands the page shows it once the table is still: a move the gate
    # let by is seen here (the identity score is against the table last analysed, and is blind to it)
    put_down_off: list[float] = []
    still_frames: dict[str, int] = {}  # phase -> frames with no hand over the table
    covered_said: dict[str, int] = {}  # ...of them, those the page said something covers the table
    phase_errors: dict[str, list[float]] = {}  # phase -> each move's length error
    phase_starts: dict[str, list[float]] = {}  # phase -> how far each move's recorded start is off
    phase = ["before the knock" if args.bump is not None else "the game"]
    card_from = args.bump if args.bump is not None else 1  # the activation before which the card is laid
    if card_markers and args.bump is None:  # on the table from the set-up on
        card_on[0], phase[0] = True, "card on"

    def show(image: np.ndarray, hand: bool) -> None:
        nonlocal analysed
        if card_on[0]:
            image = lay_card(first, image, card_markers)
        if turn:  # (a roll about the optical axis is exact through a lens whose distortion is radial)
            image = cv2.warpAffine(image, turn[0], image.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)
        gain: Any = 1.0 + noise.normal(0, args.flicker) if args.flicker else 1.0  # (no draw without: the same noise)
        if args.banding:
            gain = gain * light_bands(image.shape[0], args.banding, noise)
        if args.white_balance:
            gain = gain * (1.0 + noise.normal(0, args.white_balance, 3))
        shown.append(np.clip(image * gain + noise.normal(0, 1.5, image.shape), 0, 255).astype(np.uint8))
        del shown[:-1]
        base_before = json.dumps(session.base.get("models", []), sort_keys=True)
        read_frame(feed, session)
        if turn and session.camera.message not in knocked_said[-1:]:
            knocked_said.append(session.camera.message)
        if "in view again" in session.camera.message and not refined_said:
            refined_said.append(session.camera.message)
        updated = json.dumps(session.base.get("models", []), sort_keys=True) != base_before  # a new analysis
        if hand:
            counts["hand_frames"] += 1
            counts["false_updates"] += updated
        else:  # the table still: what is said to cover it covers nothing (or a card lying on calibration markers)
            still_frames[phase[0]] = still_frames.get(phase[0], 0) + 1
            covered_said[phase[0]] = covered_said.get(phase[0], 0) + ("something covers" in session.camera.message)
            if updated:
                analysed = dict(truth)
                # (how often the page asks the players which is which: honest doubt has a cost to them)
                counts["analyses"] += 1
                counts["asked_uncertain"] += "identity uncertain for" in session.camera.message
                if args.players_answer:
                    answer(session.camera.message)
            if args.players_take_off:
                take_off()
        if page_id:
            score()

    def answer(message: str) -> None:
        """The players' answer to "identity uncertain for A, B - confirm which is which": each model named dragged
        onto its own piece (where it stands), as the page's move correction."""
        said = message.partition("identity uncertain for ")[2].partition(" - confirm")[0]
        true_of = {pid: mid for mid, pid in page_id.items()}
        for pid in filter(None, said.split(", ")):
            mid = true_of.get(pid)
            if mid in analysed:
                x, y = analysed[mid]
                session.correct({"op": "move", "model": pid, "x": float(x), "y": float(y)})
                counts["answered"] += 1

    def take_off() -> None:
        """The players look at the page's list of models the camera does not see, and say which were casualties."""
        true_of = {pid: mid for mid, pid in page_id.items()}
        for pid in session.view()["camera"]["unseen"]:
            if true_of.get(pid) in removed:
                session.correct({"op": "delete", "model": pid})
                counts["taken_off"] += 1

    def score() -> None:
        at = {m["id"]: (m["x"], m["y"]) for m in session.view()["models"]}
        for mid, pid in page_id.items():
            if mid not in analysed:  # a casualty off the table the page last analysed: its id must sit on no piece
                counts["dead_frames"] += 1
                if pid in at:
                    counts["dead_shown"] += 1
                    x, y = at[pid]
                    on = [k for k, xy in analysed.items() if math.dist(xy, (x, y)) <= radius_of[k]]
                    if on and mid not in dead_on:
                        dead_on[mid] = on[0]
                continue
            counts["model_frames"] += 1
            if pid not in at:
                continue
            x, y = at[pid]
            nearest = min(analysed, key=lambda k: math.hypot(analysed[k][0] - x, analysed[k][1] - y))
            on_own = nearest == mid and math.hypot(analysed[mid][0] - x, analysed[mid][1] - y) <= radius_of[mid]
            counts["identity"] += on_own
            if not on_own:
                off[mid] = off.get(mid, 0) + 1
                if args.trace and off[mid] == 1:
                    print(
                        f"  {mid} (page id {pid}) first off: shown at ({x:.2f}, {y:.2f}), stands at "
                        f"({analysed[mid][0]:.2f}, {analysed[mid][1]:.2f}); nearest model there {nearest}"
                    )

    def deploy() -> None:
        """The players at the deployment: rosters, each unit lassoed, a missed model added where it stands."""
        for player, colour in players.items():
            roster = {
                "format": "tablesight-roster/1",
                "game": game,
                "player": {"id": player, "color": colour},
                "units": [{"id": u["id"], "name": u["name"]} for u in scene["units"] if u["player"] == player],
            }
            session.correct(check_roster_correction(json.dumps(roster), "json"))
        found = {m["id"]: (m["x"], m["y"]) for m in session.base["models"]}
        for m in scene["models"]:
            near = min(found, key=lambda k: math.dist(found[k], (m["x"], m["y"])), default=None)
            if near is not None and math.dist(found[near], (m["x"], m["y"])) < IDENTITY_RADIUS_IN:
                page_id[m["id"]] = near
                del found[near]
        for unit in scene["units"]:
            ids = [page_id[m] for m, u in unit_of.items() if u == unit["id"] and m in page_id]
            if ids:
                session.correct({"op": "assign", "unit": unit["id"], "models": ids})
        missed = [m for m in scene["models"] if m["id"] not in page_id]
        for m in missed:
            page_id[m["id"]] = f"p-{m['id']}"
            model = {"id": page_id[m["id"]], "unit": m["unit"], "base": m["base"], "x": m["x"], "y": m["y"]}
            session.correct({"op": "add", "model": model})
        print(f"  deployment: {len(scene['models']) - len(missed)} models found and assigned, {len(missed)} added")

    show(first.empty, False)  # the set-up
    for _ in range(args.still_frames):
        show(first.image, False)
    deploy()
    errors, starts_off = [], []
    unseen_start = 0  # moves the page said it saw no start of (the model picked up or hidden then)
    spurious: list[tuple[int, str]] = []  # (activation, unit): another unit's move record changed during it

    def move_records() -> dict[str, str]:
        """Each unit's latest move record in the page's history (what the rules judge), as text."""
        latest = {}
        for event in session.base.get("history", []):
            if event.get("event") in MOVE_EVENTS:
                latest[str(event.get("unit"))] = json.dumps(event, sort_keys=True)
        return latest

    casualty_round = 1
    for k, (rnd, unit, positions) in enumerate(activations, 1):
        records_before = move_records()
        if (
            args.casualties and rnd > casualty_round and len(truth) >= 2
        ):  # a round begins: a hand lifts one casualty off the table
            # (while two or more models stand: onefinity seed 145's hex mat held 2 of its 7 models)
            casualty_round = rnd
            dead = casualty(truth, unit_of)
            lifted = frozenset(removed | {dead})
            show(
                render_table(
                    args.seed, game, hard="crowded", models_at=truth, lifted=lifted, hand_at=truth[dead]
                ).image,
                True,
            )
            if args.trace:
                print(f"  round {rnd} begins: casualty {dead} lifted off from {truth[dead]}")
            removed.add(dead)
            del truth[dead]
            still = render_table(args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(removed))
            for _ in range(args.still_frames):
                show(still.image, False)
        if k == args.bump:  # knocked between activations (or by the move's hand): the page recalibrates, ids kept
            turn.append(cv2.getRotationMatrix2D(tuple(first.camera.K[:2, 2]), args.bump_deg, 1.0))
        if k == args.bump and args.bump_covering is not None:
            marker = next(m for m in first.layout.markers if m.id == args.bump_covering)
            hand_at = (marker.x_in, marker.y_in)
            over = render_table(
                args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(removed), hand_at=hand_at
            )
            for _ in range(3):
                show(over.image, True)
        if k == args.bump:
            phase[0] = "card on" if card_markers else "after the knock"
        if k == args.bump and card_markers:
            card_on[0] = True
            wait_frames = WAIT_ALL_MARKERS_FRAMES + args.still_frames
        if card_on[0] and k == card_from + args.card_activations:
            card_on[0], phase[0] = False, "card lifted"  # lifted, and the table still for a second
            still = render_table(args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(removed))
            for _ in range(RETRY_ALL_MARKERS_FRAMES + args.still_frames):
                show(still.image, False)
            print(f"  card lifted before activation {k}: the page said {refined_said or 'nothing of it'}")
            records_before = move_records()  # mapped again from every marker: every record read before, corrected
        if k == args.bump and not args.bump_in_move:
            still = render_table(args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(removed))
            for _ in range(max(3 * args.still_frames, wait_frames)):
                show(still.image, False)
        ids = [m for m, u in unit_of.items() if u == unit and m not in removed]
        if not ids:
            continue
        before = dict(truth)
        if k == args.restart:  # the server stops; the players play this activation; it starts again on the file
            session.store.close()
            truth = {i: positions.get(i, xy) for i, xy in truth.items()}
            table_now = render_table(args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(removed)).image
            shown.append(table_now)
            feed = camera()
            session = start_session(GameStore(folder / "game.sqlite"), feed)
            for _ in range(3 * args.still_frames):  # the set-up on a table with models on it, then the gate
                show(table_now, False)
                if any(w in session.camera.message for w in ("game resumed", "named afresh")):
                    break
            told = [w for w in session.camera.message.split("; ") if "resumed" in w or "afresh" in w]
            print(f"  restarted before activation {k} ({unit} moved while the page was down): {told}")
        steps = [] if k == args.restart else move_steps(ids, before, positions, args.model_at_a_time)
        for step in steps:
            centre = tuple(np.mean([truth[i] for i in step], axis=0))
            hand = render_table(
                args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(step) | removed, hand_at=centre
            )
            show(hand.image, True)
            truth = {k: positions[k] if k in step else xy for k, xy in truth.items()}
            still = render_table(args.seed, game, hard="crowded", models_at=truth, lifted=frozenset(removed))
            for _ in range(args.still_frames):
                show(still.image, False)
            shown_now = {m["id"]: (m["x"], m["y"]) for m in session.view()["models"]}
            for i in step:
                if i not in removed:
                    where = shown_now.get(page_id[i])
                    put_down_off.append(math.dist(where, truth[i]) if where else math.inf)
                    if args.trace and put_down_off[-1] > 0.25:
                        shown_as = next((m for m in session.view()["models"] if m["id"] == page_id[i]), None)
                        print(
                            f"  activation {k}: {i} put down at {truth[i]}, shown at {where} once still "
                            f"(its rim {still.rim_visible.get(i, 0.0):.0%} in view): {shown_as}"
                        )
        shown_at = {m["id"]: (m["x"], m["y"]) for m in session.view()["models"]}
        place_off.setdefault(phase[0], []).extend(
            [math.dist(shown_at[page_id[i]], xy) for i, xy in truth.items() if page_id[i] in shown_at]
        )
        records = move_records()
        changed = [u for u in sorted(records) if u != unit and records[u] != records_before.get(u)]
        spurious += [(k, u) for u in changed]
        for u in changed if args.trace else []:
            print(f"  activation {k} ({unit}): {u}'s move record changed from {records_before.get(u)} to {records[u]}")
        move = session.unit_info(unit).get("last_move") or {}
        start = move.get("from", {})
        at = {m["id"]: (m["x"], m["y"]) for m in session.view()["models"]}
        # (a model the page says it did not see where it stood when its unit was activated: its move not recorded)
        unseen_from = move.get("unseen_from", [])
        for i in ids:
            pid = page_id[i]
            recorded_from = None if pid in unseen_from else start.get(pid)
            unseen_start += pid in unseen_from
            starts_off.append(math.dist(recorded_from, before[i]) if recorded_from else math.inf)
            true_length = math.dist(positions[i], before[i])
            length = math.dist(recorded_from, at[pid]) if recorded_from and pid in at else math.inf
            errors.append(abs(length - true_length))
            if args.trace and errors[-1] <= 0.05 < starts_off[-1]:
                print(
                    f"  activation {k} ({phase[0]}): {i}'s start {starts_off[-1]:.3f}\" off: recorded {recorded_from}, "
                    f'stood at {before[i][0]:.3f}, {before[i][1]:.3f} (its length within 0.05")'
                )
            if args.trace and errors[-1] > 0.05:
                print(
                    f'  activation {k} ({phase[0]}): {i} moved {true_length:.3f}", recorded {length:.3f}" from '
                    f"{recorded_from} (stood at {before[i][0]:.3f}, {before[i][1]:.3f}; now shown at {at.get(pid)}, "
                    f"stands at {positions[i][0]:.3f}, {positions[i][1]:.3f})"
                )
            phase_errors.setdefault(phase[0], []).append(errors[-1])
            phase_starts.setdefault(phase[0], []).append(starts_off[-1])

    n = max(counts["model_frames"], 1)
    print(
        f"identity kept: {counts['identity']}/{counts['model_frames']} model-frames = {counts['identity'] / n:.2%} "
        f"(target >= 99.5%): the id the players gave sits on that model's own piece of the table last analysed"
    )
    finite = [e for e in errors if math.isfinite(e)]
    print(
        f"moves (the page's last move of each unit, start to where the model is shown): {sum(e <= 0.05 for e in errors)}"
        f'/{len(errors)} within 0.05" of the true length; {len(errors) - len(finite)} not recorded; '
        f'median error {float(np.median(finite)) if finite else float("nan"):.3f}"'
        + (f"; {unseen_start} of those not recorded said their start was not seen" if unseen_start else "")
    )
    print(f'  starts within 0.05" of where the model stood: {sum(o <= 0.05 for o in starts_off)}/{len(starts_off)}')
    if put_down_off:
        print(
            f'models put down shown within 0.25" of where they stand once the table was still: '
            f"{sum(o <= 0.25 for o in put_down_off)}/{len(put_down_off)}"
            f'; max {max(put_down_off):.3f}" off'
        )
    print(f"hands over the table: {counts['hand_frames']} frames, {counts['false_updates']} false updates (target 0)")
    print(
        f"spurious moves (a unit's move record changed while another was activated): {len(spurious)}"
        + (f": {spurious}" if spurious else "")
    )
    print(
        f"analyses after which the page asked which model is which (identity uncertain): "
        f"{counts['asked_uncertain']}/{counts['analyses']}"
        + (f"; the players dragged {counts['answered']} models onto their own pieces" if args.players_answer else "")
    )
    if args.players_take_off:
        print(f"casualties the players said were taken off (the page's list of models not seen): {counts['taken_off']}")
    said = ", ".join(f"{name} {covered_said[name]}/{n}" for name, n in still_frames.items())
    print(f"frames with no hand over the table said to be covered: {said}")
    markers_off = [
        min(math.dist((o["x"], o["y"]), (t["x"], t["y"])) for t in scene["objectives"])
        for o in session.view().get("objectives", [])
    ]
    if markers_off:
        print(
            f"objective markers shown at the end: {len(markers_off)} of {len(scene['objectives'])}, at most "
            f'{max(markers_off):.3f}" off'
        )
    if args.bump is not None:
        when = "by the hand moving" if args.bump_in_move else "before"
        print(f"camera knocked {args.bump_deg} deg {when} activation {args.bump}; the page said: {knocked_said[:6]}")
    for name, offs in place_off.items():
        if len(place_off) > 1:
            errs, starts = phase_errors.get(name, []), phase_starts.get(name, [])
            print(
                f'  {name}: moves within 0.05" {sum(e <= 0.05 for e in errs)}/{len(errs)}, starts within 0.05" '
                f"{sum(o <= 0.05 for o in starts)}/{len(starts)}"
            )
        if offs:
            print(
                f'  places shown after each activation, {name}: median {np.median(offs):.3f}", p95 '
                f'{np.percentile(offs, 95):.3f}", max {max(offs):.3f}" off where the model stands ({len(offs)})'
            )
    if args.casualties:
        print(
            f"casualties {sorted(removed - off_table)}: shown in {counts['dead_shown']} of {counts['dead_frames']} model-frames "
            f"after their removal; on another model's piece: {dead_on or 'never'}"
        )
    if args.trace:
        added = [m for m, pid in page_id.items() if pid.startswith("p-")]
        print(f"  ids off, model-frames by model: {dict(sorted(off.items()))}; added by the players: {added}")
    print(f"whole run {time.perf_counter() - started:.0f} s")
    session.store.close()
    shutil.rmtree(folder)  # the run's game file is of no use after it; /tmp is shared with CI's clones


if __name__ == "__main__":
    main()
