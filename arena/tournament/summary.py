"""What a tournament run did: the run's summary and, on a cluster, each worker's report."""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.tournament.store import StoredMatch


@dataclass
class RunSummary:
    """What one run did: its matches, its bot processes and, on a cluster, each worker's."""

    played: int = 0  # completed in this run
    aborted: int = 0  # cut by the match time limit or a failed bot start in this run
    skipped: int = 0  # already completed before this run
    started_processes: int = 0
    workers_cpu_s: float = 0.0  # worker processes' own CPU time (not their bots'), if any
    given_up: dict[str, str] = field(default_factory=dict)  # bots not started again, and why
    # on a cluster: what each worker played, by its address, and Dask's own share of the time
    cluster_workers: dict[str, WorkerReport] = field(default_factory=dict)
    cluster_overhead_s: float = 0.0  # between a worker's tasks and in them outside the matches
    cluster_startup_s: float = 0.0  # connecting, packing and shipping the bots
    # workers the scheduler lost during the run (addresses, in order), and the matches Dask
    # played again elsewhere because their worker was lost while playing them
    cluster_lost: list[str] = field(default_factory=list)
    cluster_rescheduled: int = 0


@dataclass
class WorkerReport:
    """The matches one cluster worker played in a run, its bots' decision times, and the
    referee's latency per decision there (the figures each stored match carries, SPEC 5)."""

    matches: int = 0
    decisions: int = 0
    decision_ms: list[float] = field(default_factory=list)  # a bounded sample, for the median
    referee_p50_ms: list[float] = field(default_factory=list)  # per match, bounded the same
    referee_p99_ms: float | None = None  # the worst match's
    referee_max_ms: float | None = None  # the worst decision's
    max_load_per_core: float | None = None
    started: int = 0  # bot processes it started
    log_dir: str = ""  # where its bots' standard error stays, on that worker

    SAMPLE = 20_000

    def add(self, match: StoredMatch) -> None:
        self.matches += 1
        for seat in match.decision_ms:
            self.decisions += len(seat)
            room = self.SAMPLE - len(self.decision_ms)
            if room > 0:
                self.decision_ms.extend(seat[:room])
        figures = match.referee or {}
        p50 = figures.get("p50_ms")
        if p50 is not None and len(self.referee_p50_ms) < self.SAMPLE:
            self.referee_p50_ms.append(p50)
        self.referee_p99_ms = _worst(self.referee_p99_ms, figures.get("p99_ms"))
        self.referee_max_ms = _worst(self.referee_max_ms, figures.get("max_ms"))
        self.max_load_per_core = _worst(self.max_load_per_core, figures.get("load_per_core"))


def _worst(known: float | None, new: float | None) -> float | None:
    return known if new is None else new if known is None else max(known, new)
