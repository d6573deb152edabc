"""Training the terrain segmenter (``vision.terrain.TerrainSegmenter``) on rendered tables, with torch; ONNX out.

Samples come from rendered tables with their truth (``tablesight render-tables``): on each empty-table
frame the detector boxes the terrain exactly as at run time (``terrain_patches``); each patch is paired
with the piece the camera sees there, drawn from the truth: the foot, and for a piece that stands up
(walls, a hill's plateau) its walls and top where they appear on the table plane. The product pulls the
lean back from that outline (``footprint_under``), given the walls' height.

Training-time code (needs the ``train`` extra); the product imports only vision/terrain.py.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import shapely

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import TableFrame, calibrate
from vision.detect_learned import LearnedDetector
from vision.terrain import (
    SEGMENT_PX_PER_IN,
    SEGMENTER_INPUT_PX,
    TerrainPatch,
    segmenter_input,
    terrain_boxes_in,
    terrain_patch,
)

STANDS_UP = ("blocking", "ruins")  # the renderer's walled kinds (over 1" tall); hills are raised plateaus
BOX_JITTERS = 2
BOX_JITTER_IN = 0.08  # each side of a jittered box moves by this much (sigma)
TARGET_SUPERSAMPLE = 4  # the target is drawn this much finer, then averaged down: a soft edge
_detector: list[LearnedDetector] = []


def seen_outline_in(piece: dict[str, Any], frame: TableFrame) -> shapely.Polygon:
    """Where the camera sees ``piece`` (a scene's terrain entry) on the table plane: its foot, and for a piece
    that stands up, its walls and top, each point where the ray through it meets the table."""
    foot = shapely.Polygon(piece["polygon"])
    height_in = float(piece["height_in"])
    stands_up = piece["kind"] == "hill" or (piece["kind"] in STANDS_UP and height_in > 1.0)
    if not stands_up or frame.rvec is None:
        return foot
    ring = np.asarray(foot.exterior.coords)[:-1]
    top = frame.image_to_table(frame.table_to_image(ring, height_in))
    parts = [foot, shapely.Polygon(top).buffer(0)]
    for k in range(len(ring)):
        j = (k + 1) % len(ring)
        parts.append(shapely.Polygon([ring[k], ring[j], top[j], top[k]]).buffer(0))
    return shapely.union_all(parts)


def target_mask(seen_in: shapely.Polygon, patch: TerrainPatch) -> npt.NDArray[np.float32]:
    """The share of each of the segmenter's input pixels that ``seen_in`` (table inches) covers."""
    h_px, w_px = patch.image.shape[:2]
    fine = TARGET_SUPERSAMPLE
    mask = np.zeros((h_px * fine, w_px * fine), np.uint8)
    ox, oy = patch.origin_px
    for poly in getattr(seen_in, "geoms", [seen_in]):
        # patch pixel i spans table [(i + ox) / ppi, (i + 1 + ox) / ppi); fillPoly's integer points are pixel centres
        ring = (np.asarray(poly.exterior.coords) * SEGMENT_PX_PER_IN - [ox, oy]) * fine - 0.5
        cv2.fillPoly(mask, [np.round(ring * 8).astype(np.int32)], 255, cv2.LINE_8, shift=3)
    side = SEGMENTER_INPUT_PX
    return cv2.resize(mask.astype(np.float32) / 255.0, (side, side), interpolation=cv2.INTER_AREA)


def table_samples(stem: str, lens_path: str, seed: int) -> dict[str, npt.NDArray[Any]]:
    """Inputs and targets from one rendered table (``stem``.empty.jpg, .truth.json): for each terrain box that
    overlaps a true piece (the piece it overlaps most), its patch and BOX_JITTERS more, the box's sides moved
    by the detector's error or so (more framings of the same piece)."""
    rng = np.random.default_rng(seed)
    truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
    empty = cv2.imread(stem + ".empty.jpg")
    lens = LensModel.load(lens_path) if Path(lens_path).is_file() else None
    frame = calibrate(empty, Layout.from_json(truth["layout"]), lens)
    if not _detector:  # once per worker process
        _detector.append(LearnedDetector(refiner_path=None))
    pieces = truth["scene"]["terrain"]
    seen = [seen_outline_in(p, frame) for p in pieces]
    inputs, targets = [], []
    for box in terrain_boxes_in(_detector[0], empty, frame):
        overlaps = [shapely.box(*box).intersection(s).area for s in seen]
        if not overlaps or max(overlaps) <= 0:
            continue
        piece = seen[int(np.argmax(overlaps))]
        for k in range(1 + BOX_JITTERS):
            moved = box + (rng.normal(0, BOX_JITTER_IN, 4) if k else 0.0)
            patch = terrain_patch(empty, frame, moved)
            inputs.append((segmenter_input(patch) * 255).round().astype(np.uint8))
            targets.append((target_mask(piece, patch) * 255).round().astype(np.uint8))
    side = SEGMENTER_INPUT_PX
    return {
        "inputs": np.asarray(inputs, np.uint8).reshape(-1, 4, side, side),
        "targets": np.asarray(targets, np.uint8).reshape(-1, side, side),
        "table": np.full(len(targets), seed, np.int64),
    }


def build_samples(directories: list[Path], out: Path, workers: int = 2) -> dict[str, int]:
    """Samples from every rendered table under ``directories``, saved as one .npz at ``out``."""
    jobs = []
    for d in directories:
        for truth in sorted(Path(d).glob("*[0-9].truth.json")):
            stem = str(truth)[: -len(".truth.json")]
            jobs.append((stem, str(Path(d) / "lens.json"), int(Path(stem).name)))  # jitter seeded by the table's seed
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(table_samples, *zip(*jobs, strict=True)))
    merged = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **merged)
    return {"tables": len(jobs), "patches": len(merged["targets"])}


def make_segmenter() -> Any:
    """A small U-Net: three halvings (8-16-32-64 channels), bilinear upsampling with skips, one logit a
    pixel. About 66 M multiply-adds an 80 px patch."""
    import torch
    from torch import nn

    def block(cin: int, cout: int) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.down = nn.ModuleList([block(4, 8), block(8, 16), block(16, 32), block(32, 64)])
            self.up = nn.ModuleList([block(64 + 32, 32), block(32 + 16, 16), block(16 + 8, 8)])
            self.pool = nn.MaxPool2d(2)
            self.grow = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.out = nn.Conv2d(8, 1, 1)

        def forward(self, x: Any) -> Any:
            skips = []
            for k, stage in enumerate(self.down):
                x = stage(x if k == 0 else self.pool(x))
                skips.append(x)
            for stage, skip in zip(self.up, reversed(skips[:-1]), strict=True):
                x = stage(torch.cat([self.grow(x), skip], 1))
            return self.out(x)

    torch.manual_seed(0)
    return UNet()


def _augment(x: Any, y: Any, generator: Any) -> tuple[Any, Any]:
    """The same random flips and transposition for inputs ``x`` (N, 4, S, S) and targets ``y`` (N, 1, S, S),
    then other light on the colours."""
    import torch

    from vision.training.refiner import light_and_tint

    n = x.shape[0]
    for flip, dims in (
        (torch.rand(n, generator=generator) < 0.5, (3,)),
        (torch.rand(n, generator=generator) < 0.5, (2,)),
    ):
        x[flip], y[flip] = x[flip].flip(dims), y[flip].flip(dims)
    swap = torch.rand(n, generator=generator) < 0.5
    x[swap], y[swap] = x[swap].transpose(2, 3), y[swap].transpose(2, 3)
    x[:, :3] = light_and_tint(x[:, :3], generator)
    return x, y


def train_segmenter(
    samples: list[Path],
    out_onnx: Path,
    epochs: int = 10,
    batch: int = 32,
    lr: float = 0.003,
    seed: int = 0,
    val_share: float = 0.1,
    threads: int = 2,
    log: Any = print,
) -> dict[str, float]:
    """Train on ``samples`` (.npz files from build_samples), export to ``out_onnx``; the validation figures
    (the patches of a share of the tables, drawn by ``seed``, never trained on)."""
    import torch
    from torch import nn

    from vision.training.refiner import fit_network

    files = [np.load(path) for path in samples]
    x_all = torch.from_numpy(np.concatenate([f["inputs"] for f in files]))
    y_all = torch.from_numpy(np.concatenate([f["targets"] for f in files]))[:, None]
    table = np.concatenate([f["table"] for f in files])
    bce = nn.BCEWithLogitsLoss()

    def batch_loss(net: Any, idx: Any, generator: Any) -> Any:
        x, y = _augment(x_all[idx].float() / 255.0, y_all[idx].float() / 255.0, generator)
        logits = net(x)
        p = torch.sigmoid(logits)
        overlap = (p * y).sum((1, 2, 3))
        dice = 1 - (2 * overlap + 1) / (p.sum((1, 2, 3)) + y.sum((1, 2, 3)) + 1)
        return bce(logits, y) + dice.mean()

    def validate(net: Any, val: Any) -> dict[str, float]:
        net.eval()
        with torch.no_grad():
            out = torch.cat([net(x_all[val[k : k + 64]].float() / 255.0) for k in range(0, len(val), 64)])
        said, true = out > 0, y_all[val] > 127
        iou = ((said & true).sum((1, 2, 3)) / ((said | true).sum((1, 2, 3)).clamp(min=1))).numpy()
        return {
            "iou_median": round(float(np.median(iou)), 4),
            "iou_at_least_0.9": round(float((iou >= 0.9).mean()), 4),
            "iou_p10": round(float(np.percentile(iou, 10)), 4),
        }

    # Whole tables are held back (a piece's jittered framings are alike): a share of them, drawn by ``seed``.
    tables = np.unique(table)
    held = np.random.default_rng(seed).permutation(tables)[: max(1, int(len(tables) * val_share))]
    is_val = np.isin(table, held)
    net = make_segmenter()
    return fit_network(
        net,
        np.flatnonzero(~is_val),
        np.flatnonzero(is_val),
        batch_loss,
        validate,
        out_onnx,
        SEGMENTER_INPUT_PX,
        epochs,
        batch,
        lr,
        seed,
        threads,
        log,
        input_channels=4,
    )
