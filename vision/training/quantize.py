"""The base refiner and its size reader in 8-bit integers, for onnxruntime: the refining stage about twice as fast.

The refiners read every base in 12-16 views (vision/refiner.py); on this 2-core machine that was 60-80 % of a
frame's refining time, and it grows with the army (a crowded 44"x60" table: 214 of 415 ms). Their convolutions
in int8 (this CPU has AVX512-VNNI) take half the time. Kept in float: the first convolution (three input
channels: slow in int8, and it sees the raw pixels) and both dense layers (the last one's outputs are the centre
offset: in 8 bits over its range a step is about 0.2 mm, as much as the median centre error). Measured on the
tuning tables (docs/vision.md, session 76): crops' centres 0.017 mm apart from the float network's (median).

The activations' ranges are calibrated on crops the shipped pipeline cuts from rendered tables of seeds no
evaluation reads (``CALIBRATION_SEED``), every view the refiners read. Quantizing needs ``onnx`` (the train extra);
running the result needs onnxruntime alone, and where only cv2.dnn runs the refiners the float networks are used.

    python -m vision.training.quantize [--out vision/models] [--tables 12] [--seed 31000]
"""

from __future__ import annotations

import argparse
import datetime
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.refiner import CROP_PX, DEFAULT_REFINER, DEFAULT_SIZE_READER, quantized_twin

CALIBRATION_SEED = 31000  # rendered tables 31000-31011: neither training's, tuning's (6200-) nor held-out's (5000-)
CALIBRATION_TABLES = 12
# float: the stem (3 channels in) and the dense head (its last outputs are the centre offset)
KEPT_FLOAT = ("/0/Conv", "/25/Gemm", "/27/Gemm")
QUANTIZED = (DEFAULT_REFINER, DEFAULT_SIZE_READER)


def calibration_crops(tables: int = CALIBRATION_TABLES, seed: int = CALIBRATION_SEED) -> npt.NDArray[np.float32]:
    """(N, 3, CROP_PX, CROP_PX): the crops the float refiners read on ``tables`` rendered tables from ``seed``
    (every call's first view: the other three are its mirror images)."""
    import vision.onnx_session as onnx_session
    from calibration.lens import LensModel
    from calibration.table_frame import calibrate
    from vision.detect_learned import LearnedDetector
    from vision.synth.table import render_table

    seen: list[npt.NDArray[np.float32]] = []
    plain_raw = onnx_session.OnnxNetwork.raw

    def recording_raw(network: onnx_session.OnnxNetwork, blob: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        if blob.shape[-2:] == (CROP_PX, CROP_PX):
            seen.append(blob[: max(1, len(blob) // 4)].copy())
        return plain_raw(network, blob)

    detector = LearnedDetector(quantized_refiners=False)
    onnx_session.OnnxNetwork.raw = recording_raw  # type: ignore[method-assign]
    try:
        for k in range(tables):
            table = render_table(seed + k, ("focal-point", "grinding-annihilation")[k % 2])
            frame = calibrate(
                table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size)
            )
            detector.detect(table.image, detector.prepare(table.empty, frame), frame)
    finally:
        onnx_session.OnnxNetwork.raw = plain_raw  # type: ignore[method-assign]
    if not seen:
        raise RuntimeError(f"no refiner crops on the {tables} tables from seed {seed}: nothing to calibrate on")
    return np.concatenate(seen).astype(np.float32)


def quantize(source: Path, target: Path, crops: npt.NDArray[np.float32]) -> None:
    """``source`` (a refiner's float ONNX) in int8 at ``target``, its activations' ranges from ``crops``."""
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    name = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).get_inputs()[0].name

    class Crops(CalibrationDataReader):  # type: ignore[misc]  # onnxruntime ships no types
        def __init__(self) -> None:
            self._batches = iter([{name: crops[k : k + 32]} for k in range(0, len(crops), 32)])

        def get_next(self) -> dict[str, Any] | None:
            return next(self._batches, None)

    with tempfile.TemporaryDirectory() as scratch:
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(source), str(prepared))
        quantize_static(
            str(prepared),
            str(target),
            Crops(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=list(KEPT_FLOAT),
        )


def quantize_refiners(
    out: Path, tables: int = CALIBRATION_TABLES, seed: int = CALIBRATION_SEED, sources: tuple[Path, ...] = QUANTIZED
) -> dict[str, Any]:
    """Each of ``sources`` quantized into ``out`` (its ``quantized_twin`` name), calibrated on one set of crops;
    each float model's card gains an ``int8`` entry saying how. Returns that entry."""
    crops = calibration_crops(tables, seed)
    entry = {
        "made_by": f"python -m vision.training.quantize --tables {tables} --seed {seed}",
        "date": datetime.date.today().isoformat(),
        "calibration": {"seed": seed, "tables": tables, "crops": len(crops)},
        "kept_float": list(KEPT_FLOAT),
        "format": "onnxruntime QDQ, weights int8 per channel, activations uint8 (MinMax)",
    }
    out.mkdir(parents=True, exist_ok=True)
    for source in sources:
        target = out / quantized_twin(source).name
        quantize(source, target, crops)
        card = out / source.with_suffix(".card.json").name
        if card.is_file():
            text = card.read_text(encoding="utf-8")
            data = json.loads(text)
            data["int8"] = {**data.get("int8", {}), **entry, "model": target.name}
            # written as it was laid out (the cards differ), so that the change is the new entry alone
            second_line = text.split("\n")[1] if "\n" in text else ""
            indent = len(second_line) - len(second_line.lstrip(" "))
            card.write_text(json.dumps(data, indent=indent or 2) + "\n", encoding="utf-8")
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_REFINER.parent)
    parser.add_argument("--tables", type=int, default=CALIBRATION_TABLES)
    parser.add_argument("--seed", type=int, default=CALIBRATION_SEED)
    args = parser.parse_args()
    print(json.dumps(quantize_refiners(args.out, args.tables, args.seed), indent=2))


if __name__ == "__main__":
    main()
