"""The tracker's minimum-cost assignment against every pairing, on seeded random costs."""

import itertools

import numpy as np
import pytest

from vision.live.assignment import min_cost_assignment


def test_the_assignment_costs_no_more_than_any_other_pairing() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        rows = int(rng.integers(1, 6))
        cost = rng.random((rows, int(rng.integers(rows, 8)))) * 10
        column = min_cost_assignment(cost)
        assert len(set(column)) == rows
        best = min(sum(cost[i, p[i]] for i in range(rows)) for p in itertools.permutations(range(cost.shape[1]), rows))
        assert sum(cost[i, column[i]] for i in range(rows)) == pytest.approx(best)


def test_more_rows_than_columns_is_refused() -> None:
    with pytest.raises(ValueError, match="3 rows but only 2 columns"):
        min_cost_assignment(np.zeros((3, 2)))
