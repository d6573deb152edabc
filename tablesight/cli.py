"""The ``tablesight`` command line. Every command has ``--json`` for machines."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any

from tablesight.scene import Scene, SceneError

EXIT_BAD_INPUT = 2


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
    from rules.table_facts import line_of_sight

    result = line_of_sight(Scene.load(args.scene), args.observer, args.target, models_block=args.models_block)
    if result.visible:
        seen = f"{result.visible_fraction:.0%} of it can be seen"
        text = f"{result.target.label} is visible from {result.observer.label}: {seen}"
    else:
        text = f"{result.target.label} is not visible from {result.observer.label}"
    if result.blocked_by:
        text += f"; sight is blocked (in part) by {', '.join(result.blocked_by)}"
    _emit(args, result.to_json(), text)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from rules.table_facts import check

    scene = Scene.load(args.scene)
    report = check(scene)
    lines = [f"{scene.source}: {scene.game}, {len(scene.models)} models, {len(scene.terrain)} terrain pieces"]
    for ruling in report.rulings:
        lines.append(f"[{ruling.verdict.value.upper():>9}] {ruling.question}")
        lines += [f"            {reason}" for reason in ruling.reasons]
    if report.nearest_enemy:
        lines.append("Nearest enemy:")
        for row in report.nearest_enemy:
            lines.append(
                f"  {row['unit']}: {row['enemy_model']} ({row['enemy_unit']}) "
                f"is {_fmt(row['distance_in'])} from {row['model']}"
            )
    _emit(args, report.to_json(), "\n".join(lines))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    print(resources.files("tablesight").joinpath("schemas/scene-1.schema.json").read_text(encoding="utf-8"), end="")
    return 0


def bundled_sample() -> str:
    return str(resources.files("tablesight").joinpath("samples/focal-point-skirmish.json"))


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

    schema = add("schema", "print the scene JSON Schema")
    schema.set_defaults(run=cmd_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "scene", "") is None:
        args.scene = bundled_sample()
    from rules.table_facts import UnknownThingError

    try:
        code: int = args.run(args)
        return code
    except (SceneError, UnknownThingError, ValueError) as error:
        message = str(error)
        if args.json:
            print(json.dumps({"error": message}), file=sys.stderr)
        else:
            print(f"tablesight: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
