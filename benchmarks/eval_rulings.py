"""Rulings from analysed photos against rulings from the true scenes (issue 5's end-to-end check).

    python benchmarks/eval_rulings.py --tables 20 --seed 5000 [--game G] [--detector auto] [--hard none]
        [--found-sizes] [--cover] [--camera blur:1.5|jpeg:50|noise:8|stream:60]
    python benchmarks/eval_rulings.py --dir DIR [--found-sizes] [--cover]

Renders seeded Focal Point tables (2'x2', the held-out seeds 5000+ by default; ``--game
grinding-annihilation``: 44"x60" ones; ``miniature-skirmish``: 3'x3', every miniature its own unit;
``onefinity``: 2'x2' hex mats, one trooper near the centre of each hex, ``vision.synth.hex_troopers``),
analyses each photo, gives the true roster the measured positions and sigmas
(``tablesight.ruling_agreement``; with ``--found-sizes`` the bases the camera read too, as
the scene stands before the players confirm it) and counts the rulings that agree with the
truth, say too close to call, are wrong, or cannot be judged (a model missed). ``--camera`` shows photo and
empty table as a worse camera takes them (benchmarks/worse_camera_set.py, seeded). ``--dir``: the tables stored
in DIR instead, as eval-vision reads them (``tablesight render-photoreal DIR``: the path-traced slice), each by
its own game.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from worse_camera_set import camera_spec, seen_through  # noqa: E402

from calibration.layout import Layout  # noqa: E402
from calibration.lens import LensModel  # noqa: E402
from tablesight.ruling_agreement import compare, with_roster  # noqa: E402
from vision.analyze import Detector, make_detector  # noqa: E402
from vision.centre_sigma import CENTRE_SIGMA_MM  # noqa: E402
from vision.evaluate import analyze_rendered, analyze_set_up, match_scene, set_up_table  # noqa: E402
from vision.image_file import read_image  # noqa: E402
from vision.synth.hex_troopers import troopers_in_hexes  # noqa: E402
from vision.synth.table import RenderedTable, render_table, webcam_lens  # noqa: E402


def _worse_camera(table: RenderedTable, camera: str, rng: np.random.Generator) -> RenderedTable:
    """``table`` with its photo and empty frame as the camera ``MODE:VALUE`` takes them."""
    mode, value = camera_spec(camera)
    images = {name: seen_through(getattr(table, name), mode, value, rng) for name in ("image", "empty")}
    return dataclasses.replace(table, **images)


GAMES = ("focal-point", "grinding-annihilation", "miniature-skirmish", "onefinity")


def stored_tables(folder: Path, detector: Detector) -> list[tuple[str, list[str], dict[str, Any], dict[str, Any]]]:
    """(name, tags, true scene, found scene) of each table stored in ``folder`` (NAME.jpg, NAME.empty.jpg,
    NAME.truth.json; lens.json where there is one), read as eval-vision reads them."""
    lens = LensModel.load(folder / "lens.json") if (folder / "lens.json").exists() else None
    out = []
    for photo in sorted(folder.glob("*[0-9].jpg")):
        stem = photo.with_suffix("")
        truth = json.loads(stem.with_suffix(".truth.json").read_text(encoding="utf-8"))
        layout = Layout.from_json(truth["layout"])
        scene = truth["scene"]
        set_up = set_up_table(read_image(str(stem) + ".empty.jpg"), layout, lens, scene["game"], detector)
        found = analyze_set_up(read_image(photo), set_up, layout, lens, scene, detector).scene
        out.append((stem.name, truth.get("tags", []), scene, found))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5000)
    parser.add_argument("--detector", default="auto")
    parser.add_argument(
        "--game",
        default="focal-point",
        choices=GAMES,
        help="whose tables (Grinding-Annihilation: 44x60; Skirmish: 36x36; Onefinity: hex mat, one trooper a hex)",
    )
    parser.add_argument("--hard", default=None, help="none, crowded, dark, hills, occluded (default: drawn)")
    parser.add_argument(
        "--sigma-mm", type=float, default=None, help="give every centre this sigma instead (0.32: the old fixed one)"
    )
    parser.add_argument(
        "--found-sizes", action="store_true", help="each model on the base size the camera read, not the roster's"
    )
    parser.add_argument(
        "--cover", action="store_true", help="judge cover too: every unit from every enemy unit (not in Skirmish)"
    )
    parser.add_argument(
        "--camera", default=None, help="a worse camera than the renderer's: MODE:VALUE (jpeg:50, blur:1.5, ...)"
    )
    parser.add_argument(
        "--no-lens", action="store_true", help="without the webcam's lens file: the lens read from the markers"
    )
    parser.add_argument("--dir", type=Path, default=None, help="the tables stored in DIR (each by its own game)")
    args = parser.parse_args()
    rng = np.random.default_rng(55)
    if args.sigma_mm is not None:
        for how in CENTRE_SIGMA_MM:
            CENTRE_SIGMA_MM[how] = args.sigma_mm
    detector = make_detector(args.detector)
    lens = None if args.no_lens else webcam_lens(args.seed)
    totals = {"agree": 0, "too_close": 0, "wrong": 0, "not_judged": 0, "models": 0, "missed": 0}
    if args.dir is not None:
        tables = [(n, tags, with_roster(t, t["game"]), f) for n, tags, t, f in stored_tables(args.dir, detector)]
        where = str(args.dir)
    else:
        tables = (_rendered(args, args.seed + k, lens, detector, rng) for k in range(args.tables))  # type: ignore[assignment]
        where = f"{args.tables} {args.game}"
    for name, tags, truth, found in tables:
        models, markers = match_scene(truth, found)
        result = compare(
            truth,
            found,
            [(i, j) for i, j, _ in models],
            [(i, j) for i, j, _ in markers],
            args.found_sizes,
            args.cover,
        )
        totals["agree"] += result.agree
        totals["too_close"] += result.too_close
        totals["wrong"] += len(result.wrong)
        totals["not_judged"] += result.not_judged
        totals["models"] += len(truth["models"])
        totals["missed"] += len(result.missed_models)
        for t, p in result.wrong:
            print(f"  table {name}: truth {t}\n      photo {p}")
        print(
            f"table {name} ({' '.join(tags) or 'plain'}): agree {result.agree}, too close {result.too_close}, "
            f"wrong {len(result.wrong)}, not judged {result.not_judged} ({len(result.missed_models)} models missed)",
            flush=True,
        )
    judged = totals["agree"] + totals["too_close"] + totals["wrong"]
    sizes = ("found" if args.found_sizes else "roster") + (", cover judged too" if args.cover else "")
    print(
        f"{where} tables, detector {args.detector}, sizes {sizes}: {judged} rulings judged: "
        f"agree {totals['agree']}, "
        f"too close to call {totals['too_close']}, wrong {totals['wrong']} ({totals['wrong'] / max(judged, 1):.1%}); "
        f"{totals['not_judged']} not judged ({totals['missed']} of {totals['models']} models missed)"
    )


def _rendered(
    args: argparse.Namespace, seed: int, lens: LensModel | None, detector: Detector, rng: np.random.Generator
) -> tuple[str, list[str], dict[str, Any], dict[str, Any]]:
    """(name, tags, true scene with its roster, found scene) of one table rendered for ``args.game``."""
    if args.game == "onefinity":  # troopers stand in hexes, as players put them
        models_at, lifted = troopers_in_hexes(seed, args.game, args.hard)
        table = render_table(seed, args.game, hard=args.hard, models_at=models_at, lifted=lifted)
    else:
        table = render_table(seed, args.game, hard=args.hard)
    if args.camera:
        table = _worse_camera(table, args.camera, rng)
    found = analyze_rendered(table, lens, detector).scene
    return str(seed), table.tags, with_roster(table.scene, args.game), found


if __name__ == "__main__":
    main()
