"""A bot's processes as /proc shows them: every one of them (its process group, session and
descendants, and any process carrying its token), their CPU time, and killing them all. Used where
a bot has no cgroup (arena/referee/cgroups.py), and to pin a bot's threads."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable

# Every bot process gets this variable with a random value of its own. A process that carries it
# belongs to that bot even when it left the bot's session and its parent died (a daemon): close()
# finds it by this mark. (A process that also clears its environment escapes this; only the
# sandbox's PID namespace catches that one.)
TOKEN_VARIABLE = "ARENA_BOT_TOKEN"


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
        kill_pids(pids)


def kill_pids(pids: Iterable[int]) -> None:
    """SIGKILL each of ``pids`` that is still there."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # gone already, or not ours
            pass
