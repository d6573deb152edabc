"""``tablesight serve``: the referee page and its API (FastAPI), live updates over a WebSocket.

Every request body is a strict Pydantic model (unknown fields refused), every
id is matched against the game, and every error is JSON ``{"error": ...}``
with a 4xx status; a refused request changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from rules import ga_scenarios
from rules.common import QuestionError
from rules.profiles import profile_for
from rules.systems import SYSTEMS
from tablesight.scene import field_path
from web.corrections import CorrectionError, check_roster_correction
from web.feeds import Feed, SampleFeed
from web.flux_watch import MAX_COST, FluxWatch
from web.guard import JOIN_COOKIE, Guard, GuardConfig
from web.refiner_adapting import RefinerAdapting
from web.rosters import RosterError
from web.session import ConflictError, GameSession, NotFoundError
from web.store import GameStore

Ident = Annotated[str, StringConstraints(pattern=r"^[^\s:]+$", min_length=1, max_length=64)]
Ref = Annotated[str, StringConstraints(pattern=r"^([a-z]+:)?[^\s:]+$", min_length=1, max_length=80)]
Coord = Annotated[float, Field(ge=-1000, le=1000, allow_inf_nan=False)]

STATIC = {  # the only files the server ever sends: fixed names, never a path from a request
    "app.js": "application/javascript",
    "style.css": "text/css",
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MoveCorrection(Strict):
    op: Literal["move"]
    model: Ident
    x: Coord
    y: Coord


class NewModel(Strict):
    id: Ident
    unit: Ident
    base: Annotated[str, StringConstraints(max_length=12)]
    x: Coord
    y: Coord
    facing_deg: Coord = 0.0


class AddCorrection(Strict):
    op: Literal["add"]
    model: NewModel


class DeleteCorrection(Strict):
    op: Literal["delete"]
    model: Ident


class TerrainCorrection(Strict):
    op: Literal["terrain"]
    terrain: Ident
    kind: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]{0,39}$")]


class BaseCorrection(Strict):
    """The players say which base a model stands on (the camera read its size wrongly or unsurely)."""

    op: Literal["base"]
    model: Ident
    base: Annotated[str, StringConstraints(max_length=12)]


class Correction(Strict):
    correction: Annotated[
        MoveCorrection | AddCorrection | DeleteCorrection | TerrainCorrection | BaseCorrection,
        Field(discriminator="op"),
    ]


class Assign(Strict):
    unit: Ident
    models: Annotated[list[Ident], Field(min_length=1, max_length=200)]


class RosterUpload(Strict):
    format: Literal["json", "yaml"]
    text: Annotated[str, StringConstraints(max_length=200_000)]


class Setup(Strict):
    game: Annotated[str, StringConstraints(max_length=40)]
    scenario: Annotated[str, StringConstraints(max_length=40)] | None = None


class Ask(Strict):
    question: Annotated[str, StringConstraints(max_length=40)]
    args: Annotated[list[Ref], Field(max_length=4)] = []
    options: dict[str, str | float | int | None] = {}


class ConfirmRound(Strict):
    round: Annotated[int, Field(ge=1, le=1000)]


class Join(Strict):
    code: Annotated[str, StringConstraints(max_length=12)]


@dataclass
class ServerConfig:
    db_path: str
    tick_s: float = 1.0
    guard: GuardConfig = field(default_factory=GuardConfig)
    feed_factory: Callable[[], Feed] = SampleFeed
    confirmed_dir: str | None = None  # where a camera game keeps each confirmed round's frame (for `adapt`)
    flux_factory: Callable[[], FluxWatch] | None = None  # Flux mode: pools read from a camera
    # a camera game's refiner adapted on its first confirmed rounds (needs confirmed_dir; web/refiner_adapting.py)
    adapting: RefinerAdapting | None = None


class Hub:
    """The WebSocket clients; each has its own small queue so a slow phone never holds up the others."""

    def __init__(self) -> None:
        self.clients: set[asyncio.Queue[str]] = set()
        self.sent_version = -1

    def publish(self, text: str) -> None:
        for queue in list(self.clients):
            if queue.full():  # drop the stale update, keep the newest
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(text)


def _message(view: dict[str, Any], frame_at: float | None = None) -> str:
    """``frame_at``: when the frame behind this view was read; ``sent_at``: when the update left."""
    now = time.time()
    return json.dumps({"type": "view", "frame_at": frame_at or now, "sent_at": now, "view": view})


def read_frame(feed: Feed, session: GameSession, adapting: RefinerAdapting | None = None) -> None:
    """One tick of the page: the feed's next frame, read with the players' units and refiner, into the session.
    (Also what benchmarks/eval_page_game.py runs a scripted game through.)"""
    if adapting is not None and hasattr(feed, "use_refiner"):
        wanted = adapting.refiner_for(session.game_id)
        try:
            feed.use_refiner(wanted)
        except Exception as error:  # an adapted refiner that will not load: the shipped one goes on
            adapting.reject(session.game_id, f"{wanted}: {error}")
            feed.use_refiner(None)
    if hasattr(feed, "take_units"):  # the players' units, and their word on which model is which, for the tracker
        taken = feed.take_units(session.scene.to_dict())
        if taken:
            session.camera_took(taken)
    if hasattr(feed, "take_off"):  # the models the players said left the table: the camera stops looking for them
        feed.take_off(session.taken_off())
    scene, camera = feed.next()
    note = adapting.note_for(session.game_id) if adapting is not None else ""
    if note:  # how the refiner stands, beside the camera's own word
        camera = dataclasses.replace(camera, message=f"{camera.message}; {note}")
    if scene is not None:
        session.set_base(scene, camera)
    else:
        session.set_camera(camera)


def start_session(store: GameStore, feed: Feed) -> GameSession:
    """The page's game at the server's start: the store's active game resumed (a restart mid-game), or a new one
    on the feed's first frame. A camera goes on with a resumed game's ids (``CameraFeed.resume``): the players'
    corrections name its models by them. (Also what benchmarks/eval_page_game.py restarts a scripted game with.)"""
    first, status = feed.next()
    session = GameSession(store, first if first is not None else feed.empty_scene())
    if session.resumed and first is None and hasattr(feed, "resume"):
        added = [str(c["model"].get("id")) for c in session.corrections if c.get("op") == "add" and "model" in c]
        feed.resume(session.scene.to_dict(), added, session.off_table())
    if first is not None:
        session.set_base(first, status)
    else:
        session.set_camera(status)
    return session


def create_app(config: ServerConfig) -> FastAPI:
    store = GameStore(config.db_path)
    feed = config.feed_factory()
    session = start_session(store, feed)
    hub = Hub()
    changed = asyncio.Event()
    flux = config.flux_factory() if config.flux_factory is not None else None

    async def flux_reader() -> None:
        assert flux is not None
        while True:
            try:
                await asyncio.to_thread(flux.step)
            except Exception as error:  # a broken frame never stops the server
                flux.say(f"Flux reading failed: {error}", stale=True)
            await asyncio.sleep(config.tick_s)

    async def ticker() -> None:
        while True:
            frame_at = time.time()
            try:
                await asyncio.to_thread(read_frame, feed, session, config.adapting)
            except Exception as error:  # a broken frame or feed never stops the server
                session.problems = [f"feed error: {error}"]
            view = session.view()
            if view["version"] != hub.sent_version:
                hub.sent_version = view["version"]
                hub.publish(_message(view, frame_at))
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout=config.tick_s)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        app.state.notify = lambda: loop.call_soon_threadsafe(changed.set)
        tasks = [asyncio.create_task(ticker())]
        if flux is not None:
            tasks.append(asyncio.create_task(flux_reader()))
        yield
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        feed.close()
        if config.adapting is not None:
            config.adapting.close()
        if flux is not None:
            flux.source.close()
        store.close()

    app = FastAPI(title="tablesight referee", lifespan=lifespan)
    app.state.session = session
    app.state.hub = hub
    app.state.notify = lambda: None
    guard_config = config.guard

    def changed_now() -> None:
        app.state.notify()

    # ---- errors: always JSON with a message, never a stack trace ---------------------------------
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = [f"{field_path(e['loc'])}: {e['msg']}" for e in error.errors()[:10]]
        return JSONResponse({"error": "; ".join(problems), "problems": problems}, status_code=422)

    @app.exception_handler(NotFoundError)
    async def not_found(_: Request, error: NotFoundError) -> JSONResponse:
        return JSONResponse({"error": str(error.args[0]) if error.args else "not found"}, status_code=404)

    @app.exception_handler(ConflictError)
    async def conflict(_: Request, error: ConflictError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=409)

    for kind in (CorrectionError, RosterError, QuestionError):

        @app.exception_handler(kind)
        async def bad(_: Request, error: Exception) -> JSONResponse:
            return JSONResponse({"error": str(error)}, status_code=400)

    # ---- the page ------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return resources.files("web").joinpath("static/index.html").read_text(encoding="utf-8")

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC:
            raise NotFoundError(f"no static file {name!r}")
        text = resources.files("web").joinpath(f"static/{name}").read_text(encoding="utf-8")
        return Response(text, media_type=STATIC[name])

    # ---- joining from a phone --------------------------------------------------------------
    @app.get("/api/join-code")
    def join_code(request: Request) -> dict[str, Any]:
        host = request.client is not None and request.client.host in guard_config.loopback
        if not host:
            raise NotFoundError("the join code is shown on the host's screen only")
        return {"lan": guard_config.lan, "code": guard_config.join_code if guard_config.lan else None}

    @app.post("/api/join")
    def join(body: Join) -> JSONResponse:
        if not guard_config.lan:
            return JSONResponse({"joined": True, "note": "this server is not on the network; no code needed"})
        if body.code != guard_config.join_code:
            return JSONResponse({"error": "wrong join code"}, status_code=403)
        response = JSONResponse({"joined": True})
        response.set_cookie(JOIN_COOKIE, guard_config.join_token, httponly=True, samesite="strict")
        return response

    # ---- reading the table ------------------------------------------------------------------
    @app.get("/api/view")
    def view() -> dict[str, Any]:
        return session.view()

    @app.get("/api/models/{model_id}")
    def model(model_id: Ident) -> dict[str, Any]:
        return session.model_info(model_id)

    @app.get("/api/units/{unit_id}")
    def unit(unit_id: Ident) -> dict[str, Any]:
        return session.unit_info(unit_id)

    @app.get("/api/measure")
    def measure(a: Annotated[Ref, Query()], b: Annotated[Ref, Query()]) -> dict[str, Any]:
        return session.measure(a, b)

    @app.post("/api/ask")
    def ask(body: Ask) -> dict[str, Any]:
        return session.ask(body.question, list(body.args), dict(body.options))

    @app.get("/api/calibration")
    def calibration() -> dict[str, Any]:
        camera: dict[str, Any] = session.view()["camera"]
        return camera

    @app.get("/api/games")
    def games() -> dict[str, Any]:
        return {
            "games": [{"id": g, "name": profile_for(g).name} for g in SYSTEMS],
            "scenarios": {"grinding-annihilation": list(ga_scenarios.SCENARIOS)},
            "current": {"game": session.game, "scenario": session.scenario, "game_id": session.game_id},
        }

    # ---- Flux mode -------------------------------------------------------------------------------
    @app.get("/api/flux")
    def flux_view() -> dict[str, Any]:
        return flux.view() if flux is not None else {"enabled": False}

    @app.get("/api/flux/can-pay")
    def flux_can_pay(
        player: Annotated[Ident, Query()], cost: Annotated[int, Query(ge=0, le=MAX_COST)]
    ) -> dict[str, Any]:
        if flux is None:
            raise NotFoundError("Flux mode is off: start the page with tablesight serve --flux SOURCE")
        return flux.can_pay(player, cost)

    # ---- set-up and corrections ---------------------------------------------------------------
    @app.post("/api/setup")
    def setup(body: Setup) -> dict[str, Any]:
        out = session.setup(body.game, body.scenario)
        changed_now()
        return out

    @app.get("/api/corrections")
    def corrections() -> list[dict[str, Any]]:
        return session.store.corrections(session.game_id)

    @app.post("/api/corrections")
    def correct(body: Correction) -> dict[str, Any]:
        out = session.correct(body.correction.model_dump())
        changed_now()
        return out

    @app.post("/api/assign")
    def assign(body: Assign) -> dict[str, Any]:
        scene = session.scene
        if body.unit not in {u.id for u in scene.units}:
            raise NotFoundError(f"no unit {body.unit!r} in the game (import its roster first)")
        missing = [m for m in body.models if m not in {x.id for x in scene.models}]
        if missing:
            raise NotFoundError(f"not on the table: {', '.join(missing)}")
        out = session.correct({"op": "assign", "unit": body.unit, "models": list(body.models)})
        changed_now()
        return out

    @app.post("/api/roster")
    def roster(body: RosterUpload) -> dict[str, Any]:
        out = session.correct(check_roster_correction(body.text, body.format))
        changed_now()
        return out

    # ---- rounds and the kept game -----------------------------------------------------------------
    @app.get("/api/round")
    def round_score() -> dict[str, Any]:
        return session.round_score()

    @app.post("/api/round/confirm")
    def confirm_round(body: ConfirmRound) -> dict[str, Any]:
        keep = getattr(feed, "keep_confirmed", None) if config.confirmed_dir else None
        scene = session.scene.to_dict() if keep is not None else None  # as confirmed, before the next round
        out = session.confirm_round(body.round)
        if keep is not None and config.confirmed_dir:
            try:
                kept = keep(scene, Path(config.confirmed_dir).expanduser(), f"game{session.game_id}-round{body.round}")
                out["kept_frame"] = str(kept) if kept else None
                if kept and config.adapting is not None:
                    out["refiner"] = config.adapting.round_kept(session.game_id)
            except OSError as error:  # the round stays confirmed; only the training copy is lost
                out["kept_frame_problem"] = str(error)
        changed_now()
        return out

    @app.get("/api/rounds")
    def rounds() -> list[dict[str, Any]]:
        return session.store.rounds(session.game_id)

    @app.get("/api/snapshots")
    def snapshots() -> list[dict[str, Any]]:
        return session.store.snapshots(session.game_id)

    @app.get("/api/snapshots/{snapshot_id}")
    def snapshot(snapshot_id: int) -> dict[str, Any]:
        found = session.reopen(snapshot_id)
        found.pop("thumbnail", None)
        return found

    @app.get("/api/snapshots/{snapshot_id}/thumbnail.png")
    def thumbnail(snapshot_id: int) -> Response:
        data = session.store.thumbnail(session.game_id, snapshot_id)
        if data is None:
            raise NotFoundError(f"no thumbnail for snapshot {snapshot_id}")
        return Response(data, media_type="image/png")

    @app.get("/api/export.json")
    def export() -> JSONResponse:
        return JSONResponse(
            session.export(),
            headers={"content-disposition": f'attachment; filename="tablesight-game-{session.game_id}.json"'},
        )

    @app.get("/api/scores.csv")
    def scores() -> PlainTextResponse:
        return PlainTextResponse(
            session.score_sheet_csv(),
            media_type="text/csv",
            headers={"content-disposition": f'attachment; filename="tablesight-scores-{session.game_id}.csv"'},
        )

    # ---- live updates -------------------------------------------------------------------------
    @app.websocket("/ws")
    async def live(websocket: WebSocket) -> None:
        await websocket.accept()
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=2)
        queue.put_nowait(_message(session.view()))
        hub.clients.add(queue)

        async def sender() -> None:
            while True:
                await websocket.send_text(await queue.get())

        task = asyncio.create_task(sender())
        try:
            while True:
                await websocket.receive_text()  # pings from the page; a disconnect ends the loop
        except WebSocketDisconnect:
            pass
        finally:
            hub.clients.discard(queue)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    app.add_middleware(Guard, config=guard_config)
    return app
