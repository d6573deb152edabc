"""eval-vision on rendered tables: its counts come from the truth, and it says which bases the camera could see."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from vision.evaluate import SEEN_RIM_SHARE, evaluate, render_dataset
from vision.synth.table import render_table


def test_a_hand_over_a_base_hides_its_rim_from_the_truth() -> None:
    # The renderer records how much of each rim the camera sees, so a report can tell a miss the pixels
    # could not show (a base under a hand) from one they could.
    table = render_table(5010, hard="none")  # seeds 5000+: held out
    under = min(table.scene["models"], key=lambda m: np.hypot(m["x"] - 11.6, m["y"] - 8.3))  # below the camera
    assert min(table.rim_visible.values()) > 0.5  # a figure hides some of its own rim; nothing else here
    handled = render_table(5010, hard="none", hand_at=(under["x"], under["y"]))
    assert handled.rim_visible[under["id"]] < SEEN_RIM_SHARE
    assert all(handled.rim_visible[k] <= v for k, v in table.rim_visible.items())


def test_eval_vision_counts_against_the_truth(tmp_path: Path) -> None:
    render_dataset(tmp_path, 2, seed=5020)
    report = evaluate(tmp_path, tmp_path / "rows.csv", "learned")
    rows = list(csv.DictReader((tmp_path / "rows.csv").read_text(encoding="utf-8").splitlines()))
    truths = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(tmp_path.glob("*.truth.json"))]
    assert len(rows) == report["images"] == 2
    assert report["lens"] == str(tmp_path / "lens.json")  # the renders' lens, said so in the report
    assert [int(r["bases_true"]) for r in rows] == [len(t["scene"]["models"]) for t in truths]
    seen = sum(v >= SEEN_RIM_SHARE for t in truths for v in t["rim_visible"].values())
    assert report["bases"]["seen"] == sum(int(r["bases_seen"]) for r in rows) == seen > 0
    matched = sum(int(r["bases_matched"]) for r in rows)
    assert report["bases"]["recall"] == matched / sum(int(r["bases_true"]) for r in rows) > 0.8
    seen_matched = sum(int(r["bases_seen_matched"]) for r in rows)
    assert report["bases"]["recall_seen"] == seen_matched / seen
    assert seen_matched <= matched
