"""Did anybody lose on time because of the arena? A pure fold over the stored matches.

Each match stores the referee's own latency per decision (p50, p99, max: from having a reply to
having written the next request, SPEC.md section 5) and the machine's load per core when it ended.
A match is **strained** when the referee's worst latency in it reached ``MARGIN_SHARE`` of the
margin: for that match, the referee measured itself slow enough that a reply in time may have
been judged late. Only what was measured in the match decides: the load average (a minute's
mean of the whole machine, shown beside it) says nothing about one match, and flagged every
match of a busy machine. The timeouts of strained matches may be the arena's fault rather than
the bot's: they are named (**suspect**), and ``arena tournament ... --replay suspect`` plays
only them again, keeping the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.referee.results import FaultKind
from arena.tournament.store import StoredMatch

MARGIN_SHARE = 0.5  # the referee's worst latency in a match may use up to this part of the margin
REPLAY_SUSPECT = "--replay suspect"  # the option of `arena tournament` that replays them
LATENCY_NOTE = "latency_warning"  # the results file keeps the warning under this note
NAMED_SUSPECTS = 10  # suspect matches named in the one-line warning (all are in the data)


@dataclass(frozen=True)
class LatencyReport:
    matches: int  # completed matches with latency figures
    p50_ms: float | None  # the median of the matches' medians
    p99_ms: float | None  # the worst match's p99
    max_ms: float | None  # the worst decision of all
    max_load_per_core: float | None
    strained: tuple[str, ...] = ()  # match ids of strained matches
    suspect: tuple[str, ...] = ()  # strained matches with a timeout fault
    margin_ms: int | None = None
    details: Mapping[str, str] = field(default_factory=dict)  # match id -> why strained

    @property
    def warning(self) -> str | None:
        """One line for the terminal and the results, or None when nothing came near the margin."""
        if not self.strained:
            return None
        named = ", ".join(self.suspect[:NAMED_SUSPECTS])
        more = len(self.suspect) - NAMED_SUSPECTS
        threshold = MARGIN_SHARE * (self.margin_ms or 0)
        head = (
            f"warning: in {len(self.strained)} of {self.matches} matches the referee's worst "
            f"latency reached {threshold:g} ms, half the {self.margin_ms} ms margin (worst "
            f"{self.max_ms} ms)"
        )
        if not self.suspect:
            return f"{head}; none of them has a timeout, so no result depends on it."
        return (
            f"{head}; {len(self.suspect)} of them have a timeout that may be the arena's, not "
            f"the bot's: {named}" + (f" and {more} more" if more > 0 else "") + ". Lower the "
            f"concurrency (or workers) or raise margin_ms, and replay only those with "
            f"`arena tournament ... {REPLAY_SUSPECT}` (the other matches are kept)."
        )

    def as_data(self) -> dict:
        return {
            "matches": self.matches,
            "p50_ms": self.p50_ms,
            "p99_ms": self.p99_ms,
            "max_ms": self.max_ms,
            "max_load_per_core": self.max_load_per_core,
            "margin_ms": self.margin_ms,
            "strained": list(self.strained),
            "suspect": list(self.suspect),
            "warning": self.warning,
        }


class LatencyTally:
    """The latency figures folded one match at a time, in any order, with the same report as
    folding them all: counts, maxima, the medians counted by value (exact: the figures are on a
    0.001 ms grid) and the strained matches by id. Kept in the standings' cached fold, so that
    ``arena standings`` does not read every stored match for them. Which matches are strained
    depends on ``margin_ms``: a tally of another margin is not reused."""

    def __init__(self, margin_ms: int) -> None:
        self.margin_ms = margin_ms
        self.matches = 0
        self.medians: Counter[float] = Counter()
        self.p99_ms: float | None = None
        self.max_ms: float | None = None
        self.max_load: float | None = None
        # per strained match, STRAINED_FIELDS plain values in a row (a flat list: when every
        # match is strained, an overloaded machine's tournament, it is read back at C speed)
        self.strained: list[Any] = []

    def add(self, match: StoredMatch) -> None:
        figures = match.referee
        if not match.completed or not figures:
            return
        self.matches += 1
        p50, p99, worst = figures.get("p50_ms"), figures.get("p99_ms"), figures.get("max_ms")
        load = figures.get("load_per_core")
        if p50 is not None:
            self.medians[p50] += 1
        self.p99_ms = _larger(self.p99_ms, p99)
        self.max_ms = _larger(self.max_ms, worst)
        self.max_load = _larger(self.max_load, load)
        if _strained_why(worst, self.margin_ms):
            timeout = any(f.kind is FaultKind.TIMEOUT for f in match.faults)
            place = (match.game, match.table, match.deal, match.rotation, match.match_id)
            self.strained += (*place, worst, load, timeout)

    def report(self) -> LatencyReport:
        flat, size = self.strained, STRAINED_FIELDS
        rows = sorted(tuple(flat[i : i + size]) for i in range(0, len(flat), size))
        return LatencyReport(
            matches=self.matches,
            p50_ms=_middle(self.medians),
            p99_ms=self.p99_ms,
            max_ms=self.max_ms,
            max_load_per_core=self.max_load,
            strained=tuple(row[4] for row in rows),
            suspect=tuple(row[4] for row in rows if row[7]),
            margin_ms=self.margin_ms,
            details={row[4]: _strained_why(row[5], self.margin_ms) for row in rows},
        )


# a strained match's row: game, table, deal, rotation, match id (the store's order), its worst
# latency, its load per core, whether it has a timeout
STRAINED_FIELDS = 8


def _strained_why(worst: float | None, margin_ms: int) -> str:
    """Why a match is strained ("" when it is not): only its own measured latency decides."""
    if worst is not None and worst >= MARGIN_SHARE * margin_ms:
        return f"referee latency {worst} ms of a {margin_ms} ms margin"
    return ""


def _larger(current: float | None, value: float | None) -> float | None:
    if value is None:
        return current
    return value if current is None or value > current else current


def _middle(counted: Counter[float]) -> float | None:
    """The element at position n // 2 of the sorted values (the upper median)."""
    position = sum(counted.values()) // 2
    for value in sorted(counted):
        position -= counted[value]
        if position < 0:
            return value
    return None


def latency_report(matches: Iterable[StoredMatch], margin_ms: int) -> LatencyReport:
    """The report of ``matches`` (strained ones in the store's order: game, table, deal,
    rotation, id)."""
    tally = LatencyTally(margin_ms)
    for match in matches:
        tally.add(match)
    return tally.report()


def latency_line(report: LatencyReport) -> str:
    """The referee's latency in one line (standings and the end of a tournament)."""
    if not report.matches:
        return "referee latency: not recorded for these matches"
    return (
        f"referee latency per decision over {report.matches} matches: median {report.p50_ms} ms, "
        f"worst p99 {report.p99_ms} ms, max {report.max_ms} ms (margin {report.margin_ms} ms); "
        f"highest load {report.max_load_per_core} per core"
    )
