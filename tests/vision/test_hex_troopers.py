"""Troopers put in hexes as Onefinity players put them (vision/synth/hex_troopers.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geometry.hexgrid import HexGrid
from geometry.shapes import base_semi_axes_in
from vision.synth.hex_troopers import PLACED_WITHIN_IN, TROOPER_BASES, troopers_in_hexes
from vision.synth.table import HEX_MATS, plan_table, render_table


@pytest.mark.parametrize("seed", [24, 32, 5000])
def test_one_trooper_to_a_hex_near_its_centre_and_no_bases_touching(seed: int) -> None:
    models_at, lifted = troopers_in_hexes(seed)
    plan = plan_table(np.random.default_rng(seed), "onefinity")
    base_of = {m["id"]: m["base"] for m in plan.models}
    assert set(models_at) | lifted == set(base_of) and not set(models_at) & lifted
    assert all(base_of[m] in TROOPER_BASES for m in models_at) and models_at
    spec = HEX_MATS["onefinity"]
    grid = HexGrid(spec["width_in"], spec["orientation"], spec["origin_x_in"], spec["origin_y_in"])
    ids = sorted(models_at)
    q, r = grid.to_hex([models_at[m][0] for m in ids], [models_at[m][1] for m in ids])
    assert len(set(zip(q.tolist(), r.tolist(), strict=True))) == len(ids)  # one to a hex
    cx, cy = grid.to_table(q, r)
    for k, m in enumerate(ids):
        assert math.hypot(models_at[m][0] - cx[k], models_at[m][1] - cy[k]) <= PLACED_WITHIN_IN + 1e-4
        for other in ids[k + 1 :]:
            gap = math.dist(models_at[m], models_at[other])
            assert gap >= base_semi_axes_in(base_of[m])[0] + base_semi_axes_in(base_of[other])[0]


def test_the_rendered_table_holds_the_troopers_where_they_were_put() -> None:
    models_at, lifted = troopers_in_hexes(24)
    scene = render_table(24, "onefinity", models_at=models_at, lifted=lifted).scene
    assert {m["id"]: (m["x"], m["y"]) for m in scene["models"]} == models_at
