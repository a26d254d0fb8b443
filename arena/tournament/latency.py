"""Did anybody lose on time because of the arena? A pure fold over the stored matches.

Each match stores the referee's own latency per decision (p50, p99, max: from having a reply to
having written the next request, SPEC.md section 5) and the machine's load per core when it ended.
A match is **strained** when its worst latency reached half the margin, or the machine was
overloaded (load per core at or above ``OVERLOAD_PER_CORE``: more runnable processes than cores, so
a bot's reply may wait in its pipe for the referee to be scheduled). The timeouts of strained
matches may be the arena's fault rather than the bot's: they are named, and the warning says to
lower the concurrency (or the workers) or raise the margin, and to replay them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from arena.tournament.store import StoredMatch

OVERLOAD_PER_CORE = 1.0
MARGIN_SHARE = 0.5  # the referee's latency may use up to this part of the margin
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
        suspects = (
            f"their timeouts may be the arena's, not the bots': {named}"
            + (f" and {more} more" if more > 0 else "")
            if self.suspect
            else "none of them has a timeout"
        )
        return (
            f"warning: {len(self.strained)} of {self.matches} matches ran with the referee's "
            f"latency near the {self.margin_ms} ms margin or the machine overloaded "
            f"(worst latency {self.max_ms} ms, load {self.max_load_per_core} per core); "
            f"{suspects}. Lower the concurrency (or workers) or raise margin_ms, and replay them."
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


def latency_report(matches: Iterable[StoredMatch], margin_ms: int) -> LatencyReport:
    medians: list[float] = []
    p99s: list[float] = []
    maxes: list[float] = []
    loads: list[float] = []
    strained: list[str] = []
    suspect: list[str] = []
    details: dict[str, str] = {}
    counted = 0
    for match in matches:
        figures = match.referee
        if not match.completed or not figures:
            continue
        counted += 1
        p50, p99, worst = figures.get("p50_ms"), figures.get("p99_ms"), figures.get("max_ms")
        load = figures.get("load_per_core")
        if p50 is not None:
            medians.append(p50)
        if p99 is not None:
            p99s.append(p99)
        if worst is not None:
            maxes.append(worst)
        if load is not None:
            loads.append(load)
        reasons = []
        if worst is not None and worst >= MARGIN_SHARE * margin_ms:
            reasons.append(f"referee latency {worst} ms of a {margin_ms} ms margin")
        if load is not None and load >= OVERLOAD_PER_CORE:
            reasons.append(f"load {load} per core")
        if reasons:
            strained.append(match.match_id)
            details[match.match_id] = "; ".join(reasons)
            if any(f.kind == "timeout" for f in match.faults):
                suspect.append(match.match_id)
    medians.sort()
    return LatencyReport(
        matches=counted,
        p50_ms=medians[len(medians) // 2] if medians else None,
        p99_ms=max(p99s, default=None),
        max_ms=max(maxes, default=None),
        max_load_per_core=max(loads, default=None),
        strained=tuple(strained),
        suspect=tuple(suspect),
        margin_ms=margin_ms,
        details=details,
    )


def latency_line(report: LatencyReport) -> str:
    """The referee's latency in one line (standings and the end of a tournament)."""
    if not report.matches:
        return "referee latency: not recorded for these matches"
    return (
        f"referee latency per decision over {report.matches} matches: median {report.p50_ms} ms, "
        f"worst p99 {report.p99_ms} ms, max {report.max_ms} ms (margin {report.margin_ms} ms); "
        f"highest load {report.max_load_per_core} per core"
    )
