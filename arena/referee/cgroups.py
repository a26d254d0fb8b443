"""A cgroup (v2) per bot process, where the machine lets the arena make one: the sure way to find
and kill every process a bot started, also a daemon that left its session, lost its parent and
cleared its environment (nothing else marks it as the bot's).

The arena makes a child of its own cgroup for each bot (``arena-<pid>-<n>``); the bot joins it in
its child process before ``exec`` (so everything it forks is born inside), and ``kill()`` writes
``cgroup.kill`` (Linux 5.14; before that, every member is SIGKILLed in a few rounds) and removes
it. :func:`cgroup_problem` says in one line why there are none (no cgroup v2 mounted, or its
folder is not writable, as for an ordinary user outside a delegated systemd scope). Where the
``pids`` controller is on for its children, each bot's cgroup gets ``pids.max`` (its processes
and threads at once); :func:`pids_problem` says why not.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from arena.referee.proc_tree import kill_pids

_base: Path | None = None
_problem: str | None | bool = False  # False: not looked at yet; None: cgroups work
_numbers = itertools.count(1)


def _own_cgroup() -> tuple[Path | None, str]:
    """The folder of this process's cgroup v2, or None and why not."""
    mount = None
    try:
        with open("/proc/self/mountinfo") as mounts:
            for line in mounts:
                fields = line.split()
                separator = fields.index("-")
                if fields[separator + 1] == "cgroup2":
                    mount = fields[4]
                    break
        with open("/proc/self/cgroup") as own:
            path = next((line.strip()[3:] for line in own if line.startswith("0::")), None)
    except (OSError, ValueError, IndexError):
        return None, "cgroups: /proc cannot tell (not Linux?)"
    if mount is None or path is None:
        return None, "cgroups: no cgroup v2 file system is mounted"
    folder = Path(mount) / path.lstrip("/")
    if not os.access(folder, os.W_OK):
        return None, f"cgroups: {folder} is not writable for this user (no delegated cgroup)"
    return folder, ""


def cgroup_problem() -> str | None:
    """None when bots get a cgroup each here, else one line saying why not (checked once)."""
    global _base, _problem
    if _problem is False:
        folder, why = _own_cgroup()
        if folder is not None:
            probe = folder / f"arena-{os.getpid()}-probe"
            try:
                probe.mkdir(exist_ok=True)
                probe.rmdir()
            except OSError as error:
                folder, why = None, f"cgroups: cannot make one in {folder}: {error.strerror}"
        _base, _problem = folder, (why or None)
        if folder is not None:
            _remove_stale(folder)
            _enable_pids(folder)
    return _problem if isinstance(_problem, str) else None


def _enable_pids(folder: Path) -> None:
    """Turn the pids controller on for the children of ``folder`` if it can be (it cannot where
    the controller is not given to this cgroup, or processes live in it and it is not the root
    cgroup: the kernel's rule that only leaves hold processes)."""
    try:
        enabled = (folder / "cgroup.subtree_control").read_text().split()
        if "pids" not in enabled:
            (folder / "cgroup.subtree_control").write_text("+pids")
    except OSError:
        pass


def pids_problem() -> str | None:
    """None when each bot's cgroup can bound its processes (pids.max), else why not."""
    problem = cgroup_problem()
    if problem is not None or _base is None:
        return problem or "cgroups: none here"
    try:
        enabled = (_base / "cgroup.subtree_control").read_text().split()
    except OSError as error:
        return f"cgroups: cannot read {_base}/cgroup.subtree_control: {error.strerror}"
    if "pids" not in enabled:
        return f"cgroups: the pids controller is not enabled for the children of {_base}"
    return None


def _remove_stale(folder: Path) -> None:
    """Remove the empty cgroups left by arena processes that were killed (no atexit ran)."""
    for path in folder.glob("arena-*-*"):
        owner = path.name.split("-")[1]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            try:
                path.rmdir()  # fails, harmlessly, while a process is still in it
            except OSError:
                pass


class BotCgroup:
    """One bot's cgroup: ``procs`` is the file its child process writes itself into."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.procs = str(path / "cgroup.procs")

    @classmethod
    def create(cls, max_processes: int | None = None) -> BotCgroup | None:
        """A new empty cgroup, or None where there can be none (see cgroup_problem); with
        ``max_processes``, its pids.max where the pids controller is on (pids_problem)."""
        if cgroup_problem() is not None or _base is None:
            return None
        path = _base / f"arena-{os.getpid()}-{next(_numbers)}"
        try:
            path.mkdir()
        except OSError:
            return None
        if max_processes is not None:
            try:
                (path / "pids.max").write_text(str(max_processes))
            except OSError:
                pass  # no pids controller here (pids_problem says so)
        return cls(path)

    def members(self) -> list[int]:
        try:
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def cpu_seconds(self) -> float | None:
        """The CPU time (user and system) every process that ever ran in it has used, from
        ``cpu.stat``'s ``usage_usec`` (kept by cgroup v2 with or without the cpu controller);
        None if it cannot be read."""
        try:
            with open(self.path / "cpu.stat", "rb") as stat:
                for line in stat:
                    key, _, value = line.partition(b" ")
                    if key == b"usage_usec":
                        return int(value) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def kill(self) -> None:
        """SIGKILL every process in it, then remove it (a few rounds, against forks)."""
        try:
            (self.path / "cgroup.kill").write_text("1")
        except OSError:  # before Linux 5.14: kill the members one by one
            for _ in range(5):
                pids = self.members()
                if not pids:
                    break
                kill_pids(pids)

    def remove(self) -> bool:
        """Remove it once empty (the kernel needs a moment to reap the killed); True if gone."""
        try:
            self.path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False


def join_in_child(procs: str) -> None:
    """In the bot's child process before exec: move itself into its cgroup (best effort: a bot
    outside its cgroup is still found by its process group, session, parent links and token)."""
    try:
        with open(procs, "w") as handle:
            handle.write("0")
    except OSError:
        pass
