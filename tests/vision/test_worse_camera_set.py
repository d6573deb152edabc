"""benchmarks/worse_camera_set.py: a rendered set as a worse camera takes it (docs/vision.md, session 55)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "benchmarks" / "worse_camera_set.py")
TABLESIGHT = str(Path(sys.executable).parent / "tablesight")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=300)


def test_a_set_is_copied_as_a_worse_camera_takes_it_the_same_each_time(tmp_path: Path) -> None:
    src = tmp_path / "src"
    done = subprocess.run([TABLESIGHT, "render-tables", str(src), "--count", "1", "--seed", "5000"], timeout=300)
    assert done.returncode == 0
    for mode, value in (("noise", "8"), ("stream", "60")):
        outs = [tmp_path / f"{mode}{k}" for k in range(2)]
        for out in outs:
            result = _run(str(src), str(out), "--mode", mode, "--value", value)
            assert result.returncode == 0, result.stderr
            assert f"1 tables to {out}, {mode} {value}" in result.stdout
        for name in ("05000.jpg", "05000.empty.jpg", "05000.truth.json", "lens.json"):
            assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()  # seeded
        assert (outs[0] / "05000.truth.json").read_bytes() == (src / "05000.truth.json").read_bytes()
        before, after = cv2.imread(str(src / "05000.jpg")), cv2.imread(str(outs[0] / "05000.jpg"))
        assert before.shape == after.shape
        assert 1.0 < float(np.abs(before.astype(np.int16) - after).mean()) < 20.0


def test_a_folder_with_no_rendered_tables_is_named(tmp_path: Path) -> None:
    result = _run(str(tmp_path), str(tmp_path / "out"), "--mode", "jpeg", "--value", "50")
    assert result.returncode == 2
    assert f"{tmp_path}: no rendered tables" in result.stderr
