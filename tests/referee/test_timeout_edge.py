"""The timeout edge: the referee held up past a request's write deadline, on a busy machine.

A request that does not fit in the bot's pipe at once (every request to an in-memory fake bot)
is written under a deadline counted from before the write (a bot that does not read is timed
too), and the bot's own time starts once the write is done (SPEC.md section 5). When the referee
process is descheduled between taking the request's time and completing the write for longer
than the limit, that deadline expires in the very scheduler pass that completes the write. The
referee used to call a timeout at its next wait, a fraction of a millisecond into the bot's own
time, and the bot's answer, read as stale while its next request waited, then came "0.4 ms after
request N, before its decision ended": the record check refused the record. Now a timeout is
called only once the request's own time is up, which is the rule the check derives.

Built exactly under the autojump clock: the transport jumps the mock clock forward inside the
write of one request, before handing its bytes over (what a descheduled referee sees).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from arena.referee.clock import TimeControl
from arena.referee.match import RECORDED_STALE_REPLIES, run_match
from arena.referee.record import ReplayError, read_record, record_bytes, replay_record
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, FakeTransport, connect_fake
from tests.referee.test_referee_fakes import AON

CONTROL = TimeControl(decision_ms=100, margin_ms=50)
LIMIT_MS = CONTROL.decision_ms + CONTROL.margin_ms
HELD_AT = 3  # the edge bot's request whose write is held up
HELD_S = 0.2  # how long: past the write's deadline (LIMIT_MS)
# The match of the first test below with the answer at 0.4 ms, as the referee before the fix
# (main at cfd01a6) recorded it in a compact record: request 3's timeout called at once.
OLD_RECORD = Path(__file__).parent / "records_early_timeout" / "early_timeout.jsonl.gz"
RECORDS = ["m.jsonl", "m.jsonl.gz"]  # a plain record and a compact one


class HeldUpTransport(FakeTransport):
    """Holds the referee up for HELD_S inside the write of request number ``held_at`` (counted
    from 1), before its bytes reach the bot."""

    def __init__(self, held_at: int) -> None:
        super().__init__()
        self.held_at = held_at
        self.requests = 0

    async def send_all(self, data: bytes) -> None:
        if b'"type":"request"' in data:
            self.requests += 1
            if self.requests == self.held_at:
                trio.lowlevel.current_clock().jump(HELD_S)  # type: ignore[attr-defined]
        await super().send_all(data)


class EdgeBot(FakeBot):
    """Answers request HELD_AT after ``answer_ms``, every other one at once."""

    def __init__(self, answer_ms: float) -> None:
        super().__init__("edge")
        self.answer_ms = answer_ms
        self.requests = 0

    async def on_request(self, request):
        self.requests += 1
        if self.requests == HELD_AT:
            await trio.sleep(self.answer_ms / 1000)
        await super().on_request(request)


async def play_held(answer_ms: float, record_path, edge: FakeBot | None = None):
    """One match of three fake bots, seat 0 ``edge`` (an EdgeBot answering its held request
    after ``answer_ms`` unless given) behind the held-up transport."""
    async with trio.open_nursery() as nursery:
        procs = [
            await connect_fake(
                nursery,
                edge or EdgeBot(answer_ms),
                time_control=CONTROL,
                transport=HeldUpTransport(HELD_AT),
            ),
            await connect_fake(nursery, FakeBot("b"), time_control=CONTROL),
            await connect_fake(nursery, FakeBot("c"), time_control=CONTROL),
        ]
        try:
            return await run_match(
                AON, procs, seed=3, match_id="m", time_control=CONTROL, record_path=record_path
            )
        finally:
            for proc in procs:
                await proc.close()


def seat0_lines(path, request_id):
    """The record's reply and fault lines of seat 0 that name ``request_id``."""
    return [
        entry
        for entry in read_record(path)
        if entry["type"] in ("reply", "fault") and entry["seat"] == 0 and entry["id"] == request_id
    ]


@pytest.mark.parametrize("answer_ms", [0.4, LIMIT_MS - 0.5, LIMIT_MS])
@pytest.mark.parametrize("name", RECORDS)
async def test_a_write_held_past_its_deadline_leaves_the_bot_its_whole_time(
    autojump_clock, tmp_path, answer_ms, name
):
    result = await play_held(answer_ms, tmp_path / name)
    assert result.faults == ()
    assert result.decision_ms[0][HELD_AT - 1] == pytest.approx(answer_ms, abs=1e-6)
    replay = replay_record(tmp_path / name)  # the check agrees
    held = [t for t in replay.times[0] if t.ms is not None and t.ms > 0][0]
    assert (held.ending, held.ms) == ("ok", answer_ms)


@pytest.mark.parametrize("name", RECORDS)
async def test_after_a_held_write_the_timeout_comes_at_the_requests_own_limit(
    autojump_clock, tmp_path, name
):
    """The bot answers 20 ms past its limit: a timeout, called once its own time is up (the
    match's deadlines fire DEADLINE_SLACK_S late), and its answer is stale, timed past it."""
    result = await play_held(LIMIT_MS + 20, tmp_path / name)
    assert [(f.seat, f.kind) for f in result.faults] == [(0, FaultKind.TIMEOUT)]
    held_id = result.faults[0].request_id
    assert result.decision_ms[0][HELD_AT - 1] == pytest.approx(LIMIT_MS + 1, abs=1e-6)
    fault, stale = seat0_lines(tmp_path / name, held_id)
    assert fault["type"] == "fault" and fault["kind"] == "timeout"
    assert (stale["verdict"], stale["pending"]) == ("stale", held_id + 1)
    assert stale["ms"] >= LIMIT_MS
    replay_record(tmp_path / name)


def test_an_old_record_of_an_early_timeout_is_refused_saying_so(tmp_path):
    """A record of the referee before the fix shows the edge: the check names the early timeout
    and why an older arena called it, in the compact record and in its full lines alike."""
    full = tmp_path / "early_timeout.jsonl"
    full.write_bytes(record_bytes(OLD_RECORD))
    for path in (OLD_RECORD, full):
        with pytest.raises(ReplayError) as refused:
            replay_record(path)
        assert str(refused.value) == (
            f"{path} line 54: request 3's timeout was called early: a stale answer to it came "
            "0.4 ms after it, within its 150 ms (SPEC 5: a timeout is called only once that "
            "time is up; an arena before that rule called one early when writing the request "
            "had waited past its deadline on a busy machine)"
        )


async def test_the_same_match_now_checks(autojump_clock, tmp_path):
    """The old record's match played again by this referee: no fault, and the answer that was
    stale is the request's own, 0.4 ms after it."""
    result = await play_held(0.4, tmp_path / "m.jsonl.gz")
    assert result.faults == ()
    old = [
        e
        for e in read_record(OLD_RECORD)
        if e["type"] == "reply" and (e["seat"], e["id"]) == (0, 3)
    ]
    assert [(e["verdict"], e["ms"]) for e in old] == [("stale", 0.4)]
    new = seat0_lines(tmp_path / "m.jsonl.gz", 3)
    assert [(e["verdict"], e["pending"], e["ms"]) for e in new] == [("ok", 3, 0.4)]
    replay_record(tmp_path / "m.jsonl.gz")


class RepeatingBot(FakeBot):
    """Answers request HELD_AT - 1 followed, in the same write, by 7 copies of that answer
    (stale at the next request, read with the held request pending before the early expiry
    is seen); then answers the held request after 0.4 ms, after 3 more copies."""

    def __init__(self) -> None:
        super().__init__("edge")
        self.requests = 0

    async def on_request(self, request):
        self.requests += 1
        answer = b'{"type":"action","id":%d,"index":0}\n'
        if self.requests == HELD_AT - 1:
            self.before = request["id"]
            await self.send(answer % self.before * 8)
        elif self.requests == HELD_AT:
            await trio.sleep(0.0004)
            await self.send(answer % self.before * 3 + answer % request["id"])
        else:
            await super().on_request(request)


async def test_the_stale_lines_kept_count_across_the_early_expiry(autojump_clock, tmp_path):
    """At most RECORDED_STALE_REPLIES stale lines are kept per request, also when its wait went
    on after the early expiry: 5 of the 7 read before it, none of the 3 after."""
    path = tmp_path / "m.jsonl"
    result = await play_held(0.4, path, RepeatingBot())
    assert result.faults == ()
    held = [
        (e["verdict"], e["id"])
        for e in read_record(path)
        if e["type"] == "reply" and e["seat"] == 0 and e["pending"] == HELD_AT
    ]
    assert held == [("stale", HELD_AT - 1)] * RECORDED_STALE_REPLIES + [("ok", HELD_AT)]
    replay_record(path)
