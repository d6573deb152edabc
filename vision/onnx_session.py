"""An onnxruntime session for a shipped ONNX model, shared by the networks run at run time."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def onnxruntime_session(path: Path, required: bool, error: type[Exception]) -> Any:
    """An onnxruntime session on the CPU for ``path``; None where onnxruntime is not installed (unless
    ``required``). Problems are raised as ``error``, naming the file. Measured on this 2-core machine: 25 ms
    a pass of the 44"x60" view against 91 ms with cv2.dnn (benchmarks/bench_detector.py)."""
    try:
        import onnxruntime as ort
    except ImportError as missing:
        if required:
            raise error("onnxruntime is not installed (pip install onnxruntime)") from missing
        return None
    try:
        return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as unreadable:  # onnxruntime raises its own error types for unreadable models
        raise error(f"{path}: not a model onnxruntime can read ({str(unreadable).strip()[:200]})") from unreadable
