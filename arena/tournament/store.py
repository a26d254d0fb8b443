"""The results file of a tournament: SQLite, one file per tournament. Only this module touches it.

Tables::

    meta(key, value)        app = "trick-arena-results", schema = "2", name, fingerprint,
                            definition (JSON), created (UTC ISO time), match_id_key (the
                            key of the match ids sent to bots)
    matches(match_id, ...)  one row per match played to its end ("completed") or cut by the
                            match time limit ("aborted", replayed on the next run); ``seq``
                            numbers the saves, so "stored since" is one indexed range
    faults(match_id, ...)   the faults of a match, deleted and written with it
    fold_state(name, seq, state)  a cache: the standings fold over every match stored up to
                            ``seq`` (arena.tournament.standings serialises it); deleting it
                            only costs a refold

Every finished match is written in one transaction with its faults, so a killed run leaves each
match either fully stored or absent. The file runs in WAL mode: readers (``arena standings``) do
not block the running tournament.

Errors are :class:`StoreError` with one line naming the file: not a database, a database of
something else, or a tournament definition that changed since the file was filled.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from arena.referee.results import FaultRecord
from arena.referee.results import fault_reason as fault_reason  # render/terminal.py reads it here
from arena.tournament.seal import DealSecret, SealState

APP = "trick-arena-results"
SCHEMA_VERSION = "2"  # 2: matches keyed by content (match_key), current or not
MATCH_ID_KEY = "match_id_key"  # meta: the key of the match ids sent to bots (hex)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_key   TEXT PRIMARY KEY,   -- what the match is, by content (schedule.match_key)
    match_id    TEXT NOT NULL,      -- where it sat in the schedule when played, for people
    game        TEXT NOT NULL,      -- the game's label in the tournament
    game_id     TEXT NOT NULL,
    table_no    INTEGER NOT NULL,
    deal        INTEGER NOT NULL,
    rotation    INTEGER NOT NULL,
    seed        TEXT NOT NULL,      -- unsigned 64-bit, beyond SQLite's signed INTEGER
    players     INTEGER NOT NULL,
    options     TEXT NOT NULL,      -- JSON object
    bots        TEXT NOT NULL,      -- JSON list: bot name per seat
    scores      TEXT NOT NULL,      -- JSON lists per seat from here on
    placings    TEXT NOT NULL,
    teams       TEXT,
    forfeited   TEXT NOT NULL,
    decision_ms TEXT NOT NULL,      -- JSON: per seat, each decision's time in ms
    status      TEXT NOT NULL CHECK (status IN ('completed', 'aborted')),
    reason      TEXT NOT NULL,      -- the referee's termination, or why the match was aborted
    record_path TEXT,
    duration_s  REAL NOT NULL,
    finished_at TEXT NOT NULL,
    current     INTEGER NOT NULL,   -- 1: a match of the latest definition run; 0: of an older one
    referee     TEXT,               -- JSON: the referee's latency and the load (added columns)
    seq         INTEGER,            -- the order rows were stored in (grows with every save)
    record_at   INTEGER,            -- where the record starts in record_path, a records file of
    record_length INTEGER           -- many matches, and its length (NULL: the file is its own)
);
CREATE TABLE IF NOT EXISTS faults (
    match_key  TEXT NOT NULL REFERENCES matches(match_key) ON DELETE CASCADE,
    seat       INTEGER NOT NULL,
    bot        TEXT NOT NULL,
    kind       TEXT NOT NULL,
    request_id INTEGER,
    message    TEXT NOT NULL,
    cause      TEXT,                -- (added columns; NULL: read from the kind and message)
    forfeits   INTEGER
);
CREATE INDEX IF NOT EXISTS faults_by_match ON faults(match_key);
"""
# Columns added after this schema first shipped: older files get them when opened for a run (NULL
# in their old rows), and are read without them.
ADDED_COLUMNS = (
    ("matches", "referee", "TEXT"),
    ("matches", "record_at", "INTEGER"),
    ("matches", "record_length", "INTEGER"),
    ("faults", "cause", "TEXT"),
    ("faults", "forfeits", "INTEGER"),
)
MATCH_COLUMNS = (
    "match_key, match_id, game, game_id, table_no, deal, rotation, seed, players, options, bots, "
    "scores, placings, teams, forfeited, decision_ms, status, reason, record_path, duration_s, "
    "finished_at, current, referee, record_at, record_length"
)

# Added to schema 1 without changing its number (older arenas still read the file): ``seq`` on
# matches and the fold_state table. A file from before them gains them when a run opens it.
SEQ_SCHEMA = """
CREATE INDEX IF NOT EXISTS matches_by_seq ON matches(seq);
CREATE TABLE IF NOT EXISTS fold_state (name TEXT PRIMARY KEY, seq INTEGER NOT NULL, state BLOB);
CREATE INDEX IF NOT EXISTS matches_by_id ON matches(match_id);
"""
# (matches_by_id: the web pages read one match, or one deal's rotations, by id; a file last run
# by an older arena is read without it, a full scan per page)


FAULTS_BY_KEY_UP_TO = 20000  # rows read at once up to which their faults are looked up by key
# The seal of a secret seed in `meta` (SPEC 10.5): the commitment, public from the start; the
# seed and salt, secret until the tournament ends; then the same, revealed.
META_COMMITMENT = "commitment"
META_SECRET = "seed_secret"
META_REVEALED = "seed_revealed"


ASIDE_FOLDER = "set-aside"  # --restart keeps what it replaces under <output>/set-aside/<time>/


@dataclass(frozen=True)
class SetAside:
    """What ``--restart`` kept of a results file before starting it afresh: a copy of the file
    (its record names pointing at the records moved beside it) and the output's records and
    logs, in a folder of their own named by the time (SPEC 10.4)."""

    folder: Path
    results: Path
    matches: int

    def line(self) -> str:
        return (
            f"--restart: set the {self.matches} stored matches of {self.results.name} aside in "
            f"{self.folder} (with its records and logs; `arena standings {self.results}` and "
            "`arena serve` read them there); this run starts afresh"
        )


class StoreError(Exception):
    """A results file that cannot be used, with one line saying why and what to do."""


@dataclass(frozen=True)
class StoredMatch:
    """One match as stored: where it sits in the schedule and what came of it."""

    match_id: str
    game: str
    game_id: str
    table: int
    deal: int
    rotation: int
    seed: int
    players: int
    options: Mapping[str, Any]
    bots: tuple[str, ...]
    scores: tuple[int, ...]
    placings: tuple[int, ...]
    teams: tuple[int, ...] | None
    forfeited: tuple[int, ...]
    faults: tuple[FaultRecord, ...]
    decision_ms: tuple[tuple[float, ...], ...]
    status: str = "completed"
    reason: str = "completed"
    record_path: str | None = None
    duration_s: float = 0.0
    key: str = ""  # the scheduled match's content key; "" = its match_id
    # {"p50_ms", "p99_ms", "max_ms", "load_per_core"}: the referee's latency per decision and the
    # machine's load per core at the end (None for matches stored before they were kept)
    referee: Mapping[str, float | None] | None = None
    # (byte offset, length) of the record in record_path, a records file of many matches (SPEC
    # 8); None: record_path is the match's own file
    record_span: tuple[int, int] | None = None

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def match_key(self) -> str:
        return self.key or self.match_id


_decode_json = msgspec.json.Decoder().decode


def _loads(text: str) -> Any:
    """A JSON column: msgspec's decoder (about 3x json's), json's for what it refuses (NaN or a
    lone surrogate, which json.dumps may have written)."""
    try:
        return _decode_json(text)
    except msgspec.DecodeError:
        return json.loads(text)


def _match_of_row(
    row: tuple[Any, ...], faults: dict[str, list[FaultRecord]], folder: str
) -> StoredMatch:
    """A stored match from a row of ResultStore._MATCH_COLUMNS and the ADDED_COLUMNS, its
    record's path taken from ``folder``, the results file's, when it is relative."""
    (
        _rowid,
        key,
        match_id,
        game,
        game_id,
        table_no,
        deal,
        rotation,
        seed,
        players,
        options,
        bots,
        scores,
        placings,
        teams,
        forfeited,
        decision_ms,
        status,
        reason,
        record_path,
        duration_s,
        referee_json,
        record_at,
        record_length,
    ) = row
    return StoredMatch(
        match_id=match_id,
        game=game,
        game_id=game_id,
        table=table_no,
        deal=deal,
        rotation=rotation,
        seed=int(seed),
        players=players,
        options=_loads(options),
        bots=tuple(_loads(bots)),
        scores=tuple(_loads(scores)),
        placings=tuple(_loads(placings)),
        teams=None if teams is None else tuple(_loads(teams)),
        forfeited=tuple(_loads(forfeited)),
        faults=tuple(faults.get(key, ())),
        decision_ms=tuple(tuple(seat) for seat in _loads(decision_ms)),
        status=status,
        reason=reason,
        record_path=None
        if record_path is None
        else os.path.normpath(os.path.join(folder, record_path)),
        duration_s=duration_s,
        key=key,
        referee=None if referee_json is None else _loads(referee_json),
        record_span=None if record_at is None else (record_at, record_length),
    )


SQLITE_MAGIC = b"SQLite format 3\x00"  # how every SQLite file begins


def is_results_file(path: Path) -> bool:
    """Whether ``path`` is an SQLite file (a results file, unless it is someone else's)."""
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


class ResultStore:
    """An open results file. Use :meth:`open_for_run` to play into it, :meth:`open_read` to read."""

    def __init__(self, path: Path, connection: sqlite3.Connection, lock: int | None = None) -> None:
        self.path = path
        self._db = connection
        self._lock = lock  # a file descriptor holding flock(LOCK_EX) while we write
        self._seq_known: bool | None = None
        self.aside: SetAside | None = None  # what --restart set aside when it opened the file
        # Records are named relative to the results file's folder, so a tournament's folder
        # moved whole keeps its replays (an older arena's absolute names read as they are).
        self._folder = os.path.dirname(os.path.abspath(path))

    def _relative(self, record_path: str | None) -> str | None:
        """How a row names a record: from the results file's folder."""
        if record_path is None:
            return None
        return os.path.relpath(os.path.abspath(record_path), self._folder)

    # -- opening ---------------------------------------------------------------------------------

    @classmethod
    def open_for_run(
        cls,
        path: str | Path,
        *,
        name: str,
        fingerprint: str,
        definition: Mapping[str, Any],
        restart: bool = False,
        output: Path | None = None,
        settle: Callable[[ResultStore], tuple[str, Mapping[str, Any]]] | None = None,
    ) -> ResultStore:
        """Open or create the file of a tournament, locked against a second tournament writing
        to it. An existing file may hold an earlier definition of the same tournament (matches
        are kept by content: :meth:`set_schedule`), but not one in which a bot of the same name
        and version ran another program, unless ``restart``, which sets its matches aside (a
        copy under ``output``'s ``set-aside/`` folder, with the output's records and logs:
        :attr:`aside`) and starts the file afresh (only ever a Trick Arena results file of
        this tournament).

        ``settle(store)``, given, is called once the file is known to be this tournament's and
        before its definition is replaced: it reads what the file keeps (its seed's seal) and
        gives the fingerprint and definition to store, or raises StoreError to refuse the run
        with nothing changed."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create it: {exc.strerror or exc}") from None
        keep_private(path, lock)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            raise StoreError(
                f"{path}: another arena tournament is writing to it; wait for it or stop it"
            ) from None
        try:
            store = cls(path, _connect(path, read_only=False), lock=lock)
        except BaseException:
            os.close(lock)
            raise
        try:
            meta = store._meta(any_schema=restart)  # before anything is written to the file
            if meta is not None:
                store._check_intact()  # a damaged file is never modified, not even by --restart
            store._start_wal()
            kept_key = None
            if meta is not None and restart:
                if meta.get("name") != name:
                    raise StoreError(store._foreign(meta, name, restart=True))
                store.aside = store.set_aside(output or path.parent)
                kept_key = meta.get(MATCH_ID_KEY)  # the matches go, the file's key stays
                store._discard()
                meta = None
            if meta is None:
                store._create(name, fingerprint, definition, kept_key)
                if settle is not None:
                    fingerprint, definition = settle(store)
                    store._update_definition(fingerprint, definition)
            else:
                if meta.get("name") != name:
                    raise StoreError(store._foreign(meta, name))
                old = json.loads(meta.get("definition", "{}"))
                changed = _changed_program(old, definition)  # (whatever the seed)
                if changed:
                    raise StoreError(
                        f"{path}: {changed}; its {store.count_matches()} stored matches are not "
                        "the new program's: run with --restart to set them aside (SPEC 10.4), "
                        "or give the bot a new name or version"
                    )
                if settle is not None:
                    fingerprint, definition = settle(store)
                store._add_missing_columns()
                if meta.get("fingerprint") != fingerprint:
                    store._update_definition(fingerprint, definition)
            store._add_seq()
        except sqlite3.Error as exc:
            store.close()
            raise StoreError(f"{path}: cannot use it: {exc}") from None
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def open_read(cls, path: str | Path) -> ResultStore:
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"{path}: no such results file")
        store = cls(path, _connect(path, read_only=True))
        try:
            if store._meta() is None:
                raise StoreError(f"{path}: an empty results file (no tournament has written to it)")
        except BaseException:
            store.close()
            raise
        return store

    @staticmethod
    def is_being_written(path: str | Path) -> bool:
        """Whether a tournament holds the file's write lock now (it is running)."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing also drops the shared lock we may have taken
        return False

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------------------------

    def definition(self) -> dict[str, Any]:
        meta = self._meta() or {}
        return json.loads(meta.get("definition", "{}"))

    def fingerprint(self) -> str:
        return (self._meta() or {}).get("fingerprint", "")

    def name(self) -> str:
        return (self._meta() or {}).get("name", "")

    def completed_ids(self) -> set[str]:
        """The match ids of the completed matches of the current definition."""
        rows = self._rows("SELECT match_id FROM matches WHERE status = 'completed' AND current = 1")
        return {row[0] for row in rows}

    def stored_keys(self) -> list[tuple[str, str]]:
        """(content key, match id) of every match stored, of any definition."""
        return [(row[0], row[1]) for row in self._rows("SELECT match_key, match_id FROM matches")]

    def _rows(self, sql: str) -> list[Any]:
        try:
            return self._db.execute(sql).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: cannot read it ({exc}): the file is damaged; it was not changed"
            ) from None

    def set_current(self, keys: Iterable[str]) -> tuple[int, int]:
        """Mark the stored matches with these content keys as the current definition's (they
        count) and every other one as an older definition's (kept in the file, not counted).
        Returns (completed matches kept, completed matches no longer counted)."""
        keys = list(keys)
        try:
            with self._db:
                before = {
                    r[0]
                    for r in self._db.execute("SELECT match_key FROM matches WHERE current = 1")
                }
                self._db.execute("UPDATE matches SET current = 0")
                self._db.executemany(
                    "UPDATE matches SET current = 1 WHERE match_key = ?", ((k,) for k in keys)
                )
                after = {
                    r[0]
                    for r in self._db.execute("SELECT match_key FROM matches WHERE current = 1")
                }
                if before != after and self._has_seq():
                    # other matches count now: the cached standings fold is of the old ones
                    self._db.execute("DELETE FROM fold_state")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot mark its current matches ({exc})") from None
        kept, old = self._db.execute(
            "SELECT coalesce(sum(current), 0), coalesce(sum(1 - current), 0) FROM matches "
            "WHERE status = 'completed'"
        ).fetchone()
        return int(kept), int(old)

    def matches(
        self, *, include_aborted: bool = False, since: int | None = None, times: bool = True
    ) -> list[StoredMatch]:
        """The stored matches of the current definition (those of an older one stay in the file
        but are not returned) in schedule order (game, table, deal, rotation), so a fold over
        them gives the same standings however the matches happened to finish. ``since``: only
        those stored after save number ``since`` (see :meth:`last_seq`). ``times=False``:
        without their decision times, as :meth:`matches_after`."""
        where = "WHERE current = 1" + ("" if include_aborted else " AND status = 'completed'")
        params: tuple[int, ...] = ()
        if since is not None:
            where += " AND seq > ?"
            params = (since,)
        return [
            match
            for _rowid, match in self._select(
                f"{where} ORDER BY game, table_no, deal, rotation, match_id", params, times=times
            )
        ]

    def matches_with(self, bot: str) -> list[StoredMatch]:
        """The matches ``bot`` sat in, and the aborted ones it has a fault in (a bot that could
        not start), in schedule order: what ``arena standings --bot`` reports on."""
        return [
            match
            for _rowid, match in self._select(
                "WHERE EXISTS (SELECT 1 FROM json_each(matches.bots) WHERE value = ?) "
                "OR match_id IN (SELECT match_id FROM faults WHERE bot = ?) "
                "ORDER BY game, table_no, deal, rotation, match_id",
                (bot, bot),
            )
        ]

    def match(self, match_id: str, *, times: bool = True) -> StoredMatch | None:
        """One stored match of the current definition by its id (None if it is not stored)."""
        found = self._select("WHERE match_id = ? AND current = 1", (match_id,), times=times)
        return found[0][1] if found else None

    def deal_matches(
        self, game: str, table: int, deal: int, ids: Sequence[str] | None = None
    ) -> list[StoredMatch]:
        """The completed rotations of one deal (game label, table, deal), by rotation, of the
        current definition, without their decision times. ``ids``: the match ids its rotations
        can have (read through the index of ids, rather than by a scan of every row)."""
        clause = "WHERE game = ? AND table_no = ? AND deal = ? AND status = 'completed' "
        params: tuple[Any, ...] = (game, table, deal)
        if ids is not None:
            clause += f"AND match_id IN ({', '.join('?' * len(ids))}) "
            params += tuple(ids)
        return [
            match
            for _rowid, match in self._select(
                clause + "AND current = 1 ORDER BY rotation", params, times=False
            )
        ]

    def matches_after(self, rowid: int, *, times: bool = True) -> list[tuple[int, StoredMatch]]:
        """(rowid, match) of the matches stored after row ``rowid`` (0: all), aborted ones
        included, in the order they were stored: a watcher of a running tournament reads only
        what is new. A match stored again (an aborted one replayed) gets a new, higher rowid.
        ``times=False``: without their decision times (``decision_ms`` empty), the bulk of a
        row."""
        return self._select("WHERE rowid > ? AND current = 1 ORDER BY rowid", (rowid,), times=times)

    def iter_matches_after(
        self, rowid: int, *, times: bool = True, chunk: int = 5000
    ) -> Iterator[tuple[int, StoredMatch]]:
        """:meth:`matches_after`, read ``chunk`` rows at a time: a large file is gone through
        without all its matches in memory at once (inside :meth:`snapshot` for one state)."""
        while True:
            rows = self._select(
                "WHERE rowid > ? AND current = 1 ORDER BY rowid LIMIT ?",
                (rowid, chunk),
                times=times,
            )
            yield from rows
            if len(rows) < chunk:
                return
            rowid = rows[-1][0]

    def iter_all_matches(self, *, chunk: int = 2000) -> Iterator[StoredMatch]:
        """Every stored match, of any definition and aborted ones included, in the order
        stored, read ``chunk`` rows at a time (``arena replay --check`` of a results file)."""
        rowid = 0
        while True:
            rows = self._select("WHERE rowid > ? ORDER BY rowid LIMIT ?", (rowid, chunk))
            yield from (match for _rowid, match in rows)
            if len(rows) < chunk:
                return
            rowid = rows[-1][0]

    def current_keys(self) -> set[str]:
        """The content keys of the matches of the latest run's definition (those counted)."""
        return {row[0] for row in self._rows("SELECT match_key FROM matches WHERE current = 1")}

    def last_rowid(self) -> int:
        """The highest rowid stored (0 for none): lower than a watcher's last one means the
        file was started afresh (``--restart``)."""
        try:
            row = self._db.execute("SELECT max(rowid) FROM matches").fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None
        return int(row[0] or 0)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see one state of the file, whatever another process commits meanwhile
        (one read transaction; a reader only)."""
        if self._db.in_transaction:  # already inside one (or writing): nothing to add
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.rollback()  # nothing was written: ends the read transaction

    def data_version(self) -> int:
        """Changes whenever another connection commits to the file: a cheap test for news."""
        try:
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def created(self) -> str:
        """When the tournament first wrote to this file (a new value after ``--restart``)."""
        return (self._meta() or {}).get("created", "")

    def _select(
        self, clause: str, params: tuple[Any, ...], *, times: bool = True
    ) -> list[tuple[int, StoredMatch]]:
        try:
            return self._select_rows(clause, params, times=times)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: sqlite3.DatabaseError) -> StoreError:
        """The one-line error for matches that cannot be read."""
        return StoreError(
            f"{self.path}: cannot read its matches ({exc}): the file is damaged; it was not changed"
        )

    _MATCH_COLUMNS = (
        "rowid, match_key, match_id, game, game_id, table_no, deal, rotation, seed, players, "
        "options, bots, scores, placings, teams, forfeited, decision_ms, status, reason, "
        "record_path, duration_s"
    )

    def _select_rows(
        self, clause: str, params: tuple[Any, ...], *, times: bool = True
    ) -> list[tuple[int, StoredMatch]]:
        columns = self._MATCH_COLUMNS
        if not times:
            columns = columns.replace("decision_ms", "'[]'")
        rows = self._db.execute(
            f"SELECT {columns}, {self._added_columns()} FROM matches {clause}", params
        ).fetchall()
        faults = self._faults_of(
            None if len(rows) > FAULTS_BY_KEY_UP_TO else [row[1] for row in rows]
        )
        return [(row[0], _match_of_row(row, faults, self._folder)) for row in rows]

    def _added_columns(self, table: str = "matches") -> str:
        """The ADDED_COLUMNS of ``table`` a read selects: NULL for those a file from an older
        arena lacks."""
        have = self._columns(table)
        return ", ".join(
            column if column in have else "NULL"
            for added_to, column, _kind in ADDED_COLUMNS
            if added_to == table
        )

    def _faults_of(self, keys: list[str] | None) -> dict[str, list[FaultRecord]]:
        """The faults of the matches with these keys (None: of every match, in one pass)."""
        columns = (
            "SELECT match_key, seat, bot, kind, request_id, message, "
            f"{self._added_columns('faults')} FROM faults"
        )
        if keys is None:  # most of the file: every fault, in one pass
            fault_rows: Iterable[Any] = self._db.execute(f"{columns} ORDER BY rowid")
        else:  # the faults of these rows only (a few since the cached fold, of a large file)
            fault_rows = [
                found
                for start in range(0, len(keys), 500)  # SQLite's bound on parameters
                for chunk in [keys[start : start + 500]]
                for found in self._db.execute(
                    f"{columns} WHERE match_key IN ({', '.join('?' * len(chunk))}) ORDER BY rowid",
                    chunk,
                )
            ]
        faults: dict[str, list[FaultRecord]] = {}
        for row in fault_rows:
            try:
                fault = FaultRecord.read(*row[1:])
            except ValueError as exc:  # a kind or cause no arena writes
                problem = sqlite3.DatabaseError(f"a fault of match {row[0]}: {exc}")
                raise self._damaged(problem) from None
            faults.setdefault(row[0], []).append(fault)
        return faults

    def matches_in_rating_order(
        self, games: Sequence[str], *, chunk: int = 1000
    ) -> Iterator[StoredMatch]:
        """Every stored match of the current definition, aborted ones included, in the order a
        fold rates them (SPEC 10.3; arena.tournament.standings.schedule_order: deal, the games
        in ``games``' order and labels it does not list by name, table, rotation, id), read
        ``chunk`` rows at a time, so a refold of a million matches never holds them all."""
        position = " ".join(f"WHEN ? THEN {i}" for i in range(len(games)))
        order = f"CASE game {position} ELSE {len(games)} END, " if games else ""
        try:
            faults = self._faults_of(None)
            cursor = self._db.execute(
                f"SELECT {self._MATCH_COLUMNS}, {self._added_columns()} FROM matches "
                f"WHERE current = 1 ORDER BY deal, {order}game, table_no, rotation, match_id",
                tuple(games),
            )
            while rows := cursor.fetchmany(chunk):
                for row in rows:
                    yield _match_of_row(row, faults, self._folder)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    # -- writing -----------------------------------------------------------------------------------

    def save(self, match: StoredMatch) -> None:
        """Store one match and its faults in one transaction (replacing an aborted attempt)."""
        row = (
            match.match_key,
            match.match_id,
            match.game,
            match.game_id,
            match.table,
            match.deal,
            match.rotation,
            str(match.seed),
            match.players,
            _json(dict(match.options)),
            _json(match.bots),
            _json(match.scores),
            _json(match.placings),
            None if match.teams is None else _json(match.teams),
            _json(match.forfeited),
            _json([[round(ms, 2) for ms in seat] for seat in match.decision_ms]),
            match.status,
            match.reason,
            self._relative(match.record_path),
            match.duration_s,
            datetime.now(UTC).isoformat(timespec="seconds"),
            1,  # played now, so a match of the current definition
            None if match.referee is None else _json(dict(match.referee)),
            None if match.record_span is None else match.record_span[0],
            None if match.record_span is None else match.record_span[1],
        )
        try:
            with self._db:
                self._db.execute("DELETE FROM faults WHERE match_key = ?", (match.match_key,))
                self._db.execute(
                    f"INSERT OR REPLACE INTO matches ({MATCH_COLUMNS}, seq) VALUES "
                    f"({', '.join('?' * len(row))}, (SELECT coalesce(max(seq), 0) + 1 FROM matches))",
                    row,
                )
                self._db.executemany(
                    "INSERT INTO faults (match_key, seat, bot, kind, request_id, message, cause, "
                    "forfeits) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            match.match_key,
                            f.seat,
                            f.bot,
                            str(f.kind),
                            f.request_id,
                            f.message,
                            str(f.cause),
                            f.forfeits,
                        )
                        for f in match.faults
                    ],
                )
        except sqlite3.Error as exc:
            # The transaction was rolled back: every match stored before this one is intact.
            raise StoreError(
                f"{self.path}: cannot store match {match.match_id} ({exc}); the "
                "matches stored before it are kept: fix the cause (e.g. free disk "
                "space) and run the same command again to resume"
            ) from None

    # -- the standings fold's cache -----------------------------------------------------------

    def last_seq(self) -> int:
        """The number of the latest save (0 for none)."""
        if not self._has_seq():
            return 0
        return self._db.execute("SELECT coalesce(max(seq), 0) FROM matches").fetchone()[0]

    def unsequenced(self) -> bool:
        """Whether some row has no save number (written by an arena from before them)."""
        if not self._has_seq():
            return self._db.execute("SELECT EXISTS(SELECT 1 FROM matches)").fetchone()[0] == 1
        return (
            self._db.execute("SELECT EXISTS(SELECT 1 FROM matches WHERE seq IS NULL)").fetchone()[0]
            == 1
        )

    def fold_state(self, name: str) -> tuple[bytes, int] | None:
        """The cached fold ``name`` and the save number it covers, if any."""
        if not self._has_seq():
            return None
        try:
            row = self._db.execute(
                "SELECT state, seq FROM fold_state WHERE name = ?", (name,)
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None
        return None if row is None or not isinstance(row[0], bytes) else (row[0], row[1])

    def save_fold_state(self, name: str, state: bytes, seq: int) -> None:
        """Cache a fold covering every save up to ``seq``. A failure only loses the cache."""
        try:
            with self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO fold_state VALUES (?, ?, ?)", (name, seq, state)
                )
        except sqlite3.Error:
            pass  # the next reader refolds; the matches themselves are untouched

    def _has_seq(self) -> bool:
        if self._seq_known is None:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(matches)")}
            tables = {
                row[0]
                for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            self._seq_known = "seq" in columns and "fold_state" in tables
        return self._seq_known

    def _add_seq(self) -> None:
        """Give a file from before save numbers its ``seq`` column (rows numbered as stored)."""
        with self._db:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(matches)")}
            if "seq" not in columns:
                self._db.execute("ALTER TABLE matches ADD COLUMN seq INTEGER")
                self._db.execute("UPDATE matches SET seq = rowid")
            self._db.executescript(SEQ_SCHEMA)
        self._seq_known = None

    # -- inside ------------------------------------------------------------------------------------

    def _meta(self, *, any_schema: bool = False) -> dict[str, str] | None:
        """The meta table, None for a new (empty) database; StoreError for anything foreign
        (and, unless ``any_schema``, for a results file of another schema)."""
        try:
            tables = {
                row[0]
                for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not tables:
                return None
            if "meta" not in tables or "matches" not in tables:
                raise StoreError(
                    f"{self.path}: an SQLite file, but not a Trick Arena results file "
                    f"(it has tables {', '.join(sorted(tables))})"
                )
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a Trick Arena results file ({exc})") from None
        if meta.get("app") != APP:
            raise StoreError(f"{self.path}: an SQLite file, but not a Trick Arena results file")
        if meta.get("schema") != SCHEMA_VERSION and not any_schema:
            raise StoreError(
                f"{self.path}: results file schema {meta.get('schema')!r}; this "
                f"arena reads schema {SCHEMA_VERSION!r}: give another results file, or run "
                f"with --restart to set its {self.count_matches()} stored matches aside "
                "(SPEC 10.4) and start it afresh"
            )
        return meta

    def save_note(self, key: str, value: str | None) -> None:
        """Keep (or, with None, drop) a note about the run in the meta table, e.g. the latency
        warning (``note:`` keys; the definition and fingerprint are never touched)."""
        with self._db:
            if value is None:
                self._db.execute("DELETE FROM meta WHERE key = ?", (f"note:{key}",))
            else:
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"note:{key}", value)
                )

    def note(self, key: str) -> str | None:
        return (self._meta() or {}).get(f"note:{key}")

    # -- the seal of the tournament's seed (SPEC 10.3, 10.5) ------------------------------------

    def seal(self) -> SealState:
        """The commitment, the secret seed (until the reveal) and the revealed one (after)."""
        meta = self._meta() or {}
        return SealState(
            commitment=meta.get(META_COMMITMENT),
            secret=_secret(meta.get(META_SECRET)),
            revealed=_secret(meta.get(META_REVEALED)),
        )

    def keep_secret(self, secret: DealSecret) -> None:
        """Seal a new tournament's seed: its commitment published, the seed and salt kept."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [
                    (META_COMMITMENT, secret.commitment),
                    (META_SECRET, _json(secret.as_dict())),
                ],
            )
            self._db.execute("DELETE FROM meta WHERE key = ?", (META_REVEALED,))

    def reveal(self, secret: DealSecret) -> None:
        """The tournament has ended: its seed and salt are public from now on."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (META_REVEALED, _json(secret.as_dict())),
            )
            self._db.execute("DELETE FROM meta WHERE key = ?", (META_SECRET,))

    def has_matches(self) -> bool:
        """Whether any match is stored (of any definition)."""
        return self._rows("SELECT EXISTS(SELECT 1 FROM matches)")[0][0] == 1

    def match_id_secret(self) -> bytes:
        """The tournament's key for the match ids its bots are sent (SPEC 4.1): 32 random
        bytes, made with the file (a file of an older arena gets one the first time a run asks)
        and kept in the meta table as ``match_id_key`` (hex), also by ``--restart``."""
        found = self.match_id_key()
        if found is None:  # (a file of an older arena)
            try:
                with self._db:
                    self._db.execute(
                        "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                        (MATCH_ID_KEY, secrets.token_hex(32)),
                    )
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot write to it: {exc}") from None
            found = self.match_id_key()
        assert found is not None  # (just written)
        return found

    def match_id_key(self) -> bytes | None:
        """The key of the match ids sent to bots, None when the file has none (yet)."""
        found = (self._meta() or {}).get(MATCH_ID_KEY)
        if found is None:
            return None
        try:
            return bytes.fromhex(found)
        except ValueError:
            raise StoreError(
                f"{self.path}: meta {MATCH_ID_KEY} is {found[:20]!r}...; expected 64 hex digits"
            ) from None

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}

    def _add_missing_columns(self) -> None:
        """Bring a file written by an older arena up to date: only ever added columns."""
        with self._db:
            for table, column, kind in ADDED_COLUMNS:
                if column not in self._columns(table):
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def _check_intact(self) -> None:
        try:
            problems = [row[0] for row in self._db.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems != ["ok"]:
            raise StoreError(
                f"{self.path}: the results file is damaged ({_one_line(problems)}); it "
                "was not changed: keep it aside and give another results file"
            )

    def _start_wal(self) -> None:
        try:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")  # in WAL: safe against a kill
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot write to it ({exc})") from None

    def count_current(self) -> int:
        """How many matches of the current definition are stored (aborted ones included)."""
        return int(self._rows("SELECT count(*) FROM matches WHERE current = 1")[0][0])

    def count_matches(self) -> int:
        """How many matches the file holds, of any definition and status."""
        return int(self._rows("SELECT count(*) FROM matches")[0][0])

    def forget(self, match_ids: Iterable[str]) -> int:
        """Delete the counted matches of these ids (and their faults), to be played again
        (``--replay``: the caller set the file aside first); the cached fold goes with them.
        How many were deleted."""
        ids = list(match_ids)
        with self._db:
            deleted = sum(
                self._db.execute(
                    "DELETE FROM matches WHERE current = 1 AND match_id = ?", (match_id,)
                ).rowcount
                for match_id in ids
            )
            if deleted:
                self._db.execute("DELETE FROM fold_state")
        return deleted

    def _foreign(self, meta: Mapping[str, str], name: str, *, restart: bool = False) -> str:
        """Why a file of another tournament is refused: what it holds, and never advice that
        would set another tournament's matches aside."""
        return (
            f"{self.path}: holds the {self.count_matches()} stored matches of tournament "
            f"{meta.get('name', '?')!r}, not {name!r}"
            + ("; --restart sets aside only this tournament's own results" if restart else "")
            + f"; give another results file (or run {meta.get('name', '?')!r} to resume it)"
        )

    def set_aside(self, output: Path, *, move_output: bool = True) -> SetAside | None:
        """Copy the file into ``<output>/set-aside/<UTC time>/`` and (``move_output``) move the
        output's ``records/`` and ``logs/`` beside the copy, its rows' record names rewritten
        to find them there; None when no match is stored (nothing to keep). Anything that fails
        raises StoreError before the file itself is touched."""
        matches = self.count_matches()
        if not matches:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        folder = output / ASIDE_FOLDER / stamp
        n = 1
        while folder.exists():
            n += 1
            folder = output / ASIDE_FOLDER / f"{stamp}-{n}"
        copy = folder / self.path.name
        try:
            folder.mkdir(mode=0o700, parents=True)
            with contextlib.closing(sqlite3.connect(copy)) as target:
                self._db.backup(target)  # one consistent copy, the WAL's pages included
                os.chmod(copy, 0o600)
                moved = {}
                for part in ("records", "logs") if move_output else ():
                    if (output / part).is_dir():
                        moved[(output / part).resolve()] = folder / part
                _repoint_records(target, self._folder, folder, moved)
                kept = target.execute("SELECT count(*) FROM matches").fetchone()[0]
            if kept != matches:
                raise StoreError(f"{copy}: the copy holds {kept} of {matches} matches")
            for source, destination in moved.items():
                shutil.move(source, destination)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"{self.path}: --restart could not set its {matches} stored matches aside in "
                f"{folder} ({exc}); the file was not changed"
            ) from None
        return SetAside(folder, copy, matches)

    def _discard(self) -> None:
        with self._db:
            for table in ("fold_state", "faults", "matches", "meta"):
                self._db.execute(f"DROP TABLE IF EXISTS {table}")

    def _update_definition(self, fingerprint: str, definition: Mapping[str, Any]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("fingerprint", fingerprint), ("definition", _json(definition, sort=True))],
            )

    def _create(
        self,
        name: str,
        fingerprint: str,
        definition: Mapping[str, Any],
        match_id_key: str | None = None,
    ) -> None:
        with self._db:
            self._db.executescript(SCHEMA)
            self._db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [
                    ("app", APP),
                    ("schema", SCHEMA_VERSION),
                    ("name", name),
                    ("fingerprint", fingerprint),
                    ("definition", _json(definition, sort=True)),
                    ("created", datetime.now(UTC).isoformat(timespec="seconds")),
                    (MATCH_ID_KEY, match_id_key or secrets.token_hex(32)),
                ],
            )


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection that has written nothing yet (WAL is switched on only once the file is
    known to be ours: :meth:`ResultStore._start_wal`)."""
    try:
        if read_only:
            try:
                db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                # A read-only file (or folder) in WAL mode cannot get its -shm file: read it as
                # it is on disk; nothing can be writing to a file nobody may write.
                db = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
        else:
            db = sqlite3.connect(path)
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a Trick Arena results file ({exc})") from None
    return db


def _secret(text: str | None) -> DealSecret | None:
    if text is None:
        return None
    try:
        return DealSecret.of(json.loads(text))
    except ValueError:
        return None


def _one_line(problems: list[str]) -> str:
    text = "; ".join(p for p in "; ".join(problems).splitlines() if not p.startswith("***"))
    return text[:200]


def _json(value: Any, *, sort: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=sort)


def _repoint_records(
    db: sqlite3.Connection, was: str, now: Path, moved: Mapping[Path, Path]
) -> None:
    """Rewrite the record names of a results file copied from folder ``was`` to folder ``now``
    (relative to the file's folder, SPEC 10.5), records under a key of ``moved`` being moved to
    its value."""
    if "record_path" not in {row[1] for row in db.execute("PRAGMA table_info(matches)")}:
        return
    names = [row[0] for row in db.execute("SELECT DISTINCT record_path FROM matches")]
    with db:
        for name in names:
            if name is None:
                continue
            where = Path(os.path.normpath(os.path.join(was, name)))
            for source, destination in moved.items():
                if where.is_relative_to(source):
                    where = destination / where.relative_to(source)
                    break
            db.execute(
                "UPDATE matches SET record_path = ? WHERE record_path = ?",
                (os.path.relpath(where, now), name),
            )


def _changed_program(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The first bot that kept its name and version but runs another program now, said in one
    line naming the bot and the file; None if there is none."""
    before = {b.get("name"): b for b in old.get("bots", []) if isinstance(b, dict)}
    for bot in new.get("bots", []):
        was = before.get(bot.get("name"))
        if was is None or was.get("version") != bot.get("version"):
            continue
        then, now = was.get("program", {}), bot.get("program", {})
        files: Iterable[str] = sorted(set(then) | set(now))
        changed = [f for f in files if then.get(f) != now.get(f)]
        if changed:
            what = changed[0]
            if what == "./" and isinstance(bot.get("cwd"), str):  # its folder is its cwd
                what = bot["cwd"].rstrip("/") + "/"
            return (
                f"bot {bot['name']!r} changed since its matches were stored ({what} "
                f"{'differs' if changed[0] in then and changed[0] in now else 'is new or gone'})"
            )
    return None


def keep_private(path: Path, fd: int) -> None:
    """A results file and SQLite's companions readable by the arena's user only (SQLite makes
    its -wal and -shm files with the database's mode): no bot of another user reads a result,
    a seed or a record's place. One that cannot be changed (not ours) is left as it is."""
    try:
        os.fchmod(fd, 0o600)
        for suffix in ("-wal", "-shm", "-journal"):
            companion = Path(f"{path}{suffix}")
            if companion.exists():
                companion.chmod(0o600)
    except OSError:
        pass


def stored_matches(path: str | Path) -> int | None:
    """How many matches the results file at ``path`` holds; None when there is none there (or
    it cannot be read as one). Read only: for messages about a file a run will not open."""
    path = Path(path)
    if not is_results_file(path):
        return None
    try:
        with contextlib.closing(ResultStore.open_read(path)) as store:
            return store.count_matches()
    except StoreError:
        return None


class OutputLock:
    """A tournament's output folder (records, logs), made private (0700) and held for the whole
    run with an exclusive
    ``flock`` on ``<output>/.arena-lock``, and tied to one results file (named in that file), so
    neither a second run at the same time nor a later one into another results file can
    overwrite the records a results file points to. :meth:`take` only checks and locks: the
    folder is tied to the results file by :meth:`claim`, once the results file was opened, so a
    run refused on the way changes nothing."""

    LOCK_NAME = ".arena-lock"

    def __init__(self, fd: int, owner: str) -> None:
        self._fd: int | None = fd
        self.owner = owner

    @classmethod
    def take(cls, folder: str | Path, results: str | Path, *, restart: bool = False) -> OutputLock:
        folder, owner = Path(folder), str(Path(results).resolve())
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"{folder}: output: found a file; expected a folder (or nothing)")
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(folder, 0o700)  # (made by an older arena, or by hand) bots read none of it
            fd = os.open(folder / cls.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"{folder}: output: cannot create it: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreError(
                f"{folder}: another arena tournament is writing its records and logs here; "
                "wait for it or stop it, or give another output folder"
            ) from None
        try:
            with os.fdopen(os.dup(fd), "r", encoding="utf-8") as file:
                before = file.read().strip()
            if before and before != owner:
                held = stored_matches(before)
                if held is None and not restart:
                    raise StoreError(
                        f"{folder}: output: holds the records of the results file {before}, "
                        f"which is gone, not of {owner}; give another output folder, or "
                        "--restart to write into it anyway (its old records stay)"
                    )
                if held is not None:  # never taken from a results file that holds matches
                    mine = stored_matches(owner)
                    raise StoreError(
                        f"{folder}: output: holds the records of the results file {before} "
                        f"({held} stored matches), not of {owner}"
                        + (f" ({mine} stored matches)" if mine else "")
                        + f"; give another output folder (`output`; in the quick form, a "
                        f"--results file in another folder), or the results file {before}"
                    )
        except OSError as exc:
            os.close(fd)
            raise StoreError(
                f"{folder}: output: cannot read in it: {exc.strerror or exc}"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, owner)

    def claim(self) -> None:
        """Name the results file in the lock: the folder's records are that file's from now on."""
        if self._fd is None:
            raise ValueError("claim() after release()")
        try:
            os.lseek(self._fd, 0, os.SEEK_SET)
            os.ftruncate(self._fd, 0)
            os.write(self._fd, (self.owner + "\n").encode())
        except OSError as exc:
            raise StoreError(f"output: cannot write its lock: {exc.strerror or exc}") from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
