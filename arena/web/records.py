"""Where the web reads match records (the lines of one being written: matchview.read_entries).

A stored match's record is where the results file says (:meth:`RecordAt.of_stored`); a match
being played is found at the end of a records file the tournament appends to (SPEC 8), read on
from a cursor (:class:`RecordsFile`); its seats' bots come from its header line alone
(:func:`record_bots`); the match page reads its entries (:func:`record_entries`), a league's
replay page the whole record replayed (:func:`replay`). Every read
goes through ``arena.referee.record``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena.referee.record import (
    GZIP_MAGIC,
    RecordMember,
    Replay,
    ReplayError,
    decode_line,
    read_span,
    record_members,
    replay_record,
)
from arena.tournament.store import StoredMatch
from arena.web.matchview import MatchViewError, read_entries

# older tournaments named each match's own record <id with _>-<key prefix>.jsonl.gz, older
# ones still .jsonl; tournaments now append records to records files, <started>-<pid>-<n>.jsonl.gz
RECORD_NAME = re.compile(r"^(.+)_t(\d+)_d(\d+)_r(\d+)(?:-[0-9a-f]+)?\.jsonl(?:\.gz)?$")
HEAD_READ = 65536  # bytes read of a record to find its header line
UNSTORED_KEPT = 64  # whole records of a file not (yet) stored that are remembered, at most


@dataclass(frozen=True)
class RecordAt:
    """Where a match's record is: the file ``path`` (a record of its own: ``at`` None), or the
    gzip member at byte ``at`` of a records file, ``length`` bytes long (None: up to the end of
    the file, a record still being written)."""

    path: Path
    at: int | None = None
    length: int | None = None

    @classmethod
    def of_stored(cls, match: StoredMatch) -> RecordAt | None:
        """Where a stored match's record is (None: none was kept)."""
        if not match.record_path:
            return None
        if match.record_span is None:
            return cls(Path(match.record_path))
        at, length = match.record_span
        return cls(Path(match.record_path), at, length)

    def extent(self) -> tuple[Any, ...]:
        """What changes as the record grows: where it is, and the size of a record still being
        written (the end of its file)."""
        if self.length is not None:
            return (self.path, self.at, self.length)
        try:
            return (self.path, self.at, self.path.stat().st_size)
        except OSError:
            return (self.path, self.at, -1)


def record_id_of_name(name: str) -> str | None:
    """The match id an older arena's record file of its own is named for (ids have "/" where
    names have "_"); None for any other name."""
    found = RECORD_NAME.match(name)
    if found is None:
        return None
    return f"{found[1]}/t{found[2]}/d{found[3]}/r{found[4]}"


def record_bots(path: Path, at: int | None) -> list[str] | None:
    """The bots of a record's seats, from its header line (None until it is whole): read from
    the record's first bytes only (the record, being written, is not expanded by the rules)."""
    try:
        head = read_span(path, at or 0, HEAD_READ)
        if head[:2] == GZIP_MAGIC:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_READ)
        line, newline, _rest = head.partition(b"\n")
        header = decode_line(line) if newline else None
        return [str(seat["bot"]) for seat in header["seats"]] if header else None
    except (OSError, zlib.error, msgspec.DecodeError, KeyError, TypeError, IndexError):
        return None


def replay(record: RecordAt) -> Replay:
    """A whole record re-run through the rules (arena.referee.record.replay_record):
    ReplayError names the line that departs, or why it cannot be read."""
    return replay_record(record.path, at=record.at, length=record.length)


def record_entries(record: RecordAt, *, running: bool) -> list[dict[str, Any]]:
    """A record's entries for the match page: as written so far (``running``: its last line may
    be cut off mid-write), else replayed through the rules. MatchViewError (one line) for a
    record that cannot be read or does not replay."""
    at, length = record.at, record.length
    try:
        if running:
            return read_entries(record.path, partial=True, at=at, length=length)
        return replay(record).entries
    except ReplayError as error:
        raise MatchViewError(str(error)) from None


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
