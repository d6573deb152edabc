"""Rendered photos of Affinity: Flux tables with exact ground truth (seeded, deterministic).

A *session* is one game: two players' Source card designs, the mat, the light
and the camera, fixed. Photo 0 of a session is the registration photo (each
player lays a few cards of their own design in their pool); later photos are
moments of play: five or more Source cards in each pool (in a row, overlapping
or fanned in the hand's way), the Source deck, a messy discard pile, unit
cards on the boards and each Warlord with its Life Tokens. Some sessions give
the two players designs of nearly the same colour, told apart by pattern only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import shapely

from calibration.layout import Layout
from vision.flux.layout import FluxLayout
from vision.synth.camera import Camera, photo_effects
from vision.synth.markers_table import paint_markers
from vision.synth.table import WEBCAM_DISTORTION, WEBCAM_HFOV_DEG, _hsv_to_bgr, _mat

Image = npt.NDArray[np.uint8]
PATTERNS = ("stripes", "dots", "checks", "diamonds", "rings", "waves", "emblem")
VISIBLE_ENOUGH = 0.2  # a card showing less than this fraction of itself is not asked of the reader
PPI = 80.0
BORDER_IN = 2.0


@dataclass
class FluxPhoto:
    image: Image
    truth: dict[str, Any]  # cards (corners in inches, design, zone, visible fraction), tokens per Warlord
    camera: Camera
    layout: Layout
    flux_layout: FluxLayout
    tags: list[str] = field(default_factory=list)


def random_design(rng: np.random.Generator, near: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Source card design: a pattern in two colours inside a border. ``near``: same colours, other pattern."""
    if near is None:
        hue, sat, val = float(rng.uniform(0, 180)), float(rng.uniform(90, 230)), float(rng.uniform(90, 210))
        pattern = str(rng.choice(PATTERNS))
    else:
        hue = near["hue"] + float(rng.uniform(-6, 6))
        sat = near["sat"] + float(rng.uniform(-20, 20))
        val = near["val"] + float(rng.uniform(-20, 20))
        pattern = str(rng.choice([p for p in PATTERNS if p != near["pattern"]]))
    return {
        "hue": hue,
        "sat": sat,
        "val": val,
        "pattern": pattern,
        "colour": _hsv_to_bgr(hue, sat, val),
        "colour2": _hsv_to_bgr(hue + float(rng.uniform(-20, 20)), sat * 0.4, min(250.0, val * 1.35 + 30)),
        "border": (235, 235, 232) if rng.uniform() < 0.7 else (30, 30, 34),
        "period_mm": float(rng.uniform(5, 11)),
        "angle_deg": float(rng.choice([0, 45, 90, 30, 60])),
    }


def card_face(design: dict[str, Any], w_px: int, h_px: int) -> npt.NDArray[np.float32]:
    """The card as seen from above (BGR float), its pattern drawn in card millimetres."""
    mm_per_px = 63.0 / w_px
    v, u = np.mgrid[0:h_px, 0:w_px].astype(np.float32)
    x = (u + 0.5 - w_px / 2) * mm_per_px
    y = (v + 0.5 - h_px / 2) * mm_per_px
    a = math.radians(design["angle_deg"])
    xr, yr = x * math.cos(a) + y * math.sin(a), -x * math.sin(a) + y * math.cos(a)
    p = design["period_mm"]
    kind = design["pattern"]
    if kind == "stripes":
        t = (np.sin(2 * np.pi * xr / p) > 0).astype(np.float32)
    elif kind == "dots":
        t = ((np.mod(xr, p) - p / 2) ** 2 + (np.mod(yr, p) - p / 2) ** 2 < (0.3 * p) ** 2).astype(np.float32)
    elif kind == "checks":
        t = ((np.floor(xr / p) + np.floor(yr / p)) % 2).astype(np.float32)
    elif kind == "diamonds":
        t = ((np.abs(np.mod(xr, p) - p / 2) + np.abs(np.mod(yr, p) - p / 2)) < 0.3 * p).astype(np.float32)
    elif kind == "rings":
        t = (np.sin(2 * np.pi * np.hypot(x, y) / p) > 0).astype(np.float32)
    elif kind == "waves":
        t = (np.sin(2 * np.pi * (xr + 2.0 * np.sin(2 * np.pi * yr / (2.5 * p))) / p) > 0).astype(np.float32)
    else:  # emblem: a plain field with a large ring in the middle
        r = np.hypot(x, y)
        t = ((r > 12) & (r < 20)).astype(np.float32)
    t = cv2.GaussianBlur(t, (0, 0), 0.6)[..., None]
    face = (1 - t) * np.array(design["colour"], np.float32) + t * np.array(design["colour2"], np.float32)
    border_px = max(2, int(round(3.0 / mm_per_px)))
    frame = np.ones((h_px, w_px), np.float32)
    frame[border_px:-border_px, border_px:-border_px] = 0
    out: npt.NDArray[np.float32] = np.where(frame[..., None] > 0, np.array(design["border"], np.float32), face)
    return out


def _art_card(rng: np.random.Generator, w_px: int, h_px: int) -> npt.NDArray[np.float32]:
    """A unit or Warlord card face: dark frame, a painting, a text box."""
    face = np.full((h_px, w_px, 3), 28.0, np.float32)
    art = rng.uniform(40, 220, (4, 3, 3)).astype(np.float32)
    m = max(2, w_px // 16)
    art_h = int(h_px * 0.55)
    face[m:art_h, m:-m] = cv2.resize(art, (w_px - 2 * m, art_h - m), interpolation=cv2.INTER_CUBIC)
    face[art_h + m : h_px - m, m:-m] = (205, 215, 220)
    for k in range(4):  # lines of text
        y = art_h + 2 * m + k * (h_px - art_h - 3 * m) // 4
        cv2.line(face, (2 * m, y), (w_px - 2 * m - int(rng.uniform(0, w_px / 3)), y), (60, 60, 60), max(1, m // 3))
    return face


def _corners_in(cx: float, cy: float, rot_deg: float, w_in: float, h_in: float) -> npt.NDArray[np.float64]:
    a = math.radians(rot_deg)
    c, s = math.cos(a), math.sin(a)
    local = np.array([[-w_in / 2, -h_in / 2], [w_in / 2, -h_in / 2], [w_in / 2, h_in / 2], [-w_in / 2, h_in / 2]])
    out: npt.NDArray[np.float64] = local @ np.array([[c, s], [-s, c]]) + np.array([cx, cy])
    return out


def _pool_cards(
    rng: np.random.Generator, zone: Any, n: int, upright_deg: float, flux: FluxLayout
) -> tuple[list[tuple[float, float, float]], str]:
    """Card poses (x, y, rotation) for a pool of ``n`` in ``zone``: a row, an overlapping row or a fan."""
    w, h = flux.card_w_in, flux.card_h_in
    zw = zone.x1_in - zone.x0_in
    cx0, cy = (zone.x0_in + zone.x1_in) / 2, (zone.y0_in + zone.y1_in) / 2
    mode = str(rng.choice(["row", "overlap", "fan"]))
    if mode == "row" and n * (w + 0.05) > zw - 0.2:
        mode = "overlap"
    if mode == "fan":
        step = float(rng.uniform(16, 22) if n <= 5 else rng.uniform(13, 16))
        pivot_below = float(rng.uniform(1.2, 2.5))
        # The pivot lies below the cards' bottom edges, as in a hand of cards laid down.
        px = cx0 + float(rng.normal(0, 0.3))
        py = cy + math.cos(math.radians(upright_deg)) * (h / 2 + pivot_below)
        d = h / 2 + pivot_below
        poses = []
        for k in range(n):
            ang = (k - (n - 1) / 2) * step
            a = math.radians(ang + upright_deg)
            dx, dy = math.sin(a) * d, -math.cos(a) * d
            poses.append((px + dx, py + dy, ang + upright_deg + float(rng.normal(0, 1.0))))
        # Pull the fan inside the zone (its middle card's centre to the zone's middle).
        ys = [p[1] for p in poses]
        shift = cy - (max(ys) + min(ys)) / 2
        return [(x, y + shift, r) for x, y, r in poses], mode
    step = w + float(rng.uniform(0.05, 0.3)) if mode == "row" else w * float(rng.uniform(0.45, 0.75))
    step = min(step, (zw - w - 0.2) / max(1, n - 1))
    x_start = cx0 - step * (n - 1) / 2
    return [
        (
            x_start + k * step + float(rng.normal(0, 0.05)),
            cy + float(rng.normal(0, 0.15)),
            upright_deg + float(rng.normal(0, 4)),
        )
        for k in range(n)
    ], mode


def render_flux_table(session: int, photo: int = 1, size: tuple[int, int] = (1920, 1080)) -> FluxPhoto:
    """Photo ``photo`` of the seeded game ``session`` (photo 0: the players registering their designs)."""
    srng = np.random.default_rng([session, 0])
    flux = FluxLayout.default()
    table = (flux.width_in, flux.depth_in)
    layout = Layout.default(*table)
    design_a = random_design(srng)
    similar = srng.uniform() < 0.35
    design_b = random_design(srng, near=design_a if similar else None)
    designs = {"A": design_a, "B": design_b}
    dark = srng.uniform() < 0.2
    mat = _mat(srng, (int(table[1] * PPI), int(table[0] * PPI)), dark, "standard", PPI)
    camera = Camera.looking_at_table(
        table,
        size,
        tilt_deg=float(srng.uniform(0, 20)),
        yaw_deg=float(srng.uniform(-6, 6)),
        hfov_deg=WEBCAM_HFOV_DEG,
        dist=WEBCAM_DISTORTION,
        fill=float(srng.uniform(0.88, 0.96)),
    )
    light = float(srng.uniform(0, 0.35))
    tags = ["similar-designs"] if similar else []
    if dark:
        tags.append("dark")

    rng = np.random.default_rng([session, 1, photo])
    w_in, h_in = flux.card_w_in, flux.card_h_in
    cards: list[dict[str, Any]] = []  # bottom to top

    def add(kind: str, design: str | None, zone: str, x: float, y: float, rot: float) -> None:
        cards.append(
            {
                "id": f"c{len(cards) + 1}",
                "kind": kind,
                "design": design,
                "zone": zone,
                "corners_in": _corners_in(x, y, rot, w_in, h_in).round(4).tolist(),
                "x_in": round(x, 4),
                "y_in": round(y, 4),
                "rotation_deg": round(rot % 360, 2),
            }
        )

    upright = {"A": 0.0, "B": 180.0}
    tokens: dict[str, list[list[float]]] = {}
    pool_modes: list[str] = []
    if photo == 0:
        for p in ("A", "B"):
            zone = flux.zone("pool", p)
            n = int(rng.integers(2, 4))
            xs = np.linspace(zone.x0_in + w_in, zone.x1_in - w_in, n)
            for x in xs:
                add(
                    "source",
                    p,
                    zone.name,
                    float(x),
                    (zone.y0_in + zone.y1_in) / 2,
                    upright[p] + float(rng.normal(0, 3)),
                )
    else:
        # The deck: a neat stack (only its top card shows), its design whatever was on top.
        deck = flux.zone("deck")
        dx, dy = deck.x0_in + float(rng.uniform(1.8, 3.5)), (deck.y0_in + deck.y1_in) / 2
        for k in range(int(rng.integers(3, 6))):
            add(
                "source",
                str(rng.choice(["A", "B"])),
                deck.name,
                dx + 0.02 * k,
                dy - 0.02 * k,
                90 + float(rng.normal(0, 1)),
            )
        # The discard: a messy pile.
        disc = flux.zone("discard")
        gx, gy = (disc.x0_in + disc.x1_in) / 2 + float(rng.uniform(-3, 3)), (disc.y0_in + disc.y1_in) / 2
        for _ in range(int(rng.integers(2, 8))):
            add(
                "source",
                str(rng.choice(["A", "B"])),
                disc.name,
                gx + float(rng.normal(0, 0.8)),
                gy + float(rng.normal(0, 0.3)),
                float(rng.uniform(0, 360)),
            )
        for p in ("A", "B"):
            board = flux.zone("board", p)
            n_units = int(rng.integers(0, 4))
            xs = rng.permutation(np.arange(board.x0_in + 2.5, board.x1_in - 2.5, 3.6))[:n_units]
            for x in xs:
                add(
                    "unit",
                    None,
                    board.name,
                    float(x),
                    (board.y0_in + board.y1_in) / 2,
                    upright[p] + 90 + float(rng.normal(0, 3)),
                )
            wz = flux.zone("warlord", p)
            add(
                "warlord",
                None,
                wz.name,
                (wz.x0_in + wz.x1_in) / 2,
                (wz.y0_in + wz.y1_in) / 2,
                upright[p] + float(rng.normal(0, 4)),
            )
            n = 5 + (int(rng.integers(1, 4)) if rng.uniform() < 0.2 else 0)  # 5, more after a Burn
            poses, mode = _pool_cards(rng, flux.zone("pool", p), n, upright[p], flux)
            pool_modes.append(mode)
            for x, y, r in poses:
                add("source", str(rng.choice(["A", "B"])), flux.zone("pool", p).name, x, y, r)
            tokens[p] = _token_spots(rng, cards[-n - 1], int(rng.integers(0, 6)), flux)
        tags += sorted(set(pool_modes))

    # ---- paint ----
    tex = np.full((int((table[1] + 2 * BORDER_IN) * PPI), int((table[0] + 2 * BORDER_IN) * PPI), 3), 35, np.float32)
    o = int(BORDER_IN * PPI)
    tex[o : o + mat.shape[0], o : o + mat.shape[1]] = mat
    paint_markers(tex, layout, PPI, BORDER_IN)
    cw, ch = int(round(w_in * PPI)), int(round(h_in * PPI))
    faces = {p: card_face(d, cw, ch) for p, d in designs.items()}
    warlord_at = {c["zone"]: c for c in cards if c["kind"] == "warlord"}
    for c in cards:
        face = faces[c["design"]] if c["kind"] == "source" else _art_card(rng, cw, ch)
        _paint_card(tex, face, c["x_in"], c["y_in"], c["rotation_deg"])
        for p, spots in tokens.items():
            if warlord_at.get(flux.zone("warlord", p).name) is c:
                for x, y in spots:
                    _paint_token(tex, x, y, flux.token_diameter_in)
    flat = np.clip(tex, 0, 255).astype(np.uint8)
    image = camera.render(flat, PPI, border_in=BORDER_IN, background=35)
    effects = {
        "noise": float(rng.uniform(1, 3)),
        "blur_px": float(rng.uniform(0.3, 0.8)),
        "jpeg_quality": int(rng.integers(82, 95)),
        "light_gradient": light,
    }
    image = photo_effects(image, np.random.default_rng([session, 2, photo]), **effects)  # type: ignore[arg-type]
    _visible_fractions(cards)
    truth = {
        "session": session,
        "photo": photo,
        "designs": {p: {k: v for k, v in d.items() if k in ("pattern", "hue")} for p, d in designs.items()},
        "cards": cards,
        "tokens": {p: len(spots) for p, spots in tokens.items()},
        "pools": {
            p: [c["design"] for c in cards if c["zone"] == flux.zone("pool", p).name and c["kind"] == "source"]
            for p in flux.players
        },
    }
    return FluxPhoto(image, truth, camera, layout, flux, tags)


def _token_spots(rng: np.random.Generator, warlord: dict[str, Any], n: int, flux: FluxLayout) -> list[list[float]]:
    """``n`` Life Tokens lying apart on the Warlord card."""
    corners = np.asarray(warlord["corners_in"])
    card = shapely.Polygon(corners).buffer(-flux.token_diameter_in * 0.6)
    spots: list[list[float]] = []
    x0, y0, x1, y1 = card.bounds
    for _ in range(400):
        if len(spots) == n:
            break
        x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
        if card.contains(shapely.Point(x, y)) and all(
            math.hypot(x - a, y - b) > flux.token_diameter_in * 1.15 for a, b in spots
        ):
            spots.append([round(x, 4), round(y, 4)])
    return spots


def _paint_card(
    tex: npt.NDArray[np.float32], face: npt.NDArray[np.float32], x_in: float, y_in: float, rot_deg: float
) -> None:
    """Lay a card face on the texture, rotated about its centre, with a soft shadow under its edges."""
    h, w = face.shape[:2]
    a = math.radians(rot_deg)
    cx, cy = (x_in + BORDER_IN) * PPI, (y_in + BORDER_IN) * PPI
    c, s = math.cos(a), math.sin(a)
    M = np.array([[c, -s, cx - c * w / 2 + s * h / 2], [s, c, cy - s * w / 2 - c * h / 2]])
    size = (tex.shape[1], tex.shape[0])
    ones = np.ones((h, w), np.float32)
    shadow = cv2.warpAffine(ones, M + np.array([[0, 0, 0.04 * PPI], [0, 0, 0.05 * PPI]]), size, flags=cv2.INTER_LINEAR)
    shadow = cv2.GaussianBlur(shadow, (0, 0), 0.04 * PPI)
    tex *= (1 - 0.45 * shadow)[..., None]
    mask = cv2.warpAffine(ones, M, size, flags=cv2.INTER_LINEAR)[..., None]
    warped = cv2.warpAffine(face, M, size, flags=cv2.INTER_LINEAR)
    tex[:] = tex * (1 - mask) + warped * mask


def _paint_token(tex: npt.NDArray[np.float32], x_in: float, y_in: float, diameter_in: float) -> None:
    c = (int((x_in + BORDER_IN) * PPI * 8), int((y_in + BORDER_IN) * PPI * 8))
    r = int(diameter_in / 2 * PPI * 8)
    cv2.circle(tex, (c[0] + int(0.03 * PPI * 8), c[1] + int(0.04 * PPI * 8)), r, (20, 20, 20), -1, cv2.LINE_AA, 3)
    cv2.circle(tex, c, r, (40, 40, 190), -1, cv2.LINE_AA, 3)
    cv2.circle(tex, c, int(r * 0.7), (70, 70, 220), -1, cv2.LINE_AA, 3)


def _visible_fractions(cards: list[dict[str, Any]], ppi: float = 20.0) -> None:
    """Each card's visible fraction (those above it hide it), painted bottom to top into an id map."""
    if not cards:
        return
    xs = np.concatenate([np.asarray(c["corners_in"])[:, 0] for c in cards])
    ys = np.concatenate([np.asarray(c["corners_in"])[:, 1] for c in cards])
    x0, y0 = float(xs.min()) - 1, float(ys.min()) - 1
    ids = np.zeros((int((ys.max() - y0 + 1) * ppi), int((xs.max() - x0 + 1) * ppi)), np.int32)
    areas = []
    for k, c in enumerate(cards, start=1):
        pts = np.round((np.asarray(c["corners_in"]) - [x0, y0]) * ppi * 8).astype(np.int32)
        one = np.zeros_like(ids, np.uint8)
        cv2.fillPoly(one, [pts], 1, cv2.LINE_8, shift=3)
        areas.append(int(one.sum()))
        ids[one > 0] = k
    counts = np.bincount(ids.ravel(), minlength=len(cards) + 1)
    for k, c in enumerate(cards, start=1):
        c["visible_fraction"] = round(float(counts[k]) / max(1, areas[k - 1]), 3)
