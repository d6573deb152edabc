"""A Source design's face, registered once, and how well a card's pose puts that face where the photo shows it.

Every Source card of one design is printed alike, border and pattern, in the
card's own coordinates. So a card found a stripe's width off its true place
shows its face shifted: its border falls on the pattern, the mat shows where
its far side should be. The face is kept as the design's card straightened
out (grey, 2 px per mm) and compared with what shows of a candidate by
normalised correlation, over what no card above it hides, allowing the
pose a millimetre or two of slack (print and fit) and either way round.
"""

from __future__ import annotations

import base64

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame

FACE_PX = (126, 176)  # the card straightened out, 2 px per mm (63 x 88 mm)
SLACK_PX = 3  # a pose may be this far off the face (1.5 mm): the fit's and the print's error
REACH_PX = 8  # how far round a kept card its face is looked for (4 mm: less than the finest pattern's period)
MIN_SHOWN_PX = 600  # fewer pixels of a face than this show: no verdict
Grey = npt.NDArray[np.float32]


def cut_out(
    image: npt.NDArray[np.uint8],
    frame: TableFrame,
    corners_in: npt.NDArray[np.float64],
    above_in: list[npt.NDArray[np.float64]],
    margin_px: int = 0,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The card at ``corners_in`` (and ``margin_px`` round it) cut out of the photo and straightened out
    (FACE_PX), and the mask (0/1) of what of that no card above hides. Corners: top-left, top-right,
    bottom-right, bottom-left of the card."""
    w, h = FACE_PX
    m = margin_px
    # Sample the card through the calibration (lens included) on a grid, not by one homography of 4 corners.
    u, v = np.meshgrid((np.arange(-m, w + m) + 0.5) / w, (np.arange(-m, h + m) + 0.5) / h)
    c = np.asarray(corners_in, np.float64)
    table = c[0] + u.reshape(-1, 1) * (c[1] - c[0]) + v.reshape(-1, 1) * (c[3] - c[0])
    px = frame.table_to_image(table).reshape(h + 2 * m, w + 2 * m, 2).astype(np.float32)
    card = cv2.remap(image, px[..., 0], px[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    mask = np.full((h + 2 * m, w + 2 * m), 1, np.uint8)
    to_card = cv2.getAffineTransform(
        c[:3].astype(np.float32), np.array([[m, m], [w + m, m], [w + m, h + m]], np.float32)
    )
    for poly in above_in:
        pts = cv2.transform(np.asarray(poly, np.float32).reshape(-1, 1, 2), to_card).reshape(-1, 2)
        cv2.fillPoly(mask, [np.round(pts).astype(np.int32)], 0)
    return card, mask


def straighten_grey(
    image: npt.NDArray[np.uint8],
    frame: TableFrame,
    corners_in: npt.NDArray[np.float64],
    above_in: list[npt.NDArray[np.float64]],
    margin_px: int = SLACK_PX,
) -> tuple[Grey, Grey]:
    """``cut_out`` in grey, its mask (0/1) kept a little away from the edge of the card above."""
    card, mask = cut_out(image, frame, corners_in, above_in, margin_px)
    grey: Grey = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return grey, cv2.erode(mask, np.ones((5, 5), np.uint8)).astype(np.float32)


def match(grey: Grey, mask: Grey, face: Grey) -> tuple[float, int, int]:
    """Best normalised correlation of ``face`` with the straightened card (``straighten_grey``, any margin)
    over the shifts the margin allows, either way round, and that shift (face px along the card's short and
    long side: where the face lies from the pose); NaN when too little shows."""
    n = cv2.matchTemplate(mask, np.ones_like(face), cv2.TM_CCORR)
    if float(n.max()) < MIN_SHOWN_PX:
        return float("nan"), 0, 0
    gm = grey * mask
    s_i = cv2.matchTemplate(gm, np.ones_like(face), cv2.TM_CCORR)
    s_ii = cv2.matchTemplate(gm * grey, np.ones_like(face), cv2.TM_CCORR)
    safe_n = np.maximum(n, 1.0)
    m = (grey.shape[1] - face.shape[1]) // 2
    best = (-1.0, 0, 0)
    for f in (face, face[::-1, ::-1].copy()):
        s_t = cv2.matchTemplate(mask, f, cv2.TM_CCORR)
        s_tt = cv2.matchTemplate(mask, f * f, cv2.TM_CCORR)
        s_it = cv2.matchTemplate(gm, f, cv2.TM_CCORR)
        cov = s_it - s_i * s_t / safe_n
        var = np.maximum(s_ii - s_i * s_i / safe_n, 0) * np.maximum(s_tt - s_t * s_t / safe_n, 0)
        ncc = np.where(n >= MIN_SHOWN_PX, cov / np.sqrt(var + 1e-6), -1.0)
        iy, ix = np.unravel_index(int(np.argmax(ncc)), ncc.shape)
        if float(ncc[iy, ix]) > best[0]:
            best = (float(ncc[iy, ix]), int(ix) - m, int(iy) - m)
    return best


def register_face(cards: list[tuple[Grey, Grey]]) -> Grey:
    """One face from several straightened cards of a design (each with a margin, as ``straighten_grey``):
    each is put onto the first (shift within the margin, either way round), then the median is taken."""
    if not cards:
        raise ValueError("no card to register a face from")
    w, h = FACE_PX
    first, first_mask = cards[0]
    m = (first.shape[1] - w) // 2
    ref = first[m : m + h, m : m + w]
    faces = [ref]
    for grey, mask in cards[1:]:
        best = (-2.0, ref)
        for g, k in ((grey, mask), (grey[::-1, ::-1], mask[::-1, ::-1])):
            mm = (g.shape[1] - w) // 2
            for dy in range(-mm, mm + 1):
                for dx in range(-mm, mm + 1):
                    cut = g[mm + dy : mm + dy + h, mm + dx : mm + dx + w]
                    shown = k[mm + dy : mm + dy + h, mm + dx : mm + dx + w] > 0
                    if shown.sum() < MIN_SHOWN_PX:
                        continue
                    a, b = cut[shown] - cut[shown].mean(), ref[shown] - ref[shown].mean()
                    r = float((a * b).sum() / np.sqrt((a * a).sum() * (b * b).sum() + 1e-6))
                    if r > best[0]:
                        best = (r, cut)
        faces.append(best[1])
    out: Grey = np.median(np.stack(faces), axis=0).astype(np.float32)
    return out


def face_to_text(face: Grey) -> str:
    """A face as text for the designs file (a PNG, base64)."""
    ok, png = cv2.imencode(".png", np.clip(np.round(face), 0, 255).astype(np.uint8))
    if not ok:
        raise ValueError("could not encode a face")
    return base64.b64encode(png.tobytes()).decode("ascii")


def face_from_text(text: str) -> Grey:
    """The face back from ``face_to_text``; ValueError when it is not one."""
    try:
        raw = np.frombuffer(base64.b64decode(text, validate=True), np.uint8)
    except (ValueError, TypeError) as error:
        raise ValueError(f"not base64 ({error})") from None
    img = cv2.imdecode(raw, cv2.IMREAD_GRAYSCALE) if raw.size else None
    if img is None or img.shape != (FACE_PX[1], FACE_PX[0]):
        raise ValueError(f"not a {FACE_PX[0]} x {FACE_PX[1]} grey PNG")
    return img.astype(np.float32)
