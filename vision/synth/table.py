"""Rendered photos of gaming tables with exact ground truth (seeded, deterministic).

The flat layer (mat, terrain footprints, objective markers, the kit's corner
markers, shadows) is painted top-down in table inches and photographed by
``Camera``; what stands up is drawn in 3-D afterwards: first the bases, solids
3-5 mm tall with bevelled sides in the team's colour (so the camera sees their
tops moved by parallax, and their sides on the near half), then miniatures and
terrain walls, far to near, so that figures lean with the perspective, overhang
and hide parts of neighbouring bases.
The truth is a scene (``tablesight-scene/1``) plus per-piece outlines in pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import shapely
import shapely.affinity

from calibration.layout import Layout
from calibration.lens import LensModel
from geometry.hexgrid import HexGrid
from geometry.shapes import BASE_HEIGHT_IN, KNOWN_BASES, MM_PER_IN, base_semi_axes_in
from vision.synth.camera import Camera, photo_effects
from vision.synth.markers_table import paint_markers

Image = npt.NDArray[np.uint8]
TEAM_COLOURS_BGR = [(40, 40, 200), (200, 90, 30), (40, 170, 40), (30, 200, 220), (160, 40, 160), (230, 230, 230)]
# A style never trained on (to measure adaptation): flagstone mats and other team colours.
STYLES = ("standard", "flagstone")
# How figures stand on their bases: 'blob' (a body covering most of the base top, as every render before session
# 25) or 'varied' (from slim figures that leave the plain top and thin rim in view, as the path tracer draws them,
# to blobs; some with a weapon or a limb reaching out).
FIGURE_STYLES = ("blob", "varied")
# Rims: 'palette' (each player a colour of the palette, as every render before session 36) or 'near-mat' (a
# player's rims, drawn anew per table, close to the mat's colour, as white rims on a pale mat or black on a dark
# one: the base's outer edge barely shows and its top alone stands out).
RIM_STYLES = ("palette", "near-mat")
NEAR_MAT_SHARE = 0.6  # with 'near-mat', each player's rims are near the mat's colour this often
GROUP_DARK_SHARE = 0.25  # a group's table (render_table's ``group``) has a dark mat this often
HELD_OUT_TEAM_COLOURS_BGR = [(0, 130, 255), (190, 170, 255), (140, 140, 0), (50, 50, 50), (120, 200, 150)]
GAMES = {
    "focal-point": (24.0, 24.0),
    "grinding-annihilation": (44.0, 60.0),
    "onefinity": (24.0, 24.0),
    "miniature-skirmish": (36.0, 36.0),
}


# Games played on a printed hex mat: the grid drawn on the mat and written into the scene (table.hex).
HEX_MATS: dict[str, dict[str, Any]] = {
    "onefinity": {"width_in": 1.5, "orientation": "pointy", "origin_x_in": 0.75, "origin_y_in": 0.75},
}


def paint_hexes(mat: npt.NDArray[np.float32], grid: dict[str, Any], ppi: float) -> None:
    """Darken thin hex outlines into a mat (table inches from the mat's corner) in place."""
    hexes = HexGrid(**grid)
    h, w = mat.shape[:2]
    q, r = np.meshgrid(np.arange(-40, 41), np.arange(-40, 41))
    cx, cy = hexes.to_table(q.ravel(), r.ravel())
    keep = (cx > -2) & (cx < w / ppi + 2) & (cy > -2) & (cy < h / ppi + 2)
    start = 30.0 if grid["orientation"] == "pointy" else 0.0
    angles = np.radians(start + 60.0 * np.arange(6))
    lines = np.zeros((h, w), np.uint8)
    outlines = [
        np.round(np.c_[x + hexes.size_in * np.cos(angles), y + hexes.size_in * np.sin(angles)] * ppi * 8).astype(
            np.int32
        )
        for x, y in zip(cx[keep], cy[keep], strict=True)
    ]
    cv2.polylines(lines, outlines, True, 255, max(1, int(0.04 * ppi)), cv2.LINE_AA, 3)
    mat *= (1.0 - 0.45 * lines.astype(np.float32) / 255.0)[..., None]


def paint_objectives(
    tex: npt.NDArray[np.float32], objectives: list[dict[str, Any]], ppi: float, border: float, rng: np.random.Generator
) -> None:
    """Objective discs (white or orange, a dark rim) into a top-down texture in place."""
    for obj in objectives:
        r = obj["diameter_mm"] / 2 / MM_PER_IN
        c = _tex8(obj["x"], obj["y"], ppi, border)
        fill = (235, 235, 235) if rng.uniform() < 0.5 else (20, 160, 230)
        cv2.circle(tex, c, int(r * ppi * 8), fill, -1, cv2.LINE_AA, 3)
        cv2.circle(tex, c, int(r * ppi * 8), (30, 30, 30), max(1, int(0.05 * ppi)), cv2.LINE_AA, 3)


@dataclass
class RenderedTable:
    image: Image  # the photo (BGR)
    empty: Image  # the same view of the table before the models were put down (the reference frame)
    scene: dict[str, Any]  # the true scene, in table inches
    camera: Camera
    layout: Layout
    outlines_px: list[tuple[str, str, npt.NDArray[np.float64]]] = field(default_factory=list)  # (class, id, polygon)
    tags: list[str] = field(default_factory=list)
    # model id -> the share of its base's rim the camera sees: not under a figure, a wall or a hand (0 to 1)
    rim_visible: dict[str, float] = field(default_factory=dict)
    # objective id -> the share of its marker's edge the camera sees: not behind a wall, a figure or a hand
    marker_visible: dict[str, float] = field(default_factory=dict)
    # model id -> how many of the photo's pixels show that model (its base or its figure) before the photo's
    # effects: 0 where walls, trees, hands or other figures hide all of it, so no detector can find it there
    piece_visible_px: dict[str, int] = field(default_factory=dict)


def _hsv_to_bgr(h: float, s: float, v: float) -> tuple[int, int, int]:
    pixel = cv2.cvtColor(np.uint8([[[h % 180, s, v]]]), cv2.COLOR_HSV2BGR)[0, 0]
    return int(pixel[0]), int(pixel[1]), int(pixel[2])


def _mat(
    rng: np.random.Generator, shape: tuple[int, int], dark: bool, style: str = "standard", ppi: float = 50.0
) -> npt.NDArray[np.float32]:
    h, w = shape
    base = np.array(
        _hsv_to_bgr(rng.uniform(0, 180), rng.uniform(30, 160), rng.uniform(35, 70) if dark else rng.uniform(80, 190)),
        np.float32,
    )
    mat = np.ones((h, w, 3), np.float32) * base
    for scale, amp in ((6, 10.0), (30, 14.0), (120, 18.0)):
        small = rng.normal(0.0, 1.0, (max(2, h // scale), max(2, w // scale), 1)).astype(np.float32)
        mat += amp * cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
    if style == "flagstone":  # 2" stones, each its own shade, with dark joints
        step = int(2 * ppi)
        for y0 in range(0, h, step):
            for x0 in range(0, w, step):
                mat[y0 : y0 + step, x0 : x0 + step] *= float(rng.uniform(0.75, 1.15))
        joint = max(1, int(0.08 * ppi))
        for k in range(0, max(h, w), step):
            mat[k : k + joint, :] *= 0.45
            mat[:, k : k + joint] *= 0.45
    return mat


def _poly_px(poly: shapely.Polygon, ppi: float, border: float) -> npt.NDArray[np.int32]:
    """A polygon in table inches as cv2's fixed-point texture pixels (3 fractional bits; see _tex8)."""
    return np.round(((np.asarray(poly.exterior.coords) + border) * ppi - 0.5) * 8).astype(np.int32)


def _tex8(x_in: float, y_in: float, ppi: float, border: float) -> tuple[int, int]:
    """A table point as cv2's fixed-point texture pixel (3 fractional bits). cv2 draws pixel k's centre at
    k, and the camera sees texture pixel k's centre at table (k + 0.5) / ppi - border (Camera.render), so
    half a pixel comes off; without it, everything painted sat half a texture pixel (0.13-0.25 mm) off its
    true place in the photos."""
    return int(round(((x_in + border) * ppi - 0.5) * 8)), int(round(((y_in + border) * ppi - 0.5) * 8))


def _terrain(rng: np.random.Generator, table: tuple[float, float], count: int) -> list[dict[str, Any]]:
    pieces: list[dict[str, Any]] = []
    kinds = ["blocking", "cover", "difficult", "ruins", "woods", "hill"]
    taken = shapely.Polygon()
    for k in range(count * 4):
        if len(pieces) >= count:
            break
        w, h = rng.uniform(2.0, min(8.0, table[0] / 3), 2)
        cx, cy = rng.uniform(4, table[0] - 4), rng.uniform(4, table[1] - 4)
        shape = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind in ("hill", "woods"):
            shape = shapely.Point(cx, cy).buffer(1.0, quad_segs=12)
            shape = shapely.affinity.scale(shape, w / 2, h / 2)
        elif rng.uniform() < 0.3:
            shape = shape.difference(shapely.box(cx, cy, cx + w, cy + h))  # an L-shaped ruin
        shape = shapely.affinity.rotate(shape, rng.uniform(0, 90)).simplify(0.01)
        if shape.intersects(taken.buffer(1.5)) or not shape.within(shapely.box(1, 1, table[0] - 1, table[1] - 1)):
            continue
        taken = taken.union(shape)
        height = {
            "blocking": rng.uniform(3, 6),
            "ruins": rng.uniform(2, 5),
            "hill": rng.uniform(0.5, 1.2),
            "woods": 0.2,
        }.get(kind, rng.uniform(0.3, 1.0))
        pieces.append(
            {
                "id": f"t{len(pieces) + 1}",
                "kind": kind,
                "polygon": [[round(x, 4), round(y, 4)] for x, y in list(shape.exterior.coords)[:-1]],
                "height_in": round(float(height), 3),
            }
        )
        del k
    return pieces


def _place_units(
    rng: np.random.Generator,
    table: tuple[float, float],
    terrain: list[dict[str, Any]],
    objectives: list[dict[str, Any]],
    players: list[str],
    crowded: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    blocked = shapely.union_all(
        [shapely.Polygon(t["polygon"]) for t in terrain if t["kind"] not in ("hill", "woods", "difficult")]
        + [shapely.Point(o["x"], o["y"]).buffer(0.9) for o in objectives]
    )
    keep_out = shapely.box(0, 0, table[0], table[1]).exterior.buffer(3.8)  # clear of the corner markers and edges
    hills = [shapely.Polygon(t["polygon"]) for t in terrain if t["kind"] == "hill"]
    units, models = [], []
    placed: list[tuple[float, float, float]] = []
    n_units = int(rng.integers(3, 6)) * len(players) // 2 + (4 if crowded else 0)
    for u in range(n_units):
        player = players[u % len(players)]
        base = str(rng.choice(KNOWN_BASES[:6] if rng.uniform() < 0.8 else KNOWN_BASES[6:9]))
        a, b = base_semi_axes_in(base)
        size = 1 if a > 1.0 else int(rng.integers(2, 7))
        uid = f"u{u + 1}"
        units.append({"id": uid, "player": player, "name": f"Unit {u + 1}", "profile": {}, "keywords": [], "state": {}})
        cx, cy = rng.uniform(4, table[0] - 4), rng.uniform(4, table[1] - 4)
        spacing = 2 * a + (rng.uniform(0.05, 0.3) if crowded else rng.uniform(0.3, 1.2))
        for k in range(size):
            for _ in range(30):
                x = cx + (k % 3) * spacing + rng.normal(0, 0.15)
                y = cy + (k // 3) * spacing + rng.normal(0, 0.15)
                facing = float(rng.uniform(0, 360))
                r_out = a + 0.02
                if not (r_out + 0.5 < x < table[0] - r_out - 0.5 and r_out + 0.5 < y < table[1] - r_out - 0.5):
                    cx, cy = rng.uniform(4, table[0] - 4), rng.uniform(4, table[1] - 4)
                    continue
                p = shapely.Point(x, y)
                if p.buffer(r_out).intersects(blocked) or p.intersects(keep_out):
                    cx += rng.normal(0, 1.0)
                    cy += rng.normal(0, 1.0)
                    continue
                if any(math.hypot(x - px, y - py) < r_out + pr for px, py, pr in placed):
                    continue
                if any(hill.boundary.intersects(p.buffer(r_out)) for hill in hills):
                    continue  # a hill is a plateau: a base stands on it or beside it, not across its edge
                z = ground_height_in(terrain, x, y, a)
                placed.append((x, y, r_out))
                models.append(
                    {
                        "id": f"{uid}m{k + 1}",
                        "unit": uid,
                        "base": base,
                        "x": round(float(x), 4),
                        "y": round(float(y), 4),
                        "z": round(float(z), 4),
                        "facing_deg": round(facing, 2),
                        "height_in": round(float(rng.uniform(0.9, 2.2)), 3),
                    }
                )
                break
    used = {m["unit"] for m in models}
    return [u for u in units if u["id"] in used], models


def ground_height_in(terrain: list[dict[str, Any]], x: float, y: float, radius_in: float) -> float:
    """How high a base of ``radius_in`` at (x, y) stands: on a hill's plateau if it lies wholly on it."""
    base = shapely.Point(x, y).buffer(radius_in)
    for t in terrain:
        if t["kind"] == "hill" and shapely.Polygon(t["polygon"]).contains(base):
            return float(t["height_in"])
    return 0.0


@dataclass
class TablePlan:
    """Where everything goes on one seeded table (no pixels yet): shared by the flat renderer and the path tracer."""

    game: str
    table: tuple[float, float]
    hard: str  # 'none', 'crowded', 'dark', 'hills' or 'occluded'
    tags: list[str]
    players: list[str]
    team: dict[str, tuple[int, int, int]]  # player -> rim colour (BGR)
    terrain: list[dict[str, Any]]
    objectives: list[dict[str, Any]]
    units: list[dict[str, Any]]
    models: list[dict[str, Any]]


def plan_table(rng: np.random.Generator, game: str, hard: str | None = None, style: str = "standard") -> TablePlan:
    """Draw a table's terrain, objectives and units from ``rng`` (``hard`` None: drawn at random)."""
    table = GAMES.get(game, (24.0, 24.0))
    if hard is None:
        hard = str(rng.choice(["none", "none", "crowded", "dark", "hills", "occluded"]))
    tags = [] if hard == "none" else [hard]
    players = ["red", "blue"]
    palette = TEAM_COLOURS_BGR if style == "standard" else HELD_OUT_TEAM_COLOURS_BGR
    team_idx = rng.choice(len(palette), 2, replace=False)
    team = {p: palette[int(i)] for p, i in zip(players, team_idx, strict=True)}
    terrain = _terrain(rng, table, int(rng.integers(3, 7)) if table[0] < 30 else int(rng.integers(8, 14)))
    if hard == "hills":
        hill = shapely.affinity.scale(shapely.Point(table[0] / 2, table[1] / 2).buffer(1.0, quad_segs=16), 4.0, 3.0)
        if not any(shapely.Polygon(t["polygon"]).intersects(hill.buffer(1)) for t in terrain):
            terrain.append(
                {
                    "id": f"t{len(terrain) + 1}",
                    "kind": "hill",
                    "polygon": [[round(x, 4), round(y, 4)] for x, y in list(hill.exterior.coords)[:-1]],
                    "height_in": 2.0,
                }
            )
    objectives: list[dict[str, Any]] = []
    for k in range(int(rng.integers(3, 6))):
        for _ in range(50):
            x, y = rng.uniform(4, table[0] - 4), rng.uniform(4, table[1] - 4)
            p = shapely.Point(x, y).buffer(0.8)
            if not any(shapely.Polygon(t["polygon"]).intersects(p) for t in terrain) and all(
                math.hypot(x - o["x"], y - o["y"]) > 3 for o in objectives
            ):
                objectives.append(
                    {"id": f"obj{k + 1}", "x": round(float(x), 4), "y": round(float(y), 4), "diameter_mm": 40}
                )
                break
    units, models = _place_units(rng, table, terrain, objectives, players, hard == "crowded")
    return TablePlan(game, table, hard, tags, players, team, terrain, objectives, units, models)


def _near_mat_rims(
    rng: np.random.Generator, mat: npt.NDArray[np.float32], players: list[str]
) -> dict[str, tuple[int, int, int]]:
    """Rim colours (BGR) near the mat's own for some of ``players`` (NEAR_MAT_SHARE each; at least one)."""
    mat_bgr = np.median(mat.reshape(-1, 3), axis=0)
    chosen = [p for p in players if rng.random() < NEAR_MAT_SHARE] or [players[int(rng.integers(len(players)))]]
    out = {}
    for p in chosen:
        bgr = mat_bgr * rng.uniform(0.8, 1.25) + rng.normal(0.0, 12.0, 3)
        out[p] = tuple(int(v) for v in np.clip(bgr, 0, 255))
    return out


def scene_of(plan: TablePlan, models: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The true scene (``tablesight-scene/1``) of a plan; ``models``: those on the table (default: all)."""
    hexes = {"hex": HEX_MATS[plan.game]} if plan.game in HEX_MATS else {}
    return {
        "format": "tablesight-scene/1",
        "game": plan.game,
        "table": {"width_in": plan.table[0], "depth_in": plan.table[1], **hexes},
        "players": [
            {"id": p, "name": p.capitalize(), "color": "#{:02x}{:02x}{:02x}".format(*plan.team[p][::-1])}
            for p in plan.players
        ],
        "units": plan.units,
        "models": plan.models if models is None else models,
        "terrain": plan.terrain,
        "objectives": plan.objectives,
        "measurement": {"sigma_in": 0.0, "source": "manual"},
    }


WEBCAM_HFOV_DEG = 65.0
WEBCAM_DISTORTION = (-0.08, 0.01, 0.0, 0.0, 0.0)


def _raise_hill(
    camera: Camera,
    hill: dict[str, Any],
    layers: list[tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]],
    empty: npt.NDArray[np.uint8],
    ppi: float,
    border: float,
) -> None:
    """A hill is a plateau ``height_in`` high: its top, and the bases painted on it (whose truth stands at
    that height), are seen where the camera's rays meet that plane. Each (photo, its texture) in ``layers`` is
    redrawn there; where a ray passes the plateau's side, the side shows the empty table's hill, darker."""
    polygon = shapely.Polygon(hill["polygon"])
    lift = -float(hill["height_in"])
    ring = np.array(polygon.exterior.coords)
    corners = np.concatenate([camera.project(np.c_[ring, np.full(len(ring), w)]) for w in (0.0, lift)])
    width, height = camera.size
    x0, y0 = (max(int(v) - 4, 0) for v in corners.min(axis=0))
    x1, y1 = min(int(corners[:, 0].max()) + 5, width), min(int(corners[:, 1].max()) + 5, height)
    if x1 <= x0 or y1 <= y0:
        return  # out of the picture
    window = (x0, y0, x1, y1)
    top = shapely.contains_xy(polygon, *camera.table_maps(lift, window))
    side = shapely.contains_xy(polygon, *camera.table_maps(0.0, window)) & ~top
    wall = (empty[y0:y1, x0:x1][side].astype(np.float32) * 0.8).astype(np.uint8)
    for image, texture in layers:
        raised = camera.render(texture, ppi, border_in=border, background=35, plane_w=lift, window=window)
        part = image[y0:y1, x0:x1]
        part[top] = raised[top]
        part[side] = wall


def webcam_lens(seed: int, size: tuple[int, int] = (1920, 1080)) -> LensModel:
    """The renderer's webcam at ``size`` (width, height), calibrated from rendered photos of the kit's board, as a
    player would."""
    from calibration.lens import calibrate_lens
    from vision.synth.charuco_views import charuco_views

    K = Camera.looking_at_table((24.0, 24.0), size, hfov_deg=WEBCAM_HFOV_DEG).K
    lens, _ = calibrate_lens(charuco_views(K, WEBCAM_DISTORTION, size, 14, np.random.default_rng(seed)))
    return lens


def render_table(
    seed: int,
    game: str = "focal-point",
    size: tuple[int, int] = (1920, 1080),
    hard: str | None = None,
    hfov_deg: float = WEBCAM_HFOV_DEG,
    distortion: tuple[float, ...] = WEBCAM_DISTORTION,
    models_at: dict[str, tuple[float, float]] | None = None,
    style: str = "standard",
    lifted: frozenset[str] = frozenset(),
    hand_at: tuple[float, float] | None = None,
    figures: str = "blob",
    trees: bool = False,
    rims: str = "palette",
    group: int | None = None,
    side_markers: bool = False,
) -> RenderedTable:
    """One seeded photo of a table for ``game``, by one webcam (fixed lens) placed anew each time.
    ``hard``: 'crowded', 'dark', 'hills', 'occluded', or None (drawn at random).
    ``models_at``: model id -> (x, y) inches, to move models on the same seeded table (a scripted game).
    ``style``: 'standard' (what the detector is trained on) or 'flagstone' (held out: other mats, colours).
    ``lifted``: models in a player's hand (not on the table); ``hand_at``: a hand over the table there.
    ``figures``: 'blob' or 'varied' (``FIGURE_STYLES``); ``trees``: woods carry trees (cones, as the path tracer
    draws them), in the photo and the empty table alike (False: woods are flat, as before session 25).
    ``rims``: 'palette' or 'near-mat' (``RIM_STYLES``); near-mat rims come from a random stream of their own, so
    the rest of the table is drawn as with 'palette'.
    ``group``: one group of players' table, whatever the seed: the mat (its colour, darkness and grain), the
    players' colours, the bases' tops and near-mat rims come from a stream of their own for the group, as one
    group's mat and armies stay the same from game to game (None: drawn per table, as before session 37)."""
    if style not in STYLES:
        raise ValueError(f"style {style!r}: expected one of {', '.join(STYLES)}")
    if figures not in FIGURE_STYLES:
        raise ValueError(f"figures {figures!r}: expected one of {', '.join(FIGURE_STYLES)}")
    if rims not in RIM_STYLES:
        raise ValueError(f"rims {rims!r}: expected one of {', '.join(RIM_STYLES)}")
    rng = np.random.default_rng(seed)
    plan = plan_table(rng, game, hard, style)
    table, tags, team = plan.table, plan.tags, plan.team
    terrain, objectives, units, models = plan.terrain, plan.objectives, plan.units, plan.models
    layout = Layout.default(*table, side_markers=side_markers)  # the kit's two more markers drawn, or not
    ppi = float(min(100.0, 3000.0 / max(table)))
    border = 2.0
    h_px, w_px = int((table[1] + 2 * border) * ppi), int((table[0] + 2 * border) * ppi)
    hard = plan.hard
    dark = hard == "dark"

    # A scripted game: the same table, camera and light (same seed), the models where the script says.
    for m in models:
        if models_at and m["id"] in models_at:
            m["x"], m["y"] = (round(float(v), 4) for v in models_at[m["id"]])
            m["z"] = round(ground_height_in(terrain, m["x"], m["y"], base_semi_axes_in(m["base"])[0]), 4)
    stream_of = {m["id"]: k for k, m in enumerate(models)}  # fixed before any model is lifted
    models = [m for m in models if m["id"] not in lifted]  # in a player's hand, off the table

    # Trees from streams of their own, so renders without them stay as they were.
    woods_trees = {
        k: _place_trees(t, np.random.default_rng([seed, 6, k])) if trees and t["kind"] == "woods" else []
        for k, t in enumerate(terrain)
    }

    # ---- the flat layer ----
    tex = np.full((h_px, w_px, 3), 35, np.float32)
    mat = _mat(rng, (int(table[1] * ppi), int(table[0] * ppi)), dark, style, ppi)
    group_base_colour = None
    if group is not None:  # the group's own mat and colours; the table's stream is drawn as without a group
        group_rng = np.random.default_rng([group, 8])  # so many draws, whatever the table's size
        dark = bool(group_rng.random() < GROUP_DARK_SHARE)
        tags[:] = [t for t in tags if t != "dark"] + (["dark"] if dark else [])
        palette = TEAM_COLOURS_BGR if style == "standard" else HELD_OUT_TEAM_COLOURS_BGR
        chosen = group_rng.choice(len(palette), len(plan.players), replace=False)
        team.update({p: palette[int(i)] for p, i in zip(plan.players, chosen, strict=True)})
        value = group_rng.uniform(20, 60) if dark else group_rng.uniform(30, 200)
        group_base_colour = _hsv_to_bgr(group_rng.uniform(0, 180), group_rng.uniform(0, 60), value)
        mat = _mat(np.random.default_rng([group, 9]), mat.shape[:2], dark, style, ppi)
    if game in HEX_MATS:
        paint_hexes(mat, HEX_MATS[game], ppi)
    if rims == "near-mat" and group is None:
        team.update(_near_mat_rims(np.random.default_rng([seed, 7]), mat, plan.players))
    elif rims == "near-mat":  # near the group's mat as a 24" table has it, so one colour whatever the game
        group_mat = _mat(np.random.default_rng([group, 9]), (1200, 1200), dark, style, 50.0)
        team.update(_near_mat_rims(np.random.default_rng([group, 7]), group_mat, plan.players))
    o = int(border * ppi)
    tex[o : o + mat.shape[0], o : o + mat.shape[1]] = mat
    shadow_dir = rng.normal(0, 1, 2)
    shadow_dir /= np.linalg.norm(shadow_dir)
    shadow = np.zeros((h_px, w_px), np.float32)
    for k_t, t in enumerate(terrain):
        poly = shapely.Polygon(t["polygon"])
        off = shapely.affinity.translate(poly, *(shadow_dir * min(t["height_in"], 3.0) * 0.5))
        cv2.fillPoly(shadow, [_poly_px(off, ppi, border)], 0.35, cv2.LINE_AA, shift=3)
        for tree in woods_trees[k_t]:
            spot = np.array([tree.x_in, tree.y_in]) + shadow_dir * tree.height_in * 0.5
            cv2.circle(
                shadow,
                _tex8(float(spot[0]), float(spot[1]), ppi, border),
                int(tree.radius_in * ppi * 8),
                0.35,
                -1,
                cv2.LINE_AA,
                3,
            )
    shadow = cv2.GaussianBlur(shadow, (0, 0), 0.15 * ppi)
    tex *= (1 - shadow)[..., None]
    # The models' shadows fall after the empty-table reference is taken (it has no models).
    model_shadow = np.zeros((h_px, w_px), np.float32)
    for m in models:
        a, b = base_semi_axes_in(m["base"])
        c = np.array([m["x"], m["y"]]) + shadow_dir * m["height_in"] * 0.35
        cv2.ellipse(
            model_shadow,
            _tex8(float(c[0]), float(c[1]), ppi, border),
            (int(a * 1.1 * ppi * 8), int(b * 1.1 * ppi * 8)),
            m["facing_deg"],
            0,
            360,
            0.3,
            -1,
            cv2.LINE_AA,
            3,
        )
    model_shadow = cv2.GaussianBlur(model_shadow, (0, 0), 0.15 * ppi)
    for t in terrain:
        colour = _hsv_to_bgr(rng.uniform(0, 180), rng.uniform(20, 120), rng.uniform(60, 170))
        cv2.fillPoly(tex, [_poly_px(shapely.Polygon(t["polygon"]), ppi, border)], colour, cv2.LINE_AA, shift=3)
    paint_objectives(tex, objectives, ppi, border, rng)
    paint_markers(tex, layout, ppi, border)
    empty_tex = np.clip(tex.copy(), 0, 255).astype(np.uint8)
    tex *= (1 - model_shadow)[..., None]
    # Bases: top colour, and the team's rim (drawn as solids below).
    base_colour = _hsv_to_bgr(
        rng.uniform(0, 180), rng.uniform(0, 60), rng.uniform(20, 60) if hard == "dark" else rng.uniform(30, 200)
    )
    base_colour = base_colour if group_base_colour is None else group_base_colour
    team_of = {m["id"]: team[next(u["player"] for u in units if u["id"] == m["unit"])] for m in models}
    flat = np.clip(tex, 0, 255).astype(np.uint8)

    tilt = float(rng.uniform(0, 25))
    camera = Camera.looking_at_table(
        table,
        size,
        tilt_deg=tilt,
        yaw_deg=float(rng.uniform(-8, 8)),
        hfov_deg=hfov_deg,
        dist=distortion,
        fill=float(rng.uniform(0.85, 0.95)),
    )
    photo = camera.render(flat, ppi, border_in=border, background=35)
    empty = camera.render(empty_tex, ppi, border_in=border, background=35)
    for t in terrain:
        if t["kind"] == "hill":
            _raise_hill(camera, t, [(photo, flat), (empty, empty_tex)], empty, ppi, border)

    # ---- what stands up: the bases (far to near), then figures and walls, far to near ----
    C = camera.centre_in
    solids = {m["id"]: _base_solid(m, np.random.default_rng([seed, 4, stream_of[m["id"]]])) for m in models}
    owner = np.full(photo.shape[:2], -1, np.int32)  # the model each pixel shows (-1: none)

    def region(points_in: npt.NDArray[np.float64]) -> tuple[slice, slice]:
        """The photo's pixels round the image of ``points_in`` (x, y, z): what a piece drawn within them changes."""
        px = camera.project(points_in)
        x0, y0 = (max(0, int(v) - 4) for v in np.floor(px.min(axis=0)))
        x1, y1 = (int(v) + 5 for v in np.ceil(px.max(axis=0)))
        return slice(y0, max(y0, y1)), slice(x0, max(x0, x1))

    def around(x_in: float, y_in: float, r_in: float, top_in: float) -> tuple[slice, slice]:
        """The photo's pixels round a standing cylinder of radius ``r_in`` from the table up to ``top_in``."""
        ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        ring = np.c_[x_in + r_in * np.cos(ang), y_in + r_in * np.sin(ang)]
        return region(np.r_[np.c_[ring, np.zeros(16)], np.c_[ring, np.full(16, -top_in)]])

    def around_model(m: dict[str, Any]) -> tuple[slice, slice]:
        # a figure leans, overhangs and reaches (up to 0.9") past its base, up to its height above it
        return around(m["x"], m["y"], 1.5 * max(base_semi_axes_in(m["base"])) + 1.0, m["z"] + 0.3 + m["height_in"])

    def claim(box: tuple[slice, slice], before: Image, k: int) -> None:
        """The pixels in ``box`` the last piece drawn changed now show model ``k`` (-1: a wall, a tree, a hand)."""
        owner[box][np.any(photo[box] != before, axis=2)] = k

    for k, m in sorted(enumerate(models), key=lambda km: -float(np.hypot(km[1]["x"] - C[0], km[1]["y"] - C[1]))):
        box = around_model(m)
        before = photo[box].copy()
        _draw_base(photo, camera, m, solids[m["id"]], team_of[m["id"]], base_colour, shadow_dir)
        claim(box, before, k)
    ground = photo.copy()  # what stands up covers this: the rims it leaves are what the camera sees of each base
    items: list[tuple[float, str, int]] = []
    for k, t in enumerate(terrain):
        if t["kind"] in ("blocking", "ruins") and t["height_in"] > 1.0:
            items.append((float(np.hypot(*(np.mean(t["polygon"], axis=0) - C[:2]))), "terrain", k))
    for k, m in enumerate(models):
        items.append((float(np.hypot(m["x"] - C[0], m["y"] - C[1])), "model", k))
    standing_trees = [(tree, terrain[k]) for k in woods_trees for tree in woods_trees[k]]
    for k, (tree, _) in enumerate(standing_trees):
        items.append((float(np.hypot(tree.x_in - C[0], tree.y_in - C[1])), "tree", k))
    index_of = {"terrain": list(range(len(terrain))), "model": [stream_of[m["id"]] for m in models]}
    items.sort(key=lambda it: -it[0])
    for _, kind, k in items:
        # Each piece draws from its own random stream: moving one model changes only that model.
        if kind == "tree":
            tree, piece = standing_trees[k]
            box = around(tree.x_in, tree.y_in, tree.radius_in + 0.1, piece["height_in"] + tree.height_in)
            before = photo[box].copy()
            _draw_tree(photo, empty, camera, tree, piece["height_in"])
            claim(box, before, -1)
            continue
        if kind == "terrain":
            poly = np.asarray(terrain[k]["polygon"], float)
            n = len(poly)
            box = region(np.r_[np.c_[poly, np.zeros(n)], np.c_[poly, np.full(n, -terrain[k]["height_in"])]])
        else:
            box = around_model(models[k])
        before = photo[box].copy()
        own = np.random.default_rng([seed, 1 if kind == "terrain" else 2, index_of[kind][k]])
        if kind == "terrain":
            _draw_walls(photo, empty, camera, terrain[k], own)
        else:
            # Varied figures draw their shape from a stream of their own, so 'blob' renders stay as they were.
            shape = _figure_shape(np.random.default_rng([seed, 5, index_of[kind][k]])) if figures == "varied" else None
            _draw_miniature(photo, camera, models[k], own, solids[models[k]["id"]].height_in, shape)
        claim(box, before, k if kind == "model" else -1)
    random_hand = hard == "occluded" or rng.uniform() < 0.1
    if hand_at is not None or random_hand:
        before = photo.copy()  # a hand reaches in from the table's edge: the whole photo
        if hand_at is not None:
            _draw_hand(photo, camera, table, np.random.default_rng([seed, 3]), hand_at)
            tags.append("hand")
        else:
            _draw_hand(photo, camera, table, rng)
            if "occluded" not in tags:
                tags.append("hand")
        claim((slice(None), slice(None)), before, -1)
    shown_px = np.bincount(owner[owner >= 0], minlength=len(models))
    piece_visible_px = {m["id"]: int(shown_px[k]) for k, m in enumerate(models)}
    covered = np.any(photo != ground, axis=2)
    rim_visible = {m["id"]: _rim_visible(covered, camera, m, solids[m["id"]]) for m in models}
    marker_visible = {o["id"]: _edge_visible(covered, camera, _marker_ring(o)) for o in objectives}
    effects = {
        "noise": float(rng.uniform(1, 3)),
        "blur_px": float(rng.uniform(0.3, 0.9)),
        "jpeg_quality": int(rng.integers(82, 95)),
        "light_gradient": float(rng.uniform(0, 0.4)),
    }
    photo = photo_effects(photo, np.random.default_rng(seed + 1), **effects)  # type: ignore[arg-type]
    empty = photo_effects(empty, np.random.default_rng(seed + 2), **effects)  # type: ignore[arg-type]

    scene = scene_of(plan, models)
    outlines = []
    for m in models:
        # What the camera sees of the solid: the hull of its foot and its top.
        rings = camera.project(np.concatenate([_base_ring(m), _base_ring(m, *solids[m["id"]].top)]))
        outlines.append(("base", m["id"], cv2.convexHull(rings.astype(np.float32)).reshape(-1, 2).astype(np.float64)))
    for obj in objectives:
        r = obj["diameter_mm"] / 2 / 25.4
        t = np.linspace(0, 2 * np.pi, 32, endpoint=False)
        outlines.append(
            (
                "objective",
                obj["id"],
                camera.project(np.c_[obj["x"] + r * np.cos(t), obj["y"] + r * np.sin(t), np.zeros(len(t))]),
            )
        )
    for t_ in terrain:
        poly = np.asarray(t_["polygon"], float)
        outlines.append(("terrain", t_["id"], camera.project(np.c_[poly, np.zeros(len(poly))])))
    return RenderedTable(
        photo, empty, scene, camera, layout, outlines, tags, rim_visible, marker_visible, piece_visible_px
    )


@dataclass(frozen=True)
class BaseSolid:
    """A base as it stands: its height and how much its top is inset (bevelled sides)."""

    height_in: float
    top_scale: float  # the top's outline against the foot's

    @property
    def top(self) -> tuple[float, float]:
        """(scale, height_in) of the top's outline, for ``_base_ring``."""
        return self.top_scale, self.height_in


def _base_solid(m: dict[str, Any], rng: np.random.Generator) -> BaseSolid:
    """Real bases are 3-5 mm tall, their sides sloping in by a few per cent (the products
    analyse them at the nominal ``BASE_HEIGHT_IN``, so the spread here is part of their error)."""
    return BaseSolid(float(rng.uniform(0.12, 0.19)), float(rng.uniform(0.86, 0.98)))


def _base_ring(m: dict[str, Any], scale: float = 1.0, lift_in: float = 0.0) -> npt.NDArray[np.float64]:
    """48 points (x, y, z in the camera's table frame: z is minus the height) round a model's base, at ``scale``
    of its outline and ``lift_in`` above its foot."""
    a, b = base_semi_axes_in(m["base"])
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    f = math.radians(m["facing_deg"])
    return np.c_[
        m["x"] + scale * (a * np.cos(t) * math.cos(f) - b * np.sin(t) * math.sin(f)),
        m["y"] + scale * (a * np.cos(t) * math.sin(f) + b * np.sin(t) * math.cos(f)),
        np.full(len(t), -(m["z"] + lift_in)),
    ]


def _draw_base(
    photo: Image,
    camera: Camera,
    m: dict[str, Any],
    solid: BaseSolid,
    team_bgr: tuple[int, int, int],
    top_bgr: tuple[int, int, int],
    shadow_dir: npt.NDArray[np.float64],
) -> None:
    """A base as a solid: the sides the camera faces (team colour, lit from opposite the shadows), then the top
    (its colour, inside a ring of the team's colour)."""
    foot = _base_ring(m)
    top = _base_ring(m, *solid.top)
    foot_px, top_px = camera.project(foot), camera.project(top)
    eye = np.asarray(camera.centre_in, float)
    middle = np.array([m["x"], m["y"]])
    for k in range(len(foot)):
        j = (k + 1) % len(foot)
        mid_foot, mid_top = (foot[k] + foot[j]) / 2, (top[k] + top[j]) / 2
        outward = mid_foot[:2] - middle
        outward /= max(float(np.linalg.norm(outward)), 1e-9)
        # The side's normal leans up by its slope (w points down); it is seen when it faces the camera.
        inset_in = float(np.linalg.norm(mid_foot[:2] - mid_top[:2]))
        normal = np.r_[outward * solid.height_in, -inset_in]
        if float(normal @ (eye - mid_foot)) <= 0:
            continue
        shade = 0.62 + 0.25 * float(outward @ -shadow_dir)
        quad = np.array([foot_px[k], foot_px[j], top_px[j], top_px[k]])
        colour = tuple(float(v) * shade for v in team_bgr)
        cv2.fillPoly(photo, [np.round(quad * 8).astype(np.int32)], colour, cv2.LINE_AA, shift=3)
    a, _ = base_semi_axes_in(m["base"])
    rim_in = max(0.06, 0.12 * a) - a * (1 - solid.top_scale)  # the team's colour runs on over the top's edge
    cv2.fillPoly(
        photo, [np.round(top_px * 8).astype(np.int32)], tuple(float(v) for v in team_bgr), cv2.LINE_AA, shift=3
    )
    inner = camera.project(_base_ring(m, solid.top_scale - max(rim_in, 0.02) / a, solid.height_in))
    cv2.fillPoly(photo, [np.round(inner * 8).astype(np.int32)], tuple(float(v) for v in top_bgr), cv2.LINE_AA, shift=3)


def _rim_visible(covered: npt.NDArray[np.bool_], camera: Camera, m: dict[str, Any], solid: BaseSolid) -> float:
    """The share of a base's rim (the edge of its top, at 97 % of the top's radius) not covered in the photo."""
    return _edge_visible(covered, camera, _base_ring(m, 0.97 * solid.top_scale, solid.height_in))


def _marker_ring(objective: dict[str, Any]) -> npt.NDArray[np.float64]:
    """Points round an objective marker's edge (at 97 % of its radius), on the table."""
    r = 0.97 * objective["diameter_mm"] / 2 / 25.4
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    return np.c_[objective["x"] + r * np.cos(t), objective["y"] + r * np.sin(t), np.zeros(len(t))]


def _edge_visible(covered: npt.NDArray[np.bool_], camera: Camera, ring: npt.NDArray[np.float64]) -> float:
    """The share of the points of ``ring`` (table inches, z) that nothing covers in the photo."""
    px = np.round(camera.project(ring)).astype(int)
    h, w = covered.shape
    inside = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    seen = np.zeros(len(px), bool)
    seen[inside] = ~covered[px[inside, 1], px[inside, 0]]
    return round(float(seen.mean()), 3)


def _draw_walls(photo: Image, empty: Image, camera: Camera, piece: dict[str, Any], rng: np.random.Generator) -> None:
    poly = np.asarray(piece["polygon"], float)
    h = piece["height_in"]
    top = camera.project(np.c_[poly, np.full(len(poly), -h)])
    bottom = camera.project(np.c_[poly, np.zeros(len(poly))])
    colour = np.array(_hsv_to_bgr(rng.uniform(0, 180), rng.uniform(10, 60), rng.uniform(70, 150)), float)
    for img in (photo, empty):
        for k in range(len(poly)):
            j = (k + 1) % len(poly)
            quad = np.array([bottom[k], bottom[j], top[j], top[k]])
            shade = 0.6 + 0.4 * abs(math.cos(math.atan2(*(poly[j] - poly[k])[::-1])))
            cv2.fillPoly(
                img,
                [np.round(quad * 8).astype(np.int32)],
                tuple(float(v) for v in colour * shade),
                cv2.LINE_AA,
                shift=3,
            )
        cv2.fillPoly(
            img, [np.round(top * 8).astype(np.int32)], tuple(float(v) for v in colour * 1.1), cv2.LINE_AA, shift=3
        )


@dataclass(frozen=True)
class Tree:
    """A tree of a wood: where its trunk stands, its height and its canopy's radius (inches), its leaves' colour."""

    x_in: float
    y_in: float
    height_in: float
    radius_in: float
    leaves_bgr: tuple[int, int, int]


def _place_trees(piece: dict[str, Any], rng: np.random.Generator) -> list[Tree]:
    """As many trees as the path tracer puts on a wood (one per 5 square inches, at least 2), inside it."""
    poly = shapely.Polygon(piece["polygon"])
    lo_x, lo_y, hi_x, hi_y = poly.bounds
    leaves = _hsv_to_bgr(rng.uniform(35, 75), rng.uniform(80, 200), rng.uniform(40, 110))
    out: list[Tree] = []
    for _ in range(200):
        if len(out) >= max(2, int(poly.area / 5)):
            break
        x, y = float(rng.uniform(lo_x, hi_x)), float(rng.uniform(lo_y, hi_y))
        if poly.contains(shapely.Point(x, y).buffer(0.4)):
            out.append(Tree(x, y, float(rng.uniform(2.0, 4.0)), float(rng.uniform(0.6, 1.1)), leaves))
    return out


def _draw_tree(photo: Image, empty: Image, camera: Camera, tree: Tree, ground_in: float) -> None:
    """A conifer's canopy seen from above: a cone from 30 % of its height to its tip, darker low down."""
    levels = np.linspace(0, 1, 6)
    ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    rings = []
    for s in levels:
        r = tree.radius_in * (1 - s) + 0.05 * s
        z = ground_in + tree.height_in * (0.3 + 0.7 * s)
        rings.append(camera.project(np.c_[tree.x_in + r * np.cos(ang), tree.y_in + r * np.sin(ang), np.full(24, -z)]))
    colour = np.array(tree.leaves_bgr, float)
    for img in (photo, empty):
        _fill_rings(img, rings, [colour * (0.7 + 0.5 * s) for s in levels])


def _fill_rings(img: Image, rings: list[npt.NDArray[np.float64]], colours: list[npt.NDArray[np.float64]]) -> None:
    """A solid seen from above, bottom up: the hull of each pair of neighbouring rings (pixels) in its colour."""
    for k in range(len(rings) - 1):
        hull = cv2.convexHull(np.concatenate([rings[k], rings[k + 1]]).astype(np.float32))
        cv2.fillPoly(
            img,
            [np.round(hull.reshape(-1, 2) * 8).astype(np.int32)],
            tuple(float(v) for v in np.clip(colours[k], 0, 255)),
            cv2.LINE_AA,
            shift=3,
        )


@dataclass(frozen=True)
class FigureShape:
    """How a figure differs from the blob: its width (a share of the blob's), and a limb or weapon reaching out."""

    width: float
    reach_in: float = 0.0  # 0: none
    reach_deg: float = 0.0
    reach_rgb: tuple[float, float, float] = (200.0, 200.0, 200.0)


def _figure_shape(rng: np.random.Generator) -> FigureShape:
    # A third as wide as the blob up to the blob itself; half of them reach out past their base.
    width = 1.0 if rng.uniform() < 0.3 else float(rng.uniform(0.3, 0.9))
    if rng.uniform() < 0.5:
        grey = float(rng.uniform(60, 230))
        return FigureShape(width, float(rng.uniform(0.3, 0.9)), float(rng.uniform(0, 360)), (grey, grey, grey))
    return FigureShape(width)


def _draw_miniature(
    photo: Image,
    camera: Camera,
    m: dict[str, Any],
    rng: np.random.Generator,
    base_height_in: float = BASE_HEIGHT_IN,
    shape: FigureShape | None = None,
) -> None:
    """A painted figure: a tapering body standing on the base, leaning and overhanging a little
    (``shape``: slimmer, and reaching out; None: the blob)."""
    a, b = base_semi_axes_in(m["base"])
    z0 = m["z"] + base_height_in
    height = m["height_in"]
    lean = rng.normal(0, 0.12, 2) * a
    colour = np.array(_hsv_to_bgr(rng.uniform(0, 180), rng.uniform(60, 200), rng.uniform(60, 200)), float)
    f = math.radians(m["facing_deg"])
    width = 1.0 if shape is None else shape.width
    levels = np.linspace(0, 1, 7)
    rings = []
    for s in levels:
        # Feet inside the base; a body a little wider than the base at the shoulders; a small head.
        w = (0.55 + 0.55 * math.sin(math.pi * min(s * 1.15, 1.0))) * (0.55 if s > 0.85 else 1.0) * width
        ang = np.linspace(0, 2 * np.pi, 20, endpoint=False)
        ra, rb = a * w * 0.7, b * w * 0.7
        x = m["x"] + lean[0] * s + ra * np.cos(ang) * math.cos(f) - rb * np.sin(ang) * math.sin(f)
        y = m["y"] + lean[1] * s + ra * np.cos(ang) * math.sin(f) + rb * np.sin(ang) * math.cos(f)
        rings.append(camera.project(np.c_[x, y, np.full(len(ang), -(z0 + s * height))]))
    _fill_rings(photo, rings, [colour * (0.75 + 0.35 * s) for s in levels])
    if shape is not None and shape.reach_in > 0:
        # A spear, a sword or an arm: a thin line from the shoulders outward and a little down.
        s = 0.7
        t = math.radians(shape.reach_deg)
        start = [m["x"] + lean[0] * s, m["y"] + lean[1] * s, -(z0 + s * height)]
        end = [start[0] + shape.reach_in * math.cos(t), start[1] + shape.reach_in * math.sin(t), start[2] + 0.15]
        ends = camera.project(np.array([start, end]))
        thick_px = max(1, int(round(0.05 * float(np.linalg.norm(ends[1] - ends[0])) / max(shape.reach_in, 1e-6))))
        cv2.line(
            photo,
            tuple(int(v) for v in np.round(ends[0] * 8)),
            tuple(int(v) for v in np.round(ends[1] * 8)),
            shape.reach_rgb,
            thick_px,
            cv2.LINE_AA,
            3,
        )


def lay_card(table: RenderedTable, image: npt.NDArray[np.uint8], marker_ids: set[int]) -> npt.NDArray[np.uint8]:
    """``image`` (a photo of ``table``) with a card laid over each of these calibration markers, a little wider than
    the marker: a rulebook or a dice tray left on it hides it from the calibration."""
    image = image.copy()
    for marker in table.layout.markers:
        if marker.id in marker_ids:
            corners = table.camera.project(np.c_[marker.corners_in(), np.zeros(4)])
            wider = corners.mean(axis=0) + 1.4 * (corners - corners.mean(axis=0))
            cv2.fillConvexPoly(image, wider.astype(np.int32), (70, 110, 150))
    return image


def _draw_hand(
    photo: Image,
    camera: Camera,
    table: tuple[float, float],
    rng: np.random.Generator,
    at: tuple[float, float] | None = None,
) -> None:
    x, y = rng.uniform(3, table[0] - 3), rng.uniform(3, table[1] - 3)
    if at is not None:
        x, y = at
    skin = _hsv_to_bgr(rng.uniform(5, 20), rng.uniform(60, 140), rng.uniform(120, 220))
    palm = camera.project([[x, y, -4.0]])[0]
    scale = float(np.linalg.norm(camera.project([[x + 1.0, y, -4.0]])[0] - palm))
    cv2.ellipse(
        photo,
        (int(palm[0]), int(palm[1])),
        (int(1.8 * scale), int(1.4 * scale)),
        float(rng.uniform(0, 180)),
        0,
        360,
        skin,
        -1,
        cv2.LINE_AA,
    )
    edge = (int(palm[0] + rng.normal(0, 1) * 8 * scale), int(palm[1] + 10 * scale))
    cv2.line(photo, (int(palm[0]), int(palm[1])), edge, skin, int(2.2 * scale), cv2.LINE_AA)
