"""The one-way data flow of ARCHITECTURE.md, checked on the source: who may import what.

geometry/ and rules/ never import cv2 or torch; run-time code never imports the
training code or the learning stack (only `tablesight train-detector`/`adapt`
reach vision.training, from inside those commands).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ["tablesight", "geometry", "rules", "calibration", "vision", "web"]
LEARNING_STACK = {"torch", "torchvision", "ultralytics"}


def imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def sources(package: str) -> list[Path]:
    return [p for p in (ROOT / package).rglob("*.py") if "training" not in p.relative_to(ROOT).parts]


def test_geometry_and_rules_never_touch_pixels_or_torch() -> None:
    for package in ("geometry", "rules"):
        for path in sources(package):
            roots = {name.split(".")[0] for name in imports(path, top_level_only=False)}
            assert not roots & {"cv2", *LEARNING_STACK}, (
                f"{path.relative_to(ROOT)} imports {roots & {'cv2', *LEARNING_STACK}}"
            )


def test_runtime_code_never_imports_training_code_or_the_learning_stack() -> None:
    for package in RUNTIME:
        for path in sources(package):
            every = imports(path, top_level_only=False)
            roots = {name.split(".")[0] for name in every}
            assert not roots & LEARNING_STACK, f"{path.relative_to(ROOT)} imports {roots & LEARNING_STACK}"
            training = {n for n in every if n.startswith("vision.training")}
            if path.relative_to(ROOT) == Path("tablesight/cli.py"):
                assert not {n for n in imports(path, top_level_only=True) if n.startswith("vision.training")}
            else:
                assert not training, f"{path.relative_to(ROOT)} imports {training}"


def test_loading_the_product_loads_no_torch() -> None:
    code = (
        "import sys, tablesight.cli, vision.analyze, vision.detect_learned, web.app\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'ultralytics', 'vision'}"
        " and (m.startswith('vision.training') or not m.startswith('vision'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
