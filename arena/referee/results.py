"""The values a match produces: faults and the match result."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


class FaultKind(StrEnum):
    STARTUP = "startup"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    CRASH = "crash"


@dataclass(frozen=True)
class FaultRecord:
    seat: int
    bot: str
    kind: FaultKind
    request_id: int | None
    message: str  # human reason: which bot, which request, what it sent, what was allowed


@dataclass(frozen=True)
class MatchResult:
    match_id: str
    game: str
    options: dict[str, Any]
    seed: int
    players: int
    bots: tuple[str, ...]  # bot name per seat
    scores: tuple[int, ...]
    placings: tuple[int, ...]  # forfeited seats placed last
    teams: tuple[int, ...] | None
    forfeited: tuple[int, ...]
    faults: tuple[FaultRecord, ...]
    decision_ms: tuple[tuple[float, ...], ...]  # per seat: each decision's bot time
    referee_us: tuple[float, ...]  # per decision: the referee's own latency
    record_path: Path | None = None
    # (byte offset, length) of the record in record_path, a records file of many matches (None:
    # the file is this match's alone)
    record_span: tuple[int, int] | None = None
    termination: str = "completed"
    duration_s: float = 0.0
    load_per_core: float | None = None  # the machine's 1-minute load average / cores, at the end

    @property
    def referee_latency(self) -> dict[str, float | None]:
        """The referee's own latency per decision (SPEC.md section 5), with the machine's load."""
        return {**latency_summary(self.referee_us), "load_per_core": self.load_per_core}


def latency_summary(referee_us: Sequence[float]) -> dict[str, float | None]:
    """p50, p99 and max of the referee's per-decision latency, in ms to 0.001 (None: none)."""
    if not referee_us:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(referee_us)
    last = len(ordered) - 1

    def quantile(q: float) -> float:  # nearest rank: a latency that happened
        return round(ordered[min(last, math.ceil(q * len(ordered)) - 1)] / 1000, 3)

    return {"p50_ms": quantile(0.5), "p99_ms": quantile(0.99), "max_ms": quantile(1.0)}


def machine_load_per_core() -> float | None:
    """The machine's 1-minute load average per CPU of the machine (None where unknown): the
    load is the whole machine's, so it is divided by the machine's cores, not by the one a
    pinned process may use."""
    cores = os.cpu_count() or 1
    try:
        return round(os.getloadavg()[0] / max(1, cores), 2)
    except OSError:
        return None


def match_result_dict(result: MatchResult) -> dict[str, Any]:
    """A MatchResult as JSON-ready data (for `arena match --json`, stores and reports)."""
    data = asdict(result)
    data["faults"] = [{**asdict(f), "kind": str(f.kind)} for f in result.faults]
    data["record_path"] = None if result.record_path is None else str(result.record_path)
    data["referee_latency"] = result.referee_latency
    return data
