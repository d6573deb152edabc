"""Reading Affinity: Flux tables: card finding, design registration, pools (rules: ../shared/rulebooks/affinity-flux.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.table_frame import calibrate
from vision.flux.cards import PX_PER_IN, card_corners, find_cards
from vision.flux.designs import DesignError, Designs
from vision.flux.layout import CARD_H_IN, CARD_W_IN, FluxLayout, FluxLayoutError
from vision.flux.read import count_life_tokens, read_flux_table, register_designs
from vision.synth.flux_table import card_face, random_design, render_flux_table
from vision.synth.table import webcam_lens


@pytest.fixture(scope="module")
def lens():  # type: ignore[no-untyped-def]
    return webcam_lens(0)


def _paint(
    view: np.ndarray, face: np.ndarray, x_in: float, y_in: float, rot_deg: float, px_per_in: float = PX_PER_IN
) -> None:
    """Lay a card face into a top view at ``px_per_in`` (rotation as card_corners measures it)."""
    h, w = face.shape[:2]
    k = px_per_in
    corners = card_corners(x_in * k, y_in * k, rot_deg, CARD_W_IN * k, CARD_H_IN * k)
    src = np.float32([[0, 0], [w, 0], [w, h]])
    M = cv2.getAffineTransform(src, corners[:3].astype(np.float32))
    size = (view.shape[1], view.shape[0])
    mask = cv2.warpAffine(np.ones((h, w), np.float32), M, size)[..., None]
    view[:] = (view * (1 - mask) + cv2.warpAffine(face, M, size) * mask).astype(view.dtype)


def test_cards_apart_are_found_with_their_pose() -> None:
    rng = np.random.default_rng(3)
    view = np.full((300, 400, 3), 90.0, np.float32)
    view += rng.normal(0, 3, view.shape).astype(np.float32)
    faces = [card_face(random_design(np.random.default_rng(k)), 120, 168) for k in (1, 2)]
    poses = [(4.0, 6.0, 10.0), (11.0, 6.2, 125.0)]
    for face, pose in zip(faces, poses, strict=True):
        _paint(view, face, *pose)
    found = find_cards(np.clip(view, 0, 255).astype(np.uint8), CARD_W_IN, CARD_H_IN)
    assert len(found) == 2
    for x, y, rot in poses:
        card = min(found, key=lambda c: math.hypot(c.x_in - x, c.y_in - y))
        assert math.hypot(card.x_in - x, card.y_in - y) < 0.06
        gap = abs(card.rotation_deg - rot) % 180
        assert min(gap, 180 - gap) < 2.0
        assert card.visible_area > 0.95 and card.support > 0.9


def _pool_layout(seed: int) -> tuple[np.ndarray, list[tuple[float, float, float]]]:
    """Five cards laid as a Source Pool, overlapping in a row (even seeds) or a fan (odd seeds), on a plain
    mat; each card but the last laid shows 40-60 % of itself. Returns the view and the poses."""
    rng = np.random.default_rng(100 + seed)
    view = np.full((260, 420, 3), rng.uniform(40, 160, 3), np.float32)
    view += rng.normal(0, 4, view.shape).astype(np.float32)
    faces = [card_face(random_design(np.random.default_rng(10 * seed + k)), 120, 168) for k in range(2)]
    fan = seed % 2 == 1
    step_in = rng.uniform(1.0, 1.5)  # a card is 2.48" wide
    poses = []
    for k in range(5):
        turn = (k - 2) * rng.uniform(8, 12) if fan else rng.uniform(-4, 4)
        poses.append((4.0 + k * step_in, 5.0 + (abs(k - 2) * 0.25 if fan else rng.uniform(-0.2, 0.2)), turn % 180))
    for pose in poses:  # the card laid last lies on top
        _paint(view, faces[int(rng.integers(2))], *pose)
    return np.clip(view, 0, 255).astype(np.uint8), poses


def test_the_cards_of_overlapping_rows_and_fans_are_found() -> None:
    """Source Pools of five cards (Affinity: Flux > Source Cards > Drawing Source: five are drawn face-up into
    the pool) laid overlapping: the lower cards are found where they lie, not a border's width off (a card
    fitted onto its own border's inner edge). Over 12 layouts: the cards found in the right place (57 of 60
    now; 56 before a card seen through stopped being taken as the top one, 57 before the cards kept were
    grown to hide their own edges; the fit before it: 32) and the layouts read exactly (9 of 12; 8, 9
    and 1 before those). Known misses: stripes running along a card's
    side next to a dark border still stand in for a card's side, and a card showing a narrow strip beside
    a card above it."""
    right = exact = 0
    for seed in range(12):
        view, poses = _pool_layout(seed)
        found = find_cards(view, CARD_W_IN, CARD_H_IN)
        placed = 0
        for x, y, rot in poses:
            card = min(found, key=lambda c: math.hypot(c.x_in - x, c.y_in - y))
            gap = abs(card.rotation_deg - rot) % 180
            # 0.1" is 2.5 px of the top view: on the card's own edges, not a neighbour's.
            placed += math.hypot(card.x_in - x, card.y_in - y) < 0.1 and min(gap, 180 - gap) < 3.0
        right += placed
        exact += placed == 5 and len(found) == 5
    assert right >= 56, right  # of 60
    assert exact >= 8, exact  # of 12


def test_in_a_row_overlapping_by_half_a_card_no_card_is_laid_over_the_one_between() -> None:
    """A Source Pool laid as a row, each card half a card's width along from the last (Affinity: Flux >
    Source Cards > Drawing Source: five cards face-up in front of the board). The card two places down
    has its far side on the side of the card two places up, so it shows a whole outline and can rank
    first by a hair; laid on top, it would hide the card between, whose side runs across its face. A card
    with another card's side seen across its face is not taken as the top one. Over 16 rows of one
    dark-bordered wave design (as in the tuning pool where this was found) and 16 of any design: 15 and 15
    read exactly, 78 and 77 of 80 cards found (7 and 9 exactly, 70 and 71 found, before the check)."""
    for dark_waves, min_exact, min_placed in ((True, 14, 77), (False, 13, 74)):
        exact = placed_all = 0
        for seed in range(16):
            rng = np.random.default_rng(seed)
            design = random_design(rng)
            while dark_waves and (design["pattern"] != "waves" or design["border"][0] > 100):
                design = random_design(rng)
            face = card_face(design, 120, 168)
            view = np.full((200, 360, 3), rng.uniform(60, 140, 3), np.float32)
            view += rng.normal(0, 4, view.shape).astype(np.float32)
            lay = [(0.0, 1.0), (0.03, 1.0), (-0.13, 178.5), (0.05, 3.5), (0.1, 0.0)]  # (dy_in, rotation_deg)
            poses = [(2.0 + k * 1.28, 4.0 + dy, rot) for k, (dy, rot) in enumerate(lay)]
            for pose in poses:  # the card laid last lies on top
                _paint(view, face, *pose)
            found = find_cards(np.clip(view, 0, 255).astype(np.uint8), CARD_W_IN, CARD_H_IN)
            placed = sum(any(math.hypot(c.x_in - x, c.y_in - y) < 0.1 for c in found) for x, y, _ in poses)
            placed_all += placed
            exact += placed == 5 and len(found) == 5
        assert exact >= min_exact, (dark_waves, exact)  # of 16
        assert placed_all >= min_placed, (dark_waves, placed_all)  # of 80


def test_a_card_hanging_off_the_table_edge_is_found_from_what_lies_on_the_table() -> None:
    """The top view ends at the table's edge. A Source card pushed part way off it (pools lie along the
    players' edges, Affinity: Flux > Source Cards > Drawing Source: "face-up in front of your board") shows
    only part of its outline; the table's edge, where the mat ends darker, is no evidence for or against
    it. Before the view's border was left out, none of these cards was found."""
    face = card_face(random_design(np.random.default_rng(7)), 120, 168)
    for off_in in (0.3, 0.6, 0.9, 1.2):
        rng = np.random.default_rng(5)
        view = np.full((300, 400, 3), 90.0, np.float32) + rng.normal(0, 3, (300, 400, 3)).astype(np.float32)
        y_in = 12.0 - CARD_H_IN / 2 + off_in  # the view is 12" deep
        _paint(view, face, 8.0, y_in, 3.0)
        view[-2:] *= 0.6  # the mat's end
        found = find_cards(np.clip(view, 0, 255).astype(np.uint8), CARD_W_IN, CARD_H_IN)
        assert len(found) == 1, (off_in, found)
        card = found[0]
        assert math.hypot(card.x_in - 8.0, card.y_in - y_in) < 0.06
        assert card.support > 0.95
        # What lies off the table (and on its edge) is not counted as shown: at least the far side.
        assert card.visible_outline <= 0.75, card.visible_outline


def test_an_empty_mat_has_no_cards() -> None:
    rng = np.random.default_rng(4)
    view = np.clip(rng.normal(100, 6, (300, 300, 3)), 0, 255).astype(np.uint8)
    assert find_cards(view, CARD_W_IN, CARD_H_IN) == []


def test_registration_photo_is_read_back_exactly(lens, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each pool holds only its owner's cards, so each pool's Source is its card count: your own cards are
    worth 1 Source each (Affinity: Flux > Source Cards > Spending Source)."""
    photo = render_flux_table(3, 0)
    frame = calibrate(photo.image, photo.layout, lens)
    designs = register_designs(photo.image, frame, photo.flux_layout)
    designs.save(tmp_path / "designs.json")
    designs = Designs.load(tmp_path / "designs.json")
    reading = read_flux_table(photo.image, frame, photo.flux_layout, designs)
    for player in ("A", "B"):
        n = len(photo.truth["pools"][player])
        pool = reading.pools[player]
        assert (pool.own, pool.opponent, pool.unsure) == (n, 0, 0)
        assert pool.decided and pool.low == n
    for card in reading.cards:
        truth = min(
            photo.truth["cards"], key=lambda t: math.hypot(t["x_in"] - card.card.x_in, t["y_in"] - card.card.y_in)
        )
        assert math.hypot(truth["x_in"] - card.card.x_in, truth["y_in"] - card.card.y_in) < 0.1


def test_the_renderer_is_seeded_and_its_truth_adds_up() -> None:
    a, b = render_flux_table(11, 1), render_flux_table(11, 1)
    assert np.array_equal(a.image, b.image)
    assert a.truth == b.truth
    for p in ("A", "B"):
        assert len(a.truth["pools"][p]) >= 5  # "draw 5 Source Cards" (Affinity: Flux > Source Cards > Drawing Source)
        assert 0 <= a.truth["tokens"][p] <= 5  # "Life Tokens cap at 5"
    assert all(0.0 <= c["visible_fraction"] <= 1.0 for c in a.truth["cards"])
    assert a.truth["cards"][-1]["visible_fraction"] == 1.0  # the last card laid is on top


def test_flux_layout_round_trips_and_bad_fields_are_named(tmp_path: Path) -> None:
    layout = FluxLayout.default()
    again = FluxLayout.from_json(json.loads(json.dumps(layout.to_json())))
    assert again.zones == layout.zones and abs(again.card_w_in - CARD_W_IN) < 1e-9
    bad = layout.to_json()
    bad["zones"][0]["kind"] = "hand"
    with pytest.raises(FluxLayoutError, match=r"zones\[0\]\.kind.*'hand'"):
        FluxLayout.from_json(bad, "my.json")
    bad = layout.to_json()
    bad["zones"] = [z for z in bad["zones"] if z["name"] != "B pool"]
    with pytest.raises(FluxLayoutError, match="'B' has no pool zone"):
        FluxLayout.from_json(bad)
    with pytest.raises(FluxLayoutError, match="no such Flux layout file"):
        FluxLayout.load(tmp_path / "missing.json")


def test_designs_file_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(DesignError, match="register the designs first"):
        Designs.load(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text('{"format": "tablesight-flux-designs/1", "players": {"A": {}}}')
    with pytest.raises(DesignError, match="two registered designs"):
        Designs.load(tmp_path / "bad.json")


@pytest.mark.parametrize("session", [12, 15])
def test_life_tokens_are_counted_on_each_warlord(lens, session: int) -> None:  # type: ignore[no-untyped-def]
    """ "Your Warlord begins with 5 Life Tokens on their card"; "Life Tokens cap at 5" (Affinity: Flux >
    Life Tokens (The Warlord's Reserve)): each Warlord carries 0-5 tokens, counted apart."""
    photo = render_flux_table(session, 1)
    frame = calibrate(photo.image, photo.layout, lens)
    assert count_life_tokens(photo.image, frame, photo.flux_layout) == photo.truth["tokens"]
