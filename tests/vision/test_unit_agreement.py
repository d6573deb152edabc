"""Unit-mates agree on size and player (vision/unit_agreement.py).

The premise is the rules' coherency: Affinity: Focal Point, "Coherency": "Models in a formation must remain
within 2 inches of at least one other model in the same formation", so a formation's bases stand close together.
"""

from __future__ import annotations

import numpy as np

from vision.unit_agreement import NEIGHBOUR_GAP_IN, TEAM_SURE_MARGIN, agree_players, agree_sizes

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


def test_ovals_are_left_alone() -> None:
    x, y = _row(3, 60, 0.3)
    assert agree_sizes(np.array(x), np.array(y), ["60", "60x35", "60"], ["red"] * 3) == ["60", "60x35", "60"]


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
