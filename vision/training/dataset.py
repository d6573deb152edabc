"""Training data for the learned detector: rendered tables, rectified, cut into tiles with YOLO labels.

The detector works in the rectified top-down view at a fixed scale
(``DETECT_PX_PER_IN``), where a base has a known size in pixels whatever the
camera. A tile is ``TILE_PX`` square; bigger tables are cut into overlapping
tiles. Labels are boxes (class cx cy w h, normalised) made from the true
outlines as the camera saw them, mapped back to the table plane, so a base on a
hill is labelled where it appears in the top-down view.

Training-time code: imports the renderer, never ultralytics (that is train.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import CalibrationError, TableFrame, calibrate
from geometry.shapes import BASE_HEIGHT_IN, MM_PER_IN, Footprints
from vision.detect_classical import MARKER_RADIUS_IN
from vision.detect_learned import CLASSES, DETECT_PX_PER_IN, TILE_PX
from vision.synth.table import RenderedTable, render_table, webcam_lens

Image = npt.NDArray[np.uint8]
TILE_STRIDE_PX = 256  # tiles overlap by 64 px: more than the largest base (a 120 mm oval is ~60 px)
RING_POINTS = 48  # points round a base's or marker's outline, for its box
MIN_VISIBLE = 0.6  # a piece cut by a tile's edge is labelled if this share of its box is inside


@dataclass(frozen=True)
class Box:
    cls: int
    x0: float
    y0: float
    x1: float
    y1: float


def boxes_in_top_view(table: RenderedTable, frame: TableFrame, px_per_in: float) -> list[Box]:
    """Every true piece's box in the rectified view at ``px_per_in``."""
    base_of = {m["id"]: m["base"] for m in table.scene["models"]}
    out = []
    for kind, ident, outline_px in table.outlines_px:
        xy = frame.image_to_table(outline_px) * px_per_in
        name = ("oval" if "x" in base_of[ident] else "round") if kind == "base" else kind
        cls = CLASSES.index(name)
        out.append(Box(cls, *xy.min(axis=0), *xy.max(axis=0)))
    return out


def boxes_from_truth(scene: dict[str, Any], frame: TableFrame, px_per_in: float) -> list[Box]:
    """Every piece's box in the rectified view, from a true scene alone (path-traced photos come without
    outlines): a base's foot and top rings where the camera sees them (``frame``'s pose: parallax, hills), markers
    and terrain footprints on the table, as ``boxes_in_top_view`` makes them from a flat render's outlines."""
    out = []
    models = scene["models"]
    feet = Footprints.from_bases(
        [m["x"] for m in models],
        [m["y"] for m in models],
        [str(m["base"]) for m in models],
        [m.get("facing_deg", 0.0) for m in models],
        z_in=[m.get("z", 0.0) for m in models],
    )
    for m, ring, z_in in zip(models, feet.boundary_points(RING_POINTS), feet.z_in, strict=True):
        seen = [ring]
        if frame.rvec is not None:  # without the camera's pose the view shows the ring where it stands
            seen = [frame.image_to_table(frame.table_to_image(ring, z)) for z in (z_in, z_in + BASE_HEIGHT_IN)]
        xy = np.concatenate(seen) * px_per_in
        out.append(Box(CLASSES.index("oval" if "x" in str(m["base"]) else "round"), *xy.min(axis=0), *xy.max(axis=0)))
    markers = scene.get("objectives", [])
    discs = Footprints.build(
        [o["x"] for o in markers],
        [o["y"] for o in markers],
        [float(o["diameter_mm"]) / 2 / MM_PER_IN if "diameter_mm" in o else MARKER_RADIUS_IN for o in markers],
    )
    for ring in discs.boundary_points(RING_POINTS):
        xy = ring * px_per_in
        out.append(Box(CLASSES.index("objective"), *xy.min(axis=0), *xy.max(axis=0)))
    for t in scene.get("terrain", []):
        xy = np.asarray(t["polygon"], float) * px_per_in
        out.append(Box(CLASSES.index("terrain"), *xy.min(axis=0), *xy.max(axis=0)))
    return out


def export_photoreal_tiles(directories: Sequence[str | Path], out: str | Path, copies: int = 1) -> int:
    """Cut the photos of ``render-photoreal`` folders (or any folder of photo, empty table, truth and lens.json)
    into YOLO tiles under ``out``/images and ``out``/labels, each ``copies`` times (path-traced photos are few
    and slow to make; augmentation varies the copies). Each photo is calibrated from its own markers, as a
    player's frame is. Returns the tiles written."""
    root = Path(out)
    for sub in ("images", "labels"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    count = 0
    for directory in map(Path, directories):
        lens = LensModel.load(directory / "lens.json") if (directory / "lens.json").is_file() else None
        for photo_path in sorted(directory.glob("*[0-9].jpg")):
            stem = str(photo_path)[: -len(".jpg")]
            truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
            photo, empty = cv2.imread(str(photo_path)), cv2.imread(stem + ".empty.jpg")
            if photo is None or empty is None:
                raise ValueError(f"{photo_path}: the photo or its .empty.jpg cannot be read")
            try:
                frame = calibrate(empty, Layout.from_json(truth["layout"]), lens)
            except CalibrationError:
                continue  # its markers cannot be seen: a player would move the camera
            boxes = boxes_from_truth(truth["scene"], frame, DETECT_PX_PER_IN)
            for k, (tile, lines) in enumerate(tiles(frame.rectify(photo, DETECT_PX_PER_IN), boxes)):
                for copy in range(copies):
                    _write_tile(root, f"{directory.name}_{photo_path.stem}_{k}_{copy}", tile, lines)
                    count += 1
    return count


def tile_origins(length_px: int) -> list[int]:
    """Tile starts along one side: one tile if it fits, else overlapping tiles ending flush with the side."""
    if length_px <= TILE_PX:
        return [0]
    count = math.ceil((length_px - TILE_PX) / TILE_STRIDE_PX) + 1
    return [round(k * (length_px - TILE_PX) / (count - 1)) for k in range(count)]


def tiles(top: Image, boxes: list[Box]) -> Iterator[tuple[Image, list[str]]]:
    """Tiles of the top view (padded to TILE_PX) with their YOLO label lines."""
    h, w = top.shape[:2]
    for y0 in tile_origins(h):
        for x0 in tile_origins(w):
            tile = np.zeros((TILE_PX, TILE_PX, 3), np.uint8)
            part = top[y0 : y0 + TILE_PX, x0 : x0 + TILE_PX]
            tile[: part.shape[0], : part.shape[1]] = part
            lines = []
            for b in boxes:
                cx0, cy0 = max(b.x0 - x0, 0.0), max(b.y0 - y0, 0.0)
                cx1, cy1 = min(b.x1 - x0, part.shape[1]), min(b.y1 - y0, part.shape[0])
                if cx1 <= cx0 or cy1 <= cy0:
                    continue
                whole = (b.x1 - b.x0) * (b.y1 - b.y0)
                if (cx1 - cx0) * (cy1 - cy0) < MIN_VISIBLE * whole and b.cls != CLASSES.index("terrain"):
                    continue
                cx, cy = (cx0 + cx1) / 2 / TILE_PX, (cy0 + cy1) / 2 / TILE_PX
                bw, bh = (cx1 - cx0) / TILE_PX, (cy1 - cy0) / TILE_PX
                lines.append(f"{b.cls} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
            yield tile, lines


def _write_tile(root: Path, name: str, tile: Image, lines: list[str]) -> None:
    """One tile and its YOLO label lines, as ultralytics finds them: ``root``/images and ``root``/labels."""
    cv2.imwrite(str(root / "images" / f"{name}.jpg"), tile, [cv2.IMWRITE_JPEG_QUALITY, 95])
    (root / "labels" / f"{name}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))


def write_data_yaml(root: Path, val_split: str) -> Path:
    """The dataset file ultralytics reads: where the tiles are, and the class names."""
    path = root / "data.yaml"
    path.write_text(
        f"path: {root.resolve()}\ntrain: train/images\nval: {val_split}/images\nnames:\n"
        + "".join(f"  {k}: {name}\n" for k, name in enumerate(CLASSES)),
        encoding="utf-8",
    )
    return path


def _export_one(args: tuple[int, str, str, str, str, bool, str | None]) -> int:
    seed, game, out_dir, lens_path, figures, trees, hard = args
    done = sorted((Path(out_dir) / "labels").glob(f"{seed:06d}_*.txt"))
    if done:  # exported by an earlier, interrupted run
        return len(done)
    lens = LensModel.load(lens_path)
    table = render_table(seed, game, figures=figures, trees=trees, hard=hard)
    try:
        frame = calibrate(table.empty, table.layout, lens)
    except CalibrationError:
        return 0  # a render whose markers the camera cannot see: a player would move the camera
    top = frame.rectify(table.image, DETECT_PX_PER_IN)
    boxes = boxes_in_top_view(table, frame, DETECT_PX_PER_IN)
    count = 0
    for k, (tile, lines) in enumerate(tiles(top, boxes)):
        stem = f"{seed:06d}_{k}"
        _write_tile(Path(out_dir), stem, tile, lines)
        count += 1
    return count


def export_dataset(
    out: str | Path,
    tables: int,
    seed: int = 100_000,
    val_fraction: float = 0.1,
    games: tuple[str, ...] = ("focal-point", "grinding-annihilation", "miniature-skirmish"),
    workers: int = 2,
    figures: str = "blob",
    trees: bool = False,
    hard: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Render ``tables`` seeded tables into a YOLO dataset (train/ and val/ split by table) with data.yaml
    (``figures``: how figures stand on their bases, render_table's 'blob' or 'varied'; ``trees``: woods carry trees;
    ``hard``: each table's hard case in turn, render_table's 'crowded', 'occluded', ...; empty: drawn at random)."""
    root = Path(out).resolve()
    lens_path = root / "lens.json"
    root.mkdir(parents=True, exist_ok=True)
    webcam_lens(seed).save(lens_path)
    n_val = max(1, round(tables * val_fraction)) if tables > 1 else 0
    jobs = []
    for k in range(tables):
        split = "val" if k < n_val else "train"
        for sub in ("images", "labels"):
            (root / split / sub).mkdir(parents=True, exist_ok=True)
        case = hard[k % len(hard)] if hard else None
        jobs.append((seed + k, games[k % len(games)], str(root / split), str(lens_path), figures, trees, case))
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        counts = list(pool.map(_export_one, jobs))
    if n_val == 0:  # one table: validate on what we train on (smoke runs only)
        (root / "val").mkdir(exist_ok=True)
    write_data_yaml(root, "val" if n_val else "train")
    summary = {
        "tables": tables,
        "seed": seed,
        "games": list(games),
        "figures": figures,
        "trees": trees,
        "hard": list(hard),
        "tiles": sum(counts),
        "val_tables": n_val,
        "px_per_in": DETECT_PX_PER_IN,
        "tile_px": TILE_PX,
    }
    (root / "dataset.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
