"""Playing matches in one process: the pool of bot processes and one pooled match.

Both the in-process runner (``arena.tournament.runner``) and each worker process
(``arena.tournament.workers``) play through this module; it knows nothing of either.

- Bot processes are pooled: a process is started when no idle one of that bot is free, and goes
  back to the pool after its match. A process that crashed, was forfeited, or was in a match that
  was cut short is closed and never reused; the next match starts a fresh one.
- A bot that cannot be started forfeits the match it was wanted for: its seat gets a ``startup``
  fault and the autopilot plays it. After three failures in a row the bot is not started again
  in this run: its remaining matches are forfeited at once with the same reason.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.confine import hidden_from
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.record import RecordFile, RecordShelf
from arena.referee.results import MatchResult
from arena.tournament.config import TournamentConfig
from arena.tournament.errors import PreflightError, TournamentError
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.store import StoredMatch

CLOSE_GRACE_S = 10.0  # a bound on closing one bot process (it kills on its own before)
STARTUP_FAILURES_TO_GIVE_UP = 3

StartBot = Callable[..., Awaitable[Any]]
PlayMatch = Callable[..., Awaitable[MatchResult]]


def hide_from_each_other(specs: Sequence[BotSpec], arena: Sequence[str]) -> list[BotSpec]:
    """Each bot with what its seal hides from it (SPEC.md section 7): ``arena`` (the
    tournament's own files) and the other bots' folders, less any holding its own folder (bots
    sharing a folder see each other's files). Its command line counts for nothing here: a
    submitted bot's is its author's."""
    folders = [os.path.abspath(spec.cwd) for spec in specs if spec.cwd]
    hidden = []
    for spec in specs:
        own = [os.path.abspath(spec.cwd)] if spec.cwd else []
        others = [folder for folder in folders if folder not in own]
        hidden.append(replace(spec, hidden=hidden_from(own, others, arena)))
    return hidden


class BotPool:
    """Idle bot processes by bot name; starts new ones on demand, closes unusable ones."""

    def __init__(
        self,
        specs: Sequence[BotSpec],
        *,
        start_bot: StartBot,
        time_control: TimeControl,
        log_dir: Path,
        fresh: bool = False,
    ) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self.fresh = fresh  # every match gets processes that have played none
        self._start_bot = start_bot
        self._time_control = time_control
        self._log_dir = log_dir
        self._idle: dict[str, list[Any]] = {name: [] for name in self.specs}
        self._open: set[Any] = set()  # every process started and not yet closed
        self._failures: Counter[str] = Counter()
        self.given_up: dict[str, str] = {}  # bots not started again in this run, and why
        self.started = 0

    async def acquire(self, name: str) -> Any:
        """A running process of bot ``name``, or (when it cannot start) a stand-in whose seat the
        referee forfeits with a startup fault."""
        spec = self.specs[name]
        if name in self.given_up:
            return BotProcess.absent(spec, self.given_up[name])
        idle = self._idle[name]
        while idle:
            process = idle.pop()
            if process.alive:
                return process
            await self._close(process)
        try:
            process = await self._start_bot(
                spec, time_control=self._time_control, log_dir=self._log_dir
            )
        except BotStartupError as exc:
            self._failures[name] += 1
            if self._failures[name] >= STARTUP_FAILURES_TO_GIVE_UP:
                self.given_up[name] = (
                    f"{exc.reason} (failed to start {self._failures[name]} "
                    "times in a row: not started again in this run)"
                )
            return BotProcess.absent(spec, exc.reason)
        self._failures[name] = 0
        self._open.add(process)
        self.started += 1
        return process

    async def release(self, process: Any, *, reusable: bool, played: bool = True) -> None:
        """Back to the pool for another match, or closed (it cannot be trusted, or the pool
        gives every match fresh processes and it ``played``)."""
        if reusable and process.alive and not (self.fresh and played):
            self._idle[process.spec.name].append(process)
        else:
            await self._close(process)

    async def warm_up(self) -> None:
        """The preflight: start one process of every bot at once (so the first matches do not
        wait in line) and raise :class:`PreflightError` when any of them cannot start, with one
        line per broken bot: its name, command, folder, the reason and its last stderr lines."""
        started: list[Any] = []
        broken: list[str] = []

        async def start_one(name: str) -> None:
            spec = self.specs[name]
            try:
                process = await self._start_bot(
                    spec, time_control=self._time_control, log_dir=self._log_dir
                )
            except BotStartupError as exc:
                broken.append(broken_bot_line(spec, exc))
                return
            self._open.add(process)
            self.started += 1
            started.append(process)

        try:
            async with trio.open_nursery() as nursery:
                for name in self.specs:
                    nursery.start_soon(start_one, name)
        finally:
            for process in started:
                await self.release(process, reusable=True, played=False)
        if broken:
            raise PreflightError(preflight_message(broken, len(self.specs)))

    def pin(self, cores: Collection[int]) -> None:
        """Run every bot process of the pool on ``cores`` only (after the warm-up: they started
        on every core at once). A fake without ``pin`` is passed over."""
        for process in self._open:
            pin = getattr(process, "pin", None)
            if pin is not None:
                pin(cores)

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


def broken_bot_line(spec: BotSpec, exc: BotStartupError) -> str:
    """One line: which bot, what it runs, where, why it did not start, what it said."""
    folder = os.path.abspath(spec.cwd) if spec.cwd else "a fresh private folder (no cwd given)"
    said = getattr(exc, "stderr_tail", "")
    if not said:
        said = "; it wrote nothing to stderr"
    elif all(part.strip() in exc.reason for part in re.split(r" \| |\n", said)):
        said = ""  # the reason quotes it already (a process that ended says its stderr)
    else:
        said = f"; its stderr ends: {said}"
    return f"bot {spec.name!r}: `{shlex.join(spec.argv)}` in {folder}: {exc.reason}{said}"


def preflight_message(broken: Sequence[str], total: int) -> str:
    lines = sorted(broken)
    return "\n".join(
        [
            # (no count of what was played: a round of arena compare or of a stop rule may fail
            # after earlier rounds were stored; the commands say what is stored)
            f"preflight: {len(lines)} of {total} bots cannot start, so the run stopped before "
            "its next match (fix them and run the same command again)",
            *lines,
        ]
    )


async def play_pooled_match(
    config: TournamentConfig,
    match: ScheduledMatch,
    pool: BotPool,
    play: PlayMatch,
    shelf: RecordShelf | None = None,
) -> StoredMatch:
    """One match with pooled processes: completed, or aborted with the reason. Cancellation
    propagates (the match is not stored and will be replayed); the processes go back either way.
    With records on, the record is appended to one of ``shelf``'s records files (SPEC 8), or
    without a shelf written to a file of its own (``record_name``)."""
    processes: list[Any] = []
    reusable: list[bool] = []  # per seat; processes without an entry are closed
    started = time.monotonic()
    record_path: Path | RecordFile | None = None
    try:
        for name in match.seats:
            processes.append(await pool.acquire(name))
        result = None
        try:
            if config.records:
                record_path = (
                    config.records_dir / record_name(match) if shelf is None else shelf.take()
                )
            with trio.move_on_after(config.match_time_limit_s):
                result = await play(
                    find_game(match.game_id),
                    processes,
                    seed=match.seed,
                    options=match.options,
                    match_id=match.match_id,
                    time_control=config.time_control,
                    max_faults=config.max_faults,
                    record_path=record_path,
                    sent_id=match.sent_id or None,
                    # (only with a secret seed: a test's stand-in `play` may not take it)
                    **({"commitment": config.commitment} if config.commitment else {}),
                )
        except OSError as exc:  # the arena's own files (the record): every later match would fail
            where = record_path.path if isinstance(record_path, RecordFile) else record_path
            raise TournamentError(
                f"{match.match_id}: cannot write its record {where or config.records_dir}: "
                f"{exc.strerror or exc}; the matches stored before it are kept: fix the cause "
                "(e.g. free disk space) and run the same command again to resume"
            ) from None
        except Exception as exc:  # a referee bug must not end a long tournament
            return _aborted(
                match, f"referee error: {type(exc).__name__}: {exc}", time.monotonic() - started
            )
        if result is None:  # mid-match processes are in an unknown state
            return _aborted(
                match,
                f"cut by the match time limit of {config.match_time_limit_s:g} s",
                time.monotonic() - started,
            )
        reusable = [seat not in result.forfeited for seat in range(len(processes))]
        return _stored(match, result)
    finally:
        if isinstance(record_path, RecordFile) and shelf is not None:
            shelf.give_back(record_path)
        with trio.CancelScope(shield=True):
            for index, process in enumerate(processes):
                await pool.release(process, reusable=index < len(reusable) and reusable[index])


def record_name(match: ScheduledMatch) -> str:
    """``<label>_t<t>_d<d>_r<r>-<key prefix>.jsonl.gz``: the content key keeps the record of a
    match of an older definition (same id, other bots) from being overwritten; gzip (SPEC 8)."""
    suffix = f"-{match.key[:12]}" if match.key else ""
    return match.match_id.replace("/", "_") + suffix + ".jsonl.gz"


def _stored(match: ScheduledMatch, result: MatchResult) -> StoredMatch:
    return StoredMatch(
        match_id=match.match_id,
        game=match.game,
        game_id=match.game_id,
        table=match.table,
        deal=match.deal,
        rotation=match.rotation,
        seed=match.seed,
        players=match.players,
        options=dict(result.options),
        bots=tuple(result.bots),
        scores=tuple(result.scores),
        placings=tuple(result.placings),
        teams=None if result.teams is None else tuple(result.teams),
        forfeited=tuple(result.forfeited),
        faults=tuple(result.faults),
        decision_ms=tuple(tuple(seat) for seat in result.decision_ms),
        status="completed",
        reason=result.termination,
        record_path=None if result.record_path is None else str(result.record_path),
        record_span=result.record_span,
        duration_s=result.duration_s,
        referee=result.referee_latency,
        key=match.key,
    )


def _aborted(match: ScheduledMatch, reason: str, duration_s: float) -> StoredMatch:
    return StoredMatch(
        match_id=match.match_id,
        game=match.game,
        game_id=match.game_id,
        table=match.table,
        deal=match.deal,
        rotation=match.rotation,
        seed=match.seed,
        players=match.players,
        options=dict(match.options),
        bots=match.seats,
        scores=(),
        placings=(),
        teams=None,
        forfeited=(),
        faults=(),
        decision_ms=(),
        status="aborted",
        reason=reason,
        duration_s=duration_s,
        key=match.key,
    )
