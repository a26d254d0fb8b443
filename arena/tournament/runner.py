"""Play a tournament's matches: many at once, bot processes pooled, each stored as it ends.

- ``concurrency`` matches run at once (a ``trio.CapacityLimiter``), in schedule order; the ones
  already completed in the results file are skipped.
- With ``workers`` > 1 the matches are played in worker processes, each with its own pool
  (``arena.tournament.workers``), and stored here; everything below holds in each worker.
- Bot processes are pooled: a process is started when no idle one of that bot is free, and goes
  back to the pool after its match. A process that crashed, was forfeited, or was in a match that
  was cut short is closed and never reused; the next match starts a fresh one.
- Every match runs under the match time limit (``trio.move_on_after``); a match cut by it is
  stored as ``aborted`` and played again on the next run.
- A bot that cannot be started forfeits the match it was wanted for: its seat gets a ``startup``
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
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.bot_process import BotProcess, BotStartupError
from arena.bots import BotSpec
from arena.clock import TimeControl
from arena.games import find_game
from arena.referee import run_match
from arena.results import MatchResult
from arena.store import ResultStore, StoredFault, StoredMatch, StoreError
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import ScheduledMatch

CLOSE_GRACE_S = 10.0            # a bound on closing one bot process (it kills on its own before)
STARTUP_FAILURES_TO_GIVE_UP = 3

StartBot = Callable[..., Awaitable[Any]]
PlayMatch = Callable[..., Awaitable[MatchResult]]


@dataclass
class Progress:
    """How far a run is: what the runner reports, what the displays read."""

    total: int                          # matches of this run, those already stored included
    already_done: int = 0               # completed before this run started
    done: int = 0                       # completed in this run
    aborted: int = 0                    # cut by the match time limit in this run
    started: float = field(default_factory=time.monotonic)
    recent_faults: deque[str] = field(default_factory=lambda: deque(maxlen=6))
    faults_seen: int = 0                # how many faults went into recent_faults, ever

    def note_fault(self, line: str) -> None:
        self.recent_faults.append(line)
        self.faults_seen += 1

    def per_second(self, now: float | None = None) -> float:
        elapsed = (time.monotonic() if now is None else now) - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta_s(self, now: float | None = None) -> float | None:
        rate = self.per_second(now)
        left = self.total - self.already_done - self.done
        return left / rate if rate > 0 else None


class TournamentError(Exception):
    """The tournament cannot go on (one line, names the bot); finished matches are kept."""


@dataclass
class RunSummary:
    played: int = 0          # completed in this run
    aborted: int = 0         # cut by the match time limit or a failed bot start in this run
    skipped: int = 0         # already completed before this run
    started_processes: int = 0
    workers_cpu_s: float = 0.0   # worker processes' own CPU time (not their bots'), if any


class BotPool:
    """Idle bot processes by bot name; starts new ones on demand, closes unusable ones."""

    def __init__(self, specs: Sequence[BotSpec], *, start_bot: StartBot,
                 time_control: TimeControl, log_dir: Path) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self._start_bot = start_bot
        self._time_control = time_control
        self._log_dir = log_dir
        self._idle: dict[str, list[Any]] = {name: [] for name in self.specs}
        self._open: set[Any] = set()           # every process started and not yet closed
        self._failures: Counter[str] = Counter()
        self._given_up: dict[str, str] = {}    # bots not started again in this run, and why
        self.started = 0

    async def acquire(self, name: str) -> Any:
        """A running process of bot ``name``, or (when it cannot start) a stand-in whose seat the
        referee forfeits with a startup fault."""
        spec = self.specs[name]
        if name in self._given_up:
            return BotProcess.absent(spec, self._given_up[name])
        idle = self._idle[name]
        while idle:
            process = idle.pop()
            if process.alive:
                return process
            await self._close(process)
        try:
            process = await self._start_bot(spec, time_control=self._time_control,
                                            log_dir=self._log_dir)
        except BotStartupError as exc:
            self._failures[name] += 1
            if self._failures[name] >= STARTUP_FAILURES_TO_GIVE_UP:
                self._given_up[name] = (f"{exc.reason} (failed to start {self._failures[name]} "
                                        "times in a row: not started again in this run)")
            return BotProcess.absent(spec, exc.reason)
        self._failures[name] = 0
        self._open.add(process)
        self.started += 1
        return process

    async def release(self, process: Any, *, reusable: bool) -> None:
        if reusable and process.alive:
            self._idle[process.spec.name].append(process)
        else:
            await self._close(process)

    async def warm_up(self) -> None:
        """Start one process of every bot at once, so the first matches do not wait in line."""
        started: list[Any] = []

        async def start_one(name: str) -> None:
            started.append(await self.acquire(name))

        try:
            async with trio.open_nursery() as nursery:
                for name in self.specs:
                    nursery.start_soon(start_one, name)
        finally:
            for process in started:
                await self.release(process, reusable=True)

    async def close_all(self) -> None:
        """Close every process this pool started (shielded: runs even when cancelled)."""
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for process in list(self._open):
                    nursery.start_soon(self._close, process)
        for idle in self._idle.values():
            idle.clear()

    async def _close(self, process: Any) -> None:
        self._open.discard(process)
        with trio.CancelScope(shield=True):
            with trio.move_on_after(CLOSE_GRACE_S):
                await process.close()


@contextmanager
def unwrapped(kind: type[Exception]) -> Iterator[None]:
    """Raise the first ``kind`` error out of a nursery's exception group as itself."""
    try:
        yield
    except BaseExceptionGroup as group:
        matched, _rest = group.split(kind)
        if matched is None:
            raise
        first: BaseException = matched
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None


def pending_matches(matches: Sequence[ScheduledMatch], done: set[str]) -> list[ScheduledMatch]:
    return [m for m in matches if m.match_id not in done]


async def run_tournament(config: TournamentConfig, matches: Sequence[ScheduledMatch],
                         store: ResultStore, progress: Progress, *, workers: int = 1,
                         start_bot: StartBot | None = None, play: PlayMatch | None = None,
                         on_stored: Callable[[StoredMatch], None] | None = None) -> RunSummary:
    """Play every match of ``matches`` not yet completed in ``store``; store each as it ends.

    With ``workers`` > 1 the matches are played in that many worker processes (see
    ``arena.tournament.workers``) and stored here; ``start_bot`` and ``play`` (fakes for tests)
    only work in this process, with ``workers`` = 1."""
    done = store.completed_ids()
    todo = pending_matches(matches, done)
    summary = RunSummary(skipped=len(matches) - len(todo))
    progress.total, progress.already_done = len(matches), summary.skipped
    progress.started = time.monotonic()
    if not todo:
        return summary
    in_workers = min(workers, config.concurrency) > 1
    if in_workers and (start_bot is not None or play is not None):
        raise ValueError("start_bot and play are for workers=1")
    needed = [b.name for b in config.bots if any(b.name in m.seats for m in todo)]
    config.logs_dir.mkdir(parents=True, exist_ok=True)
    if config.records:
        config.records_dir.mkdir(parents=True, exist_ok=True)

    def keep(stored: StoredMatch) -> None:
        try:
            store.save(stored)
        except StoreError as exc:
            raise TournamentError(str(exc)) from None
        for fault in stored.faults:
            progress.note_fault(f"{stored.match_id} {fault.bot} (seat {fault.seat}) "
                                f"{fault.kind}: {fault.message}")
        if stored.completed:
            summary.played += 1
            progress.done += 1
        else:
            summary.aborted += 1
            progress.aborted += 1
            progress.note_fault(f"{stored.match_id} aborted: {stored.reason}")
        if on_stored is not None:
            on_stored(stored)

    if in_workers:
        from arena.tournament.workers import play_in_workers   # it imports this module
        with unwrapped(TournamentError):
            await play_in_workers(config, todo, needed, workers, keep, summary)
        return summary
    pool = BotPool([b for b in config.bots if b.name in needed],
                   start_bot=start_bot or BotProcess.start, time_control=config.time_control,
                   log_dir=config.logs_dir)
    play = play or run_match
    limiter = trio.CapacityLimiter(config.concurrency)

    async def play_one(match: ScheduledMatch) -> None:
        try:
            keep(await play_pooled_match(config, match, pool, play))
        finally:
            limiter.release_on_behalf_of(match.match_id)

    try:
        with unwrapped(TournamentError):
            await pool.warm_up()
            async with trio.open_nursery() as nursery:
                for match in todo:
                    await limiter.acquire_on_behalf_of(match.match_id)
                    nursery.start_soon(play_one, match)
    finally:
        summary.started_processes = pool.started
        await pool.close_all()
    return summary


async def play_pooled_match(config: TournamentConfig, match: ScheduledMatch, pool: BotPool,
                            play: PlayMatch) -> StoredMatch:
    """One match with pooled processes: completed, or aborted with the reason. Cancellation
    propagates (the match is not stored and will be replayed); the processes go back either way."""
    processes: list[Any] = []
    reusable: list[bool] = []              # per seat; processes without an entry are closed
    started = time.monotonic()
    try:
        for name in match.seats:
            processes.append(await pool.acquire(name))
        record_path = (config.records_dir / (match.match_id.replace("/", "_") + ".jsonl")
                       if config.records else None)
        result = None
        try:
            with trio.move_on_after(config.match_time_limit_s):
                result = await play(find_game(match.game_id), processes, seed=match.seed,
                                    options=match.options, match_id=match.match_id,
                                    time_control=config.time_control,
                                    max_faults=config.max_faults, record_path=record_path)
        except Exception as exc:           # a referee bug must not end a long tournament
            return _aborted(match, f"referee error: {type(exc).__name__}: {exc}",
                            time.monotonic() - started)
        if result is None:                 # mid-match processes are in an unknown state
            return _aborted(match, f"cut by the match time limit of {config.match_time_limit_s:g}"
                            " s", time.monotonic() - started)
        reusable = [seat not in result.forfeited for seat in range(len(processes))]
        return _stored(match, result)
    finally:
        with trio.CancelScope(shield=True):
            for index, process in enumerate(processes):
                await pool.release(process, reusable=index < len(reusable) and reusable[index])


def _stored(match: ScheduledMatch, result: MatchResult) -> StoredMatch:
    return StoredMatch(
        match_id=match.match_id, game=match.game, game_id=match.game_id, table=match.table,
        deal=match.deal, rotation=match.rotation, seed=match.seed, players=match.players,
        options=dict(result.options), bots=tuple(result.bots), scores=tuple(result.scores),
        placings=tuple(result.placings),
        teams=None if result.teams is None else tuple(result.teams),
        forfeited=tuple(result.forfeited),
        faults=tuple(StoredFault(f.seat, f.bot, str(f.kind), f.request_id, f.message)
                     for f in result.faults),
        decision_ms=tuple(tuple(seat) for seat in result.decision_ms),
        status="completed", reason=result.termination,
        record_path=None if result.record_path is None else str(result.record_path),
        duration_s=result.duration_s)


def _aborted(match: ScheduledMatch, reason: str, duration_s: float) -> StoredMatch:
    return StoredMatch(
        match_id=match.match_id, game=match.game, game_id=match.game_id, table=match.table,
        deal=match.deal, rotation=match.rotation, seed=match.seed, players=match.players,
        options=dict(match.options), bots=match.seats, scores=(), placings=(), teams=None,
        forfeited=(), faults=(), decision_ms=(), status="aborted", reason=reason,
        duration_s=duration_s)
