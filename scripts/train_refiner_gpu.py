"""Render the base refiner's tables on many cores, cut its samples and train variants of it on a GPU, all
inside one time budget (a lent GPU machine is held for minutes, not hours).

    python scripts/train_refiner_gpu.py OUT_DIR [--budget-s 540] [--render-s 270] [--workers 16]

Tables are rendered set by set interleaved (table k of every set before table k + 1 of any), so that a
render cut short by the budget keeps the sets' balance; what was rendered is recorded in OUT_DIR/job.json.
Each variant of ``VARIANTS`` is trained for as many epochs as its share of the time left allows (timed on a
probe), exported to OUT_DIR/base-refiner-NAME.onnx, its state dict beside it (.pt). Needs the ``train`` extra.
Run on session 34's lent H200 (docs/detector.md); on a CPU it runs too, slowly (keep --budget-s large).

``--photoreal DIR[,DIR]``: path-traced tables (``tablesight render-photoreal``) cut into samples too, each base
``--photoreal-copies`` times (other jitters), the whole counted ``--photoreal-weight`` times: the look nearest
to real photos, where the flat-trained refiner reads sizes a step small (docs/vision.md, session 41). Render
them on this machine first and carry them (the path tracer is slow); keep the evaluation's seeds out.

``--worse-camera``: every table (flat and path-traced) cut a second time from its photo as a worse camera takes it
(``vision.training.refiner.worse_camera``: strong JPEG, defocus, noise, a small sensor; docs/detector.md, session 55).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.training.commands import REFINER_SETS  # noqa: E402

# The shipped refiner's sets (session 27) and as many again at new seeds; every set drawn both ways.
EXTRA_SETS: tuple[tuple[int, int, tuple[str, ...]], ...] = (
    (630_000, 300, ("focal-point", "grinding-annihilation")),
    (640_000, 200, ("focal-point", "grinding-annihilation")),
    (650_000, 150, ("miniature-skirmish", "onefinity")),
)
# New sets whose rims are drawn near the mat's colour (render_table's rims='near-mat', session 36): bases whose
# edge barely shows, as on the path-traced photos, where the shipped refiner names such bases a size small.
NEAR_MAT_SETS: tuple[tuple[int, int, tuple[str, ...]], ...] = (
    (660_000, 300, ("focal-point", "grinding-annihilation")),
    (670_000, 200, ("focal-point", "grinding-annihilation")),
    (680_000, 150, ("miniature-skirmish", "onefinity")),
)
FIGURES = ("blob", "varied")
# name: (widths, dense, batch, lr)
VARIANTS: dict[str, tuple[tuple[int, int, int, int, int], int, int, float]] = {
    "a": ((16, 24, 32, 48, 64), 128, 256, 0.003),  # the shipped network
    "b": ((24, 32, 48, 64, 96), 192, 256, 0.003),  # wider: about twice the multiply-adds
    "f": ((16, 24, 32, 48, 64), 128, 256, 0.0005),  # the shipped network, gone on with (--start-from)
}


def _quiet_worker() -> None:
    """One thread per worker process: the pool has a process per core."""
    os.environ["OMP_NUM_THREADS"] = "1"
    import cv2

    cv2.setNumThreads(1)
    try:
        import onnxruntime as ort
    except ImportError:
        return
    original = ort.SessionOptions

    def one_thread() -> Any:
        options = original()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        return options

    ort.SessionOptions = one_thread


def _lens_task(table_dir: str, seed: int) -> str:
    from vision.synth.table import webcam_lens

    Path(table_dir).mkdir(parents=True, exist_ok=True)
    path = Path(table_dir) / "lens.json"
    webcam_lens(seed).save(path)
    return str(path)


def _table_task(
    table_dir: str, seed: int, game: str, figures: str, sample_seed: int, rims: str = "palette", worse: bool = False
) -> dict[str, Any]:
    from vision.evaluate import render_one

    photo = render_one(Path(table_dir), seed, game, figures=figures, rims=rims)
    return _cut(str(photo)[: -len(".jpg")], str(Path(table_dir) / "lens.json"), sample_seed, worse)


def _cut(stem: str, lens_path: str, seed: int, worse: bool) -> dict[str, Any]:
    """One table's samples; ``worse``: and its samples again from the photo a worse camera takes (--worse-camera)."""
    from vision.training.refiner import table_samples

    part = table_samples(stem, lens_path, seed)
    if not worse:
        return part
    again = table_samples(stem, lens_path, seed + 5_000_011, worse=True)
    return {key: np.concatenate([part[key], again[key]]) for key in part}


def _look_tag(figures: str, rims: str) -> str:
    """A set's name suffix for how its tables look: '' for the defaults (blob figures, palette rims)."""
    return ("" if figures == "blob" else "-" + figures) + ("" if rims == "palette" else "-" + rims)


def render_and_cut(
    root: Path,
    deadline: float,
    workers: int,
    log: Any,
    new_only: bool = False,
    near_mat: bool = False,
    first_table: int = 0,
    worse: bool = False,
) -> tuple[list[Path], list[dict[str, Any]]]:
    """Render tables and cut samples until ``deadline`` (time.time()); one .npz of samples per set.
    ``new_only``: the new sets alone (to go on training the shipped refiner on tables it has not seen);
    ``near_mat``: with NEAR_MAT_SETS too; ``first_table``: start each set at this table (a set's tables below it
    were rendered by an earlier run: session 38's refiner was trained on tables 0-71 of every set); ``worse``: each
    table cut again from the photo as a worse camera takes it (vision/training/refiner.py: worse_camera)."""
    palette = EXTRA_SETS if new_only else (*REFINER_SETS, *EXTRA_SETS)
    sets = [(s, f, "palette") for f in FIGURES for s in palette]
    if near_mat:
        sets += [(s, f, "near-mat") for f in FIGURES for s in NEAR_MAT_SETS]
    dirs = [root / f"tables-{seed}{_look_tag(drawn, rims)}" for (seed, _, _), drawn, rims in sets]
    tasks = []  # interleaved: table k of every set, then k + 1
    for k in range(first_table, max(tables for (_, tables, _), _, _ in sets)):
        for index, ((seed, tables, games), drawn, rims) in enumerate(sets):
            if k < tables:
                tasks.append(
                    (
                        index,
                        k,
                        (str(dirs[index]), seed + k, games[k % len(games)], drawn, index * 1_000_003 + k, rims, worse),
                    )
                )
    results: dict[int, dict[int, dict[str, Any]]] = {i: {} for i in range(len(sets))}
    with ProcessPoolExecutor(workers, initializer=_quiet_worker) as pool:
        # One lens a seed (each calibrated from rendered board photos: ~20 s on this 2-core machine), copied to
        # the set's other drawing.
        first = {seed: str(dirs[i]) for i, ((seed, _, _), _, _) in reversed(list(enumerate(sets)))}
        list(pool.map(_lens_task, first.values(), first.keys()))
        for index, ((seed, _, _), _, _) in enumerate(sets):
            dirs[index].mkdir(parents=True, exist_ok=True)
            if not (dirs[index] / "lens.json").exists():
                shutil.copyfile(Path(first[seed]) / "lens.json", dirs[index] / "lens.json")
        log(f"lenses: {time.time() - deadline:+.0f} s to the render deadline")
        pending: dict[Future[dict[str, Any]], tuple[int, int]] = {}
        queue = iter(tasks)
        done_count = 0
        while True:
            while len(pending) < 2 * workers and time.time() < deadline:
                task = next(queue, None)
                if task is None:
                    break
                index, k, args = task
                pending[pool.submit(_table_task, *args)] = (index, k)
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                index, k = pending.pop(future)
                results[index][k] = future.result()
                done_count += 1
                if done_count % 100 == 0:
                    log(f"{done_count} tables, {time.time() - deadline:+.0f} s to the render deadline")
    parts, described = [], []
    for index, ((seed, _, games), drawn, rims) in enumerate(sets):
        done = [
            {**results[index][k], "table": np.full(len(results[index][k]["is_base"]), k, np.int32)}
            for k in sorted(results[index])
        ]
        if not done:
            continue
        merged: dict[str, Any] = {key: np.concatenate([p[key] for p in done]) for key in done[0]}
        out = root / f"samples-{seed}-{drawn}{_look_tag('blob', rims)}.npz"
        np.savez(out, **merged)
        parts.append(out)
        ks = sorted(results[index])
        described.append(
            {
                "seed": seed,
                "games": list(games),
                "figures": drawn,
                "rims": rims,
                "tables": len(ks),
                "contiguous": ks == list(range(ks[0], ks[0] + len(ks))),
                "worse_camera": worse,
                "samples": len(merged["is_base"]),
                "positives": int(merged["is_base"].sum()),
            }
        )
    return parts, described


def _photoreal_task(stem: str, lens_path: str, copies: int, seed: int, worse: bool = False) -> dict[str, Any]:
    """One path-traced table's samples: every crop once, and each base's jittered crops ``copies`` - 1 more times
    (``worse``: each time from the photo as it is and as a worse camera takes it)."""
    parts = []
    for c in range(copies):
        part = _cut(stem, lens_path, seed + 7_000_003 * c, worse)
        if c:  # the copies: the bases' crops with other jitters, not the negatives again
            keep = part["is_base"] > 0.5
            part = {key: value[keep] for key, value in part.items()}
        parts.append(part)
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def cut_photoreal(
    directories: list[Path], out: Path, copies: int, workers: int, worse: bool = False
) -> tuple[list[Path], list[dict[str, Any]]]:
    """Samples from the path-traced tables in ``directories`` (each with its lens.json), one .npz for them all."""
    jobs = []
    for d in directories:
        for k, photo in enumerate(sorted(d.glob("*[0-9].jpg"))):
            if photo.with_suffix(".truth.json").exists():
                jobs.append((str(photo)[: -len(".jpg")], str(d / "lens.json"), copies, 8_000_003 + k, worse))
    if not jobs:
        raise SystemExit(f"--photoreal: no rendered tables in {', '.join(map(str, directories))}")
    with ProcessPoolExecutor(workers, initializer=_quiet_worker) as pool:
        done = list(pool.map(_photoreal_task, *zip(*jobs, strict=True)))
    for k, part in enumerate(done):
        part["table"] = np.full(len(part["is_base"]), k, np.int32)
    merged = {key: np.concatenate([p[key] for p in done]) for key in done[0]}
    path = out / "samples-photoreal.npz"
    np.savez(path, **merged)
    described = {
        "photoreal": [str(d) for d in directories],
        "tables": len(jobs),
        "copies": copies,
        "worse_camera": worse,
        "samples": len(merged["is_base"]),
        "positives": int(merged["is_base"].sum()),
    }
    return [path], [described]


def probe_step_s(widths: tuple[int, int, int, int, int], dense: int, batch: int, device: str) -> float:
    """Seconds a training step of this network takes here (augmenting, forward, backward, update)."""
    import torch

    from vision.refiner import CROP_PX, ROUND_SIZES
    from vision.training.refiner import _augment, make_network

    net = make_network(widths=widths, dense=dense).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    x_all = torch.randint(0, 255, (batch * 8, 3, CROP_PX, CROP_PX), dtype=torch.uint8, device=device)
    off_all = torch.zeros(batch * 8, 2, device=device)
    generator = torch.Generator().manual_seed(0)
    times = []
    for step in range(25):
        start = time.perf_counter()
        idx = torch.randint(0, len(x_all), (batch,)).to(device)
        x, off = _augment(x_all[idx].float() / 255.0, off_all[idx], generator)
        out = net(x)
        loss = out[:, 0].square().mean() + (out[:, -2:] - off).abs().mean() + out[:, 1 : 1 + len(ROUND_SIZES)].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        float(loss.detach())  # waits for the device
        if step >= 5:
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--budget-s", type=float, default=540.0, help="all of it, from the start")
    parser.add_argument("--render-s", type=float, default=270.0, help="no table started after this")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--work", default="/tmp/refiner-job", help="where tables and samples are written")
    parser.add_argument("--variants", default="a,b")
    parser.add_argument("--start-from", type=Path, help="an exported refiner to go on training (variant f)")
    parser.add_argument("--new-sets-only", action="store_true", help="render the new sets alone")
    parser.add_argument("--near-mat", action="store_true", help="add sets with rims near the mat's colour")
    parser.add_argument("--first-table", type=int, default=0, help="start every set at this table (new tables)")
    parser.add_argument("--lr", type=float, help="the variants' learning rate (default: each variant's own)")
    parser.add_argument("--epochs", type=int, help="train each variant this many epochs (default: by the budget)")
    parser.add_argument("--photoreal", default="", help="path-traced table folders to train on too (DIR,DIR)")
    parser.add_argument("--photoreal-copies", type=int, default=3, help="crops of each path-traced base")
    parser.add_argument("--photoreal-weight", type=int, default=2, help="how many times those samples count")
    parser.add_argument(
        "--worse-camera",
        action="store_true",
        help="cut every table again from its photo as a worse camera takes it (JPEG, defocus, noise, small sensor)",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="train on the samples an earlier call left in --work (no rendering)"
    )
    args = parser.parse_args()
    start = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def log(line: str) -> None:
        line = f"[{time.time() - start:6.1f} s] {line}"
        print(line, flush=True)
        lines.append(line)
        (out / "job.log").write_text("\n".join(lines) + "\n", encoding="utf-8")

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.reuse:  # a second call on the same warm machine: its first call's samples are still in --work
        earlier = json.loads((work / "sets.json").read_text(encoding="utf-8"))
        parts, described = [Path(part) for part in earlier["parts"]], earlier["sets"]
    else:
        parts, described = render_and_cut(
            work,
            start + args.render_s,
            args.workers,
            log,
            args.new_sets_only,
            args.near_mat,
            args.first_table,
            args.worse_camera,
        )
        if args.photoreal:
            more, about = cut_photoreal(
                [Path(d) for d in args.photoreal.split(",")],
                work,
                args.photoreal_copies,
                args.workers,
                args.worse_camera,
            )
            parts += more * args.photoreal_weight
            described += about * args.photoreal_weight
            log(
                f"path-traced: {about[0]['tables']} tables, {about[0]['samples']} samples, counted {args.photoreal_weight}x"
            )
        record = {"parts": [str(part) for part in parts], "sets": described}
        (work / "sets.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    job: dict[str, Any] = {"sets": described, "tables": sum(d["tables"] for d in described)}
    job["samples"] = sum(d["samples"] for d in described)
    log(f"rendered {job['tables']} tables, {job['samples']} samples")
    if not parts:
        log("no table rendered within the budget: nothing to train on")
        return 1
    import torch  # only now: the render's worker processes are forked from this one

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cudnn.benchmark = True  # one crop size throughout: let cuDNN pick its fastest convolutions
    log(
        f"device {device} ({torch.cuda.get_device_name() if device == 'cuda' else os.cpu_count()}), torch {torch.__version__}"
    )
    (out / "job.json").write_text(json.dumps(job, indent=1) + "\n", encoding="utf-8")

    from vision.training.refiner import train_refiner

    names = [n for n in args.variants.split(",") if n]
    n_fit = int(job["samples"] * 0.9)
    job["variants"] = {}
    for i, name in enumerate(names):
        widths, dense, batch, lr = VARIANTS[name]
        lr = args.lr or lr
        step_s = probe_step_s(widths, dense, batch, device)
        share_s = (start + args.budget_s - 30 - time.time()) / (len(names) - i)
        epochs = args.epochs or int(max(4, min(60, share_s / (1.15 * step_s * (n_fit // batch + 1)))))
        log(f"variant {name}: {step_s * 1000:.1f} ms a step, {share_s:.0f} s -> {epochs} epochs")
        onnx = out / f"base-refiner-{name}.onnx"
        try:
            figures = train_refiner(
                parts,
                onnx,
                epochs=epochs,
                batch=batch,
                lr=lr,
                log=log,
                device=device,
                widths=widths,
                dense=dense,
                start_from=args.start_from if name == "f" else None,
            )
        except Exception as failed:  # the export is the likeliest to fail on another torch; the .pt is kept
            log(f"variant {name}: {type(failed).__name__}: {failed}")
            figures = {}
        job["variants"][name] = {
            "widths": widths,
            "dense": dense,
            "batch": batch,
            "lr": lr,
            "epochs": epochs,
            "start_from": str(args.start_from) if name == "f" else None,
            "validation": figures,
        }
        log(f"variant {name}: {figures}")
        (out / "job.json").write_text(json.dumps(job, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
