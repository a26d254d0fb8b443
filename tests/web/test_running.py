"""Matches being played, found in the records files a tournament appends its records to (and in
an older arena's files of one record each): real gzip members, written as the referee writes
them. Their pages are asked for as the organiser (who may see them: tests/web/test_sealed.py
holds who else may)."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from arena.referee.record import RecordPlace, RecordShelf, RecordWriter
from arena.web import source as source_module
from arena.web.access import ORGANISER
from tests.web.test_server import (
    compact_lines,
    go_on,
    member_of,
    own_record,
    source_without,
    stored_matches,
)


@pytest.fixture(autouse=True)
def fresh_for_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written here count as fresh however slowly the test runs (stale ones are made
    stale by their mtime, an hour back)."""
    monkeypatch.setattr(source_module, "RUNNING_FRESH_S", 600.0)


def running_ids(source) -> list[str]:
    return [m["match_id"] for m in source.running()]


def make_stale(path: Path) -> None:
    past = time.time() - 3600
    os.utime(path, (past, past))


def test_matches_appended_to_a_records_file_are_found_as_they_come(
    played: Path, tmp_path: Path
) -> None:
    source, (first, second) = source_without(played, "vingt-down", "all-fours")
    done = next(m for m in stored_matches(played) if m not in (first, second))  # never running
    records = tmp_path / "records"
    records.mkdir()
    source.records_dir = records
    file = RecordShelf(records).take()
    start = file.append(member_of(done))[1]
    lines = compact_lines(first)
    writer = go_on(RecordWriter(file), lines[:12])

    # The unfinished last member, after a finished match's: running, with its bots.
    assert source.running() == [
        {"match_id": first.match_id, "game": first.game, "bots": list(first.bots)}
    ]
    record, stored, running = source.record_of(first.match_id)
    assert record == RecordPlace(file.path, start, None) and stored is None and running
    page = source.match_page(first.match_id, 1, ORGANISER)
    assert page["running"] and not page["over"] and page["result"] is None
    assert 1 < len(page["frames"]) <= 12

    # Read again, the file is read from where the last look left off: the finished match's
    # bytes, overwritten with rubbish now, are not read again.
    with open(file.path, "r+b") as rubbish:
        rubbish.write(b"\0" * start)
    go_on(writer, lines[12:30])
    assert running_ids(source) == [first.match_id]
    assert len(source.match_page(first.match_id, 1, ORGANISER)["frames"]) > len(page["frames"])

    # Finished and not yet stored: still shown (as its watchers' pages want), whole.
    go_on(writer, lines[30:])
    writer.close()
    assert writer.span is not None
    assert running_ids(source) == [first.match_id]
    record, _stored, running = source.record_of(first.match_id)
    assert running and record == RecordPlace(file.path, *writer.span)
    assert source.match_page(first.match_id, 0, ORGANISER)["over"]

    # The next match appended to the file is found; the first, once stored, is not running.
    later = go_on(RecordWriter(file), compact_lines(second)[:5])
    assert running_ids(source) == sorted([first.match_id, second.match_id])
    source.add(dataclasses.replace(first, record=writer.place))
    assert running_ids(source) == [second.match_id]
    record, stored, running = source.record_of(first.match_id)
    assert record == RecordPlace(file.path, *writer.span) and stored is not None and not running
    assert source.match_page(first.match_id, None, ORGANISER)["over"]  # replayed from its span
    assert source.record_of(second.match_id)[0] == RecordPlace(file.path, later.start, None)

    # A file not written to lately holds no running match; nor does a stopped tournament.
    make_stale(file.path)
    assert running_ids(source) == []
    file.close()


def test_a_records_file_is_first_read_where_its_stored_records_end(
    played: Path, tmp_path: Path
) -> None:
    """The first look at a records file starts after the last record the results file stores
    in it: here the bytes before it are not gzip at all, and are never read."""
    source, (playing, done) = source_without(played, "eight-rounds", "vingt-down")
    records = tmp_path / "records"
    records.mkdir()
    file = RecordShelf(records).take()
    file.append(b"rubbish " * 100)
    go_on(RecordWriter(file), compact_lines(playing)[:8])
    source.records_dir = records
    source.add(dataclasses.replace(done, record=RecordPlace(file.path, 0, 800)))
    assert running_ids(source) == [playing.match_id]
    page = source.match_page(playing.match_id, 0, ORGANISER)
    assert page["running"] and len(page["frames"]) > 1
    file.close()


def test_damaged_records_files_are_skipped_and_shown_in_one_line(
    played: Path, tmp_path: Path
) -> None:
    source, (playing, broken) = source_without(played, "alles-oder-nichts", "all-fours")
    records = tmp_path / "records"
    records.mkdir()
    source.records_dir = records
    (records / "20260101T000000-1-1.jsonl.gz").write_bytes(b"not a gzip file at all")
    damaged = RecordShelf(records).take()  # a whole member, then one damaged in the middle
    damaged.append(member_of(broken))
    member = member_of(playing)
    damaged.append(member[:30] + b"\xff" * 100 + member[130:])
    damaged.close()
    (records / "readme.txt").write_text("not a record")
    assert running_ids(source) == [broken.match_id]  # (whole, not stored: just finished)

    good = RecordShelf(records).take()
    go_on(RecordWriter(good), compact_lines(playing)[:6])
    assert running_ids(source) == sorted([broken.match_id, playing.match_id])

    # A stored match whose record cannot be read: the page says why, in one line.
    size = damaged.path.stat().st_size
    source.add(dataclasses.replace(broken, record=RecordPlace(damaged.path, 7, 40)))
    page = source.match_page(broken.match_id, None, ORGANISER)
    assert page["frames"] is None and str(damaged.path) in page["why"]
    assert "\n" not in page["why"]
    source.add(dataclasses.replace(broken, record=RecordPlace(damaged.path, size - 200, 200)))
    assert source.match_page(broken.match_id, None, ORGANISER)["frames"] is None
    assert running_ids(source) == [playing.match_id]
    good.close()


def test_a_record_of_its_own_still_shows(played: Path, tmp_path: Path) -> None:
    """An older arena's layout: a running match's record in a file named after the match."""
    source, (playing,) = source_without(played, "vingt-down")
    records = tmp_path / "records"
    records.mkdir()
    source.records_dir = records
    path = own_record(records, playing, compact_lines(playing)[:10])
    assert running_ids(source) == [playing.match_id]
    record, _stored, running = source.record_of(playing.match_id)
    assert record == RecordPlace(path) and running
    page = source.match_page(playing.match_id, 0, ORGANISER)
    assert page["running"] and len(page["frames"]) > 1
    make_stale(path)
    assert running_ids(source) == []


def test_an_aborted_match_says_so_not_that_records_are_off(played: Path) -> None:
    source, (cut,) = source_without(played, "all-fours")
    aborted = dataclasses.replace(
        cut,
        scores=(),
        placings=(),
        forfeited=(),
        faults=(),
        decision_ms=(),
        status="aborted",
        reason="cut by the match time limit of 60 s",
        record=None,
    )
    source.add(aborted)
    page = source.match_page(cut.match_id, 0)
    assert page["frames"] is None and not page["running"]
    assert page["why"] == (
        "this match was aborted (cut by the match time limit of 60 s): the next run plays it again"
    )
