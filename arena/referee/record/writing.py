"""Writing records: one match's lines kept and written in a few large writes
(:class:`RecordWriter`), to a file of its own or as one gzip member of a tournament's
append-only records file (:class:`RecordFile`, handed out by a :class:`RecordShelf`)."""

from __future__ import annotations

import itertools
import os
import time
import zlib
from pathlib import Path
from typing import Any

import msgspec

from arena.referee.record.format import (
    RECORDS_SUFFIX,
    ShuffleLine,
    compressed,
    encoder,
)

# The gzip records' compressor: ISA-L's (the isal package, imported with the first gzip record)
# where installed, ~3x faster than zlib's for ~10% smaller files (the same format: any gzip
# reader reads them); else zlib's. Each at its fastest level, with a 4 kB window and little
# memory: such a compressor starts in a microsecond where zlib's defaults take ~100 us.
GZIP_LEVEL = 1
GZIP_WBITS = 12
GZIP_MEMLEVEL = 4
_deflate: Any = None


def deflate_module() -> Any:
    """isal.isal_zlib where installed, else zlib (both offer compressobj and its flush modes)."""
    global _deflate
    if _deflate is None:
        try:
            from isal import isal_zlib
        except ImportError:  # a machine without the isal wheel: zlib writes the same format
            _deflate = zlib
        else:
            _deflate = isal_zlib
    return _deflate


GZIP_FLUSH_S = 1.0  # at most this long (and one decision) before kept lines reach the file
RECORD_BATCH = 4096  # at most this many entries kept in memory before they are written

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC


class RecordFile:
    """An append-only records file (SPEC.md section 8): the compact records of matches an arena
    process plays, one after another, each one gzip member, which a :class:`RecordWriter`
    given this file appends (where: :attr:`RecordWriter.span`).

    Why not a file per match: creating a file costs this VM's ext4 28-390 us of CPU (its inode
    checked against the block group's recent deletions, more the more a folder churns), and
    appending to an open one 3-4 us: over an AoN match of ~5 ms, creating, writing and closing a
    record's own file cost ~100 us, about 2% of matches/s (benchmarks/records.py). One match at
    a time: a second writer while one is open is a bug (ValueError)."""

    def __init__(self, path: Path) -> None:
        if not compressed(path):
            raise ValueError(f"{path}: a records file holds compact gzip records (name it .gz)")
        self.path = path
        self.fd: int | None = os.open(path, _APPEND, 0o600)
        self.size = os.fstat(self.fd).st_size  # where the next record starts
        self.writing = False  # a RecordWriter appends to it now
        # A write failed part-way (e.g. a full disk): the file ends in a cut member, so no
        # record may follow it (RecordShelf opens another).
        self.damaged = False

    def append(self, data: bytes) -> tuple[int, int]:
        """Append a whole record made elsewhere (one gzip member: a cluster worker's); its
        (byte offset, length) here."""
        if self.writing or self.fd is None or self.damaged:
            raise ValueError(f"{self.path}: not free to append a record to")
        start = self.size
        self.write_all(data)
        return start, len(data)

    def write_all(self, data: bytes) -> None:
        """Write ``data`` at the end (the writer's or :meth:`append`'s); a write that fails
        part-way leaves a cut member, so the file is marked damaged: nothing may follow it."""
        fd = self.fd
        if fd is None:
            raise ValueError(f"{self.path}: closed")
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                self.size += written
                view = view[written:]
        except BaseException:
            self.damaged = True
            raise

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


_shelf_files = itertools.count(1)  # numbers the records files of this process's shelves


class RecordShelf:
    """The records files of one arena process: a free one for each match that starts, a new one
    only when every open one is being written (so as many files as matches at once), named
    ``<started>-<pid>-<n>.jsonl.gz`` in ``folder``: each run of the same tournament (a resume)
    writes new files, and never appends after a record that a killed run left cut."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.stem = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"
        self.free: list[RecordFile] = []
        self.files: list[RecordFile] = []

    def take(self) -> RecordFile:
        """A records file no match is being written to (OSError when one cannot be made)."""
        while self.free:
            file = self.free.pop()
            if not file.damaged and file.fd is not None:
                return file
        file = RecordFile(self.folder / f"{self.stem}-{next(_shelf_files)}{RECORDS_SUFFIX}")
        self.files.append(file)
        return file

    def give_back(self, file: RecordFile) -> None:
        if file.damaged:
            file.close()
        else:
            self.free.append(file)

    def trim(self, most: int) -> None:
        """Empty each free file that holds more than ``most`` bytes (for records that were
        read back and kept elsewhere: a cluster worker's, shipped to the arena)."""
        for file in self.free:
            if file.size > most and file.fd is not None:
                os.ftruncate(file.fd, 0)
                file.size = 0

    def close(self, *, remove: bool = False) -> None:
        """Close every file (``remove``: and delete them)."""
        for file in self.files:
            file.close()
            if remove:
                file.path.unlink(missing_ok=True)
        self.free.clear()


class RecordWriter:
    """Keeps a match's record lines in memory and writes them in a few large writes (or keeps
    nothing when ``path`` is None).

    A path ending in ``.gz`` gets a gzip file of the compact lines (what tournaments write:
    ``compact`` tells the referee so; SPEC.md section 8), which :func:`record_bytes` writes out
    in full again. :meth:`write` encodes an entry at once (its values may change later) and
    keeps the line. The referee appends each ordinary decision of a compact record to
    :attr:`entries` itself, as its array line: a :class:`ShortDecision` (format 3, for the
    canonical reply) or a :class:`Decision` (numbers and strings only: nothing else of the
    decision is kept alive), which msgspec encodes as it is; and :meth:`keep_shuffle` each
    shuffle, as a :class:`ShuffleLine`.
    All that is kept is encoded in one call, compressed and written by :meth:`flush`, which the
    referee calls at least every ``GZIP_FLUSH_S`` while a match runs (for whoever watches it);
    :meth:`write` does once ``RECORD_BATCH`` entries are kept, and :meth:`close` at the end.
    """

    def __init__(self, path: Path | RecordFile | None) -> None:
        # A records file to append this match's member to (else a file of its own): the byte
        # offset and length the record took in it, once closed (the results file keeps them).
        self.into: RecordFile | None = None
        self.span: tuple[int, int] | None = None
        if isinstance(path, RecordFile):
            if path.writing or path.fd is None:
                raise ValueError(f"{path.path}: another match's record is being written to it")
            path.writing = True
            self.into = path
            self.start = path.size
            self.path: Path | None = path.path
            self._fd: int | None = path.fd
        else:
            self.path = path
            self._fd = os.open(path, _CREATE, 0o600) if path is not None else None
        self._gzip = self.path is not None and compressed(self.path)
        # Made by the first flush that is not the last: a record written in one go (a match of
        # under a second, most of them) is compressed by one call, without a compressor object.
        self._zip: Any = None
        # Record lines not yet written: msgspec.Raw (an encoded line), or a compact Decision,
        # ShortDecision or ShuffleLine (of values nothing changes, so making its line later
        # gives the same line).
        self.entries: list[Any] = []
        self._flushed = time.monotonic()

    @property
    def enabled(self) -> bool:
        return self._fd is not None

    @property
    def compact(self) -> bool:
        """Whether the referee writes this record's compact lines (SPEC.md section 8): the
        compressed records tournaments write."""
        return self._gzip

    def write(self, entry: Any) -> None:
        """Keep one record line (encoded now), written with the next :meth:`flush`."""
        if self._fd is None:
            return
        entries = self.entries
        entries.append(msgspec.Raw(encoder.encode(entry)))
        if len(entries) >= RECORD_BATCH or time.monotonic() - self._flushed >= GZIP_FLUSH_S:
            self.flush()

    def keep_shuffle(self, n: int, cards: list[str]) -> None:
        """A compact record's shuffle ``n`` (from 1), kept as the dealer makes it
        (:attr:`RecordingDealer.then`): during the action that led to it, after that action's
        line, with no event line to come before it. Only kept (as a ShuffleLine, encoded with
        the rest at the next write): nothing is written while the rules are in the middle of an
        action. (The writer's method, not the referee's: a dealer holding the match would make
        the whole match a reference cycle, left to the garbage collector when it ends.)"""
        if self._fd is not None:
            self.entries.append(ShuffleLine(n, cards))

    def flush(self, *, final: bool = False) -> None:
        """Encode, compress and write every kept line: a readable end of the file so far (a
        gzip sync point), or with ``final`` the end of the gzip stream."""
        self._flushed = time.monotonic()
        if self._fd is None or not (self.entries or final):
            return
        entries = self.entries
        data = encoder.encode_lines(entries) if entries else b""
        self.entries.clear()
        if self._gzip:
            deflate = deflate_module()
            if self._zip is None and final and deflate is not zlib:
                # All in one write: ISA-L's one-shot gzip (zlib's starts as slowly as its
                # compressobj with the default memLevel: then the object below).
                data = deflate.compress(data, GZIP_LEVEL, 16 + GZIP_WBITS)
            else:
                if self._zip is None:
                    self._zip = deflate.compressobj(
                        GZIP_LEVEL, zlib.DEFLATED, 16 + GZIP_WBITS, GZIP_MEMLEVEL
                    )
                data = self._zip.compress(data) + self._zip.flush(
                    zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH
                )
        if self.into is not None:
            self.into.write_all(data)
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def close(self) -> None:
        if self._fd is not None:
            try:
                if self.into is None or not self.into.damaged:
                    self.flush(final=True)
            finally:
                into = self.into
                if into is None:
                    os.close(self._fd)
                else:
                    into.writing = False
                    if not into.damaged:
                        self.span = (self.start, into.size - self.start)
                self._fd = None
