"""Bases of one unit agree: a unit's models share a base size and a player, and stand close together.

A photo does not say which bases form a unit, but unit-mates stand within an inch or so of each other
(coherency keeps them closer than 2"). Each base is read on its own, and a figure leaning over its rim,
or light washing its colour out, can make it read one size small or in the other player's colour. So
after reading every base alone, a base is checked against its close neighbours:
- size: a round base none of whose close same-player neighbours reads its size, while at least two of
  them (and two in three) agree on a size one step away, takes theirs;
- player: a base whose colour barely decides (lies less than TEAM_SURE_MARGIN Lab units nearer one player's colour than
  the next one's) is weighed with its close neighbours of the same size: its own evidence counts double,
  each neighbour's adds to that neighbour's player. A base whose colour is clear keeps its player, even
  surrounded by the enemy in a melee.
- size again, by the base refiner's probabilities (``agree_with_mates``): a base it read unsurely takes the
  size its same-player neighbours a whole coherency (2") away agree on, where one of them was read more surely
  (neighbours of either player where the base's colour barely decides its player).
A base standing alone, or whose neighbours disagree, keeps its own reading, and so does a base the refiner read
surely (SURE_SIZE_P): two units of one player may stand side by side, and a leader may stand on a bigger base.
Measured (docs/vision.md, session 19): on the tuning tables (seeds 6040-6199 and 6200-6319) size right
98.2 -> 98.3 % and 98.3 -> 98.8 %, player right 95.1 -> 95.6 % and 95.9 -> 96.5 %. With the refiner's
probabilities (session 35), sizes right on the tuning tables (seeds 6200-6359) 98.81 -> 99.38 %.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import numpy.typing as npt

from geometry.shapes import base_semi_axes_in
from vision.detections import ROUND_SIZES  # smallest first: one step is the next size

NEIGHBOUR_GAP_IN = 1.0  # edge to edge: bases this close may be unit-mates
SIZE_VOTES_MIN = 2  # neighbours that must agree on another size
SIZE_SHARE_MIN = 2 / 3  # ...and their share of the neighbours
# Lab units nearer one player's colour than the next: the base's colour decides alone. Re-measured with the
# team step's blends (session 20), whose distances run smaller: tuning tables 6200 / 6040 gain 2 bases each
# at 4-7 against 10, and lose one at 8.
TEAM_SURE_MARGIN = 6.0
TEAM_SELF_WEIGHT = 2.0  # a base's own colour evidence against each neighbour's
TEAM_MARGIN_CAP = 20.0  # Lab units: one very clear rim must not outvote the rest alone
# Unsure reads against unit-mates further off (agree_with_mates): coherency keeps a unit's models within 2" of
# each other in most of our games; a read the refiner is this sure of stands (a leader on a bigger base); a size
# the refiner gives the base less than this chance is ruled out.
MATE_GAP_IN = 2.0
SURE_SIZE_P = 0.99
RULED_OUT_P = 0.001
MATES_SHARE_MIN = 2 / 3


def _gaps_in(x_in: npt.NDArray[np.float64], y_in: npt.NDArray[np.float64], sizes: list[str]) -> npt.NDArray[np.float64]:
    """Edge-to-edge gap between every two bases (their long semi-axes), inf on the diagonal."""
    reach = np.array([max(base_semi_axes_in(s)) for s in sizes])
    gaps = np.hypot(x_in[:, None] - x_in[None, :], y_in[:, None] - y_in[None, :]) - reach[:, None] - reach[None, :]
    np.fill_diagonal(gaps, np.inf)
    return gaps


def agree_sizes(
    x_in: npt.NDArray[np.float64],
    y_in: npt.NDArray[np.float64],
    sizes: list[str],
    players: list[str],
    size_p: npt.NDArray[np.float64] | None = None,
) -> list[str]:
    """Each round base's size, put right where its close same-player neighbours agree on a size one step away.
    ``size_p``: (N, len(ROUND_SIZES)) the base refiner's probability of each size, where it read the base: a
    base it read at SURE_SIZE_P or more keeps its size (two units of one player side by side are no misreading)."""
    if len(sizes) < 3:
        return list(sizes)
    gaps = _gaps_in(np.asarray(x_in, float), np.asarray(y_in, float), sizes)
    sure = _sure_of(size_p, len(sizes))
    out = list(sizes)
    for i, size in enumerate(sizes):
        if size not in ROUND_SIZES or sure[i] >= SURE_SIZE_P:
            continue
        step = ROUND_SIZES.index(size)
        seen = [
            sizes[j]
            for j in np.flatnonzero(gaps[i] <= NEIGHBOUR_GAP_IN)
            if players[j] == players[i] and sizes[j] in ROUND_SIZES and abs(ROUND_SIZES.index(sizes[j]) - step) <= 1
        ]
        if len(seen) < SIZE_VOTES_MIN or size in seen:
            continue
        other, votes = Counter(seen).most_common(1)[0]
        if votes >= SIZE_VOTES_MIN and votes >= SIZE_SHARE_MIN * len(seen):
            out[i] = other
    return out


def _sure_of(size_p: npt.NDArray[np.float64] | None, n: int) -> npt.NDArray[np.float64]:
    """(N,) how surely the base refiner named each base's size: its largest probability (0 where it did not read
    the base, or no probabilities were given)."""
    if size_p is None or np.shape(size_p) != (n, len(ROUND_SIZES)):
        return np.zeros(n)
    return np.asarray(np.nan_to_num(np.asarray(size_p, float), nan=0.0).max(axis=1), float)


def team_margins(distances: npt.NDArray[np.float64] | None, n: int) -> npt.NDArray[np.float64]:
    """(N,) how much nearer each base's colour lies to its nearest player's than to the next one's (Lab units;
    inf where there are no distances, or fewer than two players: nothing to doubt)."""
    d = None if distances is None else np.asarray(distances, float)
    if d is None or d.ndim != 2 or d.shape[0] != n or d.shape[1] < 2:
        return np.full(n, np.inf)
    ordered = np.sort(d, axis=1)
    return np.asarray(ordered[:, 1] - ordered[:, 0], float)


def agree_with_mates(
    x_in: npt.NDArray[np.float64],
    y_in: npt.NDArray[np.float64],
    sizes: list[str],
    players: list[str],
    size_p: npt.NDArray[np.float64],
    colour_distances: npt.NDArray[np.float64] | None = None,
) -> list[str]:
    """Each round base's size, put right where the refiner read it unsurely and its unit-mates agree on another.

    ``size_p``: (N, len(ROUND_SIZES)) the base refiner's probability of each size (NaN rows: not read by it).
    A base read below SURE_SIZE_P takes the size its round same-player neighbours within MATE_GAP_IN (edge to
    edge) name, where at least MATES_SHARE_MIN of them name it, one of those read it more surely than the base
    read its own size, and the refiner gave the base at least RULED_OUT_P of it. ``colour_distances``: (N,
    players) as ``agree_players`` takes them; a base whose colour barely decides its player (under
    TEAM_SURE_MARGIN) may have been given the wrong one, so its mates are its round neighbours of either player
    (same 5,106 bases: 4 put right, 1 made wrong; held-out 300: sizes 98.91 -> 99.00 %, docs/vision.md, session 49).
    Unlike ``agree_sizes`` it reaches a whole coherency away, and a single mate may decide, since the refiner's
    probabilities say whose read to trust; a base whose mates disagree keeps its own read. Tuning tables (seeds 6200-6359, 1932 bases
    found): sizes right 1909 -> 1920, 12 put right and 1 made wrong (docs/vision.md, session 35)."""
    size_p = np.asarray(size_p, float)
    if len(sizes) < 2 or size_p.shape != (len(sizes), len(ROUND_SIZES)):
        return list(sizes)
    gaps = _gaps_in(np.asarray(x_in, float), np.asarray(y_in, float), sizes)
    sure = _sure_of(size_p, len(sizes))
    margin = team_margins(colour_distances, len(sizes))
    out = list(sizes)
    given_by: dict[int, list[int]] = {}  # base -> the surer mates whose size it took
    for i, size in enumerate(sizes):
        if size not in ROUND_SIZES or np.isnan(size_p[i]).any() or sure[i] >= SURE_SIZE_P:
            continue
        any_player = margin[i] < TEAM_SURE_MARGIN
        mates = [
            j
            for j in np.flatnonzero(gaps[i] <= MATE_GAP_IN)
            if (any_player or players[j] == players[i]) and sizes[j] in ROUND_SIZES
        ]
        if not mates:
            continue
        other, votes = Counter(sizes[j] for j in mates).most_common(1)[0]
        if other == size or votes < MATES_SHARE_MIN * len(mates):
            continue
        if size_p[i, ROUND_SIZES.index(other)] < RULED_OUT_P:
            continue
        surer = [j for j in mates if sizes[j] == other and sure[j] > sure[i]]
        if surer:
            out[i] = other
            given_by[i] = surer
    # Every base is judged on the sizes as read, so two mates could trade sizes: a base that took its size
    # from mates who all give that size up themselves keeps its own read (tuning tables and the fresh 200,
    # 5,106 bases: 1 put right, none made wrong; docs/vision.md, session 49).
    kept = list(out)
    for i, givers in given_by.items():
        if all(out[j] != out[i] for j in givers):
            kept[i] = sizes[i]
    return kept


def agree_players(
    x_in: npt.NDArray[np.float64],
    y_in: npt.NDArray[np.float64],
    sizes: list[str],
    players: list[str],
    distances: npt.NDArray[np.float64],
) -> list[str]:
    """Each base's player; where its colour barely decides, weighed with its close neighbours of the same size.
    ``distances``: (N, players) how
    far each base's colour lies from each player's (``vision.analyze.team_evidence``)."""
    distances = np.asarray(distances, float)
    if len(players) < 2 or distances.ndim != 2 or distances.shape[1] < 2:
        return list(players)
    weight = np.minimum(team_margins(distances, len(players)), TEAM_MARGIN_CAP)
    gaps = _gaps_in(np.asarray(x_in, float), np.asarray(y_in, float), sizes)
    out = list(players)
    for i in range(len(players)):
        if weight[i] >= TEAM_SURE_MARGIN:
            continue
        votes: dict[str, float] = {players[i]: TEAM_SELF_WEIGHT * weight[i]}  # first: a tie keeps its own
        for j in np.flatnonzero(gaps[i] <= NEIGHBOUR_GAP_IN):
            if sizes[j] == sizes[i] and players[j]:
                votes[players[j]] = votes.get(players[j], 0.0) + weight[j]
        out[i] = max(votes, key=lambda p: votes[p])
    return out
