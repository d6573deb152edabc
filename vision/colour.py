"""Players' colours as written in scenes (``#d33``, ``#3366cc``) to OpenCV's BGR order, and BGR <-> Lab."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt


def hex_to_bgr(colour: str) -> tuple[int, int, int]:
    """``#d33`` or ``#dd3333`` (the ``#`` optional) -> (51, 51, 221); ValueError for anything else."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) != 6 or any(ch not in "0123456789abcdefABCDEF" for ch in digits):
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


# Players' colours closer than this (CIE76 Lab distance) are too alike for the camera to tell the teams apart
# reliably. Measured on the near-mat tuning tables (seeds 13000-13039, learned detector): on the 5 tables whose
# two colours lay 6.7-17.4 apart, 26 of 75 bases went to the wrong player; on the 35 at 18.8 or more, 16 of 429.
PLAYERS_ALIKE_DELTA_E = 18.0


def alike_players(players: dict[str, str], max_delta_e: float = PLAYERS_ALIKE_DELTA_E) -> list[tuple[str, str, float]]:
    """Pairs of players whose colours lie closer than ``max_delta_e`` in Lab, with that distance, closest first.

    >>> alike_players({"red": "#a52e88", "blue": "#942f80", "green": "#28aa28"})
    [('red', 'blue', 6.7)]
    """
    names = list(players)
    if len(names) < 2:
        return []
    lab = bgr_to_lab(np.array([hex_to_bgr(players[p]) for p in names], np.float64))
    pairs = [
        (names[i], names[j], round(float(np.linalg.norm(lab[i] - lab[j])), 1))
        for i in range(len(names))
        for j in range(i + 1, len(names))
    ]
    return sorted((p for p in pairs if p[2] < max_delta_e), key=lambda p: p[2])


def describe_alike(pair: dict[str, Any]) -> str:
    """The players' warning for one entry of a scene's ``measurement.players_alike``."""
    first, second = pair["players"]
    return (
        f"players {first} and {second} have colours only {pair['delta_e']} apart (Lab): the camera may give their "
        "bases to the wrong player - confirm the teams, or tell the colours apart more"
    )


# A webcam's exposure and white balance drift from the set-up's as models and hands come into view and the room's
# light changes. Every GAIN_GRID_PX-th pixel of the top-down view is plenty for a median, and quick (~1 ms).
GAIN_GRID_PX = 3
GAIN_LIMITS = (0.6, 1.6)  # held within these: a gain beyond them is hardly the same table in another light
GAIN_MIN_PIXELS = 500
GAIN_DARK_BGR = 20  # pixels this dark on the empty table say little about a ratio (sensor noise)


def colour_gain(photo_top: npt.NDArray[np.uint8], empty_top: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """(3,) how much brighter each channel (BGR) of the photo's top-down view is than the empty table's, both of
    the whole table (any scales). The median ratio over the table: most of it still shows what the empty table
    did, so the pieces on it move the median little. Ones where too little of it can tell."""
    h, w = photo_top.shape[:2]
    size = (max(1, w // GAIN_GRID_PX), max(1, h // GAIN_GRID_PX))
    seen = cv2.resize(photo_top, size, interpolation=cv2.INTER_NEAREST).reshape(-1, 3).astype(np.float64)
    empty = cv2.resize(empty_top, size, interpolation=cv2.INTER_NEAREST).reshape(-1, 3).astype(np.float64)
    usable = (empty > GAIN_DARK_BGR).all(axis=1) & (seen > 5).all(axis=1) & (seen < 250).all(axis=1)
    if usable.sum() < GAIN_MIN_PIXELS:
        return np.ones(3)
    return np.clip(np.median(seen[usable] / empty[usable], axis=0), *GAIN_LIMITS)
