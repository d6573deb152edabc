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
JPEG_HEADER_BYTES = 65536  # the segments before a JPEG's first scan (tables, EXIF, ...) lie within this
PROGRESSIVE_FRAMES = (0xC2, 0xC6, 0xCA, 0xCE)  # SOF markers of progressive JPEGs
START_OF_SCAN = 0xDA
CUT_SHORT = "the JPEG is cut short (its end is missing; what is there reads grey or blurred): copy or save it again"


class ImageFileError(ValueError):
    """A photo file that cannot be used; the message names the file and what is wrong with it (``reason``)."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def read_image(path: str | Path) -> Image:
    """The photo in ``path`` (BGR). Raises ImageFileError where it is missing, empty, not an image OpenCV reads, or
    a JPEG cut short (``jpeg_cut_short``)."""
    # (no such file: told before OpenCV prints its own warning of it on stderr)
    image = cv2.imread(str(path), cv2.IMREAD_COLOR) if Path(path).is_file() else None
    if image is None:
        raise ImageFileError(path, _unreadable_reason(Path(path)))
    if jpeg_cut_short(Path(path), image):
        raise ImageFileError(path, CUT_SHORT)
    return np.asarray(image, dtype=np.uint8)


def _unreadable_reason(path: Path) -> str:
    """Why OpenCV read nothing from ``path``, as the players can mend it: no such file, an empty one, a JPEG cut
    short before OpenCV could decode any of it (within its first scan), or a file that is no image."""
    cannot = "not an image tablesight can read"
    if path.is_dir():
        return f"{cannot}: it is a folder"
    if not path.is_file():
        return f"{cannot}: no such file"
    try:
        head, size, tail = _ends(path, len(JPEG_START))
    except OSError as error:
        return f"{cannot}: {error.strerror or error}"
    if size == 0:
        return f"{cannot}: the file is empty"
    if head == JPEG_START and JPEG_END not in tail:
        return f"{cannot}: {CUT_SHORT}"
    return f"{cannot} (not PNG/JPEG/...)"


def _ends(path: Path, head_bytes: int) -> tuple[bytes, int, bytes]:
    """The first ``head_bytes`` of ``path``, its size, and its last ``TAIL_BYTES``."""
    with path.open("rb") as file:
        head = file.read(head_bytes)
        size = file.seek(0, 2)
        file.seek(max(0, size - TAIL_BYTES))
        return head, size, file.read()


def jpeg_cut_short(path: Path, image: Image) -> bool:
    """Whether ``path`` is a JPEG that ends before its last row (``image``: as OpenCV decoded it). A baseline JPEG
    needs both signs: some writers leave out the end marker of a whole photo, and a photo may end in a grey row. A
    progressive one needs its end marker alone: its first scans cover the whole photo coarsely and the later ones
    sharpen it, so one cut short reads whole but blurred, with no grey row (cut at 10-99 % of its bytes, 0.3-3.6
    grey levels off on average), and OpenCV's own ``imdecode`` refuses it, whole or cut, without its end marker."""
    try:
        head, _, tail = _ends(path, len(JPEG_START))
        if head != JPEG_START or JPEG_END in tail:
            return False  # every whole photo: its frame header is read only where its end is missing
        progressive = _progressive(_ends(path, JPEG_HEADER_BYTES)[0])
    except OSError:
        return False
    return progressive or bool(image.size and np.all(image[-1] == MISSING_GREY))


def _progressive(head: bytes) -> bool:
    """Whether the JPEG whose first bytes are ``head`` is progressive: its frame header (the segments before the
    first scan) is SOF2, SOF6, SOF10 or SOF14."""
    at = 2
    while at + 4 <= len(head) and head[at] == 0xFF:
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte before a marker
            at += 1
            continue
        if marker in PROGRESSIVE_FRAMES:
            return True
        if marker == START_OF_SCAN:
            return False
        at += 2 + int.from_bytes(head[at + 2 : at + 4], "big")
    return False
