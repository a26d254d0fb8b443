"""Play a tournament's matches: many at once, bot processes pooled, each stored as it ends.

- ``concurrency`` matches run at once (a ``trio.CapacityLimiter``), in schedule order; the ones
  already completed in the results file are skipped.
- Where the matches are played is the executor's business (``arena.tournament.executors``): this
  process, worker processes (``workers`` > 1), or a Dask cluster's workers (``cluster``); they
  are stored here either way, and everything below holds in each worker.
- Bot processes are pooled: a process is started when no idle one of that bot is free, and goes
  back to the pool after its match. A process that crashed, was forfeited, or was in a match that
  was cut short is closed and never reused; the next match starts a fresh one.
- Every match runs under the match time limit (``trio.move_on_after``); a match cut by it is
  stored as ``aborted`` and played again on the next run.
- Preflight: before the first match every bot needed is started once, all at once; when any
  cannot start, :class:`PreflightError` stops the run before a match is played (one line per
  broken bot).
- A bot that cannot be started later forfeits the match it was wanted for: its seat gets a ``startup``
  fault and the autopilot plays it, so the other bots' match is completed and counts. After three
  failures in a row the bot is not started again in this run: its remaining matches are forfeited
  at once with the same reason (a rerun tries it afresh).
- Cancellation (Ctrl-C) cuts the running matches, which are not stored; every bot process is
  closed in ``finally`` under a shielded cancel scope, so none is left behind.

``start_bot`` and ``play`` default to the referee's ``BotProcess.start`` and ``run_match``; tests
swap in fakes to check the pool, the limits and cancellation without processes.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.referee.lines import printable
from arena.tournament.config import StopRule, TournamentConfig
from arena.tournament.errors import PreflightError, TournamentError, unwrapped
from arena.tournament.executors import Executor
from arena.tournament.executors.in_process import InProcess
from arena.tournament.executors.local import WorkerProcesses
from arena.tournament.pool import PlayMatch, StartBot
from arena.tournament.schedule import Schedule, ScheduledMatch, sent_match_id
from arena.tournament.standings import Standings, compute_standings, separation
from arena.tournament.store import ResultStore, StoredMatch, StoreError
from arena.tournament.summary import RunSummary

__all__ = [
    "PreflightError",
    "Progress",
    "RunSummary",
    "StopReport",
    "TournamentError",
    "pending_matches",
    "refresh_current",
    "run_in_rounds",
    "run_tournament",
    "stored_count",
]


@dataclass
class Progress:
    """How far a run is: what the runner reports, what the displays read."""

    total: int  # matches of this run, those already stored included
    already_done: int = 0  # completed before this run started
    done: int = 0  # completed in this run
    aborted: int = 0  # cut by the match time limit in this run
    started: float = field(default_factory=time.monotonic)
    recent_faults: deque[str] = field(default_factory=lambda: deque(maxlen=6))
    faults_seen: int = 0  # how many faults went into recent_faults, ever
    stage: str = ""  # e.g. the stopping rule's round, shown after the progress line
    # what a plain log has not printed yet, in order: every fault ("fault: ..."), with
    # ``log_finished`` a line per finished match, and every ``report_every`` matches finished
    # the standings then (``report``'s value) with their count (None: nobody prints them)
    unprinted: deque[str | tuple[int, Any]] | None = None
    log_finished: bool = False
    report_every: int = 0
    report: Callable[[], Any] | None = None

    def note_fault(self, line: str) -> None:
        line = printable(line)  # (a stored message of an older arena may quote raw stderr)
        self.recent_faults.append(line)
        self.faults_seen += 1
        if self.unprinted is not None:
            self.unprinted.append(f"fault: {line}")

    def note_finished(self, match: StoredMatch) -> None:
        if self.unprinted is None:
            return
        finished = self.already_done + self.done + self.aborted
        if self.log_finished:
            self.unprinted.append(finished_line(match, finished, self.total))
        if self.report is not None and self.report_every and finished % self.report_every == 0:
            self.unprinted.append((finished, self.report()))

    def per_second(self, now: float | None = None) -> float:
        elapsed = (time.monotonic() if now is None else now) - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta_s(self, now: float | None = None) -> float | None:
        rate = self.per_second(now)
        left = self.total - self.already_done - self.done
        return left / rate if rate > 0 else None


def finished_line(match: StoredMatch, number: int, total: int) -> str:
    """A finished match in one line, as fastchess logs a game: ``finished 12/1056
    aon/t0/d3/r1: heuristic 31, random-c 12, ... (faults: late timeout x2)``."""
    if not match.completed:
        return f"aborted {number}/{total} {match.match_id}: {printable(match.reason)}"
    scores = ", ".join(f"{bot} {score:g}" for bot, score in zip(match.bots, match.scores))
    counted = Counter((f.bot, f.kind) for f in match.faults)
    faults = ", ".join(
        f"{bot} {kind}" + (f" x{n}" if n > 1 else "") for (bot, kind), n in counted.items()
    )
    return f"finished {number}/{total} {match.match_id}: {scores}" + (
        f" (faults: {faults})" if faults else ""
    )


def pending_matches(matches: Iterable[ScheduledMatch], done: set[str]) -> Iterator[ScheduledMatch]:
    """The matches not yet completed, generated as they are read (a schedule may be huge)."""
    return (m for m in matches if m.match_id not in done)


def stored_count(matches: Sequence[ScheduledMatch], done: set[str]) -> int:
    """How many of ``matches`` are among the ``done`` ids (without walking a whole schedule)."""
    if isinstance(matches, Schedule):
        return sum(1 for match_id in done if matches.contains_id(match_id))
    return sum(1 for m in matches if m.match_id in done)


def find_by_id(
    matches: Sequence[ScheduledMatch], match_ids: Iterable[str]
) -> dict[str, ScheduledMatch]:
    """The scheduled matches of these ids (those the schedule has), without walking a Schedule."""
    if isinstance(matches, Schedule):
        found = {match_id: matches.by_id(match_id) for match_id in set(match_ids)}
        return {match_id: match for match_id, match in found.items() if match is not None}
    wanted = set(match_ids)
    return {m.match_id: m for m in matches if m.match_id in wanted}


def refresh_current(
    config: TournamentConfig, matches: Sequence[ScheduledMatch], store: ResultStore
) -> tuple[int, int]:
    """Mark which stored matches belong to this definition: those whose content key equals the
    key of the scheduled match of the same id (the same game, bots in seat order, seed, rotation,
    time control and fault policy), so a grown tournament keeps them. Returns (completed
    matches kept, completed matches of an older definition, not counted). Costs one key per
    stored match, never a walk of the whole schedule."""
    stored = store.stored_keys()
    scheduled = find_by_id(matches, (match_id for _key, match_id in stored))
    keyed = {m.match_id: m.key for m in config.keyed(list(scheduled.values()))}
    return store.set_current(key for key, match_id in stored if keyed.get(match_id) == key)


def needed_bots(config: TournamentConfig, todo: Iterable[ScheduledMatch]) -> list[str]:
    """The bots seated in some match of ``todo``, in the tournament's order. Reads ``todo`` only
    until every bot was seen (the first deals seat them all), so a huge schedule costs little."""
    wanted = {b.name for b in config.bots}
    seen: set[str] = set()
    for match in todo:
        seen.update(match.seats)
        if seen >= wanted:
            break
    return [b.name for b in config.bots if b.name in seen]


async def run_tournament(
    config: TournamentConfig,
    matches: Sequence[ScheduledMatch],
    store: ResultStore,
    progress: Progress,
    *,
    workers: int = 1,
    cluster: str | None = None,
    executor: Executor | None = None,
    start_bot: StartBot | None = None,
    play: PlayMatch | None = None,
    on_stored: Callable[[StoredMatch], None] | None = None,
    summary: RunSummary | None = None,
    definition_matches: Sequence[ScheduledMatch] | None = None,
) -> RunSummary:
    """Play every match of ``matches`` not yet completed in ``store``; store each as it ends.

    The matches are played by an executor (``arena.tournament.executors``) and stored here:
    ``executor`` if given; else with ``cluster`` (a Dask scheduler's address or ``local:N``) on
    that cluster's workers; else with ``workers`` > 1 in that many worker processes; else in
    this process, where ``start_bot`` and ``play`` (fakes for tests) work. A match handed back
    twice (a cluster worker lost after finishing it) is stored once. Give ``summary`` to read
    the counts of a run that was cancelled (Ctrl-C) part way. Stored matches count when they are
    matches of ``definition_matches`` (the whole schedule, when ``matches`` is only part of it;
    by default ``matches``), by content (:func:`refresh_current`)."""
    try:
        refresh_current(
            config, matches if definition_matches is None else definition_matches, store
        )
        done = store.completed_ids()
        secret = store.match_id_secret()
    except StoreError as exc:
        raise TournamentError(str(exc)) from None
    summary = summary if summary is not None else RunSummary()
    summary.skipped = stored_count(matches, done)
    progress.total, progress.already_done = len(matches), summary.skipped
    progress.started = time.monotonic()
    if summary.skipped == len(matches):
        return summary
    if config.revealed:
        raise TournamentError(
            f"{config.results}: this tournament has ended and its secret seed was revealed: "
            f"{len(matches) - summary.skipped} more matches dealt from it would be predictable, "
            f"and none was played; give another results file, or --restart to set its "
            f"{store.count_matches()} stored matches aside (SPEC 10.4) and deal from a new "
            "secret seed"
        )
    in_workers = cluster is None and min(workers, config.concurrency) > 1
    if (in_workers or cluster is not None) and (start_bot is not None or play is not None):
        raise ValueError("start_bot and play are for workers=1")
    if executor is None:
        executor = _executor(config, workers if in_workers else 1, cluster, start_bot, play)
    needed = needed_bots(config, pending_matches(matches, done))
    keyer = config.keyer()
    todo = (
        replace(keyed, sent_id=sent_match_id(secret, keyed))
        for keyed in map(keyer, pending_matches(matches, done))
    )
    config.logs_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if config.records:
        config.records_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    kept: set[str] = set()

    def keep(stored: StoredMatch) -> None:
        if stored.match_id in kept:  # an executor that played it twice: the first one counts
            return
        kept.add(stored.match_id)
        try:
            store.save(stored)
        except StoreError as exc:
            raise TournamentError(str(exc)) from None
        for fault in stored.faults:
            request = f", request {fault.request_id}" if fault.request_id is not None else ""
            progress.note_fault(
                f"{stored.match_id} {fault.bot} (seat {fault.seat}{request}) {fault.kind}: "
                f"{fault.reason}"
            )
        if stored.completed:
            summary.played += 1
            progress.done += 1
        else:
            summary.aborted += 1
            progress.aborted += 1
            progress.note_fault(f"{stored.match_id} aborted: {stored.reason}")
        progress.note_finished(stored)
        if on_stored is not None:
            on_stored(stored)

    with unwrapped(TournamentError):
        await executor.play(config, todo, needed, keep, summary)
    return summary


def _executor(
    config: TournamentConfig,
    workers: int,
    cluster: str | None,
    start_bot: StartBot | None,
    play: PlayMatch | None,
) -> Executor:
    if cluster is not None:
        from arena.tournament.executors.dask_cluster import DaskCluster  # Dask is optional

        return DaskCluster(
            cluster, matches_per_worker=config.matches_per_worker, tls=config.cluster_tls
        )
    if workers > 1:
        return WorkerProcesses(workers)
    return InProcess(start_bot, play)


# -- the stopping rule: deals in rounds -------------------------------------------------------------


@dataclass
class StopReport:
    """Why a run in rounds stopped, and where."""

    deals: int  # the deal count of the last round looked at
    settled: bool  # every game's ranking separated at the confidence
    reason: str  # one line for the organiser
    standings: Standings | None = None  # those the rule last looked at (deals < ``deals``)
    decided: bool = False  # the rule stopped the tournament (separated, or at the most deals)


def first_deals(schedule: Schedule, deals: int) -> Schedule:
    """The schedule's matches of deals 0 .. deals-1, in the same order (every match keeps its
    id, seats and seed: they depend on the table and deal only)."""
    games = [replace(plan, deals=min(plan.deals, deals)) for plan in schedule.games]
    return schedule.with_deals(games)


def standings_of_first_deals(
    config: TournamentConfig, schedule: Schedule, store: ResultStore, deals: int, looks: int = 1
) -> Standings:
    """The standings of the stored matches of the schedule's first ``deals`` deals, with the
    game tables' pairs of rows judged as one family at (1 - confidence) / ``looks`` (the stop
    rule's share of its error for one of its ``looks``)."""
    labels = [plan.label for plan in schedule.games]
    matches = [
        m for m in store.matches(include_aborted=True) if m.deal < deals and m.game in labels
    ]
    standings = compute_standings(
        matches,
        [b.name for b in config.bots],
        labels,
        seating=config.seating,
        confidence=config.stop.confidence if config.stop else 0.95,
    )
    return separated_at_look(standings, labels, looks)


def separated_at_look(standings: Standings, games: Sequence[str], looks: int) -> Standings:
    """``standings`` judged as one look of the stop rule's ``looks``: every pair of rows of
    the ``games``' tables one family, at (1 - confidence) / looks (SPEC 10.9)."""
    return separation(standings, games, (1 - standings.confidence) / looks)


def unsettled_pairs(standings: Standings, games: Sequence[str]) -> list[str]:
    """The adjacent pairs not separated, as ``game: upper ~ lower (P 0.81)``."""
    found = []
    for game in games:
        rows = standings.tables.get(game, [])
        for (upper, lower), p, apart in zip(
            zip(rows, rows[1:]), standings.adjacent.get(game, []), standings.separated.get(game, [])
        ):
            if not apart:
                shown = "?" if p is None else f"{p:.2f}"
                found.append(f"{game}: {upper.bot} ~ {lower.bot} (P {shown})")
    return found


async def run_in_rounds(
    config: TournamentConfig,
    schedule: Schedule,
    store: ResultStore,
    progress: Progress,
    stop: StopRule,
    *,
    summary: RunSummary | None = None,
    definition_matches: Sequence[ScheduledMatch] | None = None,
    **options: Any,
) -> StopReport:
    """Play the schedule in rounds of deals (``stop.rounds``: min_deals, then doubling, up to
    every game's deals) until every game's ranking is separated at ``stop.confidence``: the
    error 1 - confidence is shared equally by the looks (one after each round), and at each
    look every pair of rows of every game's table is one family (Holm; SPEC 10.9).

    After each round the rule looks at the standings of exactly the deals so far, so a resumed
    run (rounds already stored are skipped) makes the same decisions as one left to run; a round
    with aborted matches ends the run (they are replayed by the next one). ``summary`` gathers
    the counts of every round (read it after a Ctrl-C too); ``definition_matches`` is the whole
    definition's schedule (default ``schedule``: stored matches of later deals stay counted);
    ``options`` go to :func:`run_tournament`."""
    total = summary if summary is not None else RunSummary()
    whole = schedule if definition_matches is None else definition_matches
    labels = [plan.label for plan in schedule.games]
    most = max((plan.deals for plan in schedule.games), default=0)
    before = skipped = started = 0  # matches of the earlier rounds (all completed), counts
    report = StopReport(0, False, "nothing to play")
    rounds = stop.rounds(most)
    for deals in rounds:
        part = first_deals(schedule, deals)
        progress.stage = (
            f"round to {deals} deals (of at most {most}), stop at {stop.confidence:.0%}"
        )
        progress.done = progress.aborted = 0  # each round counts its own (already_done: before)
        aborted = total.aborted
        await run_tournament(
            config, part, store, progress, summary=total, definition_matches=whole, **options
        )
        skipped += max(0, total.skipped - before)
        started += total.started_processes
        total.skipped, total.started_processes = skipped, started
        before = len(part)
        if total.aborted > aborted:
            reason = f"stopped after {deals} deals: {total.aborted - aborted} aborted (run again)"
            return StopReport(deals, False, reason)
        standings = standings_of_first_deals(config, schedule, store, deals, len(rounds))
        open_pairs = unsettled_pairs(standings, labels)
        if not open_pairs:
            reason = (
                f"stopped after {deals} deals: every game's ranking is separated "
                f"at {stop.confidence:.0%} (over {len(rounds)} looks and every pair)"
            )
            return StopReport(deals, True, reason, standings, decided=True)
        report = StopReport(
            deals,
            False,
            f"stopped at the most deals ({deals}): not separated at {stop.confidence:.0%}: "
            + "; ".join(open_pairs),
            standings,
            decided=True,
        )
    return report
