"""Compressed records (what tournaments write): read back by ``record_lines`` and ``arena replay``
as the same lines as a plain record, and a cut file reported, not a traceback."""

from __future__ import annotations

import gc
import gzip
import json
import math
import zlib

import pytest
import trio

from arena.games import find_game
from arena.referee import record as record_module
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import ReplayError, record_bytes, record_lines, replay_record
from arena.referee.record import format as record_format
from arena.referee.record import writing as record_writing
from arena.referee.testing import FakeBot, connect_fake

# Fake bots answer at once, but on a loaded machine "at once" can take over a second: with the
# default time control a stall would be a timeout in one play and not in the other.
PATIENT = TimeControl(decision_ms=600_000, startup_ms=600_000)


async def play_to(path, game_id="vingt-down", bots=None, cut_after_s=None):
    """Four bots (FakeBots unless given) play a match recorded to ``path``, cut off after
    ``cut_after_s`` of the clock if given; returns the bots, to see what they read."""
    bots = bots or [FakeBot(n) for n in "abcd"]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot, time_control=PATIENT) for bot in bots]
        try:
            with trio.move_on_after(math.inf if cut_after_s is None else cut_after_s):
                await run_match(
                    find_game(game_id),
                    procs,
                    seed=5,
                    match_id="m",
                    record_path=path,
                    time_control=PATIENT,
                )
        finally:
            for proc in procs:
                await proc.close()
    return bots


def without_times(lines):
    """Lines without what depends on the wall clock or the machine (reply times, start, duration,
    latency, load)."""
    out = []
    wall = ("ms", "charged_ms", "time_left_ms", "started", "duration_s", "referee_ms")
    for line in lines:
        entry = json.loads(line)
        for key in (*wall, "load_per_core"):
            entry.pop(key, None)
        out.append(entry)
    return out


async def test_a_gzip_record_holds_the_lines_of_a_plain_one(tmp_path, monkeypatch):
    monkeypatch.setattr(record_writing, "RECORD_BATCH", 16)  # several writes in one match
    await play_to(tmp_path / "m.jsonl")
    await play_to(tmp_path / "m.jsonl.gz")
    plain = (tmp_path / "m.jsonl").read_bytes().splitlines()
    packed = (tmp_path / "m.jsonl.gz").read_bytes()
    assert packed[:2] == b"\x1f\x8b" and len(packed) * 4 < len(b"\n".join(plain))
    # It holds the compact lines (tests/referee/test_record_compact.py), read back in full.
    assert len(gzip.decompress(packed).splitlines()) * 2 < len(plain)
    assert list(record_lines(tmp_path / "m.jsonl")) == plain
    assert without_times(record_lines(tmp_path / "m.jsonl.gz")) == without_times(plain)
    assert replay_record(tmp_path / "m.jsonl.gz").result is not None


async def test_a_cut_gzip_record_is_one_clear_error(tmp_path):
    await play_to(tmp_path / "m.jsonl.gz", "all-fours")
    data = (tmp_path / "m.jsonl.gz").read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ReplayError, match="cut.jsonl.gz: a cut gzip record"):
        replay_record(tmp_path / "cut.jsonl.gz")
    (tmp_path / "bad.jsonl.gz").write_bytes(data[:20] + bytes(40) + data[60:])
    with pytest.raises(ReplayError, match="bad.jsonl.gz: a damaged gzip record"):
        replay_record(tmp_path / "bad.jsonl.gz")


async def test_a_running_match_record_shows_its_lines_up_to_the_last_flush(tmp_path, monkeypatch):
    monkeypatch.setattr(record_writing, "GZIP_FLUSH_S", 0.0)  # every line reaches the file
    path = tmp_path / "live.jsonl.gz"
    writer = record_module.RecordWriter(path)
    writer.write({"type": "header", "n": 1})
    writer.write({"type": "event", "n": 0})
    assert record_bytes(path, partial=True) == b'{"type":"header","n":1}\n{"type":"event","n":0}\n'
    with pytest.raises(ReplayError, match="cut"):
        record_bytes(path)
    writer.close()
    assert len(list(record_lines(path))) == 2


class Thinker(FakeBot):
    """Takes 0.4 s (of the test's clock) per decision; after its 8th, reads the running match's
    record as a live view would."""

    def __init__(self, name: str, path) -> None:
        super().__init__(name)
        self.path, self.asked, self.seen = path, 0, None

    async def on_request(self, request):
        self.asked += 1
        await trio.sleep(0.4)
        if self.asked == 8:
            self.seen = record_bytes(self.path, partial=True).splitlines()
        await self.send({"type": "action", "id": request["id"], "index": 0})


async def test_a_slow_matchs_record_reaches_the_file_while_it_runs(autojump_clock, tmp_path):
    """The referee keeps a record's lines in memory, but writes them at least once a second
    (SPEC 8): at the 8th decision of one seat (~12 s in), the file holds the match so far."""
    path = tmp_path / "slow.jsonl.gz"
    bots = await play_to(path, "alles-oder-nichts", [Thinker(n, path) for n in "abcd"])
    seen = bots[0].seen
    assert seen is not None
    full = list(record_lines(path))
    assert json.loads(seen[0])["type"] == "header"
    decisions = sum(b'"type":"action"' in line for line in seen)
    # 4 seats, 8 decisions of seat 0 begun: at least 4 x 7 - 4 finished, at most 4 x 7 + 3
    assert 24 <= decisions <= 31 and seen == full[: len(seen)]


async def test_zlib_writes_the_same_records_where_isal_is_missing(
    autojump_clock, tmp_path, monkeypatch
):
    """ISA-L compresses where installed; without it zlib does, and both files read back alike."""
    await play_to(tmp_path / "a.jsonl.gz", "eight-rounds")
    monkeypatch.setattr(record_writing, "_deflate", zlib)  # as if isal were not installed
    await play_to(tmp_path / "b.jsonl.gz", "eight-rounds")
    first, second = (
        without_times(record_lines(tmp_path / n)) for n in ("a.jsonl.gz", "b.jsonl.gz")
    )
    assert first == second and replay_record(tmp_path / "b.jsonl.gz").result is not None
    assert zlib.decompress((tmp_path / "a.jsonl.gz").read_bytes(), 31).startswith(b'{"type"')


def test_isal_compresses_where_installed():
    isal_zlib = pytest.importorskip("isal.isal_zlib")
    assert record_module.deflate_module() is isal_zlib


async def test_a_match_cut_off_leaves_a_whole_record_of_what_happened(autojump_clock, tmp_path):
    """A referee cut off mid-match (cancelled) still closes the record: a whole gzip file of the
    lines up to the cut (SPEC 8: it ends early, with no result line)."""
    path = tmp_path / "cut.jsonl.gz"
    await play_to(path, "vingt-down", [Thinker(n, path) for n in "abcd"], cut_after_s=3.0)
    lines = [json.loads(line) for line in record_lines(path)]  # no "cut gzip record" error
    assert lines[0]["type"] == "header" and all(line.get("type") != "result" for line in lines)
    assert 5 <= sum(isinstance(line, list) or line["type"] == "action" for line in lines) <= 8


def as_the_referee_keeps_it(seat, request_id, time_left, used_ms, charged, line, action):
    """An ordinary decision's Decision (format 2), made as match.py makes it."""
    text = line.decode() if len(line) <= 1000 else record_module.recorded_text(line)
    us = math.floor(used_ms * 1000.0 + 0.5)
    return record_module.Decision(seat, request_id, time_left, us, charged, text, action)


def test_the_writer_writes_each_decision_line_as_alone_whatever_is_around_it(tmp_path):
    """The referee's Decisions (format 2: whole microseconds, the reply's text, cut to
    what the record keeps) are written as SPEC 8's array lines, each in its place among
    write()'s lines, whether the record is written in one go or flushed mid-way."""
    cut = "é".encode() * 500
    replies = [  # ordinary replies: decoded as JSON by the referee (so valid UTF-8)
        b'{"type":"action","id":1,"index":0}',
        b'{"type":"action","id":2,"action":"\\u00e9\\"x"}',
        b'{"type":"action","id":3,"index":1}' + b" " * 990,  # longer than the record keeps
        b' {"action" : "AS",\t"type":"action","id":4}\r',
        b'{"type":"action","id":5,"action":"' + cut[:-38] + b'"}',  # 999 bytes: all
        b'{"type":"action","id":16,"action":"' + cut + b'"}',  # cut inside an "é"
    ]
    texts = [r[: record_module.RECORDED_LINE_CHARS].decode("utf-8", "replace") for r in replies]
    assert [len(t) for t in texts] == [34, 45, 1000, 43, 517, 518]
    assert texts[5].endswith("é\ufffd") and len(replies[4]) == 998
    decisions = [
        (n % 4, n, 5000 - n, 0.0004 + n * 1.23456, n // 2, reply, f"C{n}")
        for n, reply in enumerate(replies * 3)
    ]
    plan = [("w", {"type": "header", "n": 0})]  # lines first, between decisions and last
    for number, decision in enumerate(decisions):
        plan.append(("t", decision))
        if number in (0, 3, 4, 9):
            plan.append(("w", {"type": "fault", "n": number}))
        if number == 4:
            plan.append(("w", [3, "C4"]))  # a forfeited seat's decision
    plan.append(("w", {"type": "result"}))
    expected = [
        entry
        if kind == "w"
        else [*entry[:3], round(entry[3] * 1000), entry[4], texts[entry[1] % 6], entry[6]]
        for kind, entry in plan
    ]
    for flushes in (False, True):  # in one go, and flushed mid-way (a compressor object)
        path = tmp_path / f"m{flushes}.jsonl.gz"
        writer = record_module.RecordWriter(path)
        for number, (kind, entry) in enumerate(plan):
            if kind == "w":
                writer.write(entry)
            else:
                writer.entries.append(as_the_referee_keeps_it(*entry))
            if flushes and number in (2, 7, 8):
                writer.flush()
        writer.close()
        lines = gzip.decompress(path.read_bytes()).split(b"\n")
        assert lines.pop() == b""
        assert [json.loads(line) for line in lines] == expected


def test_kept_lines_wait_for_the_next_write_however_many_and_late(tmp_path, monkeypatch):
    """keep_shuffle() (a compact shuffle line, kept while the rules apply an action) never
    writes: past RECORD_BATCH lines and the flush interval its lines wait in order for the next
    write()."""
    monkeypatch.setattr(record_writing, "RECORD_BATCH", 3)
    monkeypatch.setattr(record_writing, "GZIP_FLUSH_S", 0.0)
    path = tmp_path / "m.jsonl.gz"
    writer = record_module.RecordWriter(path)
    for n in range(5):
        writer.keep_shuffle(n, ["AS", f"{n + 2}C"])
    assert path.stat().st_size == 0 and len(writer.entries) == 5
    writer.write({"type": "result"})  # the write after them takes them all, in order
    assert path.stat().st_size > 0 and not writer.entries
    writer.close()
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    shuffles = [{"type": "shuffle", "n": n, "cards": ["AS", f"{n + 2}C"]} for n in range(5)]
    assert lines == [*shuffles, {"type": "result"}]
    unused = record_module.RecordWriter(None)
    unused.keep_shuffle(1, ["AS"])  # no record: nothing kept
    assert not unused.entries


def test_a_kept_decision_is_never_tracked_by_the_garbage_collector():
    """The referee keeps each ordinary decision as a Decision, which the collector never visits
    (a tuple is, until its first collection), and which is written as SPEC 8's array."""
    reply = b'{"type":"action","id":7,"index":0}'
    decision = as_the_referee_keeps_it(0, 7, 200, 1.534, 0, reply, "AS")
    assert not gc.is_tracked(decision)
    assert json.loads(record_format.encoder.encode(decision)) == [
        0,
        7,
        200,
        1534,
        0,
        reply.decode(),
        "AS",
    ]
