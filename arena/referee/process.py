"""One running bot program: its own session and process group, resource limits, bounded I/O.

A :class:`BotProcess` talks to its bot through a :class:`Transport` (bytes in, bytes out, and a way
to end the bot). :class:`ProcessTransport` is the real one, a subprocess; tests plug in an in-memory
transport with :meth:`BotProcess.connect`, so the referee is tested without processes.

What a real bot gets (SPEC.md section 7):
- its own session and process group (``start_new_session``); when it is closed, its whole group,
  its session and every descendant still attached to it are killed (SIGKILL), also when the
  caller's task is cancelled (``close`` is shielded);
- resource limits set in the child before ``exec``: address space (``memory_mb``, default 4096: Java
  reserves about 4 GiB of address space at start), CPU seconds (default 3600 for the process's
  whole life), file size (default 64 MiB), no core dumps, and with a user id of its own its
  processes and threads (``max_processes``, default 256; also its cgroup's pids.max);
- a seal (arena/referee/confine.py), unless ``sandbox="none"``: its own network, /tmp, /var/tmp,
  /dev/shm and IPC, the arena's files and the other bots' folders hidden (``BotSpec.hidden`` and
  the log folder); made in its child before ``exec`` as root, by bubblewrap otherwise or with
  ``sandbox="bwrap"`` (then also its own PID namespace, the file system read-only, no
  capabilities); HOME and TMPDIR are then in its private /tmp;
- a minimal environment: PATH, LANG, HOME and TMPDIR (unsealed: in a per-bot temporary
  directory), plus ``BotSpec.env``, plus ``ARENA_BOT_TOKEN`` (a random mark by which close() also
  finds processes that left the session and lost their parent); its working directory is
  ``BotSpec.cwd``, else its private /tmp (unsealed: that temporary directory);
- a parent-death signal (SIGKILL, arena/referee/spawn.py): it dies with the process that started
  it, even one killed by SIGKILL, whatever it does with its input;
- the referee itself is made non-dumpable, so a bot of the same user cannot read its memory.

Standard error goes to ``<log_dir>/<bot>-<pid>.stderr.log``, bounded per process and per bot
(arena/referee/stderr_log.py); the pipe is drained to the end even past the bounds, so a bot
never blocks on it. The referee marks where each match begins (:meth:`BotProcess.mark_log`): the
marker line is written just before the first stderr bytes that arrive after it, so a log holds
markers only for matches in which the bot wrote something. Closing a bot kills its cgroup where it
has one; without, its processes are looked for in /proc in a thread (that look takes milliseconds
on a busy machine, and the other matches of the process must not wait for it).
"""

from __future__ import annotations

import atexit
import math
import os
import re
import resource
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import msgspec
import trio
import trio._core._run as trio_run  # the quick read path looks at the run loop (_QuickRead)

from arena.referee import confine
from arena.referee.bot_spec import BotSpec
from arena.referee.cgroups import BotCgroup
from arena.referee.clock import TimeControl
from arena.referee.confine import DEFAULT_MAX_PROCESSES, SEAL_OFF, MachineSeal, SealPlan
from arena.referee.cores import pin_threads
from arena.referee.lines import (
    DEFAULT_MAX_LINE_BYTES,
    LineReader,
    LineTooLong,
    printable,
    shorten,
)
from arena.referee.protect import protect_referee
from arena.referee.spawn import (
    BOT_USER_VARIABLE,
    BotChild,
    BotUser,
    UidLease,
    UserError,
    bot_user,
    spawn,
)
from arena.referee.stderr_log import PROCESS_CAP_BYTES, StderrLog
from protocol.codec import decode_from_bot, encode_line
from protocol.messages import PROTOCOL_VERSION, Bye, Hello, Limits, Ready

DEFAULT_MEMORY_MB = 4096
DEFAULT_CPU_SECONDS = 3600
DEFAULT_FILE_MB = 64
STDERR_CAP_BYTES = PROCESS_CAP_BYTES
STDERR_TAIL_LINES = 12  # a crash fault quotes this many of the last stderr lines (a stack trace)
CLOSE_GRACE_S = 1.0  # after bye, how long a bot may take to exit before it is killed

# Process groups still running (leader pid -> the bot's token), killed at interpreter exit if their
# owner never got to close().
_LIVE_GROUPS: dict[int, str | None] = {}
# Every bot process gets this variable with a random value of its own. A process that carries it
# belongs to that bot even when it left the bot's session and its parent died (a daemon): close()
# finds it by this mark. (A process that also clears its environment escapes this; only the
# sandbox's PID namespace catches that one.)
TOKEN_VARIABLE = "ARENA_BOT_TOKEN"
# Each bot's cgroup, where the machine offers them (arena/referee/cgroups.py): the sure way.
_LIVE_CGROUPS: dict[int, BotCgroup] = {}


class BotStartupError(Exception):
    """A bot could not be started or did not say ready in time (the message names the bot)."""

    def __init__(self, bot: str, reason: str) -> None:
        self.bot = bot
        self.reason = reason
        self.stderr_tail = ""  # the last lines of its standard error, when it ran at all
        super().__init__(f"bot {bot}: {reason}")


class BotGone(Exception):
    """The bot's input can no longer be written (it exited or closed its standard input)."""


class Transport(Protocol):
    """How a BotProcess reaches its bot: bytes both ways, and a way to end it."""

    async def send_all(self, data: bytes) -> None: ...
    async def receive_some(self, max_bytes: int) -> bytes: ...  # b"" at end of file
    async def terminate(self, grace_s: float) -> None: ...  # wait up to grace_s, then kill
    def exit_status(self) -> str | None: ...  # None while running


def describe_returncode(code: int | None) -> str | None:
    if code is None:
        return None
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exited with status {code}"


# -- the real transport: a subprocess ---------------------------------------------------------------


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (the first is field 3, the
    state), or None if it is gone or cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()


def _read_proc_stat(pid: int, zombies: bool = False) -> tuple[int, int, int] | None:
    """(parent pid, process group, session) of ``pid``, or None if it is gone or (unless
    ``zombies``) a zombie."""
    fields = _stat_fields(pid)
    if fields is None or (fields[:1] == [b"Z"] and not zombies):
        return None
    try:
        return int(fields[1]), int(fields[2]), int(fields[3])
    except (IndexError, ValueError):
        return None


def _cpu_ticks(pid: int) -> int | None:
    """The CPU time of ``pid``, every thread of it, and its children that it has waited for
    (utime + stime + cutime + cstime of /proc/<pid>/stat), in clock ticks; None if it is gone
    or cannot be read."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    try:
        return sum(int(value) for value in fields[11:15])  # fields 14-17
    except ValueError:
        return None


def processes_cpu_seconds(leader: int, token: str | None = None) -> float | None:
    """The CPU seconds used so far by the processes :func:`related_pids` finds for ``leader``,
    zombies included, with the children they waited for; None where /proc cannot tell (not
    Linux) or ``leader`` is gone. (A child whose parent ended before waiting for it, and that
    ended too, is no longer counted: a cgroup counts it, :meth:`BotCgroup.cpu_seconds`.)"""
    try:
        per_second = os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return None
    if per_second <= 0 or _cpu_ticks(leader) is None:
        return None
    ticks = 0
    for pid in related_pids(leader, token, zombies=True):
        ticks += _cpu_ticks(pid) or 0  # (one that ended meanwhile: its parent counts it now)
    return ticks / per_second


def process_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    return _read_proc_stat(pid) is not None


def _carries_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return token in handle.read().split(b"\0")
    except OSError:  # gone, or not ours to read
        return False


def related_pids(leader: int, token: str | None = None, zombies: bool = False) -> set[int]:
    """Every live process in ``leader``'s process group or session, or descended from it, or
    carrying ``TOKEN_VARIABLE=token`` in its environment (and, with ``zombies``, every such
    process that ended and was not waited for yet)."""
    stats: dict[int, tuple[int, int, int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return set()
    for name in names:
        if name.isdigit():
            stat = _read_proc_stat(int(name), zombies)
            if stat is not None:
                stats[int(name)] = stat
    found = {
        pid for pid, (_, group, session) in stats.items() if group == leader or session == leader
    }
    if token:
        mark = f"{TOKEN_VARIABLE}={token}".encode()
        found.update(pid for pid in stats if pid not in found and _carries_token(pid, mark))
    if leader in stats:
        found.add(leader)
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(os.getpid())
    return found


def kill_everything(leader: int, token: str | None = None) -> None:
    """SIGKILL the bot's process group, session, descendants and every process carrying its token
    (a few rounds, against forks)."""
    for _ in range(5):
        # Find the tree before killing: once the leader dies, an escaped child's parent link
        # is gone.
        pids = related_pids(leader, token)
        try:
            os.killpg(leader, signal.SIGKILL)
        except OSError:
            pass
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@atexit.register
def _kill_leftovers() -> None:
    for leader, token in list(_LIVE_GROUPS.items()):
        kill_everything(leader, token)
    for cgroup in list(_LIVE_CGROUPS.values()):
        cgroup.kill()
        cgroup.remove()


def _spawn_problem(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """What exec would refuse in a command line or environment, in one line; None if fine."""
    for arg in argv:
        if "\0" in arg:
            return f"its command line holds a NUL character: {arg!r}"
    for key, value in env.items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            return f"environment variable {key!r}: a name without = or NUL, a value without NUL"
    return None


def _limits_setter(memory_mb: int, cpu_seconds: int, file_mb: int, processes: int | None = None):
    """The preexec_fn that applies the limits in the child, between fork and exec (with
    ``processes``, RLIMIT_NPROC: for a bot with a user id of its own)."""

    def limit(kind: int, soft: int, hard: int) -> None:
        # Never above the organiser's own hard limit (ulimit): raising it is not allowed.
        _, ceiling = resource.getrlimit(kind)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))

    def apply() -> None:
        address_space = memory_mb * 1024 * 1024
        limit(resource.RLIMIT_AS, address_space, address_space)
        # The soft CPU limit sends SIGXCPU; the hard one, a little later, SIGKILL.
        limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 5)
        size = file_mb * 1024 * 1024
        limit(resource.RLIMIT_FSIZE, size, size)
        limit(resource.RLIMIT_CORE, 0, 0)
        if processes is not None:
            limit(resource.RLIMIT_NPROC, processes, processes)

    return apply


async def _seal_method(spec: BotSpec) -> str | None:
    """How to seal this bot: "namespaces", "bwrap", or None (not sealed: ``sandbox = "none"``,
    or the machine allows neither, which the arena says once at start). BotStartupError when
    ``sandbox = "bwrap"`` cannot run here, or the bot's folder is one its seal would hide."""
    if spec.sandbox == SEAL_OFF:
        return None
    machine = await _machine_seal()
    if spec.sandbox == "bwrap":
        problem = await check_bwrap()
        if problem:
            raise BotStartupError(spec.name, problem)
        how: str | None = "bwrap"
    else:
        how = machine.method
    folder = os.path.abspath(spec.cwd) if spec.cwd else None
    if how is not None and folder in ("/", *confine.PRIVATE_DIRS, *confine.EMPTY_DIRS):
        where = "sandbox 'bwrap'" if spec.sandbox == "bwrap" else "sealed"
        raise BotStartupError(
            spec.name,
            f"{where}: the bot's folder {spec.cwd!r} must not be /, /tmp, /var/tmp, /dev/shm "
            "or /run (its own private ones would hide it, or it would show the machine's): "
            'give it a folder of its own, or sandbox = "none" (SPEC.md section 7)',
        )
    return how


async def check_bwrap() -> str | None:
    """None when ``sandbox = "bwrap"`` can run here, else a one-line reason (found once)."""
    machine = await _machine_seal()
    return None if machine.bwrap_problem is None else f"sandbox 'bwrap': {machine.bwrap_problem}"


async def _machine_seal() -> MachineSeal:
    """How bots are sealed here (arena.referee.confine), found once, in a thread (it starts a
    process or two)."""
    known = confine.known_machine()
    return known if known is not None else await trio.to_thread.run_sync(confine.machine_seal)


class _QuickState:
    """What the quick reads of this process share. Not class attributes of _QuickRead: writing a
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


class _QuickReadType(type):
    @property
    def taken(cls) -> int:
        """Quick reads so far in this process (benchmarks and tests look)."""
        return _QUICK.taken


class _QuickRead(metaclass=_QuickReadType):
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
    was written for (trio 0.35, epoll); otherwise every read takes the ordinary path.

    One per bot output (``fd``), for its whole life: it finds what it looks at in a trio run at
    its first read in that run (``attach``), so a read is one call (LineReader.line_now calls
    it), with no look-up of the run first.
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
            epoll = runner.io_manager._epoll  # type: ignore[attr-defined]  # trio's internals
            runq = runner.runq  # type: ignore[attr-defined]
            clock = runner.clock  # type: ignore[attr-defined]
            deadlines = runner.deadlines  # type: ignore[attr-defined]
            heap = deadlines._heap  # read() looks at its top
            task = trio_run.GLOBAL_RUN_CONTEXT.task
            task._schedule_points, task._next_send_fn, task._cancel_status.effectively_cancelled  # noqa: B018  # what read() looks at
            iter(runner.tasks)  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            return
        if (
            type(clock) is not trio_run.SystemClock
            or not hasattr(runq, "__len__")
            or not callable(deadlines.next_deadline)
            or type(heap) is not list
        ):
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
        self, max_bytes: int, until: float = math.inf, task: trio_run.Task | None = None
    ) -> bytes | None:
        """The bot's output if it comes before trio's next deadline and ``until`` (in
        time.perf_counter()'s time: the request's own deadline, which the caller need not have
        given trio yet) and nothing else needs the loop; None: take the ordinary path. Only
        inside trio.run, in ``task`` (the trio task reading: a caller that knows it spares the
        look-up, a thread-local's attribute; None: ``GLOBAL_RUN_CONTEXT.task``, the current one)."""
        if task is None:
            task = trio_run.GLOBAL_RUN_CONTEXT.task
        if task._runner is not self.runner:  # (_QuickRead.usable() checked that Task has it)
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

    @staticmethod
    def usable() -> bool:
        """Whether this trio's tasks name their run (``Task._runner``), which read() uses to
        tell its run; where they do not, no quick read is made at all."""
        return hasattr(trio_run.Task, "_runner")


QUICK_WAIT_MAX_S = 3600.0  # beyond this (or no deadline at all) the poll waits without a timeout


class ProcessTransport:
    """A bot subprocess: stdin/stdout pipes, stderr drained to a capped log file."""

    def __init__(
        self,
        process: BotChild,
        log_path: Path,
        private_dir: str | None,
        stderr_cap: int | None = None,  # (None: STDERR_CAP_BYTES)
        log_name: str = "bot",  # the bot's part of its logs' names (their bound is per bot)
        token: str | None = None,
        cgroup: BotCgroup | None = None,
        lease: UidLease | None = None,
    ) -> None:
        self.process = process
        self.cgroup = cgroup
        self.lease = lease  # the bot's own user id (@own), given back once it is gone
        self.pid = process.pid
        self.token = token
        self.log_path = log_path
        self.private_dir = private_dir
        self.stderr_bytes = 0
        self.log = StderrLog(log_path, log_name, process_cap=stderr_cap)
        # Started with three pipes as fd streams (arena/referee/spawn.py).
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._stderr = process.stderr
        self._stdin_fd = self._stdin.fileno()
        self._stdout_fd = self._stdout.fileno()
        # The fast read path (LineReader.line_now calls its read), where this trio allows it.
        self.quick = _QuickRead(self._stdout_fd) if _QuickRead.usable() else None
        self._streams_closed = False  # set before the fds are closed: their numbers get reused
        self._drain_scope = trio.CancelScope()
        self._drained = trio.Event()  # set once stderr reached its end (or draining stopped)
        self._tail = b""
        self._marker = b""  # written to the log before the next stderr bytes
        _LIVE_GROUPS[self.pid] = token
        if cgroup is not None:
            _LIVE_CGROUPS[self.pid] = cgroup
        # (It joined before exec, or failed to: then its processes are looked for in /proc.)
        self.in_cgroup = cgroup is not None and self.pid in cgroup.members()
        trio.lowlevel.spawn_system_task(self._drain_stderr, name=f"stderr of pid {self.pid}")

    async def _drain_stderr(self) -> None:
        """Copy stderr to its log (bounded, and never a reason to stop: StderrLog), and keep
        reading to the end; never raises."""
        try:
            with self._drain_scope:
                while True:
                    try:
                        chunk = await self._stderr.receive_some(1 << 16)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        break
                    if not chunk:
                        break
                    self.stderr_bytes += len(chunk)
                    self._tail = (self._tail + chunk)[-4000:]
                    marker, self._marker = self._marker, b""
                    self.log.write(chunk, marker)
        except Exception:  # a system task must never raise: it would crash the whole run
            pass
        finally:
            self.log.close()
            self._drained.set()

    async def wait_stderr_drained(self) -> None:
        await self._drained.wait()

    def mark(self, text: str) -> None:
        """Start a new section of the log (a match): ``[arena: text]`` goes before the next
        stderr bytes, and the tail quoted in faults starts afresh."""
        line = " ".join(text.split())[:300]
        self._marker = f"[arena: {line}]\n".encode()
        self._tail = b""

    def stderr_tail(self) -> str:
        """The last few lines of stderr (since the last mark), for error messages: one line,
        the lines joined by " | ", escaped where a terminal would act on them (printable)."""
        lines = [line.strip() for line in self._tail.decode(errors="replace").splitlines()]
        lines = [line[:200] for line in lines if line][-STDERR_TAIL_LINES:]
        return printable(" | ".join(lines))

    def stderr_lines(self, count: int) -> str:
        """The last error line and last ``count`` lines of stderr joined with `` | `` (one line)."""
        lines = [ln.strip() for ln in self._tail.decode(errors="replace").splitlines()]
        lines = [ln for ln in lines if ln]
        errors = [ln for ln in lines if "error" in ln.lower()][-1:]  # often the line that says why
        chosen = errors + [ln for ln in lines[-count:] if ln not in errors]
        return printable(" | ".join(chosen)[-300:])

    # The pipes are driven on their raw (non-blocking) fds rather than through trio's FdStream:
    # FdStream.send_all and receive_some each add a scheduler pass (an up-front checkpoint), and
    # receive_some first tries a read that fails with EAGAIN; per decision that was three passes
    # instead of one (benchmarks/limit.py). A write that fits in the pipe returns without yielding;
    # a read always waits for readability first, so it is a checkpoint.

    async def send_all(self, data: bytes) -> None:
        if self._streams_closed:
            raise trio.ClosedResourceError("the bot's input was already closed")
        fd = self._stdin_fd
        view = memoryview(data)
        sent = 0
        try:
            while True:
                try:
                    sent += os.write(fd, view[sent:])
                except BlockingIOError:  # the pipe is full: the bot is not reading yet
                    pass
                if sent >= len(view):
                    return
                await trio.lowlevel.wait_writable(fd)
                if self._streams_closed:
                    raise trio.ClosedResourceError("the bot's input was closed")
        except OSError as error:  # EPIPE: the bot closed its input or exited
            raise trio.BrokenResourceError(str(error)) from error

    async def receive_some(self, max_bytes: int) -> bytes:
        fd = self._stdout_fd
        if self.quick is not None:
            data = self.quick.read(max_bytes)
            if data is not None:
                return data
        while not self._streams_closed:
            try:
                await trio.lowlevel.wait_readable(fd)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return b""
            if self._streams_closed:
                break
            try:
                return os.read(fd, max_bytes)
            except BlockingIOError:
                continue
            except OSError:
                return b""
        return b""

    def exit_status(self) -> str | None:
        return describe_returncode(self.process.poll())

    def cpu_seconds(self) -> float | None:
        """The CPU seconds the bot's processes have used so far (see BotProcess.cpu_seconds)."""
        if self._streams_closed or self.exit_status() is not None:
            return None
        cgroup = self.cgroup
        if cgroup is not None and self.pid in cgroup.members():  # (joining it may have failed)
            return cgroup.cpu_seconds()
        return processes_cpu_seconds(self.pid, self.token)

    async def terminate(self, grace_s: float) -> None:
        with trio.CancelScope(shield=True):
            self._streams_closed = True
            if self.quick is not None:
                self.quick.close()
            try:
                await self._stdin.aclose()  # end of file on the bot's input
            except Exception:
                pass
            with trio.move_on_after(grace_s):
                await self.process.wait()
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            if self.cgroup is not None and self.in_cgroup:
                # Whatever it started, wherever it went, with whatever environment: gone.
                self.cgroup.kill()
            else:
                # Found by a look at every process of the machine, which takes milliseconds to
                # tens of them: in a thread, so that the other matches of this process do not
                # wait for it (their bots' replies would be charged the wait).
                await trio.to_thread.run_sync(kill_everything, self.pid, self.token)
                if self.cgroup is not None:
                    self.cgroup.kill()
            with trio.move_on_after(5):
                await self.process.wait()
            _LIVE_GROUPS.pop(self.pid, None)
            if self.cgroup is not None:
                with trio.move_on_after(2):  # empty once the kernel has finished the kills
                    while not self.cgroup.remove():
                        await trio.sleep(0.01)
                _LIVE_CGROUPS.pop(self.pid, None)
            if self.lease is not None:
                # Anything still running as the bot's own user dies before the id is reused
                # (its cgroup, where it has one, held every process of that user).
                await trio.to_thread.run_sync(self.lease.release, not self.in_cgroup)
            # stderr reaches EOF once every holder of the pipe is dead; don't wait on stragglers.
            with trio.move_on_after(1):
                await self._drained.wait()
            self._drain_scope.cancel()
            for stream in (self._stdout, self._stderr):
                try:
                    await stream.aclose()
                except Exception:
                    pass
            _remove(self.private_dir)


def _sealed(
    spec: BotSpec,
    argv: list[str],
    folder: str | None,
    user: BotUser | None,
    how: str,
    log_dir: Path,
    file_mb: int,
) -> tuple[list[str], Callable[[], None] | None]:
    """The bot's command line and what its child runs before exec, sealed ``how`` ("namespaces":
    the child makes them; "bwrap": the command line runs it in bubblewrap). BotStartupError for
    a program its seal would hide."""
    plan = SealPlan(
        workdir=folder or "/tmp",  # without a folder: its private /tmp
        own_folder=folder,
        program_folders=tuple(confine.program_folders(argv, folder or "/")),
        hidden=confine.hidden_from(
            [folder] if folder else [], (), (*spec.hidden, os.path.abspath(log_dir))
        ),
        file_mb=file_mb,
        owner=None if user is None else (user.uid, user.gid),
        drop_capabilities=how == "namespaces" and user is None and os.geteuid() == 0,
    )
    program = os.path.normpath(os.path.join(folder or "/", argv[0]))
    covering = [path for path in plan.hidden if confine.under(program, path)]
    if "/" in argv[0] and covering and not (folder and confine.under(program, folder)):
        raise BotStartupError(
            spec.name,
            f"sealed: its program {program} is in {covering[0]}, which its seal hides (the "
            "arena's files and other bots' folders): keep it in the bot's own folder "
            "(SPEC.md section 7)",
        )
    if how == "namespaces":
        return argv, confine.namespaces_child(plan)
    return confine.bwrap_argv(plan, argv, strict=spec.sandbox == "bwrap"), None


def _remove(folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "bot"


# -- the bot ------------------------------------------------------------------------------------------


@dataclass
class BotStats:
    """Counters a tournament may show."""

    matches: int = 0
    requests: int = 0


class _NoProcess:
    """The transport of a bot that could not be started: nothing to write to or read from."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def send_all(self, data: bytes) -> None:
        raise trio.ClosedResourceError(self.reason)

    async def receive_some(self, max_bytes: int) -> bytes:
        return b""

    async def terminate(self, grace_s: float) -> None:
        return None

    def exit_status(self) -> str | None:
        return f"did not start: {self.reason}"


class BotProcess:
    """One running bot program (plays many matches in sequence).

    ``alive`` turns False once the bot crashed, forfeited a match (``retired``), or its streams can
    no longer be trusted (``broken``: a write was cut off, a match was aborted); its owner then
    closes it and starts a fresh one for the next match.
    """

    def __init__(
        self, spec: BotSpec, transport: Transport, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.sent_name = spec.sent_name or spec.name  # its name on the wire (hello, seats)
        self.version = spec.version
        self.transport = transport
        # The quick read only from the real transport itself (like send_nowait; arena check
        # swaps wrappers in, which read through receive_some).
        quick = None
        if type(transport) is ProcessTransport and transport.quick is not None:
            quick = transport.quick.read
        self.reader = LineReader(transport.receive_some, max_line_bytes, quick)
        self.max_line_bytes = max_line_bytes
        self.reported_name = ""
        self.reported_version = ""
        self.broken: str | None = None  # why its streams can no longer be trusted
        self.retired: str | None = None  # why it must not play again (e.g. it forfeited)
        self.closed = False
        self.stats = BotStats()
        self.startup_error: str | None = None  # set on a stand-in for a bot that did not start
        # The id of its last request. Ids grow over the process's whole life, so a reply from an
        # earlier match is stale. (The referee counts them: _Match.ask_now.)
        self.last_request_id = 0

    @classmethod
    def absent(cls, spec: BotSpec, reason: str) -> BotProcess:
        """A stand-in for a bot that could not be started. ``run_match`` records a startup fault
        for its seat and lets the autopilot play it, so the other bots' match goes on."""
        bot = cls(spec, _NoProcess(reason))
        bot.startup_error = reason
        bot.mark_broken(f"did not start: {reason}")
        return bot

    @property
    def alive(self) -> bool:
        return (
            not self.closed
            and self.broken is None
            and self.retired is None
            and self.transport.exit_status() is None
        )

    @property
    def log_path(self) -> Path | None:
        return getattr(self.transport, "log_path", None)

    def mark_broken(self, reason: str) -> None:
        """Its input or output is in an unknown state: nothing more is written to it, not even bye."""
        if self.broken is None:
            self.broken = reason

    def retire(self, reason: str) -> None:
        """It may finish this match but not play another (it is still sent match_end and bye)."""
        if self.retired is None:
            self.retired = reason

    async def settle(self, timeout_s: float) -> None:
        """After its output ended: wait up to ``timeout_s`` for its exit status and the rest of its
        standard error, so that ``exit_reason`` can quote both."""
        with trio.move_on_after(timeout_s):
            while self.transport.exit_status() is None:
                await trio.sleep(0.01)
            drained = getattr(self.transport, "wait_stderr_drained", None)
            if drained is not None:
                await drained()

    def mark_log(self, text: str) -> None:
        """A marker line in the bot's stderr log (see the module's docstring)."""
        mark = getattr(self.transport, "mark", None)
        if mark is not None:
            mark(text)

    def exit_reason(self) -> str:
        """Why the bot stopped, for fault messages (exit status and the tail of its stderr)."""
        status = self.transport.exit_status() or "closed its output"
        tail = getattr(self.transport, "stderr_tail", lambda: "")()
        return f"{status}" + (f" (stderr: {tail})" if tail else "")

    def pin(self, cores: Collection[int]) -> None:
        """Run the bot, every thread and every process of it, on ``cores`` only (a bot started
        on every core, now that it is up: arena.referee.cores)."""
        transport = self.transport
        if isinstance(transport, ProcessTransport):
            for pid in related_pids(transport.pid, transport.token):
                pin_threads(pid, cores)

    def cpu_seconds(self) -> float | None:
        """The CPU time (user and system, in seconds) the bot has used so far, every process and
        thread of it: its cgroup's ``cpu.stat`` where it has one, else /proc of the processes
        :meth:`pin` finds (also a sandboxed bot's), with the children they waited for. None
        where it cannot be read: not Linux, the bot has ended, an in-memory transport. Only a
        difference of two readings means anything (a cgroup also counts what the bot's
        processes used before they ended)."""
        transport = self.transport
        if isinstance(transport, ProcessTransport):
            return transport.cpu_seconds()
        return None

    def send_nowait(self, data: bytes) -> int:
        """Write what the bot's input takes now without waiting (0 for a transport that cannot
        tell); the number of bytes written. Raises BotGone like :meth:`send`."""
        transport = self.transport
        # Only the real transport itself: a wrapper (arena check swaps one in) may change what
        # is written in its send_all. It writes the raw fd itself (a call fewer per decision).
        if type(transport) is not ProcessTransport:
            return 0
        if transport._streams_closed:
            raise BotGone("the bot's input was already closed")
        try:
            return os.write(transport._stdin_fd, data)
        except BlockingIOError:  # the pipe is full: the bot is not reading yet
            return 0
        except OSError as error:  # EPIPE: the bot closed its input or exited
            raise BotGone(str(error) or type(error).__name__) from None

    async def send(self, data: bytes) -> None:
        """Write to the bot; raises BotGone if it cannot take input any more."""
        try:
            await self.transport.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            raise BotGone(str(error) or type(error).__name__) from None

    # -- starting ------------------------------------------------------------------------------

    @classmethod
    async def start(
        cls,
        spec: BotSpec,
        *,
        time_control: TimeControl,
        log_dir: Path,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> BotProcess:
        """Start the bot in its own session with its limits, send hello, wait for ready.

        Raises BotStartupError (naming the bot) if it cannot run or is not ready in time.
        """
        log_dir = Path(log_dir)
        log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        protect_referee()
        how = await _seal_method(spec)
        if spec.cwd and not os.path.isdir(spec.cwd):
            raise BotStartupError(spec.name, f"working directory {spec.cwd} does not exist")
        try:
            # In a thread: leasing an @own user id runs kill(1) once, which must not hold up
            # the other matches of this process.
            user = await trio.to_thread.run_sync(bot_user, spec.user)
        except UserError as error:
            raise BotStartupError(spec.name, str(error)) from None
        lease = None if user is None else user.lease
        try:
            return await cls._start_as(
                spec,
                user,
                how,
                time_control=time_control,
                log_dir=log_dir,
                max_line_bytes=max_line_bytes,
            )
        except BaseException:
            if lease is not None:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(lease.release)
            raise

    @classmethod
    async def _start_as(
        cls,
        spec: BotSpec,
        user: BotUser | None,
        how: str | None,
        *,
        time_control: TimeControl,
        log_dir: Path,
        max_line_bytes: int,
    ) -> BotProcess:
        """:meth:`start` once the user and the way to seal it (``how``: "namespaces", "bwrap",
        or None) are chosen (and its lease held, which the caller owns)."""
        file_mb = spec.file_mb or DEFAULT_FILE_MB
        folder = os.path.abspath(spec.cwd) if spec.cwd else None
        argv = list(spec.argv)
        private = None  # the unsealed bot's HOME and TMPDIR, on the machine's /tmp
        enter = None  # what its child runs to seal itself (as root)
        if how is None:
            private = tempfile.mkdtemp(prefix=f"arena-{_safe_name(spec.name)}-")
            home, tmp = os.path.join(private, "home"), os.path.join(private, "tmp")
            for made in (home, tmp):
                os.mkdir(made)
            if user is not None:
                for made in (private, home, tmp):
                    os.chown(made, user.uid, user.gid)  # its own HOME and TMPDIR
            workdir = folder or private
        else:
            argv, enter = _sealed(spec, argv, folder, user, how, log_dir, file_mb)
            home, tmp = "/tmp/home", "/tmp/tmp"
            workdir = folder or "/"  # (where the child starts; the seal moves it to its own)
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": home,
            "TMPDIR": tmp,
        }
        env.update(dict(spec.env))
        problem = _spawn_problem(argv, env)
        if problem:
            _remove(private)
            raise BotStartupError(spec.name, problem)
        token = secrets.token_hex(16)
        env[TOKEN_VARIABLE] = token
        max_processes = spec.max_processes or DEFAULT_MAX_PROCESSES
        limits = _limits_setter(
            spec.memory_mb or DEFAULT_MEMORY_MB,
            spec.cpu_seconds or DEFAULT_CPU_SECONDS,
            file_mb,
            # Counted per user id: only a user id of the bot's own counts the bot alone.
            max_processes if user is not None and user.lease is not None else None,
        )
        cgroup = BotCgroup.create(max_processes)  # None where the machine offers none
        try:
            # spawn() also gives it a parent-death signal: it dies with this process.
            process = await spawn(
                argv,
                cwd=workdir,
                env=env,
                start_new_session=True,
                preexec=limits,
                run_as=None if user is None else (user.uid, user.gid),
                cgroup_procs=None if cgroup is None else cgroup.procs,
                seal=enter,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as error:
            # ValueError, SubprocessError: what exec or the limits refused (e.g. a limit the
            # kernel cannot hold); never a traceback for a bot that cannot be started
            _remove(private)
            if cgroup is not None:
                cgroup.remove()
            reason = getattr(error, "strerror", None) or str(error)
            if user is not None:
                reason += (
                    f" (run as user {user.name}, who must be able to read the program and its "
                    f"folder; choose another with the bot's user or {BOT_USER_VARIABLE})"
                )
            raise BotStartupError(spec.name, f"cannot run {spec.argv[0]!r}: {reason}") from None
        log_path = log_dir / f"{_safe_name(spec.name)}-{process.pid}.stderr.log"
        transport = ProcessTransport(
            process,
            log_path,
            private,
            log_name=_safe_name(spec.name),
            token=token,
            cgroup=cgroup,
            lease=None if user is None else user.lease,
        )
        try:
            return await cls.connect(
                spec, transport, time_control=time_control, max_line_bytes=max_line_bytes
            )
        except BotStartupError as error:
            with trio.move_on_after(1):  # what it said on the way out tells why it failed
                await transport.wait_stderr_drained()
            error.stderr_tail = transport.stderr_lines(3)
            if user is not None:
                # As another user a bot may find another interpreter, or none of its modules.
                hint = (
                    f" (it ran as user {user.name}, since the arena runs as root: choose another "
                    f"with the bot's user or {BOT_USER_VARIABLE}; @arena runs it as root)"
                )
                raised = BotStartupError(error.bot, error.reason + hint)
                raised.stderr_tail = error.stderr_tail
                raise raised from None
            raise

    @classmethod
    async def connect(
        cls,
        spec: BotSpec,
        transport: Transport,
        *,
        time_control: TimeControl,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> BotProcess:
        """Say hello over ``transport`` and wait for ready (the seam tests use for fake bots)."""
        bot = cls(spec, transport, max_line_bytes=max_line_bytes)
        try:
            await bot._handshake(time_control)
        except BaseException:
            await bot.close()
            raise
        return bot

    async def _handshake(self, control: TimeControl) -> None:
        limits = Limits(
            startup_ms=control.startup_ms,
            decision_ms=control.decision_ms,
            bank_ms=control.bank_ms,
            increment_ms=control.increment_ms,
            margin_ms=control.margin_ms,
            max_line_bytes=self.max_line_bytes,
        )
        hello = Hello(protocol=PROTOCOL_VERSION, name=self.sent_name, limits=limits)
        line = None
        with trio.move_on_after(control.startup_ms / 1000) as scope:
            try:
                await self.send(encode_line(hello))
                line = await self.reader.read_line()
            except BotGone:
                line = None
            except LineTooLong as error:
                raise BotStartupError(
                    self.name,
                    f"its first line is longer than {error.limit} bytes, expected a ready message",
                ) from None
        if scope.cancelled_caught:
            raise BotStartupError(self.name, f"no ready message within {control.startup_ms} ms")
        if line is None:
            await trio.sleep(0.05)  # let the exit status arrive for the message
            raise BotStartupError(self.name, f"ended before saying ready: {self.exit_reason()}")
        try:
            message = decode_from_bot(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise BotStartupError(
                self.name, f"expected a ready message, got {shorten(line)}: {error}"
            ) from None
        if not isinstance(message, Ready):
            raise BotStartupError(self.name, f"expected a ready message, got {shorten(line)}")
        self.reported_name = message.name
        self.reported_version = message.version
        if not self.version:
            self.version = message.version

    # -- ending -----------------------------------------------------------------------------------

    async def close(self) -> None:
        """Say bye, give the bot a short grace to exit, then kill its whole process group.

        Safe to call more than once and from a cancelled task (the work is shielded).
        """
        if self.closed:
            return
        self.closed = True
        with trio.CancelScope(shield=True):
            if self.broken is None and self.transport.exit_status() is None:
                with trio.move_on_after(CLOSE_GRACE_S):
                    try:
                        await self.send(encode_line(Bye()))
                    except BotGone:
                        pass
            await self.transport.terminate(CLOSE_GRACE_S)

    async def __aenter__(self) -> BotProcess:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


__all__ = [
    "BotProcess",
    "BotStartupError",
    "BotGone",
    "Transport",
    "ProcessTransport",
    "check_bwrap",
    "kill_everything",
    "process_running",
    "processes_cpu_seconds",
    "related_pids",
    "DEFAULT_MEMORY_MB",
    "DEFAULT_CPU_SECONDS",
    "DEFAULT_FILE_MB",
    "STDERR_CAP_BYTES",
]
