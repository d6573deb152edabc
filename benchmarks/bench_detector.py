"""Learned detection of a 1080p frame, and the same model through each runtime, side by side.

Run: ``python benchmarks/bench_detector.py`` (needs the train extra for the torch, onnxruntime and
OpenVINO rows; without it only cv2.dnn and the classical detector are timed). Seeded.
The 44"x60" table is the big case: its top-down view at 12.8 px/in is 563x768 px.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from timing import median_ms

import vision.refiner
from calibration.lens import LensModel
from calibration.table_frame import TableFrame, calibrate
from vision.detect_classical import ClassicalDetector, Reference
from vision.detect_learned import DEFAULT_MODEL, DETECT_PX_PER_IN, LearnedDetector
from vision.onnx_session import onnxruntime_session
from vision.synth.table import render_table


def padded_blob(top: np.ndarray) -> np.ndarray:
    h, w = top.shape[:2]
    padded = np.zeros((-(-h // 32) * 32, -(-w // 32) * 32, 3), np.uint8)
    padded[:h, :w] = top
    return cv2.dnn.blobFromImage(padded, 1 / 255.0, swapRB=True)


def main() -> None:
    cv2.setNumThreads(os.cpu_count() or 2)
    # The product's figures first, for both tables: once torch or OpenVINO is loaded, their worker threads
    # linger and compete with cv2.dnn's (the 44"x60" cv2.dnn frame measured 246 ms after the 2'x2' table's
    # runtime comparison, 175 ms without it).
    networks = [bench(game) for game in ("focal-point", "grinding-annihilation")]
    for game, blob, net in networks:
        compare_runtimes(game, blob, net)


def bench(game: str) -> tuple[str, np.ndarray, float]:
    """The whole frame through the learned detector (each runtime) and the classical one; returns the
    network's input blob and its one-pass cv2.dnn time, for the runtime comparison."""
    table = render_table(5001 if game == "focal-point" else 5000, game, hard="none")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    learned = LearnedDetector(DEFAULT_MODEL)  # the default: onnxruntime where installed
    learned_cv = LearnedDetector(DEFAULT_MODEL, runtime="cv2.dnn")
    reference = learned.prepare(table.empty, frame)
    classical = ClassicalDetector()
    top = frame.rectify(table.image, DETECT_PX_PER_IN)
    blob = padded_blob(top)
    whole = median_ms(lambda: learned.detect(table.image, reference, frame), 7)
    whole_cv = median_ms(lambda: learned_cv.detect(table.image, reference, frame), 7)
    _, stages, _ = learned.detect(table.image, reference, frame)
    net = median_ms(lambda: learned_cv._raw(top), 7)  # one pass, as each runtime below
    both = median_ms(lambda: learned_cv.boxes(top), 7)
    base = median_ms(lambda: classical.detect(table.image, reference, frame), 7)
    print(f"{game}: 1920x1080 frame, top-down view {top.shape[1]}x{top.shape[0]} px")
    runtime = "onnxruntime" if learned._session is not None else "cv2.dnn"
    print(f"  learned, whole frame ({runtime}, the default): {whole:.0f} ms (target <= 200 ms)")
    print(f"  learned, whole frame (cv2.dnn): {whole_cv:.0f} ms")
    print("    stages: " + ", ".join(f"{k[:-3]} {v:.0f} ms" for k, v in stages.items()))
    print(f"  classical, whole frame (baseline): {base:.0f} ms -> learned x{base / whole:.2f}")
    print(f"  network only, cv2.dnn: {net:.0f} ms one pass; {both:.0f} ms with the mirrored pass and the merge")
    compare_size_reading(learned, table.image, reference, frame)
    compare_int8_refiners(learned_cv, table.image, reference, frame)
    if game == "grinding-annihilation":
        crowded_table(learned, whole, len(learned.detect(table.image, reference, frame)[0]))
    return game, blob, net


def crowded_table(learned: LearnedDetector, plain_ms: float, plain_bases: int) -> None:
    """The 44"x60" frame of a crowded table: both refiners read every base, so the time grows with the army."""
    table = render_table(5000, "grinding-annihilation", hard="crowded")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    reference = learned.prepare(table.empty, frame)
    found = len(learned.detect(table.image, reference, frame)[0])
    crowded = median_ms(lambda: learned.detect(table.image, reference, frame), 7)
    per_base = (crowded - plain_ms) / max(found - plain_bases, 1)
    print(
        f"  crowded table, {found} bases and markers found (the frame above: {plain_bases}): {crowded:.0f} ms, "
        f"{per_base:.1f} ms a piece more"
    )
    compare_int8_refiners(learned, table.image, reference, frame)


def compare_int8_refiners(learned: LearnedDetector, photo: np.ndarray, reference: Reference, frame: TableFrame) -> None:
    """The whole frame with the refiner and size reader in int8 (now, session 76) against the float networks,
    interleaved run by run, through ``learned``'s runtime for the detector."""
    exact = LearnedDetector(DEFAULT_MODEL, runtime=learned.runtime, quantized_refiners=False)
    times: dict[str, list[tuple[float, float]]] = {"int8": [], "float": []}
    for _ in range(9):
        for name, detector in (("int8", learned), ("float", exact)):
            start = time.perf_counter()
            refine_ms = detector.detect(photo, reference, frame)[1]["refine_ms"]
            times[name].append(((time.perf_counter() - start) * 1e3, refine_ms))
    (whole, refine), (whole_f, refine_f) = (np.median(times[k], axis=0) for k in ("int8", "float"))
    print(
        f"    refiners in int8 (now) / float, {learned.runtime}: whole frame {whole:.0f} / {whole_f:.0f} ms "
        f"(x{whole / whole_f:.2f}), refine {refine:.0f} / {refine_f:.0f} ms (x{refine / refine_f:.2f})"
    )


def compare_size_reading(learned: LearnedDetector, photo: np.ndarray, reference: Reference, frame: TableFrame) -> None:
    """The refining stage with the size reader in four views where they are sure (now), against eight views for
    every crop (before session 73: every crop in doubt), interleaved run by run."""
    sure_p = vision.refiner.SURE_SIZE_P
    times: dict[float, list[float]] = {sure_p: [], 1.01: []}
    for _ in range(9):
        for p in times:
            vision.refiner.SURE_SIZE_P = p
            times[p].append(learned.detect(photo, reference, frame)[1]["refine_ms"])
    vision.refiner.SURE_SIZE_P = sure_p
    now, before = (float(np.median(times[p])) for p in (sure_p, 1.01))
    print(
        f"  refine: {now:.0f} ms, the size reader in eight views for every base {before:.0f} ms (x{now / before:.2f})"
    )


def compare_runtimes(game: str, blob: np.ndarray, net: float) -> None:
    """The same network through onnxruntime, OpenVINO and torch, against its cv2.dnn time."""
    print(f"{game}: the network alone, each runtime (cv2.dnn: {net:.0f} ms)")
    session = onnxruntime_session(DEFAULT_MODEL, False, RuntimeError)  # as the product makes it; None: not installed
    if session is not None:
        name = session.get_inputs()[0].name
        t = median_ms(lambda: session.run(None, {name: blob}), 7)
        print(f"  network only, onnxruntime: {t:.0f} ms (x{net / t:.2f} of cv2.dnn's speed)")
    else:
        print("  onnxruntime: not installed (pip install -e '.[train]')")
    try:
        import openvino as ov

        compiled = ov.Core().compile_model(str(DEFAULT_MODEL), "CPU", {"PERFORMANCE_HINT": "LATENCY"})
        t = median_ms(lambda: compiled(blob), 7)
        print(f"  network only, OpenVINO: {t:.0f} ms (x{net / t:.2f} of cv2.dnn's speed)")
        # OpenVINO's CPU plugin runs in bfloat16 where the CPU has it (this one: AVX512_BF16): that is its speed
        exact = ov.Core().compile_model(str(DEFAULT_MODEL), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        t32 = median_ms(lambda: exact(blob), 7)
        print(f"  network only, OpenVINO in float32: {t32:.0f} ms (x{net / t32:.2f} of cv2.dnn's speed)")
        whole_frame_openvino(game)
    except ImportError:
        print("  OpenVINO: not installed")
    try:
        import torch

        from vision.training.train import offline_environment

        offline_environment(Path(tempfile.mkdtemp()))
        from ultralytics import YOLO

        model = YOLO(str(DEFAULT_MODEL.with_suffix(".pt"))).model.eval()
        tensor = torch.from_numpy(blob)
        with torch.inference_mode():
            t = median_ms(lambda: model(tensor), 7)
        print(f"  network only, torch (same weights): {t:.0f} ms -> cv2.dnn x{t / net:.2f} faster")
    except ImportError:
        print("  torch: not installed")


def whole_frame_openvino(game: str) -> None:
    """The whole frame with OpenVINO running the detector (TABLESIGHT_RUNTIME=openvino), as ``bench`` times it."""
    table = render_table(5001 if game == "focal-point" else 5000, game, hard="none")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    learned = LearnedDetector(DEFAULT_MODEL, runtime="openvino")
    reference = learned.prepare(table.empty, frame)
    whole = median_ms(lambda: learned.detect(table.image, reference, frame), 7)
    print(f"  learned, whole frame (OpenVINO, TABLESIGHT_RUNTIME=openvino): {whole:.0f} ms (target <= 200 ms)")


if __name__ == "__main__":
    main()
