"""Measurements with uncertainty, compared against rule thresholds.

A comparison is *too close to call* when the threshold lies within
``k`` sigma (k = 2 by default) of the measured value. Exact measurements
(sigma 0) are compared with a 1e-6 inch tolerance so that a hand-written
"exactly 2.00 inches" counts as within 2 inches.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

EXACT_TOLERANCE_IN = 1e-6
DEFAULT_SIGMAS = 2.0


class Verdict(StrEnum):
    YES = "yes"
    NO = "no"
    TOO_CLOSE = "too_close"


def _fmt(value: float) -> str:
    return f'{value:.2f}"'


@dataclass(frozen=True)
class Comparison:
    """``value <= threshold`` (or ``>=``) decided against measurement error."""

    name: str
    value_in: float
    threshold_in: float
    sigma_in: float
    verdict: Verdict
    relation: str = "<="

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value_in": round(self.value_in, 6),
            "threshold_in": self.threshold_in,
            "sigma_in": round(self.sigma_in, 6),
            "relation": self.relation,
            "verdict": self.verdict.value,
        }

    def describe(self) -> str:
        """'2.41" (needs <= 2.00"; too close to call at +/-0.04")' style text."""
        text = f"{_fmt(self.value_in)} (needs {self.relation} {_fmt(self.threshold_in)}"
        if self.sigma_in > 0:
            text += f', measured to ±{self.sigma_in:.2f}"'
        if self.verdict is Verdict.TOO_CLOSE:
            text += "; too close to call"
        return text + ")"


def compare_at_most(
    name: str, value_in: float, threshold_in: float, sigma_in: float = 0.0, sigmas: float = DEFAULT_SIGMAS
) -> Comparison:
    """Is the measured value within (not more than) the threshold?

    >>> compare_at_most("d", 2.0, 2.0).verdict
    <Verdict.YES: 'yes'>
    >>> compare_at_most("d", 1.97, 2.0, sigma_in=0.02).verdict
    <Verdict.TOO_CLOSE: 'too_close'>
    """
    margin = threshold_in - value_in
    band = max(sigmas * sigma_in, EXACT_TOLERANCE_IN)
    if sigma_in > 0 and abs(margin) <= band:
        verdict = Verdict.TOO_CLOSE
    elif margin >= -EXACT_TOLERANCE_IN:
        verdict = Verdict.YES
    else:
        verdict = Verdict.NO
    return Comparison(name, float(value_in), float(threshold_in), float(sigma_in), verdict, "<=")


def combine_all(verdicts: list[Verdict]) -> Verdict:
    """Verdict of "all of these hold": no if any is no, else too close if any is."""
    if Verdict.NO in verdicts:
        return Verdict.NO
    if Verdict.TOO_CLOSE in verdicts:
        return Verdict.TOO_CLOSE
    return Verdict.YES


def combine_any(verdicts: list[Verdict]) -> Verdict:
    """Verdict of "at least one of these holds"."""
    if Verdict.YES in verdicts:
        return Verdict.YES
    if Verdict.TOO_CLOSE in verdicts:
        return Verdict.TOO_CLOSE
    return Verdict.NO


# Vectorised verdict codes, for matrices of measurements.
NO_CODE, YES_CODE, TOO_CLOSE_CODE = 0, 1, 2
CODE_VERDICTS = {NO_CODE: Verdict.NO, YES_CODE: Verdict.YES, TOO_CLOSE_CODE: Verdict.TOO_CLOSE}


def within_codes(
    distance_in: Any,
    limit_in: float,
    sigma_in: Any = 0.0,
    vertical_in: Any = None,
    vertical_limit_in: float | None = None,
    sigmas: float = DEFAULT_SIGMAS,
) -> Any:
    """Elementwise "within limit horizontally (and vertically)" as verdict codes.

    Horizontal distances carry ``sigma_in``; vertical gaps are treated as exact
    (heights come from the players or the terrain, not from the camera).
    Returns an int8 array of NO_CODE / YES_CODE / TOO_CLOSE_CODE.
    """
    import numpy as np

    d = np.asarray(distance_in, dtype=np.float64)
    s = np.broadcast_to(np.asarray(sigma_in, dtype=np.float64), d.shape)
    margin = limit_in - d
    band = np.maximum(sigmas * s, EXACT_TOLERANCE_IN)
    codes = np.where(margin >= -EXACT_TOLERANCE_IN, YES_CODE, NO_CODE).astype(np.int8)
    codes[(s > 0) & (np.abs(margin) <= band)] = TOO_CLOSE_CODE
    if vertical_in is not None and vertical_limit_in is not None:
        v_ok = np.asarray(vertical_in, dtype=np.float64) <= vertical_limit_in + EXACT_TOLERANCE_IN
        codes[~v_ok] = NO_CODE
    return codes
