"""Match records: one self-contained JSONL file per match (SPEC.md section 8), and their replay.

The referee writes a record through :class:`RecordWriter` while it plays. :func:`replay_record`
re-runs a record through the rules and raises :class:`ReplayError` naming the first line where the
record and the rules disagree (a deal, an event, a request's legal actions, an action, the result).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena.games import GameSpec, GameState, OptionError, find_game
from arena.games.cards import Dealer, Rng, derive_seed

RECORD_FORMAT = 1
_encoder = msgspec.json.Encoder()


class RecordingDealer(Dealer):
    """The standard dealer that also remembers every shuffled deck, for the record.

    ``marks[i]`` is how many events the match had when deck ``i`` was shuffled (once
    :meth:`watch` names the event list; shuffles before that, the first deal's, get 0), so the
    record can write each shuffle just before the events it led to.
    """

    def __init__(self, rng: Rng) -> None:
        super().__init__(rng)
        self.decks: list[list[str]] = []
        self.marks: list[int] = []
        self._events: list | None = None

    def watch(self, events: list) -> None:
        self._events = events

    def shuffled(self, cards: Iterable[str], count: int | None = None) -> list[str]:
        deck = super().shuffled(cards, count)
        self.decks.append(list(deck))
        self.marks.append(0 if self._events is None else len(self._events))
        return deck


GZIP_LEVEL = 1  # the fastest; level 6 takes 3x its CPU for files 30% smaller (benchmarks/records.py)
GZIP_CHUNK = 64 * 1024  # record bytes compressed and written at a time
GZIP_FLUSH_S = 1.0  # at most this long before written lines reach the file (a live match view)
GZIP_MAGIC = b"\x1f\x8b"


def compressed(path: Path) -> bool:
    """Whether a record at ``path`` is written gzip-compressed: its name ends in ``.gz``."""
    return path.suffix == ".gz"


class RecordWriter:
    """Appends record lines to a file (or keeps nothing when ``path`` is None).

    A path ending in ``.gz`` gets a gzip file of the same lines (what tournaments write: a
    seventh of the size; ``gzip -dc`` reads it). Lines are compressed and written as each 64 kB
    of them is complete (or a second has passed, for whoever watches the running match), and
    the rest at :meth:`close`, so a record costs about one compression call per 64 kB, not
    one per line.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file = open(path, "wb") if path is not None else None
        self._zip = (
            zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            if path is not None and compressed(path)
            else None
        )
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._flushed = time.monotonic()

    @property
    def enabled(self) -> bool:
        return self._file is not None

    def write(self, entry: dict[str, Any]) -> None:
        if self._file is None:
            return
        line = _encoder.encode(entry) + b"\n"
        if self._zip is None:
            self._file.write(line)
            return
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes >= GZIP_CHUNK:
            self._compress()
        elif time.monotonic() - self._flushed >= GZIP_FLUSH_S:
            self._compress()  # a slow match: let readers of the running match see its lines
            self._file.write(self._zip.flush(zlib.Z_SYNC_FLUSH))
            self._file.flush()
            self._flushed = time.monotonic()

    def _compress(self) -> None:
        assert self._file is not None and self._zip is not None
        self._file.write(self._zip.compress(b"".join(self._pending)))
        self._pending.clear()
        self._pending_bytes = 0

    def close(self) -> None:
        if self._file is not None:
            try:
                if self._zip is not None:
                    self._compress()
                    self._file.write(self._zip.flush())
            finally:
                self._file.close()
                self._file = None


def record_bytes(path: Path, *, partial: bool = False) -> bytes:
    """The content of a record file as the referee wrote it, plain or gzip-compressed alike
    (recognised by its first bytes, whatever its name). ``partial``: a record still being
    written, of which a compressed one holds the lines up to its last flush (a cut line at the
    end is the caller's to drop). OSError when it cannot be read; ReplayError for a damaged, or
    (unless ``partial``) cut, compressed file."""
    raw = Path(path).read_bytes()
    if raw[:2] != GZIP_MAGIC:
        return raw
    out = []
    try:
        while raw:
            unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(unzip.decompress(raw))
            if not unzip.eof:
                if partial:
                    break
                raise ReplayError(f"{path}: a cut gzip record (it ends before its last line)")
            raw = unzip.unused_data
    except zlib.error as error:
        raise ReplayError(f"{path}: a damaged gzip record: {error}") from None
    return b"".join(out)


def record_lines(path: Path) -> Iterator[bytes]:
    """The lines of a record file (see :func:`record_bytes`), without their newlines."""
    yield from record_bytes(path).splitlines()


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


def read_record(path: Path) -> list[dict[str, Any]]:
    """All entries of a record file; ReplayError names the file and line that cannot be read."""
    try:
        lines = list(record_lines(Path(path)))
    except OSError as error:
        raise ReplayError(f"{path}: cannot read: {error.strerror or error}") from None
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = msgspec.json.decode(line)
        except msgspec.DecodeError as error:
            raise ReplayError(f"{path} line {number}: not JSON: {error}") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ReplayError(f'{path} line {number}: expected an object with a "type"')
        entry["_line"] = number
        entries.append(entry)
    if not entries or entries[0]["type"] != "header":
        raise ReplayError(f"{path}: the first line must be the header")
    return entries


def replay_record(path: Path) -> Replay:
    """Re-run the record at ``path`` through the rules, checking every step."""
    entries = read_record(path)
    header = entries[0]
    where = f"{path} line 1"
    try:
        spec = find_game(str(header["game"]))
        dealer = RecordingDealer(Rng(int(header["seed"])))
        state = spec.new_match(
            int(header["players"]), header["options"], int(header["seed"]), dealer
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ReplayError(f"{where}: header is missing or has a bad field: {error}") from None
    except OptionError as error:
        raise ReplayError(f"{where}: {error}") from None
    seats = header.get("seats")
    if not (
        isinstance(seats, list)
        and len(seats) == state.players
        and all(isinstance(s, dict) and "seat" in s and "bot" in s for s in seats)
    ):
        raise ReplayError(f'{where}: header field "seats" must list each seat\'s bot')
    result = None
    faults = []
    autopilot = Rng(derive_seed(int(header["seed"]), "autopilot"))
    for entry in entries[1:]:
        kind = entry["type"]
        where = f"{path} line {entry['_line']}"
        if kind == "shuffle":
            n = entry.get("n", 0)
            if not (1 <= n <= len(dealer.decks)) or dealer.decks[n - 1] != entry.get("cards"):
                raise ReplayError(f"{where}: shuffle {n} differs from what the seed gives")
        elif kind == "deal":
            if entry.get("view") != _json_roundtrip(state.view(None)):
                raise ReplayError(f"{where}: the deal differs from what the seed gives")
        elif kind == "event":
            n = entry.get("n", -1)
            if not (0 <= n < len(state.events)):
                raise ReplayError(f"{where}: event {n} does not happen under the rules")
            event = state.events[n]
            audience = None if event.audience is None else list(event.audience)
            if entry.get("audience") != audience or entry.get("data") != _json_roundtrip(
                event.data
            ):
                raise ReplayError(
                    f"{where}: event {n} differs: recorded {entry.get('data')}, "
                    f"rules give {event.data} to {audience or 'everyone'}"
                )
        elif kind in ("request", "autopilot"):
            what = f"request {entry.get('id')}" if kind == "request" else "autopilot decision"
            if entry.get("seat") != state.seat_to_move:
                raise ReplayError(
                    f"{where}: {what} goes to seat {entry.get('seat')}, "
                    f"but the rules have seat {state.seat_to_move} to move"
                )
            if (
                entry.get("legal") != state.legal_actions()
                or entry.get("decision") != state.decision
            ):
                raise ReplayError(
                    f"{where}: {what}: recorded decision/legal "
                    f"actions differ from the rules' {state.decision} "
                    f"{state.legal_actions()}"
                )
        elif kind == "action":
            seat, action = entry.get("seat"), entry.get("action")
            if seat != state.seat_to_move:
                raise ReplayError(
                    f"{where}: action {action!r} by seat {seat}, but the rules have "
                    f"seat {state.seat_to_move} to move"
                )
            legal = state.legal_actions()
            if action not in legal:
                raise ReplayError(
                    f"{where}: action {action!r} by seat {seat} is illegal: "
                    f"{state.explain_illegal(action)}"
                )
            if entry.get("by") == "autopilot":
                chosen = legal[autopilot.below(len(legal))]
                if action != chosen:
                    raise ReplayError(
                        f"{where}: the autopilot's move for seat {seat} is "
                        f"{chosen!r} (SPEC section 6), not {action!r}"
                    )
            state.apply(action)
        elif kind == "fault":
            faults.append(entry)
        elif kind == "result":
            result = entry
    where = f"{path} (result)"
    if not state.is_over:
        raise ReplayError(
            f"{where}: the record ends before the match is over (seat {state.seat_to_move} to move)"
        )
    for n in range(len(state.events)):
        if not any(e["type"] == "event" and e.get("n") == n for e in entries):
            raise ReplayError(
                f"{where}: event {n} ({state.events[n].data}) is missing from the record"
            )
    if result is None:
        raise ReplayError(f"{where}: the record has no result line")
    game_result = state.result()
    if result.get("scores") != list(game_result.scores) or result.get("game_placings") != list(
        game_result.placings
    ):
        raise ReplayError(
            f"{path} line {result['_line']}: recorded scores {result.get('scores')} "
            f"differ from the rules' {list(game_result.scores)}"
        )
    return Replay(header, spec, state, entries, result, faults)


def _json_roundtrip(data: Any) -> Any:
    """``data`` as it reads back from JSON (tuples become lists), for comparisons."""
    return msgspec.json.decode(_encoder.encode(data))
