"""Records files (SPEC 8): a tournament appends each match's compact record, one gzip member, to
a records file; each is read back by its span or its match id, the whole file by any gzip
reader, and a match cut off or a write that fails never spoils the records before it."""

from __future__ import annotations

import gzip
import math
import os

import pytest
import trio

from arena.games import find_game
from arena.referee.match import run_match
from arena.referee.record import (
    RecordFile,
    RecordPlace,
    RecordShelf,
    RecordWriter,
    ReplayError,
    find_member,
    read_header,
    read_record,
    record_bytes,
    record_members,
    replay_record,
)
from arena.referee.testing import FakeBot, connect_fake
from tests.referee.test_record_gzip import PATIENT, without_times


async def play_into(destination, match_id, *, seed=5, game_id="vingt-down", cut_after_s=None):
    """Four FakeBots play a match recorded to ``destination`` (a records file or a path),
    cut off after ``cut_after_s`` of the clock if given; the result (None when cut)."""
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, FakeBot(n), time_control=PATIENT) for n in "abcd"]
        result = None
        try:
            with trio.move_on_after(math.inf if cut_after_s is None else cut_after_s):
                result = await run_match(
                    find_game(game_id),
                    procs,
                    seed=seed,
                    match_id=match_id,
                    record_path=destination,
                    time_control=PATIENT,
                )
        finally:
            for proc in procs:
                await proc.close()
    return result


async def test_matches_appended_read_back_each_as_its_own_file_would(tmp_path):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    results = [await play_into(records, f"g/t0/d{n}/r0", seed=n) for n in range(3)]
    records.close()
    spans = [r.record.span for r in results]
    assert spans[0][0] == 0 and all(r.record.path == records.path for r in results)
    for before, after in zip(spans, spans[1:]):
        assert after[0] == before[0] + before[1]  # one after another, nothing between
    assert spans[-1][0] + spans[-1][1] == records.path.stat().st_size
    for n, (at, length) in enumerate(spans):  # each the same lines as a file of its own
        await play_into(tmp_path / f"own{n}.jsonl.gz", f"g/t0/d{n}/r0", seed=n)
        own = record_bytes(tmp_path / f"own{n}.jsonl.gz").splitlines()
        mine = record_bytes(RecordPlace(records.path, at, length)).splitlines()
        assert without_times(mine) == without_times(own)
        replayed = replay_record(results[n].record)
        assert replayed.header["match_id"] == f"g/t0/d{n}/r0"
        assert tuple(replayed.result["scores"]) == results[n].scores
    # Any gzip reader reads the whole file: every match's compact lines, each from its header.
    lines = gzip.decompress(records.path.read_bytes()).splitlines()
    assert sum(line.startswith(b'{"type":"header"') for line in lines) == 3
    # Scanned, the file gives the same spans and the ids; a match is found by its id.
    members = list(record_members(records.path))
    assert [(m.at, m.length) for m in members] == spans
    assert [m.match_id for m in members] == [f"g/t0/d{n}/r0" for n in range(3)]
    assert find_member(records.path, "g/t0/d1/r0") == members[1]
    assert find_member(records.path, "g/t0/d9/r0") is None
    assert list(record_members(records.path, start=spans[2][0])) == members[2:]


async def test_a_records_file_of_several_matches_is_not_read_as_one(tmp_path):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    for n in range(2):
        await play_into(records, f"m{n}", seed=n)
    with pytest.raises(ReplayError, match=r"several matches: name one \(arena replay --match"):
        record_bytes(records.path)
    with pytest.raises(ReplayError, match="at byte 7[)]: no gzip record starts there"):
        record_bytes(RecordPlace(records.path, 7, 100))


async def test_a_match_cut_off_still_closes_its_record_and_the_next_follows(tmp_path):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    first = await play_into(records, "first", seed=1)
    cut = await play_into(records, "cut", seed=2, game_id="all-fours", cut_after_s=0)
    assert cut is None and not records.writing
    last = await play_into(records, "last", seed=3)
    members = list(record_members(records.path))
    assert [m.match_id for m in members] == ["first", "cut", "last"]
    assert all(m.length is not None for m in members)  # the cut match's member is whole
    assert (members[0].at, members[0].length) == first.record.span
    assert (members[2].at, members[2].length) == last.record.span
    cut_lines = record_bytes(RecordPlace(records.path, members[1].at, members[1].length))
    assert b'"type":"result"' not in cut_lines  # it ends early, as a cut match's file does
    assert replay_record(last.record)


async def test_a_killed_arena_leaves_a_cut_last_record_that_readers_name(tmp_path):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    whole = await play_into(records, "whole", seed=1)
    await play_into(records, "killed", seed=2)
    records.close()
    size = records.path.stat().st_size
    whole_length = whole.record.length
    os.truncate(records.path, whole_length + (size - whole_length) // 2)
    members = list(record_members(records.path))
    assert [(m.match_id, m.length) for m in members] == [
        ("whole", whole_length),
        ("killed", None),
    ]
    assert find_member(records.path, "killed") is None  # never a cut record as the match's
    partial = record_bytes(RecordPlace(records.path, members[1].at), partial=True)
    assert partial.startswith(b'{"type":"header"') and b'"match_id":"killed"' in partial
    with pytest.raises(ReplayError, match="at byte .*: a cut gzip record"):
        record_bytes(RecordPlace(records.path, members[1].at))
    assert replay_record(RecordPlace(records.path, 0, whole_length)).result is not None


def test_one_match_at_a_time_and_a_failed_write_ends_the_file(tmp_path):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    writer = RecordWriter(records)
    with pytest.raises(ValueError, match="another match's record is being written"):
        RecordWriter(records)
    writer.write({"type": "header"})
    writer.close()
    assert writer.span == (0, records.size) and not records.writing
    with pytest.raises(ValueError, match="name it .gz"):
        RecordFile(tmp_path / "plain.jsonl")

    # A write that fails part-way (here: the descriptor is no longer writable) leaves a cut
    # member: the file is marked, gives no span, and the shelf opens another.
    shelf = RecordShelf(tmp_path)
    broken = shelf.take()
    read_only = os.open(broken.path, os.O_RDONLY)
    os.dup2(read_only, broken.fd)
    os.close(read_only)
    failing = RecordWriter(broken)
    failing.write({"type": "header"})
    with pytest.raises(OSError):
        failing.close()
    assert broken.damaged and failing.span is None and not broken.writing
    shelf.give_back(broken)
    assert broken.fd is None
    fresh = shelf.take()
    assert fresh is not broken and fresh.path != broken.path
    with pytest.raises(ValueError, match="not free"):
        broken.append(b"\x1f\x8b")
    shelf.close()


def test_a_shelf_opens_a_file_per_match_at_once_and_reuses_them(tmp_path):
    shelf = RecordShelf(tmp_path)
    one, two = shelf.take(), shelf.take()
    assert one.path != two.path and one.path.name.endswith(".jsonl.gz")
    shelf.give_back(one)
    assert shelf.take() is one  # a free file is reused, not a new one made
    assert one.append(b"\x1f\x8bxyz") == (0, 5) and one.append(b"\x1f\x8b") == (5, 2)
    # Another shelf (another run, or another worker process) never shares a file with it.
    assert RecordShelf(tmp_path).take().path not in {one.path, two.path}
    # A cluster worker empties its free files once their records are shipped; never a file
    # a match is being written to.
    two.append(b"\x1f\x8b" * 10)
    shelf.give_back(one)
    shelf.trim(6)
    assert one.size == 0 and one.path.stat().st_size == 0
    assert two.size == 20 and two.path.stat().st_size == 20
    assert one.append(b"\x1f\x8b") == (0, 2)  # it goes on from its start
    shelf.close(remove=True)
    assert one.fd is None and two.fd is None
    assert not one.path.exists() and not two.path.exists()


async def test_a_records_header_is_read_from_its_first_bytes_alone(tmp_path):
    """read_header (the web's running matches): the header line, from a records file's member
    or a file of its own; None until that line is whole; one error for damaged bytes."""
    records = RecordFile(tmp_path / "run.jsonl.gz")
    first = await play_into(records, "first", seed=1)
    second = await play_into(records, "second", seed=2)
    records.close()
    own = await play_into(tmp_path / "own.jsonl", "own", seed=3)
    for result in (first, second, own):
        header = read_header(result.record)
        assert header is not None and header["match_id"] == result.match_id
        assert header == {k: v for k, v in read_record(result.record)[0].items() if k != "_line"}
    plain = (tmp_path / "own.jsonl").read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(plain[: plain.index(b"\n")])  # being written: its first line not yet whole
    assert read_header(cut) is None
    cut.write_bytes(plain[plain.index(b"\n") + 1 :])  # whole lines, none of them a header
    assert read_header(cut) is None
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(records.path.read_bytes()[:10] + b"\xff" * 200)
    with pytest.raises(ReplayError, match="damaged.jsonl.gz: a damaged gzip record"):
        read_header(damaged)
    with pytest.raises(OSError):
        read_header(tmp_path / "gone.jsonl")
