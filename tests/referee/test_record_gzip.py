"""Compressed records (what tournaments write): read back by ``record_lines`` and ``arena replay``
as the same lines as a plain record, and a cut file reported, not a traceback."""

from __future__ import annotations

import gzip
import json

import pytest
import trio

from arena.games import find_game
from arena.referee import record as record_module
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import ReplayError, record_bytes, record_lines, replay_record
from arena.referee.testing import FakeBot, connect_fake

# Fake bots answer at once, but on a loaded machine "at once" can take over a second: with the
# default time control a stall would be a timeout in one play and not in the other.
PATIENT = TimeControl(decision_ms=600_000, startup_ms=600_000)


async def play_to(path, game_id="vingt-down"):
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, FakeBot(n), time_control=PATIENT) for n in "abcd"]
        try:
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


def without_times(lines):
    """Lines without what depends on the wall clock (reply times, start, duration, latency)."""
    out = []
    for line in lines:
        entry = json.loads(line)
        for key in ("ms", "charged_ms", "time_left_ms", "started", "duration_s", "referee_ms"):
            entry.pop(key, None)
        out.append(entry)
    return out


async def test_a_gzip_record_holds_the_lines_of_a_plain_one(tmp_path, monkeypatch):
    monkeypatch.setattr(record_module, "GZIP_CHUNK", 4096)  # several chunks in one match
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
    monkeypatch.setattr(record_module, "GZIP_FLUSH_S", 0.0)  # every line reaches the file
    path = tmp_path / "live.jsonl.gz"
    writer = record_module.RecordWriter(path)
    writer.write({"type": "header", "n": 1})
    writer.write({"type": "event", "n": 0})
    assert record_bytes(path, partial=True) == b'{"type":"header","n":1}\n{"type":"event","n":0}\n'
    with pytest.raises(ReplayError, match="cut"):
        record_bytes(path)
    writer.close()
    assert len(list(record_lines(path))) == 2
