"""Where the web reads match records, all through ``arena.referee.record``.

A match being played is found at the end of a records file the tournament appends to (SPEC 8),
read on from a cursor (:class:`RecordsFile`); its seats' bots come from its header line alone
(:func:`record_bots`); the match page reads its entries (:func:`record_entries`) and its stream
watches the record grow (:func:`record_extent`). Where a record is, is a RecordPlace (a stored
match's ``record``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.referee.record import (
    RecordMember,
    RecordPlace,
    ReplayError,
    read_header,
    record_members,
    replay_record,
)
from arena.web.matchview import MatchViewError, read_entries

# older tournaments named each match's own record <id with _>-<key prefix>.jsonl.gz, older
# ones still .jsonl; tournaments now append records to records files, <started>-<pid>-<n>.jsonl.gz
RECORD_NAME = re.compile(r"^(.+)_t(\d+)_d(\d+)_r(\d+)(?:-[0-9a-f]+)?\.jsonl(?:\.gz)?$")
UNSTORED_KEPT = 64  # whole records of a file not (yet) stored that are remembered, at most


def record_id_of_name(name: str) -> str | None:
    """The match id an older arena's record file of its own is named for (ids have "/" where
    names have "_"); None for any other name."""
    found = RECORD_NAME.match(name)
    if found is None:
        return None
    return f"{found[1]}/t{found[2]}/d{found[3]}/r{found[4]}"


def record_bots(path: Path, at: int | None) -> list[str] | None:
    """The bots of a record's seats, from its header line (None until it is whole)."""
    try:
        header = read_header(RecordPlace(path, at))
        return [str(seat["bot"]) for seat in header["seats"]] if header else None
    except (OSError, ReplayError, KeyError, TypeError):
        return None


def record_entries(record: RecordPlace, *, running: bool) -> list[dict[str, Any]]:
    """A record's entries for the match page: as written so far (``running``: its last line may
    be cut off mid-write), else replayed through the rules. MatchViewError (one line) for a
    record that cannot be read or does not replay."""
    try:
        if running:
            return read_entries(record, partial=True)
        return replay_record(record).entries
    except ReplayError as error:
        raise MatchViewError(str(error)) from None


def record_extent(record: RecordPlace | None) -> tuple[Any, ...] | None:
    """What changes as a record grows: where it is, and the size of a record still being
    written (the end of its file)."""
    if record is None:
        return None
    if record.length is not None:
        return (record.path, record.at, record.length)
    try:
        return (record.path, record.at, record.path.stat().st_size)
    except OSError:
        return (record.path, record.at, -1)


@dataclass
class RecordsFile:
    """What has been read of one records file: each look reads only the bytes after
    ``cursor`` (every member before it is whole), and nothing when the file is unchanged."""

    cursor: int
    seen: tuple[int, int] = (-1, -1)  # (size, mtime_ns) when last read
    cut: RecordMember | None = None  # the last member, cut short: being written
    # whole members passed whose match was not stored: just finished (the results file gets it
    # a moment later), or aborted
    unstored: list[RecordMember] = field(default_factory=list)
    bots: dict[int, list[str]] = field(default_factory=dict)  # of members by offset, read once

    def read_on(self, path: Path, unstored: Callable[[str | None], bool]) -> None:
        """Read the file's members from the cursor on, moving it past the whole ones and keeping
        those whose match is ``unstored``; a damaged file keeps what was found before the
        damage."""
        cut = None
        try:
            for member in record_members(path, self.cursor):
                if member.length is None:
                    cut = member
                    break
                self.cursor = member.at + member.length
                if member.match_id is not None and unstored(member.match_id):
                    self.unstored.append(member)
                    del self.unstored[:-UNSTORED_KEPT]
        except (OSError, ReplayError):
            pass  # (read again when the file changes: from the last whole member on)
        self.cut = cut
