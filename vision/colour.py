"""Players' colours as written in scenes (``#d33``, ``#3366cc``) to OpenCV's BGR order, and BGR <-> Lab."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt


def hex_to_bgr(colour: str) -> tuple[int, int, int]:
    """``#d33`` or ``#dd3333`` (the ``#`` optional) -> (51, 51, 221); ValueError for anything else."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) != 6:
        raise ValueError(f"{colour!r} is not a colour like #d33 or #dd3333")
    r, g, b = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return b, g, r


def bgr_to_lab(bgr: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """BGR 0..255 of any shape (..., 3) -> Lab (L 0..100) of the same shape."""
    colours = np.asarray(bgr, np.float32)
    lab = cv2.cvtColor(colours.reshape(1, -1, 3) / 255.0, cv2.COLOR_BGR2LAB)
    return lab.reshape(colours.shape).astype(np.float64)


def lab_to_bgr(lab: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Lab of any shape (..., 3) -> BGR 0..255 of the same shape."""
    colours = np.asarray(lab, np.float32)
    bgr = cv2.cvtColor(colours.reshape(1, -1, 3), cv2.COLOR_LAB2BGR).reshape(colours.shape)
    return np.clip(bgr.astype(np.float64) * 255.0, 0, 255)
