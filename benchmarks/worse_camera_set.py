"""Copy a rendered set (``tablesight render-tables``) as a worse camera would have taken it, photo and empty table
alike, to measure how perception holds up (docs/vision.md, session 55):

    python benchmarks/worse_camera_set.py SRC DST --mode jpeg --value 50 [--count 60]
    tablesight eval-vision DST --detector learned

Modes: ``jpeg Q`` (a phone streaming as a webcam saves at quality Q), ``blur SIGMA_PX`` (defocus), ``noise SIGMA``
(a dim room's sensor noise, then JPEG 92), ``stream Q`` (a 0.67x sensor scaled up to the photo's size, then JPEG Q).
Seeded: the same command writes the same files.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

MODES = ("jpeg", "blur", "noise", "stream")
STREAM_SCALE = 0.67


def worse(
    image: npt.NDArray[np.uint8], mode: str, value: float, rng: np.random.Generator
) -> tuple[npt.NDArray[np.uint8], int]:
    """The image as the worse camera sees it, and the JPEG quality it is saved at."""
    if mode == "jpeg":
        return image, int(value)
    if mode == "blur":
        return cv2.GaussianBlur(image, (0, 0), value), 92
    if mode == "noise":
        noisy = image.astype(np.float32) + rng.normal(0.0, value, image.shape)
        return np.clip(noisy, 0, 255).astype(np.uint8), 92
    h, w = image.shape[:2]
    small = cv2.resize(image, (round(w * STREAM_SCALE), round(h * STREAM_SCALE)), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), int(value)


def camera_spec(spec: str) -> tuple[str, float]:
    """``MODE:VALUE`` (the benchmarks' ``--camera``, e.g. jpeg:50) as (mode, value)."""
    mode, _, value = spec.partition(":")
    if mode not in MODES or not value:
        raise SystemExit(f"--camera {spec!r}: expected MODE:VALUE, MODE one of {', '.join(MODES)}")
    return mode, float(value)


def seen_through(
    image: npt.NDArray[np.uint8], mode: str, value: float, rng: np.random.Generator
) -> npt.NDArray[np.uint8]:
    """``image`` as the worse camera hands it over: made worse, then JPEG'd at its quality and decoded."""
    out, quality = worse(image, mode, value, rng)
    _, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded: npt.NDArray[np.uint8] = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return decoded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--value", type=float, required=True)
    parser.add_argument("--count", type=int, default=60, help="the set's first COUNT tables")
    args = parser.parse_args()
    photos = [p for p in sorted(args.src.glob("*[0-9].jpg")) if p.with_suffix(".truth.json").is_file()]
    if not photos or not (args.src / "lens.json").is_file():
        print(f"{args.src}: no rendered tables (photo, .empty.jpg, .truth.json and lens.json) there", file=sys.stderr)
        return 2
    args.dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(args.src / "lens.json", args.dst / "lens.json")
    rng = np.random.default_rng(55)
    for photo in photos[: args.count]:
        stem = photo.stem
        shutil.copy(args.src / f"{stem}.truth.json", args.dst / f"{stem}.truth.json")
        for name in (f"{stem}.jpg", f"{stem}.empty.jpg"):
            image = cv2.imread(str(args.src / name))
            if image is None:
                print(f"{args.src / name}: not a readable image", file=sys.stderr)
                return 2
            out, quality = worse(image, args.mode, args.value, rng)
            cv2.imwrite(str(args.dst / name), out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    print(f"{min(len(photos), args.count)} tables to {args.dst}, {args.mode} {args.value:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
