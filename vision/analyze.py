"""Photo -> scene: calibrate, detect, map to table inches, assign teams, attach uncertainty."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import shapely

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import CalibrationError, TableFrame, calibrate
from geometry.shapes import BASE_HEIGHT_IN
from vision.camera_quality import camera_quality, describe_camera
from vision.centre_sigma import centre_sigma_in
from vision.colour import alike_players, bgr_to_lab, colour_gain, describe_alike, hex_to_bgr, lab_to_bgr
from vision.covered import Covers, describe_beside, find_covers
from vision.detect_classical import ClassicalDetector, Reference
from vision.detect_learned import DEFAULT_MODEL, RUNTIME_ENV, RUNTIMES, LearnedDetector
from vision.detections import RIM_SAMPLE_RADII, Detections
from vision.hex_mat import HEX_GAMES, describe_no_hex_mat, hex_mat_on
from vision.refiner import DEFAULT_REFINER
from vision.resolution import coarse_note, describe_coarse, table_px_per_in
from vision.size_doubt import (
    EDGE_SIGMA_SHOWN_IN,
    base_edge_sigma_in,
    other_shape_sigma_in,
    size_step_sigma_in,
    unsure_sizes,
)
from vision.unit_agreement import agree_players, agree_sizes, agree_with_mates

Image = npt.NDArray[np.uint8]


# Games whose every miniature acts alone (a Onefinity trooper, a Miniature Skirmish miniature): each base found is
# a unit of its own until the players assign it, not one unit per player.
ONE_MODEL_UNITS = ("onefinity", "miniature-skirmish")
PLAYERS_MODELS = "-found"  # a unit id ending so holds all of one player's models, until the players assign units


@dataclass(frozen=True)
class Analysis:
    scene: dict[str, Any]
    detections: Detections
    frame: TableFrame
    times_ms: dict[str, float]
    rectified: Image


# A base's team: from the 15 % of its rim samples nearest a player's colour. On solid bases (session 23) the
# team's ring is a thin band on a bevelled top, the rest of the samples fall on shaded sides, the mat or the
# figure. Tuning tables 6200-6319 / 6040-6119, wrong players (learned detector): at 0.4 21 / -, 0.3 15 / 8,
# 0.25 13 / -, 0.2 10 / 6, 0.15 9 / 5, 0.1 13 / -. The classical detector on 6200: 127 -> 95 at 0.15.
TEAM_CLOSEST_SHARE = 0.15
TEAM_ROUNDS = 3  # rounds of learning the players' colours from the photo (measured: 1 to 5 alike)
# A rim sample is judged against a player's colour blended with what lies beside the rim, the player's colour
# at least this share of the blend. Measured on the tuning tables (6200-6319 / 6040-6199): players' colours
# alone 97.9 / 96.4 %; blends 98.1 / 98.4 % (at 0.3 97.5 / 98.1 %, at 0.5 98.1 / 98.3 %).
BLEND_MIN_SHARE = 0.4
# A sample the colour beside it explains about as well as a player's blend says little of that player: a grey base
# top or figure lies near every blend of a dark grey or black player's colour with it, and a dark player took every
# base whose rim was thin. A blend must explain a sample this much better (Lab) than the colour beside it alone;
# short of that, the sample's distance grows by the shortfall. Teams, flagstone tables 77000-77039 (a style held out
# from training, whose palette has a dark grey player: 9 of its 10 wrong bases were on tables with one) / tuning
# 6200-6259: as before 97.60 / 98.55 %; at 1, 98.80 / 98.81; 2, 98.80 / 98.94; 3, 99.04 / 98.94; 4, 99.04 / 98.94 %.
# Then at 3, on sets not used to choose it: held-out 5000-5299 99.23 -> 99.54 %, near-mat 13000-13039 88.80 -> 90.96
# %, flagstone 78000-78039 98.53 -> 99.58 % (docs/vision.md, session 77).
BESIDE_MARGIN_LAB = 3.0
# A player given few bases takes the part of another's bases lying towards its colour, where they fall in
# two groups this many spreads apart and at least SPLIT_MIN_DE apart in Lab (measured on the tuning
# tables: two washed-out teams stood 17.8 apart, one team's bases 4.9).
SPLIT_GAP_SPREADS = 3.0
SPLIT_MIN_DE = 8.0
# A player with this share of the bases or less is checked for bases the other took. Measured on the tuning
# tables (6200-6319 / 6040-6199): with no base at all as the trigger, teams 96.2 / 95.7 %; at 15 % 97.9 /
# 96.4 % (10-25 % alike; 50 % or more splits real teams: 96.0 / 95.2 %).
SPLIT_FEW_SHARE = 0.15
# A base beside a hand (vision/covered.py: BESIDE_COVER_IN) may be read from the part of it the hand leaves: its
# centre's sigma grows by this. Tuning tables' photos with a hand (6200-6259, near-mat 13000-13039), the 24 bases
# found beside one: each axis within 2 sigma 87.5 % as read, 91.7 % with 0.05", 97.9 % with 0.08".
PARTLY_HIDDEN_SIGMA_IN = 0.08


def assign_teams(
    colours_bgr: npt.NDArray[np.float64],
    players: dict[str, str],
    rim_samples_bgr: npt.NDArray[np.float64] | None = None,
) -> list[str]:
    """Each base to a player by colour (see ``team_evidence``)."""
    return team_evidence(colours_bgr, players, rim_samples_bgr)[0]


def team_evidence(
    colours_bgr: npt.NDArray[np.float64],
    players: dict[str, str],
    rim_samples_bgr: npt.NDArray[np.float64] | None = None,
    mat_samples_bgr: npt.NDArray[np.float64] | None = None,
    light_gain: npt.NDArray[np.float64] | None = None,
) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Each base to a player by colour, and how far (Lab) each base's colour lies from each player's (N, players).

    With ``rim_samples_bgr`` (N, K, 3; colours round each base's edge, ``Detections.rim_sample_bgr``): a
    base goes to the player whose colour its closest samples come nearest (the rim shows in some of them
    even where a figure hides the rest). A rim a pixel or two wide is seen blurred into what lies beside
    it, so a sample is compared with the player's colour blended with the base's top (the innermost
    sample at the same angle) or with the mat (``mat_samples_bgr``: the empty table at the same points).
    Each player's colour is then learned from the photo, a few rounds (light moves it away from the
    confirmed one). ``light_gain``: (3,) the photo's light against the set-up's (``colour_gain``), by which the
    confirmed colours are brought into the photo's light first.
    Without samples: the confirmed colour nearest to each base's one rim colour (in Lab)."""
    if not players or len(colours_bgr) == 0:
        return ["" for _ in range(len(colours_bgr))], np.zeros((len(colours_bgr), len(players)))
    names = list(players)
    confirmed_bgr = np.array([hex_to_bgr(players[p]) for p in names], np.float64)
    if light_gain is not None:
        confirmed_bgr = np.clip(confirmed_bgr * light_gain, 0, 255)
    if rim_samples_bgr is None:
        d = np.linalg.norm(bgr_to_lab(colours_bgr)[:, None, :] - bgr_to_lab(confirmed_bgr)[None, :, :], axis=2)
        return [names[int(k)] for k in d.argmin(axis=1)], d
    rim = np.asarray(rim_samples_bgr, np.float64)
    n, k = rim.shape[:2]
    beside = [_innermost(rim)]
    if mat_samples_bgr is not None:
        beside.append(np.asarray(mat_samples_bgr, np.float64))
    closest = max(1, int(round(k * TEAM_CLOSEST_SHARE)))
    samples = bgr_to_lab(rim)
    refs = bgr_to_lab(confirmed_bgr)
    for round_ in range(TEAM_ROUNDS + 1):
        d = np.min([_blend_distance(rim, lab_to_bgr(refs), b) for b in beside], axis=0)  # (N, K, players)
        distance = np.sort(d, axis=1)[:, :closest].mean(axis=1)  # (N, players)
        owner = distance.argmin(axis=1)
        if round_ == TEAM_ROUNDS:
            break
        for p in range(len(names)):
            # The colour learned: the median of the samples nearest it (not of the nearest blends, which
            # would pull it towards the mat round after round).
            mine = samples[owner == p].reshape(-1, 3)
            if len(mine):  # even one or two bases move it: a colour far off at first gathers the rest then
                off = np.linalg.norm(mine - refs[p], axis=1)
                refs[p] = np.median(mine[off <= np.quantile(off, TEAM_CLOSEST_SHARE)], axis=0)
    split = _split_washed_out(samples, owner, refs, bgr_to_lab(confirmed_bgr), closest)
    # A base given to another player by the split: its colour evidence is the same for both.
    moved = split != owner
    distance[moved, split[moved]] = distance[moved].min(axis=1)
    return [names[int(p)] for p in split], distance


def _innermost(rim_bgr: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(N, K, 3): for each rim sample, the innermost sample at its angle (the base's top, or its figure)."""
    n = len(rim_bgr)
    rings = rim_bgr.reshape(n, len(RIM_SAMPLE_RADII), -1, 3)
    return np.repeat(rings[:, :1], len(RIM_SAMPLE_RADII), axis=1).reshape(rim_bgr.shape)


def _blend_distance(
    samples_bgr: npt.NDArray[np.float64], players_bgr: npt.NDArray[np.float64], beside_bgr: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """(N, K, players): Lab distance from each sample to the nearest blend of each player's colour with the
    colour beside it (at least BLEND_MIN_SHARE of the player's), plus how far short it falls of explaining the sample
    BESIDE_MARGIN_LAB better than that colour alone. Blends are taken in BGR, as blur mixes light; where
    ``beside_bgr`` is unknown (NaN), the distance is infinite."""
    seen = bgr_to_lab(samples_bgr)
    beside_known: npt.NDArray[np.bool_] = np.asarray(np.isfinite(beside_bgr).all(axis=-1))
    beside_lab = bgr_to_lab(np.where(beside_known[..., None], beside_bgr, 0.0))
    from_beside = np.linalg.norm(seen - beside_lab, axis=-1)
    out = []
    for colour in players_bgr:
        towards = colour[None, None, :] - beside_bgr
        share = ((samples_bgr - beside_bgr) * towards).sum(axis=-1) / np.maximum((towards * towards).sum(axis=-1), 1e-6)
        share = np.clip(np.nan_to_num(share, nan=1.0), BLEND_MIN_SHARE, 1.0)
        blend = np.clip(beside_bgr + share[..., None] * towards, 0, 255)
        lab = bgr_to_lab(np.where(beside_known[..., None], blend, 0.0))  # (a blend is unknown where beside is)
        distance = np.linalg.norm(seen - lab, axis=-1)
        distance += np.maximum(0.0, BESIDE_MARGIN_LAB - (from_beside - distance))
        out.append(np.where(beside_known, distance, np.inf))
    return np.stack(out, axis=-1)


def _split_washed_out(
    samples: npt.NDArray[np.float64],
    owner: npt.NDArray[np.int64],
    refs: npt.NDArray[np.float64],
    confirmed: npt.NDArray[np.float64],
    closest: int,
) -> npt.NDArray[np.int64]:
    """A player given few bases (SPLIT_FEW_SHARE or less) while another holds two groups of bases apart in
    colour: the group lying towards the first player's confirmed colour is that player's. Thin rims wash out
    in a photo (a yellow rim one pixel wide reads cream), so both teams' bases can lie nearer one confirmed
    colour; they still differ in the direction the two confirmed colours do. The player's colour, learned
    from its one or two bases, may be an odd one's (a figure's paint): the other player's two groups say
    more."""
    owner = owner.copy()
    for q in range(len(refs)):
        if (owner == q).sum() > SPLIT_FEW_SHARE * len(owner):
            continue
        for p in range(len(refs)):
            mine = np.flatnonzero(owner == p)
            if len(mine) < 2 or p == q:
                continue
            # Each base's colour: its samples nearest the group's learned colour.
            d = np.linalg.norm(samples[mine] - refs[p], axis=2)
            nearest = np.argsort(d, axis=1)[:, :closest]
            colour = np.take_along_axis(samples[mine], nearest[..., None], axis=1).mean(axis=1)
            towards = confirmed[q] - confirmed[p]
            t = colour @ (towards / max(float(np.linalg.norm(towards)), 1e-9))
            order = np.sort(t)
            # The best cut into two groups (1-D two-means): the one with least spread within them.
            cuts = [(order[:k].var() * k + order[k:].var() * (len(order) - k), k) for k in range(1, len(order))]
            _, k = min(cuts)
            low, high = order[:k], order[k:]
            spread = np.sqrt((low.var() * len(low) + high.var() * len(high)) / len(order)) + 1e-9
            gap = high.mean() - low.mean()
            # The bases left to ``p`` must not be few in turn: a split that would hand over all but one odd base
            # (a figure's paint) swaps the players instead of mending them (session 53, fresh table 52011).
            kept_many = len(low) > SPLIT_FEW_SHARE * len(owner)
            if gap >= SPLIT_MIN_DE and gap >= SPLIT_GAP_SPREADS * spread and kept_many:
                owner[mine[t >= high.min()]] = q
                break
    return owner


Detector = ClassicalDetector | LearnedDetector
DETECTORS = ("auto", "learned", "classical")
ROW_GAP_IN = 2.0  # objectives whose y lie this close are one row when they are numbered (reading_order)
_learned: dict[str, LearnedDetector] = {}


def make_detector(
    name: str = "auto", model_path: str | Path | None = None, refiner_path: str | Path | None = None
) -> Detector:
    """'classical', 'learned' (the shipped or given ONNX model), or 'auto': learned where a model is present.
    ``refiner_path``: the learned detector's base refiner (default: the shipped one), such as one
    ``tablesight adapt`` fitted to the players' table. The environment's TABLESIGHT_RUNTIME names what runs the
    learned detector's network (``LearnedDetector.runtime``; "openvino" where that extra is installed, the fastest
    here)."""
    if name not in DETECTORS:
        raise ValueError(f"detector {name!r}: expected one of {', '.join(DETECTORS)}")
    if refiner_path and not Path(refiner_path).is_file():  # never the shipped one in its place, unsaid
        raise ValueError(f"base refiner {refiner_path}: no such file")
    if model_path and name != "classical" and not Path(model_path).is_file():  # nor the classical detector
        raise ValueError(f"detector model {model_path}: no such file")
    path = Path(model_path) if model_path else DEFAULT_MODEL
    if name == "classical" or (name == "auto" and not LearnedDetector.available(path)):
        return ClassicalDetector()
    runtime = os.environ.get(RUNTIME_ENV, "auto")
    if runtime not in RUNTIMES:
        raise ValueError(f"{RUNTIME_ENV}={runtime!r}: expected one of {', '.join(RUNTIMES)}")
    refiner = Path(refiner_path) if refiner_path else DEFAULT_REFINER
    key = f"{path}|{refiner}|{runtime}"
    if key not in _learned:  # loading the networks once per process
        _learned[key] = LearnedDetector(path, refiner_path=refiner, runtime=runtime)
    return _learned[key]


SAME_VIEW = "take both with the same camera, at the same size, without moving it"


def _size(image: Image) -> str:
    return f"{image.shape[1]}x{image.shape[0]}"


def analyze(
    photo: Image,
    layout: Layout,
    empty: Image | None = None,
    frame: TableFrame | None = None,
    lens: LensModel | None = None,
    game: str = "focal-point",
    players: dict[str, str] | None = None,
    terrain: list[dict[str, Any]] | None = None,
    reference: Reference | None = None,
    detector: Detector | None = None,
    mates_settle_sizes: bool = True,
    hex_mat: dict[str, Any] | None = None,
    find_hex_mat: bool = True,
) -> Analysis:
    """One photo to a scene. ``empty``: the same view before models were placed (the reference frame);
    ``players``: confirmed team colours; ``terrain``: known pieces (heights put bases on hills right);
    ``reference``: the set-up prepared once (``detector.prepare``), for frame after frame;
    ``detector``: see ``make_detector`` (default: 'auto'); ``mates_settle_sizes``: a base the refiner read
    unsurely takes the size its unit-mates agree on (``agree_with_mates``). A live game's frames after the
    deployment leave it off: the tracker knows each model's size, and matches on each piece's own read (a size
    taken from the neighbours made it take a badly measured piece for a lost model: docs/live.md, session 35).
    ``hex_mat``: in a game played in hexes (``vision.hex_mat.HEX_GAMES``), the mat's grid as a scene's
    ``table.hex``; None: found on the empty table (else the photo), unless ``find_hex_mat`` is False (a live game
    finds it once, at set-up)."""
    if photo is None or photo.ndim != 3 or photo.size == 0:
        raise CalibrationError("the photo is empty or not a colour image")
    if frame is not None and tuple(frame.image_size) != (photo.shape[1], photo.shape[0]):
        made = "x".join(map(str, frame.image_size))
        raise CalibrationError(
            f"the calibration was made on {made} photos, not this {_size(photo)} one: calibrate again on this "
            "camera's photos (tablesight calibrate), or leave the calibration out"
        )
    if empty is not None and empty.shape[:2] != photo.shape[:2]:
        # Read against the photo's calibration, an empty table of another size would be seen as covered all over.
        raise ValueError(f"the empty table is {_size(empty)} and the photo {_size(photo)}: {SAME_VIEW}")
    times: dict[str, float] = {}
    start = time.perf_counter()
    if frame is None:
        frame = calibrate(photo, layout, lens)
    times["calibrate_ms"] = (time.perf_counter() - start) * 1e3
    detector = detector if detector is not None else make_detector("auto")
    estimated = reference is None and empty is None  # no empty table: the table smoothed from the photo itself
    if reference is None:
        start = time.perf_counter()
        reference = detector.prepare(empty if empty is not None else _background_estimate(photo), frame)
        times["setup_ms"] = (time.perf_counter() - start) * 1e3
    # How well the camera sees: past the renderer's camera, sizes are read by both size readers, and a blurred
    # photo's centres by the refiner for blurred photos (vision/refiner.py).
    start = time.perf_counter()
    camera = camera_quality(photo, frame)
    times["camera_ms"] = (time.perf_counter() - start) * 1e3
    detections, det_times, top = detector.detect(photo, reference, frame, camera)
    times.update(det_times)
    start = time.perf_counter()
    # The webcam's exposure and white balance drift from the set-up's: the photo's light against the empty table's.
    gain = colour_gain(top, reference.rectified)
    # What covers the table that no piece found accounts for (a hand): pieces under it cannot be seen. Only
    # against a real empty table: one smoothed from the photo has the hand in it too.
    covers = (
        Covers.none(len(detections)) if estimated else find_covers(top, reference.rectified, frame, detections, gain)
    )
    covered = covers.regions
    times["covered_ms"] = (time.perf_counter() - start) * 1e3
    hexes: dict[str, Any] = {}  # the mat's grid, and where it came from, in a game played in hexes
    if game in HEX_GAMES:
        start = time.perf_counter()
        hexes = _hex_mat(photo, empty, frame, hex_mat, find_hex_mat)
        if hex_mat is None and find_hex_mat:  # searched for now (a live game searches once, at set-up)
            times["hex_mat_ms"] = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    bases = detections[detections.kind == 0]
    markers = detections[detections.kind == 1]
    x, y, z = ground_positions(bases.x_in, bases.y_in, frame, terrain or [])
    # The empty table's colours beside each rim, brought into the photo's light (held-out photos tinted 12 % warm:
    # team 97.8 -> 99.1 %; docs/vision.md, session 54).
    mat_bgr = bases.mat_sample_bgr * gain
    teams, colour_distances = team_evidence(bases.colour_bgr, players or {}, bases.rim_sample_bgr, mat_bgr, gain)
    # Unit-mates share a size and a player: a base read alone is checked against its close neighbours.
    sizes = agree_sizes(x, y, [str(s) for s in bases.size], teams, bases.size_p)
    teams = agree_players(x, y, sizes, teams, colour_distances)
    if mates_settle_sizes:
        sizes = agree_with_mates(x, y, sizes, teams, bases.size_p, colour_distances)
    # A size read unsurely leaves the base's edge in doubt: rulings from edges must say so (vision/size_doubt.py).
    edge_sigma = base_edge_sigma_in(bases.size_p, sizes)
    # A place read both as a round base and as an oval: the camera could not tell which, so the other reading's
    # centre and edge are kept within the rulings' 2 sigma (vision/size_doubt.py).
    shape_sigma, shape_edge_sigma = other_shape_sigma_in(sizes, bases.other_size, bases.other_shape_in)
    edge_sigma = np.hypot(edge_sigma, shape_edge_sigma)
    # Each piece's sigma: the calibration's, and the measuring's (by how its centre was found, and for bases the
    # refiners measured, how obliquely the camera saw them and how far the base refiner's views disagreed).
    calib_sigma = frame.quality.sigma_mean_in if frame.quality else 0.0
    slope = frame.view_slope(np.c_[x, y]) if len(x) else None
    base_sigma = np.hypot(calib_sigma, centre_sigma_in(bases.measured_by, slope, bases.views_sd_in))
    if slope is not None and frame.focal_sigma_share > 0:
        # The parallax put back at each base's top grows with the view's slope, known as surely as the focal
        # length: a camera square-on to the table, without a lens file, cannot tell it (calibration/focal_from_markers.py).
        base_sigma = np.hypot(base_sigma, (z + BASE_HEIGHT_IN) * slope * frame.focal_sigma_share)
    # ...and what a camera worse than the renderer's adds: blurred, or JPEG'd coarsely (vision/camera_quality.py).
    added_sigma = camera.added_sigma_in(frame.inches_per_pixel(np.c_[x, y])) if len(x) else np.zeros(0)
    base_sigma = np.hypot(np.hypot(base_sigma, added_sigma), shape_sigma)
    # A base beside a hand may be partly under it, read from the part seen: its place and its size are in doubt.
    beside_cover = covers.beside[detections.kind == 0]
    base_sigma = np.hypot(base_sigma, np.where(beside_cover, PARTLY_HIDDEN_SIGMA_IN, 0.0))
    edge_sigma = np.hypot(edge_sigma, np.where(beside_cover, size_step_sigma_in(sizes), 0.0))
    beside_ids = [f"b{k + 1}" for k in np.flatnonzero(beside_cover)]
    marker_sigma = np.hypot(calib_sigma, centre_sigma_in(markers.measured_by))
    typical_sigma = float(np.median(base_sigma)) if len(base_sigma) else calib_sigma
    alike = alike_players(players or {})
    scales_px_per_in = table_px_per_in(frame, layout.width_in, layout.depth_in)
    coarse = coarse_note(scales_px_per_in)
    camera_note = camera.note(camera.added_sigma_px / float(np.median(scales_px_per_in)))  # at the table's median scale
    units: dict[str, dict[str, Any]] = {}
    models = []
    alone = game in ONE_MODEL_UNITS  # until the players assign units: one a base, else one a player
    for k in range(len(bases)):
        team = teams[k] or "unknown"
        unit_id = f"{team}-b{k + 1}" if alone else f"{team}{PLAYERS_MODELS}"
        units.setdefault(
            unit_id,
            {
                "id": unit_id,
                "player": team,
                "name": f"{team} b{k + 1} (unassigned)" if alone else f"{team} (unassigned)",
                "profile": {},
                "keywords": [],
                "state": {},
            },
        )
        models.append(
            {
                "id": f"b{k + 1}",
                "unit": unit_id,
                "base": sizes[k],
                "x": round(float(x[k]), 4),
                "y": round(float(y[k]), 4),
                "z": round(float(z[k]), 4),
                "facing_deg": round(float(bases.facing_deg[k]), 2),
                "sigma_in": round(float(base_sigma[k]), 5),
                **({"base_sigma_in": round(float(edge_sigma[k]), 4)} if edge_sigma[k] >= EDGE_SIGMA_SHOWN_IN else {}),
                **({"other_base": str(bases.other_size[k])} if bases.other_size[k] else {}),
            }
        )
    scene = {
        "format": "tablesight-scene/1",
        "game": game,
        "table": {"width_in": layout.width_in, "depth_in": layout.depth_in, **hexes.get("table", {})},
        "players": [{"id": p, "color": c} for p, c in (players or {}).items()]
        + ([{"id": "unknown"}] if any(u["player"] == "unknown" for u in units.values()) else []),
        "units": list(units.values()),
        "models": models,
        "terrain": list(terrain or []),
        "objectives": [
            {
                "id": f"obj{n + 1}",
                "x": round(float(markers.x_in[k]), 4),
                "y": round(float(markers.y_in[k]), 4),
                "diameter_mm": 40,
                "sigma_in": round(float(marker_sigma[k]), 5),
            }
            for n, k in enumerate(reading_order(markers.x_in, markers.y_in))
        ],
        "measurement": {
            "sigma_in": round(typical_sigma, 5),
            "source": "camera",
            "calibration_error_in": round(calib_sigma, 5),
            "covered": [
                {"x": c.x_in, "y": c.y_in, "area_sq_in": c.area_sq_in, "box_in": list(c.box_in)} for c in covered
            ],
            # The bases beside it, perhaps partly under it: their places and sizes were read from the part seen.
            **({"beside_cover": beside_ids} if beside_ids else {}),
            # Players whose colours the camera can hardly tell apart: the players it gave their bases need confirming.
            **({"players_alike": [{"players": [a, b], "delta_e": d} for a, b, d in alike]} if alike else {}),
            # The photo's pixels to the inch where it sees the table most coarsely; too few: sizes and teams unsure.
            "px_per_in": round(float(scales_px_per_in.min()), 1),
            **({"coarse": coarse} if coarse else {}),
            # A camera blurred or JPEG'd more than the sigmas were fitted for: what it reads, and the sigma it adds.
            **({"camera": camera_note} if camera_note else {}),
            **hexes.get("measurement", {}),
        },
    }
    times["scene_ms"] = (time.perf_counter() - start) * 1e3
    return Analysis(scene, detections, frame, times, top)


def _hex_mat(
    photo: Image, empty: Image | None, frame: TableFrame, given: dict[str, Any] | None, find: bool
) -> dict[str, Any]:
    """The scene's ``table.hex`` and ``measurement.hex_mat`` for a game played in hexes."""
    if given is not None:
        return {"table": {"hex": given}, "measurement": {"hex_mat": {"from": "given"}}}
    if not find:
        return {"measurement": {"hex_mat": {"from": "not found"}}}
    found = hex_mat_on(empty if empty is not None else photo, frame)
    if found is None:
        return {"measurement": {"hex_mat": {"from": "not found"}}}
    seen_on = "the empty table" if empty is not None else "the photo"
    return {
        "table": {"hex": found.spec()},
        "measurement": {"hex_mat": {"from": seen_on, "contrast": round(found.contrast, 3)}},
    }


def to_confirm(scene: dict[str, Any]) -> list[str]:
    """What the players are asked to confirm of an analysed ``scene``: the teams of players whose colours are
    alike, what a photo too coarse read, the bases beside what covers the table, and the bases whose size was read
    unsurely. ``analyze`` prints these; ``watch`` and the page say them at the deployment frame, whose sizes the
    models keep all game."""
    measurement = scene["measurement"]
    alike = [describe_alike(pair) for pair in measurement.get("players_alike", [])]
    coarse = [describe_coarse(measurement["coarse"])] if "coarse" in measurement else []
    unsure = unsure_sizes(scene.get("models", []))
    no_hexes = [describe_no_hex_mat()] if measurement.get("hex_mat", {}).get("from") == "not found" else []
    camera = describe_camera(measurement["camera"]) if "camera" in measurement else None
    beside = [describe_beside(measurement["beside_cover"])] if measurement.get("beside_cover") else []
    return no_hexes + alike + coarse + ([camera] if camera else []) + beside + ([unsure] if unsure else [])


def reading_order(x_in: npt.ArrayLike, y_in: npt.ArrayLike, row_gap_in: float = ROW_GAP_IN) -> list[int]:
    """Indices of the points in reading order on the table: rows from the top edge (y 0) down, each left to right.
    A row is points whose y lie within ``row_gap_in`` of the previous one's, so a marker's number does not
    hang on which order the detector found them in, nor on a measurement's last hundredth of an inch.

    >>> reading_order([20.0, 4.0, 12.0, 4.1], [12.0, 4.0, 12.3, 20.0])
    [1, 2, 0, 3]
    """
    x, y = np.asarray(x_in, float).ravel(), np.asarray(y_in, float).ravel()
    by_y = sorted(range(len(y)), key=lambda k: (y[k], x[k]))
    rows: list[list[int]] = []
    for k in by_y:
        if rows and y[k] - y[rows[-1][-1]] <= row_gap_in:
            rows[-1].append(k)
        else:
            rows.append([k])
    return [k for row in rows for k in sorted(row, key=lambda k: (x[k], y[k]))]


def ground_positions(
    x_view_in: npt.NDArray[np.float64],
    y_view_in: npt.NDArray[np.float64],
    frame: TableFrame,
    terrain: list[dict[str, Any]],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Where bases stand (x, y, and z: the ground's height), from where the top-down view of the table plane
    shows their tops. The camera sees a base's top, ``BASE_HEIGHT_IN`` above its foot (and a hill's height
    more on a hill), moved away from the camera's foot by parallax: each is put back where its ray meets that
    height. Without the camera's pose (no lens, no intrinsics) the view's places are used as they are."""
    x, y = np.array(x_view_in, np.float64), np.array(y_view_in, np.float64)
    z = np.zeros(len(x))
    if frame.rvec is None or not len(x):
        return x, y, z
    pixels = frame.table_to_image(np.c_[x, y])
    for piece in terrain:
        if piece.get("kind") == "hill":
            # A hill is a plateau: a top whose ray comes down to the plateau's height over the plateau stands on
            # it (the plateau hides the mat beyond along that ray). Where the ray meets the mat says nothing: near
            # the far edge it lies past the edge, by the hill's parallax, for a base standing on the hill.
            height_in = float(piece["height_in"])
            at_height = frame.image_to_table(pixels, height_in)
            on_top = shapely.contains_xy(shapely.Polygon(piece["polygon"]), at_height[:, 0], at_height[:, 1])
            z[on_top & (z < height_in)] = height_in
    ground = frame.image_to_table(pixels, z + BASE_HEIGHT_IN)
    return ground[:, 0], ground[:, 1], z


def _background_estimate(photo: Image) -> Image:
    """Without a reference frame: the table with small things smoothed away (weaker than a real reference)."""
    small = cv2.resize(photo, (photo.shape[1] // 4, photo.shape[0] // 4), interpolation=cv2.INTER_AREA)
    blurred = cv2.medianBlur(small, 31)
    out: Image = cv2.resize(blurred, (photo.shape[1], photo.shape[0]), interpolation=cv2.INTER_LINEAR)
    return out


def draw_overlay(photo: Image, analysis: Analysis) -> Image:
    """What was found, drawn on the photo."""
    out = photo.copy()
    frame = analysis.frame
    for m in analysis.scene["models"]:
        from geometry.shapes import base_semi_axes_in

        a, b = base_semi_axes_in(m["base"])
        t = np.linspace(0, 2 * np.pi, 48)
        f = np.radians(m["facing_deg"])
        pts = np.c_[
            m["x"] + a * np.cos(t) * np.cos(f) - b * np.sin(t) * np.sin(f),
            m["y"] + a * np.cos(t) * np.sin(f) + b * np.sin(t) * np.cos(f),
        ]
        px = frame.table_to_image(pts, m.get("z", 0.0))
        cv2.polylines(out, [np.round(px).astype(np.int32)], True, (0, 255, 0), 2, cv2.LINE_AA)
    for o in analysis.scene["objectives"]:
        c = frame.table_to_image([[o["x"], o["y"]]])[0]
        cv2.circle(out, (int(c[0]), int(c[1])), 6, (0, 200, 255), -1)
        # its id, as the rulings name it ("obj2"): numbered in reading order on the table (reading_order)
        label = (int(c[0]) + 10, int(c[1]) - 10)
        cv2.putText(out, str(o["id"]), label, cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 4, cv2.LINE_AA)
        cv2.putText(out, str(o["id"]), label, cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 200, 255), 2, cv2.LINE_AA)
    return out
