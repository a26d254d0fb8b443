"""The executor of ``--cluster``: the matches played on the workers of a Dask scheduler.

The ``arena`` process stays the only writer of the results file and keeps the live view; Dask
(the optional ``cluster`` extra) only carries batches of matches to its workers and their
results back. In order:

1. connect to the scheduler (``tls://HOST:8786`` with the organiser's TLS files, or Dask's own
   TLS configuration), or start a local cluster of N worker processes (``local:N``: on
   127.0.0.1 only, over TLS with a certificate made for it, in memory), and wait for a worker.
   A Dask scheduler runs whatever code a client sends it, on every worker: whoever can connect
   to it owns the workers' accounts. So a local cluster takes no client without its
   certificate, and a remote one should not either (SPEC 10.8);
2. pack every bot folder the pending matches need, once (:mod:`.packing`), and hand the
   packages and the run's setup to Dask, which ships them to each worker that runs a task;
3. register the worker plugin (:mod:`.dask_worker`), which keeps a pool of bot processes per
   worker across tasks;
4. submit the matches in schedule order, in batches sized from the matches' measured length so
   that a task lasts about :data:`TARGET_TASK_S` (short ones at first, and near the end so the
   last tasks spread over every worker), with two tasks per worker thread in flight;
5. store each finished match as its batch comes back, append its record to a records file as a
   local run would, and count it for the worker that played it.

Faults of the cluster: a worker that dies mid-batch loses the batch, which Dask plays again on
another worker; the run notices the worker gone (it watches the scheduler's workers) and counts
the matches played again (a batch that was on a lost worker: Dask's ``suspicious`` count); both
are said at the end. A batch that kills workers again and again (Dask gives up after
``distributed.scheduler.allowed-failures``) is played again one match per task, and a match that
still kills its worker is stored as aborted (replayed on the next run). A match is never stored
twice (the runner keeps the first). A scheduler that goes away stops the run with one line, and
so does a scheduler left without any worker for :data:`WORKER_WAIT_S` (said as what it is);
every stored match is kept and the same command resumes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import math
import multiprocessing
import os
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import replace
from multiprocessing import forkserver
from typing import Any

import trio

from arena.referee.cores import pin_threads, spread_cores
from arena.referee.process import related_pids
from arena.referee.record import RecordShelf
from arena.tournament.config import LOCAL_CLUSTER, TournamentConfig
from arena.tournament.errors import TournamentError
from arena.tournament.executors import Keep
from arena.tournament.executors.packing import PackError, pack_bots
from arena.tournament.pool import (
    _aborted,  # the same aborted match as a local run stores
)
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.store import StoredMatch
from arena.tournament.summary import RunSummary, WorkerReport

INSTALL_LINE = (
    "--cluster needs Dask, which is not installed: pip install -e '.[cluster]' "
    "(or pip install distributed)"
)
TARGET_TASK_S = 3.0  # a batch lasts about this long on a worker
FIRST_BATCH = 1  # matches per task before any match length is known
MAX_BATCH = 512
TASKS_PER_THREAD = 2  # in flight per worker thread: one playing, one waiting there
THREADS_RECOUNT_S = 5.0
CONNECT_TIMEOUT_S = 20.0
WORKER_WAIT_S = 60.0  # at the start, and after every worker was lost, for one to come
WATCH_S = 1.0  # how often the run looks at the scheduler's workers
CLOSE_TIMEOUT_S = 30.0
TAIL_SPLIT = 2 * TASKS_PER_THREAD  # near the end, a batch is at most 1/(this * threads) of it
# Dask settings for the workers of ``local:N`` and its scheduler (see _local_cluster)
LIGHT_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.admin.system-monitor.interval": "2s",
}
# what a local worker's forkserver imports once, for every worker it forks: the arena's main
# module (the ``arena`` command), Dask, and the worker's side of the arena
FORKSERVER_PRELOAD = ["__main__", "distributed", "arena.tournament.executors.dask_worker"]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise TournamentError(INSTALL_LINE) from None
    return distributed


class DaskCluster:
    """Plays matches on the workers of the Dask scheduler at ``address`` (or ``local:N``)."""

    def __init__(
        self,
        address: str,
        *,
        matches_per_worker: int | None = None,
        target_task_s: float = TARGET_TASK_S,
        tls: tuple[str, str, str] | None = None,
    ) -> None:
        self.address = address
        self.matches_per_worker = matches_per_worker
        self.target_task_s = target_task_s
        self.tls = tls  # (CA, certificate, key) files of a tls:// scheduler

    async def play(
        self,
        config: TournamentConfig,
        todo: Iterable[ScheduledMatch],
        bots: Sequence[str],
        keep: Keep,
        summary: RunSummary,
    ) -> None:
        begun = time.perf_counter()
        if LOCAL_CLUSTER.match(self.address) and importlib.util.find_spec("distributed"):
            _start_forkserver()  # it imports Dask and the arena while this process does
        distributed = _distributed()
        from arena.tournament.executors import dask_worker

        needed = [b for b in config.bots if b.name in set(bots)]
        try:
            shipments, packages = pack_bots(needed, leave_out=[config.output, config.results])
        except PackError as exc:
            raise TournamentError(f"{config.source}: {exc}") from None
        _quiet()
        client, cluster = await trio.to_thread.run_sync(self._connect, distributed, config.affinity)
        run_id = uuid.uuid4().hex[:12]
        dispatch = _Dispatch(self, client, distributed, config, todo, keep, summary)
        try:
            setup = dask_worker.RunSetup(
                run_id, config.for_players(), tuple(shipments), self.matches_per_worker
            )
            try:
                await trio.to_thread.run_sync(
                    dispatch.prepare, dask_worker, setup, {k: p.data for k, p in packages.items()}
                )
                summary.cluster_startup_s = time.perf_counter() - begun
                await dispatch.run(dask_worker.play_batch)
            except (OSError, TimeoutError, asyncio.CancelledError) as exc:  # Dask's comm errors
                raise TournamentError(dispatch.gone_line(exc)) from None
        finally:
            with trio.CancelScope(shield=True):
                with trio.move_on_after(CLOSE_TIMEOUT_S):
                    await trio.to_thread.run_sync(
                        dispatch.close,
                        dask_worker.close_run,
                        run_id,
                        cluster,
                        abandon_on_cancel=True,
                    )
            if dispatch.shelf is not None:
                dispatch.shelf.close()
            summary.started_processes = sum(r.started for r in summary.cluster_workers.values())

    def _security(self, distributed: Any) -> Any:
        """The client's security: the organiser's TLS files, else (a tls:// address) Dask's
        configuration, which must name them; None for another scheme (tcp://: no TLS)."""
        if self.tls is not None:
            ca, cert, key = self.tls
            try:
                return distributed.Security(
                    tls_ca_file=ca,
                    tls_client_cert=cert,
                    tls_client_key=key,
                    require_encryption=True,
                )
            except (OSError, ValueError) as exc:
                raise TournamentError(f"the cluster's TLS files: {_short(exc)}") from None
        if not self.address.startswith("tls://"):
            return None
        configured = distributed.Security()
        if not (configured.tls_ca_file and configured.tls_client_cert):
            raise TournamentError(
                f"{self.address}: a tls:// scheduler needs the cluster's TLS files: tls_ca_file, "
                "tls_cert and tls_key in the tournament file's [cluster], --cluster-tls "
                "CA,CERT,KEY, or Dask's configuration (distributed.comm.tls); SPEC.md 10.8"
            )
        return configured

    def _connect(self, distributed: Any, affinity: bool) -> tuple[Any, Any]:
        cluster = None
        local = LOCAL_CLUSTER.match(self.address)
        security = None if local else self._security(distributed)
        try:
            if local:
                cluster = _local_cluster(distributed, int(local.group(1)))
                if affinity:
                    _pin_local_workers(cluster)
                client = distributed.Client(
                    cluster, security=cluster.security, timeout=CONNECT_TIMEOUT_S
                )
            else:
                client = distributed.Client(
                    self.address, security=security, timeout=CONNECT_TIMEOUT_S
                )
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            raise TournamentError(
                f"cannot reach the Dask scheduler at {self.address} ({_short(exc)}); start one "
                "with `dask scheduler` and workers with `dask worker ADDRESS`"
            ) from None
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except (OSError, TimeoutError):
            client.close()
            if cluster is not None:
                cluster.close()
            raise TournamentError(
                f"the Dask scheduler at {self.address} has no worker after {WORKER_WAIT_S:g} s; "
                f"start one with `dask worker {self.address}`"
            ) from None
        return client, cluster


class _Dispatch:
    """One run on a cluster: what is in flight, what is left, what came back."""

    def __init__(
        self,
        owner: DaskCluster,
        client: Any,
        distributed: Any,
        config: TournamentConfig,
        todo: Iterable[ScheduledMatch],
        keep: Keep,
        summary: RunSummary,
    ) -> None:
        self.owner = owner
        self.client = client
        self.distributed = distributed
        self.config = config
        self.todo = iter(todo)  # read as needed: a schedule may be huge
        self.ahead: deque[ScheduledMatch] = deque()  # read from todo, not yet sent
        self.exhausted = False
        self.handed_back: deque[list[ScheduledMatch]] = deque()  # batches to send again whole
        self.keep = keep
        self.summary = summary
        # future key -> (future, its batch, played alone, workers lost before it was sent)
        self.in_flight: dict[str, tuple[Any, list[ScheduledMatch], bool, int]] = {}
        self.batches = 0
        self.mean_match_s: float | None = None
        self.busy: dict[str, list[tuple[float, float]]] = {}  # worker -> task intervals
        self.inside_s = 0.0  # task time outside the matches, summed
        self.shelf: RecordShelf | None = None  # where the records that come back go (SPEC 8)
        self.workers: set[str] = set()  # the scheduler's workers at the last look
        self.losses = 0  # workers lost so far: a batch submitted before a loss may be replayed
        self.replayed: set[str] = set()  # batches counted as played again after a lost worker
        self.no_worker_since: float | None = None  # when the scheduler was left without any

    # -- in a thread: blocking calls to Dask --------------------------------------------------

    def prepare(self, dask_worker: Any, setup: Any, packages: dict[str, bytes]) -> None:
        self.client.register_plugin(dask_worker.ArenaWorkerPlugin(), name=dask_worker.PLUGIN_NAME)
        self.setup = self.client.scatter(setup, broadcast=True, hash=False)
        self.packages = self.client.scatter(packages, broadcast=True) if packages else {}

    def threads(self) -> int:
        workers = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))

    def close(self, close_run: Any, run_id: str, cluster: Any) -> None:
        try:
            if self.client.status != "running":  # the scheduler is gone: nobody to tell
                return
            if self.in_flight:
                self.client.cancel([entry[0] for entry in self.in_flight.values()])
            for address, started in (self.client.run(close_run, run_id) or {}).items():
                report = self.summary.cluster_workers.setdefault(address, WorkerReport())
                report.started = max(report.started, int(started or 0))
        except Exception:  # the scheduler is gone already: its workers close idle runs
            pass
        finally:
            self.client.close()
            if cluster is not None:
                cluster.close()

    # -- in the trio loop ---------------------------------------------------------------------

    async def run(self, play_batch: Any) -> None:
        token = trio.lowlevel.current_trio_token()
        done_send, done_receive = trio.open_memory_channel[Any](math.inf)

        def on_done(future: Any) -> None:  # in Dask's callback thread
            try:
                token.run_sync_soon(done_send.send_nowait, future)
            except trio.RunFinishedError:
                pass

        self._play_batch, self._on_done = play_batch, on_done
        threads = await trio.to_thread.run_sync(self.threads)
        self.workers = await self._look()
        counted = time.monotonic()
        try:
            await self._loop(play_batch, done_send, done_receive, threads, counted)
        except BaseExceptionGroup as group:  # (the watcher's nursery): the error as itself
            first: BaseException = group
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None

    async def _loop(
        self, play_batch: Any, done_send: Any, done_receive: Any, threads: int, counted: float
    ) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch, done_send)
            while self._more(threads) or self.in_flight:
                while self._more(threads) and len(self.in_flight) < TASKS_PER_THREAD * threads:
                    self._submit(self._take(threads))
                future = await done_receive.receive()
                if future is None:  # the watcher's nudge: a batch may have been handed back
                    continue
                entry = self.in_flight.pop(future.key, None)
                if entry is None:
                    continue
                _, batch, alone, losses = entry
                if future.status == "finished":
                    if losses < self.losses:  # a worker was lost while it was out
                        await self._count_replayed(future.key, batch)
                    try:
                        result = await trio.to_thread.run_sync(future.result)
                    except (Exception, asyncio.CancelledError):  # its worker died just now
                        self._played_again(future.key, batch)
                        self.handed_back.append(batch)
                        continue
                    self._kept(result)
                    if time.monotonic() - counted > THREADS_RECOUNT_S:  # workers come and go
                        threads = await trio.to_thread.run_sync(self.threads)
                        counted = time.monotonic()
                elif future.status == "error":
                    error = await trio.to_thread.run_sync(future.exception)
                    self._failed(batch, alone, error)
                elif await trio.to_thread.run_sync(self.scheduler_alive):
                    # cancelled, not by us, with the scheduler up: its workers were lost
                    self._played_again(future.key, batch)
                    self.handed_back.append(batch)
                else:  # cancelled, not by us: the scheduler went away
                    raise TournamentError(self.gone_line(None))
                future.release()
            nursery.cancel_scope.cancel()
        self._note_lost(await self._look())  # (a worker lost near the end)

    async def _watch(self, nudge: Any) -> None:
        """Every WATCH_S: the workers lost since the last look (each counted once, said at the
        end), and a scheduler left without any worker for WORKER_WAIT_S, which ends the run
        with a line that says so (not "the scheduler went away": it is up)."""
        while True:
            await trio.sleep(WATCH_S)
            now = await self._look()
            self._note_lost(now)
            self.workers = now
            if now:
                self.no_worker_since = None
                nudge.send_nowait(None)  # (batches handed back are sent now there is a worker)
            elif self.no_worker_since is None:
                self.no_worker_since = time.monotonic()
            elif time.monotonic() - self.no_worker_since > WORKER_WAIT_S:
                raise TournamentError(self.no_worker_line())

    def look(self, keys: list[str]) -> tuple[set[str], list[str]] | None:
        """Ask the scheduler (one round trip) for its workers, and which of the batches
        ``keys`` in flight have lost a worker (Dask's ``suspicious``); None when it does not
        answer (gone: the run's futures say so)."""
        try:
            workers, suspicious = self.client.run_on_scheduler(_workers_and_suspicious, keys)
        except Exception:
            return None
        return set(workers), suspicious

    async def _look(self) -> set[str]:
        """The scheduler's workers now; batches in flight that lost their worker are counted
        as played again (once each)."""
        found = await trio.to_thread.run_sync(self.look, list(self.in_flight))
        if found is None:
            return set(self.workers)
        workers, suspicious = found
        for key in suspicious:
            entry = self.in_flight.get(key)
            if entry is not None:
                self._played_again(key, entry[1])
        return workers

    def _note_lost(self, now: set[str]) -> None:
        lost = sorted(self.workers - now)
        if lost:
            self.summary.cluster_lost.extend(lost)
            self.losses += len(lost)

    def scheduler_alive(self) -> bool:
        try:
            return self.client.status == "running" and self.client.run_on_scheduler(_alive)
        except Exception:
            return False

    async def _count_replayed(self, key: str, batch: list[ScheduledMatch]) -> None:
        """Count a finished batch's matches as played again when its task lost a worker,
        unless a look counted it already."""
        if key in self.replayed:
            return
        found = await trio.to_thread.run_sync(self.look, [key])
        if found is not None and key in found[1]:
            self._played_again(key, batch)

    def _played_again(self, key: str, batch: list[ScheduledMatch]) -> None:
        """Count a batch's matches as played again after a lost worker, once per batch."""
        if key not in self.replayed:
            self.replayed.add(key)
            self.summary.cluster_rescheduled += len(batch)

    def no_worker_line(self) -> str:
        lost = ", ".join(self.summary.cluster_lost[-3:]) or "?"
        return (
            f"every Dask worker of the scheduler at {self.owner.address} was lost (last: "
            f"{lost}) and none came back in {WORKER_WAIT_S:g} s; the scheduler is up. The "
            f"matches played so far are stored ({self.summary.played} in this run): start "
            f"workers (`dask worker {self.owner.address}`) and run the same command again to "
            "resume"
        )

    def gone_line(self, error: BaseException | None) -> str:
        why = f" ({_short(error)})" if error is not None else ""
        return (
            f"the Dask scheduler at {self.owner.address} went away{why}: the matches played so "
            f"far are stored ({self.summary.played} in this run); run the same command again "
            "to resume"
        )

    def _size(self) -> int:
        if self.mean_match_s is None:
            return FIRST_BATCH
        return max(
            1, min(MAX_BATCH, round(self.owner.target_task_s / max(self.mean_match_s, 1e-3)))
        )

    def _more(self, threads: int) -> bool:
        """Whether anything is left to send; reads ahead of the batch size, so that the end of
        the schedule is known in time to shrink the last batches."""
        want = self._size() * TAIL_SPLIT * threads
        while not self.exhausted and len(self.ahead) < want:
            match = next(self.todo, None)
            if match is None:
                self.exhausted = True
            else:
                self.ahead.append(match)
        return bool(self.ahead or self.handed_back)

    def _take(self, threads: int) -> list[ScheduledMatch]:
        """The next batch: about TARGET_TASK_S of matches, and never more than a
        ``1 / (TAIL_SPLIT * threads)`` share of what is left to send (guided self-scheduling),
        so the batches shrink towards the end and the workers finish together: a batch waits
        on its worker behind the one playing there, and the last ones are single matches."""
        if self.handed_back:
            return self.handed_back.popleft()
        share = math.ceil(len(self.ahead) / (TAIL_SPLIT * threads))  # ahead: all that is left,
        size = max(1, min(self._size(), share))  # or more than TAIL_SPLIT batches per thread
        return [self.ahead.popleft() for _ in range(min(size, len(self.ahead)))]

    def _submit(self, batch: list[ScheduledMatch], *, alone: bool = False) -> None:
        self.batches += 1
        future = self.client.submit(
            self._play_batch,
            self.setup,
            self.packages,
            batch,
            key=f"trick-arena-{batch[0].match_id}-{self.batches}",
            pure=False,
        )
        self.in_flight[future.key] = (future, batch, alone, self.losses)
        future.add_done_callback(self._on_done)

    def _kept(self, result: Any) -> None:
        report = self.summary.cluster_workers.setdefault(result.worker, WorkerReport())
        report.started = max(report.started, result.started)
        report.log_dir = result.log_dir or report.log_dir
        self.summary.given_up.update(dict(result.given_up))
        self.busy.setdefault(result.worker, []).append(
            (result.task_start, result.task_start + result.task_s)
        )
        self.inside_s += max(0.0, result.task_s - result.play_s - result.setup_s)
        for played in result.played:
            stored = self._localised(played.match, played.record)
            if stored.completed:
                length = stored.duration_s
                self.mean_match_s = (
                    length if self.mean_match_s is None else 0.8 * self.mean_match_s + 0.2 * length
                )
            report.add(stored)
            self.keep(stored)
        self.summary.cluster_overhead_s = self.inside_s + _idle_s(self.busy)

    def _localised(self, stored: StoredMatch, record: bytes | None) -> StoredMatch:
        """The match as a local run would store it: its record appended to a records file here
        (SPEC 8)."""
        if record is None or not self.config.records:
            return replace(stored, record_path=None, record_span=None)
        if self.shelf is None:
            self.shelf = RecordShelf(self.config.records_dir)
        file = None
        try:
            file = self.shelf.take()
            span = file.append(record)
        except OSError as exc:
            where = file.path if file is not None else self.config.records_dir
            raise TournamentError(f"{where}: cannot write the match record: {exc}") from None
        finally:
            if file is not None:
                self.shelf.give_back(file)
        return replace(stored, record_path=str(file.path), record_span=span)

    def _failed(self, batch: list[ScheduledMatch], alone: bool, error: BaseException) -> None:
        if isinstance(error, self.distributed.KilledWorker):
            if len(batch) > 1:  # one of them may be the culprit: play each on its own
                for match in batch:
                    self._submit([match], alone=True)
                return
            self.keep(_aborted(batch[0], "its Dask worker died each time it was played", 0.0))
            return
        if isinstance(error, TournamentError):  # e.g. the preflight, on the worker: as it is
            raise error
        raise TournamentError(
            f"a Dask worker failed on matches {batch[0].match_id}..: "
            f"{type(error).__name__}: {_short(error)}"
        )


def _alive(dask_scheduler: Any = None) -> bool:
    """Run on the scheduler: that it answers is the point."""
    return True


def _workers_and_suspicious(
    keys: list[str], dask_scheduler: Any = None
) -> tuple[list[str], list[str]]:
    """Run on the scheduler: its workers, and which of ``keys`` lost a worker while running
    (Dask's ``suspicious`` count: it plays them again elsewhere)."""
    if dask_scheduler is None:
        return [], []
    tasks = dask_scheduler.tasks
    return list(dask_scheduler.workers), [
        key for key in keys if key in tasks and tasks[key].suspicious
    ]


def _local_cluster(distributed: Any, count: int) -> Any:
    """A LocalCluster of ``count`` worker processes, started the quick way, reachable by this
    process only: its scheduler, nannies and workers listen on 127.0.0.1 alone (no dashboard),
    over TLS that requires a certificate made for this cluster (``Security.temporary``: a
    self-signed pair that lives in memory, handed to the workers it starts). A bot, or any other
    local process, that finds the ports cannot connect, so cannot run code there.

    Dask spawns each worker as a fresh interpreter, which imports Dask and the arena again (and
    reruns the ``arena`` command's module): about a second of CPU per worker, the whole start-up
    of a short tournament. Forked instead from one forkserver that imported them once, the
    workers are up in a fraction of that. A forked worker sees the environment the forkserver
    started with, so the arena's is handed to each (the bot cache, the bot user). The
    workers also run without Dask's statistical profiler (an arena task only waits for the
    worker's trio loop: nothing to profile) and with a slower event-loop tick
    (:data:`LIGHT_CONFIG`): Dask's own wake-ups, a hundred a second, took the CPU from the
    matches on a small machine. A worker the nanny restarts after a crash is spawned as Dask
    does by default."""
    import dask

    settings: dict[str, Any] = dict(LIGHT_CONFIG)
    if _start_forkserver():
        settings["distributed.worker.multiprocessing-method"] = "forkserver"
        # Dask's first forkserver context imports numpy and more into this process, for a
        # preload list of its own that comes too late here: the server runs with ours
        if hasattr(distributed.utils, "_forkserver_preload_set"):
            distributed.utils._forkserver_preload_set = True
    with dask.config.set(settings):
        return distributed.LocalCluster(
            n_workers=count,
            threads_per_worker=_threads_per_worker(count),
            processes=True,
            host="127.0.0.1",
            protocol="tls://",
            security=distributed.Security.temporary(),
            dashboard_address=None,  # (it would listen on every interface)
            worker_dashboard_address=None,
            silence_logs=logging.CRITICAL,
            env=dict(os.environ),
        )


def _threads_per_worker(count: int) -> int:
    """A ``local:N`` worker's threads: the cores shared among the N workers, at least one."""
    return max(1, (os.cpu_count() or 1) // max(1, count))


def _pin_local_workers(cluster: Any) -> None:
    """``local:N``: each worker process on cores of its own, a core per thread (one each when N
    is the number of cores), as ``arena tournament`` pins its own worker processes (SPEC 10.4);
    the bots it starts later start there. A worker the nanny restarts, and workers started
    elsewhere (``dask worker``), are not pinned."""
    pids = [getattr(nanny, "pid", None) for nanny in cluster.workers.values()]
    threads = _threads_per_worker(len(pids))
    for pid, cores in zip(pids, spread_cores([threads] * len(pids))):
        if pid is not None and cores is not None:
            for process in related_pids(pid):  # the worker and anything it started already
                pin_threads(process, cores)


def _start_forkserver() -> bool:
    """Start this process's forkserver, preloading :data:`FORKSERVER_PRELOAD`, unless it runs
    already (a second local cluster in one process forks from the same one); False where
    there is no forkserver (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    multiprocessing.get_context("forkserver").set_forkserver_preload(FORKSERVER_PRELOAD)
    forkserver.ensure_running()
    return True


def _idle_s(busy: dict[str, list[tuple[float, float]]]) -> float:
    """Per worker, the time between its first task's start and its last task's end during
    which it ran no task, summed over the workers."""
    idle = 0.0
    for intervals in busy.values():
        intervals.sort()
        end = intervals[0][1]
        for start, finish in intervals[1:]:
            if start > end:
                idle += start - end
            end = max(end, finish)
    return idle


def _quiet() -> None:
    """Dask logs a traceback for a scheduler it cannot reach (and more); the run says what
    matters in one line. Its loggers have levels of their own: each is raised."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    for name in ["distributed", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
