"""CPU affinity (arena.referee.cores, SPEC 7 and 10.4): a referee and its bots on one core.

Real threads and processes: ``pinned`` sets every thread of the process, the bots started
meanwhile inherit the core, and the process gets its cores back afterwards; a bot started on
every core is pinned later with its threads and children; a tournament gives its processes
different cores (its bots too, by their first request), or none with ``--no-affinity``; a bot pinned beside its referee is
charged all of its thinking (its time starts before the request is written). Nothing is timed
but the last, which asserts only a lower bound the bot itself guarantees.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from pathlib import Path

import pytest

from arena.games import find_game
from arena.referee import cores
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess, related_pids
from tests.tournament.test_tournament_cli import PATIENCE_S, arena

ROOT = Path(__file__).resolve().parents[2]
FIRST_LEGAL = ROOT / "tests" / "bots" / "first_legal_bot.py"
CONTROL = TimeControl(decision_ms=60000, margin_ms=1000, startup_ms=60000)
MANY_CORES = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="needs a process allowed on two cores or more"
)


def test_spread_cores_gives_each_process_a_core_per_match_in_turn(monkeypatch):
    monkeypatch.setattr(cores, "allowed_cores", lambda: [0, 2, 5])
    monkeypatch.setattr(cores, "current_core", lambda: 2)
    assert cores.spread_cores([1]) == [{2}]
    assert cores.spread_cores([1, 1, 1, 1]) == [{2}, {5}, {0}, {2}]
    assert cores.spread_cores([2, 1]) == [{2, 5}, {0}]
    # A process whose matches could use every core is not pinned.
    assert cores.spread_cores([3, 1, 4]) == [None, {2}, None]
    monkeypatch.setattr(cores, "current_core", lambda: 7)  # not allowed (any more): the first
    assert cores.spread_cores([1, 1]) == [{0}, {2}]
    monkeypatch.setattr(cores, "allowed_cores", lambda: [])
    assert cores.spread_cores([1, 1]) == [None, None]


def test_current_core_is_an_allowed_core():
    assert cores.current_core() in os.sched_getaffinity(0)


@MANY_CORES
async def test_pinned_sets_every_thread_and_the_bots_then_gives_the_cores_back(tmp_path):
    before = os.sched_getaffinity(0)
    core = max(before)
    started, stop = threading.Event(), threading.Event()
    ids: list[int] = []

    def waiting_thread() -> None:
        ids.append(threading.get_native_id())
        started.set()
        stop.wait()

    thread = threading.Thread(target=waiting_thread)
    thread.start()  # before the pin: pinned() must find it
    started.wait()
    try:
        with cores.pinned({core}) as done:
            assert done
            assert os.sched_getaffinity(0) == {core}
            assert os.sched_getaffinity(ids[0]) == {core}
            bot = await BotProcess.start(
                BotSpec("first", (sys.executable, str(FIRST_LEGAL))),
                time_control=CONTROL,
                log_dir=tmp_path / "logs",
            )
            try:
                assert os.sched_getaffinity(bot.transport.pid) == {core}
            finally:
                await bot.close()
        assert os.sched_getaffinity(0) == before
        assert os.sched_getaffinity(ids[0]) == before
    finally:
        stop.set()
        thread.join()


# A bot with a second thread and a child process, both started before it says ready.
FAMILY_BOT = """
import json, subprocess, sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "family"}), flush=True)
    elif message["type"] == "bye":
        break
"""


@MANY_CORES
async def test_a_bot_started_on_every_core_is_pinned_with_its_threads_and_children(tmp_path):
    program = tmp_path / "family_bot.py"
    program.write_text(FAMILY_BOT)
    everywhere = os.sched_getaffinity(0)
    bot = await BotProcess.start(
        BotSpec("family", (sys.executable, str(program))),
        time_control=CONTROL,
        log_dir=tmp_path / "logs",
    )
    try:
        leader = bot.transport.pid
        family = related_pids(leader, bot.transport.token)
        threads = [(pid, int(tid)) for pid in family for tid in os.listdir(f"/proc/{pid}/task")]
        assert len(family) >= 2 and len([t for p, t in threads if p == leader]) >= 2, threads
        assert all(os.sched_getaffinity(tid) == everywhere for _, tid in threads)
        core = max(everywhere)
        bot.pin({core})
        assert all(os.sched_getaffinity(tid) == {core} for _, tid in threads)
    finally:
        await bot.close()


def test_pinned_to_no_core_changes_nothing():
    before = os.sched_getaffinity(0)
    with cores.pinned(None) as done:
        assert not done
        assert os.sched_getaffinity(0) == before


def test_a_core_the_process_may_not_use_is_refused_and_changes_nothing():
    before = os.sched_getaffinity(0)
    with cores.pinned({max(before) + 4096}) as done:
        assert not done
        assert os.sched_getaffinity(0) == before


# A bot that thinks (spins) a fixed time after it has read each request, measured by itself.
SPIN_BOT = """
import json, sys, time
THINK_S = 0.004
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "spinner"}), flush=True)
    elif message["type"] == "request":
        start = time.perf_counter()
        while time.perf_counter() - start < THINK_S:
            pass
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
    elif message["type"] == "bye":
        break
"""


async def test_a_bot_on_its_referees_core_is_charged_all_of_its_thinking(tmp_path):
    """On one core the woken bot may run before the referee's write returns: its time starts
    before the write (SPEC 5), so every decision is charged at least what the bot spent after
    reading the request."""
    program = tmp_path / "spin_bot.py"
    program.write_text(SPIN_BOT)
    with cores.pinned({min(os.sched_getaffinity(0))}):
        bots = [
            await BotProcess.start(
                BotSpec(f"s{seat}", (sys.executable, str(program))),
                time_control=CONTROL,
                log_dir=tmp_path / "logs",
            )
            for seat in range(3)
        ]
        try:
            result = await run_match(
                find_game("aon"), bots, seed=5, match_id="spin", time_control=CONTROL
            )
        finally:
            for bot in bots:
                await bot.close()
    times = [ms for seat in result.decision_ms for ms in seat]
    assert len(times) > 50 and not result.faults
    assert min(times) >= 4.0, sorted(times)[:5]


# A bot that plays the first action and says on its standard error, at its first request, which
# cores it may run on then. It holds that first answer until bots of PROCESSES different
# processes (parent pids, noted in FOLDER) and of two matches have been asked (two bots: while
# one holds its answer its match asks no other), so that every process that plays gets a match,
# and both matches at once start all their bots, however slowly a worker starts or a loaded
# machine lets it warm its bots (a guard of 10 minutes against a hang only).
CORE_REPORT_BOT = """
import json, os, sys, time
folder, processes = sys.argv[1], int(sys.argv[2])
asked = False
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "reporter"}), flush=True)
    elif message["type"] == "request":
        if not asked:
            cores = ",".join(map(str, sorted(os.sched_getaffinity(0))))
            print("cores:" + cores, file=sys.stderr, flush=True)
            asked = True
            with open(os.path.join(folder, str(os.getpid())), "w") as note:
                note.write(str(os.getppid()))
            give_up = time.monotonic() + 600
            while time.monotonic() < give_up:
                names = os.listdir(folder)
                parents = {open(os.path.join(folder, n)).read() for n in names}
                if len(parents) >= processes and len(names) >= 2:
                    break
                time.sleep(0.05)
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
    elif message["type"] == "bye":
        break
"""


def reported_cores(tmp_path: Path, *options: str, processes: int = 2) -> list[str]:
    """Run a tournament of reporting bots (concurrency 2, in ``processes`` processes that play:
    2 unless ``options`` say otherwise); each bot process's reported cores."""
    program = tmp_path / "core_report_bot.py"
    program.write_text(CORE_REPORT_BOT)
    notes = tmp_path / "asked"
    notes.mkdir()
    bots = "".join(
        f'[[bots]]\nname = "c{i}"\n'
        f'argv = ["{sys.executable}", "{program}", "{notes}", "{processes}"]\n'
        'sandbox = "none"\n'  # (it writes its notes where the test reads them)
        for i in range(3)
    )
    path = tmp_path / "cores.toml"
    path.write_text(
        f'name = "cores"\nconcurrency = 2\nworkers = 2\noutput = "{tmp_path / "out"}"\n\n'
        f"[time]\ndecision_ms = 60000\n\n"
        f'[[games]]\ngame = "aon"\nplayers = 3\ndeals = 4\n\n{bots}'
    )
    # (Dask workers keep their bots' logs in their bot cache, TRICK_ARENA_CACHE: SPEC 10.8.)
    cache = tmp_path / "cache"
    process = arena(
        "tournament", path, *options, env={**os.environ, "TRICK_ARENA_CACHE": str(cache)}
    )
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 0, err
    logs = sorted((tmp_path / "out" / "logs").glob("*.stderr.log"))
    logs += sorted((cache / "logs").glob("*/*.stderr.log"))
    assert len(logs) == 6, logs  # every bot twice: once per process, or per match at once
    return [
        line.split(":", 1)[1]
        for log in logs
        for line in log.read_text().splitlines()
        if line.startswith("cores:")
    ]


@MANY_CORES
@pytest.mark.parametrize(
    "options",
    [
        (),
        pytest.param(
            ("--cluster", "local:2"),
            marks=pytest.mark.skipif(
                importlib.util.find_spec("distributed") is None,
                reason="Dask (the cluster extra) is not installed",
            ),
        ),
    ],
    ids=["worker processes", "local Dask cluster"],
)
def test_each_process_of_a_tournament_runs_with_its_bots_on_a_core_of_its_own(tmp_path, options):
    seen = reported_cores(tmp_path, *options)
    assert len(seen) == 6 and all("," not in each for each in seen), seen
    assert len(set(seen)) == 2  # two processes, two cores, three bots on each


@MANY_CORES
def test_without_affinity_every_bot_may_run_anywhere(tmp_path):
    everywhere = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    assert reported_cores(tmp_path, "--no-affinity") == [everywhere] * 6


@pytest.mark.skipif(len(os.sched_getaffinity(0)) != 2, reason="needs exactly two allowed cores")
def test_one_process_playing_a_match_per_core_is_not_held_to_one(tmp_path):
    """concurrency 2 in one process on two cores: its matches may use both, so nothing is
    pinned (each bot process reports both cores)."""
    seen = reported_cores(tmp_path, "--workers", "1", processes=1)  # 2 matches at once: 2 each
    assert seen == [",".join(map(str, sorted(os.sched_getaffinity(0))))] * 6
