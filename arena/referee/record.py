"""Match records: one self-contained JSONL record per match (SPEC.md section 8), and their replay.

A record is a file of its own (``arena match --record FILE``), or one gzip member of a records
file that a tournament appends its matches' compact records to (:class:`RecordFile`), found by
its byte offset and length (the results file keeps them) or by its match id
(:func:`find_member`).

Plain records hold the full lines; compressed ones (``.gz``) the compact lines, which
:func:`record_bytes` (and so every reader here) expands to the full lines by the rules.

The referee writes a record through :class:`RecordWriter` while it plays. :func:`replay_record`
re-runs a record through the rules and raises :class:`ReplayError` naming the first line where the
record and the rules disagree (a deal, an event, a request's legal actions, an action, the result).
"""

from __future__ import annotations

import itertools
import math
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeGuard

import msgspec

from arena.games import GameError, GameSpec, GameState, OptionError, find_game
from arena.games.cards import Dealer, Rng, derive_seed
from protocol.codec import decode_from_bot
from protocol.messages import PROTOCOL_VERSION, Action

RECORD_FORMAT = 3  # what the referee writes (SPEC.md section 8)
# What the readers read: 1's compact decision arrays differ from 2's; 3 adds the short array
# of a canonical reply (ShortDecision) to 2's.
READ_FORMATS = (1, 2, 3)
RECORDED_LINE_CHARS = 1000  # how much of a bot's raw reply the record keeps
_encoder = msgspec.json.Encoder()


class Decision(msgspec.Struct, array_like=True, gc=False):
    """An ordinary decision's array line of a compact record (format 2, SPEC.md section 8), as
    the referee keeps it: msgspec encodes it as ``[seat, id, time_left_ms, us, charged_ms, text,
    action]``. Of numbers and strings only, so never tracked by the garbage collector (gc=False),
    where a tuple is until the collector's first look at it. Worth ~120 instructions per
    decision net (callgrind, 12 Vingt-down matches of the instant transport: the collector's
    visits and untracking ~-480 and the tuple's encoding -210, against this one's making,
    freeing and encoding ~+570)."""

    seat: int
    id: int
    time_left_ms: int
    us: int
    charged_ms: int
    text: str
    action: str


class ShortDecision(msgspec.Struct, array_like=True, gc=False):
    """An ordinary decision of a compact record (format 3, SPEC.md section 8) whose reply was
    the canonical line ``canonical_reply(id, index)``, in a match without a bank of time, after
    an earlier request of the same seat: ``[us, index]``. The rest of a Decision follows from
    the record (the seat to move, its previous request's id + 1, ``decision_ms``, no charge, the
    reply's text, ``legal[index]``), so it is neither kept nor encoded nor compressed: a
    record costs 1.5k-3.1k instructions fewer per decision than with Decisions alone (valgrind,
    benchmarks/record_instructions.py, the four games)."""

    us: int
    index: int


class ShuffleLine(msgspec.Struct, tag_field="type", tag="shuffle", gc=False):
    """A compact record's shuffle line as the writer keeps it, ``{"type":"shuffle","n":N,
    "cards":[...]}`` (the full record's bytes), encoded with the other kept lines in one call
    (not a dict encoded at once into a msgspec.Raw: an encoder call and two objects fewer per
    shuffle; All Fours shuffles ~6 times a match). ``cards`` is the dealer's copy of the deck,
    which nothing changes afterwards."""

    n: int
    cards: list[str]


# The usual reply without spaces, {"type":"action","id":N,"index":K}: the only reply a
# ShortDecision stands for. Of the lines the referee's IndexReply reads as that id and index, it
# and the other orders of its three keys have the fewest bytes (any space, escape, sign, repeated
# or extra key adds bytes; a number must be an integer: not 1e3). So a line so read, as short as
# it, is one of those orders: with "type" first (byte 2: t) and "id" second (byte 19: d, where
# "index" has n) it is the canonical reply. (Two bytes compared: bytes.startswith parses its
# arguments for ~0.4k instructions.)
CANONICAL_REPLY_BASE = 32  # its length less the digits of its id and index
CANONICAL_TYPE_AT, CANONICAL_ID_AT = 2, 19  # (quick_reply has them and their bytes literally)


def canonical_reply(request_id: int, index: int) -> str:
    """The text of the canonical reply choosing ``index`` for request ``request_id``."""
    return f'{{"type":"action","id":{request_id},"index":{index}}}'


class RecordingDealer(Dealer):
    """The standard dealer that also remembers every shuffled deck, for the record.

    ``marks[i]`` is how many events the match had when deck ``i`` was shuffled (once
    :meth:`watch` names the event list; shuffles before that, the first deal's, get 0), so the
    record can write each shuffle just before the events it led to. ``then``, when set, is
    called with each new deck's number (from 1) and cards (a compact record keeps the shuffle at
    once: :meth:`RecordWriter.keep_shuffle`).
    """

    def __init__(self, rng: Rng) -> None:
        super().__init__(rng)
        self.decks: list[list[str]] = []
        self.marks: list[int] = []
        self._events: list | None = None
        self.then: Callable[[int, list[str]], None] | None = None

    def watch(self, events: list) -> None:
        self._events = events

    def shuffled(self, cards: Iterable[str], count: int | None = None) -> list[str]:
        deck = super().shuffled(cards, count)
        self.decks.append(list(deck))
        self.marks.append(0 if self._events is None else len(self._events))
        if self.then is not None:
            self.then(len(self.decks), self.decks[-1])
        return deck


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
GZIP_MAGIC = b"\x1f\x8b"
HEADER_START = b'{"type":"header"'  # how every record's first line begins
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC


def ms3(ms: float) -> float:
    """Milliseconds to 0.001 ms, as records write them (round(ms, 3) costs 3x as much)."""
    return int(ms * 1000.0 + 0.5) / 1000.0


def recorded_text(line: bytes) -> str:
    """A reply line's ``text`` as records keep it: its first ``RECORDED_LINE_CHARS``. The
    referee inlines the usual case, an ordinary reply's (decoded as JSON already, so valid
    UTF-8): ``line.decode() if len(line) <= RECORDED_LINE_CHARS else recorded_text(line)``."""
    return line[:RECORDED_LINE_CHARS].decode("utf-8", "replace")


def compressed(path: Path) -> bool:
    """Whether a record at ``path`` is written gzip-compressed: its name ends in ``.gz``."""
    return path.suffix == ".gz"


RECORDS_SUFFIX = ".jsonl.gz"


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
        entries.append(msgspec.Raw(_encoder.encode(entry)))
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
        data = _encoder.encode_lines(entries) if entries else b""
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
        return _expand_if_compact(where, raw, partial)
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
    return _expand_if_compact(where, b"".join(out), partial)


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


COMPACT_MARK = b',"compact":true}'  # how a compact record's header line ends


def decode_line(line: bytes | str) -> Any:
    """One JSON line of a record; msgspec.DecodeError for anything that is not JSON, a line
    nested too deeply for the decoder included (msgspec raises RecursionError for it)."""
    try:
        return msgspec.json.decode(line)
    except RecursionError:
        raise msgspec.DecodeError("JSON nested too deeply") from None


def _expand_if_compact(path: Path | str, data: bytes, partial: bool) -> bytes:
    """``data`` itself, or for a compact record (SPEC.md section 8) the full lines it stands for."""
    first = data.split(b"\n", 1)[0]
    if not first.endswith(COMPACT_MARK) or not first.startswith(HEADER_START):
        return data
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    elif partial:
        lines.pop()  # the cut line of a record still being written: the lines up to it
    return b"".join(line + b"\n" for line in _Expander(path).run(lines, partial))


class _Expander:
    """Writes out a compact record's lines in full: the lines it holds, and between them what the
    rules derive from its header and actions (the shuffles, the deal, every event, each ordinary
    decision's request, reply and action), in the order the referee writes a full record."""

    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.out: list[bytes] = []
        self.number = 1

    def fail(self, message: str) -> NoReturn:
        raise ReplayError(f"{self.path} line {self.number}: {message} (a compact record)")

    def emit(self, entry: dict[str, Any]) -> None:
        self.out.append(_encoder.encode(entry))

    def run(self, lines: list[bytes], partial: bool = False) -> list[bytes]:
        header = lines[0]
        self.out.append(header[: -len(COMPACT_MARK)] + b"}")
        try:
            fields = decode_line(header)
            self.format = fields["format"]
            self.banked = fields["time_control"]["bank_ms"] is not None
            # each seat's limit per decision: the match's, or its own (a person's, SPEC 11)
            match_ms = fields["time_control"]["decision_ms"]
            self.decision_ms = [s.get("decision_ms", match_ms) for s in fields["seats"]]
            spec = find_game(fields["game"])
            self.dealer = RecordingDealer(Rng(fields["seed"]))
            self.state = spec.new_match(
                fields["players"],
                spec.resolve_options(fields["options"]),
                fields["seed"],
                self.dealer,
            )
        except (
            msgspec.DecodeError,
            AttributeError,
            KeyError,
            TypeError,
            ValueError,
            GameError,
        ) as error:
            self.fail(f"the header cannot start the match: {error}")
        self.dealer.watch(self.state.events)
        self.shuffles = 0
        self.kept_shuffles = 0  # the record's shuffle lines read so far
        self.routed = 0
        self.started = False  # the events of the deal routed (after any startup fault)
        self.last_ids: dict[Any, Any] = {}  # each seat's latest request id (a short array's id)
        self.emit_shuffles(0)
        self.emit({"type": "deal", "view": self.state.view(None)})
        for self.number, line in enumerate(lines[1:], 2):
            try:
                value = decode_line(line)
            except msgspec.DecodeError as error:
                self.fail(f"not JSON: {error}")
            try:
                self.line(value, line)
            except (GameError, KeyError, TypeError, ValueError, IndexError) as error:
                self.fail(f"the rules cannot follow it: {error}")
        if not partial:
            self.number = len(lines) + 1
            self.owe_no_shuffle()
        return self.out

    def owe_no_shuffle(self) -> None:
        """Every shuffle the rules made so far has its line already: a compact record keeps each
        one right after the line of the action that led to it (the first deal's after the
        header), so a line of anything else may not come while one is owed."""
        if self.kept_shuffles < len(self.dealer.decks):
            self.fail(
                f"shuffle {self.kept_shuffles + 1}'s line is missing (it comes right after the "
                "line that led to it)"
            )

    def line(self, value: Any, raw: bytes) -> None:
        if isinstance(value, dict) and value.get("type") == "shuffle":
            # Kept for readers without the rules; derived here too, and each must be there.
            n = value.get("n")
            if not (_is_int(n) and n == self.kept_shuffles + 1 <= len(self.dealer.decks)):
                self.fail(
                    f"shuffle {_short(n)} where the rules have shuffled "
                    f"{len(self.dealer.decks)} times and the record kept {self.kept_shuffles}"
                )
            if value.get("cards") != self.dealer.decks[n - 1]:
                self.fail(f"shuffle {n} differs from the rules' (seed and dealing order)")
            self.kept_shuffles = n
            if n > self.shuffles:
                self.start()
            return
        self.owe_no_shuffle()
        if isinstance(value, dict):
            kind = value.get("type")
            if kind != "fault" or self.started:
                self.start()
            if kind not in (
                "fault",
                "request",
                "reply",
                "autopilot",
                "action",
                "result",
                "stopped",
            ):
                self.fail(f"a {_short(kind)} line")
            self.out.append(raw)
            if kind == "request":
                self.last_ids[value.get("seat")] = value.get("id")
            elif kind == "action":
                self.state.apply(value["action"])
                self.route()
            return
        if not isinstance(value, list) or len(value) not in (2, 7):
            self.fail(f"expected an object or a decision array, got {_short(value)}")
        self.start()
        state = self.state
        if len(value) == 2 and not isinstance(value[1], str) and self.format >= 3:
            value = self.short_decision(value)
        seat, action = value[0], value[-1]
        if seat != state.mover:
            self.fail(f"a decision of seat {_short(seat)}, but seat {state.mover} is to move")
        legal = state.legal_actions()
        if len(value) == 2:
            self.emit(
                {"type": "autopilot", "seat": seat, "decision": state.decision, "legal": legal}
            )
            self.emit(
                {"type": "action", "seat": seat, "action": action, "by": "autopilot", "id": None}
            )
        else:
            _, request_id, time_left, ms, charged, text, _ = value
            self.last_ids[seat] = request_id
            if self.format != 1:
                ms, charged = self.format2(value)
            self.emit(
                {
                    "type": "request",
                    "seat": seat,
                    "id": request_id,
                    "decision": state.decision,
                    "legal": legal,
                    "time_left_ms": time_left,
                }
            )
            self.emit(
                {
                    "type": "reply",
                    "seat": seat,
                    "id": request_id,
                    "ms": ms,
                    "pending": request_id,
                    "charged_ms": charged,
                    "text": text,
                    "verdict": "ok",
                }
            )
            self.emit(
                {"type": "action", "seat": seat, "action": action, "by": "bot", "id": request_id}
            )
        state.apply(action)
        self.route()

    def short_decision(self, value: list) -> list:
        """A short array ``[us, index]`` (format 3) as the decision array it stands for:
        ``[seat, id, time_left_ms, us, charged_ms, text, action]`` (SPEC.md section 8)."""
        us, index = value
        state = self.state
        seat, legal = state.mover, state.legal_actions()
        if not (_is_int(index) and 0 <= index < len(legal)):
            self.fail(f"a decision's index {_short(index)}; expected 0 to {len(legal) - 1}")
        if self.banked:
            self.fail("a short decision array in a match with a bank of time")
        last_id = self.last_ids.get(seat)
        if not _is_int(last_id):
            self.fail(f"a short decision array of seat {seat}, which had no request before it")
        request_id = last_id + 1
        text = canonical_reply(request_id, index)
        return [seat, request_id, self.decision_ms[seat], us, 0, text, legal[index]]

    def format2(self, value: list) -> tuple[float, int | None]:
        """A format-2 decision array's ``ms`` and ``charged_ms`` as the full reply line has them
        (SPEC.md section 8): whole microseconds to ms, and the charge null without a bank."""
        us, charged = value[3], value[4]
        if not _is_int(us) or us < 0:
            self.fail(f"a decision's time {_short(us)}; expected whole microseconds")
        if not self.banked and charged != 0:
            self.fail(f"a decision's charge {_short(charged)}; expected 0 (no bank of time)")
        return us / 1000, charged if self.banked else None

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.route()

    def emit_shuffles(self, before_event: int) -> None:
        decks, marks = self.dealer.decks, self.dealer.marks
        while self.shuffles < len(decks) and marks[self.shuffles] <= before_event:
            self.emit({"type": "shuffle", "n": self.shuffles + 1, "cards": decks[self.shuffles]})
            self.shuffles += 1

    def route(self) -> None:
        """The lines of the events since the last action, as run_match writes them."""
        events = self.state.events
        for n in range(self.routed, len(events)):
            self.emit_shuffles(n)
            event = events[n]
            audience = None if event.audience is None else list(event.audience)
            self.emit({"type": "event", "n": n, "audience": audience, "data": event.data})
        self.routed = len(events)
        self.emit_shuffles(len(events))


def record_lines(
    path: Path, *, at: int | None = None, length: int | None = None
) -> Iterator[bytes]:
    """The lines of a record (see :func:`record_bytes`), without their newlines."""
    yield from record_bytes(path, at=at, length=length).splitlines()


class ReplayError(Exception):
    """The record and the rules disagree (or the record cannot be read); names the line."""


@dataclass
class Replay:
    """A record re-run through the rules: the header, the final state and every entry."""

    header: dict[str, Any]
    spec: GameSpec
    state: GameState
    entries: list[dict[str, Any]]
    result: dict[str, Any] | None
    faults: list[dict[str, Any]] = field(default_factory=list)
    # per seat, each of its decisions' time as the record gives it (what the results file's
    # decision_ms holds, SPEC 10.5), in order
    times: list[list[DecisionTime]] = field(default_factory=list)
    # why the match was stopped before its end (its record's last line, SPEC 11); else None
    stopped: str | None = None


@dataclass(frozen=True)
class DecisionTime:
    """How one decision of a seat ended, as its record says: the verdict of the line that ended
    it (``ok``, ``malformed``, ``too long``, ``illegal``, ``late``), or ``timeout`` / ``crash``
    when no line did; that line's ``ms`` (None: the record has no time for it, a line without
    the pending id); what the seat was allowed (``time_left_ms``) and with the margin, and what
    its bank was charged (None without a bank). ``line``: its record line, for messages."""

    ending: str
    ms: float | None
    allowed_ms: int
    limit_ms: int
    charged_ms: int | None
    line: int


def read_record(
    path: Path, *, at: int | None = None, length: int | None = None
) -> list[dict[str, Any]]:
    """All entries of a record (a file, or the member at byte ``at`` of a records file);
    ReplayError names the file and line that cannot be read."""
    where = record_where(path, at)
    try:
        lines = list(record_lines(Path(path), at=at, length=length))
    except OSError as error:
        raise ReplayError(f"{where}: cannot read: {error.strerror or error}") from None
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = decode_line(line)
        except msgspec.DecodeError as error:
            raise ReplayError(f"{where} line {number}: not JSON: {error}") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ReplayError(f'{where} line {number}: expected an object with a "type"')
        entry["_line"] = number
        entries.append(entry)
    if not entries or entries[0]["type"] != "header":
        raise ReplayError(f"{where}: the first line must be the header")
    return entries


def replay_record(path: Path, *, at: int | None = None, length: int | None = None) -> Replay:
    """Re-derive the record at ``path`` from its header and the rules, line by line (SPEC 8):
    every shuffle, the deal, every event, request, reply, fault, autopilot decision and action in
    the order the referee writes them, the fault counts and forfeits against ``max_faults``, and
    the result line. ReplayError names the first line that departs (one line, never a traceback
    for a damaged record)."""
    return _Checker(record_where(path, at), read_record(path, at=at, length=length)).run()


VERDICTS = ("ok", "stale", "malformed", "too long", "illegal", "late")
VERDICT_FAULT = {"malformed": "malformed", "too long": "malformed", "illegal": "illegal"}
VERDICT_FAULT["late"] = "timeout"
TIME_FIELDS = ("decision_ms", "bank_ms", "increment_ms", "margin_ms", "startup_ms")
_Entry = dict[str, Any]


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def forfeit_placings(
    game_placings: tuple[int, ...], forfeited: set[int], teams: tuple[int, ...] | None
) -> list[int]:
    """SPEC 6: every forfeiting seat (in team games its whole team) placed after the others,
    forfeiting ones ranked among themselves by the game's placings."""
    players = len(game_placings)
    losers = set(forfeited)
    if teams is not None:
        losing = {teams[s] for s in forfeited}
        losers = {s for s in range(players) if teams[s] in losing}
    if not losers:
        return list(game_placings)
    keys = [(1 if s in losers else 0, game_placings[s]) for s in range(players)]
    if teams is None:
        return [1 + sum(other < mine for other in keys) for mine in keys]
    team_keys = {teams[s]: keys[s] for s in range(players)}
    return [
        1 + sum(other < team_keys[teams[s]] for other in team_keys.values()) for s in range(players)
    ]


class _Checker:
    """Walks a record's lines in order, each checked against what the rules make of the header
    and the lines before it."""

    def __init__(self, path: Path | str, entries: list[_Entry]) -> None:
        self.path = path
        self.entries = entries
        self.position = 0
        self.faults: list[_Entry] = []

    # -- reading lines ---------------------------------------------------------------------------

    def fail(self, entry: _Entry | None, message: str) -> NoReturn:
        where = f"{self.path} line {entry['_line']}" if entry else f"{self.path} (at its end)"
        raise ReplayError(f"{where}: {message}")

    def peek(self) -> _Entry | None:
        return self.entries[self.position] if self.position < len(self.entries) else None

    def take(self, kind: str, what: str) -> _Entry:
        """The next line, which must be of type ``kind`` (``what`` says what should come)."""
        entry = self.peek()
        if entry is None:
            self.fail(None, f"the record ends where {what} should come")
        if entry["type"] != kind:
            self.fail(entry, f"a {entry['type']!r} line where {what} should come")
        self.position += 1
        return entry

    def want(self, entry: _Entry, name: str, expected: Any, what: str = "") -> None:
        """Field ``name`` must equal ``expected`` (compared as JSON: 1 is not true)."""
        found = entry.get(name, _MISSING)
        if found is _MISSING:
            self.fail(entry, f'field "{name}" is missing{what}')
        if _json_key(found) != _json_key(expected):
            self.fail(
                entry,
                f'field "{name}" is {_short(found)}; the rules give {_short(expected)}{what}',
            )

    def integer(self, entry: _Entry, name: str, minimum: int | None = None) -> int:
        value = entry.get(name)
        if not _is_int(value) or (minimum is not None and value < minimum):
            bound = f" >= {minimum}" if minimum is not None else ""
            self.fail(entry, f'field "{name}" is {_short(value)}; expected an integer{bound}')
        return value

    def of_type(self, entry: _Entry, name: str, kinds: tuple[type, ...], expected: str) -> Any:
        value = entry.get(name, _MISSING)
        ok = value is not _MISSING and isinstance(value, kinds)
        if ok and isinstance(value, bool) and bool not in kinds:
            ok = False
        if not ok:
            found = "missing" if value is _MISSING else _short(value)
            self.fail(entry, f'field "{name}" is {found}; expected {expected}')
        return value

    # -- the match -------------------------------------------------------------------------------

    def run(self) -> Replay:
        header = self.take("header", "the header")
        self.header(header)
        self.expect_shuffles(0)
        deal = self.take("deal", "the deal line")
        self.want(deal, "view", _json_roundtrip(self.state.view(None)), " (the deal)")
        while (entry := self.peek()) is not None and entry["type"] == "fault":
            self.position += 1
            self.fault_line(entry, kind="startup", request_id=None, seat=None)
        self.expect_routed()
        state = self.state
        while not state.is_over and not self.stopped_next():
            self.decision(state.mover)
        if self.stopped_next():
            return self.stopped()
        result = self.take("result", "the result line (the match is over)")
        self.result_line(result)
        extra = self.peek()
        if extra is not None:
            self.fail(extra, f"a {extra['type']!r} line after the result")
        return Replay(header, self.spec, state, self.entries, result, self.faults, self.times)

    def stopped_next(self) -> bool:
        entry = self.peek()
        return entry is not None and entry["type"] == "stopped"

    def stopped(self) -> Replay:
        """A match stopped from outside (SPEC 11): its last line says why, and has no result."""
        entry = self.take("stopped", "the stopped line")
        reason = self.of_type(entry, "reason", (str,), "a string: why the match was stopped")
        extra = self.peek()
        if extra is not None:
            self.fail(extra, f"a {extra['type']!r} line after the stopped line")
        return Replay(
            self.header_entry,
            self.spec,
            self.state,
            self.entries,
            None,
            self.faults,
            self.times,
            stopped=reason,
        )

    def header(self, header: _Entry) -> None:
        self.header_entry = header
        if header.get("format") not in READ_FORMATS:
            self.fail(
                header, f'field "format" is {_short(header.get("format"))}; expected 1, 2 or 3'
            )
        self.want(header, "protocol", PROTOCOL_VERSION)
        self.of_type(header, "match_id", (str,), "a string")
        if "sent_match_id" in header:  # (records before it: the bots were sent match_id)
            self.of_type(header, "sent_match_id", (str,), "a string")
        game = self.of_type(header, "game", (str,), "a game id")
        try:
            self.spec = find_game(game)
        except GameError:
            self.fail(header, f'field "game" is {_short(game)}; expected a game id')
        players = self.integer(header, "players", 1)
        options = self.of_type(header, "options", (dict,), "an object of every option")
        seed = self.integer(header, "seed", 0)
        if seed >= 2**64:
            self.fail(header, f'field "seed" is {seed}; expected an unsigned 64-bit integer')
        try:
            self.spec.check_players(players)
            resolved = self.spec.resolve_options(options)
        except (OptionError, GameError, TypeError, ValueError) as error:
            self.fail(header, str(error))
        self.want(header, "options", resolved, " (every option, resolved)")
        self.dealer = RecordingDealer(Rng(seed))
        try:
            self.state = self.spec.new_match(players, resolved, seed, self.dealer)
        except (OptionError, GameError, TypeError, ValueError) as error:
            self.fail(header, f"the rules cannot start this match: {error}")
        self.dealer.watch(self.state.events)
        seats = self.of_type(header, "seats", (list,), "a list of each seat's bot")
        teams = self.spec.teams(players)
        if len(seats) != players:
            self.fail(header, f'field "seats" lists {len(seats)} seats for {players} players')
        self.bots = []
        for index, seat in enumerate(seats):
            if not isinstance(seat, dict):
                self.fail(header, f"seats[{index}] is {_short(seat)}; expected an object")
            seat = {**seat, "_line": header["_line"]}
            self.want(seat, "seat", index, f" (seats[{index}])")
            self.bots.append(self.of_type(seat, "bot", (str,), f"the name of seat {index}'s bot"))
            if "sent_name" in seat:  # (records before it: the bots were sent the name itself)
                self.of_type(seat, "sent_name", (str,), f"the name seat {index} was sent")
            self.want(seat, "team", None if teams is None else teams[index], f" (seats[{index}])")
            if "decision_ms" in seat:  # a limit of its own (a person's, SPEC 11)
                self.integer(seat, "decision_ms", 1)
        self.teams = teams
        control = self.of_type(header, "time_control", (dict,), "an object")
        for name in TIME_FIELDS:
            value = control.get(name, _MISSING)
            if not (value is None and name == "bank_ms") and not (_is_int(value) and value >= 0):
                self.fail(header, f"time_control.{name} is {_short(value)}; expected an integer")
        if control["decision_ms"] < 1:
            self.fail(header, "time_control.decision_ms is 0; expected an integer >= 1")
        # each seat's limit per decision: the match's, or its own
        self.decision_ms = [s.get("decision_ms", control["decision_ms"]) for s in seats]
        self.margin_ms: int = control["margin_ms"]
        self.increment_ms: int = control["increment_ms"]
        # Each seat's bank as the clock books it (SPEC 5), None without one.
        self.banks: list[int | None] = [control["bank_ms"]] * players
        self.times: list[list[DecisionTime]] = [[] for _ in range(players)]
        self.max_faults = self.integer(header, "max_faults", 1)
        self.fault_counts = [0] * players
        self.forfeited: set[int] = set()
        # Seats whose last decision was a timeout without a reply: one that cut off the
        # referee's write forfeits too (SPEC 6), which the seat's next decision shows.
        self.maybe_cut: set[int] = set()
        self.last_request = [0] * players
        self.first_request = [0] * players
        # (seat, request id) -> the earliest "ms" a stale answer to it may have, and what set
        # it: when its decision ended ("timeout": its time ran out, "line": the line that ended
        # it came), then the stale lines read since ("stale": read later, received later)
        self.stale_after: dict[tuple[int, int], tuple[float, str]] = {}
        self.autopilot = Rng(derive_seed(seed, "autopilot"))
        self.routed = 0
        self.shuffles = 0

    def expect_shuffles(self, before_event: int) -> None:
        decks, marks = self.dealer.decks, self.dealer.marks
        while self.shuffles < len(decks) and marks[self.shuffles] <= before_event:
            entry = self.take("shuffle", f"shuffle {self.shuffles + 1}")
            self.want(entry, "n", self.shuffles + 1)
            self.want(entry, "cards", decks[self.shuffles], f" (shuffle {self.shuffles + 1})")
            self.shuffles += 1

    def expect_routed(self) -> None:
        """The events the last action led to, each shuffle just before the events after it."""
        events = self.state.events
        for n in range(self.routed, len(events)):
            self.expect_shuffles(n)
            entry = self.take("event", f"event {n}")
            event = events[n]
            self.want(entry, "n", n)
            audience = None if event.audience is None else list(event.audience)
            self.want(entry, "audience", audience, f" (event {n})")
            self.want(entry, "data", _json_roundtrip(event.data), f" (event {n})")
        self.routed = len(events)
        self.expect_shuffles(len(events))

    def decision(self, seat: int) -> None:
        state = self.state
        legal = state.legal_actions()
        if seat in self.maybe_cut:
            self.maybe_cut.discard(seat)
            upcoming = self.peek()
            if upcoming is not None and upcoming["type"] == "autopilot":
                self.forfeited.add(seat)  # that timeout cut off the write: it forfeited
        if seat in self.forfeited:
            entry = self.take("autopilot", f"the autopilot's decision for forfeited seat {seat}")
            self.want(entry, "seat", seat)
            self.want(entry, "decision", state.decision)
            self.want(entry, "legal", legal)
            self.action_line(seat, legal, by="autopilot", request_id=None)
            return
        request = self.take("request", f"a request to seat {seat}")
        self.want(request, "seat", seat)
        if self.last_request[seat]:  # a process's ids count up by one per request (SPEC 4.1)
            request_id = self.last_request[seat] + 1
            self.want(request, "id", request_id, f" (seat {seat}'s next request)")
        else:
            request_id = self.first_request[seat] = self.integer(request, "id", 1)
        self.last_request[seat] = request_id
        self.want(request, "decision", state.decision)
        self.want(request, "legal", legal)
        bank = self.banks[seat]
        own = self.decision_ms[seat]
        allowed = own if bank is None else min(own, bank)
        self.want(request, "time_left_ms", allowed, f" (seat {seat}'s clock, SPEC 5)")
        limit = allowed + self.margin_ms
        ending: _Entry | None = None  # the reply that ends the decision
        judged: _Judged | None = None
        while (reply := self.peek()) is not None and reply["type"] == "reply":
            self.position += 1
            judged = self.reply_line(reply, seat, request_id, legal, limit)
            if reply["verdict"] != "stale":
                ending = reply
                break
        if ending is None and self.stopped_next():
            return  # stopped while this request waited (run() takes the stopped line)
        if ending is not None:
            self.book(seat, ending, allowed, limit)
            self.stale_after[seat, request_id] = (ending.get("ms") or 0, "line")
        if ending is not None and ending["verdict"] == "ok":
            chosen = self.action_line(seat, legal, by="bot", request_id=request_id)
            if judged is not None and judged.action != chosen:
                self.fail(
                    ending, f"the reply says {judged.action!r}, but the action line has {chosen!r}"
                )
            return
        fault = self.take("fault", f"the fault of seat {seat} at request {request_id}")
        if ending is None:
            kinds: tuple[str, ...] = ("timeout", "crash")
        else:
            kinds = (VERDICT_FAULT[ending["verdict"]],)
        self.fault_line(fault, kind=kinds, request_id=request_id, seat=seat)
        if ending is None:
            kind = fault["kind"]
            if kind == "timeout":  # charged what it was allowed (SPEC 5)
                self.charge(seat, allowed)
                self.stale_after[seat, request_id] = (limit, "timeout")
                if not fault["forfeited"]:
                    self.maybe_cut.add(seat)
            self.times[seat].append(DecisionTime(kind, None, allowed, limit, None, fault["_line"]))
        self.action_line(seat, legal, by="autopilot", request_id=None)

    def charge(self, seat: int, charged: int) -> None:
        bank = self.banks[seat]
        if bank is not None:
            self.banks[seat] = bank - charged + self.increment_ms

    def book(self, seat: int, entry: _Entry, allowed: int, limit: int) -> None:
        """The clock of the line that ended a decision (SPEC 5): in time exactly when it came
        within ``limit`` ms (``allowed`` and the margin), and with a bank, charged
        ``min(allowed, ceil(used))`` (the whole time allowed when late), then the increment.
        ``ms`` is kept to 0.001 ms, so the charge may be either ceiling of the times it rounds."""
        verdict, ms = entry["verdict"], entry.get("ms")
        late = verdict == "late"
        if ms is not None and late and ms < limit:
            self.fail(entry, f"a 'late' reply after {ms} ms, within the {limit} ms allowed")
        if ms is not None and not late and ms > limit:
            self.fail(
                entry,
                f"a {verdict!r} reply after {ms} ms, past the {limit} ms allowed (with the "
                "margin): it is late (SPEC 5)",
            )
        charged = entry.get("charged_ms")
        if self.banks[seat] is None:
            self.want(entry, "charged_ms", None, " (no bank of time)")
        else:
            if not (_is_int(charged) and 0 <= charged <= allowed):
                self.fail(
                    entry, f'field "charged_ms" is {_short(charged)}; expected 0 to {allowed}'
                )
            if late:
                self.want(entry, "charged_ms", allowed, " (a late line is charged all it had)")
            elif ms is not None:
                lowest, highest = charges(ms, allowed)
                if not lowest <= charged <= highest:
                    expected = lowest if lowest == highest else f"{lowest} or {highest}"
                    self.fail(
                        entry,
                        f'field "charged_ms" is {charged}; the clock charges {expected} for '
                        f"{ms} ms (SPEC 5)",
                    )
            self.charge(seat, charged)
        self.times[seat].append(DecisionTime(verdict, ms, allowed, limit, charged, entry["_line"]))

    def reply_line(
        self, entry: _Entry, seat: int, request_id: int, legal: list[str], limit: int
    ) -> _Judged | None:
        """Check one reply line; what its text says when the text is the whole line."""
        self.want(entry, "seat", seat)
        self.want(entry, "pending", request_id, " (the request being waited for)")
        verdict = entry.get("verdict")
        if verdict not in VERDICTS:
            self.fail(entry, f'field "verdict" is {_short(verdict)}; expected one of {VERDICTS}')
        written = entry.get("id", _MISSING)
        if written is None:
            pass
        elif not _is_int(written):
            self.fail(entry, f'field "id" is {_short(written)}; expected an integer or null')
        text = self.of_type(entry, "text", (str,), "the line received")
        said = entry.get("stderr", _MISSING)
        if said is not _MISSING and not (isinstance(said, str) and said):
            self.fail(entry, f'field "stderr" is {_short(said)}; expected the bot\'s stderr text')
        for name in ("ms", "charged_ms"):
            value = entry.get(name, _MISSING)
            if value is not None and not (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
            ):
                self.fail(entry, f'field "{name}" is {_short(value)}; expected a number or null')
        judged = None if verdict == "too long" else _judge_line(text, request_id, legal)
        if judged is not None:
            # The whole line is in the record: what the referee makes of it follows (SPEC 6).
            self.want(entry, "id", judged.id, " (the id the line names)")
            if judged.verdict == "stale" or verdict == "stale":
                self.want(entry, "verdict", judged.verdict, " (the id the line names)")
            elif verdict != "late" and verdict != judged.verdict:
                self.fail(entry, f"the line is {judged.verdict!r} (SPEC 6), not {verdict!r}")
        if verdict == "too long" and written is not None:
            self.fail(entry, "a 'too long' line has no id (it was never read as JSON)")
        if verdict in ("ok", "illegal") and written != request_id:
            self.fail(entry, f"a {verdict!r} reply to request {written}, not {request_id}")
        # A line after the time ran out is late whatever it is (an over-long or malformed line
        # has no id, a later id is no answer either), but for a stale one (an earlier id).
        if verdict == "late" and written is not None and written < request_id:
            self.fail(entry, f"a 'late' reply naming earlier request {written} (that is stale)")
        if verdict == "stale" and not (_is_int(written) and written < request_id):
            self.fail(entry, f"a stale reply must name an earlier request, not {written}")
        # "ms" is measured from the request the line names: none when it names none sent to
        # this seat in this match (no id, a later one, or one of an earlier match).
        sent = _is_int(written) and self.first_request[seat] <= written <= request_id
        ms = entry.get("ms")
        if sent and ms is None:
            self.fail(entry, f'field "ms" is null; expected the time since request {written}')
        if not sent and ms is not None:
            self.fail(entry, f'field "ms" is {_short(ms)}; expected null (no request of its id)')
        if verdict == "stale":
            self.want(entry, "charged_ms", None, " (a stale line is not charged)")
            if ms is not None:
                key = (seat, written)
                after, why = self.stale_after.get(key, (0, "line"))
                if ms < after:
                    self.fail(entry, _stale_too_soon(written, ms, after, why))
                self.stale_after[key] = (ms, "stale")
        return judged

    def fault_line(
        self,
        entry: _Entry,
        *,
        kind: str | tuple[str, ...],
        request_id: int | None,
        seat: int | None,
    ) -> None:
        kinds = (kind,) if isinstance(kind, str) else kind
        if entry.get("kind") not in kinds:
            self.fail(
                entry, f'field "kind" is {_short(entry.get("kind"))}; expected {" or ".join(kinds)}'
            )
        if seat is None:  # a startup fault: any seat, once
            seat = self.integer(entry, "seat", 0)
            if seat >= len(self.bots) or seat in self.forfeited:
                self.fail(entry, f"a startup fault for seat {seat}, which cannot have one")
        self.want(entry, "seat", seat)
        self.want(entry, "bot", self.bots[seat])
        self.want(entry, "id", request_id)
        self.of_type(entry, "message", (str,), "the fault's reason")
        self.fault_counts[seat] += 1
        forfeits = entry["kind"] in ("crash", "startup") or (
            self.fault_counts[seat] >= self.max_faults
        )
        self.want(
            entry, "forfeited", forfeits, f" (fault {self.fault_counts[seat]} of seat {seat})"
        )
        if forfeits:
            self.forfeited.add(seat)
        self.faults.append(entry)

    def action_line(self, seat: int, legal: list[str], *, by: str, request_id: int | None) -> str:
        what = "the autopilot's action" if by == "autopilot" else f"seat {seat}'s action"
        entry = self.take("action", what)
        self.want(entry, "seat", seat)
        self.want(entry, "by", by)
        self.want(entry, "id", request_id)
        action = entry.get("action")
        if not isinstance(action, str) or action not in legal:
            explained = self.state.explain_illegal(action) if isinstance(action, str) else ""
            self.fail(entry, f"action {_short(action)} by seat {seat} is illegal {explained}")
        if by == "autopilot":
            chosen = legal[self.autopilot.below(len(legal))]
            if action != chosen:
                self.fail(
                    entry,
                    f"the autopilot's move for seat {seat} is {chosen!r} (SPEC section 6), "
                    f"not {action!r}",
                )
        self.state.apply(action)
        self.expect_routed()
        return action

    def result_line(self, entry: _Entry) -> None:
        outcome = self.state.result()
        self.want(entry, "scores", list(outcome.scores))
        self.want(entry, "game_placings", list(outcome.placings))
        # A seat whose last decision was a timeout without a reply may have forfeited by it
        # (its write cut off, SPEC 6): only the result says so, when no decision of it followed.
        listed = entry.get("forfeited")
        if isinstance(listed, list) and all(_is_int(seat) for seat in listed):
            self.forfeited |= set(listed) & self.maybe_cut
        forfeited = sorted(self.forfeited)
        self.want(entry, "forfeited", forfeited)
        placings = forfeit_placings(tuple(outcome.placings), self.forfeited, self.teams)
        self.want(entry, "placings", placings, " (forfeits placed last, SPEC 6)")
        self.want(entry, "teams", None if outcome.teams is None else list(outcome.teams))
        self.want(entry, "termination", "completed")
        self.want(entry, "faults", len(self.faults), " (the fault lines)")
        duration = entry.get("duration_s")
        if not isinstance(duration, (int, float)) or isinstance(duration, bool) or duration < 0:
            self.fail(entry, f'field "duration_s" is {_short(duration)}; expected seconds')


_MISSING = object()


def _json_key(value: Any) -> bytes:
    """A value as canonical JSON (keys sorted), so that 1 and true, or 1 and 1.0, differ."""
    return _sorted_encoder.encode(value)


_sorted_encoder = msgspec.json.Encoder(order="sorted")


def _short(value: Any) -> str:
    text = _encoder.encode(value).decode() if value is not _MISSING else "missing"
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class _Judged:
    """What the referee makes of a whole reply line, its time aside (SPEC 5, 6): ``verdict``
    (``ok``, ``stale``, ``malformed`` or ``illegal``), the ``id`` it names (None: none read),
    and for ``ok`` the action it chose."""

    verdict: str
    id: int | None
    action: str | None = None


REPLACED = "\ufffd"  # what recorded_text puts for bytes that are not UTF-8


def _stale_too_soon(request_id: int, ms: float, after: float, why: str) -> str:
    """Why a stale answer to ``request_id`` cannot come ``ms`` after it: ``after`` ms had to pass
    first, set by ``why`` (_Checker.stale_after)."""
    if why == "timeout":
        # The referee called that timeout before the request's time was up. An arena before
        # SPEC 5 said when a timeout is called did so when it was held up past the deadline of
        # the request's write, on a busy machine: its records show it thus.
        return (
            f"request {request_id}'s timeout was called early: a stale answer to it came {ms} ms "
            f"after it, within its {after} ms (SPEC 5: a timeout is called only once that time "
            "is up; an arena before that rule called one early when writing the request had "
            "waited past its deadline on a busy machine)"
        )
    ended = "the line that ended its decision" if why == "line" else "an earlier answer to it"
    return f"a stale answer {ms} ms after request {request_id}, before {ended} ({after} ms)"


def _judge_line(text: str, pending: int, legal: list[str]) -> _Judged | None:
    """A reply line judged as the referee judges it (match.read_reply) for request ``pending``
    with actions ``legal``, from the record's ``text``; None when the text may not be the
    whole line (cut at RECORDED_LINE_CHARS bytes, or with bytes that were not UTF-8)."""
    raw = text.encode()
    if len(raw) >= RECORDED_LINE_CHARS or REPLACED in text:
        return None
    try:
        message = decode_from_bot(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _Judged("malformed", None)
    if not isinstance(message, Action):
        return _Judged("malformed", None)
    if message.id < pending:
        return _Judged("stale", message.id)
    if message.id > pending or (message.action is msgspec.UNSET) == (
        message.index is msgspec.UNSET
    ):
        return _Judged("malformed", message.id)
    if message.index is not msgspec.UNSET:
        if 0 <= message.index < len(legal):
            return _Judged("ok", message.id, legal[message.index])
        return _Judged("illegal", message.id)
    if message.action in legal:
        return _Judged("ok", message.id, message.action)
    return _Judged("illegal", message.id)


def charges(ms: float, allowed: int) -> tuple[int, int]:
    """The least and most a bank may be charged for a line recorded ``ms`` after its request
    (SPEC 5: ``min(allowed, ceil(used))`` of the measured time, which ``ms`` rounds to 0.001)."""
    return tuple(  # type: ignore[return-value]
        min(allowed, max(0, math.ceil(used - 1e-6))) for used in (ms - 0.0005, ms + 0.0005)
    )


def _json_roundtrip(data: Any) -> Any:
    """``data`` as it reads back from JSON (tuples become lists), for comparisons."""
    return msgspec.json.decode(_encoder.encode(data))
