"""The ordinary decision does not move the match's deadline: its quick read is bounded by the
request's own deadline instead, and the scope's deadline is moved before any wait in trio.

The quick read itself needs trio's system clock (a real poll), so here a bot under the mock clock
stands in for it: its transport writes without waiting (like the pipe) and its ``receive_now``
does what the quick read does with time: it waits (jumps the clock) up to the sooner of the bound
the referee gives and trio's next deadline, rounded down to the millisecond, and gives up at once
under a millisecond. So the referee takes the quick path whenever the reply comes in time for it,
and trio's path (a scope deadline moved, or an earlier request's left in place) otherwise: every
seat must be charged exactly what its own replies earn, every wait must end by its own request's
deadline plus DEADLINE_SLACK_S, and every quick read must be bounded by that same deadline.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import trio
import trio._core._run as trio_run
import trio.testing
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.lines import LineReader
from arena.referee.match import DEADLINE_SLACK_S, run_match
from arena.referee.process import BotProcess
from arena.referee.record import read_record
from arena.referee.results import FaultKind
from tests.referee.decisions import decision_problems

AON = find_game("alles-oder-nichts")
CONTROL = TimeControl(decision_ms=100, margin_ms=5)
LIMIT_S = (CONTROL.decision_ms + CONTROL.margin_ms) / 1000
SLACK = DEADLINE_SLACK_S


def trio_next_deadline() -> float:
    """What the quick read bounds its wait by, besides the bound it is given."""
    return trio_run.GLOBAL_RUN_CONTEXT.runner.deadlines.next_deadline()


class QuickBot:
    """A transport and its bot in one: thinks ``script[n]`` seconds on its n-th request (None:
    never answers; past the script: answers at once), one request after the other."""

    def __init__(self, name: str, script: list[float | None]) -> None:
        self.name = name
        self.script = script
        self.replies: list[tuple[float, bytes]] = []  # (when it is written, the line)
        self.busy_until = 0.0
        self.requests: list[tuple[int, float, float | None]] = []  # id, written at, answered at
        self.bounds: list[tuple[int, float]] = []  # (pending id, until) of each quick read
        self.quick_replies = 0  # replies the quick read took
        self.buffer = b""
        self.status: str | None = None

    # -- the bot
    def take(self, data: bytes) -> None:
        self.buffer += data
        now = trio.current_time()
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            message = json.loads(line)
            if message["type"] == "hello":
                self.replies.append((now, b'{"type":"ready","name":"q","version":"1"}\n'))
            elif message["type"] == "request":
                n = len(self.requests)
                think = self.script[n] if n < len(self.script) else 0.0
                due = None
                if think is not None:
                    due = self.busy_until = max(now, self.busy_until) + think
                    reply = {"type": "action", "id": message["id"], "index": 0}
                    self.replies.append((due, json.dumps(reply).encode() + b"\n"))
                self.requests.append((message["id"], now, due))

    # -- the transport
    def send_nowait(self, data: bytes) -> int:
        self.take(data)
        return len(data)

    async def send_all(self, data: bytes) -> None:
        self.take(data)
        await trio.lowlevel.checkpoint()

    def receive_now(self, max_bytes: int, until: float, task: object = None) -> bytes | None:
        self.bounds.append((self.requests[-1][0], until))
        now = trio.current_time()
        bound = min(until, trio_next_deadline())
        assert bound < math.inf, "a quick read with no deadline at all"
        if bound - now < 0.001:
            return None
        end = now + math.floor((bound - now) * 1000) / 1000
        clock = trio.lowlevel.current_clock()
        if self.replies and self.replies[0][0] <= end:
            due, line = self.replies.pop(0)
            clock.jump(max(0.0, due - now))  # type: ignore[attr-defined]
            self.quick_replies += 1
            return line
        clock.jump(end - now)  # type: ignore[attr-defined]
        return None

    async def receive_some(self, max_bytes: int) -> bytes:
        if not self.replies:
            await trio.sleep_forever()
        due, line = self.replies[0]
        await trio.sleep_until(due)
        self.replies.remove((due, line))
        return line

    async def terminate(self, grace_s: float) -> None:
        self.status = "exited with status 0"

    def exit_status(self) -> str | None:
        return self.status


async def connect(bot: QuickBot) -> BotProcess:
    proc = await BotProcess.connect(BotSpec(bot.name, ("quick",)), bot, time_control=CONTROL)
    proc.send_nowait = bot.send_nowait  # type: ignore[method-assign]  # as ProcessTransport's
    proc.reader = LineReader(bot.receive_some, proc.max_line_bytes, bot.receive_now)
    return proc


def play(scripts: list[list[float | None]], record: Path):
    bots = [QuickBot(f"q{i}", script) for i, script in enumerate(scripts)]

    async def main():
        procs = [await connect(bot) for bot in bots]
        try:
            with trio.fail_after(3600):  # (virtual time) a wait with no deadline fails, not hangs
                return await run_match(
                    AON,
                    procs,
                    seed=3,
                    match_id="m",
                    time_control=CONTROL,
                    max_faults=1000,
                    record_path=record,
                )
        finally:
            for proc in procs:
                await proc.close()

    result = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return bots, result


THINKS = st.sampled_from(
    [0.0, 0.0002, 0.003, LIMIT_S / 2, LIMIT_S - SLACK / 4, LIMIT_S + SLACK / 4, LIMIT_S + 3 * SLACK]
    + [None]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts=st.lists(st.lists(THINKS, max_size=8), min_size=4, max_size=4))
@example(scripts=[[None], [0.0, 0.0], [LIMIT_S - SLACK / 4] * 3, [0.0002] * 4])
@example(scripts=[[LIMIT_S / 2, 0.0], [0.0] * 5, [LIMIT_S - SLACK / 4] * 2, [None, 0.0002]])
def test_each_wait_is_bounded_by_its_own_requests_deadline(scripts):
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "m.jsonl"
        bots, result = play(scripts, record)
        entries = read_record(record)
    assert decision_problems(entries) == []
    assert result.forfeited == ()
    timeouts = {(f.seat, f.request_id) for f in result.faults if f.kind is FaultKind.TIMEOUT}
    assert len(timeouts) == len(result.faults), result.faults
    assert sum(bot.quick_replies for bot in bots) > len(bots)  # the quick path was taken
    for seat, bot in enumerate(bots):
        sent = {request_id: at for request_id, at, _ in bot.requests}
        for request_id, until in bot.bounds:
            # Each quick read waits at most to its own request's deadline (+ slack).
            assert until == sent[request_id] + LIMIT_S + SLACK
        assert len(result.decision_ms[seat]) == len(bot.requests)
        for (request_id, at, due), taken_ms in zip(bot.requests, result.decision_ms[seat]):
            late = due is None or due - at > LIMIT_S
            if due is not None and abs(due - at - LIMIT_S) < 1e-9:
                continue  # exactly on the deadline: a float coin toss
            assert ((seat, request_id) in timeouts) == late, (seat, request_id, at, due)
            if late:
                # Ended after its own deadline and at most the slack later, never on another's.
                assert LIMIT_S * 1000 <= taken_ms <= (LIMIT_S + SLACK) * 1000 + 1e-6
            else:
                assert math.isclose(taken_ms, (due - at) * 1000, abs_tol=1e-6)
