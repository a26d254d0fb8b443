"""The one reader of a record's JSON lines: the entries of a record (a file, or a member of a
records file), each with its line number, for the replay check, the audit, the web and the
export; and its header alone, from its first bytes (the web's running matches)."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from arena.referee.record.files import read_span, record_bytes, record_place
from arena.referee.record.format import (
    GZIP_MAGIC,
    HEADER_BYTES,
    ReplayError,
    decode_line,
    header_of,
)
from arena.referee.results import RecordPlace


def read_header(record: RecordPlace | Path) -> dict[str, Any] | None:
    """A record's header entry, read from its first bytes only (a record being written is not
    expanded by the rules): None until its first line is whole, or when it is not a header.
    OSError when it cannot be read; ReplayError for a damaged gzip record."""
    place = record_place(record)
    head = read_span(place.path, place.at or 0, HEADER_BYTES)
    if head[:2] == GZIP_MAGIC:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEADER_BYTES)
        except zlib.error as error:
            raise ReplayError(f"{place}: a damaged gzip record: {error}") from None
    return header_of(head)


def record_lines(record: RecordPlace | Path) -> Iterator[bytes]:
    """The lines of a record (see :func:`record_bytes`), without their newlines."""
    yield from record_bytes(record).splitlines()


def read_record(record: RecordPlace | Path, *, partial: bool = False) -> list[dict[str, Any]]:
    """All entries of a record (a file of its own, or a member of a records file), each with
    its line number as ``_line``; ReplayError names the file and line that cannot be read.
    ``partial``: a record still being written, whose last line may be cut off mid-write (it is
    left out)."""
    place = record_place(record)
    where = str(place)
    try:
        raw = record_bytes(place, partial=partial)
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
