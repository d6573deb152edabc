"""Training the base refiner (vision/refiner.py) on rendered tables, with torch; export to ONNX.

Samples come from rendered tables with their truth (``tablesight render-tables``):
- each round base, cropped round its centre as the top-down view shows it (a
  base on a hill appears where its ray meets the table), moved by a random
  offset like the detector's error: a positive, with its size and offset;
- each proposal of the detector (at a low threshold) that lies on no base or on an
  oval, each oval cropped round its centre, and random points of the table away
  from every base: negatives. The refiner judges round bases only: a round
  proposal on an oval must be turned away, so that the oval's own proposal wins.

Training-time code (needs the ``train`` extra); the product imports only vision/refiner.py.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.layout import Layout
from calibration.lens import LensModel
from calibration.table_frame import TableFrame, calibrate
from geometry.shapes import BASE_HEIGHT_IN, base_semi_axes_in
from vision.detect_learned import CLASSES, DETECT_PX_PER_IN, LearnedDetector
from vision.refiner import CROP_PX, OFFSET_SCALE_IN, REFINER_PX_PER_IN, ROUND_SIZES, crop_centre_in, crop_origin_px

JITTERS_PER_BASE = 5
JITTER_SIGMA_IN = 0.06  # about the spread of the detector's box centres round a base
JITTER_MAX_IN = 0.2
RANDOM_NEGATIVES = 6  # per table
PROPOSAL_THRESHOLD = 0.03  # the detector's proposals this sure or more: negatives (and positives at its real error),
# well below the threshold the refiner is used at (0.15), so that it learns to turn away what lies there


def visible_centres_in(scene: dict[str, Any], frame: TableFrame) -> npt.NDArray[np.float64]:
    """Where each model's base top (``BASE_HEIGHT_IN`` above its foot, a hill's height more on a hill) appears
    in the top-down view of the table plane: where its ray meets the table. The product maps it back
    (``vision.analyze.ground_positions``)."""
    xy = np.array([[m["x"], m["y"]] for m in scene["models"]], np.float64).reshape(-1, 2)
    z = np.array([float(m.get("z", 0.0)) for m in scene["models"]]) + BASE_HEIGHT_IN
    if frame.rvec is None or not len(xy):
        return xy
    out: npt.NDArray[np.float64] = frame.image_to_table(frame.table_to_image(xy, z))
    return out


def table_samples(stem: str, lens_path: str, seed: int, worse: bool = False) -> dict[str, npt.NDArray[Any]]:
    """Crops and labels from one rendered table (``stem``.jpg, .empty.jpg, .truth.json); ``worse``: from the
    photo as a worse camera would take it (worse_camera), the labels still measured through the clean set-up."""
    truth = json.loads(Path(stem + ".truth.json").read_text(encoding="utf-8"))
    photo = cv2.imread(stem + ".jpg")
    empty = cv2.imread(stem + ".empty.jpg")
    lens = LensModel.load(lens_path) if Path(lens_path).is_file() else None
    frame = calibrate(empty, Layout.from_json(truth["layout"]), lens)
    if worse:
        photo = worse_camera(photo, np.random.default_rng(seed + 1))
    return photo_samples(photo, frame, truth["scene"], seed)


def worse_camera(photo: npt.NDArray[np.uint8], rng: np.random.Generator) -> npt.NDArray[np.uint8]:
    """``photo`` as a cheaper or worse-set camera takes it than the renderer's (blur 0.3-0.9 px, JPEG 82-95,
    noise 2): one or two of a strong JPEG (quality 35-75, a phone streaming as a webcam), defocus (blur
    0.8-1.8 px), sensor noise in a dim room (sigma 4-10) and a smaller sensor scaled up (0.5-0.8)."""
    out = photo
    kinds = rng.choice(4, size=int(rng.integers(1, 3)), replace=False)
    for kind in kinds:
        if kind == 1:
            out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.8, 1.8)))
        elif kind == 2:
            noisy = out.astype(np.float32) + rng.normal(0.0, rng.uniform(4.0, 10.0), out.shape).astype(np.float32)
            out = np.clip(noisy, 0, 255).astype(np.uint8)
        elif kind == 3:
            h, w = out.shape[:2]
            f = float(rng.uniform(0.5, 0.8))
            small = cv2.resize(out, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA)
            out = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    quality = int(rng.integers(35, 76)) if 0 in kinds else 90  # always saved again, as a camera's stream is
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else out


def photo_samples(
    photo: npt.NDArray[np.uint8], frame: TableFrame, scene: dict[str, Any], seed: int
) -> dict[str, npt.NDArray[Any]]:
    """Crops and labels from one photo of the table seen through ``frame``, whose true ``scene`` is known
    (a rendered table's truth, or the scene players confirmed: vision/training/adapt.py)."""
    rng = np.random.default_rng(seed)
    pad = CROP_PX
    view = cv2.copyMakeBorder(frame.rectify(photo, REFINER_PX_PER_IN), pad, pad, pad, pad, cv2.BORDER_CONSTANT)
    centres = visible_centres_in(scene, frame)
    sizes = [m["base"] for m in scene["models"]]
    radius_in = np.array([max(base_semi_axes_in(s)) for s in sizes])
    crops: list[npt.NDArray[np.uint8]] = []
    is_base: list[float] = []
    size_k: list[int] = []
    offsets: list[tuple[float, float]] = []

    def add(at_in: tuple[float, float], base: int | None) -> None:
        x0, y0 = crop_origin_px(at_in)
        crops.append(view[y0 + pad : y0 + pad + CROP_PX, x0 + pad : x0 + pad + CROP_PX].copy())
        middle = crop_centre_in((x0, y0))
        if base is None:
            is_base.append(0.0)
            size_k.append(-1)
            offsets.append((0.0, 0.0))
        else:
            is_base.append(1.0)
            size_k.append(ROUND_SIZES.index(sizes[base]))
            offsets.append(
                ((centres[base, 0] - middle[0]) / OFFSET_SCALE_IN, (centres[base, 1] - middle[1]) / OFFSET_SCALE_IN)
            )

    for k, size in enumerate(sizes):
        if size not in ROUND_SIZES:
            continue
        for j in range(JITTERS_PER_BASE):
            shift = np.zeros(2) if j == 0 else np.clip(rng.normal(0, JITTER_SIGMA_IN, 2), -JITTER_MAX_IN, JITTER_MAX_IN)
            add((centres[k, 0] + shift[0], centres[k, 1] + shift[1]), k)
    for k, size in enumerate(sizes):
        if size not in ROUND_SIZES:  # an oval is no round base, however round its middle looks
            add((centres[k, 0], centres[k, 1]), None)
    # The detector's own proposals: on a round base, a positive at the detector's real error; elsewhere, a negative.
    detector = proposal_detector(PROPOSAL_THRESHOLD)
    boxes, cls, _ = detector.boxes(frame.rectify(photo, DETECT_PX_PER_IN))
    for box, c in zip(boxes, cls, strict=True):
        if CLASSES[int(c)] != "round":
            continue
        at = ((box[0] + box[2]) / 2 / DETECT_PX_PER_IN, (box[1] + box[3]) / 2 / DETECT_PX_PER_IN)
        dist = np.hypot(centres[:, 0] - at[0], centres[:, 1] - at[1]) if len(centres) else np.zeros(0)
        near = int(dist.argmin()) if len(dist) else -1
        if near >= 0 and dist[near] < 0.5 * radius_in[near]:
            add(at, near if sizes[near] in ROUND_SIZES else None)
        elif near < 0 or dist[near] > radius_in[near] + 0.1:
            add(at, None)
    width_in, depth_in = frame.layout.width_in, frame.layout.depth_in
    for _ in range(RANDOM_NEGATIVES * 4):
        if sum(b == 0.0 for b in is_base) >= RANDOM_NEGATIVES + len(boxes):
            break
        at = (float(rng.uniform(0.5, width_in - 0.5)), float(rng.uniform(0.5, depth_in - 0.5)))
        if len(centres) and (np.hypot(centres[:, 0] - at[0], centres[:, 1] - at[1]) < radius_in + 0.2).any():
            continue
        add(at, None)
    return {
        "crops": np.stack(crops) if crops else np.zeros((0, CROP_PX, CROP_PX, 3), np.uint8),
        "is_base": np.array(is_base, np.float32),
        "size": np.array(size_k, np.int64),
        "offset": np.array(offsets, np.float32).reshape(-1, 2),
    }


_detectors: dict[float, LearnedDetector] = {}


def proposal_detector(threshold: float) -> LearnedDetector:
    """The detector without refiners, boxing from ``threshold``: the proposals training crops are cut at."""
    if threshold not in _detectors:  # once per worker process
        _detectors[threshold] = LearnedDetector(score_threshold=threshold, refiner_path=None)
    return _detectors[threshold]


def build_samples(directories: list[Path], out: Path, workers: int = 2, seed: int = 0) -> dict[str, int]:
    """Samples from every rendered table under ``directories``, saved as one .npz at ``out``."""
    jobs = []
    for d in directories:
        for k, image in enumerate(sorted(Path(d).glob("*[0-9].jpg"))):
            jobs.append((str(image)[: -len(".jpg")], str(Path(d) / "lens.json"), seed * 1_000_003 + k))
    parts = []
    with ProcessPoolExecutor(workers) as pool:
        for k, part in enumerate(pool.map(table_samples, *zip(*jobs, strict=True))):
            part["table"] = np.full(len(part["is_base"]), k, np.int32)  # to validate on tables never trained on
            parts.append(part)
    merged = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **merged)
    return {"tables": len(jobs), "samples": len(merged["is_base"]), "positives": int(merged["is_base"].sum())}


def make_network(
    outputs: int = 1 + len(ROUND_SIZES) + 2,
    widths: tuple[int, int, int, int, int] = (16, 24, 32, 48, 64),
    dense: int = 128,
) -> Any:
    """A small CNN: a stride-2 stem, three stages of two 3x3 convolutions, a dense layer; ``outputs``
    (the base refiner's: base logit, size logits and offset). ``widths``: the channels of the stem, the three
    stages and the last convolution. About 25 M multiply-adds a 96 px crop at the default widths."""
    import torch
    from torch import nn

    def conv(cin: int, cout: int, stride: int = 1) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    torch.manual_seed(0)
    side = CROP_PX // 16
    w0, w1, w2, w3, w4 = widths
    return nn.Sequential(
        *conv(3, w0, 2),
        *conv(w0, w1),
        nn.MaxPool2d(2),
        *conv(w1, w2),
        *conv(w2, w2),
        nn.MaxPool2d(2),
        *conv(w2, w3),
        *conv(w3, w3),
        nn.MaxPool2d(2),
        *conv(w3, w4),
        nn.Flatten(),
        nn.Linear(w4 * side * side, dense),
        nn.ReLU(inplace=True),
        nn.Linear(dense, outputs),
    )


def load_onnx_weights(net: Any, onnx_path: Path) -> None:
    """Set ``net`` (make_network's, same widths) to the weights of its ONNX export ``onnx_path``, to train on
    from there. The export folded each batch norm into its convolution: the convolutions get the folded
    kernels, each norm passes its input through plus the folded bias (mean 0, variance 1 - eps, scale 1),
    so that the network, its norms frozen (``fit_network(frozen_norms=True)``), computes what the export did."""
    import onnx
    import torch
    from torch import nn

    model = onnx.load(str(onnx_path))
    values = _weights(model)
    convs = [(n.input[1], n.input[2]) for n in model.graph.node if n.op_type == "Conv"]
    denses = [(n.input[1], n.input[2]) for n in model.graph.node if n.op_type == "Gemm"]
    layers = list(net)
    pairs = [(m, layers[k + 1]) for k, m in enumerate(layers) if isinstance(m, nn.Conv2d)]
    linears = [m for m in layers if isinstance(m, nn.Linear)]
    if len(pairs) != len(convs) or len(linears) != len(denses):
        raise ValueError(
            f"{onnx_path}: {len(convs)} convolutions, {len(denses)} dense layers; the network has {len(pairs)}, {len(linears)}"
        )
    with torch.no_grad():
        for (conv, norm), (w, b) in zip(pairs, convs, strict=True):
            if tuple(conv.weight.shape) != values[w].shape:
                raise ValueError(
                    f"{onnx_path}: a kernel of {values[w].shape}, the network's {tuple(conv.weight.shape)}"
                )
            conv.weight.copy_(torch.from_numpy(values[w].copy()))
            norm.weight.fill_(1.0)
            norm.bias.copy_(torch.from_numpy(values[b].copy()))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
        for dense, (w, b) in zip(linears, denses, strict=True):
            dense.weight.copy_(torch.from_numpy(values[w].copy()))
            dense.bias.copy_(torch.from_numpy(values[b].copy()))


def _weights(model: Any) -> dict[str, npt.NDArray[np.float32]]:
    """An ONNX model's weights by the names its layers read them under, as float32: a weight stored as float16
    (store_half) is read through its Cast node, one the exporter shares between layers (equal values, as in an
    untrained network) through an Identity node."""
    from onnx import numpy_helper

    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type in ("Cast", "Identity") and node.input[0] in values:
            values[node.output[0]] = values[node.input[0]].astype(np.float32)
    return values


def network_shape(onnx_path: Path) -> dict[str, Any]:
    """make_network's ``widths`` and ``dense`` for an exported refiner, read from its weights' shapes (a wider
    refiner, such as session 48's, goes on training or adapting in its own shape)."""
    import onnx

    model = onnx.load(str(onnx_path))
    values = _weights(model)
    kernels = [values[n.input[1]].shape[0] for n in model.graph.node if n.op_type == "Conv"]
    denses = [values[n.input[1]].shape[0] for n in model.graph.node if n.op_type == "Gemm"]
    if len(kernels) != 7 or len(denses) != 2:
        raise ValueError(f"{onnx_path}: {len(kernels)} convolutions and {len(denses)} dense layers, not a refiner's")
    # make_network's convolutions put out w0, w1, w2, w2, w3, w3, w4 channels
    return {"widths": (kernels[0], kernels[1], kernels[2], kernels[4], kernels[6]), "dense": denses[0]}


def store_half(onnx_path: Path, out: Path) -> None:
    """Write ``onnx_path`` with its float weights stored as float16, each cast back to float32 where the network
    loads (onnxruntime folds the casts once): half the file for the same network, its outputs within float16's
    rounding (about 1e-3 of a logit's range): a way to ship a wider refiner under issue 6's 15 MB of weights
    (docs/detector.md, session 48)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(onnx_path))
    graph = model.graph
    kept, casts = [], []
    for init in graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype == np.float32 and value.size >= 64:  # scalars and shapes stay as they are
            half = numpy_helper.from_array(value.astype(np.float16), init.name + "_fp16")
            kept.append(half)
            casts.append(helper.make_node("Cast", [half.name], [init.name], to=TensorProto.FLOAT))
        else:
            kept.append(init)
    nodes = casts + list(graph.node)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))


def _augment(x: Any, offset: Any, generator: Any) -> tuple[Any, Any]:
    """Random flips and quarter turns (the offset turned with them), light and contrast."""
    import torch

    n = x.shape[0]
    offset = offset.clone()
    # Drawn on the (CPU) generator, applied where the batch is: the same draws on a GPU as on the CPU.
    flip_x = (torch.rand(n, generator=generator) < 0.5).to(x.device)
    x[flip_x] = x[flip_x].flip(3)
    offset[flip_x, 0] = -offset[flip_x, 0]
    flip_y = (torch.rand(n, generator=generator) < 0.5).to(x.device)
    x[flip_y] = x[flip_y].flip(2)
    offset[flip_y, 1] = -offset[flip_y, 1]
    swap = (torch.rand(n, generator=generator) < 0.5).to(x.device)
    x[swap] = x[swap].transpose(2, 3)
    offset[swap] = offset[swap].flip(1)
    return light_and_tint(x, generator), offset


def light_and_tint(x: Any, generator: Any) -> Any:
    """Each crop of the batch ``x`` (N, 3, H, W; 0..1) under other light: gain, colour tint and shift."""
    import torch

    n = x.shape[0]
    gain = (0.7 + 0.6 * torch.rand(n, 1, 1, 1, generator=generator)).to(x.device)
    tint = (0.9 + 0.2 * torch.rand(n, 3, 1, 1, generator=generator)).to(x.device)
    shift = (0.1 * (torch.rand(n, 1, 1, 1, generator=generator) - 0.5)).to(x.device)
    return (x * gain * tint + shift).clamp(0, 1)


def train_refiner(
    samples: list[Path],
    out_onnx: Path,
    epochs: int = 12,
    batch: int = 128,
    lr: float = 0.002,
    seed: int = 0,
    val_share: float = 0.1,
    threads: int = 2,
    log: Any = print,
    device: str = "cpu",
    widths: tuple[int, int, int, int, int] = (16, 24, 32, 48, 64),
    dense: int = 128,
    start_from: Path | None = None,
) -> dict[str, float]:
    """Train on ``samples`` (.npz files from build_samples, in order), export the network to ``out_onnx``;
    ``start_from``: an exported refiner to go on training (load_onnx_weights; its norms stay frozen);
    the validation figures (a share of the samples, drawn by ``seed``, never trained on). ``device``: where
    torch trains ('cpu', 'cuda'); the samples are moved there whole. ``widths``, ``dense``: make_network's."""
    import torch
    from torch import nn

    files = [np.load(path) for path in samples]
    data = {key: np.concatenate([f[key] for f in files]) for key in ("crops", "is_base", "size", "offset")}
    x_all = torch.from_numpy(np.ascontiguousarray(data["crops"][..., ::-1].transpose(0, 3, 1, 2))).to(device)
    base_all = torch.from_numpy(data["is_base"]).to(device)
    size_all = torch.from_numpy(data["size"]).to(device)
    off_all = torch.from_numpy(data["offset"]).to(device)
    bce, ce = nn.BCEWithLogitsLoss(), nn.CrossEntropyLoss()

    def batch_loss(net: Any, idx: Any, generator: Any) -> Any:
        x, off = _augment(x_all[idx].float() / 255.0, off_all[idx], generator)
        out = net(x)
        pos = base_all[idx] > 0.5
        loss = bce(out[:, 0], base_all[idx])
        if pos.any():
            loss = loss + ce(out[pos, 1 : 1 + len(ROUND_SIZES)], size_all[idx][pos])
            loss = loss + 4.0 * nn.functional.smooth_l1_loss(out[pos, -2:], off[pos], beta=0.05)
        return loss

    def validate(net: Any, val: Any) -> dict[str, float]:
        return _validate(net, x_all[val], base_all[val], size_all[val], off_all[val])

    tables = tables_across(files) if all("table" in f for f in files) else None
    fit, val = validation_split(tables, len(base_all), val_share, seed)
    # going on from an export: its own shape, whatever ``widths`` and ``dense`` say
    shape = network_shape(start_from) if start_from is not None else {"widths": widths, "dense": dense}
    net = make_network(**shape)
    if start_from is not None:
        load_onnx_weights(net, start_from)
        log(f"from {start_from}: {validate(net.to(device), val)}")  # where the samples are
    return fit_network(
        net,
        fit,
        val,
        batch_loss,
        validate,
        out_onnx,
        CROP_PX,
        epochs,
        batch,
        lr,
        seed,
        threads,
        log,
        device=device,
        frozen_norms=start_from is not None,
    )


def tables_across(files: list[Any]) -> npt.NDArray[np.int64]:
    """Each sample's table, numbered apart across ``files`` (their ``table`` arrays number tables within each)."""
    table, first = [], 0
    for f in files:
        table.append(f["table"].astype(np.int64) + first)
        first += int(f["table"].max()) + 1 if len(f["table"]) else 0
    return np.concatenate(table) if table else np.zeros(0, np.int64)


def validation_split(
    tables: npt.NDArray[np.int64] | None, n: int, val_share: float, seed: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Sample indices to fit on and to validate on: ``val_share`` of the tables (``tables``: each sample's
    table, numbered from 0) drawn by ``seed``, every sample of a table on one side. A table's crops overlap
    (five per base, its neighbours in the margins), so a split by sample validates on what was trained on:
    session 34's refiner, trained on 703 tables, had 0.85 mm p95 on such a split and 1.21 mm on the held-out
    photos. Without ``tables`` (base samples saved before session 34), a split by sample. ``val_share`` 0:
    every sample on both sides (adapting on a few confirmed frames, none to spare)."""
    if val_share <= 0:
        every = np.arange(n, dtype=np.int64)
        return every, every
    rng = np.random.default_rng(seed)
    if tables is None:
        order = rng.permutation(n)
        n_val = int(n * val_share)
        return order[n_val:], order[:n_val]
    count = int(tables.max()) + 1 if len(tables) else 0
    held = rng.permutation(count)[: max(1, int(count * val_share)) if count > 1 else 0]
    in_val = np.isin(tables, held)
    return np.flatnonzero(~in_val), np.flatnonzero(in_val)


def fit_network(
    net: Any,
    fit: npt.NDArray[np.int64],
    val: npt.NDArray[np.int64],
    batch_loss: Any,
    validate: Any,
    out_onnx: Path,
    crop_px: int,
    epochs: int,
    batch: int,
    lr: float,
    seed: int,
    threads: int,
    log: Any,
    input_channels: int = 3,
    device: str = "cpu",
    frozen_norms: bool = False,
) -> dict[str, float]:
    """The training loop the refiners and the terrain segmenter share: AdamW with a one-cycle schedule over
    the samples ``fit``, ``validate(net, val)`` after each epoch; the network exported to ``out_onnx``
    (``input_channels`` deep), its state dict saved beside it (.pt).
    ``batch_loss(net, indices, generator)`` augments and scores a batch; ``device``: where the network and
    the samples are (the network comes back to the CPU for the export); ``frozen_norms``: batch norms keep
    their statistics (a network loaded from an export, whose norms were folded away)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * (len(fit) // batch + 1)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        net.train()
        if frozen_norms:
            for module in net.modules():
                if isinstance(module, torch.nn.BatchNorm2d):
                    module.eval()
        start = time.perf_counter()
        perm = fit[np.random.default_rng(seed + epoch + 1).permutation(len(fit))]
        total = 0.0
        for k in range(0, len(perm), batch):
            idx = torch.from_numpy(perm[k : k + batch]).to(device)
            loss = batch_loss(net, idx, generator)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        log(
            f"epoch {epoch + 1}/{epochs}: loss {total / len(fit):.4f}, {time.perf_counter() - start:.0f} s, {validate(net, val)}"
        )
    figures: dict[str, float] = validate(net, val)
    net.eval().to("cpu")
    out_onnx.parent.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), out_onnx.with_suffix(".pt"))  # the weights beside the export, should it fail
    torch.onnx.export(
        net,
        (torch.zeros(1, input_channels, crop_px, crop_px),),
        str(out_onnx),
        input_names=["crops"],
        output_names=["refined"],
        dynamic_axes={"crops": {0: "n"}, "refined": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    return figures


def score_refiner(
    onnx_path: Path, samples: dict[str, npt.NDArray[Any]], size_reader: Path | None = None
) -> dict[str, float]:
    """An exported refiner's validation figures (base right, size right, centre error) on ``samples``
    (photo_samples' arrays), computed with torch as training computes them. ``size_reader``: a second network
    that names base and size, the refiner keeping the centre, as the shipped pair reads (vision/refiner.py)."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(samples["crops"][..., ::-1].transpose(0, 3, 1, 2)))
    out = _outputs(_loaded(onnx_path), x)
    if size_reader is not None:
        out = torch.cat([_outputs(_loaded(size_reader), x)[:, : 1 + len(ROUND_SIZES)], out[:, -2:]], dim=1)
    return _figures(
        out,
        torch.from_numpy(samples["is_base"]),
        torch.from_numpy(samples["size"]),
        torch.from_numpy(samples["offset"]),
    )


def _loaded(onnx_path: Path) -> Any:
    net = make_network(**network_shape(onnx_path))
    load_onnx_weights(net, onnx_path)
    return net


def _outputs(net: Any, x: Any) -> Any:
    import torch

    net.eval()
    with torch.no_grad():
        return torch.cat([net(x[k : k + 256].float() / 255.0) for k in range(0, len(x), 256)]).cpu()


def _validate(net: Any, x: Any, is_base: Any, size: Any, offset: Any) -> dict[str, float]:
    """Validation figures: base right, size right and centre error (mm, median and p95) on positives."""
    return _figures(_outputs(net, x), is_base, size, offset)


def _figures(out: Any, is_base: Any, size: Any, offset: Any) -> dict[str, float]:
    is_base, size, offset = is_base.cpu(), size.cpu(), offset.cpu()
    pos = is_base > 0.5
    err_mm = ((out[pos, -2:] - offset[pos]) * OFFSET_SCALE_IN * 25.4).norm(dim=1).numpy()
    return {
        "base_right": round(float(((out[:, 0] > 0) == pos).float().mean()), 4),
        "size_right": round(float((out[pos, 1 : 1 + len(ROUND_SIZES)].argmax(1) == size[pos]).float().mean()), 4),
        "centre_mm_median": round(float(np.median(err_mm)), 3) if len(err_mm) else float("nan"),
        "centre_mm_p95": round(float(np.percentile(err_mm, 95)), 3) if len(err_mm) else float("nan"),
    }
