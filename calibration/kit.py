"""The printable calibration kit: corner markers, placement guide, ruler, ChArUco board, objective tokens."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import dictionary
from calibration.layout import CORNER_IDS, TOKEN_IDS, Layout
from calibration.lens import CHARUCO_SQUARE_MM, CHARUCO_SQUARES, charuco_board
from calibration.pdf import write_pdf

DPI = 300
PAPER_IN = {"a4": (8.27, 11.69), "letter": (8.5, 11.0)}
MM = DPI / 25.4
TOKEN_MM = 40.0
CORNER_NAMES = {
    0: "top-left",
    1: "top-right",
    2: "bottom-right",
    3: "bottom-left",
    4: "side (first)",
    5: "side (second)",
}

Image = npt.NDArray[np.uint8]


def _page(paper: str) -> Image:
    w_in, h_in = PAPER_IN[paper]
    return np.full((int(round(h_in * DPI)), int(round(w_in * DPI))), 255, np.uint8)


def _text(page: Image, text: str, x: int, y: int, scale: float = 1.4, thickness: int = 3) -> None:
    cv2.putText(page, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, 0, thickness, cv2.LINE_AA)


def _dashed_rect(page: Image, x0: int, y0: int, x1: int, y1: int) -> None:
    for a, b in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))):
        length = int(np.hypot(b[0] - a[0], b[1] - a[1]))
        for s in range(0, length, 40):
            t0, t1 = s / length, min(s + 20, length) / length
            p = (int(a[0] + (b[0] - a[0]) * t0), int(a[1] + (b[1] - a[1]) * t0))
            q = (int(a[0] + (b[0] - a[0]) * t1), int(a[1] + (b[1] - a[1]) * t1))
            cv2.line(page, p, q, 150, 2)


def corner_pages(layout: Layout, paper: str) -> list[Image]:
    """The layout's markers, as many pages as they take (four 3" markers fill an A4 page)."""
    pages: list[Image] = []
    size = {m.id: m.size_in for m in layout.markers}
    x = y = 0
    for marker_id in sorted(size):
        s = int(round(size[marker_id] * DPI))
        if pages and x + s + 150 > pages[-1].shape[1]:
            x, y = 150, y + s + 330
        if not pages or y + s + 200 > pages[-1].shape[0]:
            pages.append(_page(paper))
            _text(pages[-1], "tablesight markers - print at 100 % (check the ruler on the guide page)", 90, 130, 1.1)
            x, y = 150, 260
        page = pages[-1]
        page[y : y + s, x : x + s] = cv2.aruco.generateImageMarker(dictionary(), marker_id, s)
        _dashed_rect(page, x - 60, y - 60, x + s + 60, y + s + 60)
        name = CORNER_NAMES.get(marker_id, f"edge {marker_id}")
        _text(page, f"marker {marker_id}: {name}", x - 60, y + s + 120, 1.0, 2)
        _text(page, "lay it with this label toward the bottom of the view", x - 60, y + s + 170, 0.8, 2)
        x += s + 330
    return pages


def guide_page(layout: Layout, paper: str) -> Image:
    page = _page(paper)
    h, w = page.shape
    lines = [
        "Placing the markers",
        f"Table: {layout.width_in:g} x {layout.depth_in:g} in. Cut each marker out along the dashed line.",
        "Lay marker 0 at the table corner at the top-left of the camera's view,",
        f"1, 2, 3 clockwise. Each marker's printed square sits {0.5:g} in from both",
        "table edges, its label toward the bottom of the view.",
        "Markers may sit anywhere along the edges if a layout file says where."
        + (" Markers 4 and 5: the middle of each long edge." if len(layout.markers) > 4 else ""),
        "Keep them flat and uncovered; a hidden marker is tolerated, two are not.",
    ]
    for k, line in enumerate(lines):
        _text(page, line, 120, 160 + 70 * k, 1.2 if k == 0 else 0.95, 3 if k == 0 else 2)
    # The table seen from the camera, with the markers in their corners.
    box_w = w - 500
    scale = box_w / layout.width_in
    box_h = int(layout.depth_in * scale)
    if box_h > h * 0.42:
        scale *= h * 0.42 / box_h
        box_w, box_h = int(layout.width_in * scale), int(layout.depth_in * scale)
    x0, y0 = (w - box_w) // 2, 720
    cv2.rectangle(page, (x0, y0), (x0 + box_w, y0 + box_h), 0, 4)
    for m in layout.markers:
        c = m.corners_in() * scale + [x0, y0]
        cv2.fillPoly(page, [c.astype(np.int32)], 60)
        _text(page, str(m.id), int(c[:, 0].mean()) - 14, int(c[:, 1].mean()) + 14, 1.2, 3)
    _text(page, "camera view: top of the image", x0, y0 - 30, 0.9, 2)
    ruler(page, 150, y0 + box_h + 260)
    return page


def ruler(page: Image, x0: int, y0: int, length_mm: int = 150) -> None:
    """A millimetre ruler; its 100 mm must measure 100 mm on paper."""
    cv2.line(page, (x0, y0), (int(x0 + length_mm * MM), y0), 0, 3)
    for mm in range(length_mm + 1):
        x = int(round(x0 + mm * MM))
        tick = 60 if mm % 10 == 0 else (40 if mm % 5 == 0 else 22)
        cv2.line(page, (x, y0), (x, y0 - tick), 0, 2)
        if mm % 10 == 0:
            _text(page, str(mm), x - 14, y0 + 45, 0.7, 2)
    _text(page, "mm - check: 0 to 100 must measure 100 mm, else the print was scaled", x0, y0 + 110, 0.8, 2)


def charuco_page(paper: str) -> Image:
    page = _page(paper)
    cols, rows = CHARUCO_SQUARES
    w, h = int(round(cols * CHARUCO_SQUARE_MM * MM)), int(round(rows * CHARUCO_SQUARE_MM * MM))
    board = charuco_board().generateImage((w, h), marginSize=0)
    y0 = (page.shape[0] - h) // 2
    x0 = (page.shape[1] - w) // 2
    page[y0 : y0 + h, x0 : x0 + w] = board
    _text(page, f"Lens calibration board: {cols} x {rows} squares of {CHARUCO_SQUARE_MM:g} mm.", 120, 150, 0.95, 2)
    _text(page, "Glue it flat; photograph it from 10+ angles, covering the image corners;", 120, 215, 0.95, 2)
    _text(page, "then: tablesight calibrate-lens photo1.jpg photo2.jpg ...", 120, 280, 0.95, 2)
    return page


def token_page(paper: str) -> Image:
    page = _page(paper)
    _text(page, "Objective tokens (40 mm): cut along the circles.", 120, 150, 0.95, 2)
    d = int(round(TOKEN_MM * MM))
    inner = int(round(TOKEN_MM * 0.62 * MM))
    x, y = 200, 300
    for token_id in TOKEN_IDS:
        if x + d > page.shape[1] - 100:
            x, y = 200, y + d + 160
        if y + d > page.shape[0] - 100:
            break
        centre = (x + d // 2, y + d // 2)
        cv2.circle(page, centre, d // 2, 0, 3, cv2.LINE_AA)
        m = cv2.aruco.generateImageMarker(dictionary(), token_id, inner)
        page[
            centre[1] - inner // 2 : centre[1] - inner // 2 + inner,
            centre[0] - inner // 2 : centre[0] - inner // 2 + inner,
        ] = m
        _text(page, f"token {token_id}", x + 10, y + d + 60, 0.8, 2)
        x += d + 160
    return page


def print_kit(layout: Layout, out: str | Path, paper: str = "a4") -> list[Image]:
    """Write the kit as a PDF (pages at 300 dpi, to print at 100 %). Returns the pages."""
    if paper not in PAPER_IN:
        raise ValueError(f"paper must be one of {', '.join(PAPER_IN)}, not {paper!r}")
    pages = [*corner_pages(layout, paper), guide_page(layout, paper), charuco_page(paper), token_page(paper)]
    write_pdf(out, pages, DPI)
    return pages


__all__ = ["CORNER_IDS", "print_kit"]
