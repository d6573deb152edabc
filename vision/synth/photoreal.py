"""The photoreal slice: tables path-traced by Blender (Cycles), with the same truth format as ``render-tables``.

The pieces are placed by the same planner as the flat renderer (``plan_table``);
the table top (mat, objective markers, the kit's markers) is painted as a
texture; everything that stands up is built in 3-D by ``blender_scene.py``,
which runs under Blender's own Python (``bpy`` from PyPI, in its own virtual
environment: ``make photoreal-env``). The pinhole render is then bent by the
renderer's webcam lens distortion and gets sensor noise and JPEG, so the same
calibrated lens (``lens.json``) and evaluation (``tablesight eval-vision``) apply.
Slow (about a minute per photo on 2 cores) and never part of the tests.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import shapely

from calibration.layout import Layout
from geometry.shapes import base_semi_axes_in
from vision.synth.camera import Camera, photo_effects
from vision.synth.markers_table import paint_markers
from vision.synth.table import (
    GAMES,
    WEBCAM_DISTORTION,
    WEBCAM_HFOV_DEG,
    TablePlan,
    _hsv_to_bgr,
    _mat,
    paint_objectives,
    plan_table,
    scene_of,
    webcam_lens,
)

Image = npt.NDArray[np.uint8]
BLENDER_SCRIPT = Path(__file__).with_name("blender_scene.py")
DEFAULT_BLENDER_PYTHON = Path(__file__).resolve().parents[2] / ".venv-bpy" / "bin" / "python"
# Hard cases of the slice, in turn (hands are left to the flat renderer).
SLICE_CASES = ("none", "crowded", "dark", "hills")
SENSOR_MM = 36.0
BORDER_IN = 2.0
# Woods and difficult ground are area terrain: models stand in them, on a thin template (card or felt), as
# the flat renderer and the truth have them at the table's height. A solid as tall as the piece's height_in
# (0.2-0.9") would swallow the bases (0.15" tall) standing there.
TEMPLATE_IN = 0.03
AREA_KINDS = ("woods", "difficult")


def blender_python() -> Path:
    """Blender's Python: $TABLESIGHT_BLENDER_PYTHON, else .venv-bpy (``make photoreal-env``)."""
    path = Path(os.environ.get("TABLESIGHT_BLENDER_PYTHON", DEFAULT_BLENDER_PYTHON))
    if not path.exists():
        raise FileNotFoundError(
            f"no Blender Python at {path}: run `make photoreal-env` (installs bpy into .venv-bpy, ~400 MB) "
            "or set TABLESIGHT_BLENDER_PYTHON"
        )
    return path


def table_top(plan: TablePlan, rng: np.random.Generator, ppi: float, style: str = "standard") -> Image:
    """The flat texture: floor border, mat, objective markers and the kit's corner markers."""
    w_in, d_in = plan.table
    tex = np.full((int((d_in + 2 * BORDER_IN) * ppi), int((w_in + 2 * BORDER_IN) * ppi), 3), 35, np.float32)
    mat = _mat(rng, (int(d_in * ppi), int(w_in * ppi)), plan.hard == "dark", style, ppi)
    o = int(BORDER_IN * ppi)
    tex[o : o + mat.shape[0], o : o + mat.shape[1]] = mat
    paint_objectives(tex, plan.objectives, ppi, BORDER_IN, rng)
    paint_markers(tex, Layout.default(w_in, d_in), ppi, BORDER_IN)
    return np.clip(tex, 0, 255).astype(np.uint8)


def blender_camera(camera: Camera, table_in: tuple[float, float], rng: np.random.Generator) -> dict[str, Any]:
    """Our pinhole (x right, y down, z forward; table y down) as a Blender camera (y up, looking down -z).
    The principal point is the frame's centre (as ``Camera.looking_at_table`` makes it), Blender's default."""
    S = np.diag([1.0, -1.0, -1.0])
    centre = camera.centre_in  # (x, y, w): w = -height
    aim = np.array([table_in[0] / 2, table_in[1] / 2, 0.0])  # the camera looks at the table's centre
    return {
        "location": [float(centre[0]), float(-centre[1]), float(-centre[2])],
        "rotation": (S @ camera.R.T @ S).tolist(),
        "lens_mm": float(camera.K[0, 0] * SENSOR_MM / camera.size[0]),
        "sensor_mm": SENSOR_MM,
        "focus_in": float(np.linalg.norm(centre - aim)),
        "fstop": float(rng.uniform(5.6, 11.0)),  # 36 mm-equivalent: a webcam's deep but finite depth of field
    }


def plan_photoreal(seed: int, game: str, hard: str, size: tuple[int, int], samples: int) -> dict[str, Any]:
    """Everything Blender needs for one table, and the truth (``scene``, ``tags``, ``layout``)."""
    rng = np.random.default_rng(seed)
    plan = plan_table(rng, game, hard)
    table = plan.table
    camera = Camera.looking_at_table(
        table,
        size,
        tilt_deg=float(rng.uniform(0, 25)),
        yaw_deg=float(rng.uniform(-8, 8)),
        hfov_deg=WEBCAM_HFOV_DEG,
        dist=WEBCAM_DISTORTION,
        fill=float(rng.uniform(0.85, 0.95)),
    )
    terrain: list[dict[str, Any]] = []
    for t in plan.terrain:
        own = np.random.default_rng([seed, 1, len(terrain)])
        trees: list[list[float]] = []
        if t["kind"] == "woods":
            poly = shapely.Polygon(t["polygon"])
            lo_x, lo_y, hi_x, hi_y = poly.bounds
            for _ in range(200):
                if len(trees) >= max(2, int(poly.area / 5)):
                    break
                x, y = own.uniform(lo_x, hi_x), own.uniform(lo_y, hi_y)
                if poly.contains(shapely.Point(x, y).buffer(0.4)):
                    trees.append([float(x), float(y), float(own.uniform(2.0, 4.0)), float(own.uniform(0.6, 1.1))])
        terrain.append(
            {
                **t,
                "bgr": list(_hsv_to_bgr(own.uniform(0, 180), own.uniform(20, 120), own.uniform(60, 170))),
                "leaves_bgr": list(_hsv_to_bgr(own.uniform(35, 75), own.uniform(80, 200), own.uniform(40, 110))),
                "trees": trees,
                **({"template_in": TEMPLATE_IN} if t["kind"] in AREA_KINDS else {}),
            }
        )
    owner = {u["id"]: u["player"] for u in plan.units}
    models = []
    for m in plan.models:
        a, b = base_semi_axes_in(m["base"])
        models.append({**m, "a": a, "b": b, "player": owner[m["unit"]]})
    dark = plan.hard == "dark"
    base_top = _hsv_to_bgr(
        rng.uniform(0, 180), rng.uniform(0, 60), rng.uniform(20, 60) if dark else rng.uniform(30, 200)
    )
    elevation, azimuth = math.radians(rng.uniform(40, 80)), rng.uniform(0, 2 * math.pi)
    light = {
        "sun": float(rng.uniform(1.6, 2.4)),
        "sun_angle_deg": float(rng.uniform(3, 15)),
        "sun_rgb": [1.0, float(rng.uniform(0.92, 1.0)), float(rng.uniform(0.85, 1.0))],
        "sun_from": [
            math.cos(elevation) * math.cos(azimuth),
            math.cos(elevation) * math.sin(azimuth),
            math.sin(elevation),
        ],
        "ambient": float(rng.uniform(0.25, 0.45)),
        "ambient_rgb": [0.9, 0.92, 1.0],
        "area_w": float(rng.uniform(1.5e4, 3.5e4)),
        "area_at": [float(rng.uniform(0, table[0])), float(-rng.uniform(0, table[1])), 60.0],
    }
    ppi = float(min(100.0, 3000.0 / max(table)))
    return {
        "seed": seed,
        "plan": plan,
        "camera_model": camera,
        "ppi": ppi,
        "blender": {
            "seed": seed,
            "table_in": list(table),
            "border_in": BORDER_IN,
            "size_px": list(size),
            "samples": samples,
            "mat_roughness": float(rng.uniform(0.6, 0.95)),
            "camera": blender_camera(camera, table, rng),
            "light": light,
            "terrain": terrain,
            "models": models,
            "team_bgr": {p: list(c) for p, c in plan.team.items()},
            "base_top_bgr": list(base_top),
        },
        "effects": {
            "noise": float(rng.uniform(1, 3)),
            "jpeg_quality": int(rng.integers(82, 95)),
            "light_gradient": float(rng.uniform(0, 0.2)),
        },
    }


def distort(pinhole: Image, camera: Camera) -> Image:
    """Bend a distortion-free render of ``camera`` by its lens distortion (what the webcam would record)."""
    w, h = camera.size
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    pix = np.stack([u.ravel(), v.ravel()], axis=1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-10)
    undist = cv2.undistortPoints(pix, camera.K, camera.dist, P=camera.K, criteria=criteria).reshape(h, w, 2)
    out: Image = cv2.remap(
        pinhole,
        undist[..., 0].astype(np.float32),
        undist[..., 1].astype(np.float32),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return out


def render_photoreal(
    seed: int,
    out: Path,
    game: str = "focal-point",
    hard: str = "none",
    size: tuple[int, int] = (1920, 1080),
    samples: int = 24,
    python: Path | None = None,
) -> Path:
    """Path-trace one table: writes ``SEED.jpg``, ``SEED.empty.jpg`` and ``SEED.truth.json`` into ``out``."""
    if game not in GAMES:
        raise ValueError(f"game {game!r}: expected one of {', '.join(GAMES)}")
    job = plan_photoreal(seed, game, hard, size, samples)
    stem = out / f"{seed:05d}"
    with tempfile.TemporaryDirectory(prefix="tablesight-blender-") as tmp:
        tex_path = Path(tmp) / "table.png"
        cv2.imwrite(str(tex_path), table_top(job["plan"], np.random.default_rng([seed, 4]), job["ppi"]))
        spec = {
            **job["blender"],
            "texture": str(tex_path),
            "out_photo": str(Path(tmp) / "photo.png"),
            "out_empty": str(Path(tmp) / "empty.png"),
        }
        (Path(tmp) / "plan.json").write_text(json.dumps(spec), encoding="utf-8")
        done = subprocess.run(
            [str(python or blender_python()), str(BLENDER_SCRIPT), str(Path(tmp) / "plan.json")],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not Path(spec["out_empty"]).exists():
            raise ChildProcessError(f"Blender failed on seed {seed} (exit {done.returncode}): {done.stderr[-2000:]}")
        camera: Camera = job["camera_model"]
        for name, target, noise_seed in (("photo", ".jpg", 1), ("empty", ".empty.jpg", 2)):
            raw = cv2.imread(spec[f"out_{name}"], cv2.IMREAD_COLOR)
            image = photo_effects(distort(raw, camera), np.random.default_rng([seed, noise_seed]), **job["effects"])
            cv2.imwrite(str(stem) + target, image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    plan: TablePlan = job["plan"]
    truth = {
        "scene": scene_of(plan),
        "tags": [*plan.tags, "photoreal"],
        "layout": Layout.default(*plan.table).to_json(),
    }
    (Path(str(stem) + ".truth.json")).write_text(json.dumps(truth) + "\n", encoding="utf-8")
    return Path(str(stem) + ".jpg")


def render_photoreal_dataset(
    out: str | Path,
    count: int,
    seed: int = 7000,
    games: tuple[str, ...] = ("focal-point", "grinding-annihilation"),
    samples: int = 16,
    python: Path | None = None,
    progress: Any = None,
) -> list[Path]:
    """``count`` path-traced tables (hard cases in turn) and the webcam's calibrated lens, in ``out``.
    Resumes: a table whose truth file is there (written last) is kept, not rendered again."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "lens.json").exists():
        webcam_lens(seed).save(root / "lens.json")
    written = []
    for k in range(count):
        done = root / f"{seed + k:05d}.truth.json"
        if done.exists():
            written.append(root / f"{seed + k:05d}.jpg")
            continue
        python = python or blender_python()
        path = render_photoreal(
            seed + k,
            root,
            games[k % len(games)],
            SLICE_CASES[(k // len(games)) % len(SLICE_CASES)],
            samples=samples,
            python=python,
        )
        written.append(path)
        if progress:
            progress(path)
    return written
