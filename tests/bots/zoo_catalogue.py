"""The zoo's catalogue: every hostile bot in this folder, how to start it, and what it must cost it.

Shared by tests/untrusted/test_zoo.py and benchmarks/zoo.py. Each entry names the fault kinds the
referee must record against that bot (empty: it must play its matches without a fault, however rude
it is to its own process) and whether it must fail to start. :func:`run_zoo_tournament` plays a
tournament of the zoo and the honest bots; :func:`zoo_match_problems` checks one of its matches.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.record import ReplayError, replay_record
from arena.referee.results import FaultKind, MatchResult
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import Progress, RunSummary, run_tournament
from arena.tournament.schedule import GamePlan, build_schedule
from arena.tournament.store import ResultStore, StoredMatch

BOTS_DIR = Path(__file__).resolve().parent
# Each bot process carries this variable (value: a token per run), so a scan of /proc finds every
# process a bot left behind, even one that left its process group and session.
MARK = "TRICK_ARENA_ZOO_MARK"


@dataclass(frozen=True)
class ZooBot:
    name: str
    script: str
    args: tuple[str, ...] = ()
    faults: frozenset[FaultKind] = frozenset()  # the only kinds allowed, and at least one of them
    required: FaultKind | None = None  # a kind that must be among them in every match
    faults_in_sandbox: frozenset[FaultKind] | None = None  # other kinds when sandboxed
    fails_to_start: bool = False
    forfeits: bool = False  # the referee must give up on it within the match
    memory_mb: int | None = None

    def spec(self, mark: str, **overrides) -> BotSpec:
        argv = (sys.executable, str(BOTS_DIR / self.script), *self.args)
        return BotSpec(
            name=self.name,
            argv=argv,
            cwd=str(BOTS_DIR),
            env=((MARK, mark),),
            memory_mb=self.memory_mb,
            **overrides,
        )


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
    ZooBot(
        "stdout-flood",
        "stdout_flood_bot.py",
        faults=kinds(FaultKind.MALFORMED, FaultKind.TIMEOUT),
        forfeits=True,
    ),
    ZooBot("stderr-flood", "stderr_flood_bot.py"),
    ZooBot("illegal", "illegal_bot.py", faults=kinds(FaultKind.ILLEGAL), forfeits=True),
    ZooBot("stale-id", "wrong_id_bot.py", ("stale",)),  # stale answers are skipped: no fault
    ZooBot("stale-flood", "wrong_id_bot.py", ("flood",)),  # and a flood of them fills no record
    ZooBot(
        "future-id",
        "wrong_id_bot.py",
        ("future",),
        faults=kinds(FaultKind.MALFORMED),
        forfeits=True,
    ),
    ZooBot("forking", "forking_bot.py"),
    ZooBot("escaping-fork", "forking_bot.py", ("escape",)),
    ZooBot("daemonizing-fork", "forking_bot.py", ("daemon",)),
    # Filling 256 MB may outlast a decision on a busy machine: a timeout may come before the crash.
    ZooBot(
        "memory-hog",
        "memory_hog_bot.py",
        faults=kinds(FaultKind.CRASH, FaultKind.TIMEOUT),
        required=FaultKind.CRASH,
        forfeits=True,
        memory_mb=256,
    ),
    ZooBot("sigterm-ignoring", "sigterm_ignoring_bot.py"),
    # In the sandbox bwrap keeps a copy of the bot's output open: no end of file, only silence.
    ZooBot(
        "closed-stdout",
        "closed_stdout_bot.py",
        faults=kinds(FaultKind.CRASH),
        forfeits=True,
        faults_in_sandbox=kinds(FaultKind.TIMEOUT),
    ),
    # It never says ready: in a tournament its seat forfeits at once and the autopilot plays it.
    ZooBot(
        "exit-at-once",
        "exit_at_once_bot.py",
        faults=kinds(FaultKind.STARTUP),
        fails_to_start=True,
        forfeits=True,
    ),
    # Writing (and skipping) 8 MB per answer can outlast a decision on a loaded machine: its own
    # timeout may come among the malformed faults, which it must always earn.
    ZooBot(
        "enormous-json",
        "enormous_json_bot.py",
        faults=kinds(FaultKind.MALFORMED, FaultKind.TIMEOUT),
        required=FaultKind.MALFORMED,
        forfeits=True,
    ),
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
            continue  # gone meanwhile, or not ours
        found.append((int(entry.name), command.strip()))
    return found


async def assert_none_survive(find: Callable[[], list], what: str, wait_s: float = 3.0) -> None:
    """Wait until ``find()`` (a list of pids, or of (pid, command) pairs) is empty, allowing the
    kernel a moment to finish the kills; if it is not within ``wait_s``, kill what is left (so a
    failure leaves nothing running) and fail naming it."""
    with trio.move_on_after(wait_s):
        while find():
            await trio.sleep(0.05)
    survivors = find()
    for entry in survivors:
        os.kill(entry[0] if isinstance(entry, tuple) else entry, signal.SIGKILL)
    assert survivors == [], f"{what}: {survivors}"


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM) in MB."""
    return _status_mb("VmHWM")


def start_measuring_rss() -> float:
    """Reset the peak (VmHWM) to the current resident memory where the kernel allows it (writing 5
    to clear_refs), and return the baseline a later ``peak_rss_mb()`` is to be compared with."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_mb("VmRSS")
    except OSError:
        return peak_rss_mb()


# Short limits keep the zoo quick; the margin is generous so that honest bots on a loaded machine
# are never late (the late bot oversleeps decision + margin + 300 ms on purpose).
ZOO_TIME_CONTROL = TimeControl(decision_ms=200, margin_ms=500, startup_ms=15000)
BY_NAME = {bot.name: bot for bot in (*HONEST, *ZOO)}


def zoo_match_problems(match: StoredMatch | MatchResult, sandboxed: bool = False) -> list[str]:
    """What is wrong with one match of zoo bots (stored or just played): not completed, scores the
    rules do not give, a fault of a kind the catalogue does not expect, a forfeit that should (not)
    be, a fault message that does not name its bot."""
    problems = []
    if isinstance(match, StoredMatch):
        ending = "completed" if match.completed else f"{match.status}: {match.reason}"
    else:
        ending = match.termination
    if ending != "completed":
        return [f"{match.match_id}: not completed: {ending}"]
    if match.record is not None:
        try:
            replayed = replay_record(match.record)  # (a member of a tournament's records file)
        except ReplayError as error:
            problems.append(f"{match.match_id}: the record does not replay: {error}")
        else:
            if tuple(replayed.state.result().scores) != tuple(match.scores):
                problems.append(f"{match.match_id}: scores {match.scores} are not the rules'")
    for seat, name in enumerate(match.bots):
        bot = BY_NAME[name]
        expected = bot.faults_in_sandbox if sandboxed and bot.faults_in_sandbox else bot.faults
        charged = {FaultKind(f.kind) for f in match.faults if f.seat == seat}
        if not charged <= expected:
            problems.append(
                f"{match.match_id}: {name} (seat {seat}) charged {sorted(charged)}, "
                f"expected only {sorted(expected) or 'none'}"
            )
        if expected and not charged:
            problems.append(f"{match.match_id}: {name} (seat {seat}) got away without a fault")
        if bot.required is not None and bot.required not in charged:
            problems.append(
                f"{match.match_id}: {name} (seat {seat}) was not charged "
                f"{bot.required}: {sorted(charged)}"
            )
        if (seat in match.forfeited) != bot.forfeits:
            problems.append(
                f"{match.match_id}: {name} (seat {seat}) forfeited: "
                f"{seat in match.forfeited}, expected {bot.forfeits}"
            )
    problems += [
        f"{match.match_id}: fault message does not name {f.bot}: {f.message}"
        for f in match.faults
        if f.bot != match.bots[f.seat] or f.bot not in f.message
    ]
    return problems


async def run_zoo_tournament(
    output: Path,
    mark: str,
    *,
    tables: int = 20,
    concurrency: int = 2,
    seed: int = 1,
    include: tuple[str, ...] | None = None,
    sandbox: str | None = None,
) -> tuple[RunSummary, list[StoredMatch], float]:
    """Alles oder Nichts for 3 between both honest bots and every zoo bot (or those named in
    ``include``), one deal per table, every bot in ``sandbox``; returns the run summary, the stored
    matches and the wall time in seconds."""
    chosen = list(ZOO) if include is None else [BY_NAME[name] for name in include]
    bots = tuple(bot.spec(mark, sandbox=sandbox) for bot in (*HONEST, *chosen))
    config = TournamentConfig(
        name="zoo",
        seed=seed,
        bots=bots,
        seating="single",
        concurrency=concurrency,
        games=(GamePlan("aon", "alles-oder-nichts", 3, deals=1, max_tables=tables),),
        time_control=ZOO_TIME_CONTROL,
        match_time_limit_s=120,
        output=output,
        results=output / "results.sqlite",
        records=True,
    )
    schedule = build_schedule(config.seed, [bot.name for bot in bots], config.games, config.seating)
    began = time.perf_counter()
    with ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
    ) as store:
        summary = await run_tournament(config, schedule, store, Progress(total=0))
        matches = store.matches(include_aborted=True)
    return summary, matches, time.perf_counter() - began
