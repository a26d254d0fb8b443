"""protocol/bot.py, the optional Python helper, driven through in-memory streams."""

from __future__ import annotations

import io
import json

import pytest

from protocol.bot import Bot, run

HELLO = {
    "type": "hello",
    "protocol": 1,
    "name": "me",
    "limits": {"startup_ms": 1000, "decision_ms": 1000},
}
START = {
    "type": "match_start",
    "match_id": "m1",
    "game": "alles-oder-nichts",
    "options": {},
    "players": 3,
    "seat": 1,
    "seats": [{"seat": s, "name": f"b{s}"} for s in range(3)],
}


def request(number: int, legal=("bid:0", "bid:1", "bid:2")) -> dict:
    return {
        "type": "request",
        "match_id": "m1",
        "id": number,
        "decision": "bid",
        "view": {"hand": ["3R"]},
        "legal": list(legal),
        "time_left_ms": 900,
    }


def converse(bot, messages, **kwargs) -> list[dict]:
    stdin = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    stdout = io.BytesIO()
    run(bot, stdin=stdin, stdout=stdout, **kwargs)
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def test_handshake_requests_and_bye():
    seen = []

    def choose(req, match):
        seen.append((req.id, match.game, match.seat, len(match.events)))
        return req.legal[-1] if req.id == 1 else 0

    replies = converse(
        choose,
        [
            HELLO,
            START,
            {"type": "event", "match_id": "m1", "event": {"type": "round_start"}},
            request(1),
            request(2),
            {"type": "bye"},
            request(3),
        ],
        name="tester",
        version="2",
    )
    assert replies == [
        {"type": "ready", "name": "tester", "version": "2"},
        {"type": "action", "id": 1, "action": "bid:2"},
        {"type": "action", "id": 2, "index": 0},
    ]  # nothing after bye
    assert seen == [(1, "alles-oder-nichts", 1, 1), (2, "alles-oder-nichts", 1, 1)]


def test_hooks_see_the_match_lifecycle():
    log = []

    class Recorder(Bot):
        name = "recorder"

        def on_match_start(self, match):
            log.append(("start", match.id, match.players))

        def on_event(self, match, event):
            log.append(("event", event["type"]))

        def choose(self, req, match):
            match.memory["asked"] = match.memory.get("asked", 0) + 1
            return req.legal[0]

        def on_fault(self, match, fault):
            log.append(("fault", fault.kind, match.id))

        def on_match_end(self, match, end):
            log.append(("end", end.placings, match.memory["asked"], match.end is end))

    fault = {"type": "fault", "match_id": "m1", "id": 1, "kind": "timeout", "message": "slow"}
    end = {"type": "match_end", "match_id": "m1", "scores": [1, 2, 3], "placings": [3, 2, 1]}
    converse(
        Recorder(),
        [
            HELLO,
            START,
            request(1),
            fault,
            {"type": "event", "match_id": "m1", "event": {"type": "bid", "seat": 0}},
            request(2),
            end,
        ],
    )  # end of input ends the bot too
    assert log == [
        ("start", "m1", 3),
        ("fault", "timeout", "m1"),
        ("event", "bid"),
        ("end", [3, 2, 1], 2, True),
    ]


def test_unknown_message_types_and_fields_are_ignored():
    future = {"type": "x_future", "match_id": "m1", "anything": [1]}
    req = {**request(1), "x_new_field": {"a": 1}}
    replies = converse(lambda r, m: r.legal[1], [HELLO, START, future, req])
    assert replies[1] == {"type": "action", "id": 1, "action": "bid:1"}


def test_a_failing_choose_plays_the_first_legal_action_and_logs(capsys):
    def choose(req, match):
        raise ZeroDivisionError("oops")

    replies = converse(choose, [HELLO, START, request(1)])
    assert replies[1] == {"type": "action", "id": 1, "action": "bid:0"}
    assert "ZeroDivisionError: oops" in capsys.readouterr().err


def test_a_bad_return_value_is_an_error_too(capsys):
    replies = converse(lambda r, m: None, [HELLO, START, request(1)])
    assert replies[1] == {"type": "action", "id": 1, "action": "bid:0"}
    assert "must return an action string or an index" in capsys.readouterr().err


def test_on_error_raise_crashes():
    with pytest.raises(ZeroDivisionError):
        converse(lambda r, m: 1 / 0, [HELLO, START, request(1)], on_error="raise")


def test_print_in_the_bot_goes_to_stderr(capsys):
    def choose(req, match):
        print("thinking hard")
        return 0

    replies = converse(choose, [HELLO, START, request(1)])
    assert len(replies) == 2  # the print did not reach the protocol stream
    assert "thinking hard" in capsys.readouterr().err


def test_a_failing_hook_is_logged_and_skipped(capsys):
    class Clumsy(Bot):
        def on_event(self, match, event):
            raise KeyError("no such thing")

        def choose(self, req, match):
            return 1

    event = {"type": "event", "match_id": "m1", "event": {"type": "bid", "seat": 0}}
    replies = converse(Clumsy(), [HELLO, START, event, request(1)])
    assert replies[1] == {"type": "action", "id": 1, "index": 1}
    assert "on_event() failed" in capsys.readouterr().err
