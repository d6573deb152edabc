"""Rendered datasets with ground truth, and how well perception does on them."""

from __future__ import annotations

import csv
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensError, LensModel
from calibration.table_frame import CalibrationError, TableFrame, calibrate
from geometry.shapes import MM_PER_IN, base_semi_axes_in
from vision.analyze import Analysis, Detector, analyze, make_detector
from vision.detect_classical import Reference
from vision.hex_mat import mat_grid
from vision.synth.table import RenderedTable, render_table, webcam_lens

Image = npt.NDArray[np.uint8]

MATCH_FRACTION = 0.5  # a detection matches a true base if its centre is within half the base's radius
SEEN_RIM_SHARE = 0.25  # a base counts as seen by the camera when this share of its rim is not covered


def yolo_labels(outlines: list[tuple[str, str, np.ndarray]], size: tuple[int, int]) -> list[str]:
    """YOLO segmentation lines: class, then the outline normalised to the image (0..1)."""
    classes = {"base": 0, "objective": 1, "terrain": 2}
    w, h = size
    lines = []
    for kind, _, poly in outlines:
        pts = np.clip(poly / [w, h], 0, 1)
        lines.append(f"{classes[kind]} " + " ".join(f"{v:.5f}" for v in pts.ravel()))
    return lines


def render_dataset(
    out: str | Path,
    count: int,
    seed: int = 0,
    games: tuple[str, ...] = ("focal-point", "grinding-annihilation"),
    style: str = "standard",
    figures: str = "blob",
    trees: bool = False,
    rims: str = "palette",
    group: int | None = None,
    side_markers: bool = False,
    size: tuple[int, int] = (1920, 1080),
) -> list[Path]:
    """Write ``count`` rendered tables (photo, empty reference, truth, YOLO labels). Never trained on when held out.
    ``figures``: how figures stand on their bases ('blob' or 'varied', vision/synth/table.py: FIGURE_STYLES);
    ``trees``: woods carry trees; ``rims``: 'palette' or 'near-mat' (vision/synth/table.py: RIM_STYLES);
    ``group``: every table on one group of players' mat, in their colours (render_table's ``group``);
    ``side_markers``: the kit's two markers at the middle of the long edges too (Layout.default's);
    ``size``: the webcam's (width, height) in pixels, its lens calibrated at that size."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    # The webcam's lens, calibrated once from photos of the kit's board, as a player would. A folder rendered in
    # more than one run keeps the first run's lens file: each calibration from other views of the board differs a
    # little, and the held-out 300 read a base's size and two teams differently with the second run's
    # (docs/calibration.md, session 58).
    lens_path = root / "lens.json"
    if not _lens_at(lens_path, size):
        webcam_lens(seed, size).save(lens_path)
    for k in range(count):
        game = games[k % len(games)]
        written.append(render_one(root, seed + k, game, style, figures, trees, rims, group, side_markers, size))
    return written


def _lens_at(path: Path, size: tuple[int, int]) -> bool:
    """There is a lens file at ``path``, calibrated at the photo ``size``."""
    try:
        return tuple(LensModel.load(path).image_size) == tuple(size)
    except LensError:  # none there, or not a lens file: written anew
        return False


def render_one(
    root: Path,
    seed: int,
    game: str,
    style: str = "standard",
    figures: str = "blob",
    trees: bool = False,
    rims: str = "palette",
    group: int | None = None,
    side_markers: bool = False,
    size: tuple[int, int] = (1920, 1080),
) -> Path:
    """Render table ``seed`` of ``game`` into ``root``: photo, empty reference, truth and YOLO labels; the photo's path."""
    table = render_table(
        seed,
        game,
        size,
        style=style,
        figures=figures,
        trees=trees,
        rims=rims,
        group=group,
        side_markers=side_markers,
    )
    return write_rendered(table, root / f"{seed:05d}")


def write_rendered(table: RenderedTable, stem: Path) -> Path:
    """A rendered table as eval-vision and training read it: ``stem``.jpg, .empty.jpg, .truth.json and the YOLO
    labels (.txt); the photo's path."""
    cv2.imwrite(str(stem) + ".jpg", table.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    cv2.imwrite(str(stem) + ".empty.jpg", table.empty, [cv2.IMWRITE_JPEG_QUALITY, 92])
    truth = {
        "scene": table.scene,
        "tags": table.tags,
        "layout": table.layout.to_json(),
        "rim_visible": table.rim_visible,
        "marker_visible": table.marker_visible,
        "piece_visible_px": table.piece_visible_px,
    }
    Path(str(stem) + ".truth.json").write_text(json.dumps(truth) + "\n", encoding="utf-8")
    Path(str(stem) + ".txt").write_text(
        "\n".join(yolo_labels(table.outlines_px, table.camera.size)) + "\n", encoding="utf-8"
    )
    return Path(str(stem) + ".jpg")


def _match(truth: list[dict[str, Any]], found: list[dict[str, Any]], radius_of: Any) -> list[tuple[int, int, float]]:
    """Greedy nearest matching within MATCH_FRACTION of the true radius: (truth index, found index, distance in)."""
    pairs = []
    for i, t in enumerate(truth):
        for j, f in enumerate(found):
            d = float(np.hypot(t["x"] - f["x"], t["y"] - f["y"]))
            if d <= MATCH_FRACTION * radius_of(t):
                pairs.append((d, i, j))
    pairs.sort()
    used_t, used_f, out = set(), set(), []
    for d, i, j in pairs:
        if i not in used_t and j not in used_f:
            used_t.add(i)
            used_f.add(j)
            out.append((i, j, d))
    return out


Pairs = list[tuple[int, int, float]]


def match_scene(truth: dict[str, Any], found: dict[str, Any]) -> tuple[Pairs, Pairs]:
    """Found bases and objective markers matched to the true ones: (truth index, found index, distance in) each."""
    models = _match(truth["models"], found["models"], lambda m: base_semi_axes_in(m["base"])[1])
    markers = _match(truth["objectives"], found["objectives"], lambda o: o["diameter_mm"] / 2 / MM_PER_IN)
    return models, markers


@dataclass(frozen=True)
class TableSetUp:
    """What a table is read against, made once per table as a live game does at set-up."""

    frame: TableFrame
    reference: Reference
    hex_mat: dict[str, Any] | None  # a game played in hexes: the mat's grid (None: none, or not found)


def set_up_table(empty: Image, layout: Layout, lens: LensModel | None, game: str, detector: Detector) -> TableSetUp:
    """Calibration, the empty-table reference and, in a game played in hexes, the mat's grid."""
    frame = calibrate(empty, layout, lens)
    return TableSetUp(frame, detector.prepare(empty, frame), mat_grid(game, None, empty, frame))


def analyze_set_up(
    photo: Image, set_up: TableSetUp, layout: Layout, lens: LensModel | None, truth: dict[str, Any], detector: Detector
) -> Analysis:
    """A photo of a set-up table, with the players' colours and the terrain of its true scene ``truth``."""
    players = {p["id"]: p["color"] for p in truth["players"]}
    return analyze(
        photo,
        layout,
        None,
        set_up.frame,
        lens,
        truth["game"],
        players,
        truth["terrain"],
        set_up.reference,
        detector,
        hex_mat=set_up.hex_mat,
        find_hex_mat=False,  # found at set-up
    )


def analyze_rendered(table: RenderedTable, lens: LensModel | None, detector: Detector) -> Analysis:
    """A rendered table as the product sees it: set up on the empty frame, then the photo."""
    set_up = set_up_table(table.empty, table.layout, lens, table.scene["game"], detector)
    return analyze_set_up(table.image, set_up, table.layout, lens, table.scene, detector)


def evaluate(
    directory: str | Path,
    csv_path: str | Path | None = None,
    detector: str = "auto",
    model_path: str | Path | None = None,
    refiner_path: str | Path | None = None,
) -> dict[str, Any]:
    """How ``detector`` (see ``vision.analyze.make_detector``, with ``model_path`` and ``refiner_path``) does on
    a rendered set, against its truth."""
    photos = sorted(Path(directory).glob("*[0-9].jpg"))
    if not Path(directory).is_dir():
        raise ValueError(f"{directory}: no such folder")
    if not photos:
        raise ValueError(
            f"{directory}: no rendered photos there (NAME.jpg with NAME.empty.jpg and NAME.truth.json, as "
            "tablesight render-tables writes them)"
        )
    chosen = make_detector(detector, model_path, refiner_path)
    rows = []
    errors_mm: list[float] = []
    within_2_sigma: list[bool] = []
    not_calibrated: list[str] = []
    totals = {
        "bases_true": 0,
        "bases_found": 0,
        "bases_matched": 0,
        "size_ok": 0,
        "team_ok": 0,
        "obj_true": 0,
        "obj_found": 0,
        "obj_matched": 0,
        "bases_seen": 0,
        "bases_seen_matched": 0,
        "bases_shown": 0,
        "bases_shown_matched": 0,
        "obj_seen": 0,
        "obj_seen_matched": 0,
    }
    per_tag: dict[str, dict[str, int]] = {}
    stage_times: dict[str, list[float]] = {}
    lens_file = Path(directory) / "lens.json"
    lens = LensModel.load(lens_file) if lens_file.exists() else None
    for image_path in photos:
        stem = str(image_path)[: -len(".jpg")]
        truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
        scene = truth["scene"]
        photo = cv2.imread(str(image_path))
        empty = cv2.imread(stem + ".empty.jpg")
        # Set-up once per table (calibration, the empty reference, a hex mat's grid), then the frame, timed apart.
        layout = Layout.from_json(truth["layout"])
        start = time.perf_counter()
        total_ms = 0.0
        try:
            set_up = set_up_table(empty, layout, lens, scene["game"], chosen)
            setup_ms = (time.perf_counter() - start) * 1e3
            start = time.perf_counter()
            result = analyze_set_up(photo, set_up, layout, lens, scene, chosen)
            total_ms = (time.perf_counter() - start) * 1e3
            for k, v in {**result.times_ms, "total_ms": total_ms, "setup_ms": setup_ms}.items():
                stage_times.setdefault(k, []).append(v)
            found_scene, failed = result.scene, ""
        except CalibrationError as error:
            # Markers the camera cannot read (a strong blur): nothing is found on that table, and its row says
            # why, instead of the whole set's evaluation ending there.
            found_scene, failed = {"models": [], "units": [], "objectives": []}, str(error)
            not_calibrated.append(f"{image_path.name}: {error}")
        found = found_scene["models"]
        matches, obj_matches = match_scene(scene, found_scene)
        owner = {u["id"]: u["player"] for u in scene["units"]}
        found_owner = {u["id"]: u["player"] for u in found_scene["units"]}
        size_ok = sum(scene["models"][i]["base"] == found[j]["base"] for i, j, _ in matches)
        team_ok = sum(owner[scene["models"][i]["unit"]] == found_owner[found[j]["unit"]] for i, j, _ in matches)
        errs = [d * MM_PER_IN for _, _, d in matches]
        errors_mm += errs
        # Is each reported sigma honest? Each axis's error against 2 sigma (about 95 % within when it is).
        for i, j, _ in matches:
            sigma_in = float(found[j].get("sigma_in", 0.0))
            for axis in ("x", "y"):
                within_2_sigma.append(abs(found[j][axis] - scene["models"][i][axis]) <= 2 * sigma_in)
        # Renders since session 21 say how much of each base's rim the camera sees (vision/synth/table.py).
        rim = truth.get("rim_visible", {})
        seen = {i for i, m in enumerate(scene["models"]) if rim.get(m["id"], 0.0) >= SEEN_RIM_SHARE}
        # ...and how many pixels show each model at all, its base or its figure (renders since session 40): a
        # model with none, behind a wall or under a hand, cannot be found in that photo by anything
        pixels = truth.get("piece_visible_px", {})
        shown = {i for i, m in enumerate(scene["models"]) if pixels.get(m["id"], 0) > 0}
        # ...and how much of each objective marker's edge (renders since session 33; older ones: all seen)
        edge = truth.get("marker_visible", {})
        seen_obj = {i for i, o in enumerate(scene["objectives"]) if edge.get(o["id"], 1.0) >= SEEN_RIM_SHARE}
        row = {
            "image": image_path.name,
            "tags": " ".join(truth["tags"]),
            "bases_true": len(scene["models"]),
            "bases_found": len(found),
            "bases_matched": len(matches),
            "size_ok": size_ok,
            "team_ok": team_ok,
            "centre_err_mm_max": round(max(errs), 3) if errs else "",
            "obj_true": len(scene["objectives"]),
            "obj_found": len(found_scene["objectives"]),
            "obj_matched": len(obj_matches),
            "bases_seen": len(seen),
            "bases_seen_matched": sum(i in seen for i, _, _ in matches),
            "bases_shown": len(shown),
            "bases_shown_matched": sum(i in shown for i, _, _ in matches),
            "obj_seen": len(seen_obj),
            "obj_seen_matched": sum(i in seen_obj for i, _, _ in obj_matches),
            "total_ms": round(total_ms, 1),
            "error": failed,
        }
        rows.append(row)
        for key in totals:
            totals[key] += int(row[key])
        for tag in truth["tags"] or ["plain"]:
            t = per_tag.setdefault(tag, {"true": 0, "found": 0, "matched": 0})
            t["true"] += row["bases_true"]
            t["found"] += row["bases_found"]
            t["matched"] += row["bases_matched"]
    if csv_path and rows:
        with open(csv_path, "w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    def ratio(a: int, b: int) -> float:
        return a / b if b else float("nan")

    return {
        "detector": type(chosen).__name__.removesuffix("Detector").lower(),
        "images": len(rows),
        # Renders come with the camera's lens (lens.json); without it the intrinsics are estimated from the
        # markers and the lens's bend read from them too (calibration/lens_from_markers.py), less surely.
        "lens": str(lens_file) if lens is not None else None,
        # photos whose empty table could not be calibrated (counted as nothing found), and why
        "not_calibrated": not_calibrated,
        "bases": {
            "recall": ratio(totals["bases_matched"], totals["bases_true"]),
            # of the bases whose rim the camera sees at least SEEN_RIM_SHARE of (NaN for older renders)
            "recall_seen": ratio(totals["bases_seen_matched"], totals["bases_seen"]),
            "seen": totals["bases_seen"],
            # of the bases with any pixel in the photo, of the base or its figure (NaN for older renders)
            "recall_shown": ratio(totals["bases_shown_matched"], totals["bases_shown"]),
            "shown": totals["bases_shown"],
            "precision": ratio(totals["bases_matched"], totals["bases_found"]),
            "size_accuracy": ratio(totals["size_ok"], totals["bases_matched"]),
            "team_accuracy": ratio(totals["team_ok"], totals["bases_matched"]),
            "centre_error_mm": {
                "median": statistics.median(errors_mm) if errors_mm else float("nan"),
                "p95": float(np.percentile(errors_mm, 95)) if errors_mm else float("nan"),
                "max": max(errors_mm) if errors_mm else float("nan"),
            },
            # the share of matched bases' per-axis errors within 2 reported sigma (about 95 % when sigma is honest)
            "within_2_sigma": float(np.mean(within_2_sigma)) if within_2_sigma else float("nan"),
        },
        "objectives": {
            "recall": ratio(totals["obj_matched"], totals["obj_true"]),
            "precision": ratio(totals["obj_matched"], totals["obj_found"]),
            # of the markers whose edge the camera sees at least SEEN_RIM_SHARE of (a wall can hide one whole)
            "recall_seen": ratio(totals["obj_seen_matched"], totals["obj_seen"]),
            "seen": totals["obj_seen"],
        },
        "by_tag": {
            tag: {"recall": ratio(v["matched"], v["true"]), "precision": ratio(v["matched"], v["found"])}
            for tag, v in per_tag.items()
        },
        "time_ms_median": {k: statistics.median(v) for k, v in stage_times.items()},
    }
