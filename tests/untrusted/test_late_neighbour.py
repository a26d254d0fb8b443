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
from pathlib import Path

import trio

from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
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
    bots = [await BotProcess.start(spec, time_control=CONTROL, log_dir=tmp_path) for spec in specs]
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
