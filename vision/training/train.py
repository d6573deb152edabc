"""Training the learned detector with ultralytics, offline, from scratch; export to ONNX for cv2.dnn.

Needs the ``train`` extra (torch, torchvision, ultralytics-opencv-headless,
onnx). Nothing is downloaded: the model is built from its yaml, the font
ultralytics wants is a copy of a local TTF, AMP's check (which fetches
weights) is off.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

FONT_CANDIDATES = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
]

# Augmentation for an overhead webcam's rectified view: the scale is known (little zoom), any
# flip is a valid table, colour and light vary a lot, no rotation by odd angles (it would
# inflate the boxes of round bases).
AUGMENT: dict[str, float] = {
    "hsv_h": 0.03,
    "hsv_s": 0.6,
    "hsv_v": 0.45,
    "degrees": 0.0,
    "translate": 0.1,
    "scale": 0.12,
    "fliplr": 0.5,
    "flipud": 0.5,
    "mosaic": 1.0,
    "mixup": 0.0,
}


def offline_environment(work_dir: Path) -> None:
    """Keep ultralytics off the network: its settings and font live under ``work_dir``."""
    config = work_dir / "ultralytics-config"
    (config / "Ultralytics").mkdir(parents=True, exist_ok=True)
    font = config / "Ultralytics" / "Arial.ttf"
    if not font.exists():
        source = next((Path(f) for f in FONT_CANDIDATES if Path(f).exists()), None)
        if source is None:
            import matplotlib  # ultralytics depends on it, and it ships DejaVu

            source = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        shutil.copyfile(source, font)
    os.environ.update(YOLO_OFFLINE="1", YOLO_AUTOINSTALL="0", YOLO_CONFIG_DIR=str(config))


def train(
    data_yaml: str | Path,
    out_dir: str | Path,
    epochs: int = 30,
    imgsz: int = 320,
    batch: int = 16,
    device: str = "cpu",
    resume: bool = False,
    model: str = "yolo11n.yaml",
    workers: int = 2,
    seed: int = 0,
    weights: str | Path | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Train (or resume) and return the best weights. ``weights``: start from these instead of scratch."""
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    offline_environment(out)
    from ultralytics import YOLO  # type: ignore[attr-defined]

    last = out / "run" / "weights" / "last.pt"
    config: dict[str, Any] = {
        "data": str(Path(data_yaml).resolve()),
        "epochs": epochs,
        "imgsz": imgsz,
        "batch": batch,
        "device": device,
        "workers": workers,
        "seed": seed,
        "deterministic": True,
        "amp": False,  # its check downloads weights
        "plots": False,
        "pretrained": weights is not None,
        "project": str(out),
        "name": "run",
        "exist_ok": True,
        "verbose": True,
        "patience": max(10, epochs // 3),
        **AUGMENT,
        **(extra or {}),
    }
    record = {"model": str(weights or model), "started": time.strftime("%Y-%m-%d %H:%M:%S"), **config}
    (out / "train-config.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    if resume and last.exists():
        YOLO(str(last)).train(resume=True)
    else:
        YOLO(str(weights) if weights else model).train(**config)
    best = out / "run" / "weights" / "best.pt"
    return best if best.exists() else last


def export_onnx(weights: str | Path, out_path: str | Path, work_dir: str | Path) -> Path:
    """ONNX for cv2.dnn: dynamic input size, no NMS inside (cv2.dnn dies on ultralytics' NMS export)."""
    offline_environment(Path(work_dir).resolve())
    from ultralytics import YOLO  # type: ignore[attr-defined]

    made = YOLO(str(weights)).export(format="onnx", dynamic=True, nms=False, simplify=True, opset=17, imgsz=320)
    target = Path(out_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made, target)
    return target
