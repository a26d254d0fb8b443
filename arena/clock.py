"""Time control: per-decision limit, optional per-match bank with increment, and a margin.

Pure arithmetic; the referee measures, this module decides.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TimeControl:
    decision_ms: int = 1000
    bank_ms: int | None = None
    increment_ms: int = 0
    margin_ms: int = 50
    startup_ms: int = 10000
