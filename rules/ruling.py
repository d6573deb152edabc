"""The answer to a rules question: verdict, reasons in words, the numbers behind it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from geometry.measure import Comparison, Verdict


@dataclass(frozen=True)
class Ruling:
    question: str
    verdict: Verdict
    reasons: tuple[str, ...]
    measurements: tuple[Comparison, ...] = field(default=())
    rule: str | None = None  # the rulebook section applied
    subject: tuple[str, ...] = field(default=())  # ids of the pieces the ruling is about

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "verdict": self.verdict.value,
            "reasons": list(self.reasons),
            "measurements": [m.to_json() for m in self.measurements],
            "rule": self.rule,
            "subject": list(self.subject),
        }
