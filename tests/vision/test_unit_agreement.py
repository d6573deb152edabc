"""Unit-mates agree on size and player (vision/unit_agreement.py).

The premise is the rules' coherency: Affinity: Focal Point, "Coherency": "Models in a formation must remain
within 2 inches of at least one other model in the same formation", so a formation's bases stand close together.
"""

from __future__ import annotations

import numpy as np

from vision.detections import ROUND_SIZES
from vision.unit_agreement import (
    MATE_GAP_IN,
    NEIGHBOUR_GAP_IN,
    RULED_OUT_P,
    SURE_SIZE_P,
    TEAM_SURE_MARGIN,
    agree_players,
    agree_sizes,
    agree_with_mates,
)

MM = 1 / 25.4


def _row(count: int, size_mm: float, gap_in: float, y_in: float = 10.0) -> tuple[list[float], list[float]]:
    """Centres of ``count`` round bases in a row, ``gap_in`` apart edge to edge."""
    step = size_mm * MM + gap_in
    return [5.0 + k * step for k in range(count)], [y_in] * count


def test_a_base_read_a_size_off_takes_the_size_its_unit_mates_agree_on() -> None:
    x, y = _row(3, 28.5, 0.5)
    assert agree_sizes(np.array(x), np.array(y), ["28.5", "25", "28.5"], ["red"] * 3) == ["28.5"] * 3


def test_sizes_are_kept_where_the_neighbours_do_not_agree_or_are_too_few() -> None:
    x, y = _row(3, 28.5, 0.5)
    # The neighbours disagree: 25 and 32 are both one step from 28.5, none has two votes.
    assert agree_sizes(np.array(x), np.array(y), ["25", "28.5", "32"], ["red"] * 3) == ["25", "28.5", "32"]
    # One neighbour alone cannot outvote a base.
    x2, y2 = _row(2, 28.5, 0.5)
    assert agree_sizes(np.array(x2), np.array(y2), ["28.5", "25"], ["red"] * 2) == ["28.5", "25"]
    # Neighbours of the other player are another unit.
    assert agree_sizes(np.array(x), np.array(y), ["28.5", "25", "28.5"], ["blue", "red", "blue"]) == [
        "28.5",
        "25",
        "28.5",
    ]
    # Too far apart to be unit-mates.
    x3, y3 = _row(3, 28.5, NEIGHBOUR_GAP_IN + 0.3)
    assert agree_sizes(np.array(x3), np.array(y3), ["28.5", "25", "28.5"], ["red"] * 3) == ["28.5", "25", "28.5"]
    # More than one size step away (25 against 40) is no misreading: kept.
    x4, y4 = _row(3, 40, 0.3)
    assert agree_sizes(np.array(x4), np.array(y4), ["40", "25", "40"], ["red"] * 3) == ["40", "25", "40"]


def test_a_base_the_refiner_read_surely_keeps_its_size_beside_another_unit() -> None:
    # Two units of one player side by side (40 mm and 50 mm bases): the neighbours' size is another unit's, and
    # a sure read stands. Read unsurely, the same base takes its neighbours' size as before.
    x, y = _row(3, 50, 0.3)
    sizes = ["50", "40", "50"]
    sure = _read({"50": 1.0}, {"40": SURE_SIZE_P}, {"50": 1.0})
    assert agree_sizes(np.array(x), np.array(y), sizes, ["red"] * 3, sure) == sizes
    unsure = _read({"50": 1.0}, {"40": 0.7, "50": 0.3}, {"50": 1.0})
    assert agree_sizes(np.array(x), np.array(y), sizes, ["red"] * 3, unsure) == ["50"] * 3


def test_ovals_are_left_alone() -> None:
    x, y = _row(3, 60, 0.3)
    assert agree_sizes(np.array(x), np.array(y), ["60", "60x35", "60"], ["red"] * 3) == ["60", "60x35", "60"]


def _read(*sizes_p: dict[str, float]) -> np.ndarray:
    """(N, len(ROUND_SIZES)) the refiner's probabilities, each base's given as {size: P} (the rest 0)."""
    out = np.zeros((len(sizes_p), len(ROUND_SIZES)))
    for k, probs in enumerate(sizes_p):
        for size, p in probs.items():
            out[k, ROUND_SIZES.index(size)] = p
    return out


def test_an_unsure_read_takes_the_size_a_surer_unit_mate_reads_a_coherency_away() -> None:
    # Tuning table 06209 (docs/vision.md, session 35): a 25 mm base read 28.5 at P 0.77 beside mates read 25.
    # The mate 1.5" away is beyond agree_sizes' reach and alone, but within the 2" of coherency.
    x, y = _row(2, 25, 1.5)
    probs = _read({"25": 0.23, "28.5": 0.77}, {"25": 0.999})
    assert MATE_GAP_IN > 1.5
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25"], ["red"] * 2, probs) == ["25", "25"]
    # Two unsure reads of each other: only the less sure one gives way (no swap).
    probs = _read({"25": 0.23, "28.5": 0.77}, {"25": 0.9, "28.5": 0.1})
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25"], ["red"] * 2, probs) == ["25", "25"]


def test_two_mates_do_not_trade_sizes_on_each_others_old_reads() -> None:
    # Tuning table 13019 (docs/vision.md, session 49): a 28.5 mm unit in a row, 1.5" apart. The first base's
    # only mate within 2" is the second, misread 25 at P 0.95; the second's mates read 28.5, one surely.
    # Judged on the reads alone, the first took 25 while the second took 28.5: they traded the wrong size on.
    x, y = _row(3, 28.5, 1.5)
    probs = _read({"25": 0.21, "28.5": 0.79}, {"25": 0.95, "28.5": 0.05}, {"28.5": 0.99})
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25", "28.5"], ["red"] * 3, probs) == ["28.5"] * 3
    # A mate that keeps its size still gives it: the first base takes 25 when the second is sure of it.
    probs = _read({"25": 0.21, "28.5": 0.79}, {"25": 0.995, "28.5": 0.005}, {"28.5": 0.99})
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25", "28.5"], ["red"] * 3, probs) == [
        "25",
        "25",
        "28.5",
    ]


def test_a_base_whose_colour_barely_decides_its_player_takes_mates_of_either_player() -> None:
    # Tuning table 06483 (docs/vision.md, session 49): a 28.5 mm base misread 25 at P 0.92 and given to blue by
    # a colour barely nearer blue's; its unit-mates beside it are read 28.5, in red.
    x, y = _row(3, 28.5, 0.6)
    probs = _read({"28.5": 0.85, "25": 0.15}, {"25": 0.92, "28.5": 0.08}, {"28.5": 0.98, "25": 0.02})
    players = ["red", "blue", "red"]
    unsure = np.array([[5.0, 30.0], [10.0, 8.0], [4.0, 28.0]])  # Lab distances to red and blue
    assert TEAM_SURE_MARGIN > 10.0 - 8.0
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25", "28.5"], players, probs, unsure) == ["28.5"] * 3
    # A colour that decides keeps the base to its player: in a melee the enemy beside it is no unit-mate.
    clear = np.array([[5.0, 30.0], [10.0 + TEAM_SURE_MARGIN, 8.0], [4.0, 28.0]])
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25", "28.5"], players, probs, clear) == [
        "28.5",
        "25",
        "28.5",
    ]
    # Without colour distances, as before: players as given.
    assert agree_with_mates(np.array(x), np.array(y), ["28.5", "25", "28.5"], players, probs) == ["28.5", "25", "28.5"]


def test_a_sure_read_a_ruled_out_size_or_a_split_unit_keeps_its_own_size() -> None:
    x, y = _row(3, 32, 0.5)
    mates_sure = {"40": 1.0}
    # A leader on a bigger base, read surely, among his unit's 40 mm bases.
    probs = _read(mates_sure, {"32": SURE_SIZE_P}, mates_sure)
    assert agree_with_mates(np.array(x), np.array(y), ["40", "32", "40"], ["red"] * 3, probs) == ["40", "32", "40"]
    # The refiner gave the mates' size next to no chance.
    probs = _read(mates_sure, {"32": 0.9, "28.5": 0.1 - RULED_OUT_P / 2, "40": RULED_OUT_P / 2}, mates_sure)
    assert agree_with_mates(np.array(x), np.array(y), ["40", "32", "40"], ["red"] * 3, probs) == ["40", "32", "40"]
    # The mates disagree (one 40, one 28.5: neither two in three).
    probs = _read(mates_sure, {"32": 0.6, "40": 0.2, "28.5": 0.2}, {"28.5": 1.0})
    assert agree_with_mates(np.array(x), np.array(y), ["40", "32", "28.5"], ["red"] * 3, probs) == [
        "40",
        "32",
        "28.5",
    ]
    # The other player's bases, or bases beyond coherency, are not mates.
    probs = _read(mates_sure, {"32": 0.6, "40": 0.4}, mates_sure)
    assert agree_with_mates(np.array(x), np.array(y), ["40", "32", "40"], ["blue", "red", "blue"], probs) == [
        "40",
        "32",
        "40",
    ]
    x_far, y_far = _row(3, 32, MATE_GAP_IN + 0.2)
    assert agree_with_mates(np.array(x_far), np.array(y_far), ["40", "32", "40"], ["red"] * 3, probs) == [
        "40",
        "32",
        "40",
    ]
    # With the same reads close together it would give way: the cases above are kept for the reason named.
    assert agree_with_mates(np.array(x), np.array(y), ["40", "32", "40"], ["red"] * 3, probs) == ["40"] * 3
    # A base the refiner did not read (NaN: measured by its outline) is left alone.
    probs[1] = np.nan
    assert agree_with_mates(np.array(x), np.array(y), ["40", "32", "40"], ["red"] * 3, probs) == ["40", "32", "40"]


def test_a_base_whose_colour_barely_decides_goes_with_its_unit_mates() -> None:
    x, y = _row(3, 32, 0.4)
    # (N, players) colour distances to red and blue: the middle base is barely nearer red.
    distances = np.array([[30.0, 8.0], [12.0, 13.0], [28.0, 6.0]])
    players = ["blue", "red", "blue"]
    assert agree_players(np.array(x), np.array(y), ["32"] * 3, players, distances) == ["blue"] * 3


def test_a_base_whose_colour_is_clear_keeps_its_player_surrounded_by_the_enemy() -> None:
    # A melee: one red base in contact with four blue ones, all of the same size, all clearly coloured.
    x = np.array([10.0, 10.0 + 1.3, 10.0 - 1.3, 10.0, 10.0])
    y = np.array([10.0, 10.0, 10.0, 10.0 + 1.3, 10.0 - 1.3])
    distances = np.array([[5.0, 5.0 + TEAM_SURE_MARGIN], [30.0, 8.0], [28.0, 6.0], [29.0, 7.0], [31.0, 9.0]])
    players = ["red", "blue", "blue", "blue", "blue"]
    assert agree_players(x, y, ["32"] * 5, players, distances) == players


def test_only_neighbours_of_the_same_size_and_close_by_vote_on_the_player() -> None:
    distances = np.array([[30.0, 8.0], [12.0, 13.0], [28.0, 6.0]])
    players = ["blue", "red", "blue"]
    x, y = _row(3, 32, 0.4)
    sizes = ["50", "32", "50"]  # a different unit's bases beside it
    assert agree_players(np.array(x), np.array(y), sizes, players, distances) == players
    x_far, y_far = _row(3, 32, NEIGHBOUR_GAP_IN + 0.5)
    assert agree_players(np.array(x_far), np.array(y_far), ["32"] * 3, players, distances) == players
    # Without colour evidence for two players there is nothing to weigh.
    assert agree_players(np.array(x), np.array(y), ["32"] * 3, players, np.zeros((3, 1))) == players
