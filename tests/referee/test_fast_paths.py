"""The shortcuts of the referee's per-decision path (benchmarks/limit.py) change no byte and no rule.

- event lines are built from a per-match prefix: byte for byte what the protocol encoder writes;
- the match's cancel scope keeps a deadline from an earlier request when it is at most
  DEADLINE_SLACK_S later than this one's: never early, so a reply just inside the limit is in time,
  and one just outside it is still a timeout;
- ProcessTransport writes and reads the raw pipe fds: a write larger than the pipe waits for the
  bot to read it, and once the transport is closed writes fail and reads see end of file.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import trio

from arena.games import find_game
from arena.referee.clock import TimeControl
from arena.referee.match import DEADLINE_SLACK_S, run_match
from arena.referee.process import ProcessTransport
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, connect_fake
from protocol.codec import encode_line
from protocol.messages import Event

READ_ALL_THEN_COUNT = (
    "import sys; data = sys.stdin.buffer.read(1 << 20); "
    "sys.stdout.write(str(len(data)) + '\\n'); sys.stdout.flush(); "
    "sys.stdin.buffer.read()"
)


async def test_event_lines_are_exactly_what_the_protocol_encoder_writes(autojump_clock):
    bots = [FakeBot(name) for name in "abcd"]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot) for bot in bots]
        await run_match(find_game("aon"), procs, seed=3, match_id='t/\u00e9v"nt 1')
        for proc in procs:
            await proc.close()
    lines = [line for bot in bots for line in bot.raw if json.loads(line)["type"] == "event"]
    assert len(lines) > 100
    for line in lines:
        message = json.loads(line)
        expected = encode_line(Event(match_id=message["match_id"], event=message["event"]))
        assert line + b"\n" == expected


async def test_a_write_larger_than_the_pipe_waits_for_the_reader(tmp_path):
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", READ_ALL_THEN_COUNT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    private = tmp_path / "private"
    private.mkdir()
    transport = ProcessTransport(process, tmp_path / "bot.stderr.log", str(private))
    try:
        with trio.fail_after(30):
            await transport.send_all(b"x" * (1 << 20))  # 16 times a Linux pipe's buffer
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = await transport.receive_some(1024)
                assert chunk, "end of file before the reply"
                reply += chunk
        assert reply == b"1048576\n"
    finally:
        await transport.terminate(1.0)
    with pytest.raises(trio.ClosedResourceError):
        await transport.send_all(b"late\n")
    assert await transport.receive_some(1024) == b""


class ThinksFor(FakeBot):
    """Answers every request after exactly ``seconds`` (virtual time under autojump_clock)."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(name)
        self.seconds = seconds

    async def on_request(self, request):
        await trio.sleep(self.seconds)
        await super().on_request(request)


@pytest.mark.parametrize(
    "offset_s, in_time", [(-DEADLINE_SLACK_S / 4, True), (DEADLINE_SLACK_S / 4, False)]
)
async def test_reused_deadlines_are_never_early(autojump_clock, offset_s, in_time):
    control = TimeControl(decision_ms=100, margin_ms=10)
    limit_s = (control.decision_ms + control.margin_ms) / 1000
    # Quick seats make the referee reuse deadlines set less than DEADLINE_SLACK_S before; the seat
    # before the edge one thinks longer, so reusing its deadline for the edge seat would be early.
    bots = [
        ThinksFor("edge", limit_s + offset_s),
        ThinksFor("b", 0.0002),
        ThinksFor("c", 0.0002),
        ThinksFor("d", DEADLINE_SLACK_S * 1.5),
    ]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot, time_control=control) for bot in bots]
        result = await run_match(
            find_game("aon"), procs, seed=4, match_id="m", max_faults=1000, time_control=control
        )
        for proc in procs:
            await proc.close()
    if in_time:
        assert result.faults == ()
    else:
        assert result.faults and {f.kind for f in result.faults} == {FaultKind.TIMEOUT}
        assert {f.seat for f in result.faults} == {0}
