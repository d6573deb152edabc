"""An onnxruntime session for a shipped ONNX model, shared by the networks run at run time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MIRRORS = ((False, False), (True, False), (False, True), (True, True))  # (left-right, up-down): views averaged


def onnxruntime_session(path: Path, required: bool, error: type[Exception]) -> Any:
    """An onnxruntime session on the CPU for ``path``; None where onnxruntime is not installed (unless
    ``required``). Problems are raised as ``error``, naming the file. Measured on this 2-core machine: 38 ms
    a pass of the 44"x60" view against 50 ms with cv2.dnn (benchmarks/bench_detector.py, session 24)."""
    try:
        import onnxruntime as ort
    except ImportError as missing:
        if required:
            raise error("onnxruntime is not installed (pip install onnxruntime)") from missing
        return None
    try:
        # Its worker threads sleep between runs instead of spinning: spinning took the 2 cores from the
        # numpy and OpenCV work between the runs (1080p 44"x60" frame 184 -> 136 ms, its refining 73 -> 44 ms).
        options = ort.SessionOptions()
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as unreadable:  # onnxruntime raises its own error types for unreadable models
        raise error(f"{path}: not a model onnxruntime can read ({str(unreadable).strip()[:200]})") from unreadable


def openvino_model(path: Path, error: type[Exception]) -> Any:
    """``path`` compiled by OpenVINO for the CPU, tuned for one frame at a time. OpenVINO is an optional extra
    (``pip install openvino``, ~180 MB): not installed, or the file unreadable, is raised as ``error``, naming the
    file. Measured on this 2-core machine: the 44"x60" view 21-24 ms a pass, against 38-71 ms through onnxruntime
    and 50-70 ms through cv2.dnn (benchmarks/bench_detector.py, sessions 24-73)."""
    try:
        import openvino
    except ImportError as missing:
        raise error("OpenVINO is not installed (pip install openvino)") from missing
    try:
        return openvino.Core().compile_model(str(path), "CPU", {"PERFORMANCE_HINT": "LATENCY"})
    except Exception as unreadable:  # OpenVINO raises its own error types for unreadable models
        raise error(f"{path}: not a model OpenVINO can read ({str(unreadable).strip()[:200]})") from unreadable


class OnnxNetwork:
    """A small shipped network (the refiners) run with onnxruntime where it is installed, else cv2.dnn."""

    def __init__(self, path: Path, error: type[Exception], session: Any = None) -> None:
        self._session = session if session is not None else onnxruntime_session(path, False, error)
        self._net = None
        if self._session is None:
            import cv2

            try:
                self._net = cv2.dnn.readNetFromONNX(str(path))
            except cv2.error as unreadable:
                raise error(f"{path}: not a model cv2.dnn can read ({str(unreadable).strip()[:200]})") from unreadable

    def raw(self, blob: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """The network's one output for ``blob`` (N, 3, H, W)."""
        if self._session is not None:
            out = self._session.run(None, {self._session.get_inputs()[0].name: blob})[0]
        else:
            assert self._net is not None
            self._net.setInput(blob)
            out = self._net.forward()
        return np.asarray(out, dtype=np.float64)

    def raw_mirrored(
        self,
        blob: npt.NDArray[np.float32],
        x_flip_negates: tuple[int, ...],
        y_flip_negates: tuple[int, ...],
        transpose_swaps: tuple[int, int] | None = None,
        median_of: tuple[int, ...] = (),
    ) -> npt.NDArray[np.float64]:
        """The output over ``blob`` and its mirror images (left-right, up-down, both), each output mirrored
        back: a left-right mirror negates the outputs at ``x_flip_negates``, an up-down one those at
        ``y_flip_negates``. ``transpose_swaps``: the two outputs (x, y) a transposed crop swaps; given, the
        transposed crop and its mirrors are read too (eight views). Each output is the mean over the views,
        those at ``median_of`` the median (one view's stray reading moves a median less).
        For a network trained on mirrored crops, whose errors on a crop and on its mirror
        image differ: measured on the tuning tables (seeds 6200-6319), the base refiner's median centre error
        0.34 -> 0.27 mm, p95 1.97 -> 1.90 mm (docs/detector.md, session 19). The oval refiner's median fell too
        (0.46 -> 0.38 mm) but its tail grew (p95 3.3 -> 5.1 mm), so it reads its crops once.
        One pass on four (or eight) times the crops."""
        return views_mean(self.all_views(blob, x_flip_negates, y_flip_negates, transpose_swaps), median_of)

    def all_views(
        self,
        blob: npt.NDArray[np.float32],
        x_flip_negates: tuple[int, ...],
        y_flip_negates: tuple[int, ...],
        transpose_swaps: tuple[int, int] | None = None,
    ) -> npt.NDArray[np.float64]:
        """(views, N, outputs): the output over ``blob``'s four mirror images and, with ``transpose_swaps``, its
        transposes' four too, each mirrored back (``raw_mirrored`` is their mean)."""
        out = self.mirror_views(blob, x_flip_negates, y_flip_negates)
        if transpose_swaps is not None:
            out = np.concatenate([out, self.mirror_views(blob, x_flip_negates, y_flip_negates, transpose_swaps)])
        return out

    def mirror_views(
        self,
        blob: npt.NDArray[np.float32],
        x_flip_negates: tuple[int, ...],
        y_flip_negates: tuple[int, ...],
        transpose_swaps: tuple[int, int] | None = None,
    ) -> npt.NDArray[np.float64]:
        """(4, N, outputs): the output over ``blob``'s four mirror images (``MIRRORS``), each mirrored back as
        ``raw_mirrored`` says; with ``transpose_swaps``, over the transposed crops' four instead, the two outputs
        swapped back too. One pass on four times the crops."""
        n = len(blob)
        crop = blob if transpose_swaps is None else blob.transpose(0, 1, 3, 2)
        views = [crop[:, :, :: -1 if flip_y else 1, :: -1 if flip_x else 1] for flip_x, flip_y in MIRRORS]
        out = self.raw(np.ascontiguousarray(np.concatenate(views))).reshape(len(MIRRORS), n, -1).copy()
        for k, (flip_x, flip_y) in enumerate(MIRRORS):
            for flipped, columns in ((flip_x, x_flip_negates), (flip_y, y_flip_negates)):
                if flipped:
                    out[k][:, list(columns)] *= -1
            if transpose_swaps is not None:  # the crop's x was the table's y
                out[k][:, list(transpose_swaps)] = out[k][:, list(transpose_swaps[::-1])]
        return out


def int8_network(path: Path, error: type[Exception]) -> OnnxNetwork | None:
    """The int8 network at ``path`` (vision/training/quantize.py), run by onnxruntime; None where the file is not
    there or onnxruntime is not installed (cv2.dnn is not asked to run it)."""
    if not Path(path).is_file():
        return None
    session = onnxruntime_session(path, False, error)
    return OnnxNetwork(path, error, session) if session is not None else None


def views_mean(out: npt.NDArray[np.float64], median_of: tuple[int, ...] = ()) -> npt.NDArray[np.float64]:
    """(N, outputs): the mean over ``out``'s views (its first axis), the median for the outputs at ``median_of``."""
    mean: npt.NDArray[np.float64] = out.mean(axis=0)
    if median_of:
        mean[:, list(median_of)] = np.median(out[:, :, list(median_of)], axis=0)
    return mean
