"""The values a match produces: faults and the match result."""

from __future__ import annotations

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
    termination: str = "completed"
    duration_s: float = 0.0


def match_result_dict(result: MatchResult) -> dict[str, Any]:
    """A MatchResult as JSON-ready data (for `arena match --json`, stores and reports)."""
    data = asdict(result)
    data["faults"] = [{**asdict(f), "kind": str(f.kind)} for f in result.faults]
    data["record_path"] = None if result.record_path is None else str(result.record_path)
    return data
