"""Real processes: a bot that is late by a fraction of a millisecond costs its neighbours nothing.

Each match seats a bot answering every request 0.1, 0.5, 1 or 5 ms after its deadline beside two
honest C bots (the matches run side by side, so the referee is busy when the late lines come).
What load cannot change is asserted: the honest seats have no fault at all, the late seat only
timeouts, and every decision in the record is one request, its replies, at most one fault and one
action. The margin is wide so an honest C bot (which answers in microseconds) is never late on a
loaded machine; the late bot's lateness is measured from its own deadline, so the race the test is
about (its line read in the pass that expires the deadline) does not depend on the margin.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
import trio

import arena.referee.process as bot_process
from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.cgroups import BotCgroup, cgroup_problem
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess, process_running
from arena.referee.record import read_record
from arena.referee.results import FaultKind
from tests.referee.decisions import decision_problems
from tests.sample_bot_specs import sample_bot

BOTS = Path(__file__).resolve().parent.parent / "bots"
AON = find_game("alles-oder-nichts")
CONTROL = TimeControl(decision_ms=20, margin_ms=250, startup_ms=15000)
LATENESS_MS = (0.1, 0.5, 1.0, 5.0)


async def play_late_match(late_ms: float, tmp_path: Path, results: dict) -> None:
    late = BotSpec(
        "late", (sys.executable, str(BOTS / "just_late_bot.py"), str(late_ms)), cwd=str(BOTS)
    )
    specs = [late, sample_bot("c", tmp_path, "c1", seed=1), sample_bot("c", tmp_path, "c2", seed=2)]
    bots = [
        await BotProcess.start(spec, time_control=CONTROL, log_dir=tmp_path / "logs")
        for spec in specs
    ]
    record = tmp_path / f"late-{late_ms}.jsonl"
    try:
        results[late_ms] = await run_match(
            AON,
            bots,
            seed=1,
            match_id=f"late-{late_ms}",
            time_control=CONTROL,
            max_faults=1000,  # it keeps playing (late) all match long
            record_path=record,
        )
    finally:
        for bot in bots:
            await bot.close()
    results[late_ms, "record"] = read_record(record)


async def test_a_slightly_late_bot_costs_honest_c_bots_nothing(tmp_path):
    sample_bot("c", tmp_path)  # build once (or skip without a compiler) before the matches
    results: dict = {}
    async with trio.open_nursery() as nursery:
        for late_ms in LATENESS_MS:
            nursery.start_soon(play_late_match, late_ms, tmp_path, results)
    for late_ms in LATENESS_MS:
        result = results[late_ms]
        honest = [f for f in result.faults if f.seat != 0]
        assert honest == [], f"late by {late_ms} ms: honest seats charged: {honest}"
        assert {f.kind for f in result.faults} <= {FaultKind.TIMEOUT}
        assert result.faults, f"late by {late_ms} ms and never charged"
        assert result.forfeited == ()
        assert decision_problems(results[late_ms, "record"]) == []


async def test_closing_a_bot_holds_up_no_other_match(tmp_path, monkeypatch):
    """Why honest seats were charged timeouts beside a late bot (issue 35): the late bot forfeits
    every match, so its process is closed after each, and closing a bot without a cgroup looks
    for its processes among every process of the machine (/proc: ~18 ms on this machine with
    140 processes, more on a busy tournament host), in the referee's own loop, where every
    other match of that process waited, its bots' replies charged the wait. The look now runs
    in a thread. Here it is made to last until another task of the referee's loop has run
    (or 10 s: then it held the loop)."""
    monkeypatch.setattr(BotCgroup, "create", classmethod(lambda cls, *limits: None))
    entered, released = threading.Event(), threading.Event()
    held = []
    real = bot_process.kill_everything

    def slow_look(leader, token=None):
        entered.set()
        if not released.wait(10):
            held.append(leader)
        real(leader, token)

    monkeypatch.setattr(bot_process, "kill_everything", slow_look)
    bot = await BotProcess.start(
        BotSpec("r", (sys.executable, str(BOTS / "random_bot.py"))),
        time_control=CONTROL,
        log_dir=tmp_path / "logs",
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.close)
        with trio.fail_after(60):  # (the loop runs: the close waits for the bot's exit first)
            while not entered.is_set():
                await trio.sleep(0.01)
        released.set()  # another task of the loop ran while the look went on
    assert held == [], "closing the bot held up the referee's loop"
    assert not process_running(bot.transport.pid)


async def test_a_bot_in_a_cgroup_is_closed_without_a_look_at_every_process(tmp_path, monkeypatch):
    """Its cgroup holds every process it started: killed at once, /proc is not looked at."""
    if cgroup_problem():
        pytest.skip(cgroup_problem())
    looked = []
    monkeypatch.setattr(bot_process, "kill_everything", lambda *args: looked.append(args))
    bot = await BotProcess.start(
        BotSpec("r", (sys.executable, str(BOTS / "random_bot.py"))),
        time_control=CONTROL,
        log_dir=tmp_path / "logs",
    )
    await bot.close()
    assert looked == [] and not process_running(bot.transport.pid)
