"""The values a match produces: faults and the match result."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


class FaultKind(StrEnum):
    """What a fault is (SPEC.md section 6): the one set of kinds that the referee, the records,
    the results file, the replay check, `arena check`'s hints and every view use."""

    STARTUP = "startup"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    CRASH = "crash"


class FaultCause(StrEnum):
    """What led to a fault, within its kind (SPEC.md section 6): the facts a reader decides by,
    where the message only says them in English."""

    NOT_STARTED = "not started"  # startup
    NO_REPLY = "no reply"  # timeout: nothing within the time and the margin
    LATE_REPLY = "late reply"  # timeout: a line, after the time and the margin
    INPUT_NOT_READ = "input not read"  # timeout that cut off the referee's write: forfeits
    MALFORMED_LINE = "malformed line"  # malformed: not a valid action message for the request
    LINE_TOO_LONG = "line too long"  # malformed: longer than max_line_bytes
    ILLEGAL_ACTION = "illegal action"  # illegal
    OUTPUT_ENDED = "output ended"  # crash: its output ended (exited, killed, closed it)
    DIED = "died"  # crash: it ended while a child kept its output open
    UNWRITABLE = "unwritable"  # crash: its input cannot be written any more


# Each kind's causes; the first is what an old fault of that kind (without a cause) is read as
# when its message names no other.
CAUSES: dict[FaultKind, tuple[FaultCause, ...]] = {
    FaultKind.STARTUP: (FaultCause.NOT_STARTED,),
    FaultKind.TIMEOUT: (FaultCause.NO_REPLY, FaultCause.LATE_REPLY, FaultCause.INPUT_NOT_READ),
    FaultKind.MALFORMED: (FaultCause.MALFORMED_LINE, FaultCause.LINE_TOO_LONG),
    FaultKind.ILLEGAL: (FaultCause.ILLEGAL_ACTION,),
    FaultKind.CRASH: (FaultCause.OUTPUT_ENDED, FaultCause.DIED, FaultCause.UNWRITABLE),
}
FAULT_KIND = {cause: kind for kind, causes in CAUSES.items() for cause in causes}
# The cause of the fault a reply line of each verdict leads to (a record's reply lines, SPEC 8).
VERDICT_CAUSE = {
    "malformed": FaultCause.MALFORMED_LINE,
    "too long": FaultCause.LINE_TOO_LONG,
    "illegal": FaultCause.ILLEGAL_ACTION,
    "late": FaultCause.LATE_REPLY,
}
# Causes that forfeit the match at once, whatever the count of faults (SPEC.md section 6).
FORFEITING_CAUSES = frozenset(
    {*CAUSES[FaultKind.STARTUP], *CAUSES[FaultKind.CRASH], FaultCause.INPUT_NOT_READ}
)

# How the referee's messages before causes were recorded (records and results files written
# before faults had one) say the cause: the one place that reads facts from English. A message is
# "bot NAME (seat N), request R: REASON" (or "outside a request"), and only REASON's start counts
# (the rest may quote what the bot sent or wrote to stderr).
_OLD_REASON = re.compile(r"bot .*? \(seat \d+\), (?:request \d+|outside a request): (.*)", re.S)
_OLD_REASON_CAUSES = (
    ("did not read its input", FaultCause.INPUT_NOT_READ),
    ("answered after ", FaultCause.LATE_REPLY),
    ("sent a line longer than ", FaultCause.LINE_TOO_LONG),
    ("ended while its output stayed open", FaultCause.DIED),
    ("cannot be written to any more", FaultCause.UNWRITABLE),
)
_OLD_FORFEIT_MARK = "forfeits the match"  # the end of an old message of a fault that forfeited


def old_fault_facts(kind: FaultKind, message: str) -> tuple[FaultCause, bool]:
    """The cause of a fault stored before faults had one, and whether it forfeited the match,
    read from its kind and message as the referee wrote them then."""
    found = _OLD_REASON.fullmatch(message)
    reason = found[1] if found else ""
    cause = next(
        (c for start, c in _OLD_REASON_CAUSES if reason.startswith(start) and c in CAUSES[kind]),
        CAUSES[kind][0],
    )
    return cause, cause in FORFEITING_CAUSES or message.endswith(_OLD_FORFEIT_MARK)


@dataclass(frozen=True)
class FaultRecord:
    """A fault as a value (SPEC.md section 6): who, its kind and cause, the request, whether it
    forfeited the match, and a human reason."""

    seat: int
    bot: str
    kind: FaultKind
    request_id: int | None
    message: str  # human reason: which bot, which request, what it sent, what was allowed
    cause: FaultCause
    forfeits: bool

    @classmethod
    def read(
        cls,
        seat: int,
        bot: str,
        kind: str,
        request_id: int | None,
        message: str,
        cause: str | None = None,
        forfeits: bool | None = None,
    ) -> FaultRecord:
        """A fault as a results file or a record keeps it; one stored before faults had a cause
        (None) gets it, and whether it forfeited, from its kind and message
        (:func:`old_fault_facts`). ValueError for a kind or cause that is not one."""
        fault_kind = FaultKind(kind)
        if cause is None or forfeits is None:
            old_cause, old_forfeits = old_fault_facts(fault_kind, message)
            cause = old_cause if cause is None else cause
            forfeits = old_forfeits if forfeits is None else forfeits
        return cls(seat, bot, fault_kind, request_id, message, FaultCause(cause), bool(forfeits))

    @property
    def reason(self) -> str:
        """The message without who and when, for lines that say those themselves."""
        return fault_reason(self.message)


# The referee's fault messages begin with who and when ("bot X (seat 2), request 14: "): the
# reason is what follows, for lines that say who and when themselves.
_FAULT_PREFIX = re.compile(r"^bot .*? \(seat \d+\)(, request \d+)?: ")


def fault_reason(message: str) -> str:
    """A fault's message without its "bot X (seat N), request R: " prefix."""
    return _FAULT_PREFIX.sub("", message, count=1)


class Termination(StrEnum):
    """How a match ended (the result's ``termination``, match_end's ``reason``; SPEC 4.1, 8)."""

    COMPLETED = "completed"
    CUT_SHORT = "cut short"  # arena check's matches that stop after the decision under test


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
    termination: Termination = Termination.COMPLETED
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
    data["faults"] = [
        {**asdict(f), "kind": str(f.kind), "cause": str(f.cause)} for f in result.faults
    ]
    data["termination"] = str(result.termination)
    data["record_path"] = None if result.record_path is None else str(result.record_path)
    data["referee_latency"] = result.referee_latency
    return data
