"""Where a record is and its bytes: a file of its own, or one gzip member of a records file
found by its byte offset and length (the results file keeps them) or by its match id
(:func:`find_member`); gzip or plain alike, a compact record expanded to its full lines."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from arena.referee.record.expand import expand_compact
from arena.referee.record.format import (
    GZIP_MAGIC,
    HEADER_START,
    ReplayError,
    decode_line,
)


def record_bytes(
    path: Path, *, partial: bool = False, at: int | None = None, length: int | None = None
) -> bytes:
    """The content of a record as the referee wrote it, plain or gzip-compressed alike
    (recognised by its first bytes, whatever its name): the file at ``path``, or the one gzip
    member at byte ``at`` of a records file (``length`` bytes; None: up to the end, for a
    record still being written). ``partial``: a record still being written, of which a
    compressed one holds the lines up to its last flush (a cut line at the end is the caller's
    to drop). OSError when it cannot be read; ReplayError for a damaged, or (unless
    ``partial``) cut, compressed record."""
    where = record_where(path, at)
    raw = Path(path).read_bytes() if at is None else read_span(path, at, length)
    if raw[:2] != GZIP_MAGIC:
        if at is not None:
            raise ReplayError(f"{where}: no gzip record starts there")
        return expand_compact(where, raw, partial)
    out = []
    try:
        while raw:
            unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(unzip.decompress(raw))
            if not unzip.eof:
                if partial:
                    break
                raise ReplayError(f"{where}: a cut gzip record (it ends before its last line)")
            raw = unzip.unused_data
            if at is not None:
                break  # one member: the next is another match's
            if _starts_record(raw):
                raise ReplayError(
                    f"{where}: a records file of several matches: name one (arena replay "
                    "--match ID)"
                )
    except zlib.error as error:
        raise ReplayError(f"{where}: a damaged gzip record: {error}") from None
    return expand_compact(where, b"".join(out), partial)


def record_where(path: Path | str, at: int | None) -> str:
    """How messages name a record: its file, and the byte a records file's member starts at."""
    return str(path) if at is None else f"{path} (the record at byte {at})"


def read_span(path: Path | str, at: int, length: int | None = None) -> bytes:
    """The ``length`` bytes of a file from byte ``at`` (None: to its end): a records file's
    member, as the results file locates it. OSError when it cannot be read."""
    with open(path, "rb") as file:
        file.seek(at)
        return file.read(-1 if length is None else length)


def _starts_record(data: bytes) -> bool:
    """Whether ``data`` (decompressed, or a gzip member) begins a record: its header line."""
    if data[:2] == GZIP_MAGIC:
        try:
            data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, len(HEADER_START))
        except zlib.error:
            return False
    return data.startswith(HEADER_START)


@dataclass(frozen=True)
class RecordMember:
    """One match's record in a records file: where it starts, its length in bytes (None: cut
    short, the last), and its header's match id (None when unreadable)."""

    at: int
    length: int | None
    match_id: str | None


MEMBER_READ = 1 << 20  # bytes read at a time while scanning a records file
HEAD_BYTES = 16384  # of each record decompressed, kept for its header line


def record_members(path: Path, start: int = 0) -> Iterator[RecordMember]:
    """The records of a records file from byte ``start`` (a member's first byte) on, in order:
    each gzip member decompressed once to find where it ends (gzip keeps no lengths), a block
    at a time, so a file of any size takes little memory. The last may be cut short (a record
    being written, or left by a killed arena). ReplayError for bytes that are not gzip."""
    with open(path, "rb") as file:
        file.seek(start)
        at = start
        pending = b""
        while True:
            if len(pending) < 32:  # (a gzip header has at least 10 bytes)
                pending += file.read(MEMBER_READ)
                if not pending:
                    return
            if pending[:2] != GZIP_MAGIC:
                raise ReplayError(f"{record_where(path, at)}: no gzip record starts there")
            unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
            head = b""
            used = 0
            try:
                while True:
                    out = unzip.decompress(pending)
                    if len(head) < HEAD_BYTES:
                        head += out[: HEAD_BYTES - len(head)]
                    if unzip.eof:
                        used += len(pending) - len(unzip.unused_data)
                        pending = unzip.unused_data
                        break
                    used += len(pending)
                    pending = file.read(MEMBER_READ)
                    if not pending:
                        yield RecordMember(at, None, _header_match_id(head))
                        return
            except zlib.error as error:
                raise ReplayError(
                    f"{record_where(path, at)}: a damaged gzip record: {error}"
                ) from None
            yield RecordMember(at, used, _header_match_id(head))
            at += used


def _header_match_id(head: bytes) -> str | None:
    """The match id of a record's first line (None: not a whole header line)."""
    line = head.split(b"\n", 1)[0]
    try:
        match_id = decode_line(line).get("match_id")
    except (msgspec.DecodeError, AttributeError):
        return None
    return match_id if isinstance(match_id, str) else None


def find_member(path: Path, match_id: str) -> RecordMember | None:
    """The last whole record of ``match_id`` in a records file (a match played again, after
    an abort, is appended again), by scanning it; None when there is none."""
    found = None
    for member in record_members(path):
        if member.match_id == match_id and member.length is not None:
            found = member
    return found
