"""Everything the referee reads of trio's private internals, and nothing else: the one place to
look at when trio changes.

Two fast paths use them:

- :class:`QuickRead`, the quick read of an ordinary reply (one ``poll`` instead of a scheduler
  pass: about 6 us of CPU per decision, benchmarks/referee_cpu.py);
- :func:`perf_counter_offset`: trio's system clock is ``time.perf_counter()`` plus an offset, so
  the match reads ``time.perf_counter`` itself (a Python call fewer per reading).

At import a self-check looks for every class and field they touch (:func:`problem`). Where the
installed trio differs, both fall back to trio's public API (no quick read: every read takes trio's
``wait_readable``; the clock's ``current_time()``), and the arena says so once on stderr. The two
paths play the same matches (tests/referee/test_trio_fast.py); no other module of the arena may
import a private name of trio (tests/test_layout.py).
"""

from __future__ import annotations

import math
import os
import select
import sys
import time
from collections.abc import Callable

import trio

try:
    import attrs
    import trio._core._io_epoll as _trio_epoll
    import trio._core._run as _trio_run
except ImportError:  # (another platform's trio, or a trio laid out anew: the public path)
    _trio_run = None  # type: ignore[assignment]

# The fields this module reads, by trio's class: the self-check finds each of them.
_FIELDS_READ = {
    "Task": ("_runner", "_schedule_points", "_next_send_fn", "_cancel_status"),
    "Runner": ("io_manager", "runq", "clock", "deadlines", "tasks"),
    "Deadlines": ("_heap",),
    "CancelStatus": ("effectively_cancelled",),
    "CancelScope": ("_registered_deadline",),
    "SystemClock": ("offset",),
}


def _self_check() -> str | None:
    """None when trio's internals are as the fast paths were written for (trio 0.35, epoll); else
    what differs, in a few words."""
    if _trio_run is None:
        return "trio's internal modules are not where they were"
    try:
        for name, fields in _FIELDS_READ.items():
            missing = [f for f in fields if f not in attrs.fields_dict(getattr(_trio_run, name))]
            if missing:
                return f"trio's {name} has no {', '.join(missing)}"
        if "_epoll" not in attrs.fields_dict(_trio_epoll.EpollIOManager):
            return "trio's EpollIOManager has no _epoll"
        if not callable(getattr(_trio_run.Deadlines, "next_deadline", None)):
            return "trio's Deadlines has no next_deadline()"
        _trio_run.GLOBAL_RUN_CONTEXT  # noqa: B018  # (read() finds the current task there)
    except (AttributeError, TypeError, attrs.exceptions.NotAnAttrsClassError) as error:
        return f"trio's internals differ ({type(error).__name__}: {error})"
    return None


_said = False


def _say_once(reason: str) -> None:
    """Tell once per process that the fast paths are off, and why."""
    global _said
    if not _said:
        _said = True
        print(
            f"arena: trio {trio.__version__}: {reason}; the referee takes trio's public path "
            "(correct, some microseconds of CPU more per decision)",
            file=sys.stderr,
        )


_problem: str | None = _self_check()
if _problem is not None:
    _say_once(_problem)


def problem() -> str | None:
    """Why the fast paths are off in this process, or None when they are on."""
    return _problem


def usable() -> bool:
    """Whether the fast paths are on (the self-check found what they read)."""
    return _problem is None


def perf_counter_offset(clock: trio.abc.Clock) -> float | None:
    """``clock``'s offset when it is trio's system clock (``current_time()`` is then
    ``time.perf_counter()`` plus it), else None (a test's mock clock, or the fast paths off: then
    read ``clock.current_time()``)."""
    if _problem is None and type(clock) is _trio_run.SystemClock:
        return clock.offset
    return None


class _QuickState:
    """What the quick reads of this process share. Not class attributes of QuickRead: writing a
    class attribute invalidates every attribute cache of that class, so each decision's count
    made every self.x of the next read take the slow lookup (~1 us per decision)."""

    __slots__ = ("taken", "step_task", "step_points", "step_shared")

    def __init__(self) -> None:
        self.taken = 0  # quick reads so far in this process
        # The scheduler step last looked at (task, its count of schedule points), and whether
        # any other task was runnable in it.
        self.step_task: object = None
        self.step_points = -1
        self.step_shared = False


_QUICK = _QuickState()
# What a run the quick read cannot serve (or a closed pipe) has for a run queue: never empty,
# so every read takes trio's path at its first check.
_NEVER_EMPTY = (None,)
QUICK_WAIT_MAX_S = 3600.0  # beyond this (or no deadline at all) the poll waits without a timeout


def quick_reads_taken() -> int:
    """Quick reads so far in this process (benchmarks and tests look)."""
    return _QUICK.taken


class QuickRead:
    """The fast path for an ordinary reply: the bot answers within microseconds of its request,
    so instead of a trio scheduler pass (epoll registration, the run loop, a task switch: about
    6 us of CPU per decision) the referee waits for it in one ``poll`` of the bot's output *and*
    trio's own epoll descriptor.

    Taken only when nobody waits behind it: no task in trio's run queue, none left in the batch
    of tasks the current scheduler step belongs to (trio runs a batch one task after the other;
    those after this one wait until its step ends, which with quick reads only may be a whole
    match: they are looked for once per step), and no cancellation pending for this task (a
    deadline that expired in the pass that also brought data: trio's path delivers it, or a bot
    that writes without end would keep the referee reading past its deadline). The wait ends as
    soon as anything trio watches becomes ready (another bot's output, a stderr drain, a signal,
    a thread's result), after which the caller takes trio's ordinary path. Timers cannot wake a
    poll, so the poll never outlasts trio's next deadline (the match's own cancel scope, another
    match's, a sleep): it waits at most up to it, rounded down to the millisecond, and when that
    is under a millisecond away the caller takes trio's path at once. A timer is therefore never
    late because of a quick read. (A fixed 1 ms poll timeout cost ~2 us of CPU per decision
    more: a timer that short is armed in the hardware at every poll that sleeps.) Only with
    trio's system clock (not under a test's mock clock) and where trio's run state is what it
    was written for; otherwise every read takes the ordinary path.

    One per bot output (``fd``), for its whole life: it finds what it looks at in a trio run at
    its first read in that run (``attach``), so a read is one call (LineReader.line_now calls
    it), with no look-up of the run first. Made only where :func:`usable`.
    """

    __slots__ = (
        "fd",
        "closed",
        "runner",
        "runq",
        "deadlines",
        "next_deadline",
        "clock_offset",
        "poll",
        "only_ours",
    )

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False  # the fd is closed (its number may be reused): no read any more
        self.runner: object = None  # the run the fields below belong to (attach)
        self.runq: object = _NEVER_EMPTY
        self.deadlines: object = None
        self.next_deadline: Callable[[], float] = None  # type: ignore[assignment]
        self.clock_offset = 0.0
        self.poll: Callable[[int | None], list[tuple[int, int]]] = None  # type: ignore[assignment]
        # What poll() returns when the bot's output, and nothing trio watches, is ready.
        self.only_ours = [(fd, select.POLLIN)]

    def attach(self, runner: object) -> None:
        """Find what read() looks at in ``runner``'s run (its first read in that run): a run
        that is not as the quick read was written for keeps a run queue that is never empty."""
        self.runner, self.runq = runner, _NEVER_EMPTY
        if self.closed:
            return
        try:
            epoll = runner.io_manager._epoll  # type: ignore[attr-defined]
            runq = runner.runq  # type: ignore[attr-defined]
            clock = runner.clock  # type: ignore[attr-defined]
            deadlines = runner.deadlines  # type: ignore[attr-defined]
            heap = deadlines._heap  # read() looks at its top
            iter(runner.tasks)  # type: ignore[attr-defined]
        except (AttributeError, TypeError) as error:
            # (An I/O manager other than epoll, say: the self-check looked at the classes only.)
            _say_once(f"its run differs from what the quick read expects ({error})")
            return
        if type(clock) is not _trio_run.SystemClock:
            return  # a test's mock clock: its time is not perf_counter's (no message: expected)
        if not hasattr(runq, "__len__") or type(heap) is not list:
            _say_once("its run queue or deadline heap is not what the quick read expects")
            return
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(epoll.fileno(), select.POLLIN)
        self.poll = poller.poll
        self.deadlines, self.next_deadline = deadlines, deadlines.next_deadline
        self.clock_offset = clock.offset
        self.runq = runq

    def close(self) -> None:
        """The fd is about to be closed: every read from now on takes trio's path."""
        self.closed = True
        self.runner = None  # (the next read attaches anew, and finds it closed)

    def read(
        self, max_bytes: int, until: float = math.inf, task: trio.lowlevel.Task | None = None
    ) -> bytes | None:
        """The bot's output if it comes before trio's next deadline and ``until`` (in
        time.perf_counter()'s time: the request's own deadline, which the caller need not have
        given trio yet) and nothing else needs the loop; None: take the ordinary path. Only
        inside trio.run, in ``task`` (the trio task reading: a caller that knows it spares the
        look-up, a thread-local's attribute; None: the current one)."""
        if task is None:
            task = _trio_run.GLOBAL_RUN_CONTEXT.task
        if task._runner is not self.runner:
            self.attach(task._runner)
        if self.runq:
            return None
        points = task._schedule_points
        shared = _QUICK
        if points != shared.step_points or task is not shared.step_task:
            # A new scheduler step: is another task of its batch still to run? (_next_send_fn:
            # what trio sets when it makes a task runnable and clears when the task runs.)
            shared.step_task, shared.step_points = task, points
            shared.step_shared = any(
                other._next_send_fn is not None and other is not task
                for other in self.runner.tasks  # type: ignore[attr-defined]
            )
        if shared.step_shared or task._cancel_status.effectively_cancelled:
            return None  # another task's turn, or a cancellation to deliver (trio's path does)
        # trio's next deadline: the top of its heap when that entry is current (what
        # next_deadline() returns first, without the call), none when the heap is empty (the
        # match's scope has had no deadline yet: all its decisions were quick), else
        # next_deadline() itself.
        heap = self.deadlines._heap  # type: ignore[attr-defined]  # (a prune replaces the list)
        if not heap:
            deadline = math.inf
        else:
            deadline, _, scope = heap[0]
            if deadline != scope._registered_deadline:
                deadline = self.next_deadline()
        wait_s = deadline - self.clock_offset  # (in perf_counter's time)
        wait_s = (wait_s if wait_s < until else until) - time.perf_counter()
        if wait_s < 0.001:
            return None  # a deadline is (nearly) due: trio's path handles it
        if self.poll(int(wait_s * 1000) if wait_s < QUICK_WAIT_MAX_S else None) != self.only_ours:
            # Nothing before the deadline, or trio has something to do (or the bot's output
            # ended: POLLHUP), each of which trio's path takes.
            return None
        try:
            data = os.read(self.fd, max_bytes)
        except BlockingIOError:
            return None
        except OSError:
            return b""
        shared.taken += 1
        return data


__all__ = ["QuickRead", "perf_counter_offset", "problem", "quick_reads_taken", "usable"]
