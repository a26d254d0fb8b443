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

One job per module: this one runs the bot (:class:`ProcessTransport`: its pipes, stderr drain and
end; :class:`BotProcess`: the protocol's hello, ready and bye); what starting it decides (limits,
seal, what exec refuses) is in arena/referee/launch.py; finding its processes in /proc, their CPU
time and killing them in arena/referee/proc_tree.py; its lines in lines.py; its stderr logs in
stderr_log.py; the quick read of a reply in trio_fast.py.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import msgspec
import trio

from arena.referee import trio_fast
from arena.referee.bot_spec import BotSpec
from arena.referee.cgroups import BotCgroup
from arena.referee.clock import TimeControl
from arena.referee.confine import DEFAULT_MAX_PROCESSES
from arena.referee.cores import pin_threads
from arena.referee.launch import (
    DEFAULT_CPU_SECONDS,
    DEFAULT_FILE_MB,
    DEFAULT_MEMORY_MB,
    BotStartupError,
    check_bwrap,
    limits_setter,
    safe_name,
    seal_method,
    sealed_command,
    spawn_problem,
)
from arena.referee.lines import (
    DEFAULT_MAX_LINE_BYTES,
    LineReader,
    LineTooLong,
    printable,
    shorten,
)
from arena.referee.proc_tree import (
    TOKEN_VARIABLE,
    kill_everything,
    process_running,
    processes_cpu_seconds,
    related_pids,
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

STDERR_CAP_BYTES = PROCESS_CAP_BYTES
STDERR_TAIL_LINES = 12  # a crash fault quotes this many of the last stderr lines (a stack trace)
STDERR_TAIL_BYTES = 4000  # of its latest stderr, kept in memory (fault messages, a decision's)
CLOSE_GRACE_S = 1.0  # after bye, how long a bot may take to exit before it is killed

# Process groups still running (leader pid -> the bot's token), killed at interpreter exit if their
# owner never got to close().
_LIVE_GROUPS: dict[int, str | None] = {}
# Each bot's cgroup, where the machine offers them (arena/referee/cgroups.py): the sure way.
_LIVE_CGROUPS: dict[int, BotCgroup] = {}


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


@atexit.register
def _kill_leftovers() -> None:
    for leader, token in list(_LIVE_GROUPS.items()):
        kill_everything(leader, token)
    for cgroup in list(_LIVE_CGROUPS.values()):
        cgroup.kill()
        cgroup.remove()


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
        self._stderr_fd = self._stderr.fileno()
        self._stdin_fd = self._stdin.fileno()
        self._stdout_fd = self._stdout.fileno()
        # The fast read path (LineReader.line_now calls its read), where this trio allows it.
        self.quick = trio_fast.QuickRead(self._stdout_fd) if trio_fast.usable() else None
        self._streams_closed = False  # set before the fds are closed: their numbers get reused
        self._drain_scope = trio.CancelScope()
        self._drained = trio.Event()  # set once stderr reached its end (or draining stopped)
        self._tail = b""  # the last STDERR_TAIL_BYTES of stderr since the last mark
        self._marker = b""  # written to the log before the next stderr bytes
        _LIVE_GROUPS[self.pid] = token
        if cgroup is not None:
            _LIVE_CGROUPS[self.pid] = cgroup
        # (It joined before exec, or failed to: then its processes are looked for in /proc.)
        self.in_cgroup = cgroup is not None and self.pid in cgroup.members()
        trio.lowlevel.spawn_system_task(self._drain_stderr, name=f"stderr of pid {self.pid}")

    async def _drain_stderr(self) -> None:
        """Copy stderr to its log (bounded, and never a reason to stop: StderrLog), and keep
        reading to the end; never raises. Each chunk is taken in full as it is read (no await
        between the read and the tail), so ``stderr_since`` may read on its own meanwhile."""
        try:
            with self._drain_scope:
                while True:
                    try:
                        await trio.lowlevel.wait_readable(self._stderr_fd)
                    except (trio.ClosedResourceError, OSError):
                        break
                    if self._read_stderr() < 0:
                        break
        except Exception:  # a system task must never raise: it would crash the whole run
            pass
        finally:
            self.log.close()
            self._drained.set()

    def _read_stderr(self) -> int:
        """Read what the stderr pipe holds now, without waiting, into the log and the tail: the
        bytes read (0: none there), -1 at its end."""
        try:
            chunk = os.read(self._stderr_fd, 1 << 16)
        except BlockingIOError:
            return 0
        except OSError:
            return -1
        if not chunk:
            return -1
        self.stderr_bytes += len(chunk)
        self._tail = (self._tail + chunk)[-STDERR_TAIL_BYTES:]
        marker, self._marker = self._marker, b""
        self.log.write(chunk, marker)
        return len(chunk)

    def stderr_since(self, count: int) -> bytes:
        """What stderr brought after its first ``count`` bytes, up to what its pipe holds now
        (read first), at most the last STDERR_TAIL_BYTES of it and none before the last mark."""
        if not self._drained.is_set():  # (else its fd may be closed, its number reused)
            for _ in range(4):  # (a bot that floods its stderr does not hold the referee here)
                if self._read_stderr() <= 0:
                    break
        new = self.stderr_bytes - count
        return self._tail[-new:] if new > 0 else b""

    async def wait_stderr_drained(self) -> None:
        await self._drained.wait()

    def mark(self, text: str) -> None:
        """Start a new section of the log (a match): ``[arena: text]`` goes before the next
        stderr bytes, and the tail quoted in faults starts afresh."""
        line = " ".join(text.split())[:300]
        self._marker = f"[arena: {line}]\n".encode()
        self._tail = b""

    def stderr_since_mark(self) -> str:
        """What stderr brought since the last mark (its last STDERR_TAIL_BYTES), as written."""
        return self._tail.decode(errors="replace")

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

    def write_nowait(self, data: bytes) -> int:
        """Write what the bot's input takes now, without waiting; the number of bytes written
        (0: the pipe is full, the bot is not reading yet). OSError once it cannot be written
        (closed here, or EPIPE: the bot closed its input or exited)."""
        if self._streams_closed:
            raise BrokenPipeError("the bot's input was already closed")
        try:
            return os.write(self._stdin_fd, data)
        except BlockingIOError:
            return 0

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


def _remove(folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


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

    def stderr_read(self) -> int | None:
        """How many bytes of its stderr the arena has read so far (None: a transport that has no
        stderr, as in tests); with :meth:`stderr_since`, a decision's stderr (SPEC.md 8)."""
        return getattr(self.transport, "stderr_bytes", None)

    def stderr_since(self, count: int) -> bytes:
        """What its stderr brought after its first ``count`` bytes, its pipe read up to now (the
        last STDERR_TAIL_BYTES at most)."""
        since = getattr(self.transport, "stderr_since", None)
        return b"" if since is None else since(count)

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
        # is written in its send_all.
        if type(transport) is not ProcessTransport:
            # An in-memory seat that takes everything at once (a person's) says so by write_now.
            write_now = getattr(transport, "write_now", None)
            return 0 if write_now is None else write_now(data)
        try:
            return transport.write_nowait(data)
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
        how = await seal_method(spec)
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
            private = tempfile.mkdtemp(prefix=f"arena-{safe_name(spec.name)}-")
            home, tmp = os.path.join(private, "home"), os.path.join(private, "tmp")
            for made in (home, tmp):
                os.mkdir(made)
            if user is not None:
                for made in (private, home, tmp):
                    os.chown(made, user.uid, user.gid)  # its own HOME and TMPDIR
            workdir = folder or private
        else:
            argv, enter = sealed_command(spec, argv, folder, user, how, log_dir, file_mb)
            home, tmp = "/tmp/home", "/tmp/tmp"
            workdir = folder or "/"  # (where the child starts; the seal moves it to its own)
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": home,
            "TMPDIR": tmp,
        }
        env.update(dict(spec.env))
        problem = spawn_problem(argv, env)
        if problem:
            _remove(private)
            raise BotStartupError(spec.name, problem)
        token = secrets.token_hex(16)
        env[TOKEN_VARIABLE] = token
        max_processes = spec.max_processes or DEFAULT_MAX_PROCESSES
        limits = limits_setter(
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
        log_path = log_dir / f"{safe_name(spec.name)}-{process.pid}.stderr.log"
        transport = ProcessTransport(
            process,
            log_path,
            private,
            log_name=safe_name(spec.name),
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
