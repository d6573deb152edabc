"""Coherency graphs: the spec example and hand-drawn tricky cases."""

from __future__ import annotations

import numpy as np
import pytest

from geometry.coherency import coherency, connected_groups
from geometry.distance import pairwise_distance_in, vertical_gap_in
from geometry.measure import Verdict
from geometry.shapes import Footprints

R32 = 32 / 2 / 25.4


def line_of_bases(xs: list[float], ys: list[float] | None = None, base: str = "32", **kw: object) -> np.ndarray:
    fp = Footprints.from_bases(xs, ys if ys is not None else [0.0] * len(xs), [base] * len(xs), **kw)  # type: ignore[arg-type]
    return pairwise_distance_in(fp)


def test_spec_example_wardens_in_coherency() -> None:
    # scene-format.md: 2.5" apart centre to centre, 1.24" edge to edge, coherency 2" (Focal Point).
    report = coherency(line_of_bases([4.0, 6.5]), 2.0)
    assert report.verdict is Verdict.YES
    assert report.nearest_distance_in[0] == pytest.approx(1.2402, abs=1e-4)


def test_chain_is_coherent_though_ends_are_far_apart() -> None:
    # affinity-focal-point.md Coherency: "within 2 inches of at least one other model".
    xs = [0.0, 3.0, 6.0, 9.0, 12.0]  # neighbours 1.74" apart edge to edge, ends 10.7" apart
    report = coherency(line_of_bases(xs), 2.0)
    assert report.verdict is Verdict.YES
    assert report.connected and report.lacking == ()


def test_two_groups_each_fine_inside_are_out_of_coherency() -> None:
    xs = [0.0, 2.0, 10.0, 12.0]
    report = coherency(line_of_bases(xs), 2.0)
    assert report.verdict is Verdict.NO
    assert report.lacking == ()  # every model has a neighbour...
    assert report.groups == ((0, 1), (2, 3))  # ...but the unit is split


def test_one_model_out_is_named() -> None:
    xs = [0.0, 2.0, 4.0, 7.5]
    report = coherency(line_of_bases(xs), 2.0)
    assert report.verdict is Verdict.NO
    assert report.lacking == (3,)
    assert report.nearest[3] == 2
    assert report.nearest_distance_in[3] == pytest.approx(3.5 - 2 * R32)


def test_exactly_two_inches_is_within() -> None:
    # grinding-annihilation.txt: "within 1" means any distance that is no more than 1" away".
    report = coherency(line_of_bases([0.0, 2.0 + 2 * R32]), 2.0)
    assert report.nearest_distance_in[0] == pytest.approx(2.0, abs=1e-12)
    assert report.verdict is Verdict.YES


def test_seven_troops_with_only_one_neighbour_each_at_the_ends() -> None:
    # grinding-annihilation.txt Formation Cohesion: seven or more troops need two neighbours each.
    xs = [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0]  # a chain: the end troops have one neighbour
    assert coherency(line_of_bases(xs), 2.0, min_neighbours=1).verdict is Verdict.YES
    report = coherency(line_of_bases(xs), 2.0, min_neighbours=2)
    assert report.verdict is Verdict.NO
    assert report.lacking == (0, 6)


def test_seven_troops_in_a_tight_block_have_two_neighbours() -> None:
    xs = [0.0, 1.5, 3.0, 4.5, 0.75, 2.25, 3.75]
    ys = [0.0, 0.0, 0.0, 0.0, 1.3, 1.3, 1.3]
    assert coherency(line_of_bases(xs, ys), 2.0, min_neighbours=2).verdict is Verdict.YES


def test_vertical_limit_breaks_a_link() -> None:
    # Two troops 1" apart horizontally but 6" apart vertically (a ruin's upper floor): not in cohesion.
    fp = Footprints.from_bases([0.0, 1.0 + 2 * R32], [0.0, 0.0], ["32", "32"], z_in=np.array([0.0, 6.0]))
    d, v = pairwise_distance_in(fp), vertical_gap_in(fp, fp)
    assert coherency(d, 2.0, 1, 0.0, v, 5.0).verdict is Verdict.NO
    assert coherency(d, 2.0, 1, 0.0, v, 7.0).verdict is Verdict.YES


def test_uncertain_link_makes_the_verdict_too_close_to_call() -> None:
    d = line_of_bases([0.0, 2.0 + 2 * R32 + 0.01])  # 2.01" apart
    assert coherency(d, 2.0, 1, 0.0).verdict is Verdict.NO
    report = coherency(d, 2.0, 1, 0.02)
    assert report.verdict is Verdict.TOO_CLOSE
    assert report.uncertain == (0, 1)
    assert coherency(d, 2.0, 1, 0.004).verdict is Verdict.NO  # 0.01" is beyond 2 sigma


def test_single_model_unit_is_coherent() -> None:
    assert coherency(np.zeros((1, 1)), 2.0, min_neighbours=2).verdict is Verdict.YES


def test_connected_groups() -> None:
    adjacency = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=bool)
    assert connected_groups(adjacency) == [[0, 1], [2, 3]]
