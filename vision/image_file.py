"""Photos read from files, with a JPEG cut short told apart from a whole one.

OpenCV decodes a JPEG that stops part way (a copy or a download that did not finish, a recording whose last frame
was being written) without an error: it warns on stderr and fills the rows it lacks with grey. Read as a table,
that grey would be a cloth over half of it. Such a file is refused here, naming what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

JPEG_START = b"\xff\xd8"
JPEG_END = b"\xff\xd9"
TAIL_BYTES = 4096  # a whole JPEG's end marker lies within this of the file's end, past any data a camera appends
MISSING_GREY = 128  # what the decoder fills a JPEG's missing rows with, in each channel


class ImageFileError(ValueError):
    """A photo file that cannot be used; the message names the file and what is wrong with it (``reason``)."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def read_image(path: str | Path) -> Image:
    """The photo in ``path`` (BGR). Raises ImageFileError where it is missing, not an image OpenCV reads, or a JPEG
    cut short: one with no end marker whose last row the decoder filled with grey."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ImageFileError(path, "not an image tablesight can read (missing, or not PNG/JPEG/...)")
    if jpeg_cut_short(Path(path), image):
        raise ImageFileError(
            path,
            "the JPEG is cut short (its end is missing, and the rows after the cut are blank grey): copy or save it "
            "again",
        )
    return np.asarray(image, dtype=np.uint8)


def jpeg_cut_short(path: Path, image: Image) -> bool:
    """Whether ``path`` is a JPEG that ends before its last row (``image``: as OpenCV decoded it). Both signs are
    needed: some writers leave out the end marker of a whole photo, and a photo may end in a grey row."""
    try:
        with path.open("rb") as file:
            head = file.read(2)
            size = file.seek(0, 2)
            file.seek(max(0, size - TAIL_BYTES))
            tail = file.read()
    except OSError:
        return False
    if head != JPEG_START or JPEG_END in tail:
        return False
    return bool(image.size and np.all(image[-1] == MISSING_GREY))
