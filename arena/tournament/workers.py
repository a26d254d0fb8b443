"""Worker processes: the tournament's matches played on several cores, stored by the parent.

The parent (``run_tournament`` with ``workers`` > 1) keeps the store, the schedule, the standings
and the live view. Each worker is ``python -m arena.tournament.workers``: one trio loop with its
own :class:`BotPool` and the referee, playing up to its share of ``concurrency`` matches at once.

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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.tournament.config import TournamentConfig
from arena.tournament.pool import (
    CLOSE_GRACE_S,
    BotPool,
    PreflightError,
    RunSummary,
    TournamentError,
    play_pooled_match,
    unwrapped,
)
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.store import StoredMatch

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where ``import arena`` works from
HEADER_BYTES = 4
EXIT_GRACE_S = CLOSE_GRACE_S + 5.0  # a worker closing its bots, then exiting
EXIT_STATUS_WAIT_S = 2.0
PREFETCH = 1  # matches queued in a worker beyond those it plays at once


class Setup(msgspec.Struct, tag=True):
    config: TournamentConfig
    bots: list[str]  # the bots the pending matches need
    slots: int  # matches this worker plays at once


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
        self.started = message.started
        if isinstance(message, Failed):
            raise (PreflightError if message.preflight else TournamentError)(message.message)
        if isinstance(message, Closed):  # only ever asked for before closing it
            raise TournamentError(await self.gone())
        return message

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


async def _start_worker(index: int) -> _Worker:
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
    started: list[_Worker] = []
    try:
        for index in range(len(slots)):
            started.append(await _start_worker(index))
        for worker, count in zip(started, slots):
            await worker.send(Setup(config, list(bots), count))
        async with trio.open_nursery() as nursery:  # warm-ups in parallel
            for worker in started:
                nursery.start_soon(_expect_ready, worker)
        await _dispatch(todo, started, slots, keep)
    finally:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for worker in started:
                    nursery.start_soon(worker.shut)
        summary.started_processes = sum(worker.started for worker in started)
        summary.workers_cpu_s = sum(worker.cpu_s for worker in started)
        for worker in started:
            summary.given_up.update(worker.given_up)


async def _expect_ready(worker: _Worker) -> None:
    message = await worker.receive()
    if not isinstance(message, Ready):
        raise TournamentError(
            f"tournament worker {worker.index}: expected ready, got {type(message).__name__}"
        )


async def _dispatch(
    todo: Iterable[ScheduledMatch],
    workers: Sequence[_Worker],
    slots: Sequence[int],
    keep: Callable[[StoredMatch], None],
) -> None:
    """Hand each match to a worker with a free slot (or a free place in its queue), in schedule
    order; store results as they come back."""
    free_send, free_receive = trio.open_memory_channel[_Worker](math.inf)
    for round_ in range(max(slots) + PREFETCH):  # interleaved: the load spreads evenly
        for worker, count in zip(workers, slots):
            if round_ < count + PREFETCH:
                free_send.send_nowait(worker)
    outstanding = 0
    all_sent = False
    all_back = trio.Event()

    async def listen(worker: _Worker) -> None:
        nonlocal outstanding
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
            for worker in workers:
                nursery.start_soon(listen, worker)
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
    """One worker: read Setup, warm the pool up, play each Play, until end of input."""
    frames = FrameReader(trio.lowlevel.FdStream(receive_fd), _to_worker)
    out = trio.lowlevel.FdStream(send_fd)
    send_lock = trio.Lock()

    async def send(message: msgspec.Struct) -> None:
        async with send_lock:
            with trio.CancelScope(shield=True):  # never half a frame
                try:
                    await out.send_all(frame(message))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # the parent is gone; we are ending

    setup = await frames.next()
    if not isinstance(setup, Setup):
        return
    config = setup.config
    pool = BotPool(
        [b for b in config.bots if b.name in set(setup.bots)],
        start_bot=BotProcess.start,
        time_control=config.time_control,
        log_dir=config.logs_dir,
    )  # the parent made the folders
    # up to ``slots`` matches at once, in the order they came; the parent sends PREFETCH more,
    # so a worker never waits for the parent between two matches
    queue_in, queue_out = trio.open_memory_channel[ScheduledMatch](math.inf)
    try:
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:  # e.g. SIGTERM sent to the worker itself
                with trio.open_signal_receiver(
                    signal.SIGINT, signal.SIGTERM, signal.SIGHUP
                ) as signals:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()
                        return

            async def play_one(match: ScheduledMatch) -> None:
                try:
                    stored = await play_pooled_match(config, match, pool, run_match)
                except TournamentError as exc:
                    await send(Failed(str(exc), pool.started))
                    nursery.cancel_scope.cancel()
                    return
                await send(Finished(stored, pool.started))

            async def play_in_order() -> None:
                async for match in queue_out:
                    await play_one(match)

            nursery.start_soon(stop_on_signal)
            try:
                with unwrapped(TournamentError):
                    await pool.warm_up()
            except TournamentError as exc:
                preflight = isinstance(exc, PreflightError)
                await send(Failed(str(exc), pool.started, preflight=preflight))
                nursery.cancel_scope.cancel()
                return
            await send(Ready(pool.started))
            for _ in range(setup.slots):
                nursery.start_soon(play_in_order)
            while (message := await frames.next()) is not None:
                if isinstance(message, Play):
                    queue_in.send_nowait(message.match)
            nursery.cancel_scope.cancel()  # end of input: stop, whatever runs
    finally:
        await pool.close_all()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        await send(Closed(pool.started, usage.ru_utime + usage.ru_stime, dict(pool.given_up)))


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
