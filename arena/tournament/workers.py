"""Worker processes: the tournament's matches played on several cores, stored by the parent.

The parent (``run_tournament`` with ``workers`` > 1) keeps the store, the schedule, the standings
and the live view, and plays the first share of ``concurrency`` itself: the same worker loop
(:func:`worker_loop`) in its own trio loop, over memory channels instead of pipes, so the first
match starts as soon as its bots are up (no interpreter to start, nothing to import: a worker
process spends ~0.2 s of CPU on that). The worker processes are started once the parent's own
bots are up (``SPAWN_WAIT_S`` at the latest), so those start-ups do not share the cores.
Each other share is a worker process, ``python -m arena.tournament.workers``: one trio loop with
its own :class:`BotPool` and the referee, playing up to its share of matches at once.

The pipe protocol, both ways: frames of a 4-byte big-endian length and a msgpack message.

- parent -> worker, on the worker's standard input: :class:`Setup` (once), then :class:`Play`
  per match: up to the worker's slots plus ``PREFETCH`` unfinished at a time, so that the next
  match is already there when one ends; the worker plays them in the order sent. End of input
  means stop: the worker cuts its running matches, closes every bot process it started and
  exits. So a parent killed with SIGKILL takes its workers (and their bots) with it: the kernel
  closes the parent's end of the pipe.
- worker -> parent, on the worker's standard output: :class:`Ready` after the warm-up (every
  bot started once), :class:`Finished` per match (the :class:`StoredMatch`, completed or
  aborted), :class:`Failed` when the tournament cannot go on (the :class:`TournamentError`
  line), :class:`Closed` when its bots are closed.

Workers start in their own session, so Ctrl-C at the terminal reaches only the parent, which
then closes their input. Their own standard input and output are pointed at ``/dev/null`` and
standard error, so nothing a library prints can corrupt the frames.
"""

from __future__ import annotations

import math
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.referee.cores import pin_child, pinned, spread_cores
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.record import RecordShelf
from arena.tournament.config import TournamentConfig
from arena.tournament.errors import PreflightError, TournamentError, unwrapped
from arena.tournament.pool import CLOSE_GRACE_S, BotPool, hide_from_each_other, play_pooled_match
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.store import StoredMatch
from arena.tournament.summary import RunSummary

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where ``import arena`` works from
HEADER_BYTES = 4
EXIT_GRACE_S = CLOSE_GRACE_S + 5.0  # a worker closing its bots, then exiting
EXIT_STATUS_WAIT_S = 2.0
PREFETCH = 1  # matches queued in a worker beyond those it plays at once
# The worker processes are started once the arena process's own bots are up, or after this long
# (a bot slow to start must not delay them much)
SPAWN_WAIT_S = 0.5


class Setup(msgspec.Struct, tag=True):
    config: TournamentConfig
    bots: list[str]  # the bots the pending matches need
    slots: int  # matches this worker plays at once
    cores: frozenset[int] | None = None  # the cores it and its bots run on (None: any)


class Play(msgspec.Struct, tag=True):
    match: ScheduledMatch


class Ready(msgspec.Struct, tag=True):
    started: int  # bot processes this worker started so far


class Finished(msgspec.Struct, tag=True):
    match: StoredMatch
    started: int


class Failed(msgspec.Struct, tag=True):
    message: str
    started: int
    preflight: bool = False  # some bot could not start before the first match


class Closed(msgspec.Struct, tag=True):
    started: int
    cpu_s: float  # the worker's own CPU time (not its bots'), for benchmarks
    given_up: dict[str, str] = {}  # bots this worker stopped starting, and why


ToWorker = Setup | Play
FromWorker = Ready | Finished | Failed | Closed


def _encode_path(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise NotImplementedError(f"cannot send {type(value).__name__}")


def _decode_path(kind: type, value: Any) -> Any:
    if kind is Path:
        return Path(value)
    raise NotImplementedError(f"cannot receive {kind}")


_encoder = msgspec.msgpack.Encoder(enc_hook=_encode_path)
_to_worker = msgspec.msgpack.Decoder(ToWorker, dec_hook=_decode_path)
_from_worker = msgspec.msgpack.Decoder(FromWorker, dec_hook=_decode_path)


def frame(message: msgspec.Struct) -> bytes:
    payload = _encoder.encode(message)
    return len(payload).to_bytes(HEADER_BYTES, "big") + payload


class FrameReader:
    """Frames from a trio receive stream; ``None`` at end of input."""

    def __init__(self, stream: trio.abc.ReceiveStream, decoder: msgspec.msgpack.Decoder) -> None:
        self._stream = stream
        self._decoder = decoder
        self._buffer = bytearray()

    async def _fill(self, size: int) -> bool:
        while len(self._buffer) < size:
            chunk = await self._stream.receive_some(1 << 16)
            if not chunk:
                return False
            self._buffer += chunk
        return True

    async def next(self) -> Any:
        if not await self._fill(HEADER_BYTES):
            return None
        size = int.from_bytes(self._buffer[:HEADER_BYTES], "big")
        if not await self._fill(HEADER_BYTES + size):
            return None
        payload = bytes(self._buffer[HEADER_BYTES : HEADER_BYTES + size])
        del self._buffer[: HEADER_BYTES + size]
        return self._decoder.decode(payload)


# ---------------------------------------------------------------- the parent's side


def slots_per_worker(concurrency: int, workers: int) -> list[int]:
    """``concurrency`` split as evenly as it goes over ``workers`` (each at least one)."""
    workers = max(1, min(workers, concurrency))
    base, extra = divmod(concurrency, workers)
    return [base + (1 if i < extra else 0) for i in range(workers)]


class _Worker:
    """A worker process, as the parent sees it."""

    def __init__(self, index: int, process: trio.Process) -> None:
        self.index = index
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.frames = FrameReader(process.stdout, _from_worker)
        self.started = 0
        self.cpu_s = 0.0
        self.given_up: dict[str, str] = {}

    async def send(self, message: msgspec.Struct) -> None:
        try:
            await self.stdin.send_all(frame(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TournamentError(await self.gone()) from None

    async def gone(self) -> str:
        with trio.move_on_after(EXIT_STATUS_WAIT_S):  # the pipe closes just before the exit
            await self.process.wait()
        status = self.process.returncode
        how = "" if status is None else f"exit status {status}; "
        return (
            f"tournament worker {self.index} stopped unexpectedly ({how}its standard "
            "error says why); finished matches are kept"
        )

    async def receive(self) -> Any:
        message = await self.frames.next()
        if message is None:
            raise TournamentError(await self.gone())
        if isinstance(message, Closed):  # only ever asked for before closing it
            raise TournamentError(await self.gone())
        return _checked(self, message)

    async def shut(self) -> None:
        """Close its input, read what it still says until it exits; kill it if it hangs."""
        with trio.CancelScope(shield=True):
            with trio.move_on_after(EXIT_GRACE_S):
                try:
                    await self.stdin.aclose()
                    while (message := await self.frames.next()) is not None:
                        self.started = message.started
                        if isinstance(message, Closed):
                            self.cpu_s = message.cpu_s
                            self.given_up = message.given_up
                except (trio.BrokenResourceError, trio.ClosedResourceError, msgspec.DecodeError):
                    pass
                await self.process.wait()
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()


def _checked(worker: _Worker | _InProcessWorker, message: Any) -> Any:
    worker.started = message.started
    if isinstance(message, Failed):
        raise (PreflightError if message.preflight else TournamentError)(message.message)
    return message


class _InProcessWorker:
    """The parent's own share: :func:`worker_loop` run by :meth:`run` in the parent's trio loop,
    with the same messages as a worker process, passed over memory channels."""

    def __init__(self, index: int) -> None:
        self.index = index
        self._in_send, self._in_receive = trio.open_memory_channel[ToWorker](math.inf)
        self._out_send, self._out_receive = trio.open_memory_channel[FromWorker](math.inf)
        self.started = 0
        self.cpu_s = 0.0  # its CPU time is the parent's own
        self.given_up: dict[str, str] = {}
        self.warmed = trio.Event()  # its warm-up ended (its bots are up, or the preflight failed)

    async def run(self) -> None:
        async def next_message() -> ToWorker | None:
            try:
                return await self._in_receive.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return None

        async def send(message: FromWorker) -> None:
            self.warmed.set()  # the first message ends the warm-up, whatever it says
            try:
                self._out_send.send_nowait(message)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the parent no longer listens: it is ending

        try:
            await worker_loop(next_message, send, cpu_s=lambda: 0.0)
        finally:
            self.warmed.set()
            self._out_send.close()

    async def send(self, message: ToWorker) -> None:
        self._in_send.send_nowait(message)

    async def receive(self) -> Any:
        try:
            message = await self._out_receive.receive()
        except trio.EndOfChannel:
            message = None
        if message is None or isinstance(message, Closed):
            raise TournamentError(
                "the arena process's own worker loop stopped unexpectedly; finished matches "
                "are kept"
            )
        return _checked(self, message)

    async def shut(self) -> None:
        """End its input and read what it still says until its loop has closed its bots."""
        with trio.CancelScope(shield=True):
            self._in_send.close()
            async for message in self._out_receive:
                self.started = message.started
                if isinstance(message, Closed):
                    self.given_up = message.given_up


async def _start_worker(index: int, cores: frozenset[int] | None) -> _Worker:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p
    )
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "arena.tournament.workers"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    if cores is not None:
        # At once, so that its start-up (an interpreter and imports) and its bots' run on its
        # own cores, not beside the arena process's share; it pins its threads once they are up.
        pin_child(process.pid, cores)
    return _Worker(index, process)


async def play_in_workers(
    config: TournamentConfig,
    todo: Iterable[ScheduledMatch],
    bots: Sequence[str],
    workers: int,
    keep: Callable[[StoredMatch], None],
    summary: RunSummary,
) -> None:
    """Play ``todo`` in worker processes, calling ``keep`` as each match ends (in the order they
    end); ``summary`` gets the bot processes they started and their own CPU seconds. Every worker
    has exited on return, whatever happened (cancellation included)."""
    slots = slots_per_worker(config.concurrency, workers)
    cores = spread_cores(slots) if config.affinity else [None] * len(slots)
    config = config.for_players()  # each match comes with its seed: the tournament's stays here
    async with trio.open_nursery() as here:
        local = _InProcessWorker(0)  # this process's share: its bots start at once
        here.start_soon(local.run)
        started: list[_Worker | _InProcessWorker] = [local]
        try:
            await local.send(Setup(config, list(bots), slots[0], cores[0]))
            with trio.move_on_after(SPAWN_WAIT_S):  # its bots start first, not beside imports
                await local.warmed.wait()
            for index in range(1, len(slots)):  # a fork and exec each: they import meanwhile
                worker = await _start_worker(index, cores[index])
                started.append(worker)
                await worker.send(Setup(config, list(bots), slots[index], cores[index]))
            await _dispatch(todo, started, slots, keep)
        finally:
            with trio.CancelScope(shield=True):
                async with trio.open_nursery() as nursery:
                    for each in started:
                        nursery.start_soon(each.shut)
            summary.started_processes = sum(worker.started for worker in started)
            summary.workers_cpu_s = sum(worker.cpu_s for worker in started)
            for each in started:
                summary.given_up.update(each.given_up)


async def _expect_ready(worker: _Worker | _InProcessWorker) -> None:
    message = await worker.receive()
    if not isinstance(message, Ready):
        raise TournamentError(
            f"tournament worker {worker.index}: expected ready, got {type(message).__name__}"
        )


async def _dispatch(
    todo: Iterable[ScheduledMatch],
    workers: Sequence[_Worker | _InProcessWorker],
    slots: Sequence[int],
    keep: Callable[[StoredMatch], None],
) -> None:
    """Hand each match to a worker with a free slot (or a free place in its queue), in schedule
    order, from the moment that worker is ready (the first ready one does not wait for the
    others' warm-ups); store results as they come back."""
    free_send, free_receive = trio.open_memory_channel[_Worker | _InProcessWorker](math.inf)
    outstanding = 0
    all_sent = False
    all_back = trio.Event()

    ready: list[_Worker | _InProcessWorker] = []

    async def listen(worker: _Worker | _InProcessWorker, count: int) -> None:
        nonlocal outstanding
        await _expect_ready(worker)
        for _ in range(count):
            free_send.send_nowait(worker)
        ready.append(worker)
        if len(ready) == len(workers):  # queued matches only once nobody idles for want of one
            for _ in range(PREFETCH):
                for each in ready:
                    free_send.send_nowait(each)
        while True:
            message = await worker.receive()
            if not isinstance(message, Finished):
                raise TournamentError(
                    f"tournament worker {worker.index}: expected a finished "
                    f"match, got {type(message).__name__}"
                )
            outstanding -= 1
            keep(message.match)
            free_send.send_nowait(worker)
            if all_sent and outstanding == 0:
                all_back.set()

    with unwrapped(TournamentError):
        async with trio.open_nursery() as nursery:
            for worker, count in zip(workers, slots):
                nursery.start_soon(listen, worker, count)
            for match in todo:
                worker = await free_receive.receive()
                outstanding += 1
                await worker.send(Play(match))
            all_sent = True
            if outstanding:
                await all_back.wait()
            nursery.cancel_scope.cancel()


# ---------------------------------------------------------------- the worker's side


async def serve(receive_fd: int, send_fd: int) -> None:
    """One worker process: :func:`worker_loop` over its pipes, stopped by a signal too."""
    frames = FrameReader(trio.lowlevel.FdStream(receive_fd), _to_worker)
    out = trio.lowlevel.FdStream(send_fd)
    send_lock = trio.Lock()

    async def send(message: FromWorker) -> None:
        async with send_lock:
            with trio.CancelScope(shield=True):  # never half a frame
                try:
                    await out.send_all(frame(message))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # the parent is gone; we are ending

    def own_cpu_s() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    async with trio.open_nursery() as nursery:

        async def stop_on_signal() -> None:  # e.g. SIGTERM sent to the worker itself
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

        nursery.start_soon(stop_on_signal)
        await worker_loop(frames.next, send, cpu_s=own_cpu_s)
        nursery.cancel_scope.cancel()


async def worker_loop(
    next_message: Callable[[], Awaitable[ToWorker | None]],
    send: Callable[[FromWorker], Awaitable[None]],
    *,
    cpu_s: Callable[[], float],
) -> None:
    """Read Setup, warm the pool up, play each Play, until end of input (``None``); then close
    every bot and say Closed. The same in a worker process and in the parent."""
    setup = await next_message()
    if not isinstance(setup, Setup):
        return
    config = setup.config
    pool = BotPool(
        [
            b
            for b in hide_from_each_other(config.bots, config.arena_files())
            if b.name in set(setup.bots)
        ],
        start_bot=BotProcess.start,
        time_control=config.time_control,
        log_dir=config.logs_dir,
        fresh=config.fresh_processes,
    )  # the parent made the folders
    # up to ``slots`` matches at once, in the order they came; the parent sends PREFETCH more,
    # so a worker never waits for the parent between two matches
    queue_in, queue_out = trio.open_memory_channel[ScheduledMatch](math.inf)
    shelf = RecordShelf(config.records_dir) if config.records else None  # (its records files)
    try:
        async with trio.open_nursery() as nursery:

            async def play_one(match: ScheduledMatch) -> None:
                try:
                    stored = await play_pooled_match(config, match, pool, run_match, shelf)
                except TournamentError as exc:
                    await send(Failed(str(exc), pool.started))
                    nursery.cancel_scope.cancel()
                    return
                await send(Finished(stored, pool.started))

            async def play_in_order() -> None:
                async for match in queue_out:
                    await play_one(match)

            try:
                with unwrapped(TournamentError):
                    await pool.warm_up()
            except TournamentError as exc:
                preflight = isinstance(exc, PreflightError)
                await send(Failed(str(exc), pool.started, preflight=preflight))
                nursery.cancel_scope.cancel()
                return
            # Its bots are up (a worker process's on its core already: _start_worker; the
            # arena process's on every core at once): now it and they play on its core.
            with pinned(setup.cores) as on:
                if on:
                    pool.pin(on)
                await send(Ready(pool.started))
                for _ in range(setup.slots):
                    nursery.start_soon(play_in_order)
                while (message := await next_message()) is not None:
                    if isinstance(message, Play):
                        queue_in.send_nowait(message.match)
                nursery.cancel_scope.cancel()  # end of input: stop, whatever runs
    finally:
        if shelf is not None:
            shelf.close()
        await pool.close_all()
        await send(Closed(pool.started, cpu_s(), dict(pool.given_up)))


def main() -> None:
    receive_fd, send_fd = os.dup(0), os.dup(1)  # not inherited by the bots (PEP 446)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # stray prints go to standard error
    try:
        trio.run(serve, receive_fd, send_fd)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
