"""Render the bundled sample photos (seeded) and calibrate them: sample_images/.

Run: ``python scripts/make_sample_images.py``. Writes, for each table, a 1080p
photo with the kit's corner markers, the lens file from rendered ChArUco views
of the same camera, the calibration, and the true camera (for tests); and in
``sample_images/games/`` a few rendered photos of each game's table (Focal Point
2'x2', Grinding-Annihilation 44"x60", Onefinity on its hex mat) with the empty
table, the true scene and the webcam's lens, in the ``render-tables`` format
(``tablesight eval-vision sample_images/games`` reads them).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from calibration.layout import Layout
from calibration.lens import calibrate_lens
from calibration.table_frame import calibrate
from vision.synth.camera import Camera, photo_effects
from vision.synth.charuco_views import charuco_views
from vision.synth.markers_table import table_texture
from vision.synth.table import render_table, webcam_lens

OUT = Path(__file__).resolve().parent.parent / "sample_images"
# Seeds 900+ are neither training tables (100000+) nor the held-out set (5000+); one plain, one crowded, one on hills.
GAME_SAMPLES = [
    (game, 900 + 10 * g + k, hard)
    for g, game in enumerate(("focal-point", "grinding-annihilation", "onefinity"))
    for k, hard in enumerate(("none", "crowded", "hills"))
]


def game_samples() -> None:
    games = OUT / "games"
    games.mkdir(exist_ok=True)
    webcam_lens(900).save(games / "lens.json")
    for game, seed, hard in GAME_SAMPLES:
        table = render_table(seed, game, hard=hard)
        stem = games / f"{game}-{seed}"
        cv2.imwrite(f"{stem}.jpg", table.image, [cv2.IMWRITE_JPEG_QUALITY, 88])
        cv2.imwrite(f"{stem}.empty.jpg", table.empty, [cv2.IMWRITE_JPEG_QUALITY, 88])
        truth = {"scene": table.scene, "tags": table.tags, "layout": table.layout.to_json()}
        Path(f"{stem}.truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
        print(stem.name, table.tags, len(table.scene["models"]), "models")


SIZE = (1920, 1080)
DISTORTION = (-0.10, 0.02, 0.0, 0.0, 0.0)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    lens = None
    for name, table, tilt, yaw in (("table-24x24", (24.0, 24.0), 18.0, 4.0), ("table-44x60", (44.0, 60.0), 22.0, -3.0)):
        rng = np.random.default_rng(int(table[0]))
        camera = Camera.looking_at_table(table, SIZE, tilt_deg=tilt, yaw_deg=yaw, dist=DISTORTION)
        if lens is None:
            lens, _ = calibrate_lens(charuco_views(camera.K, DISTORTION, SIZE, 14, np.random.default_rng(7)))
            lens.save(OUT / "lens-1080p.json")
        layout = Layout.default(*table)
        ppi = 160.0 if table[0] < 30 else 110.0
        photo = photo_effects(
            camera.render(table_texture(layout, ppi, rng), ppi, border_in=2.0),
            rng,
            noise=2.0,
            blur_px=0.6,
            jpeg_quality=90,
            light_gradient=0.3,
        )
        color = cv2.cvtColor(photo, cv2.COLOR_GRAY2BGR)
        cv2.imwrite(str(OUT / f"{name}.jpg"), color, [cv2.IMWRITE_JPEG_QUALITY, 92])
        frame = calibrate(color, layout, lens)
        frame.save(OUT / f"{name}.calibration.json")
        truth = {
            "K": camera.K.tolist(),
            "dist": list(DISTORTION),
            "R": camera.R.tolist(),
            "t": camera.t.tolist(),
            "size": list(SIZE),
            "table_in": list(table),
        }
        (OUT / f"{name}.camera.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
        print(name, frame.quality.to_json() if frame.quality else None)


if __name__ == "__main__":
    main()
    game_samples()
