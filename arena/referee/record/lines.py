"""The one reader of a record's JSON lines: the entries of a record (a file, or a member of a
records file), each with its line number, for the replay check, the audit, the web and the
export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from arena.referee.record.files import record_bytes, record_where
from arena.referee.record.format import (
    ReplayError,
    decode_line,
)


def record_lines(
    path: Path, *, at: int | None = None, length: int | None = None
) -> Iterator[bytes]:
    """The lines of a record (see :func:`record_bytes`), without their newlines."""
    yield from record_bytes(path, at=at, length=length).splitlines()


def read_record(
    path: Path,
    *,
    at: int | None = None,
    length: int | None = None,
    partial: bool = False,
) -> list[dict[str, Any]]:
    """All entries of a record (a file, or the member at byte ``at`` of a records file), each
    with its line number as ``_line``; ReplayError names the file and line that cannot be read.
    ``partial``: a record still being written, whose last line may be cut off mid-write (it is
    left out)."""
    where = record_where(path, at)
    try:
        raw = record_bytes(Path(path), partial=partial, at=at, length=length)
    except OSError as error:
        raise ReplayError(f"{where}: cannot read: {error.strerror or error}") from None
    lines = raw.split(b"\n")
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = decode_line(line)
        except msgspec.DecodeError as error:
            if partial and number == len(lines):
                break  # the writer is in the middle of this line
            raise ReplayError(f"{where} line {number}: not JSON: {error}") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ReplayError(f'{where} line {number}: expected an object with a "type"')
        entry["_line"] = number
        entries.append(entry)
    if not entries or entries[0]["type"] != "header":
        raise ReplayError(f"{where}: the first line must be the header")
    return entries
