"""The zoo's catalogue: every hostile bot in this folder, how to start it, and what it must cost it.

Shared by tests/untrusted/test_zoo.py and benchmarks/zoo.py. Each entry names the fault kinds the referee
must record against that bot (empty: it must play its matches without a fault, however rude it is
to its own process) and whether it must fail to start.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from arena.bots import BotSpec
from arena.results import FaultKind

BOTS_DIR = Path(__file__).resolve().parent
# Each bot process carries this variable (value: a token per run), so a scan of /proc finds every
# process a bot left behind, even one that left its process group and session.
MARK = "TRICK_ARENA_ZOO_MARK"


@dataclass(frozen=True)
class ZooBot:
    name: str
    script: str
    args: tuple[str, ...] = ()
    faults: frozenset[FaultKind] = frozenset()   # the only kinds allowed, and at least one of them
    fails_to_start: bool = False
    forfeits: bool = False                       # the referee must give up on it within the match
    memory_mb: int | None = None

    def spec(self, mark: str, **overrides) -> BotSpec:
        return BotSpec(name=self.name, argv=(sys.executable, str(BOTS_DIR / self.script), *self.args),
                       cwd=str(BOTS_DIR), env=((MARK, mark),), memory_mb=self.memory_mb, **overrides)


def kinds(*names: FaultKind) -> frozenset[FaultKind]:
    return frozenset(names)


HONEST = (
    ZooBot("random", "random_bot.py", ("7",)),
    ZooBot("first-legal", "first_legal_bot.py"),
)

ZOO = (
    ZooBot("mute", "mute_bot.py", faults=kinds(FaultKind.TIMEOUT), forfeits=True),
    ZooBot("deaf", "mute_bot.py", ("deaf",), faults=kinds(FaultKind.TIMEOUT), forfeits=True),
    ZooBot("late", "late_bot.py", faults=kinds(FaultKind.TIMEOUT)),
    ZooBot("crash", "crash_bot.py", faults=kinds(FaultKind.CRASH), forfeits=True),
    ZooBot("garbage", "garbage_bot.py", faults=kinds(FaultKind.MALFORMED), forfeits=True),
    # The rest of an endless line is skipped until the deadline: a timeout after the first fault.
    ZooBot("stdout-flood", "stdout_flood_bot.py", faults=kinds(FaultKind.MALFORMED, FaultKind.TIMEOUT),
           forfeits=True),
    ZooBot("stderr-flood", "stderr_flood_bot.py"),
    ZooBot("illegal", "illegal_bot.py", faults=kinds(FaultKind.ILLEGAL), forfeits=True),
    ZooBot("stale-id", "wrong_id_bot.py", ("stale",)),   # stale answers are skipped: no fault
    ZooBot("future-id", "wrong_id_bot.py", ("future",), faults=kinds(FaultKind.MALFORMED),
           forfeits=True),
    ZooBot("forking", "forking_bot.py"),
    ZooBot("escaping-fork", "forking_bot.py", ("escape",)),
    ZooBot("daemonizing-fork", "forking_bot.py", ("daemon",)),
    ZooBot("memory-hog", "memory_hog_bot.py", faults=kinds(FaultKind.CRASH), forfeits=True,
           memory_mb=256),
    ZooBot("sigterm-ignoring", "sigterm_ignoring_bot.py"),
    ZooBot("closed-stdout", "closed_stdout_bot.py", faults=kinds(FaultKind.CRASH), forfeits=True),
    ZooBot("exit-at-once", "exit_at_once_bot.py", faults=kinds(FaultKind.STARTUP),
           fails_to_start=True),
    ZooBot("enormous-json", "enormous_json_bot.py", faults=kinds(FaultKind.MALFORMED), forfeits=True),
)


def leftover_processes(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process carrying ``MARK=mark`` (zombies are dead)."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat[stat.rindex(")") + 2] == "Z":
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue   # gone meanwhile, or not ours
        found.append((int(entry.name), command.strip()))
    return found


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")
