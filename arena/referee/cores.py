"""CPU affinity: a referee and the bots of its matches on one core (SPEC.md 7 and 10.4).

A referee and the bot it asks take turns: the referee writes a request and waits, the bot
answers and waits. On different cores every turn wakes the other core: on a virtual machine
that is an inter-processor interrupt and a halted virtual CPU brought back, both through the
hypervisor, and each side comes back to cold caches. On one core the same exchange is a local
wake-up and a switch. Measured on this project's 2-vCPU machine on 2026-12-03
(benchmarks/referee_cpu.py, benchmarks/limit.py, the same code side by side): the referee's CPU
per decision with C bots 96-105 us -> 39-44 us, and decisions per second 2.3-3.4k -> 19-23k. So each process that plays matches pins itself, its
threads and (by inheritance) every bot it starts to one core; processes that play side by side
get different cores. Nothing here changes what a match is: only where it runs.

Pinning is skipped (and :func:`pinned` says so) where the system cannot
do it (no ``os.sched_setaffinity``) or refuses the core.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


def allowed_cores() -> list[int]:
    """The cores this process may run on (an outer ``taskset`` or cpuset is respected)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


def current_core() -> int | None:
    """The core this process last ran on (field 39 of /proc/self/stat), None where unknown."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            text = stat.read()
        # The command name (field 2) may hold spaces and parentheses: count from its end.
        return int(text[text.rindex(b")") + 2 :].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def spread_cores(count: int) -> list[int]:
    """A core for each of ``count`` processes that play side by side: the allowed cores in
    turn, starting from the one this process runs on (the kernel placed it on a quiet one, so
    two tournaments started on one machine tend to start on different cores). Empty where
    the allowed cores are unknown."""
    cores = allowed_cores()
    if not cores:
        return []
    here = current_core()
    start = cores.index(here) if here in cores else 0
    return [cores[(start + k) % len(cores)] for k in range(count)]


def _set_every_thread(cores: set[int]) -> bool:
    """Run every thread of this process (and what they start from now on) on ``cores``."""
    setter = getattr(os, "sched_setaffinity", None)
    if setter is None:
        return False
    try:
        setter(0, cores)  # the calling thread first: a refused core changes nothing
    except OSError:
        return False
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = []
    for tid in threads:
        try:
            # A thread's mask is its own: the others (e.g. the bot spawner, which forks every
            # bot) are set one by one; threads started later inherit the mask of their creator.
            setter(tid, cores)
        except OSError:
            pass  # it ended meanwhile
    return True


@contextmanager
def pinned(core: int | None) -> Iterator[bool]:
    """This process, its threads and every process it starts meanwhile (bots) on ``core`` only,
    for the block; then the cores it had before again (a test or a library caller keeps its
    process as it was). Yields whether it is pinned: False for ``None`` or where the system
    cannot or will not."""
    before = set(allowed_cores())
    done = core is not None and bool(before) and _set_every_thread({core})
    try:
        yield done
    finally:
        if done:
            _set_every_thread(before)


def pin_child(pid: int, core: int) -> bool:
    """Run the process ``pid`` (just started, one thread) on ``core`` only."""
    try:
        os.sched_setaffinity(pid, {core})
    except (AttributeError, OSError):
        return False
    return True
