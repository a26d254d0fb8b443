"""The results file of a tournament: SQLite, one file per tournament. Only this module touches it.

Tables::

    meta(key, value)        app = "trick-arena-results", schema = "1", name, fingerprint,
                            definition (JSON), created (UTC ISO time)
    matches(match_id, ...)  one row per match played to its end ("completed") or cut by the
                            match time limit ("aborted", replayed on the next run)
    faults(match_id, ...)   the faults of a match, deleted and written with it

Every finished match is written in one transaction with its faults, so a killed run leaves each
match either fully stored or absent. The file runs in WAL mode: readers (``arena standings``) do
not block the running tournament.

Errors are :class:`StoreError` with one line naming the file: not a database, a database of
something else, or a tournament definition that changed since the file was filled.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

APP = "trick-arena-results"
SCHEMA_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id    TEXT PRIMARY KEY,
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
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS faults (
    match_id   TEXT NOT NULL REFERENCES matches(match_id) ON DELETE CASCADE,
    seat       INTEGER NOT NULL,
    bot        TEXT NOT NULL,
    kind       TEXT NOT NULL,
    request_id INTEGER,
    message    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS faults_by_match ON faults(match_id);
"""


class StoreError(Exception):
    """A results file that cannot be used, with one line saying why and what to do."""


@dataclass(frozen=True)
class StoredFault:
    seat: int
    bot: str
    kind: str
    request_id: int | None
    message: str


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
    faults: tuple[StoredFault, ...]
    decision_ms: tuple[tuple[float, ...], ...]
    status: str = "completed"
    reason: str = "completed"
    record_path: str | None = None
    duration_s: float = 0.0

    @property
    def completed(self) -> bool:
        return self.status == "completed"


class ResultStore:
    """An open results file. Use :meth:`open_for_run` to play into it, :meth:`open_read` to read."""

    def __init__(self, path: Path, connection: sqlite3.Connection, lock: int | None = None) -> None:
        self.path = path
        self._db = connection
        self._lock = lock  # a file descriptor holding flock(LOCK_EX) while we write

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
    ) -> ResultStore:
        """Open or create the file of a tournament, locked against a second tournament writing
        to it. An existing file must hold the same definition (same fingerprint) unless
        ``restart``, which discards its results (only ever from a Trick Arena results file)."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create it: {exc.strerror or exc}") from None
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
            meta = store._meta()
            if meta is not None and restart:
                store._discard()
                meta = None
            if meta is None:
                store._create(name, fingerprint, definition)
            elif meta.get("fingerprint") != fingerprint:
                changed = _changed_fields(json.loads(meta.get("definition", "{}")), definition)
                raise StoreError(
                    f"{path}: holds results of a different definition of tournament "
                    f"{meta.get('name', '?')!r} (changed: {changed}); run with --restart to "
                    f"discard them, or give another results file"
                )
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

    def name(self) -> str:
        return (self._meta() or {}).get("name", "")

    def completed_ids(self) -> set[str]:
        return {
            row[0]
            for row in self._db.execute("SELECT match_id FROM matches WHERE status = 'completed'")
        }

    def matches(self, *, include_aborted: bool = False) -> list[StoredMatch]:
        """Stored matches in schedule order (game, table, deal, rotation), so a fold over them
        gives the same standings however the matches happened to finish."""
        where = "" if include_aborted else "WHERE status = 'completed'"
        return [
            match
            for _rowid, match in self._select(
                f"{where} ORDER BY game, table_no, deal, rotation, match_id", ()
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

    def match(self, match_id: str) -> StoredMatch | None:
        """One stored match by its id (None if it is not stored)."""
        found = self._select("WHERE match_id = ?", (match_id,))
        return found[0][1] if found else None

    def deal_matches(self, game: str, table: int, deal: int) -> list[StoredMatch]:
        """The completed rotations of one deal (game label, table, deal), by rotation."""
        return [
            match
            for _rowid, match in self._select(
                "WHERE game = ? AND table_no = ? AND deal = ? AND status = 'completed' "
                "ORDER BY rotation",
                (game, table, deal),
            )
        ]

    def matches_after(self, rowid: int) -> list[tuple[int, StoredMatch]]:
        """(rowid, match) of the matches stored after row ``rowid`` (0: all), aborted ones
        included, in the order they were stored: a watcher of a running tournament reads only
        what is new. A match stored again (an aborted one replayed) gets a new, higher rowid."""
        return self._select("WHERE rowid > ? ORDER BY rowid", (rowid,))

    def last_rowid(self) -> int:
        """The highest rowid stored (0 for none): lower than a watcher's last one means the
        file was started afresh (``--restart``)."""
        row = self._db.execute("SELECT max(rowid) FROM matches").fetchone()
        return int(row[0] or 0)

    def data_version(self) -> int:
        """Changes whenever another connection commits to the file: a cheap test for news."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def created(self) -> str:
        """When the tournament first wrote to this file (a new value after ``--restart``)."""
        return (self._meta() or {}).get("created", "")

    def _select(self, clause: str, params: tuple[Any, ...]) -> list[tuple[int, StoredMatch]]:
        rows = self._db.execute(
            "SELECT rowid, match_id, game, game_id, table_no, deal, rotation, seed, players, "
            "options, bots, scores, placings, teams, forfeited, decision_ms, status, reason, "
            f"record_path, duration_s FROM matches {clause}",
            params,
        ).fetchall()
        faults: dict[str, list[StoredFault]] = {}
        if rows:
            if len(rows) > 500:
                fault_rows = self._db.execute(
                    "SELECT match_id, seat, bot, kind, request_id, message FROM faults "
                    "ORDER BY rowid"
                )
            else:
                fault_rows = self._db.execute(
                    "SELECT match_id, seat, bot, kind, request_id, message FROM faults "
                    f"WHERE match_id IN ({', '.join('?' * len(rows))}) ORDER BY rowid",
                    [row[1] for row in rows],
                )
            for row in fault_rows:
                faults.setdefault(row[0], []).append(StoredFault(*row[1:]))
        out = []
        for (
            rowid,
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
        ) in rows:
            out.append(
                (
                    rowid,
                    StoredMatch(
                        match_id=match_id,
                        game=game,
                        game_id=game_id,
                        table=table_no,
                        deal=deal,
                        rotation=rotation,
                        seed=int(seed),
                        players=players,
                        options=json.loads(options),
                        bots=tuple(json.loads(bots)),
                        scores=tuple(json.loads(scores)),
                        placings=tuple(json.loads(placings)),
                        teams=None if teams is None else tuple(json.loads(teams)),
                        forfeited=tuple(json.loads(forfeited)),
                        faults=tuple(faults.get(match_id, ())),
                        decision_ms=tuple(tuple(seat) for seat in json.loads(decision_ms)),
                        status=status,
                        reason=reason,
                        record_path=record_path,
                        duration_s=duration_s,
                    ),
                )
            )
        return out

    # -- writing -----------------------------------------------------------------------------------

    def save(self, match: StoredMatch) -> None:
        """Store one match and its faults in one transaction (replacing an aborted attempt)."""
        row = (
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
            match.record_path,
            match.duration_s,
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        try:
            with self._db:
                self._db.execute("DELETE FROM faults WHERE match_id = ?", (match.match_id,))
                self._db.execute(
                    "INSERT OR REPLACE INTO matches VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                self._db.executemany(
                    "INSERT INTO faults VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (match.match_id, f.seat, f.bot, f.kind, f.request_id, f.message)
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

    # -- inside ------------------------------------------------------------------------------------

    def _meta(self) -> dict[str, str] | None:
        """The meta table, None for a new (empty) database; StoreError for anything foreign."""
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
        if meta.get("schema") != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: results file schema {meta.get('schema')!r}; this "
                f"arena reads schema {SCHEMA_VERSION!r}"
            )
        return meta

    def _discard(self) -> None:
        with self._db:
            for table in ("faults", "matches", "meta"):
                self._db.execute(f"DROP TABLE IF EXISTS {table}")

    def _create(self, name: str, fingerprint: str, definition: Mapping[str, Any]) -> None:
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
                ],
            )


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    try:
        if read_only:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        else:
            db = sqlite3.connect(path)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # in WAL: safe against a killed process
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a Trick Arena results file ({exc})") from None
    return db


def _json(value: Any, *, sort: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=sort)


def _changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys: Iterable[str] = sorted(set(old) | set(new))
    changed = [key for key in keys if old.get(key) != new.get(key)]
    return ", ".join(changed) or "its fingerprint"
