"""Sealing a bot: what its process can reach besides its pipes (SPEC.md section 7).

A bot is sealed by default (``BotSpec.sandbox`` unset), as far as the machine allows:

- its own **network namespace** (only its own loopback: no service of the machine, no web
  server, no Dask scheduler, no other bot);
- its own **mount namespace**: a private ``/tmp`` (``HOME`` and ``TMPDIR`` in it), ``/var/tmp``
  and ``/dev/shm``, each a bounded tmpfs that is gone with the bot; ``/run`` empty (no service
  sockets); the arena's own files (output folder, logs, results and tournament files) and the
  other bots' folders hidden (``BotSpec.hidden``); its own folder and program shown again where
  a private folder covers them; ``/proc`` showing only the processes it may see;
- its own **IPC namespace** (System V shared memory and semaphores of its own, gone with it).

How: an arena run as root makes the namespaces itself in the bot's child process before
``exec`` (:func:`enter_namespaces`), no program needed; an ordinary user's arena wraps the bot
in bubblewrap with user namespaces (:func:`bwrap_argv`). :func:`machine_seal` finds out, once
per process, which of the two works here; :func:`missing_line` says in one line what a bot does
not get on this machine. ``sandbox = "bwrap"`` asks for bubblewrap whoever runs the arena (the
file system read-only, the bot's folder too, its own PID namespace); ``sandbox = "none"``
turns the seal off for a trusted bot.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import socket
import struct
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.referee.cgroups import pids_problem

BWRAP = "bwrap"
SEAL_OFF = "none"  # sandbox = "none": a trusted bot, not sealed
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # a fresh tmpfs each, gone with the bot
EMPTY_DIRS = ("/run",)  # Unix sockets of the machine's services live there
TMP_SIZE_FACTOR = 4  # the private /tmp holds this many times file_mb; /var/tmp, /dev/shm one
DEFAULT_MAX_PROCESSES = 256  # processes and threads of a bot's own user id (SPEC 7)

# From <sched.h> and <sys/mount.h> (the same on every Linux architecture)
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
CAP_DAC_OVERRIDE = 1
SIOCSIFFLAGS = 0x8914
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40
O_PATH = getattr(os, "O_PATH", 0o10000000)
SEAL_FAILED_STATUS = 126  # the child's exit status when it could not seal itself


@dataclass(frozen=True)
class SealPlan:
    """Everything the child needs to seal itself, worked out in the arena process (the child
    only makes system calls: it must not import or look anything up after ``fork``)."""

    workdir: str  # where the bot works, as it sees it
    own_folder: str | None  # its folder (writable as its user may), kept visible
    program_folders: tuple[str, ...]  # the folders of its program files, kept visible read-only
    hidden: tuple[str, ...]  # hidden from it (empty folders, files reading as /dev/null)
    file_mb: int  # the private folders' sizes follow from it
    owner: tuple[int, int] | None  # (uid, gid) of its HOME and TMPDIR; None: the arena's own
    drop_capabilities: bool = False  # it stays root (a trusted bot): keep CAP_DAC_OVERRIDE only

    def sizes(self) -> dict[str, int]:
        size = self.file_mb << 20
        return {"/tmp": TMP_SIZE_FACTOR * size, "/var/tmp": size, "/dev/shm": size}


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both absolute and normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def program_folders(argv: Sequence[str], workdir: str) -> list[str]:
    """The folders of the files named in ``argv`` (the interpreter, the script), taken from
    ``workdir`` unless absolute, in order, without repeats."""
    found: list[str] = []
    for arg in argv:
        if not arg or "\0" in arg:
            continue
        path = os.path.normpath(os.path.join(workdir, arg))
        if os.path.isfile(path):
            folder = os.path.dirname(path)
            if folder not in found:
                found.append(folder)
    return found


def hidden_from(
    own: Sequence[str], others: Iterable[str], arena: Iterable[str] = ()
) -> tuple[str, ...]:
    """What to hide from a bot whose own folder is in ``own`` (none or one): the arena's paths
    (all but its own folder itself: one holding it is hidden and its folder shown again), and
    the other bots' folders but those holding its own (bots sharing a folder see each other's
    files). Absolute, symbolic links resolved, in order, once each."""
    kept = [os.path.realpath(p) for p in own]
    found: list[str] = []
    for path in arena:
        path = os.path.realpath(path)
        if path not in found and path not in kept:
            found.append(path)
    for path in others:
        path = os.path.realpath(path)
        if path not in found and not any(under(mine, path) for mine in kept):
            found.append(path)
    return tuple(found)


def arena_files(output: str | os.PathLike, results: str | os.PathLike, *more: str) -> list[str]:
    """The paths of a tournament no bot may read: its output folder (records, logs), its
    results file with SQLite's companions, and ``more`` (the tournament file)."""
    results = os.fspath(results)
    return [
        os.fspath(output),
        *(results + suffix for suffix in ("", "-wal", "-shm", "-journal")),
        *more,
    ]


# -- in the child, as root: namespaces made before exec ------------------------------------------

_libc: ctypes.CDLL | None = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        for name in ("unshare", "mount", "prctl"):  # resolved here, before any fork
            getattr(_libc, name)
    return _libc


class SealError(OSError):
    """A step of sealing failed in the child (its message names the step)."""


def _check(result: int, step: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise SealError(number, f"{step}: {os.strerror(number)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    _check(
        _c().mount(
            None if source is None else source.encode(),
            target.encode(),
            None if kind is None else kind.encode(),
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _same(path: str, fd: int) -> bool:
    try:
        seen, kept = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (seen.st_dev, seen.st_ino) == (kept.st_dev, kept.st_ino)


def _show_again(kept: list[tuple[str, int, bool]]) -> None:
    """Bind each kept folder at its own path where a private or hidden folder now covers it."""
    for path, fd, writable in kept:
        if _same(path, fd):
            continue
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        if not writable:
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _hide(hidden: Sequence[str]) -> list[str]:
    """Cover every hidden path that is visible: an empty tmpfs over a folder, /dev/null over a
    file. Returns the folders covered (made read-only once kept folders are bound inside)."""
    covered = []
    for path in hidden:
        try:
            is_folder = os.path.isdir(path)
            if not is_folder and not os.path.exists(path):
                continue
        except OSError:
            continue
        if is_folder:
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
            covered.append(path)
        else:
            _mount("/dev/null", path, None, MS_BIND)
    return covered


def _loopback_up() -> None:
    """A new network namespace's loopback is down: bring it up (a bot's own helpers may talk
    over it; nothing outside the namespace is there)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(
            sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING)
        )


def enter_namespaces(plan: SealPlan) -> None:
    """In the bot's child process before exec, as root (before its user is switched): new
    mount, network and IPC namespaces, laid out as the module docstring says. Raises SealError
    (or OSError) naming the step that failed."""
    c = _c()
    kept: list[tuple[str, int, bool]] = []
    _check(c.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC), "unshare")
    # Nothing mounted here may reach the machine's mount table, and the reverse.
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    try:
        # Held open (in the new namespace: a bind's source must be in it) to be shown again.
        for path, writable in [
            *([(plan.own_folder, True)] if plan.own_folder else []),
            *((folder, False) for folder in plan.program_folders),
        ]:
            try:
                kept.append((path, os.open(path, O_PATH | os.O_DIRECTORY), writable))
            except OSError:
                continue  # gone: nothing to show
        for folder, size in plan.sizes().items():
            _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
        _mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
        _show_again(kept)
        covered = _hide(plan.hidden)
        # Its own folder inside a hidden one (a Dask worker's cache entry) is shown again, not
        # a program named on its command line there (written by whoever wrote the command).
        _show_again([entry for entry in kept if entry[2]])  # (writable: its own folder)
        for folder in ["/run", *covered]:
            _mount(None, folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name in ("home", "tmp"):
            os.mkdir(f"/tmp/{name}", 0o700)
            if plan.owner is not None:
                os.chown(f"/tmp/{name}", *plan.owner)
        # Only the processes of its own user (and none of the arena's) in its /proc.
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
        _loopback_up()
        os.chdir(plan.workdir)  # (the old working directory may lie under a covered folder)
    finally:
        for _, fd, _ in kept:
            os.close(fd)
    _check(c.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")  # no setuid programs
    if plan.drop_capabilities:
        # A trusted bot run as root keeps reading what root may read, but cannot undo its
        # namespaces (unmount, enter others), trace, or change the machine.
        for capability in range(_last_capability() + 1):
            if capability != CAP_DAC_OVERRIDE:
                _check(c.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), "drop capabilities")


_LAST_CAPABILITY: int | None = None


def _last_capability() -> int:
    """The kernel's highest capability number (read in the arena process: see SealPlan)."""
    global _LAST_CAPABILITY
    if _LAST_CAPABILITY is None:
        try:
            with open("/proc/sys/kernel/cap_last_cap") as handle:
                _LAST_CAPABILITY = int(handle.read())
        except (OSError, ValueError):
            _LAST_CAPABILITY = 40
    return _LAST_CAPABILITY


def namespaces_child(plan: SealPlan) -> Callable[[], None]:
    """What the child runs (spawn's ``seal``): :func:`enter_namespaces`, and on failure one line
    on the bot's standard error and exit status 126 (the startup fault quotes it)."""
    _c()
    _last_capability()

    def seal() -> None:
        try:
            enter_namespaces(plan)
        except OSError as error:
            text = getattr(error, "strerror", None) or str(error)
            os.write(2, f"arena: the bot could not be sealed: {text}\n".encode(errors="replace"))
            os._exit(SEAL_FAILED_STATUS)

    return seal


# -- bubblewrap -------------------------------------------------------------------------------------


def bwrap_argv(
    plan: SealPlan, argv: Sequence[str], *, strict: bool, switch_user: bool = False
) -> list[str]:
    """``argv`` in bubblewrap: the same seal, plus its own PID and UTS namespaces, every
    capability dropped and a new terminal session. The machine's file system read-only; the
    bot's own folder writable as its user may, or (``strict``: ``sandbox = "bwrap"``) read-only
    too. ``switch_user``: run by root, ``argv`` switches to a user of its own first
    (:func:`as_user_argv`): it keeps the capabilities to switch (lost with the switch), and the
    private folders, HOME and TMPDIR are writable by anyone (each is the sandbox's own)."""
    sizes = plan.sizes()
    shared = ["--perms", "1777"] if switch_user else []
    options = ["--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"]
    for folder in PRIVATE_DIRS:
        options += ["--size", str(sizes[folder]), *shared, "--tmpfs", folder]
    options += [
        "--tmpfs",
        "/run",
        "--remount-ro",
        "/run",
        *shared,
        "--dir",
        "/tmp/home",
        *shared,
        "--dir",
        "/tmp/tmp",
    ]
    kept = [
        *([(plan.own_folder, not strict)] if plan.own_folder else []),
        *((folder, False) for folder in plan.program_folders if folder != plan.own_folder),
    ]

    def bind(folder: str, writable: bool) -> list[str]:
        return ["--bind" if writable else "--ro-bind", folder, folder]

    def passable(folder: str, mounts: Sequence[str]) -> list[str]:
        """The folders bwrap makes (0700) on the way to ``folder`` inside ``mounts``, made
        passable instead for the user ``argv`` switches to (``switch_user``)."""
        if not switch_user:
            return []
        made: list[str] = []
        parent = os.path.dirname(folder)
        while any(under(parent, mount) and parent != mount for mount in mounts):
            made[:0] = ["--perms", "0755", "--dir", parent]
            parent = os.path.dirname(parent)
        return made

    for folder, writable in kept:  # shown where a private folder covers it, writable if its own
        if writable or any(under(folder, private) for private in (*PRIVATE_DIRS, *EMPTY_DIRS)):
            options += passable(folder, PRIVATE_DIRS) + bind(folder, writable)
    hidden = [
        path
        for path in plan.hidden
        if os.path.lexists(path)
        and (
            not any(under(path, private) for private in (*PRIVATE_DIRS, *EMPTY_DIRS))
            or any(under(path, folder) for folder, _ in kept)
        )
    ]
    # A path inside another hidden folder is hidden with it: covered again, bwrap would make
    # the folders on its way in the empty one (showing, say, another bot's folder's name).
    covering = [path for path in hidden if os.path.isdir(path)]
    hidden = [path for path in hidden if not any(under(path, c) and path != c for c in covering)]
    for path in hidden:
        if os.path.isdir(path):
            options += ["--tmpfs", path]
        else:
            options += ["--ro-bind", "/dev/null", path]
    if plan.own_folder and any(under(plan.own_folder, path) for path in hidden):
        options += passable(plan.own_folder, hidden)
        options += bind(plan.own_folder, not strict)  # (as enter_namespaces shows it again)
    for path in hidden:  # (once what it holds again is bound)
        if os.path.isdir(path):
            options += ["--remount-ro", path]
    options += [
        "--chdir",
        plan.workdir,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--new-session",
        # The sandbox dies with bwrap's parent. Its parent-death signal follows the *thread*
        # that started bwrap: spawn() forks every bot from one thread that lives as long as the
        # process (trio's worker threads retire after 10 s idle, which killed every sandbox).
        "--die-with-parent",
        # Run by root, bwrap would pass on every capability: the bot could remount / writable.
        "--cap-drop",
        "ALL",
    ]
    if switch_user:
        options += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return [BWRAP, *options, "--", *argv]


SETPRIV = "setpriv"  # util-linux


def as_user_argv(uid: int, gid: int, argv: Sequence[str]) -> list[str]:
    """``argv`` run by root as user ``uid``, group ``gid`` and no other group, keeping no
    capability (setuid away from root clears them; the inheritable ones are cleared too)."""
    return [
        SETPRIV,
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--",
        *argv,
    ]


# -- what this machine allows -----------------------------------------------------------------------


@dataclass(frozen=True)
class MachineSeal:
    """How bots are sealed by default in this process, and what cannot be had here."""

    method: str | None  # "namespaces" (root), "bwrap" (bubblewrap), or None: not sealed
    why_not: str  # why neither works ("" when one does)
    bwrap_problem: str | None  # why sandbox = "bwrap" cannot run here (None: it can)


_machine: MachineSeal | None = None


def known_machine() -> MachineSeal | None:
    """What :func:`machine_seal` found, if it has looked already."""
    return _machine


def forget_machine() -> None:
    """Look again at the next :func:`machine_seal` (for tests that change what it finds)."""
    global _machine
    _machine = None


def machine_seal() -> MachineSeal:
    """Which way of sealing works here, found once per process by trying it (blocking: a few
    milliseconds, run from a thread in async code)."""
    global _machine
    if _machine is None:
        bwrap = bwrap_problem()
        if os.geteuid() == 0:
            native = namespaces_problem()
            if native is None:
                _machine = MachineSeal("namespaces", "", bwrap)
            elif bwrap is None:
                _machine = MachineSeal("bwrap", "", bwrap)
            else:
                _machine = MachineSeal(None, f"{native}; {bwrap}", bwrap)
        else:
            _machine = MachineSeal(None if bwrap else "bwrap", bwrap or "", bwrap)
    return _machine


def _try(what: str, argv: list[str], **options: Any) -> str | None:
    """Run ``argv`` (``true``, sealed as ``options`` say): None when it ends well, else ``what``
    and the last line it wrote to stderr."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
            check=False,
            **options,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"{what}: {error}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return f"{what}: " + (said[-1] if said else f"status {done.returncode}")


def namespaces_problem() -> str | None:
    """None when root can make a bot's namespaces here (tried on ``true``), else why not."""
    plan = SealPlan("/tmp", None, (), (), 1, None)
    return _try("cannot make namespaces", ["true"], preexec_fn=namespaces_child(plan))


PROBE_USER = 65534  # root tries bubblewrap as this user: bots of other users need it to work


def bwrap_problem() -> str | None:
    """None when bubblewrap can make a sandbox here for a bot (as another user than root, who
    needs no user namespaces where the bots' users do), else a one-line reason."""
    if shutil.which(BWRAP) is None:
        return "bubblewrap (the `bwrap` program) is not installed"
    plan = SealPlan("/", None, (), (), 1, None)
    as_user = {"user": PROBE_USER, "group": PROBE_USER, "extra_groups": []}
    return _try(
        "bubblewrap cannot run here",
        bwrap_argv(plan, ["true"], strict=True),
        **(as_user if os.geteuid() == 0 else {}),
    )


def missing_line(specs: Iterable[object] = ()) -> str | None:
    """One line naming what the default seal cannot give bots on this machine, or None when it
    gives everything (or every bot of ``specs`` has ``sandbox = "none"``). Blocking (it may
    look at the machine for the first time)."""
    if specs and all(getattr(spec, "sandbox", None) == SEAL_OFF for spec in specs):
        return None
    machine = machine_seal()
    missing = []
    if machine.method is None:
        missing.append(
            "no network, /tmp, /var/tmp or /dev/shm of their own, and the arena's files and "
            f"other bots' folders not hidden ({machine.why_not})"
        )
    if os.geteuid() != 0:
        missing.append(
            "no user of their own (the arena is not root: bots run as its user and may read "
            "what it may"
            + (", but for the arena's files and other bots' folders" if machine.method else "")
            + ")"
        )
        limit = pids_problem()
        if limit is not None:
            missing.append(f"no process limit ({limit})")
    if not missing:
        return None
    return "bots here get " + "; ".join(missing) + " (SPEC.md section 7)"
