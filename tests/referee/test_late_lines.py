"""A line that arrives after the request's time ran out is a timeout, whatever the line is (SPEC 5
and 8): the record's reply line says `late` with the id the line named (null for a line without
one, or a later id), and `arena replay` re-derives such a record (issue found by the zoo: a late
over-long line)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from arena.games import find_game
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import ReplayError, read_record, replay_record
from arena.referee.testing import FakeBot, connect_fake
from tests.referee.test_hostile_lines import OneLineBot

CONTROL = TimeControl(decision_ms=100, margin_ms=10)
# Past the 110 ms the request allows, within the 1 ms the match's deadline may fire late: the
# referee reads the line and finds it late (a line after that is stale or unread: a timeout).
LATE_S = 0.1105

LINES = {
    "garbage": lambda request: b"this is not json",
    "too long": lambda request: b"{" + b" " * (1024 * 1024 + 10) + b"}",
    "future id": lambda request: b'{"type":"action","id":%d,"index":0}' % (request["id"] + 5),
    "pending id": lambda request: b'{"type":"action","id":%d,"index":0}' % request["id"],
    "not an action": lambda request: b'{"type":"ready","name":"x"}',
}


async def _play(line, path: Path) -> None:
    game = find_game("alles-oder-nichts")
    async with trio.open_nursery() as nursery:
        bots = [
            OneLineBot("late", line, LATE_S) if s == 0 else FakeBot(f"fake{s}") for s in range(3)
        ]
        procs = [await connect_fake(nursery, bot, time_control=CONTROL) for bot in bots]
        try:
            await run_match(
                game, procs, seed=3, match_id="m", time_control=CONTROL, record_path=path
            )
        finally:
            for proc in procs:
                await proc.close()


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
@pytest.mark.parametrize("kind", list(LINES))
def test_a_late_line_of_any_kind_is_recorded_late_and_replays(tmp_path, kind, suffix):
    path = tmp_path / f"record{suffix}"
    trio.run(_play, LINES[kind], path, clock=trio.testing.MockClock(autojump_threshold=0))
    entries = read_record(path)
    replies = [e for e in entries if e["type"] == "reply" and e["verdict"] != "ok"]
    assert [r["verdict"] for r in replies] == ["late"], replies
    request = next(e for e in entries if e["type"] == "request" and e["seat"] == 0)
    reply = replies[0]
    assert reply["pending"] == request["id"]
    expected_id = {"future id": request["id"] + 5, "pending id": request["id"]}.get(kind)
    assert reply["id"] == expected_id
    faults = [e for e in entries if e["type"] == "fault"]
    assert [(f["seat"], f["kind"], f["id"]) for f in faults] == [(0, "timeout", request["id"])]
    replay_record(path)  # the referee's own record re-derives


def test_a_late_reply_naming_an_earlier_request_is_caught(tmp_path):
    """The one id a late line cannot name: an earlier request's (that line is stale, skipped)."""
    path = tmp_path / "record.jsonl"
    trio.run(_play, LINES["pending id"], path, clock=trio.testing.MockClock(autojump_threshold=0))
    lines = path.read_text().splitlines()
    (at,) = [n for n, line in enumerate(lines) if '"verdict":"late"' in line]
    late = lines[at]
    lines[at] = late.replace('"id":1,', '"id":0,', 1)  # the id field alone: the text names 1
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayError, match=f'line {at + 1}: field "id" is 0; the rules give 1'):
        replay_record(path)
    lines[at] = late.replace('"id":1,', '"id":0,').replace('\\"id\\":1,', '\\"id\\":0,')
    path.write_text("\n".join(lines) + "\n")  # the line itself answers request 0: stale
    with pytest.raises(ReplayError, match=f'line {at + 1}: field "verdict" is "late"'):
        replay_record(path)
