"""Players' colours as written in scenes (``#d33``, ``#3366cc``) to OpenCV's BGR order."""

from __future__ import annotations


def hex_to_bgr(colour: str) -> tuple[int, int, int]:
    """``#d33`` or ``#dd3333`` (the ``#`` optional) -> (51, 51, 221); ValueError for anything else."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) != 6:
        raise ValueError(f"{colour!r} is not a colour like #d33 or #dd3333")
    r, g, b = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return b, g, r
