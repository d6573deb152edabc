"""Exact probability distributions over integers (never Monte Carlo).

Probabilities are ``fractions.Fraction``, so every table is exact; ``to_json``
prints them as floats.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any


@dataclass(frozen=True)
class Dist:
    """A distribution over integer outcomes: outcome -> probability (summing to 1)."""

    probs: Mapping[int, Fraction]

    @staticmethod
    def constant(value: int) -> Dist:
        return Dist({value: Fraction(1)})

    @staticmethod
    def from_pairs(pairs: Iterable[tuple[int, Fraction]]) -> Dist:
        out: dict[int, Fraction] = {}
        for value, p in pairs:
            if p:
                out[value] = out.get(value, Fraction(0)) + p
        return Dist(dict(sorted(out.items())))

    @staticmethod
    def binomial(n: int, p: Fraction) -> Dist:
        """Successes in n independent trials of probability p."""
        n = max(n, 0)
        return Dist.from_pairs((k, comb(n, k) * p**k * (1 - p) ** (n - k)) for k in range(n + 1))

    def bind(self, step: Callable[[int], Dist]) -> Dist:
        """Mixture: for each outcome, continue with another distribution."""
        return Dist.from_pairs((v2, p1 * p2) for v1, p1 in self.probs.items() for v2, p2 in step(v1).probs.items())

    def map(self, fn: Callable[[int], int]) -> Dist:
        return Dist.from_pairs((fn(v), p) for v, p in self.probs.items())

    def __add__(self, other: Dist) -> Dist:
        return self.bind(lambda a: other.map(lambda b: a + b))

    def mean(self) -> Fraction:
        return sum((v * p for v, p in self.probs.items()), Fraction(0))

    def at_least(self, value: int) -> Fraction:
        return sum((p for v, p in self.probs.items() if v >= value), Fraction(0))

    def to_json(self) -> dict[str, Any]:
        return {
            "outcomes": [
                {"value": v, "probability": float(p), "at_least": float(self.at_least(v))}
                for v, p in self.probs.items()
            ],
            "mean": float(self.mean()),
        }

    def table(self, label: str = "value") -> str:
        rows = [f"{label:>8}  {'exactly':>9}  {'at least':>9}"]
        rows += [f"{v:>8}  {float(p):>9.2%}  {float(self.at_least(v)):>9.2%}" for v, p in self.probs.items()]
        rows.append(f"{'mean':>8}  {float(self.mean()):>9.3f}")
        return "\n".join(rows)


def success_chance(target: int, sides: int = 6) -> Fraction:
    """Chance that a die meets ``target``+ (target clamped to 2..sides: a 1 always fails)."""
    target = min(max(target, 2), sides + 1)
    return Fraction(sides + 1 - target, sides)
