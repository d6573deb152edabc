"""The learned card finder (vision/flux/cards_learned.py): which card lies on which.
(Its training path end to end: tests/vision/test_training_smoke.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from shapely import Polygon, unary_union

from tests.vision.test_flux_read import _paint
from vision.flux.cards import PX_PER_IN, _EdgeEvidence, card_corners
from vision.flux.cards_learned import stacking_order
from vision.flux.layout import CARD_H_IN, CARD_W_IN
from vision.synth.flux_table import card_face, random_design


@pytest.mark.parametrize("seed", range(1, 21))
def test_stacking_order_puts_the_card_laid_last_on_top(seed: int) -> None:
    """A fan and a messy pile, laid in a known order: the order found is the reverse of the laying."""
    rng = np.random.default_rng(seed)
    view = np.full((400, 500, 3), 80.0, np.float32) + rng.normal(0, 3, (400, 500, 3)).astype(np.float32)
    faces = [card_face(random_design(np.random.default_rng(seed * 10 + k)), 120, 168) for k in range(5)]
    fan = [(5.0 + 1.1 * k, 8.0 + 0.15 * abs(k - 2), -24.0 + 12.0 * k) for k in range(5)]
    pile = [(14.0 + rng.normal(0, 0.6), 8.0 + rng.normal(0, 0.6), rng.uniform(0, 180)) for _ in range(3)]
    laid = fan + pile
    for k, pose in enumerate(laid):
        _paint(view, faces[k % 5], *pose)
    image = np.clip(view, 0, 255).astype(np.uint8)
    shuffled = rng.permutation(len(laid))
    poses = np.array([[laid[k][0] * PX_PER_IN, laid[k][1] * PX_PER_IN, laid[k][2] % 180] for k in shuffled])
    order = stacking_order(poses, CARD_W_IN * PX_PER_IN, CARD_H_IN * PX_PER_IN, _EdgeEvidence(image), image)
    found = [int(shuffled[k]) for k in order]
    fan_found = [k for k in found if k < 5]
    assert fan_found == [4, 3, 2, 1, 0]  # each fan card lies on the one laid before it
    pile_found = [k for k in found if k >= 5]
    outline = [Polygon(card_corners(x, y, r, CARD_W_IN, CARD_H_IN)) for x, y, r in laid]
    for a in range(5, 8):
        for b in range(a + 1, 8):  # b was laid on a
            shown = outline[a].intersection(outline[b]).difference(unary_union(outline[b + 1 :] or [Polygon()]))
            if shown.area >= 0.1 * CARD_W_IN * CARD_H_IN:  # where they overlap shows: which is on top matters
                assert pile_found.index(b) < pile_found.index(a)
