"""Nothing a bot writes can raise in the referee: every line gets one typed verdict.

Hypothesis writes the lines: random bytes, invalid UTF-8, deep nesting, huge numbers, and every
field of ``action`` and ``ready`` with every wrong type. The decoder answers a message or a
msgspec DecodeError/ValidationError and nothing else; as a reply, the line gets one ``reply``
entry and at most one fault for its own seat, and the match completes; as the ``ready`` line, the
bot is ready or fails to start with a BotStartupError naming it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import GAMES, find_game
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotStartupError
from arena.referee.record import read_record
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, connect_fake
from protocol.codec import decode_from_bot, decode_plain_action, stale_action_id
from protocol.messages import Action, Ready
from tests.referee.decisions import decision_problems

AON = find_game("alles-oder-nichts")
CONTROL = TimeControl(decision_ms=100, margin_ms=5)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children)
    ),
    max_leaves=12,
)
field_values = json_values | st.sampled_from(["bid:1", "play:AS", "AS", "", "\u0000", 0, -1, 2**70])


@st.composite
def message_texts(draw) -> bytes:
    """An object with some of the fields of action and ready, each of any type."""
    fields = draw(
        st.dictionaries(
            st.sampled_from(["type", "id", "action", "index", "name", "version", "extra"]),
            field_values,
            max_size=5,
        )
    )
    if draw(st.booleans()):
        fields["type"] = draw(st.sampled_from(["action", "ready", "Action", "request", ""]))
    return json.dumps(fields, allow_nan=True).encode()


def nested(depth: int, opener: bytes) -> bytes:
    closer = b"]" if opener == b"[" else b"}"
    inner = b'{"a":' if opener == b"{" else b"["
    return inner * depth + b"0" + closer * depth


hostile_specials = st.one_of(
    st.integers(1, 100_000).map(lambda n: b"[" * n),
    st.integers(1, 5000).map(
        lambda n: b'{"x":' + b"[" * n + b"]" * n + b',"type":"action","id":1,"index":0}'
    ),
    st.integers(1, 5000).map(lambda n: b'{"type":"ready","name":"a","x":' + nested(n, b"{") + b"}"),
    st.integers(1, 5000).map(lambda n: b'{"type":"action","id":1,"index":' + b"9" * n + b"}"),
    st.integers(1, 5000).map(lambda n: b'{"type":"action","id":' + b"9" * n + b',"index":0}'),
    st.sampled_from(
        [
            b'{"type":"action","id":1e999,"index":0}',
            b'{"type":"action","id":1,"action":"\xff\xfe"}',
            b'{"type":"ready","name":"\\ud800"}',
            b'{"type":"ready","name":"\xed\xa0\x80"}',
            b'{"type":"action","id":1,"index":0,"index":1}',
            b'{"type":"action","id":1,"action":"a\\"b","action":"c"}',
            b"",
            b"\x00",
            b"null",
            b'"action"',
        ]
    ),
)

lines = (st.binary(max_size=200) | message_texts() | hostile_specials).map(
    lambda line: line.replace(b"\n", b" ")  # one line each
)


@settings(max_examples=200, deadline=None)
@given(line=lines)
def test_decoding_a_bot_line_answers_a_message_or_a_typed_error(line):
    try:
        message = decode_from_bot(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        assert str(error)  # a reason to quote in the fault message
    else:
        assert isinstance(message, (Action, Ready))


@settings(max_examples=300, deadline=None)
@given(line=lines)
def test_the_referees_plain_action_shortcut_takes_only_what_the_full_decoder_takes(line):
    """decode_plain_action (quick_reply's) gives a message only where decode_from_bot gives the
    same one, or fails only on an id or index out of range (which quick_reply compares with the
    request's, so no such line is taken there either)."""
    quick = decode_plain_action(line)
    if quick is None:
        return
    try:
        full = decode_from_bot(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        limit = 1 << 63
        index = quick.index if quick.index is not msgspec.UNSET else 0
        assert not (-limit <= quick.id < limit and -limit <= index < limit)
    else:
        assert full == quick


@settings(max_examples=300, deadline=None)
@given(line=lines, pending=st.integers(-5, 2**64))
def test_a_line_is_told_stale_at_one_decode_only_if_the_full_decoder_finds_it_stale(line, pending):
    """stale_action_id (read_reply's check in a run of stale lines) gives an id exactly when
    decode_from_bot gives an action message with that id below the pending one, for every line
    decode_plain_action takes (any other it leaves to decode_from_bot: None)."""
    found = stale_action_id(line, pending)
    try:
        full = decode_from_bot(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        full = None
    stale = isinstance(full, Action) and full.id < pending
    if decode_plain_action(line) is not None:
        assert found == (full.id if stale else None)
    else:
        assert found is None


def test_a_stale_line_out_of_the_ranges_is_not_stale():
    limit = 1 << 63
    assert stale_action_id(b'{"type":"action","id":3,"index":0}', 4) == 3
    assert stale_action_id(b'{"type":"action","id":-3,"index":99}', 4) == -3
    # Stale too, but more quotes than the plain message has: left to decode_from_bot's check.
    assert stale_action_id(b'{"type":"action","id":3,"action":"x","index":0}', 4) is None
    assert stale_action_id(b'{"type":"action","id":%d,"index":0}' % -limit, 4) == -limit
    for line in (
        b'{"type":"action","id":4,"index":0}',  # the pending id
        b'{"type":"action","id":5,"index":0}',
        b'{"type":"action","id":%d,"index":0}' % (-limit - 1),
        b'{"type":"action","id":3,"index":%d}' % limit,
        b'{"type":"action","id":3,"index":0,"index":1}',
        b'{"type":"action","id":3,"index":0,"x":1}',
        b'{"type":"ready","name":"x"}',
        b"garbage",
    ):
        assert stale_action_id(line, 4) is None, line
    # Not stale below an id out of range either: decode_from_bot rejects the line.
    assert stale_action_id(b'{"type":"action","id":%d,"index":0}' % limit, 2 * limit) is None


def test_the_plain_action_shortcut_takes_the_ordinary_replies_and_no_repeated_key():
    assert decode_plain_action(b'{"type":"action","id":7,"index":2}') == Action(id=7, index=2)
    assert decode_plain_action(b'{"type":"action","id":7,"action":"bid:1"}') == Action(
        id=7, action="bid:1"
    )
    for line in (
        b'{"type":"action","id":1,"index":0,"index":1}',
        b'{"type":"action","id":1,"action":"a","action":"b"}',
        b'{"type":"ready","name":"x"}',
        b'{"type":"action","id":1,"action":"a\\"b"}',
        b"[" * 100_000,
        b"\xff",
    ):
        assert decode_plain_action(line) is None


class OneLineBot(FakeBot):
    """Answers its first request with ``line`` (or what ``line(request)`` makes), after
    ``delay_s``, the rest properly."""

    def __init__(self, name: str, line: bytes | Callable[[dict], bytes], delay_s: float = 0.0):
        super().__init__(name)
        self.line = line
        self.delay_s = delay_s
        self.asked = 0

    async def on_request(self, request):
        self.asked += 1
        if self.asked == 1:
            if self.delay_s:
                await trio.sleep(self.delay_s)
            line = self.line if isinstance(self.line, bytes) else self.line(request)
            await self.send(line + b"\n")
        else:
            await super().on_request(request)


class ReadyLineBot(FakeBot):
    def __init__(self, name: str, line: bytes) -> None:
        super().__init__(name)
        self.line = line

    async def handle(self, message):
        if message["type"] == "hello":
            await self.send(self.line + b"\n")
        else:
            await super().handle(message)


def run(main):
    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=lines, seat=st.integers(0, 2))
def test_any_reply_line_gets_one_verdict_and_the_match_goes_on(line, seat):
    _one_line_gets_one_verdict(line, seat)


def test_an_action_for_an_earlier_request_is_skipped_and_the_request_times_out():
    """The case the property draws rarely, every run: id 0 while request 1 is pending."""
    _one_line_gets_one_verdict(b'{"type":"action","id":0,"index":0}', seat=0)


def _one_line_gets_one_verdict(line: bytes, seat: int) -> None:
    bots = [FakeBot(f"honest{i}") for i in range(3)]
    bots[seat] = OneLineBot("hostile", line)

    async def main():
        async with trio.open_nursery() as nursery:
            procs = [await connect_fake(nursery, bot, time_control=CONTROL) for bot in bots]
            try:
                return await run_match(
                    AON, procs, seed=3, match_id="m", time_control=CONTROL, record_path=record
                )
            finally:
                for proc in procs:
                    await proc.close()

    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "m.jsonl"
        result = run(main)
        entries = read_record(record)
    assert result.termination == "completed"
    assert decision_problems(entries) == []
    first = next(e for e in entries if e["type"] == "request" and e["seat"] == seat)
    replies = [e for e in entries if e["type"] == "reply" and e["pending"] == first["id"]]
    replies = [e for e in replies if e["seat"] == seat]
    assert len(replies) == 1, replies
    faults = [f for f in result.faults if f.request_id == first["id"]]
    assert {f.seat for f in result.faults} <= {seat}
    if _is_stale(line, first["id"]):
        # An action for an earlier request is skipped (SPEC 5): nothing else comes, so the
        # request times out.
        assert replies[0]["verdict"] == "stale"
        assert [f.kind for f in faults] == [FaultKind.TIMEOUT]
    elif replies[0]["verdict"] == "ok":
        assert faults == []
    else:
        assert [f.kind for f in faults] in ([FaultKind.MALFORMED], [FaultKind.ILLEGAL])
    if faults:
        assert "hostile" in faults[0].message and "\n" not in faults[0].message


def _is_stale(line: bytes, pending: int) -> bool:
    """What SPEC 5 calls stale, by the full decoder: an action naming an earlier request."""
    try:
        message = decode_from_bot(line)
    except msgspec.DecodeError:
        return False
    return isinstance(message, Action) and message.id < pending


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=lines)
def test_any_ready_line_is_ready_or_a_startup_error_naming_the_bot(line):
    async def main():
        async with trio.open_nursery() as nursery:
            try:
                proc = await connect_fake(
                    nursery, ReadyLineBot("hostile", line), time_control=CONTROL
                )
            except BotStartupError as error:
                assert error.bot == "hostile" and str(error).startswith("bot hostile: ")
                assert "\n" not in str(error)
                nursery.cancel_scope.cancel()
                return None
            await proc.close()
            return proc

    proc = run(main)
    if proc is not None:
        assert isinstance(decode_from_bot(line), Ready)


@pytest.mark.parametrize("game_id", sorted(GAMES))
@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=30)
    | st.sampled_from(
        ["bid:", "play:", "bid:-1", "play:XX", "bid:99999999999999999999", ":"]
    ).flatmap(lambda prefix: st.text(max_size=8).map(lambda rest: prefix + rest)),
    moves=st.integers(0, 30),
)
def test_explaining_any_illegal_action_is_a_sentence(game_id, text, moves):
    """The fault message for an illegal action quotes the rules' reason: that must not raise."""
    game = GAMES[game_id]
    state = game.new_match(4, {}, 1)
    for _ in range(moves):
        if state.is_over:
            break
        state.apply(state.legal_actions()[0])
    if not state.is_over and text not in state.legal_actions():
        assert isinstance(state.explain_illegal(text), str)
