"""What a match record is (SPEC.md section 8): its format numbers, the compact lines the
referee keeps, the canonical reply, the dealer that remembers its shuffles, how a record's
first line and a compact record's header look, and the error every reader raises."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeGuard

import msgspec

from arena.games.cards import Dealer, Rng

RECORD_FORMAT = 3  # what the referee writes (SPEC.md section 8)
# What the readers read: 1's compact decision arrays differ from 2's; 3 adds the short array
# of a canonical reply (ShortDecision) to 2's.
READ_FORMATS = (1, 2, 3)
RECORDED_LINE_CHARS = 1000  # how much of a bot's raw reply the record keeps
encoder = msgspec.json.Encoder()  # the one encoder of record lines


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


GZIP_MAGIC = b"\x1f\x8b"
HEADER_START = b'{"type":"header"'  # how every record's first line begins


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


COMPACT_MARK = b',"compact":true}'  # how a compact record's header line ends


def decode_line(line: bytes | str) -> Any:
    """One JSON line of a record; msgspec.DecodeError for anything that is not JSON, a line
    nested too deeply for the decoder included (msgspec raises RecursionError for it)."""
    try:
        return msgspec.json.decode(line)
    except RecursionError:
        raise msgspec.DecodeError("JSON nested too deeply") from None


class ReplayError(Exception):
    """The record and the rules disagree (or the record cannot be read); names the line."""


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


MISSING = object()  # a field a line does not have


def short(value: Any) -> str:
    """A value as messages quote it: its JSON, cut to 80 characters."""
    text = encoder.encode(value).decode() if value is not MISSING else "missing"
    return text if len(text) <= 80 else text[:77] + "..."
