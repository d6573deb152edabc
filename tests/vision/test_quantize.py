"""The refiners' int8 twins made again, small (vision/training/quantize.py): calibrated on the crops of one rendered
table, they load, run in onnxruntime and read as the float network does. Needs the train extra (``onnx``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from vision.onnx_session import int8_network
from vision.refiner import CROP_PX, DEFAULT_REFINER, OFFSET_SCALE_IN, BaseRefiner, RefinerError, quantized_twin
from vision.training.quantize import CALIBRATION_SEED, KEPT_FLOAT, calibration_crops, quantize_refiners


def test_quantizing_the_refiner_on_one_table_gives_a_twin_that_reads_as_it_does(tmp_path: Path) -> None:
    shutil.copy(DEFAULT_REFINER.with_suffix(".card.json"), tmp_path)
    entry = quantize_refiners(tmp_path, tables=1, seed=CALIBRATION_SEED, sources=(DEFAULT_REFINER,))
    twin = tmp_path / quantized_twin(DEFAULT_REFINER).name
    assert twin.is_file() and twin.stat().st_size < DEFAULT_REFINER.stat().st_size
    card = json.loads((tmp_path / DEFAULT_REFINER.with_suffix(".card.json").name).read_text(encoding="utf-8"))
    assert card["int8"]["model"] == twin.name and card["int8"]["calibration"]["tables"] == 1
    assert card["int8"]["kept_float"] == list(KEPT_FLOAT) and entry["calibration"]["crops"] > 0
    network = int8_network(twin, RefinerError)
    assert network is not None
    # crops of another table than the one calibrated on
    crops = calibration_crops(tables=1, seed=CALIBRATION_SEED + 1)
    assert crops.shape[1:] == (3, CROP_PX, CROP_PX) and crops.dtype == np.float32
    exact = BaseRefiner(quantized=False)
    assert exact._network is not None
    quantized, plain = network.raw(crops), exact._network.raw(crops)
    apart_mm = np.hypot(*(quantized[:, -2:] - plain[:, -2:]).T) * OFFSET_SCALE_IN * 25.4
    # one view each (the product reads eight and takes the median): session 76 measured 0.02 / 0.06 mm
    assert float(np.median(apart_mm)) < 0.05 and float(np.percentile(apart_mm, 95)) < 0.2
    assert ((quantized[:, 0] > 0) == (plain[:, 0] > 0)).mean() > 0.97  # base or no base, as the float reads it
