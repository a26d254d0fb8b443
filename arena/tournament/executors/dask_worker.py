"""The Dask worker's side of ``--cluster``: a worker plugin keeping bot processes across tasks.

Only a Dask worker imports this module (the ``arena`` process names its functions in the tasks
it submits), so the worker machine needs Trick Arena installed with its ``cluster`` extra, the
same version as the ``arena`` process.

:class:`ArenaWorkerPlugin` runs one trio loop in a thread of the worker for its whole life. A
task (:func:`play_batch`) hands that loop a batch of matches and blocks its Dask thread until
they are played. The first task of a run (one ``arena tournament`` command) on a worker sets the
run up there: it unpacks the bot folders the run needs into the worker's bot cache (checked
against their hashes, :mod:`arena.tournament.executors.packing`), points the bots at them, and
starts one process of every bot (the warm-up); later tasks of the run find the processes in the
pool, as the local worker processes do. At most ``matches_per_worker`` matches (default: the
worker's thread count, ``dask worker --nthreads``) play at once on a worker, whatever number of
tasks it runs.

A run ends when the ``arena`` process says so (:func:`close_run`, run on every worker), or after
:data:`IDLE_CLOSE_S` without a task (the ``arena`` process went away), or when the worker stops;
its bot processes are closed then. Records are written in the worker's scratch folder, read back
into the task's result and deleted; bot logs stay in ``<cache>/logs/<run>/`` on the worker.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import trio
from distributed import WorkerPlugin, get_worker
from distributed.core import Status

from arena.referee.match import run_match
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.record import RecordShelf, read_span
from arena.tournament.config import TournamentConfig
from arena.tournament.executors.packing import CACHE_VARIABLE, Shipment, relocate, unpack
from arena.tournament.pool import BotPool, hide_from_each_other, play_pooled_match
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.store import StoredMatch

PLUGIN_NAME = "trick-arena"
SHIPPED_RECORDS_KEPT = 16 << 20  # bytes a worker's records file may hold before it is emptied
IDLE_CLOSE_S = 300.0  # a run with no task for this long is closed (its arena is gone)
IDLE_CHECK_S = 10.0
LOOP_START_S = 30.0
# Dask's statistical profiler samples a worker's busy task threads 100 times a second; an arena
# task's thread only waits for the trio loop, so there is nothing to learn, and on a small
# machine those wake-ups (and the event-loop tick's 50 a second) take CPU and the GIL from the
# referee. The plugin pauses the one and slows the other while it is set up on a worker.
PAUSED_CALLBACKS = ("profile", "profile-cycle")
TICK_MS = 500.0


@dataclass(frozen=True)
class RunSetup:
    """What every worker needs to play the matches of one run, sent once per worker."""

    run_id: str
    config: TournamentConfig
    shipments: tuple[Shipment, ...]  # the bots the pending matches need
    matches_per_worker: int | None


@dataclass(frozen=True)
class PlayedMatch:
    match: StoredMatch  # its record as written on the worker (the arena rewrites it)
    record: bytes | None  # the match record's contents, when records are on


@dataclass(frozen=True)
class BatchResult:
    worker: str  # the worker's address
    played: tuple[PlayedMatch, ...]
    started: int  # bot processes this worker started for the run so far
    task_start: float  # wall-clock time (time.time()) the task began on the worker
    task_s: float  # the task's whole time on the worker
    play_s: float  # of which playing the matches (the rest is Dask's and the hand-over's)
    setup_s: float = 0.0  # of which setting the run up: unpacking, starting the bots
    given_up: tuple[tuple[str, str], ...] = ()  # bots this worker stopped starting, and why
    log_dir: str = ""  # where this run's bots' standard error stays on this worker (SPEC 10.8)


class RunClosed(Exception):
    """The run was closed on this worker while a batch of it was being played."""


@dataclass
class _Run:
    config: TournamentConfig
    pool: BotPool
    limiter: trio.CapacityLimiter
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)
    batches: set[trio.CancelScope] = field(default_factory=set)
    # The run's records files here (with records on): each match's record is read back from
    # its span and shipped with the result; the arena appends it to its own records file.
    shelf: RecordShelf | None = None


def default_cache() -> Path:
    """``TRICK_ARENA_CACHE``, else for root /var/cache/trick-arena/bots (root's bots run as
    other users, who cannot enter root's home), else ~/.cache/trick-arena/bots."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured)
    if os.geteuid() == 0:
        return Path("/var/cache/trick-arena/bots")
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trick-arena" / "bots"


class ArenaWorkerPlugin(WorkerPlugin):
    """One trio loop per Dask worker, holding each run's pool of bot processes across tasks."""

    name = PLUGIN_NAME

    def setup(self, worker: Any) -> None:
        self.address = str(worker.address)
        self.nthreads = int(getattr(worker.state, "nthreads", 1) or 1)
        self.cache = default_cache()
        self.scratch = Path(worker.local_directory) / "trick-arena"
        self.runs: dict[str, _Run] = {}
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)
        self._thread.name = "trick-arena-trio"
        self._thread.start()
        if not self._ready.wait(LOOP_START_S):
            raise RuntimeError("trick-arena: the worker's trio loop did not start")
        self._lightened = _lighten(worker)

    def teardown(self, worker: Any) -> None:
        if worker.status == Status.running:  # unregistered: the worker goes on without us
            _restore(self._lightened)
        if self._token is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join(timeout=30)

    # -- the calls from Dask's threads ---------------------------------------------------------

    def play(
        self, setup: RunSetup, packages: Mapping[str, bytes], matches: Sequence[ScheduledMatch]
    ) -> BatchResult:
        start_wall, start = time.time(), time.perf_counter()
        played, started, play_s, setup_s = trio.from_thread.run(
            self._play, setup, packages, matches, trio_token=self._token
        )
        task_s = time.perf_counter() - start
        run = self.runs.get(setup.run_id)
        given_up = tuple(sorted(run.pool.given_up.items())) if run is not None else ()
        return BatchResult(
            self.address,
            played,
            started,
            start_wall,
            task_s,
            play_s,
            setup_s,
            given_up,
            str(self.cache / "logs" / setup.run_id),
        )

    def close_run(self, run_id: str) -> int:
        return trio.from_thread.run(self._close_run, run_id, trio_token=self._token)

    # -- inside the trio loop ------------------------------------------------------------------

    async def _main(self) -> None:
        self._stop = trio.Event()
        self._setting_up = trio.Lock()
        self._token = trio.lowlevel.current_trio_token()
        self._ready.set()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._close_idle_runs)
            await self._stop.wait()
            nursery.cancel_scope.cancel()
        for run_id in list(self.runs):
            await self._close_run(run_id)

    async def _close_idle_runs(self) -> None:
        while True:
            await trio.sleep(IDLE_CHECK_S)
            now = time.monotonic()
            for run_id, run in list(self.runs.items()):
                if run.busy == 0 and now - run.last_used > IDLE_CLOSE_S:
                    await self._close_run(run_id)

    async def _run_for(self, setup: RunSetup, packages: Mapping[str, bytes]) -> _Run:
        async with self._setting_up:  # two first tasks of a run at once set it up once
            run = self.runs.get(setup.run_id)
            if run is not None:
                return run
            entries = await trio.to_thread.run_sync(self._unpack, setup.shipments, packages)
            output = self.scratch / setup.run_id
            log_dir = self.cache / "logs" / setup.run_id
            config = replace(setup.config, output=output)
            # Hidden from every bot: the run's files here and the whole cache, less its own
            # entry (other runs' bots, other bots' entries, the logs).
            bots = tuple(
                hide_from_each_other(
                    [relocate(s, entries.get(s.package or "")) for s in setup.shipments],
                    [*config.arena_files(), str(self.cache)],
                )
            )
            config = replace(config, bots=bots)
            log_dir.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            log_dir.mkdir(mode=0o700, exist_ok=True)
            if config.records:
                config.records_dir.mkdir(parents=True, exist_ok=True)
            pool = BotPool(
                bots,
                start_bot=self._start_bot,
                time_control=config.time_control,
                log_dir=log_dir,
                fresh=config.fresh_processes,
            )
            slots = setup.matches_per_worker or self.nthreads
            shelf = RecordShelf(config.records_dir) if config.records else None
            run = _Run(config, pool, trio.CapacityLimiter(slots), shelf=shelf)
            self.runs[setup.run_id] = run
            await pool.warm_up()
            return run

    def _unpack(self, shipments: Sequence[Shipment], packages: Mapping[str, bytes]) -> dict:
        entries = {}
        for shipment in shipments:
            sha = shipment.package
            if sha is not None and sha not in entries:
                entries[sha] = unpack(self.cache, sha, packages[sha])
        return entries

    async def _start_bot(self, spec: Any, **options: Any) -> BotProcess:
        """The referee's start, with the worker named in the reason a bot could not start (a
        program missing on this machine is this worker's problem, not the bot's)."""
        try:
            return await BotProcess.start(spec, **options)
        except BotStartupError as exc:
            raise BotStartupError(
                exc.bot, f"{exc.reason} (on Dask worker {self.address})"
            ) from None

    async def _play(
        self, setup: RunSetup, packages: Mapping[str, bytes], matches: Sequence[ScheduledMatch]
    ) -> tuple[tuple[PlayedMatch, ...], int, float, float]:
        begun = time.perf_counter()
        run = await self._run_for(setup, packages)
        start = time.perf_counter()
        played: list[PlayedMatch | None] = [None] * len(matches)

        async def play_one(index: int, match: ScheduledMatch) -> None:
            async with run.limiter:  # the stored match carries the referee's latency here
                stored = await play_pooled_match(run.config, match, run.pool, run_match, run.shelf)
            played[index] = PlayedMatch(stored, _take_record(stored))

        run.busy += 1
        scope = trio.CancelScope()
        run.batches.add(scope)
        try:
            with scope:
                async with trio.open_nursery() as nursery:
                    for index, match in enumerate(matches):
                        nursery.start_soon(play_one, index, match)
            if run.shelf is not None and run.busy == 1:
                # Every record of this batch is read back, and no other batch runs: what the
                # files hold is shipped, so they need not grow without end.
                run.shelf.trim(SHIPPED_RECORDS_KEPT)
        finally:
            run.batches.discard(scope)
            run.busy -= 1
            run.last_used = time.monotonic()
        if scope.cancelled_caught:
            raise RunClosed(f"run {setup.run_id} was closed on {self.address}")
        done = tuple(p for p in played if p is not None)
        return done, run.pool.started, time.perf_counter() - start, start - begun

    async def _close_run(self, run_id: str) -> int:
        run = self.runs.pop(run_id, None)
        if run is None:
            return 0
        for scope in list(run.batches):
            scope.cancel()
        await run.pool.close_all()
        if run.shelf is not None:
            run.shelf.close(remove=True)  # every record in them went back with its match
        return run.pool.started


def _lighten(worker: Any) -> list[tuple[Any, float | None]]:
    """Pause the worker's profiler and slow its tick (in Dask's event loop, where plugins are
    set up); returns what to undo: (callback, its old interval, or None if it was stopped)."""
    changed: list[tuple[Any, float | None]] = []
    callbacks = getattr(worker, "periodic_callbacks", {})
    for name in PAUSED_CALLBACKS:
        callback = callbacks.get(name)
        if callback is not None and callback.is_running():
            callback.stop()
            changed.append((callback, None))
    tick = callbacks.get("tick")
    if tick is not None and tick.callback_time < TICK_MS:
        changed.append((tick, tick.callback_time))
        tick.callback_time = TICK_MS
    return changed


def _restore(changed: list[tuple[Any, float | None]]) -> None:
    for callback, interval in changed:
        if interval is None:
            callback.start()
        else:
            callback.callback_time = interval


def _take_record(stored: StoredMatch) -> bytes | None:
    """The match's record, read back from where it was written here (to ship it)."""
    span = None if stored.record is None else stored.record.span
    if stored.record is None or span is None:
        return None
    at, length = span
    try:
        data = read_span(stored.record.path, at, length)
    except OSError:
        return None
    return data if len(data) == length else None


def _plugin() -> ArenaWorkerPlugin:
    plugin = get_worker().plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, ArenaWorkerPlugin):
        raise RuntimeError("trick-arena: this Dask worker has no trick-arena plugin")
    return plugin


def play_batch(
    setup: RunSetup, packages: Mapping[str, bytes], matches: Sequence[ScheduledMatch]
) -> BatchResult:
    """The Dask task: play ``matches`` on this worker (in its trio loop) and return them."""
    return _plugin().play(setup, packages, matches)


async def close_run(run_id: str, dask_worker: Any = None) -> int:
    """Run on every worker by the ``arena`` process at the end: close the run's bot processes.
    Returns how many this worker started for it."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME) if dask_worker is not None else None
    if not isinstance(plugin, ArenaWorkerPlugin):
        return 0
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, plugin.close_run, run_id)


__all__ = [
    "ArenaWorkerPlugin",
    "BatchResult",
    "PlayedMatch",
    "RunClosed",
    "RunSetup",
    "close_run",
    "play_batch",
]
