"""`tablesight train-detector` and `tablesight adapt`: data, training, ONNX export, model card.

Training code (needs the ``train`` extra); the CLI imports this only inside those two commands.
"""

from __future__ import annotations

import csv
import datetime
import json
import shutil
from pathlib import Path
from typing import Any

from vision.detect_learned import CLASSES, DEFAULT_MODEL, DETECT_PX_PER_IN
from vision.training.dataset import export_dataset
from vision.training.train import export_onnx, train

MODEL_YAML = Path(__file__).parent / "yolo11n-tablesight.yaml"
TRAINING_GAMES = ("focal-point", "grinding-annihilation", "miniature-skirmish", "onefinity")
FINE_TUNE_LR0 = 0.002  # AdamW; measured: 12 epochs on 240 fresh tables took recall 79.5 -> 88.3 % (docs/detector.md)


def fine_tune_settings(lr0: float) -> dict[str, Any]:
    """ultralytics settings for fine-tuning trained weights: AdamW at ``lr0`` with a cosine decay to a tenth,
    so a few epochs on fresh tables improve the model without undoing it."""
    return {"lr0": lr0, "lrf": 0.1, "warmup_epochs": 0.5, "optimizer": "AdamW", "cos_lr": True}


def last_metrics(run_dir: Path) -> dict[str, float]:
    """The final epoch's validation figures from ultralytics' results.csv."""
    results = run_dir / "results.csv"
    if not results.exists():
        return {}
    with results.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {}
    last = {k.strip(): v for k, v in rows[-1].items()}
    keys = ["epoch", "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)"]
    return {k: round(float(last[k]), 4) for k in keys if k in last}


def write_card(
    onnx: Path,
    data: dict[str, Any],
    settings: dict[str, Any],
    metrics: dict[str, Any],
    describe: dict[str, Any] | None = None,
) -> Path:
    """The model card beside ``onnx``. ``describe``: architecture, classes, input and output of a model
    other than the bases' detector."""
    card = {
        "model": onnx.name,
        "architecture": "YOLO11 nano, deepest layers capped at 128 channels (vision/training/yolo11n-tablesight.yaml)",
        "classes": CLASSES,
        "input": f"the rectified top-down view at {DETECT_PX_PER_IN} px/inch, any size (multiple of 32), RGB 0..1",
        "output": "(1, 4 + classes, N): cx, cy, w, h in input pixels, then class scores; no NMS inside",
        **(describe or {}),
        "data": data,
        "settings": settings,
        "validation": metrics,
        "date": datetime.date.today().isoformat(),
    }
    path = onnx.with_suffix(".card.json")
    path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return path


def train_detector(
    out: str | Path,
    tables: int = 200,
    seed: int = 100_000,
    epochs: int = 30,
    imgsz: int = 320,
    batch: int = 16,
    device: str = "cpu",
    resume: bool = False,
    workers: int = 2,
    ship: bool = False,
    weights: str | Path | None = None,
    lr0: float = FINE_TUNE_LR0,
    games: tuple[str, ...] = TRAINING_GAMES,
    figures: str = "blob",
    trees: bool = False,
) -> dict[str, Any]:
    """Render data (once, ``figures`` as render_table draws them), train from scratch (or resume), export ONNX,
    write the card; ``ship`` installs it.
    ``weights``: fine-tune these (a trained ``.pt``, e.g. the shipped model) on the new tables instead:
    AdamW at ``lr0`` with a cosine decay, so a few epochs on fresh tables improve it without undoing it."""
    root = Path(out).resolve()
    data_dir = root / "data"
    summary_file = data_dir / "dataset.json"
    if summary_file.exists():
        data = json.loads(summary_file.read_text(encoding="utf-8"))
    else:
        data = export_dataset(data_dir, tables, seed, games=games, workers=workers, figures=figures, trees=trees)
    settings: dict[str, Any] = {
        "epochs": epochs,
        "imgsz": imgsz,
        "batch": batch,
        "device": device,
        "seed": 0,
        "from": str(weights) if weights else "scratch",
    }
    extra = None
    if weights:
        extra = fine_tune_settings(lr0)
        settings.update(extra)
    best = train(
        data_dir / "data.yaml",
        root,
        epochs,
        imgsz,
        batch,
        device,
        resume,
        str(MODEL_YAML),
        workers=workers,
        weights=weights,
        extra=extra,
    )
    onnx = export_onnx(best, root / DEFAULT_MODEL.name, root)
    shutil.copyfile(best, onnx.with_suffix(".pt"))
    card = write_card(onnx, data, settings, last_metrics(root / "run"))
    if ship:
        for path in (onnx, onnx.with_suffix(".pt"), card):
            shutil.copyfile(path, DEFAULT_MODEL.parent / path.name)
    return {"onnx": str(onnx), "weights": str(best), "card": str(card), "data": data}


CARD_MODEL_YAML = Path(__file__).parent / "yolo11n-obb-cards.yaml"
CARD_AUGMENT = {"degrees": 180.0}  # cards lie at any turn (the bases' detector is kept upright)


def train_card_finder(
    out: str | Path,
    sessions: int = 140,
    seed: int = 20_000,
    epochs: int = 40,
    imgsz: int = 320,
    batch: int = 16,
    device: str = "cpu",
    resume: bool = False,
    workers: int = 2,
    ship: bool = False,
) -> dict[str, Any]:
    """Render Flux sessions (once), train the oriented-box card finder from scratch (or resume),
    export ONNX, write its card; ``ship`` installs it as ``vision/models/cards-yolo11n-obb.onnx``."""
    from vision.flux.cards_learned import CARD_CLASSES, CARD_PX_PER_IN, DEFAULT_CARD_MODEL
    from vision.training.cards_dataset import export_card_dataset

    root = Path(out).resolve()
    data_dir = root / "data"
    summary_file = data_dir / "dataset.json"
    if summary_file.exists():
        data = json.loads(summary_file.read_text(encoding="utf-8"))
    else:
        data = export_card_dataset(data_dir, sessions, seed, workers=workers)
    settings: dict[str, Any] = {"epochs": epochs, "imgsz": imgsz, "batch": batch, "device": device, "seed": 0}
    settings.update(CARD_AUGMENT)
    best = train(
        data_dir / "data.yaml",
        root,
        epochs,
        imgsz,
        batch,
        device,
        resume,
        str(CARD_MODEL_YAML),
        workers=workers,
        extra=CARD_AUGMENT,
    )
    onnx = export_onnx(best, root / DEFAULT_CARD_MODEL.name, root)
    shutil.copyfile(best, onnx.with_suffix(".pt"))
    describe = {
        "architecture": f"YOLO11 nano with an oriented-box head ({CARD_MODEL_YAML.name})",
        "classes": CARD_CLASSES,
        "input": f"the Flux table's top view at {CARD_PX_PER_IN} px/inch (vision/flux/cards_learned.model_view), "
        "any size (multiple of 32), RGB 0..1",
        "output": "(1, 4 + classes + 1, N): cx, cy, w, h in input pixels, class scores, angle (radians); no NMS",
    }
    card_path = write_card(onnx, data, settings, last_metrics(root / "run"), describe)
    if ship:
        for path in (onnx, onnx.with_suffix(".pt"), card_path):
            shutil.copyfile(path, DEFAULT_CARD_MODEL.parent / path.name)
    return {"onnx": str(onnx), "weights": str(best), "card": str(card_path), "data": data}


# The shipped refiner's tables: (first seed, tables, games). The held-out evaluation set is 5000+.
REFINER_SETS: tuple[tuple[int, int, tuple[str, ...]], ...] = (
    (600_000, 300, ("focal-point", "grinding-annihilation")),
    (610_000, 200, ("focal-point", "grinding-annihilation")),
    (620_000, 150, ("miniature-skirmish", "onefinity")),
)


def train_base_refiner(
    out: str | Path,
    sets: tuple[tuple[int, int, tuple[str, ...]], ...] = REFINER_SETS,
    epochs: int = 20,
    ship: bool = False,
    workers: int = 2,
    log: Any = print,
    ovals: bool = False,
    figures: tuple[str, ...] = ("varied",),  # the shipped refiner's (session 25)
    device: str = "cpu",
) -> dict[str, Any]:
    """Render each set of tables once for each of ``figures`` (how render_table draws the figures: 'blob',
    'varied'), cut the refiner's samples from each (once), train it with torch on them all, export ONNX and its
    card; ``ship`` installs it as ``vision/models/base-refiner.onnx``.
    ``ovals``: the same for the oval refiner (``vision/models/oval-refiner.onnx``), on the same tables.
    ``device``: where torch trains ('cpu', 'cuda'); the card records it."""
    from vision.evaluate import render_dataset

    root = Path(out).resolve()
    parts, described = [], []
    for index, ((seed, tables, games), drawn) in enumerate((s, f) for f in figures for s in sets):
        suffix = "" if drawn == "blob" else f"-{drawn}"
        table_dir = root / f"tables-{seed}{suffix}"
        if len(list(table_dir.glob("*[0-9].jpg"))) < tables:
            render_dataset(table_dir, tables, seed, games=games, figures=drawn)
        samples = root / f"samples-{'ovals-' if ovals else ''}{seed}{suffix}.npz"
        summary_file = samples.with_suffix(".json")
        if not samples.exists():
            summary = _build_refiner_samples(ovals, table_dir, samples, workers, index)
            summary_file.write_text(json.dumps(summary) + "\n", encoding="utf-8")
        parts.append(samples)
        summary = json.loads(summary_file.read_text(encoding="utf-8"))
        described.append({"seed": seed, "games": list(games), "figures": drawn, **summary})
    data: dict[str, Any] = {
        "sets": described,
        "tables": sum(d["tables"] for d in described),
        "samples": sum(d["samples"] for d in described),
        # What the renderer drew (session 22): the crops' targets are the tops' places, not the feet's.
        "bases": "solids 0.12-0.19 in tall, tops inset 2-14 %; centres are the tops' at BASE_HEIGHT_IN (0.15 in)",
    }
    data["positives"] = sum(d["positives"] for d in described)
    settings = {
        "epochs": epochs,
        "batch": 128,
        "lr": 0.002,
        "optimizer": "AdamW, one-cycle",
        "seed": 0,
        "device": device,
    }
    train = _train_oval_refiner if ovals else _train_round_refiner
    onnx, describe, metrics = train(root, parts, epochs, log, device)
    card = write_card(onnx, data, settings, metrics, describe)
    if ship:
        for path in (onnx, card):
            shutil.copyfile(path, Path(__file__).parents[1] / "models" / path.name)
    return {"onnx": str(onnx), "card": str(card), "data": data, "validation": metrics}


def _build_refiner_samples(ovals: bool, table_dir: Path, samples: Path, workers: int, seed: int) -> dict[str, int]:
    from vision.training.oval_refiner import build_oval_samples
    from vision.training.refiner import build_samples

    return (build_oval_samples if ovals else build_samples)([table_dir], samples, workers=workers, seed=seed)


def _train_round_refiner(
    root: Path, parts: list[Path], epochs: int, log: Any, device: str
) -> tuple[Path, dict[str, Any], dict[str, float]]:
    from vision.refiner import CROP_PX, DEFAULT_REFINER, OFFSET_SCALE_IN, REFINER_PX_PER_IN, ROUND_SIZES
    from vision.training.refiner import train_refiner

    onnx = root / DEFAULT_REFINER.name
    metrics = train_refiner(parts, onnx, epochs=epochs, log=log, device=device)
    describe = {
        "architecture": "a small CNN: stride-2 stem, three stages of two 3x3 convolutions, dense 128 "
        "(vision/training/refiner.py: make_network)",
        "classes": ROUND_SIZES,
        "input": f"(N, 3, {CROP_PX}, {CROP_PX}) crops of the rectified view at {REFINER_PX_PER_IN} px/inch centred "
        "on each round proposal (vision/refiner.py: crop_origin_px), RGB 0..1",
        "output": f"(N, 1 + {len(ROUND_SIZES)} + 2): base logit, size logits, centre offset from the crop's middle "
        f"in units of {OFFSET_SCALE_IN} in",
    }
    return onnx, describe, metrics


def _train_oval_refiner(
    root: Path, parts: list[Path], epochs: int, log: Any, device: str
) -> tuple[Path, dict[str, Any], dict[str, float]]:
    from vision.oval_refiner import (
        DEFAULT_OVAL_REFINER,
        FACING_SCALE_DEG,
        OVAL_CROP_PX,
        OVAL_OFFSET_SCALE_IN,
        OVAL_PX_PER_IN,
        OVAL_SIZES,
    )
    from vision.training.oval_refiner import train_oval_refiner

    onnx = root / DEFAULT_OVAL_REFINER.name
    metrics = train_oval_refiner(parts, onnx, epochs=epochs, log=log, device=device)
    describe = {
        "architecture": "a small CNN: stride-2 stem, three stages of two 3x3 convolutions, dense 128 "
        "(vision/training/refiner.py: make_network)",
        "classes": OVAL_SIZES,
        "input": f"(N, 3, {OVAL_CROP_PX}, {OVAL_CROP_PX}) crops of the rectified view at {OVAL_PX_PER_IN} px/inch "
        "centred on each oval proposal and turned to its facing (vision/oval_refiner.py: oval_crop), RGB 0..1",
        "output": f"(N, {len(OVAL_SIZES)} + 2 + 1 + 1): size logits, centre offset along and across the facing in "
        f"units of {OVAL_OFFSET_SCALE_IN} in, facing correction in units of {FACING_SCALE_DEG} degrees, and the logit "
        "of an oval base being centred there",
    }
    return onnx, describe, metrics


# (seed, tables, woods carry trees): Focal Point and Grinding-Annihilation tables in turn
TERRAIN_SETS = ((30_000, 150, False), (30_150, 150, False), (30_300, 75, True), (30_375, 75, True))


def train_terrain_segmenter(
    out: str | Path,
    sets: tuple[tuple[int, int, bool], ...] = TERRAIN_SETS,
    epochs: int = 10,
    ship: bool = False,
    workers: int = 2,
    log: Any = print,
) -> dict[str, Any]:
    """Render each set of tables (where not yet there), cut the segmenter's patches from their empty frames,
    train it with torch, export ONNX and its card; ``ship`` installs it as ``vision/models/terrain-segmenter.onnx``."""
    from vision.evaluate import render_dataset
    from vision.terrain import SEGMENT_PX_PER_IN, SEGMENTER_INPUT_PX, SEGMENTER_MODEL
    from vision.training.terrain_segmenter import BOX_JITTER_IN, BOX_JITTERS, build_samples, train_segmenter

    root = Path(out).resolve()
    parts, described = [], []
    games = ("focal-point", "grinding-annihilation")
    for seed, tables, trees in sets:
        table_dir = root / f"tables-{seed}"
        if len(list(table_dir.glob("*[0-9].truth.json"))) < tables:
            render_dataset(table_dir, tables, seed, games=games, trees=trees)
        samples = root / f"samples-terrain-{seed}.npz"
        summary_file = samples.with_suffix(".json")
        if not samples.exists():
            summary_file.write_text(json.dumps(build_samples([table_dir], samples, workers)) + "\n", encoding="utf-8")
        parts.append(samples)
        summary = json.loads(summary_file.read_text(encoding="utf-8"))
        described.append({"seed": seed, "games": list(games), "trees": trees, **summary})
    data = {
        "sets": described,
        "patches": sum(d["patches"] for d in described),
        "tables": "render-tables' defaults (the standard style, blob figures), woods with trees where the set says",
        "targets": 'the piece as the camera sees it: foot, and walls and top of pieces that stand up (walls over 1" '
        f"tall, hills' plateaus); each detector box's patch and {BOX_JITTERS} more with its sides moved by "
        f'{BOX_JITTER_IN}" (sigma)',
    }
    settings = {"epochs": epochs, "batch": 32, "lr": 0.003, "optimizer": "AdamW, one-cycle", "seed": 0}
    onnx = root / SEGMENTER_MODEL.name
    metrics = train_segmenter(parts, onnx, epochs=epochs, log=log)
    side = SEGMENTER_INPUT_PX
    describe = {
        "architecture": "a small U-Net: 8-16-32-64 channels, three halvings, bilinear upsampling with skips "
        "(vision/training/terrain_segmenter.py: make_segmenter)",
        "classes": ["terrain piece as seen"],
        "input": f"(N, 4, {side}, {side}): the patch of the rectified empty table at {SEGMENT_PX_PER_IN} px/inch "
        "round a terrain box (vision/terrain.py: terrain_patches), stretched to the square, BGR 0..1, and the box",
        "output": f"(N, 1, {side}, {side}): the logit of each pixel being the piece as the camera sees it",
    }
    card = write_card(onnx, data, settings, metrics, describe)
    if ship:
        for path in (onnx, card):
            shutil.copyfile(path, Path(__file__).parents[1] / "models" / path.name)
    return {"onnx": str(onnx), "card": str(card), "data": data, "validation": metrics}
