"""The ``tablesight`` command line. Every command has ``--json`` for machines."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import shutil
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablesight.scene import Scene, SceneError, scene_schema

if TYPE_CHECKING:  # imported where used: `tablesight check` should not load the web stack
    from web.refiner_adapting import RefinerAdapting

EXIT_BAD_INPUT = 2
GAMES: list[str] = scene_schema()["properties"]["game"]["enum"]  # what a scene's "game" may be


def _fmt(value_in: float) -> str:
    return f'{value_in:.3f}"'


def _emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    print(json.dumps(payload, indent=2) if args.json else text)


def cmd_measure(args: argparse.Namespace) -> int:
    from rules.table_facts import measure

    result = measure(Scene.load(args.scene), args.a, args.b)
    text = f"{result.a.label} to {result.b.label}: {_fmt(result.distance_in)}"
    if result.sigma_in > 0:
        text += f" ± {_fmt(result.sigma_in)} (1 sigma)"
    if result.a.kind == "unit" or result.b.kind == "unit":
        text += f"  (closest: {result.closest[0]} to {result.closest[1]})"
    if result.vertical_in:
        text += f"; {_fmt(result.vertical_in)} apart vertically"
    _emit(args, result.to_json(), text)
    return 0


def cmd_los(args: argparse.Namespace) -> int:
    from geometry.measure import Verdict
    from rules.table_facts import line_of_sight, sight_doubt

    result = line_of_sight(Scene.load(args.scene), args.observer, args.target, models_block=args.models_block)
    if result.visible:
        seen = f"{result.visible_fraction:.0%} of it can be seen"
        text = f"{result.target.label} is visible from {result.observer.label}: {seen}"
    else:
        text = f"{result.target.label} is not visible from {result.observer.label}"
    if result.blocked_by:
        text += f"; sight is blocked (in part) by {', '.join(result.blocked_by)}"
    if result.verdict is Verdict.TOO_CLOSE:
        text += f". {sight_doubt(result.visible)}"
    _emit(args, result.to_json(), text)
    return 0


def _print_ruling_lines(ruling: Any) -> list[str]:
    lines = [f"[{ruling.verdict.value.upper():>9}] {ruling.question}"]
    lines += [f"            {reason}" for reason in ruling.reasons]
    if ruling.rule:
        lines.append(f"            (rule: {ruling.rule})")
    return lines


def cmd_check(args: argparse.Namespace) -> int:
    from rules.table_facts import check

    scene = Scene.load(args.scene or bundled_sample())
    report = check(scene)
    lines = [f"{scene.source}: {scene.game}, {len(scene.models)} models, {len(scene.terrain)} terrain pieces"]
    for ruling in report.rulings:
        lines += _print_ruling_lines(ruling)
    if report.nearest_enemy:
        lines.append("Nearest enemy:")
        for row in report.nearest_enemy:
            lines.append(
                f"  {row['unit']}: {row['enemy_model']} ({row['enemy_unit']}) "
                f"is {_fmt(row['distance_in'])} from {row['model']}"
            )
    _emit(args, report.to_json(), "\n".join(lines))
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from rules.systems import ask

    scene = Scene.load(args.scene)
    options = {
        "range": args.range,
        "weapon": args.weapon,
        "from": args.from_,
        "roll": args.roll,
        "targets": args.targets,
    }
    answer = ask(scene, args.question, args.args, options)
    if isinstance(answer, dict) and "activations" in answer:
        steps = [
            f"  {k + 1:>2}. tier {a['tier']}: {a['player']} activates one of {', '.join(a['one_of'])}"
            for k, a in enumerate(answer["activations"])
        ]
        _emit(args, answer, "\n".join([f"Activation order (first player: {answer['first_player']}):", *steps]))
    elif isinstance(answer, dict):
        _emit(args, answer, _score_text(answer))
    else:
        _emit(args, answer.to_json(), "\n".join(_print_ruling_lines(answer)))
    return 0


def _score_text(score: dict[str, Any]) -> str:
    lines = [f"Round {score.get('round')}{' (final)' if score.get('final') else ' (if the game ended now)'}:"]
    lines += [f"  {player}: {vp} VP" for player, vp in score["vp"].items()]
    if score.get("winner"):
        how = f" on {score['tie_break']}" if score.get("tie_break") else ""
        lines.append(f"  winner: {score['winner']}{how}")
    else:
        lines.append("  no winner: tied")
    lines += [f"  - {line}" for line in score.get("evidence", [])]
    return "\n".join(lines)


def cmd_odds(args: argparse.Namespace) -> int:
    from rules.odds import odds_for

    result = odds_for(args.game, args)
    _emit(args, result.to_json(), result.text())
    return 0


def _read_image(path: str) -> Any:
    from vision.image_file import read_image

    return read_image(path)  # an ImageFileError (a ValueError) names the file and what is wrong with it


def _layout_for(args: argparse.Namespace) -> Any:
    from calibration.layout import Layout

    if getattr(args, "layout", None):
        return Layout.load(args.layout)
    width, depth = _table_size(args.table)
    return Layout.default(width, depth, side_markers=getattr(args, "side_markers", False))


def _default_layout(args: argparse.Namespace) -> bool:
    """Whether the command measured against the default layout (no --layout given)."""
    return hasattr(args, "table") and not getattr(args, "layout", None)


def _lens_for(args: argparse.Namespace) -> Any:
    """The lens file given with --lens, or None (the lens's bend is then read from the calibration markers:
    calibration/lens_from_markers.py)."""
    from calibration.lens import LensModel

    return LensModel.load(args.lens) if args.lens else None


def _flux_layout_for(args: argparse.Namespace) -> Any:
    """The Flux zones file given with --flux-layout, or the default zones for --table."""
    from vision.flux.layout import FluxLayout

    return FluxLayout.load(args.flux_layout) if args.flux_layout else FluxLayout.default(*_table_size(args.table))


def _number_in(low: float, high: float, what: str, low_open: bool = False) -> Any:
    """An argparse type: a finite number from ``low`` to ``high`` (above ``low`` where ``low_open``), else an error
    that says what it is for (nan, a negative distance or a view a billion pixels wide used to reach the maths)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (low < value <= high if low_open else low <= value <= high):
            raise argparse.ArgumentTypeError(f"{text!r}: {what}")
        return value

    return parse


def _table_size(text: str) -> tuple[float, float]:
    try:
        width, depth = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--table {text!r}: give the table as WIDTHxDEPTH in inches, e.g. 24x24 or 44x60") from None
    if not (0 < width < math.inf and 0 < depth < math.inf):  # nan fails both
        raise ValueError(f"--table {text!r}: sizes must be positive")
    return width, depth


def _pixel_size(
    option: str, text: str, what: str, example: str, least: tuple[int, int] = (1, 1), too_small: str = ""
) -> tuple[int, int]:
    """'1280x720' -> (1280, 720), with an error naming ``option`` and the value; under ``least``: ``too_small``
    (else the same error as for a size that is no WIDTHxHEIGHT)."""
    malformed = ValueError(f"{option} {text!r}: give {what} as WIDTHxHEIGHT in pixels, e.g. {example}")
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise malformed from None
    if width < least[0] or height < least[1]:
        raise ValueError(f"{option} {text!r}: {too_small}") if too_small else malformed
    return width, height


def _photo_size(text: str) -> tuple[int, int]:
    return _pixel_size(
        "--size", text, "the photo size", "1280x720", (320, 240), "too small to see a base (320x240 at least)"
    )


def _camera_size(text: str) -> tuple[int, int]:
    return _pixel_size("--camera-size", text, "the frames asked for", "1920x1080")


def cmd_calibrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from calibration.table_frame import calibrate

    image = _read_image(args.image)
    lens = _lens_for(args)
    frame = calibrate(image, _layout_for(args), lens)
    out = Path(args.out) if args.out else Path(args.image).with_suffix(".calibration.json")
    frame.save(out)
    q = frame.quality
    assert q is not None
    payload = {"calibration": str(out), **q.to_json()}
    lines = [
        f"calibrated from markers {', '.join(map(str, q.markers_used))}; saved {out}",
        f'  marker corners fit to {q.reprojection_rms_px:.2f} px ({q.reprojection_rms_in:.4f}")',
        f'  a position anywhere on the table: sigma {q.sigma_mean_in:.4f}" (worst {q.sigma_in:.4f}")',
        *(
            f'  marker {c.id}: {c.offset_in:.3f}" from the layout{"" if c.inlier else " - ignored"}'
            for c in q.marker_checks
        ),
        *(f"  warning: {w}" for w in q.warnings),
    ]
    _emit(args, payload, "\n".join(lines))
    return 0


def cmd_rectify(args: argparse.Namespace) -> int:
    import cv2

    from calibration.table_frame import TableFrame, calibrate

    image = _read_image(args.image)
    if args.calibration:
        frame = TableFrame.load(args.calibration)
    else:
        frame = calibrate(image, _layout_for(args), _lens_for(args))
    top = frame.rectify(image, args.px_per_in)
    if not cv2.imwrite(args.out, top):
        raise ValueError(f"{args.out}: cannot write the image there")
    _emit(
        args,
        {"out": args.out, "size": [top.shape[1], top.shape[0]], "px_per_in": args.px_per_in},
        f"wrote {args.out} ({top.shape[1]}x{top.shape[0]} px, {args.px_per_in:g} px per inch)",
    )
    return 0


def cmd_calibrate_lens(args: argparse.Namespace) -> int:
    from calibration.lens import calibrate_lens

    images = [_read_image(path) for path in args.images]
    lens, notes = calibrate_lens(images, args.images, tangential=args.tangential)
    lens.save(args.out)
    payload = {"lens": args.out, **lens.to_json(), "notes": notes}
    text = f"lens calibrated from {lens.views} views (fit {lens.rms_px:.2f} px); focal {lens.K[0, 0]:.1f} px; saved {args.out}"
    _emit(args, payload, "\n".join([text, *notes]))
    return 0


def cmd_print_kit(args: argparse.Namespace) -> int:
    from calibration.kit import print_kit

    layout = _layout_for(args)
    print_kit(layout, args.out, args.paper)
    _emit(
        args,
        {"out": args.out, "paper": args.paper, "layout": layout.to_json()},
        f"wrote {args.out}: print it at 100 % on {args.paper.upper()} and check the ruler",
    )
    return 0


NO_EMPTY_NOTE = (
    "read without an empty table (--empty, the same view before the models were put down): terrain that looks "
    "like a base from above (a round hill, a tree top) may be taken for one"
)


def _positive_count(text: str) -> int:
    """argparse's type for how many to render: a whole number, 1 or more."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"{count}: give 1 or more")
    return count


def _players_for(args: argparse.Namespace) -> dict[str, str] | None:
    """``--players red=#d33,blue=#36c`` -> {"red": "#d33", "blue": "#36c"}, with an error naming what is wrong."""
    from vision.colour import hex_to_bgr

    if not args.players:
        return None
    players = {}
    for part in args.players.split(","):
        name, sep, colour = (v.strip() for v in part.partition("="))
        if not sep or not name or not colour:
            raise ValueError(f"--players {args.players!r}: give each player as NAME=COLOUR, e.g. red=#d33,blue=#36c")
        try:
            hex_to_bgr(colour)
        except ValueError as error:
            raise ValueError(f"--players {args.players!r}: {name}'s colour {error}") from None
        if name in players:  # the second would quietly replace the first
            raise ValueError(f"--players {args.players!r}: {name} is given twice")
        players[name] = colour
    return players


def cmd_analyze(args: argparse.Namespace) -> int:
    import cv2

    from calibration.table_frame import TableFrame
    from vision.analyze import SAME_VIEW, analyze, draw_overlay, make_detector, to_confirm
    from vision.covered import describe
    from vision.hex_mat import parse_hex_mat

    photo = _read_image(args.image)
    empty = _read_image(args.empty) if args.empty else None
    if empty is not None and empty.shape[:2] != photo.shape[:2]:
        sizes = f"{empty.shape[1]}x{empty.shape[0]}, {args.image} is {photo.shape[1]}x{photo.shape[0]}"
        raise ValueError(f"--empty {args.empty} is {sizes}: {SAME_VIEW}")
    frame = TableFrame.load(args.calibration) if args.calibration else None
    layout = frame.layout if frame is not None else _layout_for(args)
    players = _players_for(args)
    detector = make_detector(args.detector, args.model, args.refiner)
    lens = _lens_for(args)
    terrain = _terrain_file(args.terrain) if args.terrain else None
    hex_mat = parse_hex_mat(args.hex_mat) if args.hex_mat else None
    result = analyze(photo, layout, empty, frame, lens, args.game, players, terrain, detector=detector, hex_mat=hex_mat)
    if args.overlay and not cv2.imwrite(args.overlay, draw_overlay(photo, result)):
        raise ValueError(f"{args.overlay}: cannot write the overlay there")
    if args.out:
        Scene.from_dict(result.scene, args.out).save(args.out)
    scene = result.scene
    if not scene["models"] and not scene["objectives"]:
        text = "found no bases and no objective markers (is the table empty? is --empty the right reference?)"
    else:
        text = f'found {len(scene["models"])} bases and {len(scene["objectives"])} objective markers; sigma {scene["measurement"]["sigma_in"]:.3f}"'
    for covered in scene["measurement"].get("covered", []):
        text += f"\n  {describe(covered)}"
    # What the calibration found wrong (a marker hidden or bent, the kit printed small, the lens file's size):
    # said by `calibrate`, and until now never by `analyze`, which calibrates the same way.
    quality = result.frame.quality
    notes = [f"calibration: {w}" for w in (quality.warnings if quality is not None else ())] + to_confirm(scene)
    if empty is None:
        # Measured (docs/vision.md, session 52): on path-traced photos precision falls from 98 % to 95-96 % without
        # one; round hills and tree tops are read as bases. Flat renders hardly change.
        notes.append(NO_EMPTY_NOTE)
    for message in notes:
        text += f"\n  {message}"
    times = ", ".join(f"{k[:-3]} {v:.0f} ms" for k, v in result.times_ms.items())
    _emit(args, {"scene": scene, "times_ms": result.times_ms, "notes": notes}, f"{text}\n  {times}")
    return 0


def _id_values(option: str, text: str | None) -> dict[str, str]:
    """``t1=blocking,t3=woods`` -> {"t1": "blocking", "t3": "woods"}; a clear error for anything else."""
    out: dict[str, str] = {}
    for part in filter(None, (text or "").split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option} {part!r}: give ID=VALUE pairs separated by commas, e.g. t1=4,t3=2.5")
        out[key.strip()] = value.strip()
    return out


def _heights(option: str, text: str | None) -> dict[str, float]:
    out = {}
    for key, value in _id_values(option, text).items():
        try:
            out[key] = float(value)
        except ValueError:
            raise ValueError(f"{option} {key}={value!r}: the height must be a number of inches") from None
        if not 0 <= out[key] <= 24:
            raise ValueError(f"{option} {key}={value}: a height between 0 and 24 inches")
    return out


def cmd_find_terrain(args: argparse.Namespace) -> int:
    from calibration.table_frame import TableFrame, calibrate
    from vision.analyze import make_detector
    from vision.terrain import footprint_under, terrain_footprints

    empty = _read_image(args.image)
    frame = (
        TableFrame.load(args.calibration) if args.calibration else calibrate(empty, _layout_for(args), _lens_for(args))
    )
    kinds = _id_values("--kinds", args.kinds)
    walls = _heights("--walls", args.walls)
    heights = _heights("--heights", args.heights)
    detector = make_detector("learned", args.model)
    found = terrain_footprints(detector, empty, frame, args.method)  # type: ignore[arg-type]
    found.sort(key=lambda poly: (round(poly.centroid.y), poly.centroid.x))  # ids read like a page: stable per view
    ids = [f"t{k + 1}" for k in range(len(found))]
    unknown = sorted((set(kinds) | set(walls) | set(heights)) - set(ids))
    if unknown:
        raise ValueError(f"no terrain piece {', '.join(unknown)} was found (found: {', '.join(ids) or 'none'})")
    pieces, lines = [], []
    for piece_id, seen in zip(ids, found, strict=True):
        height = walls.get(piece_id, heights.get(piece_id, 0.0))
        # Walls lean away from the camera: given their height, the foot is what is left without the lean.
        poly = footprint_under(seen, height, frame) if piece_id in walls else seen
        ring = [[round(float(x), 3), round(float(y), 3)] for x, y in list(poly.exterior.coords)[:-1]]
        pieces.append({"id": piece_id, "kind": kinds.get(piece_id, "open"), "polygon": ring, "height_in": height})
        lines.append(
            f"  {piece_id}: {kinds.get(piece_id, 'open (give its kind with --kinds)')}, {poly.area:.1f} sq in "
            f'around ({poly.centroid.x:.1f}", {poly.centroid.y:.1f}")'
            + (f', walls {height:g}" (lean taken out)' if piece_id in walls else "")
        )
    if args.out:
        Path(args.out).write_text(json.dumps({"terrain": pieces}, indent=2) + "\n", encoding="utf-8")
    _emit(
        args,
        {"terrain": pieces},
        f"found {len(pieces)} terrain pieces" + (":\n" + "\n".join(lines) if lines else ""),
    )
    return 0


def _terrain_file(path: str) -> list[dict[str, Any]]:
    """Terrain pieces from ``find-terrain --out`` (or any JSON with a "terrain" list, or a bare list)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such terrain file") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    pieces = data.get("terrain") if isinstance(data, dict) else data
    if not isinstance(pieces, list) or not all(
        isinstance(t, dict) and {"id", "kind", "polygon"} <= set(t) for t in pieces
    ):
        raise ValueError(f'{path}: expected {{"terrain": [{{"id", "kind", "polygon", "height_in"}}, ...]}}')
    # each piece as a scene's terrain is checked, so that a broken outline is named here, not met in shapely
    import jsonschema

    from geometry.shapes import validate_polygon
    from tablesight.scene import field_path

    validator = jsonschema.Draft202012Validator(scene_schema()["properties"]["terrain"]["items"])
    for index, piece in enumerate(pieces):
        problem = next(iter(validator.iter_errors(piece)), None)
        if problem is not None:
            raise ValueError(f"{path}: terrain{field_path([index, *problem.absolute_path])}: {problem.message}")
        reason = validate_polygon(piece["polygon"])
        if reason:
            raise ValueError(f"{path}: terrain[{index}].polygon: {reason}")
    return pieces


def cmd_render_tables(args: argparse.Namespace) -> int:
    from vision.evaluate import render_dataset

    written = render_dataset(
        args.out,
        args.count,
        args.seed,
        style=args.style,
        figures=args.figures,
        trees=args.trees,
        rims=args.rims,
        group=args.group,
        side_markers=args.side_markers,
        size=_photo_size(args.size),
    )
    _emit(
        args,
        {"out": args.out, "images": [str(p) for p in written]},
        f"wrote {len(written)} rendered tables to {args.out}",
    )
    return 0


def cmd_render_photoreal(args: argparse.Namespace) -> int:
    from vision.synth.photoreal import blender_python, render_photoreal_dataset

    python = blender_python()  # a clear error (main) when Blender's Python is not installed
    written = render_photoreal_dataset(
        args.out,
        args.count,
        args.seed,
        samples=args.samples,
        python=python,
        progress=lambda p: print(f"  {p}", file=sys.stderr, flush=True),
    )
    _emit(
        args,
        {"out": args.out, "images": [str(p) for p in written]},
        f"wrote {len(written)} path-traced tables to {args.out}",
    )
    return 0


def cmd_eval_vision(args: argparse.Namespace) -> int:
    from vision.evaluate import evaluate

    reports, lines = [], []
    for name in args.detector.split(","):  # side by side, on the same images
        csv_path = args.csv.replace(".csv", f".{name}.csv") if args.csv and "," in args.detector else args.csv
        report = evaluate(args.directory, csv_path, name, args.model, args.refiner)
        reports.append(report)
        b = report["bases"]
        lines += [
            f"[{report['detector']}] {report['images']} images; lens: "
            + (report["lens"] or "none (no lens.json there: the lens's bend read from the markers, less surely)"),
            f"bases: recall {b['recall']:.1%}, precision {b['precision']:.1%}, size {b['size_accuracy']:.1%}, team {b['team_accuracy']:.1%}",
            f"  centre error mm: median {b['centre_error_mm']['median']:.2f}, p95 {b['centre_error_mm']['p95']:.2f}, max {b['centre_error_mm']['max']:.2f}"
            f"; within 2 reported sigma (per axis): {b['within_2_sigma']:.1%}",
            *(f"  not calibrated, nothing found there: {why}" for why in report["not_calibrated"]),
            *(
                [
                    f"  recall of the {b['seen']} bases whose rim the camera sees a quarter of or more: {b['recall_seen']:.1%}"
                ]
                if b["seen"]
                else []
            ),
            *(
                [
                    f"  recall of the {b['shown']} bases with a pixel in the photo (of the base or its figure): "
                    f"{b['recall_shown']:.1%}"
                ]
                if b["shown"]
                else []
            ),
            f"objectives: recall {report['objectives']['recall']:.1%}, precision {report['objectives']['precision']:.1%}"
            + (
                f"; recall of the {report['objectives']['seen']} markers whose edge the camera sees a quarter of "
                f"or more: {report['objectives']['recall_seen']:.1%}"
                if report["objectives"]["seen"]
                else ""
            ),
            *(
                f"  {tag}: recall {v['recall']:.1%}, precision {v['precision']:.1%}"
                for tag, v in report["by_tag"].items()
            ),
            "time (median): " + ", ".join(f"{k[:-3]} {v:.0f} ms" for k, v in report["time_ms_median"].items()),
        ]
    _emit(args, reports[0] if len(reports) == 1 else {"reports": reports}, "\n".join(lines))
    return 0


def cmd_adapt(args: argparse.Namespace) -> int:
    try:
        # training code: only in this command
        from vision.training.adapt import CHECK_MIN_FRAMES, REFINER_MIN_FRAMES, adapt, adapt_refiner
    except ImportError as error:
        raise ValueError(f"adapting needs the train extra: pip install -e '.[train]' ({error})") from error
    results: dict[str, Any] = {}
    notes = ""
    if args.part in ("both", "detector"):
        results["detector"] = adapt(args.folder, args.out, args.epochs, args.limit, device=args.device)
    frames = len(results["detector"]["frames"]) if results else None
    if args.part == "both" and frames is not None and frames < REFINER_MIN_FRAMES:
        notes = (
            f"  the refiner was left as shipped: {frames} confirmed frames, it takes {REFINER_MIN_FRAMES} "
            "(on fewer it read sizes no better on 2 of 3 tables in other games; in the game the frames come from, "
            "2 were enough: --part refiner adapts it)\n"
        )
    elif args.part in ("both", "refiner"):
        results["refiner"] = adapt_refiner(
            args.folder, args.out, args.refiner_epochs, args.limit, device=args.device, log=lambda _: None
        )
        if len(results["refiner"]["frames"]) < REFINER_MIN_FRAMES:
            notes = (
                f"  warning: the refiner adapted on {len(results['refiner']['frames'])} frames; on fewer than "
                f"{REFINER_MIN_FRAMES} it read sizes no better on 2 of 3 tables in other games: use it for the game "
                "its frames come from (docs/detector.md, session 37)\n"
            )
    first = next(iter(results.values()))
    skipped = "".join(f"\n  skipped {s}" for s in first["skipped"])
    options = " ".join(
        f"--{flag} {results[part]['onnx']}"
        for part, flag in (("detector", "model"), ("refiner", "refiner"))
        if part in results
    )
    _emit(
        args,
        results,
        f"adapted the {' and the '.join(results)} on {len(first['frames'])} confirmed frames{skipped}\n"
        + "".join(f"  {part}: {r['onnx']}\n" for part, r in results.items())
        + _refiner_check(results.get("refiner"), CHECK_MIN_FRAMES)
        + notes
        + f"  use them with: tablesight analyze PHOTO {options} (or watch, serve --camera, eval-vision)",
    )
    return 0


def _refiner_check(result: dict[str, Any] | None, min_frames: int) -> str:
    """What adapt's check of the refiner found (vision/training/adapt.py: adapt_refiner), as lines to print."""
    if result is None:
        return ""
    check = result["check"]
    if check is None:
        return f"  (the refiner was not checked: that takes {min_frames} confirmed frames or more)\n"
    base, adapted = check["base"], check["adapted"]
    helped = adapted["size_right"] >= base["size_right"] and adapted["centre_mm_p95"] <= base["centre_mm_p95"]
    return (
        f"  refiner checked on the last {check['frames_held_back']} frames, adapted on the others: size right "
        f"{base['size_right']:.1%} -> {adapted['size_right']:.1%}, centre p95 {base['centre_mm_p95']:.2f} -> "
        f"{adapted['centre_mm_p95']:.2f} mm"
        + ("\n" if helped else "; it did not help there: more frames may, or keep the shipped refiner\n")
    )


@contextlib.contextmanager
def _train_extra() -> Iterator[None]:
    """Around the train commands' imports: without the train extra, say how to get it."""
    try:
        yield
    except ImportError as error:
        raise ValueError(f"training needs the train extra: pip install -e '.[train]' ({error})") from error


def cmd_train_detector(args: argparse.Namespace) -> int:
    with _train_extra():
        from vision.training.commands import train_detector  # training code: only in this command
    from vision.synth.table import GAMES

    games = tuple(g.strip() for g in args.games.split(",") if g.strip()) if args.games else ()
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        raise ValueError(f"--games: unknown game {unknown[0]!r} (known: {', '.join(GAMES)})")
    if args.weights and not Path(args.weights).is_file():
        raise ValueError(
            f"--from {args.weights}: no such weights file (a trained .pt, e.g. vision/models/bases-yolo11n.pt)"
        )
    tuning: dict[str, Any] = {}  # what is not given keeps train_detector's own defaults
    if args.lr0 is not None:
        tuning["lr0"] = args.lr0
    if games:
        tuning["games"] = games
    result = train_detector(
        args.out,
        args.tables,
        args.seed,
        args.epochs,
        args.imgsz,
        args.batch,
        args.device,
        args.resume,
        ship=args.ship,
        weights=args.weights,
        figures=args.figures,
        trees=args.trees,
        **tuning,
    )
    _emit(args, result, f"model {result['onnx']} (card {result['card']})")
    return 0


def cmd_train_refiner(args: argparse.Namespace) -> int:
    with _train_extra():
        from vision.training.commands import train_base_refiner  # training code: only in this command
    from vision.synth.table import FIGURE_STYLES, GAMES

    sets = []
    for spec in args.sets.split(","):
        fields = spec.strip().split(":")
        games = tuple(fields[2].split("+")) if len(fields) > 2 else ("focal-point", "grinding-annihilation")
        if len(fields) not in (2, 3) or not fields[0].isdigit() or not fields[1].isdigit():
            raise ValueError(f"--sets: {spec!r} is not SEED:TABLES[:GAME+GAME]")
        unknown = [g for g in games if g not in GAMES]
        if unknown:
            raise ValueError(f"--sets: unknown game {unknown[0]!r} in {spec!r} (known: {', '.join(GAMES)})")
        sets.append((int(fields[0]), int(fields[1]), games))
    figures = tuple(f.strip() for f in args.figures.split(",") if f.strip())
    unknown_figures = [f for f in figures if f not in FIGURE_STYLES]
    if not figures or unknown_figures:
        raise ValueError(f"--figures: {args.figures!r} (expected a comma list of {', '.join(FIGURE_STYLES)})")
    result = train_base_refiner(
        args.out,
        tuple(sets),
        args.epochs,
        ship=args.ship,
        log=lambda line: print(line, file=sys.stderr),
        ovals=args.ovals,
        figures=figures,
        device=args.device,
    )
    _emit(args, result, f"refiner {result['onnx']} (card {result['card']}): {result['validation']}")
    return 0


def cmd_train_terrain(args: argparse.Namespace) -> int:
    with _train_extra():
        from vision.training.commands import train_terrain_segmenter  # training code: only in this command
    sets = []
    for spec in args.sets.split(","):
        fields = spec.strip().split(":")
        if (
            len(fields) not in (2, 3)
            or not fields[0].isdigit()
            or not fields[1].isdigit()
            or fields[2:] not in ([], ["trees"])
        ):
            raise ValueError(f"--sets: {spec!r} is not SEED:TABLES or SEED:TABLES:trees")
        sets.append((int(fields[0]), int(fields[1]), fields[2:] == ["trees"]))
    result = train_terrain_segmenter(
        args.out, tuple(sets), args.epochs, ship=args.ship, log=lambda line: print(line, file=sys.stderr)
    )
    _emit(args, result, f"terrain segmenter {result['onnx']} (card {result['card']}): {result['validation']}")
    return 0


def cmd_train_card_finder(args: argparse.Namespace) -> int:
    with _train_extra():
        from vision.training.commands import train_card_finder  # training code: only in this command
    result = train_card_finder(
        args.out,
        args.sessions,
        args.seed,
        args.epochs,
        args.imgsz,
        args.batch,
        args.device,
        args.resume,
        ship=args.ship,
    )
    _emit(args, result, f"card model {result['onnx']} (card {result['card']})")
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from vision.analyze import make_detector
    from vision.hex_mat import parse_hex_mat
    from vision.live.deployment import load_deployment, load_kept
    from vision.live.sources import is_live, open_source
    from vision.live.watch import watch

    size_px = _camera_size(args.camera_size)
    live = is_live(args.source)  # a camera or a stream, not a recording
    open_source(args.source, size_px)  # fail now, clearly, on a source that cannot exist
    players = _players_for(args)
    lens = _lens_for(args)
    detector = make_detector("auto", args.model, args.refiner)
    # a bad file fails here, clearly, before the camera is opened for the game
    deployment = load_deployment(args.deployment, args.game) if args.deployment else None
    kept = load_kept(args.keep, args.game) if args.keep else None
    if kept is not None:  # the game as it was stays beside it: should this table be another game's, it is overwritten
        shutil.copyfile(args.keep, f"{args.keep}.bak")
    terrain = _terrain_file(args.terrain) if args.terrain else None
    events = watch(
        lambda: open_source(args.source, size_px),
        _layout_for(args),
        args.game,
        lens,
        players,
        args.max_frames,
        detector=detector,
        hex_mat=parse_hex_mat(args.hex_mat) if args.hex_mat else None,
        # A camera or a stream that drops out is waited for (back-off, last scene kept); a folder or video ends.
        give_up_after_stale=None if live else 5,
        stale_wait_s=0.25 if live else 0.0,
        settle_set_up=live,  # a recording's first frame is its set-up
        deployment=deployment,
        terrain=terrain,
        kept=kept,
        keep=(lambda scene: scene.save(args.keep)) if args.keep else None,  # atomic: a crash keeps the last whole one
    )
    for event in events:
        print(event.json_line() if args.json else event.text(), flush=True)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from web.app import ServerConfig, create_app
    from web.feeds import EmptyTableFeed, SampleFeed, empty_scene
    from web.guard import GuardConfig

    db = Path(args.db).expanduser()
    db.parent.mkdir(parents=True, exist_ok=True)
    start = Scene.load(args.scene).to_dict() if args.scene else None  # a bad scene fails here, clearly
    guard = GuardConfig(lan=args.lan)
    feed_factory: Any = lambda: SampleFeed(start, args.motion)  # noqa: E731
    adapting = None
    if args.camera is not None:
        from vision.analyze import make_detector
        from vision.hex_mat import parse_hex_mat
        from vision.live.sources import is_live, open_source
        from web.camera_feed import CameraFeed

        size_px = _camera_size(args.camera_size)
        open_source(args.camera, size_px)  # fail now, clearly, on a source that cannot exist
        layout = _layout_for(args)
        lens = _lens_for(args)
        players = _players_for(args)
        detector = make_detector("auto", args.model, args.refiner)  # a missing model fails here, clearly
        hex_mat = parse_hex_mat(args.hex_mat) if args.hex_mat else None  # a malformed grid fails here, clearly
        terrain = _terrain_file(args.terrain) if args.terrain else None  # a bad file fails here, clearly
        feed_factory = lambda: CameraFeed(  # noqa: E731
            lambda: open_source(args.camera, size_px),
            layout,
            f"camera {args.camera}",
            args.game,
            lens,
            players,
            detector,
            args.model,
            hex_mat,
            settle_set_up=is_live(args.camera),  # a recording's first frame is its set-up
            terrain=terrain,
        )
        adapting = _adapting_for(args)
    flux_factory = None
    if args.flux is not None:
        flux_factory = _flux_watch_factory(args)
        if args.camera is None and args.scene is None:  # a card game: the table starts empty, not the sample
            width, depth = _table_size(args.table)
            feed_factory = lambda: EmptyTableFeed(  # noqa: E731
                empty_scene("focal-point", width, depth), "Flux mode: cards read from the camera (see the Flux panel)"
            )
    config = ServerConfig(
        str(db),
        tick_s=args.tick,
        guard=guard,
        feed_factory=feed_factory,
        confirmed_dir=args.keep_frames,
        flux_factory=flux_factory,
        adapting=adapting,
    )
    host = "0.0.0.0" if args.lan else "127.0.0.1"
    app = create_app(config)  # a --db the games cannot be kept in fails here, before the page is announced
    print(f"tablesight: referee page at http://127.0.0.1:{args.port} (game kept in {db})", flush=True)
    if args.lan:
        print(f"tablesight: on the network too; phones join with code {guard.join_code}", flush=True)
    uvicorn.run(app, host=host, port=args.port, log_level="warning")
    return 0


def _adapting_for(args: argparse.Namespace) -> RefinerAdapting | None:
    """serve --camera: the refiner adapted on each game's first confirmed rounds, where it can be."""
    from web.refiner_adapting import RefinerAdapting, can_train

    if args.adapt_after <= 0 or not args.keep_frames:
        return None
    if args.refiner:  # the players chose their refiner: it is not swapped under them
        print(f"tablesight: reading with {args.refiner}; not adapting the refiner during games", flush=True)
        return None
    if not can_train():
        print(
            "tablesight: the refiner is not adapted during games: that needs the training stack "
            "(pip install -e '.[train]')",
            flush=True,
        )
        return None
    print(f"tablesight: the refiner adapts to each game's table after {args.adapt_after} confirmed rounds", flush=True)
    return RefinerAdapting(args.keep_frames, args.adapt_after)


def _flux_watch_factory(args: argparse.Namespace) -> Any:
    """serve --flux: check the source, designs and zones now (clear errors), read them in the server."""
    from vision.flux.designs import Designs
    from vision.live.sources import open_source
    from web.flux_watch import FluxWatch

    open_source(args.flux)
    designs = Designs.load(args.designs)
    flux_layout = _flux_layout_for(args)
    layout = _layout_for(args)
    lens = _lens_for(args)
    return lambda: FluxWatch(lambda: open_source(args.flux), layout, flux_layout, designs, f"Flux: {args.flux}", lens)


def _flux_from_photo(args: argparse.Namespace) -> int:
    """flux register / pool / can-pay: read Source pools from a photo of the table."""
    from calibration.table_frame import calibrate
    from vision.flux.designs import Designs
    from vision.flux.read import read_flux_table, register_designs

    image = _read_image(args.image)
    layout = _flux_layout_for(args)
    frame = calibrate(image, _layout_for(args), _lens_for(args))
    if args.flux_command == "register":
        designs = register_designs(image, frame, layout, args.cards)
        designs.save(args.designs)
        counts = ", ".join(f"{p}: {look.pixels} px of card" for p, look in designs.looks.items())
        _emit(
            args,
            {"designs": args.designs, "players": list(designs.looks)},
            f"registered {counts}; saved {args.designs}",
        )
        return 0
    reading = read_flux_table(image, frame, layout, Designs.load(args.designs), args.cards)
    if args.flux_command == "pool":
        lines = []
        for p, pool in reading.pools.items():
            value = str(pool.low) if pool.decided else f"{pool.low}-{pool.high} (too close to call)"
            lines.append(
                f"{p}: {pool.own} own + {pool.opponent} opponent's"
                + (f" + {pool.unsure} unsure" if pool.unsure else "")
                + f" card(s) = {value} Source; Life Tokens {reading.life_tokens.get(p, 0)}"
            )
        _emit(args, reading.to_json(), "\n".join(lines))
        return 0
    if args.player not in reading.pools:
        raise ValueError(f"--player {args.player!r}: expected one of {', '.join(reading.pools)}")
    payload = reading.pools[args.player].can_pay(args.cost)
    _emit(args, payload, f"{payload['verdict']}: {payload['reason']}")
    return 0


def cmd_flux(args: argparse.Namespace) -> int:
    from rules import flux

    if args.flux_command == "check-deck":
        import yaml

        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(f"{args.file}: no such file") from None
        try:
            deck = json.loads(text) if args.file.endswith(".json") else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as error:
            raise ValueError(f"{args.file}: not a readable deck list ({str(error).splitlines()[0]})") from None
        problems = flux.deck_problems(deck, args.file)
        if args.json:
            print(json.dumps({"legal": not problems, "problems": problems}))
        else:
            print("\n".join(problems) if problems else f"{args.file}: legal ({flux.GAME} > Deck Building)")
        return 1 if problems else 0
    if args.flux_command == "pay":
        payment = flux.pay(args.own, args.opponent, args.cost)
        print(
            json.dumps(payment.to_json())
            if args.json
            else f"{'yes' if payment.can_pay else 'no'}: {payment.reasons[0]}"
        )
        return 0
    if args.flux_command in ("register", "pool", "can-pay"):
        return _flux_from_photo(args)
    odds = flux.burn_odds(args.unit_cost)
    if args.json:
        print(json.dumps({"unit_cost": args.unit_cost, "source": odds.to_json(), "rule": f"{flux.GAME} > The Burn"}))
    else:
        print(f"Burn of a unit that cost {args.unit_cost}: Source drawn ({flux.GAME} > The Burn)")
        print(odds.table("source"))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    print(resources.files("tablesight").joinpath("schemas/scene-1.schema.json").read_text(encoding="utf-8"), end="")
    return 0


def bundled_sample() -> str:
    return str(resources.files("tablesight").joinpath("samples/focal-point-skirmish.json"))


def add_hex_mat(parser: argparse.ArgumentParser) -> None:
    """The mat's hex grid, for games played in hexes (Onefinity); without it, it is found on the table."""
    parser.add_argument(
        "--hex-mat",
        default=None,
        metavar="W,ORIENT,X,Y",
        help="the mat's hexes: width flat to flat (inches), pointy or flat, and a hex centre (x, y inches); "
        "default: found on the empty table",
    )


def add_models(parser: argparse.ArgumentParser) -> None:
    """The learned detector's networks, such as those ``tablesight adapt`` fitted to the players' table."""
    parser.add_argument("--model", default=None, help="an ONNX detector (default: the shipped one)")
    parser.add_argument(
        "--refiner",
        default=None,
        help="an ONNX base refiner (default: the shipped one), e.g. adapt's adapted-refiner.onnx",
    )


def add_look(parser: argparse.ArgumentParser, rims: bool = False) -> None:
    """How rendered tables look: their figures, whether woods carry trees and (``rims``) the rims' colours
    (vision/synth/table.py)."""
    parser.add_argument(
        "--figures",
        choices=["blob", "varied"],
        default="blob",
        help="varied: slim figures to blobs, some reaching out, as the path tracer draws them (blob: each covers "
        "most of its base's top)",
    )
    parser.add_argument("--trees", action="store_true", help="woods carry trees (else they are flat)")
    if not rims:
        return
    parser.add_argument(
        "--rims",
        choices=["palette", "near-mat"],
        default="palette",
        help="near-mat: some players' rims close to the mat's colour, so a base's edge barely shows (palette: each "
        "player a colour of the palette)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablesight", description="An overhead-camera referee for tabletop miniature games."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.add_argument("--json", action="store_true", help="print JSON for other programs")
        return command

    measure = add("measure", "edge-to-edge distance between two things (model, unit, objective, terrain)")
    measure.add_argument("scene")
    measure.add_argument("a", help="an id; use kind:id (model:, unit:, objective:, terrain:) if ids clash")
    measure.add_argument("b")
    measure.set_defaults(run=cmd_measure)

    los = add("los", "line of sight from a model or unit to another")
    los.add_argument("scene")
    los.add_argument("observer")
    los.add_argument("target")
    los.add_argument("--models-block", action="store_true", help="other models' bases block sight too")
    los.set_defaults(run=cmd_los)

    check = add("check", "every geometry fact a referee wants at a glance")
    check.add_argument("scene", nargs="?", default=None, help="scene file (default: the bundled sample)")
    check.set_defaults(run=cmd_check)

    ask_cmd = add("ask", "answer one rules question about a scene")
    ask_cmd.add_argument("scene")
    ask_cmd.add_argument(
        "question",
        help="coherent, in-range, can-see, can-target, can-claim, controls, cover, move-ok, resolve, activation-order, score",
    )
    ask_cmd.add_argument("args", nargs="*", help="the question's ids")
    ask_cmd.add_argument(
        "--range",
        type=_number_in(0.0, 1000.0, "give the distance in inches, 0 to 1000"),
        default=None,
        help="in-range: the distance in inches",
    )
    ask_cmd.add_argument("--weapon", default=None, help="can-target: the weapon (Focal Point: melee or ranged)")
    ask_cmd.add_argument("--from", dest="from_", default=None, help="cover, hidden: the attacker")
    ask_cmd.add_argument("--roll", type=int, default=None, help="assault-ok: the Assault roll (2D6)")
    ask_cmd.add_argument("--targets", default=None, help="assault-ok: declared target formations, comma-separated")
    ask_cmd.set_defaults(run=cmd_ask)

    odds = add("odds", "exact outcome distribution of an attack")
    odds.add_argument("game", help="focal-point")
    odds.add_argument("--scene", help="take profiles from this scene (with --attacker and --target)")
    odds.add_argument("--attacker")
    odds.add_argument("--target")
    odds.add_argument("--ranged", action="store_true", help="a ranged attack (cover counts)")
    odds.add_argument("--cover", action="store_true", help="the target has cover")
    odds.add_argument("--strain", choices=["fury", "precision"], help="the attacker's Strain this activation")
    odds.add_argument("--hold", action="store_true", help="the target took the Hold action")
    odds.add_argument("--dice", type=int, help="Attack dice after modifiers")
    odds.add_argument("--hit", type=int, help="Hit target number after modifiers")
    odds.add_argument("--defense", type=int, help="Defense target number after modifiers")
    odds.add_argument("--toll", action="store_true", help="the attacker is a Toll formation")
    odds.add_argument("--threshold", action="store_true", help="the defender is a Threshold formation")
    odds.add_argument("--damage", type=int, default=1, help="Skirmish: damage per unblocked hit")
    odds.add_argument("--weapon", default=None, help="Skirmish, Onefinity: the attacker's weapon (default: its first)")
    odds.add_argument("--reactive", action="store_true", help="Onefinity: a reaction (fire power limited to 1)")
    odds.add_argument("--half-range", action="store_true", help="Grinding-Annihilation: target within half range")
    odds.add_argument(
        "--stationary", action="store_true", help="Grinding-Annihilation: the attacker Remained Stationary"
    )
    odds.set_defaults(run=cmd_odds)

    def add_layout(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--table", default="24x24", help="table size WIDTHxDEPTH in inches (default layout: markers in the corners)"
        )
        command.add_argument("--layout", default=None, help="layout file: where each marker lies on the table")
        command.add_argument(
            "--side-markers",
            action="store_true",
            help="the default layout with two more markers (ids 4, 5) at the middle of the long edges: a truer table "
            "map on large tables seen at a tilt (print them with print-kit --side-markers)",
        )
        command.add_argument("--lens", default=None, help="lens file from calibrate-lens")

    cal = add("calibrate", "calibrate the table from a photo of its markers; print the report and save it")
    cal.add_argument("image")
    add_layout(cal)
    cal.add_argument("--out", default=None, help="where to save (default: IMAGE.calibration.json)")
    cal.set_defaults(run=cmd_calibrate)

    rect = add("rectify", "write a top-down view of the table")
    rect.add_argument("image")
    rect.add_argument("--out", required=True)
    rect.add_argument("--calibration", default=None, help="a saved calibration (else calibrate this image)")
    rect.add_argument(
        "--px-per-in",
        type=_number_in(0.0, 200.0, "give the view's scale, above 0 and up to 200 px an inch", True),
        default=20.0,
    )
    add_layout(rect)
    rect.set_defaults(run=cmd_rectify)

    lens_cmd = add("calibrate-lens", "calibrate the camera's lens from photos of the kit's ChArUco board")
    lens_cmd.add_argument("images", nargs="+")
    lens_cmd.add_argument(
        "--tangential", action="store_true", help="also fit the decentring terms p1, p2 (a lens known to need them)"
    )
    lens_cmd.add_argument("--out", default="lens.json")
    lens_cmd.set_defaults(run=cmd_calibrate_lens)

    kit = add("print-kit", "write the printable calibration kit (PDF)")
    kit.add_argument("--table", default="24x24")
    kit.add_argument("--layout", default=None)
    kit.add_argument(
        "--side-markers",
        action="store_true",
        help="two more markers at the middle of the long edges (for large tables; then give analyze, watch and "
        "serve --side-markers too)",
    )
    kit.add_argument("--paper", choices=["a4", "letter"], default="a4")
    kit.add_argument("--out", default="kit.pdf")
    kit.set_defaults(run=cmd_print_kit)

    an = add("analyze", "photo -> scene: find bases and objective markers, in table inches with their uncertainty")
    an.add_argument("image")
    an.add_argument(
        "--empty", default=None, help="a photo of the same view before the models were placed (the reference frame)"
    )
    an.add_argument("--calibration", default=None, help="a saved calibration (else calibrate this photo)")
    an.add_argument("--game", default="focal-point", choices=GAMES)
    an.add_argument("--players", default=None, help="confirmed team colours: red=#d33,blue=#36c")
    an.add_argument("--overlay", default=None, help="write the photo with what was found drawn on it")
    an.add_argument("--out", default=None, help="save the scene here")
    an.add_argument("--detector", choices=["auto", "learned", "classical"], default="auto")
    add_hex_mat(an)
    add_models(an)
    an.add_argument(
        "--terrain", default=None, help="the table's terrain (find-terrain --out); bases on hills are placed on top"
    )
    add_layout(an)
    an.set_defaults(run=cmd_analyze)

    ft = add("find-terrain", "find the terrain pieces on a photo of the table without models, as outlines in inches")
    ft.add_argument("image", help="the table with its terrain and no models (the empty-table reference)")
    ft.add_argument("--calibration", default=None, help="a saved calibration (else calibrate this photo)")
    ft.add_argument("--kinds", default=None, help="each piece's rule category: t1=blocking,t2=woods (default open)")
    ft.add_argument(
        "--walls",
        default=None,
        help="pieces with walls or steep sides (a plateau hill) and their height in inches: t1=4 (the lean is taken out)",
    )
    ft.add_argument("--heights", default=None, help="other pieces' heights in inches, seen as flat: t3=1")
    ft.add_argument("--model", default=None, help="an ONNX detector (default: the shipped one)")
    ft.add_argument(
        "--method",
        default="auto",
        choices=("auto", "segmenter", "grabcut"),
        help="how each piece is cut from round its box: the shipped segmenter network, GrabCut on colour, or auto "
        "(the network where its file is there)",
    )
    ft.add_argument("--out", default=None, help='save the pieces here ({"terrain": [...]}, for analyze --terrain)')
    add_layout(ft)
    ft.set_defaults(run=cmd_find_terrain)

    rt = add("render-tables", "render seeded table photos with ground truth (for evaluation and training)")
    rt.add_argument("out")
    rt.add_argument("--count", type=_positive_count, default=20)
    rt.add_argument("--seed", type=int, default=0)
    rt.add_argument(
        "--style", choices=["standard", "flagstone"], default="standard", help="flagstone: held out from training"
    )
    add_look(rt, rims=True)
    rt.add_argument(
        "--group",
        type=int,
        default=None,
        help="every table on one group of players' mat, in their colours, whatever its seed (a number naming the "
        "group): frames to adapt on and to measure adapting with",
    )
    rt.add_argument(
        "--side-markers", action="store_true", help="the kit's two more markers at the middle of the long edges"
    )
    rt.add_argument("--size", default="1920x1080", help="the webcam's photo size in pixels, WIDTHxHEIGHT")
    rt.set_defaults(run=cmd_render_tables)

    pr = add(
        "render-photoreal", "path-trace seeded tables with Blender (the photoreal slice; needs make photoreal-env)"
    )
    pr.add_argument("out")
    pr.add_argument("--count", type=_positive_count, default=30)
    pr.add_argument("--seed", type=int, default=7000)
    pr.add_argument("--samples", type=int, default=16, help="Cycles samples per pixel (denoised)")
    pr.set_defaults(run=cmd_render_photoreal)

    ev = add("eval-vision", "compare what perception finds with the truth of rendered tables")
    ev.add_argument("directory")
    ev.add_argument("--csv", default=None, help="per-image rows")
    ev.add_argument(
        "--detector",
        default="auto",
        help="auto (the learned model where present, as analyze), learned or classical; a comma list runs them side "
        "by side",
    )
    add_models(ev)

    td = add("train-detector", "render training tables, train the learned detector, export ONNX (train extra)")
    td.add_argument("out", help="working folder: data/, run/, the ONNX model and its card")
    td.add_argument("--tables", type=int, default=200, help="rendered tables to cut into training tiles")
    td.add_argument("--seed", type=int, default=100_000)
    td.add_argument("--epochs", type=int, default=30)
    td.add_argument("--imgsz", type=int, default=320)
    td.add_argument("--batch", type=int, default=16)
    td.add_argument("--device", default="cpu", help="cpu, or a GPU index such as 0")
    td.add_argument("--resume", action="store_true", help="go on from the last checkpoint in OUT")
    td.add_argument("--ship", action="store_true", help="install the result as the shipped model")
    td.add_argument(
        "--from",
        dest="weights",
        default=None,
        help="fine-tune these weights (.pt, e.g. vision/models/bases-yolo11n.pt) instead of training from scratch",
    )
    td.add_argument("--lr0", type=float, default=None, help="AdamW learning rate when fine-tuning (--from; 0.002)")
    td.add_argument(
        "--games", default=None, help="comma list of the games whose tables are rendered (default: all four)"
    )
    add_look(td)
    td.set_defaults(run=cmd_train_detector)

    tr = add(
        "train-refiner",
        "render tables, train the base refiner (size, centre, is it a base) or the oval one, export ONNX",
    )
    tr.add_argument("out", help="working folder: tables-SEED/, samples-SEED.npz, the ONNX model and its card")
    tr.add_argument(
        "--sets",
        default="600000:300,610000:200,620000:150:miniature-skirmish+onefinity",
        help="sets of rendered tables, SEED:TABLES[:GAME+GAME] (default games: focal-point+grinding-annihilation)",
    )
    tr.add_argument("--epochs", type=int, default=20)
    tr.add_argument("--ship", action="store_true", help="install the result as the shipped refiner")
    tr.add_argument(
        "--ovals",
        action="store_true",
        help="the oval refiner (is an oval centred there, size, centre, facing), on the same tables",
    )
    tr.add_argument(
        "--figures",
        default="varied",
        help="comma list: each set is rendered once per kind of figure, blob (each covers most of its base's top) "
        "or varied (slim figures to blobs, as the path tracer draws them: tables-SEED-varied/; the shipped one's)",
    )
    tr.add_argument(
        "--device",
        default="cpu",
        help="where torch trains: cpu, or cuda on a machine with a GPU (the samples are moved there whole)",
    )
    tr.set_defaults(run=cmd_train_refiner)

    tt = add(
        "train-terrain", "render tables, train the terrain segmenter (the piece as seen round each box), export ONNX"
    )
    tt.add_argument("out", help="working folder: tables-SEED/, samples-terrain-SEED.npz, the ONNX model and its card")
    tt.add_argument(
        "--sets",
        default="30000:150,30150:150,30300:75:trees,30375:75:trees",
        help="sets of rendered tables, SEED:TABLES[:trees] (trees: woods carry trees)",
    )
    tt.add_argument("--epochs", type=int, default=10)
    tt.add_argument("--ship", action="store_true", help="install the result as the shipped terrain segmenter")
    tt.set_defaults(run=cmd_train_terrain)

    tc = add("train-card-finder", "render Flux tables, train the oriented-box card finder, export ONNX (train extra)")
    tc.add_argument("out", help="working folder: data/, run/, the ONNX model and its card")
    tc.add_argument("--sessions", type=int, default=140, help="rendered Flux sessions (2-3 photos each)")
    tc.add_argument("--seed", type=int, default=20_000)
    tc.add_argument("--epochs", type=int, default=40)
    tc.add_argument("--imgsz", type=int, default=320)
    tc.add_argument("--batch", type=int, default=16)
    tc.add_argument("--device", default="cpu", help="cpu, or a GPU index such as 0")
    tc.add_argument("--resume", action="store_true", help="go on from the last checkpoint in OUT")
    tc.add_argument("--ship", action="store_true", help="install the result as the shipped card model")
    tc.set_defaults(run=cmd_train_card_finder)

    ad = add(
        "adapt",
        "fine-tune the shipped detector and base refiner on frames the players confirmed (train extra; CPU, minutes)",
    )
    ad.add_argument("folder", help="NAME.jpg + NAME.scene.json pairs (and lens.json if the lens was calibrated)")
    ad.add_argument(
        "--out", default="adapted", help="where the adapted networks go (adapted.onnx, adapted-refiner.onnx)"
    )
    ad.add_argument(
        "--part",
        choices=["both", "detector", "refiner"],
        default="both",
        help="which network to fit to the table: the detector (minutes), the base refiner that reads each base's "
        "size and centre (a few minutes), or both (the refiner from 20 confirmed frames on)",
    )
    ad.add_argument("--epochs", type=int, default=15, help="the detector's")
    ad.add_argument("--refiner-epochs", type=int, default=10)
    ad.add_argument("--limit", type=int, default=None, help="use at most this many frames")
    ad.add_argument("--device", default="cpu")
    ad.set_defaults(run=cmd_adapt)
    ev.set_defaults(run=cmd_eval_vision)

    wt = add("watch", "follow a camera (or video, or folder of frames) and print rulings as they change")
    wt.add_argument(
        "source",
        help="camera index (0), stream URL, video file or folder of images; the first frame is the empty table",
    )
    wt.add_argument("--game", default="focal-point", choices=GAMES)
    wt.add_argument("--players", default=None, help="confirmed team colours: red=#d33,blue=#36c")
    wt.add_argument("--max-frames", type=int, default=None)
    wt.add_argument(
        "--deployment",
        default=None,
        help="the players' units: a scene file with each model's unit (the page's game export, or analyze --json's "
        "scene with the units filled in), laid over the first frame read; without it each player's models are one lump",
    )
    wt.add_argument(
        "--keep",
        default=None,
        metavar="FILE",
        help="keep the game in FILE (a scene: ids, units, each move; written after each analysed frame); started "
        "again with a FILE that holds a game, watch goes on with it where its models stand on the table (the file "
        "as it was is copied to FILE.bak first)",
    )
    wt.add_argument(
        "--terrain",
        default=None,
        help="the table's terrain (find-terrain --out, with kinds and heights): bases on hills are placed on top "
        "(else the --deployment file's terrain, if it has any)",
    )
    wt.add_argument(
        "--camera-size",
        default="1920x1080",
        help="a USB camera (an index) is asked for frames this size, WIDTHxHEIGHT (OpenCV would open it at 640x480)",
    )
    add_hex_mat(wt)
    add_models(wt)
    add_layout(wt)
    wt.set_defaults(run=cmd_watch)

    sv = add("serve", "open the referee page (with no camera it plays the bundled sample game)")
    sv.add_argument("--port", type=int, default=8000)
    sv.add_argument("--lan", action="store_true", help="serve on the local network too; phones need the join code")
    sv.add_argument("--db", default="~/.tablesight/games.sqlite", help="where the game is kept (SQLite)")
    sv.add_argument(
        "--tick",
        type=_number_in(0.0, 3600.0, "give the seconds between updates, above 0", True),
        default=1.0,
        help="seconds between table updates",
    )
    sv.add_argument("--scene", default=None, help="play this scene file instead of the bundled sample")
    sv.add_argument(
        "--motion",
        type=_number_in(0.0, 24.0, "give how far the units drift in inches, 0 to 24"),
        default=0.6,
        help="how far (inches) the sample game's units drift",
    )
    sv.add_argument(
        "--camera", default=None, help="camera index, stream, video or folder; its first frame is the empty table"
    )
    sv.add_argument("--game", default="focal-point", choices=GAMES, help="with --camera: the game played")
    sv.add_argument(
        "--camera-size",
        default="1920x1080",
        help="with --camera: "
        + "a USB camera (an index) is asked for frames this size, WIDTHxHEIGHT (OpenCV would open it at 640x480)",
    )
    add_hex_mat(sv)
    sv.add_argument(
        "--keep-frames",
        default="~/.tablesight/confirmed",
        help="with --camera: keep each confirmed round's photo and scene here (for tablesight adapt)",
    )
    sv.add_argument("--players", default=None, help="with --camera: team colours, red=#d33,blue=#36c")
    sv.add_argument(
        "--terrain",
        default=None,
        help="with --camera: the table's terrain (find-terrain --out, with kinds and heights); bases on hills are "
        "placed on top",
    )
    sv.add_argument(
        "--adapt-after",
        type=int,
        default=2,
        help="with --camera and the train extra: adapt the base refiner to the table on each game's first N "
        "confirmed rounds, in the background, and read the rest of the game with it (0: never)",
    )
    add_models(sv)
    sv.add_argument(
        "--flux",
        default=None,
        help="Flux mode: read Source pools from this camera, stream, video, folder or photo (see flux register)",
    )
    sv.add_argument("--designs", default="flux-designs.json", help="with --flux: the registered designs")
    sv.add_argument("--flux-layout", default=None, help="with --flux: zones file (default: the 24x24 Flux zones)")
    add_layout(sv)
    sv.set_defaults(run=cmd_serve)

    fx = add("flux", "Affinity: Flux at the table: deck lists, paying with a Source pool, Burn odds")
    fx_sub = fx.add_subparsers(dest="flux_command", required=True)
    deck_cmd = fx_sub.add_parser("check-deck", help="check a deck list (YAML or JSON) against Deck Building")
    deck_cmd.add_argument("file")
    pay_cmd = fx_sub.add_parser("pay", help="can a pool pay a cost, and the cheapest way")
    pay_cmd.add_argument("--own", type=int, required=True, help="your Source cards in the pool")
    pay_cmd.add_argument("--opponent", type=int, required=True, help="the opponent's Source cards in the pool")
    pay_cmd.add_argument("--cost", type=int, required=True)
    burn_cmd = fx_sub.add_parser("burn-odds", help="exact odds of the Source a Burn brings")
    burn_cmd.add_argument("--unit-cost", type=int, required=True)
    reg_cmd = fx_sub.add_parser(
        "register", help="register both players' Source designs from a photo (each pool holds only its own cards)"
    )
    pool_cmd = fx_sub.add_parser("pool", help="read each player's Source pool from a photo of the table")
    can_cmd = fx_sub.add_parser("can-pay", help="can a player's pool in the photo pay a cost")
    can_cmd.add_argument("--player", required=True)
    can_cmd.add_argument("--cost", type=int, required=True)
    for command in (reg_cmd, pool_cmd, can_cmd):
        command.add_argument("image")
        add_layout(command)
        command.add_argument(
            "--flux-layout", default=None, help="zones file (default: pools along the near and far edges)"
        )
        command.add_argument("--designs", default="flux-designs.json", help="registered designs (written by register)")
        command.add_argument(
            "--cards",
            default="auto",
            choices=["auto", "learned", "classical"],
            help="how cards are found: the learned card model, the edge vote, or auto (learned where shipped)",
        )
    for command in (deck_cmd, pay_cmd, burn_cmd, reg_cmd, pool_cmd, can_cmd):
        command.add_argument("--json", action="store_true", help="print JSON for other programs")
    fx.set_defaults(run=cmd_flux)

    schema = add("schema", "print the scene JSON Schema")
    schema.set_defaults(run=cmd_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from calibration.layout import LayoutError
    from calibration.lens import LensError
    from calibration.table_frame import CalibrationError
    from rules.table_facts import UnknownThingError

    try:
        code: int = args.run(args)
        return code
    except (SceneError, UnknownThingError, CalibrationError, LayoutError, LensError, ValueError, OSError) as error:
        message = str(error)
        if isinstance(error, CalibrationError) and "disagree with the layout" in message and _default_layout(args):
            # The commonest cause: a table of another size than the default layout's.
            message += f" (the default layout is a {args.table} table with a marker in each corner: give the table's size with --table WIDTHxDEPTH, or --layout)"
        if args.json:
            print(json.dumps({"error": message}), file=sys.stderr)
        else:
            print(f"tablesight: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:  # Ctrl-C: how a player stops `watch` or `serve`, not an error to show a trace for
        return 130


if __name__ == "__main__":
    sys.exit(main())
