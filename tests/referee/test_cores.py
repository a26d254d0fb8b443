"""CPU affinity (arena.referee.cores, SPEC 7 and 10.4): a referee and its bots on one core.

Real threads and processes: ``pinned`` sets every thread of the process, the bots started
meanwhile inherit the core, and the process gets its cores back afterwards; a tournament gives
its processes different cores, or none with ``--no-affinity``; a bot pinned beside its referee is
charged all of its thinking (its time starts before the request is written). Nothing is timed
but the last, which asserts only a lower bound the bot itself guarantees.
"""

from __future__ import annotations

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
from arena.referee.process import BotProcess
from tests.tournament.test_tournament_cli import PATIENCE_S, arena

ROOT = Path(__file__).resolve().parents[2]
FIRST_LEGAL = ROOT / "tests" / "bots" / "first_legal_bot.py"
CONTROL = TimeControl(decision_ms=60000, margin_ms=1000, startup_ms=60000)
MANY_CORES = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="needs a process allowed on two cores or more"
)


def test_spread_cores_takes_the_allowed_cores_in_turn_from_the_current_one(monkeypatch):
    monkeypatch.setattr(cores, "allowed_cores", lambda: [0, 2, 5])
    monkeypatch.setattr(cores, "current_core", lambda: 2)
    assert cores.spread_cores(1) == [2]
    assert cores.spread_cores(4) == [2, 5, 0, 2]
    monkeypatch.setattr(cores, "current_core", lambda: 7)  # not allowed (any more): the first
    assert cores.spread_cores(2) == [0, 2]
    monkeypatch.setattr(cores, "allowed_cores", lambda: [])
    assert cores.spread_cores(3) == []


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
        with cores.pinned(core) as done:
            assert done
            assert os.sched_getaffinity(0) == {core}
            assert os.sched_getaffinity(ids[0]) == {core}
            bot = await BotProcess.start(
                BotSpec("first", (sys.executable, str(FIRST_LEGAL))),
                time_control=CONTROL,
                log_dir=tmp_path,
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


def test_pinned_to_no_core_changes_nothing():
    before = os.sched_getaffinity(0)
    with cores.pinned(None) as done:
        assert not done
        assert os.sched_getaffinity(0) == before


def test_a_core_the_process_may_not_use_is_refused_and_changes_nothing():
    before = os.sched_getaffinity(0)
    with cores.pinned(max(before) + 4096) as done:
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
    with cores.pinned(min(os.sched_getaffinity(0))):
        bots = [
            await BotProcess.start(
                BotSpec(f"s{seat}", (sys.executable, str(program))),
                time_control=CONTROL,
                log_dir=tmp_path,
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


# A bot that says on its standard error which cores it may run on, then plays the first action.
CORE_REPORT_BOT = """
import json, os, sys
print("cores:" + ",".join(map(str, sorted(os.sched_getaffinity(0)))), file=sys.stderr, flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "reporter"}), flush=True)
    elif message["type"] == "request":
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
    elif message["type"] == "bye":
        break
"""


def reported_cores(tmp_path: Path, *options: str) -> list[str]:
    """Run a 2-worker tournament of reporting bots; each bot process's reported cores."""
    program = tmp_path / "core_report_bot.py"
    program.write_text(CORE_REPORT_BOT)
    bots = "".join(
        f'[[bots]]\nname = "c{i}"\nargv = ["{sys.executable}", "{program}"]\n' for i in range(3)
    )
    path = tmp_path / "cores.toml"
    path.write_text(
        f'name = "cores"\nconcurrency = 2\nworkers = 2\noutput = "{tmp_path / "out"}"\n\n'
        f'[[games]]\ngame = "aon"\nplayers = 3\ndeals = 2\n\n{bots}'
    )
    process = arena("tournament", path, *options)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 0, err
    logs = sorted((tmp_path / "out" / "logs").glob("*.stderr.log"))
    assert len(logs) == 6, logs  # each of the 2 processes that play starts every bot once
    return [
        line.split(":", 1)[1]
        for log in logs
        for line in log.read_text().splitlines()
        if line.startswith("cores:")
    ]


@MANY_CORES
def test_each_process_of_a_tournament_runs_with_its_bots_on_a_core_of_its_own(tmp_path):
    seen = reported_cores(tmp_path)
    assert len(seen) == 6 and all("," not in each for each in seen), seen
    assert len(set(seen)) == 2  # two processes, two cores, three bots on each


@MANY_CORES
def test_without_affinity_every_bot_may_run_anywhere(tmp_path):
    everywhere = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    assert reported_cores(tmp_path, "--no-affinity") == [everywhere] * 6
