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
import errno
import fcntl
import os
import pwd
import queue
import random
import signal
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import trio

from arena.referee.cgroups import join_in_child

BOT_USER_VARIABLE = "ARENA_BOT_USER"  # the arena-wide default user of bots
ARENA_OWN_USER = "@arena"  # a bot's user meaning "the arena's own user": for trusted bots only
OWN_UID_USER = "@own"  # a bot's user meaning "a user id of its own, which no other process has"
ROOT_DEFAULT_USER = OWN_UID_USER  # whom bots run as when the arena runs as root and none is given
OWN_UIDS_VARIABLE = "ARENA_OWN_UIDS"  # FIRST-LAST: the user ids @own hands out
# No account has these (each is checked), far above the ones systems and containers allocate.
DEFAULT_OWN_UIDS = (1_800_000_000, 1_800_065_535)
LEASE_FOLDER = "arena-own-uids"  # root-only folder of one lock file per user id in use

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


class BotUser(NamedTuple):
    """Whom a bot runs as; ``lease`` holds an ``@own`` user id until :meth:`UidLease.release`."""

    name: str
    uid: int
    gid: int
    lease: UidLease | None = None


def bot_user(user: str | None) -> BotUser | None:
    """Whom to run a bot as, or None to run it as the arena's own user.

    The bot's own ``user``, else ``ARENA_BOT_USER``, else ``@own`` when the arena runs as root (a
    bot must not run as root: it could read and signal everything). ``@own`` leases a user id
    that no account and no other bot has (:class:`UidLease`), so that the bot can signal nobody
    but itself; the caller releases the lease when the bot is gone. Only root can switch.
    """
    chosen = user or os.environ.get(BOT_USER_VARIABLE) or None
    if chosen == ARENA_OWN_USER:  # no switch, even as root: the organiser vouches for the bot
        return None
    if chosen is None and os.geteuid() == 0:
        chosen = ROOT_DEFAULT_USER
    if chosen is None:
        return None
    if chosen == OWN_UID_USER:
        if os.geteuid() != 0:
            raise UserError(
                f"user {chosen!r}: only an arena running as root can start bots as another user"
            )
        lease = UidLease.acquire()
        return BotUser(f"uid {lease.uid}", lease.uid, lease.uid, lease)
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
    return BotUser(name, uid, gid)


def own_uid_range() -> tuple[int, int]:
    """The user ids ``@own`` hands out: ``ARENA_OWN_UIDS`` (FIRST-LAST) or the default."""
    text = os.environ.get(OWN_UIDS_VARIABLE)
    if not text:
        return DEFAULT_OWN_UIDS
    first, _, last = text.partition("-")
    if not (first.strip().isdigit() and last.strip().isdigit()):
        raise UserError(f"{OWN_UIDS_VARIABLE}={text!r}: expected FIRST-LAST, two user ids")
    low, high = int(first), int(last)
    if not 0 < low <= high < 2**32 - 1:
        raise UserError(f"{OWN_UIDS_VARIABLE}={text!r}: expected 0 < FIRST <= LAST < 4294967295")
    return low, high


def _lease_folder() -> str:
    """The root-only folder of the lease files (made on first use; refused if anyone else could
    write in it, since a lease file removed by someone else would let two bots share a user)."""
    folder = os.path.join(
        "/run" if os.access("/run", os.W_OK) else tempfile.gettempdir(), LEASE_FOLDER
    )
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise UserError(f"user '@own': cannot make {folder}: {error.strerror}") from None
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise UserError(
            f"user '@own': {folder} must be a folder of the arena's user that nobody else may write"
        )
    return folder


class UidLease:
    """A user id held for one bot process, by an exclusive lock on a file named after it.

    The lock is shared by every arena process on the machine (workers, parallel tournaments), and
    dies with the process that holds it, so a crashed arena leaks no user id. Before a user id is
    handed out and again when it is given back, every process still running under it is killed
    (:func:`kill_every_process_of`): nothing a previous bot left behind meets the next one, even
    where there are no cgroups.
    """

    def __init__(self, uid: int, fd: int, path: str) -> None:
        self.uid = uid
        self._fd: int | None = fd
        self._path = path

    @classmethod
    def acquire(cls) -> UidLease:
        low, high = own_uid_range()
        folder = _lease_folder()
        count = high - low + 1
        start = random.randrange(count)  # spread out: a just-released id is not the next one
        for step in range(count):
            uid = low + (start + step) % count
            try:
                pwd.getpwuid(uid)
                continue  # an account has it: not ours to give
            except KeyError:
                pass
            path = os.path.join(folder, str(uid))
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    continue  # another bot has it
                raise UserError(f"user '@own': cannot lock in {folder}: {error.strerror}") from None
            try:
                current = os.stat(path).st_ino
            except FileNotFoundError:
                current = None
            if current != os.fstat(fd).st_ino:
                os.close(fd)  # locked a file its holder removed on release: it was not free
                continue
            lease = cls(uid, fd, path)
            kill_every_process_of(uid)
            return lease
        raise UserError(
            f"user '@own': every user id in {low}-{high} is in use ({OWN_UIDS_VARIABLE})"
        )

    def release(self, kill: bool = True) -> None:
        """Kill whatever still runs as this user id (unless ``kill`` is False: the caller
        killed every process of it already, its cgroup's), then give it back (idempotent)."""
        if self._fd is None:
            return
        if kill:
            kill_every_process_of(self.uid)
        fd, self._fd = self._fd, None
        try:
            os.unlink(self._path)  # while still locked: a waiter that locked it sees it is gone
        except OSError:
            pass
        os.close(fd)  # closing the last descriptor drops the lock


def kill_every_process_of(uid: int) -> None:
    """SIGKILL every process whose user id is ``uid``: ``kill -KILL -1`` run as that user reaches
    exactly the processes that user may signal (its own), and never the one sending it."""
    try:
        subprocess.run(
            ["kill", "-KILL", "-1"],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        pass  # no kill(1) here: the process group, session and cgroup kills still apply


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
    seal: Callable[[], None] | None = None,
    **options: Any,
) -> BotChild:
    """``subprocess.Popen(argv, stdin/stdout/stderr=pipes, **options)`` from the spawner thread.

    In the child, before exec and in this order: join the cgroup whose ``cgroup.procs`` is
    ``cgroup_procs`` and run ``seal`` (its namespaces: both while still privileged), switch to
    ``run_as`` (uid, gid; no supplementary groups), set the parent-death signal (a change of
    user would clear it), then ``preexec``.
    """
    global _spawner
    if _spawner is None or _spawner.pid != os.getpid():
        _spawner = _Spawner()
    parent = os.getpid()

    def in_child() -> None:
        if cgroup_procs is not None:
            join_in_child(cgroup_procs)
        if seal is not None:
            seal()
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
