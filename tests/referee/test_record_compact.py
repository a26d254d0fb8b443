"""Compact records (the ``.jsonl.gz`` files tournaments write, SPEC.md section 8): they hold only
what the rules cannot derive, and read back as exactly the lines a full record of the same match
holds, whatever the bots did (stale, malformed, illegal and late replies, timeouts, crashes,
forfeits, a bot that did not start, a bank of time).

Each match is played twice under the autojump clock (so its times are the same too), once to a
plain ``.jsonl`` (full lines) and once to ``.jsonl.gz`` (compact)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import trio

from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.record import ReplayError, record_bytes, record_lines, replay_record
from arena.referee.testing import FakeBot, connect_fake

# What differs between two plays of one match even under the autojump clock (wall clock).
WALL_CLOCK_FIELDS = ("started", "duration_s", "referee_ms", "load_per_core")


class Scripted(FakeBot):
    """Request number k (1-based, its own count) is answered by ``script[k]``; others properly."""

    def __init__(self, name: str, script: dict) -> None:
        super().__init__(name)
        self.script = script
        self.asked = 0

    async def on_request(self, request):
        self.asked += 1
        step = self.script.get(self.asked, self.script.get("default"))
        legal, rid = request["legal"], request["id"]
        index = self.asked % len(legal)
        if step is None:  # (json.dumps: spaced, so not the canonical reply)
            await self.send({"type": "action", "id": rid, "index": index})
        elif step == "canonical":  # as a C bot writes it: a short array (format 3)
            await self.send(b'{"type":"action","id":%d,"index":%d}\n' % (rid, index))
        elif step == "reordered":  # as long as the canonical one, and not it
            await self.send(b'{"id":%d,"type":"action","index":%d}\n' % (rid, index))
        elif step == "minus zero":
            await self.send(b'{"type":"action","id":%d,"index":-0}\n' % rid)
        elif step == "escaped key":
            await self.send(b'{"type":"action","id":%d,"ind\\u0065x":%d}\n' % (rid, index))
        elif step == "garbage":
            await self.send(b"not json at all\n")
        elif step == "stale":
            await self.send({"type": "action", "id": rid - 1, "index": 0})
            await self.send({"type": "action", "id": rid, "action": legal[-1]})
        elif step == "illegal":
            await self.send({"type": "action", "id": rid, "action": "no such card"})
        elif step == "both":
            await self.send({"type": "action", "id": rid, "action": legal[0], "index": 0})
        elif step == "slow":
            await trio.sleep(0.3)  # past the 200 + 20 ms of CONTROL: a timeout, then stale
            await self.send({"type": "action", "id": rid, "index": 0})
        elif step == "late":
            await trio.sleep(0.21)  # past the limit, inside the margin: in time, charged 200
            await self.send({"type": "action", "id": rid, "index": 0})
        elif step == "crash":
            self.exit(3)
        elif step == "spaced":  # an ordinary reply as the bot spaced it: recorded verbatim
            await self.send(b' {"index" : 0,\t"id":%d, "type":"action"} \n' % rid)
        elif step == "cr":
            await self.send(b'{"type":"action","id":%d,"index":0}\r\n' % rid)
        elif step == "text":
            await self.send({"type": "action", "id": rid, "action": legal[0], "note": "é\u2028\n"})


CONTROL = TimeControl(decision_ms=200, margin_ms=20)
BANK = TimeControl(decision_ms=200, bank_ms=900, increment_ms=30, margin_ms=20)
# Every seat replies canonically (short arrays from each seat's second decision on), but seat 0
# now and then with a line that is read as the same reply and is not the canonical one.
CANONICAL = {seat: {"default": "canonical"} for seat in range(4)}
CANONICAL[0] = {
    "default": "canonical",
    **{k: "reordered" for k in (2, 9, 10, 11)},
    **{k: step for k, step in zip((4, 12, 13, 30), ("spaced", "cr", "escaped key", "minus zero"))},
}

SCENARIOS = {
    "ordinary": ("vingt-down", 4, CONTROL, {0: {1: "spaced", 3: "cr"}}),
    "canonical replies": ("vingt-down", 4, CONTROL, CANONICAL),
    "every kind of fault": (
        "alles-oder-nichts",
        3,
        CONTROL,
        {0: {1: "garbage", 3: "stale", 4: "illegal", 6: "both", 8: "text"}, 1: {2: "slow"}},
    ),
    "forfeit after max faults": (
        "eight-rounds",
        4,
        CONTROL,
        {2: {1: "garbage", 2: "garbage", 3: "garbage"}},
    ),
    "crash in a team game": ("all-fours", 4, CONTROL, {1: {5: "crash"}}),
    "a bank of time": (
        "vingt-down",
        4,
        BANK,
        {0: {"default": "canonical"}, 3: {1: "late", 2: "slow", 4: "late"}},
    ),
}


async def play(game_id, players, control, scripts, path, *, absent_seat=None):
    bots = [Scripted(f"p{i}", scripts.get(i, {})) for i in range(players)]
    async with trio.open_nursery() as nursery:
        procs = []
        for i, bot in enumerate(bots):
            if i == absent_seat:
                procs.append(BotProcess.absent(BotSpec(bot.name, ("gone",)), "no such program"))
            else:
                procs.append(await connect_fake(nursery, bot, time_control=control))
        try:
            return await run_match(
                find_game(game_id),
                procs,
                seed=11,
                match_id=f"t/{game_id}/1/1/0",
                time_control=control,
                max_faults=3,
                record_path=path,
            )
        finally:
            for proc in procs:
                await proc.close()


def comparable(lines):
    out = []
    for line in lines:
        entry = json.loads(line)
        if entry["type"] in ("header", "result"):
            for key in WALL_CLOCK_FIELDS:
                entry.pop(key, None)
        out.append(entry)
    return out


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_a_compact_record_reads_as_the_full_lines_of_the_same_match(
    autojump_clock, tmp_path, scenario
):
    game_id, players, control, scripts = SCENARIOS[scenario]
    full = await play(game_id, players, control, scripts, tmp_path / "m.jsonl")
    compact = await play(game_id, players, control, scripts, tmp_path / "m.jsonl.gz")
    assert full.faults == compact.faults and full.scores == compact.scores
    expected = comparable((tmp_path / "m.jsonl").read_bytes().splitlines())
    assert comparable(record_lines(tmp_path / "m.jsonl.gz")) == expected
    replay_record(tmp_path / "m.jsonl.gz")  # and the rules agree with every expanded line
    stored = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes()).splitlines()
    assert json.loads(stored[0])["compact"] is True
    assert len(stored) * 2 < len(expected)  # only what the rules cannot derive is stored
    kinds = {json.loads(line)["type"] for line in stored if line.startswith(b"{")}
    assert not kinds & {"event", "deal"}
    short = [json.loads(line) for line in stored if line.startswith(b"[")]
    short = [entry for entry in short if len(entry) == 2 and isinstance(entry[1], int)]
    if scenario == "canonical replies":  # each seat's canonical replies after its first
        decisions = sum(len(times) for times in full.decision_ms)
        # In full: each seat's first, seat 0's 8 other lines, and seats 1-3's request 10 (the
        # first id of two digits: the length proving a reply canonical is counted anew).
        assert decisions - len(short) == 4 + 8 + 3
    elif scenario != "ordinary":
        assert full.faults  # the scenario did what it is named for
    if scenario != "canonical replies":
        assert not short  # (no canonical reply, or a bank of time)


@pytest.mark.parametrize(
    "scenario", ["every kind of fault", "a bank of time", "crash in a team game"]
)
async def test_each_compact_shuffle_line_follows_the_action_that_led_to_it(
    autojump_clock, tmp_path, scenario
):
    """SPEC 8: a compact record's shuffle line comes right after the line of the action that led
    to it (the referee writes it as the dealer shuffles, during that action), as many decisions
    into the match as in the full record, whatever kind of decision that was."""
    game_id, players, control, scripts = SCENARIOS[scenario]
    await play(game_id, players, control, scripts, tmp_path / "m.jsonl")
    await play(game_id, players, control, scripts, tmp_path / "m.jsonl.gz")

    def actions_before_each_shuffle(lines):
        seen, where = 0, []
        for line in lines:
            entry = json.loads(line)
            if isinstance(entry, list):
                seen += 1
            elif entry["type"] == "action":
                seen += 1
            elif entry["type"] == "shuffle":
                where.append(seen)
        return where

    full = actions_before_each_shuffle((tmp_path / "m.jsonl").read_bytes().splitlines())
    stored = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes()).splitlines()
    assert actions_before_each_shuffle(stored) == full
    assert len(full) > 1 and full[0] == 0  # the later deals' shuffles are there too
    non_ordinary = [json.loads(s) for s in stored if s.startswith(b'{"type":"action"')]
    assert non_ordinary  # decisions written in full (faults) are among them


async def test_a_seat_that_did_not_start_compact_and_full_alike(autojump_clock, tmp_path):
    for name in ("m.jsonl", "m.jsonl.gz"):
        await play("alles-oder-nichts", 3, CONTROL, {}, tmp_path / name, absent_seat=1)
    expected = comparable((tmp_path / "m.jsonl").read_bytes().splitlines())
    assert any(e["type"] == "autopilot" for e in expected)
    assert comparable(record_lines(tmp_path / "m.jsonl.gz")) == expected
    stored = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes()).splitlines()
    assert sum(line.count(b"autopilot") for line in stored) == 0  # [seat, action] lines


async def test_older_records_of_full_lines_still_read_as_they_are(autojump_clock, tmp_path):
    await play("vingt-down", 4, CONTROL, {}, tmp_path / "m.jsonl")
    plain = (tmp_path / "m.jsonl").read_bytes()
    (tmp_path / "old.jsonl.gz").write_bytes(gzip.compress(plain))  # a gzip record of full lines
    assert list(record_lines(tmp_path / "old.jsonl.gz")) == plain.splitlines()
    assert list(record_lines(tmp_path / "m.jsonl")) == plain.splitlines()
    replay_record(tmp_path / "old.jsonl.gz")


@pytest.mark.parametrize(
    "format, names",
    [(1, ("faults", "bank", "realbank")), (2, ("ordinary", "faults", "bank"))],
)
def test_compact_records_of_earlier_formats_still_read_to_the_same_full_lines(format, names):
    """Compact records written before format 3 read to the full lines they did then, and
    replay: format 1's (by 734d7bd: their decision arrays hold ms to 0.001, the reply's text as
    a string and null charges without a bank) and format 2's (by 262d77d: every ordinary
    decision a 7-array, without format 3's short arrays)."""
    folder = Path(__file__).parent / f"records_format{format}"
    for name in names:
        old = folder / f"{name}.jsonl.gz"
        assert json.loads(gzip.decompress(old.read_bytes()).split(b"\n")[0])["format"] == format
        expected = gzip.decompress((folder / f"{name}.full.jsonl.gz").read_bytes())
        assert record_bytes(old) == expected
        replay_record(old)


@pytest.mark.parametrize("scripts", [{}, CANONICAL], ids=["in full", "short arrays"])
async def test_a_running_compact_record_shows_the_full_lines_so_far(
    autojump_clock, tmp_path, scripts
):
    await play("alles-oder-nichts", 3, CONTROL, scripts, tmp_path / "m.jsonl.gz")
    full = record_bytes(tmp_path / "m.jsonl.gz").splitlines()
    stored = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes())
    cut = stored[: stored.index(b"\n", len(stored) // 2) + 5]  # mid-match, within a line
    (tmp_path / "live.jsonl").write_bytes(cut)
    shown = record_bytes(tmp_path / "live.jsonl", partial=True).splitlines()
    assert 10 < len(shown) < len(full) and shown == full[: len(shown)]


async def test_a_damaged_compact_line_is_one_clear_error(autojump_clock, tmp_path):
    await play("alles-oder-nichts", 3, CONTROL, {}, tmp_path / "m.jsonl.gz")
    lines = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes()).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(b"["))
    first = json.loads(lines[at])
    wrong_seat = json.dumps([(first[0] + 1) % 3, *first[1:]]).encode()
    wrong_action = json.dumps([*first[:-1], "no such card"]).encode()
    for bad in (b"[0, 1", b'["x"]', wrong_seat, wrong_action, b'{"type":"nonsense"}'):
        (tmp_path / "bad.jsonl").write_bytes(b"\n".join([*lines[:at], bad, *lines[at + 1 :]]))
        with pytest.raises(ReplayError, match=rf"bad.jsonl line {at + 1}: .*compact record"):
            record_bytes(tmp_path / "bad.jsonl")


async def test_a_damaged_short_array_is_one_clear_error(autojump_clock, tmp_path):
    """Format 3's [us, index]: an index out of range, a seat's first decision (no id to count
    on from), a bank of time (no charge to take as 0), and in a record of format 2."""
    await play("alles-oder-nichts", 3, CONTROL, CANONICAL, tmp_path / "m.jsonl.gz")
    lines = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes()).splitlines()
    arrays = [i for i, line in enumerate(lines) if line.startswith(b"[")]
    first, short = arrays[0], next(i for i in arrays if len(json.loads(lines[i])) == 2)
    header = json.loads(lines[0])
    banked = json.dumps({**header, "time_control": BANK.as_dict()}, separators=(",", ":"))
    older = json.dumps({**header, "format": 2}, separators=(",", ":"))
    cases = [
        (short, b"[0,99]", "a decision's index 99; expected 0 to"),
        (short, b"[-1,0]", "a decision's time -1"),
        (short, b"[0,true]", "a decision's index true"),
        (first, b"[0,0]", f"array of seat {json.loads(lines[first])[0]}, which had no request"),
        (0, banked.encode(), "a short decision array in a match with a bank of time"),
        (0, older.encode(), "(a decision of seat 0,|the rules cannot follow)"),  # [seat, action]
    ]
    for at, bad, message in cases:
        (tmp_path / "bad.jsonl").write_bytes(b"\n".join([*lines[:at], bad, *lines[at + 1 :]]))
        where = short + 1 if at == 0 else at + 1
        with pytest.raises(ReplayError, match=rf"bad.jsonl line {where}: .*{message}"):
            record_bytes(tmp_path / "bad.jsonl")
