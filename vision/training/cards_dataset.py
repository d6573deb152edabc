"""Training data for the learned card finder: rendered Flux tables, rectified, with oriented-box labels.

The card finder looks at the table's top view at ``CARD_PX_PER_IN`` (made the
way the reader makes it: rectified at the card reader's 25 px/in, then shrunk),
where every card is the same rectangle in pixels. A label is the card's four
true corners (YOLO OBB format: class x1 y1 ... x4 y4, normalised). A card
showing less than ``MIN_VISIBLE`` of itself (a card deep in the Source deck's
stack) is not labelled: the camera cannot see it.

Training-time code: imports the renderer, never ultralytics (that is train.py).
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.lens import LensModel
from calibration.table_frame import CalibrationError, calibrate
from vision.flux.cards import PX_PER_IN
from vision.flux.cards_learned import CARD_CLASSES, CARD_PX_PER_IN, model_view
from vision.synth.flux_table import render_flux_table
from vision.synth.table import webcam_lens

MIN_VISIBLE = 0.1


def _export_one(args: tuple[int, int, str, str]) -> int:
    session, photo, out_dir, lens_path = args
    stem = f"{session:06d}_{photo}"
    if (Path(out_dir) / "labels" / f"{stem}.txt").exists():  # exported by an earlier, interrupted run
        return 1
    shot = render_flux_table(session, photo)
    try:
        frame = calibrate(shot.image, shot.layout, LensModel.load(lens_path))
    except CalibrationError:
        return 0
    top = model_view(frame.rectify(shot.image, PX_PER_IN))
    h, w = top.shape[:2]
    lines = []
    for card in shot.truth["cards"]:
        if card["visible_fraction"] < MIN_VISIBLE:
            continue
        xy = np.asarray(card["corners_in"]) * CARD_PX_PER_IN / [w, h]
        lines.append("0 " + " ".join(f"{v:.6f}" for v in np.clip(xy, 0, 1).ravel()))
    cv2.imwrite(str(Path(out_dir) / "images" / f"{stem}.jpg"), top, [cv2.IMWRITE_JPEG_QUALITY, 95])
    (Path(out_dir) / "labels" / f"{stem}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
    return 1


def export_card_dataset(
    out: str | Path, sessions: int, seed: int = 20_000, val_fraction: float = 0.1, workers: int = 2
) -> dict[str, Any]:
    """Photos 1 and 2 of ``sessions`` seeded Flux sessions (and the registration photo 0 of every
    fourth) as a YOLO OBB dataset, train/ and val/ split by session, with data.yaml."""
    root = Path(out).resolve()
    root.mkdir(parents=True, exist_ok=True)
    lens_path = root / "lens.json"
    webcam_lens(0).save(lens_path)  # the renderer's webcam (as benchmarks/eval_flux.py)
    n_val = max(1, round(sessions * val_fraction)) if sessions > 1 else 0
    jobs = []
    for k in range(sessions):
        split = "val" if k < n_val else "train"
        for sub in ("images", "labels"):
            (root / split / sub).mkdir(parents=True, exist_ok=True)
        photos = (0, 1, 2) if k % 4 == 0 else (1, 2)
        jobs += [(seed + k, p, str(root / split), str(lens_path)) for p in photos]
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        count = sum(pool.map(_export_one, jobs))
    val = "val" if n_val else "train"
    (root / "data.yaml").write_text(
        f"path: {root}\ntrain: train/images\nval: {val}/images\nnames:\n"
        + "".join(f"  {k}: {name}\n" for k, name in enumerate(CARD_CLASSES)),
        encoding="utf-8",
    )
    summary = {"sessions": sessions, "seed": seed, "photos": count, "val_sessions": n_val, "px_per_in": CARD_PX_PER_IN}
    (root / "dataset.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
