"""The refiner's validation split keeps each rendered table on one side (vision/training/refiner.py)."""

from __future__ import annotations

import numpy as np

from vision.training.refiner import validation_split


def test_every_table_is_validated_on_or_fitted_on_never_both() -> None:
    rng = np.random.default_rng(3)
    tables = np.repeat(np.arange(50), rng.integers(20, 120, 50))  # 50 tables of 20-119 crops each
    fit, val = validation_split(tables, len(tables), 0.1, seed=0)
    assert sorted(np.concatenate([fit, val])) == list(range(len(tables)))  # every sample, once
    assert not set(tables[fit]) & set(tables[val])
    assert len(set(tables[val])) == 5  # a tenth of the tables
    again_fit, again_val = validation_split(tables, len(tables), 0.1, seed=0)
    assert np.array_equal(val, again_val) and np.array_equal(fit, again_fit)  # seeded


def test_samples_without_their_tables_are_split_by_sample() -> None:
    fit, val = validation_split(None, 1000, 0.1, seed=0)
    assert len(val) == 100 and len(fit) == 900 and not set(fit) & set(val)


def test_no_share_validates_on_every_sample() -> None:
    """Adapting on a few confirmed frames (vision/training/adapt.py) has none to spare: fit and validate on all."""
    tables = np.repeat(np.arange(3), 40)
    fit, val = validation_split(tables, len(tables), 0.0, seed=0)
    assert list(fit) == list(val) == list(range(len(tables)))
