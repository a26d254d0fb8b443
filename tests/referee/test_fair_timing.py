"""No seat is charged for another's lateness, and each decision has exactly one outcome.

Fake bots under trio's mock clock (autojump). A late bot answers at a chosen offset from its own
deadline and then moves the clock on by ``jump`` before the referee runs again: that is the
referee reading the line in the same scheduler pass in which the deadline expires (a busy
machine). Hypothesis chooses the offsets and jumps; the honest seats must have no fault at all,
the late seat exactly the timeouts its own replies earned, and the record one request, its
replies, at most one fault and one action per decision.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import trio
import trio.testing
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arena.games import find_game
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import read_record
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, connect_fake
from tests.referee.decisions import decision_problems

AON = find_game("alles-oder-nichts")
CONTROL = TimeControl(decision_ms=100, margin_ms=5)


class ScriptedBot(FakeBot):
    """Its n-th request (from 0) is answered by ``script[n]``; past the script, at once.

    A step is ("reply", offset_ms, jump_ms): answer ``offset_ms`` after its deadline (time left plus
    margin; negative is early), then move the clock on by ``jump_ms`` before anyone runs again;
    ("silent",): never answer; ("exit", offset_ms, jump_ms): exit at that moment instead.
    """

    def __init__(self, name, script):
        super().__init__(name)
        self.script = list(script)
        self.asked = 0

    async def on_request(self, request):
        step = self.script[self.asked] if self.asked < len(self.script) else ("reply", None, 0)
        self.asked += 1
        if step[0] == "silent":
            return
        offset_ms, jump_ms = step[1], step[2]
        if offset_ms is not None:
            await trio.sleep((request["time_left_ms"] + CONTROL.margin_ms + offset_ms) / 1000)
        if step[0] == "exit":
            self.exit(1)
        else:
            # Without yielding (a plain send is a checkpoint): the jump must come before the
            # referee runs again, as a slow scheduler pass would.
            line = json.dumps({"type": "action", "id": request["id"], "index": 0}).encode()
            self.transport.from_bot_send.send_nowait(line + b"\n")
        if jump_ms:
            trio.lowlevel.current_clock().jump(jump_ms / 1000)


def run_with(bots, record: Path, max_faults: int = 100):
    async def main():
        async with trio.open_nursery() as nursery:
            procs = [await connect_fake(nursery, bot, time_control=CONTROL) for bot in bots]
            try:
                return await run_match(
                    AON,
                    procs,
                    seed=1,
                    match_id="m",
                    time_control=CONTROL,
                    max_faults=max_faults,
                    record_path=record,
                )
            finally:
                for proc in procs:
                    await proc.close()

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def faults_by_seat(result):
    seats: dict[int, list] = {}
    for fault in result.faults:
        seats.setdefault(fault.seat, []).append(fault)
    return seats


steps = st.tuples(
    st.floats(min_value=-3, max_value=3, allow_nan=False),
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 3.0]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seat=st.integers(0, 2), timings=st.lists(steps, min_size=1, max_size=8))
def test_a_late_line_costs_only_its_own_seat(seat, timings):
    for offset, jump in timings:
        assume(abs(offset + jump) > 0.01)  # exactly on the deadline is a float coin toss
    script = [("reply", offset, jump) for offset, jump in timings]
    bots = [FakeBot(f"honest{i}") for i in range(3)]
    bots[seat] = ScriptedBot("late", script)
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "m.jsonl"
        result = run_with(bots, record)
        entries = read_record(record)
    assert decision_problems(entries) == []
    charged = faults_by_seat(result)
    assert set(charged) <= {seat}, f"an honest seat was charged: {result.faults}"
    # The late seat: only timeouts, each earned. Until its first late step each step starts when
    # its request is written, so it is late exactly when offset + jump > 0; after one the bot may
    # read its next requests late (its own doing), so those may be late either way.
    kinds = [f.kind for f in charged.get(seat, [])]
    assert set(kinds) <= {FaultKind.TIMEOUT}
    first_late = next((n for n, (o, j) in enumerate(timings) if o + j > 0), len(timings))
    surely_late = 1 if first_late < len(timings) else 0
    assert surely_late <= len(kinds) <= len(timings) - first_late
    limit = CONTROL.decision_ms + CONTROL.margin_ms
    for entry in entries:
        if entry["type"] == "reply" and entry["verdict"] in ("ok", "late"):
            assert (entry["verdict"] == "late") == (entry["ms"] > limit), entry
    assert result.forfeited == ()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seat=st.integers(0, 2),
    silent=st.integers(0, 2),
    offset=st.floats(min_value=-3, max_value=3, allow_nan=False),
    jump=st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0]),
)
def test_a_bot_that_exits_at_its_deadline_is_charged_once_per_decision(seat, silent, offset, jump):
    """It goes silent for ``silent`` requests (timeouts), then exits about when its next request's
    deadline passes: every decision still has one outcome, the honest seats none."""
    script = [("silent",)] * silent + [("exit", offset, jump)]
    bots = [FakeBot(f"honest{i}") for i in range(3)]
    bots[seat] = ScriptedBot("quitter", script)
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "m.jsonl"
        result = run_with(bots, record, max_faults=10)
        entries = read_record(record)
    assert decision_problems(entries) == []
    charged = faults_by_seat(result)
    assert set(charged) == {seat}, f"faults: {result.faults}"
    kinds = [f.kind for f in charged[seat]]
    # Each silent request is a timeout; the exit is a crash, unless the deadline came first,
    # which is a timeout and the crash is found at the next request.
    assert kinds[:silent] == [FaultKind.TIMEOUT] * silent
    assert kinds[-1] == FaultKind.CRASH
    assert len(kinds) in (silent + 1, silent + 2)
    ids = [f.request_id for f in charged[seat]]
    assert len(set(ids)) == len(ids), f"two faults for one request: {result.faults}"
    assert result.forfeited == (seat,)


async def test_the_reported_case_late_by_half_a_millisecond(autojump_clock, tmp_path):
    """The issue's case: the reply lands 0.5 ms after the deadline, and the referee sees it in the
    pass that expires the deadline: before the fix, the next seat was charged a timeout."""
    bots = [ScriptedBot("late", [("reply", 0.5, 1.0)] * 20), FakeBot("b"), FakeBot("c")]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot, time_control=CONTROL) for bot in bots]
        result = await run_match(
            AON,
            procs,
            seed=1,
            match_id="m",
            time_control=CONTROL,
            record_path=tmp_path / "m.jsonl",
        )
        for proc in procs:
            await proc.close()
    assert {f.seat for f in result.faults} == {0}
    assert result.forfeited == (0,)  # three timeouts of its own
    assert decision_problems(read_record(tmp_path / "m.jsonl")) == []


async def test_the_referees_latency_is_in_the_result_and_the_record(autojump_clock, tmp_path):
    bots = [FakeBot("a"), FakeBot("b"), FakeBot("c")]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot, time_control=CONTROL) for bot in bots]
        result = await run_match(
            AON, procs, seed=2, match_id="m", time_control=CONTROL, record_path=tmp_path / "m"
        )
        for proc in procs:
            await proc.close()
    latency = result.referee_latency
    assert 0 < latency["p50_ms"] <= latency["p99_ms"] <= latency["max_ms"]
    assert latency["max_ms"] == round(max(result.referee_us) / 1000, 3)
    final = read_record(tmp_path / "m")[-1]
    assert final["type"] == "result"
    assert final["referee_ms"] == {k: latency[k] for k in ("p50_ms", "p99_ms", "max_ms")}
    assert final["load_per_core"] == result.load_per_core
