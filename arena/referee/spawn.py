"""Starting a bot process so that it dies with the process that started it, whatever it does.

A bot gets a parent-death signal (``PR_SET_PDEATHSIG``, SIGKILL) before ``exec``: if its arena or
worker process dies, even by SIGKILL, the kernel kills the bot, also one that ignores the end of
its input. Linux sends that signal when the *thread* that forked the child ends, and trio forks in
its worker threads, which retire after 10 s idle (that killed every bot then). So every bot is
forked by one thread of our own that lives as long as the process (:func:`spawn`), and the pipes
and the wait are done here as ``trio.lowlevel.open_process`` would.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import queue
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import trio

from arena.referee.cgroups import join_in_child

BOT_USER_VARIABLE = "ARENA_BOT_USER"  # the arena-wide default user of bots
ROOT_DEFAULT_USER = "nobody"  # whom bots run as when the arena runs as root and no user is given
ARENA_OWN_USER = "@arena"  # a bot's user meaning "the arena's own user": for trusted bots only

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4

_libc: Any = None


def libc() -> Any:
    """The C library, for prctl (None where there is none: not Linux)."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
            _libc.prctl  # noqa: B018 (resolved here, in the parent: the child only calls it)
        except (OSError, AttributeError):
            _libc = False
    return _libc or None


def die_with_parent(parent_pid: int) -> None:
    """In the child before exec: SIGKILL when the forking thread ends; exit if it already did."""
    c = libc()
    if c is not None:
        c.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the prctl: nobody would signal
        os._exit(1)


class UserError(Exception):
    """A bot's user cannot be used (unknown, or the arena may not switch to it)."""


def bot_user(user: str | None) -> tuple[str, int, int] | None:
    """(name, uid, gid) to run a bot as, or None to run it as the arena's own user.

    The bot's own ``user``, else ``ARENA_BOT_USER``, else ``nobody`` when the arena runs as root
    (a bot must not run as root: it could read and signal everything). Only root can switch.
    """
    chosen = user or os.environ.get(BOT_USER_VARIABLE) or None
    if chosen == ARENA_OWN_USER:  # no switch, even as root: the organiser vouches for the bot
        return None
    if chosen is None and os.geteuid() == 0:
        chosen = ROOT_DEFAULT_USER
    if chosen is None:
        return None
    try:
        entry = pwd.getpwuid(int(chosen)) if chosen.isdigit() else pwd.getpwnam(chosen)
        name, uid, gid = entry.pw_name, entry.pw_uid, entry.pw_gid
    except KeyError:
        if not chosen.isdigit():
            raise UserError(f"user {chosen!r} does not exist on this machine") from None
        name, uid, gid = chosen, int(chosen), int(chosen)  # a bare number: its own group too
    if uid == os.geteuid():
        return None
    if os.geteuid() != 0:
        raise UserError(
            f"user {chosen!r}: only an arena running as root can start bots as another user"
        )
    return name, uid, gid


class BotChild:
    """The parts of ``trio.Process`` a ProcessTransport uses: pid, the three pipes, poll, wait."""

    def __init__(
        self,
        popen: subprocess.Popen,
        stdin: trio.lowlevel.FdStream,
        stdout: trio.lowlevel.FdStream,
        stderr: trio.lowlevel.FdStream,
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._pidfd: int | None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # old kernel: wait() polls instead
            self._pidfd = None

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def poll(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        while self._popen.poll() is None:
            if self._pidfd is not None:
                await trio.lowlevel.wait_readable(self._pidfd)
            else:
                await trio.sleep(0.01)
        if self._pidfd is not None:
            fd, self._pidfd = self._pidfd, None
            trio.lowlevel.notify_closing(fd)
            os.close(fd)
        return self._popen.returncode

    def kill(self) -> None:
        try:
            self._popen.kill()
        except OSError:
            pass


class _Spawner:
    """One long-lived thread that forks every bot (see the module docstring)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        thread = threading.Thread(target=self._serve, name="arena bot spawner", daemon=True)
        thread.start()

    def _serve(self) -> None:
        while True:
            self.jobs.get()()


_spawner: _Spawner | None = None


async def spawn(
    argv: list[str],
    *,
    preexec: Callable[[], None] | None = None,
    run_as: tuple[int, int] | None = None,
    cgroup_procs: str | None = None,
    **options: Any,
) -> BotChild:
    """``subprocess.Popen(argv, stdin/stdout/stderr=pipes, **options)`` from the spawner thread.

    In the child, before exec and in this order: join the cgroup whose ``cgroup.procs`` is
    ``cgroup_procs`` (while still privileged), switch to ``run_as`` (uid, gid; no supplementary
    groups), set the parent-death signal (a change of user would clear it), then ``preexec``.
    """
    global _spawner
    if _spawner is None or _spawner.pid != os.getpid():
        _spawner = _Spawner()
    parent = os.getpid()

    def in_child() -> None:
        if cgroup_procs is not None:
            join_in_child(cgroup_procs)
        if run_as is not None:
            uid, gid = run_as
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        die_with_parent(parent)
        if preexec is not None:
            preexec()

    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    box: list[Any] = []
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def job() -> None:
        try:
            box.append(
                subprocess.Popen(
                    argv,
                    stdin=stdin_read,
                    stdout=stdout_write,
                    stderr=stderr_write,
                    preexec_fn=in_child,
                    **options,
                )
            )
        except BaseException as error:  # handed to the waiting task
            box.append(error)
        finally:
            try:
                token.run_sync_soon(done.set)
            except trio.RunFinishedError:
                pass

    try:
        _spawner.jobs.put(job)
        # Shielded: the child is being made; it must not be lost (it would run unowned).
        with trio.CancelScope(shield=True):
            await done.wait()
    finally:
        for fd in (stdin_read, stdout_write, stderr_write):
            os.close(fd)
    result = box[0]
    if isinstance(result, BaseException):
        for fd in (stdin_write, stdout_read, stderr_read):
            os.close(fd)
        raise result
    return BotChild(
        result,
        trio.lowlevel.FdStream(stdin_write),
        trio.lowlevel.FdStream(stdout_read),
        trio.lowlevel.FdStream(stderr_read),
    )
