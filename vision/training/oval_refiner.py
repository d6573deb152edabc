"""Training the oval refiner (vision/oval_refiner.py) on rendered tables, with torch; export to ONNX.

Samples come from rendered tables with their truth (``tablesight render-tables``): each
oval base, cropped round a point moved off its true centre and turned to a facing
moved off its true facing, by random amounts like the detector's box and blob
errors (measured on the tuning tables, seed 6000: facing off by a median 3.4
degrees, 7 of 28 by 10-31 degrees). Labels: its size, the offset of its true
centre along and across the crop's facing, and the facing's error.

Negatives (session 28), so the refiner can also say whether an oval is centred
there: each round base, the detector's own proposals (round or oval boxes, at a
low threshold) that lie on no oval, and random points of the table off every
oval, each turned to a random facing. The detector boxes some ovals only
faintly, or as round bases the base refiner turns away; this lets those be
checked instead of dropped.

Training-time code (needs the ``train`` extra); the product imports only vision/oval_refiner.py.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import calibrate
from geometry.shapes import base_semi_axes_in
from vision.detect_learned import CLASSES, DETECT_PX_PER_IN
from vision.oval_refiner import (
    FACING_SCALE_DEG,
    OVAL_CROP_PX,
    OVAL_OFFSET_SCALE_IN,
    OVAL_SIZES,
    oval_crop,
    to_table_offset,
)
from vision.training.refiner import (
    PROPOSAL_THRESHOLD,
    RANDOM_NEGATIVES,
    fit_network,
    light_and_tint,
    make_network,
    proposal_detector,
    tables_across,
    validation_split,
    visible_centres_in,
)

JITTERS_PER_OVAL = 24  # ovals are few (about one a table): each is seen many ways
JITTER_SIGMA_IN = 0.08  # about the spread of the detector's box centres round an oval
JITTER_MAX_IN = 0.25
FACING_SIGMA_DEG = (4.0, 15.0)  # most blob facings are a few degrees off; a quarter much more
FACING_MAX_DEG = 35.0
# A crop centred this close to an oval's centre is one (positives are cut up to JITTER_MAX_IN off); one farther
# than its long semi-axis and this margin is not; in between it is neither, and is not cut.
NOT_CENTRED_MARGIN_IN = 0.1
FIGURES = (
    "oval_right",
    "not_oval_right",
    "size_right",
    "centre_mm_median",
    "centre_mm_p95",
    "facing_deg_median",
    "facing_deg_p95",
)


def oval_table_samples(stem: str, lens_path: str, seed: int) -> dict[str, npt.NDArray[Any]]:
    """Crops and labels from one rendered table (``stem``.jpg, .empty.jpg, .truth.json)."""
    rng = np.random.default_rng(seed)
    truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
    scene = truth["scene"]
    photo = cv2.imread(stem + ".jpg")
    empty = cv2.imread(stem + ".empty.jpg")
    lens = LensModel.load(lens_path) if Path(lens_path).is_file() else None
    frame = calibrate(empty, Layout.from_json(truth["layout"]), lens)
    centres = visible_centres_in(scene, frame)
    crops, sizes, offsets, turns, is_oval = [], [], [], [], []
    for k, model in enumerate(scene["models"]):
        if model["base"] not in OVAL_SIZES:
            continue
        true_facing = float(model.get("facing_deg", 0.0))
        for j in range(JITTERS_PER_OVAL):
            shift = np.zeros(2) if j == 0 else np.clip(rng.normal(0, JITTER_SIGMA_IN, 2), -JITTER_MAX_IN, JITTER_MAX_IN)
            sigma = FACING_SIGMA_DEG[int(rng.random() < 0.25)]
            turn = 0.0 if j == 0 else float(np.clip(rng.normal(0, sigma), -FACING_MAX_DEG, FACING_MAX_DEG))
            facing = (true_facing + turn + 180.0 * int(rng.random() < 0.5)) % 360.0  # an oval reads either way round
            at = (float(centres[k, 0] + shift[0]), float(centres[k, 1] + shift[1]))
            crops.append(oval_crop(photo, frame, at, facing))
            # The true centre from the crop's, along and across its facing: the inverse turn of -shift.
            along, across = to_table_offset(np.array([-shift[0]]), np.array([-shift[1]]), np.array([-facing]))
            sizes.append(OVAL_SIZES.index(model["base"]))
            offsets.append((along[0] / OVAL_OFFSET_SCALE_IN, across[0] / OVAL_OFFSET_SCALE_IN))
            turns.append(-turn / FACING_SCALE_DEG)
            is_oval.append(1.0)

    def add_negative(at_in: tuple[float, float]) -> None:
        crops.append(oval_crop(photo, frame, at_in, float(rng.uniform(0.0, 180.0))))
        sizes.append(-1)
        offsets.append((0.0, 0.0))
        turns.append(0.0)
        is_oval.append(0.0)

    ovals = [k for k, m in enumerate(scene["models"]) if m["base"] in OVAL_SIZES]
    oval_xy = centres[ovals] if ovals else np.zeros((0, 2))
    far_in = np.array([base_semi_axes_in(scene["models"][k]["base"])[0] + NOT_CENTRED_MARGIN_IN for k in ovals])

    def off_every_oval(at_in: tuple[float, float]) -> bool:
        return bool(np.all(np.hypot(oval_xy[:, 0] - at_in[0], oval_xy[:, 1] - at_in[1]) > far_in))

    # A round base is the likeliest thing to be taken for an oval: each one, as the crop would centre it.
    for k, model in enumerate(scene["models"]):
        if model["base"] not in OVAL_SIZES and off_every_oval((centres[k, 0], centres[k, 1])):
            add_negative((float(centres[k, 0]), float(centres[k, 1])))
    # The detector's own proposals away from every oval: what the refiner will be asked about at run time.
    boxes, cls, _ = proposal_detector(PROPOSAL_THRESHOLD).boxes(frame.rectify(photo, DETECT_PX_PER_IN))
    for box, c in zip(boxes, cls, strict=True):
        at = ((box[0] + box[2]) / 2 / DETECT_PX_PER_IN, (box[1] + box[3]) / 2 / DETECT_PX_PER_IN)
        if CLASSES[int(c)] in ("round", "oval") and off_every_oval(at):
            add_negative(at)
    width_in, depth_in = frame.layout.width_in, frame.layout.depth_in
    for _ in range(RANDOM_NEGATIVES):
        at = (float(rng.uniform(0.5, width_in - 0.5)), float(rng.uniform(0.5, depth_in - 0.5)))
        if off_every_oval(at):
            add_negative(at)
    return {
        "crops": np.stack(crops) if crops else np.zeros((0, OVAL_CROP_PX, OVAL_CROP_PX, 3), np.uint8),
        "size": np.array(sizes, np.int64),
        "offset": np.array(offsets, np.float32).reshape(-1, 2),
        "turn": np.array(turns, np.float32),
        "is_oval": np.array(is_oval, np.float32),
    }


def build_oval_samples(directories: list[Path], out: Path, workers: int = 2, seed: int = 0) -> dict[str, int]:
    """Samples from every rendered table under ``directories``, saved as one .npz at ``out``."""
    jobs = []
    for d in directories:
        for k, image in enumerate(sorted(Path(d).glob("*[0-9].jpg"))):
            jobs.append((str(image)[: -len(".jpg")], str(Path(d) / "lens.json"), seed * 1_000_003 + k))
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(oval_table_samples, *zip(*jobs, strict=True)))
    merged = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    # Which table each crop came from: validation holds back whole tables (an oval's crops are alike).
    merged["table"] = np.concatenate([np.full(len(p["size"]), k, np.int64) for k, p in enumerate(parts)])
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **merged)
    positives = int((merged["is_oval"] > 0.5).sum())
    return {"tables": len(jobs), "samples": len(merged["size"]), "positives": positives}


def _augment(x: Any, offset: Any, turn: Any, generator: Any) -> tuple[Any, Any, Any]:
    """Random mirrors along and across the facing (the offset and the facing's error mirrored with them),
    light and contrast. No quarter turns: the crop is turned to the facing."""
    import torch

    n = x.shape[0]
    offset, turn = offset.clone(), turn.clone()
    for axis, dim in ((0, 3), (1, 2)):
        flip = (torch.rand(n, generator=generator) < 0.5).to(x.device)  # drawn on the CPU: the same on any device
        x[flip] = x[flip].flip(dim)
        offset[flip, axis] = -offset[flip, axis]
        turn[flip] = -turn[flip]
    return light_and_tint(x, generator), offset, turn


def train_oval_refiner(
    samples: list[Path],
    out_onnx: Path,
    epochs: int = 20,
    batch: int = 128,
    lr: float = 0.002,
    seed: int = 0,
    val_share: float = 0.1,
    threads: int = 2,
    log: Any = print,
    device: str = "cpu",
) -> dict[str, float]:
    """Train on ``samples`` (.npz files from build_oval_samples), export the network to ``out_onnx``; the
    validation figures. The validation share is drawn by table (all crops of one table on one side).
    ``device``: where torch trains ('cpu', 'cuda'); the samples are moved there whole."""
    import torch
    from torch import nn

    files = [np.load(path) for path in samples]
    keys = ("crops", "size", "offset", "turn", "is_oval")
    for path, f in zip(samples, files, strict=True):
        if "is_oval" not in f or "table" not in f:
            raise ValueError(f"{path}: oval samples cut before session 28 (no negatives): delete it to cut it again")
    data = {key: np.concatenate([f[key] for f in files]) for key in keys}
    table_of = tables_across(files)  # tables are numbered within each file: numbered apart across files
    x_all = torch.from_numpy(np.ascontiguousarray(data["crops"][..., ::-1].transpose(0, 3, 1, 2))).to(device)
    size_all = torch.from_numpy(data["size"]).to(device)
    off_all = torch.from_numpy(data["offset"]).to(device)
    turn_all = torch.from_numpy(data["turn"]).to(device)
    oval_all = torch.from_numpy(data["is_oval"]).to(device)
    bce, ce = nn.BCEWithLogitsLoss(), nn.CrossEntropyLoss()
    n_sizes = len(OVAL_SIZES)

    def batch_loss(net: Any, idx: Any, generator: Any) -> Any:
        x, off, turn = _augment(x_all[idx].float() / 255.0, off_all[idx], turn_all[idx], generator)
        out = net(x)
        loss = bce(out[:, n_sizes + 3], oval_all[idx])
        pos = oval_all[idx] > 0.5
        if pos.any():  # size, centre and facing are learned on ovals only
            loss = loss + ce(out[pos, :n_sizes], size_all[idx][pos])
            loss = loss + 4.0 * nn.functional.smooth_l1_loss(out[pos, n_sizes : n_sizes + 2], off[pos], beta=0.05)
            loss = loss + nn.functional.smooth_l1_loss(out[pos, n_sizes + 2], turn[pos], beta=0.1)
        return loss

    def validate(net: Any, val: Any) -> dict[str, float]:
        is_pos = data["is_oval"][val] > 0.5  # per held-back crop, in the order of ``val``
        pos = val[is_pos]
        if len(pos) == 0:  # no oval held back: nothing to score
            return dict.fromkeys(FIGURES, float("nan"))
        net.eval()
        with torch.no_grad():
            out = torch.cat([net(x_all[val[k : k + 256]].float() / 255.0) for k in range(0, len(val), 256)]).cpu()
        said_oval = (out[:, n_sizes + 3] > 0).numpy()
        o = out[torch.from_numpy(is_pos)]
        off, turn = off_all[pos].cpu(), turn_all[pos].cpu()
        err_mm = ((o[:, n_sizes : n_sizes + 2] - off) * OVAL_OFFSET_SCALE_IN * 25.4).norm(dim=1).numpy()
        turn_deg = ((o[:, n_sizes + 2] - turn) * FACING_SCALE_DEG).abs().numpy()
        return {
            "oval_right": round(float(said_oval[is_pos].mean()), 4),
            "not_oval_right": round(float((~said_oval[~is_pos]).mean()), 4) if (~is_pos).any() else 1.0,
            "size_right": round(float((o[:, :n_sizes].argmax(1) == size_all[pos].cpu()).float().mean()), 4),
            "centre_mm_median": round(float(np.median(err_mm)), 3),
            "centre_mm_p95": round(float(np.percentile(err_mm, 95)), 3),
            "facing_deg_median": round(float(np.median(turn_deg)), 2),
            "facing_deg_p95": round(float(np.percentile(turn_deg, 95)), 2),
        }

    fit, val = validation_split(table_of, len(table_of), val_share, seed)
    net = make_network(n_sizes + 4)
    return fit_network(
        net,
        fit,
        val,
        batch_loss,
        validate,
        out_onnx,
        OVAL_CROP_PX,
        epochs,
        batch,
        lr,
        seed,
        threads,
        log,
        device=device,
    )
