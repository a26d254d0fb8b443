"""The league's store: one SQLite file, ``FOLDER/league.sqlite``. Only this module touches it.

Tables::

    meta(key, value)         app = "trick-arena-league", schema = "2", name, seed
    authors(id, name, token_hash, created)   token_hash: SHA-256 of the author's token
    versions(id, author_id, bot, number, label, content_hash, folder, status, log, note,
             created, changed)   one submission: "rejected" (the log says why), "active",
                             "retired" (by its author) or "disqualified" (by the organiser)
    uploads(author_id, at)   when each author uploaded (the rate limit)
    registrations(address, at)   open registrations per client address in the last hour (the
                             rate limit; older rows are dropped as new ones are written)
    dealsets(id, game, seed, seats, created, done)   one deal in every rotation, written
                             before its first match is played
    matches(dealset, rotation, match, finished)       the stored match (JSON), one row per
                             rotation: (dealset, rotation) is the primary key
    seats(version, dealset)  the deal-sets each version sits in: a version's matches found
                             without reading every match (the version page)
    seated(game, version, dealsets), meetings(game, a, b, dealsets)   per game, the deal-sets
                             each version sat in and each pair (a < b) met in, counted as each
                             deal-set is written (the matchmaker reads them, not every deal-set)
    ratings(dealset, scope, version, mu, sigma, at)   a version's rating (10.6's OpenSkill
                             mu and sigma) in a game's table and overall, as the ladder stood
                             when a deal-set it sat in was done: its history over time

Schema 1 (without seats, seated and meetings) is brought to 2 on opening: they are counted from
the deal-sets stored, in one transaction.

Every write is one transaction, so a killed server leaves each row whole or absent; on a
restart the deal-sets not done are played on from their first missing rotation, and a rotation
stored is never played again (its primary key refuses a second row).

A store made before ``ratings`` existed opens as it is (the table is added empty, and
``meta.history`` is unset): the league fills the history of its done deal-sets once, by folding
their matches again in order (arena.league.league).

Tokens are kept as SHA-256 hashes: a token is 32 random bytes, so a fast hash suffices (no
password stretching is needed for a secret nobody chose).
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from arena.referee.results import RecordPlace
from arena.tournament.store import StoredMatch

APP = "trick-arena-league"
SCHEMA_VERSION = "2"  # 2: seats, seated and meetings
STATUSES = ("rejected", "active", "retired", "disqualified")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS authors (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    token_hash  TEXT NOT NULL UNIQUE,
    created     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id           INTEGER PRIMARY KEY,
    author_id    INTEGER NOT NULL REFERENCES authors(id),
    bot          TEXT NOT NULL,
    number       INTEGER NOT NULL,
    label        TEXT NOT NULL UNIQUE,
    content_hash TEXT,
    folder       TEXT,
    status       TEXT NOT NULL CHECK (status IN ('rejected','active','retired','disqualified')),
    log          TEXT NOT NULL,
    note         TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    changed      TEXT NOT NULL,
    UNIQUE (author_id, bot, number)
);
CREATE TABLE IF NOT EXISTS uploads (author_id INTEGER NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS registrations (address TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS registrations_by_address ON registrations (address, at);
CREATE TABLE IF NOT EXISTS dealsets (
    id       INTEGER PRIMARY KEY,
    game     TEXT NOT NULL,
    seed     TEXT NOT NULL,
    seats    TEXT NOT NULL,       -- JSON: version ids in the seats of rotation 0
    created  TEXT NOT NULL,
    done     INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS matches (
    dealset  INTEGER NOT NULL REFERENCES dealsets(id),
    rotation INTEGER NOT NULL,
    match    TEXT NOT NULL,       -- JSON: the StoredMatch, bots named by version label
    finished TEXT NOT NULL,
    PRIMARY KEY (dealset, rotation)
);
CREATE TABLE IF NOT EXISTS seats (
    version  INTEGER NOT NULL,
    dealset  INTEGER NOT NULL,
    PRIMARY KEY (version, dealset)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seated (
    game     TEXT NOT NULL,
    version  INTEGER NOT NULL,
    dealsets INTEGER NOT NULL,
    PRIMARY KEY (game, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meetings (
    game     TEXT NOT NULL,
    a        INTEGER NOT NULL,
    b        INTEGER NOT NULL,
    dealsets INTEGER NOT NULL,
    PRIMARY KEY (game, a, b)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ratings (
    dealset  INTEGER NOT NULL REFERENCES dealsets(id),
    scope    TEXT NOT NULL,       -- a game's label, or "overall"
    version  INTEGER NOT NULL REFERENCES versions(id),
    mu       REAL NOT NULL,
    sigma    REAL NOT NULL,
    at       TEXT NOT NULL,       -- when the deal-set was done
    PRIMARY KEY (dealset, scope, version)
);
"""
HISTORY_NOTE = "history"  # meta key: set once every done deal-set's ratings are kept


class LeagueStoreError(Exception):
    """A league store that cannot be used, or a write it refuses; one line saying why."""


@dataclass(frozen=True)
class Author:
    id: int
    name: str
    created: str


@dataclass(frozen=True)
class Version:
    id: int
    author: str
    bot: str
    number: int
    label: str  # unique: "<author>.<bot>.v<number>", the name the ladder shows
    content_hash: str | None
    folder: str | None
    status: str
    log: str  # the build output and check report (only its author and the organiser see it)
    note: str  # why it was retired or disqualified
    created: str
    changed: str


@dataclass(frozen=True)
class DealSet:
    id: int
    game: str
    seed: int
    seats: tuple[int, ...]  # version ids, rotation 0
    done: bool


@dataclass(frozen=True)
class RatingPoint:
    """A version's rating in one table (``scope``: a game's label or "overall") after a
    deal-set: OpenSkill's mu and sigma, as the ladder stood when the deal-set was done."""

    dealset: int
    scope: str
    version: int
    mu: float
    sigma: float
    at: str = ""  # (ISO time; "" when written: the time it is written)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_encode = msgspec.json.Encoder().encode


def _match_json(match: StoredMatch) -> str:
    """A stored match as the league file keeps it: its fields in order, its record's place as
    ``record_path`` (in its place) and ``record_span`` (last), as before RecordPlace."""
    data: dict[str, Any] = {}
    for name, value in msgspec.to_builtins(replace(match, record=None)).items():
        if name == "record":
            data["record_path"] = None if match.record is None else str(match.record.path)
        else:
            data[name] = value
    data["record_span"] = None if match.record is None else match.record.span
    return _encode(data).decode()


def _decode_match(text: str) -> StoredMatch:
    """A stored match from the league file's JSON (_match_json)."""
    data = msgspec.json.decode(text)
    path, span = data.pop("record_path", None), data.pop("record_span", None)
    match = msgspec.convert(data, StoredMatch)
    return match if path is None else replace(match, record=RecordPlace.of(path, span))


VERSION_COLUMNS = (
    "v.id, a.name, v.bot, v.number, v.label, v.content_hash, v.folder, v.status, v.log, v.note, "
    "v.created, v.changed"
)


class LeagueStore:
    """The league's SQLite file, open for the server (one connection, used from one thread)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, lock: int | None = None) -> None:
        self.path = path
        self._db = connection
        self._lock = lock

    @classmethod
    def open(cls, path: Path | str, *, name: str, serving: bool = False) -> LeagueStore:
        """Open (creating it if new) the league store at ``path``. ``serving``: for the one
        server that plays the league (LeagueStoreError when another holds it), not for the
        commands that only add an author or change a version's status."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = _lock_for_serving(path) if serving else None
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("PRAGMA busy_timeout = 10000")  # the CLI writes beside the server
            meta = _read_meta(db)
            if meta is not None and meta.get("app") != APP:
                raise LeagueStoreError(
                    f"{path}: an SQLite file of something else (app = {meta.get('app')!r}); "
                    f"expected a league store ({APP}): give the league another folder"
                )
            if meta is not None and meta.get("schema") not in ("1", SCHEMA_VERSION):
                raise LeagueStoreError(
                    f"{path}: a league store of schema {meta.get('schema')!r}, made by another "
                    f"version of the arena (this one reads {SCHEMA_VERSION!r}): serve it with "
                    "that version, or give this league another folder"
                )
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")  # a stored match survives a power cut
            db.executescript(SCHEMA)  # (idempotent: every statement is IF NOT EXISTS)
            if meta is not None and meta.get("schema") == "1":
                _count_seats(db)
            if meta is None:
                with _transaction(db):
                    db.executemany(
                        "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                        [
                            ("app", APP),
                            ("schema", SCHEMA_VERSION),
                            ("name", name),
                            ("created", _now()),
                            (HISTORY_NOTE, "kept"),  # (a new store: nothing to fill in)
                        ],
                    )
        except sqlite3.DatabaseError as exc:
            raise LeagueStoreError(f"{path}: not a league store ({exc})") from None
        except OSError as exc:
            raise LeagueStoreError(f"{path}: cannot be opened: {exc.strerror or exc}") from None
        return cls(path, db, lock)

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            os.close(self._lock)  # (which releases the lock)

    # -- meta ------------------------------------------------------------------------------

    def note(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def keep_note(self, key: str, value: str) -> str:
        """Set ``key`` unless it is set already; the value kept."""
        with _transaction(self._db):
            self._db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, value))
        kept = self.note(key)
        assert kept is not None
        return kept

    # -- authors ---------------------------------------------------------------------------

    def add_author(
        self, name: str, token: str, *, registered: tuple[str, float, float] | None = None
    ) -> Author:
        """A new author. ``registered``: (client address, now, forget before) of an open
        registration, counted in the same transaction (rows older than "forget before" go)."""
        try:
            with _transaction(self._db):
                cursor = self._db.execute(
                    "INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)",
                    (name, hash_token(token), _now()),
                )
                if registered is not None:
                    address, at, forget_before = registered
                    self._db.execute("DELETE FROM registrations WHERE at < ?", (forget_before,))
                    self._db.execute("INSERT INTO registrations VALUES (?, ?)", (address, at))
        except sqlite3.IntegrityError:
            raise LeagueStoreError(
                f"author {name!r} exists already (expected a new name)"
            ) from None
        assert cursor.lastrowid is not None
        return self.author(cursor.lastrowid)

    def author(self, author_id: int) -> Author:
        row = self._db.execute(
            "SELECT id, name, created FROM authors WHERE id = ?", (author_id,)
        ).fetchone()
        if row is None:
            raise LeagueStoreError(f"no author with id {author_id}")
        return Author(*row)

    def author_named(self, name: str) -> Author | None:
        row = self._db.execute(
            "SELECT id, name, created FROM authors WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else Author(*row)

    def author_of_token(self, token: str) -> Author | None:
        row = self._db.execute(
            "SELECT id, name, created FROM authors WHERE token_hash = ?", (hash_token(token),)
        ).fetchone()
        return None if row is None else Author(*row)

    def authors(self) -> list[Author]:
        rows = self._db.execute("SELECT id, name, created FROM authors ORDER BY name").fetchall()
        return [Author(*row) for row in rows]

    # -- uploads (the rate limit) ----------------------------------------------------------

    def uploads_since(self, author_id: int, since: float) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM uploads WHERE author_id = ? AND at >= ?", (author_id, since)
        ).fetchone()
        return int(row[0])

    def registrations_since(self, address: str, since: float) -> list[float]:
        """When ``address`` registered authors since ``since``, oldest first."""
        rows = self._db.execute(
            "SELECT at FROM registrations WHERE address = ? AND at >= ? ORDER BY at",
            (address, since),
        ).fetchall()
        return [row[0] for row in rows]

    def count_upload(self, author_id: int, at: float) -> None:
        with _transaction(self._db):
            self._db.execute("INSERT INTO uploads VALUES (?, ?)", (author_id, at))

    # -- versions --------------------------------------------------------------------------

    def add_version(
        self,
        author_id: int,
        bot: str,
        *,
        status: str,
        log: str,
        content_hash: str | None = None,
        folder: str | None = None,
        note: str = "",
    ) -> Version:
        """A new version of ``bot`` by the author, numbered after the last."""
        author = self.author(author_id)
        now = _now()
        with _transaction(self._db):
            (last,) = self._db.execute(
                "SELECT coalesce(max(number), 0) FROM versions WHERE author_id = ? AND bot = ?",
                (author_id, bot),
            ).fetchone()
            number = last + 1
            cursor = self._db.execute(
                "INSERT INTO versions (author_id, bot, number, label, content_hash, folder, "
                "status, log, note, created, changed) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    author_id,
                    bot,
                    number,
                    f"{author.name}.{bot}.v{number}",
                    content_hash,
                    folder,
                    status,
                    log,
                    note,
                    now,
                    now,
                ),
            )
        assert cursor.lastrowid is not None
        return self.version(cursor.lastrowid)

    def version(self, version_id: int) -> Version:
        row = self._db.execute(
            f"SELECT {VERSION_COLUMNS} FROM versions v JOIN authors a ON a.id = v.author_id "
            "WHERE v.id = ?",
            (version_id,),
        ).fetchone()
        if row is None:
            raise LeagueStoreError(f"no version with id {version_id}")
        return Version(*row)

    def versions(self, *, author_id: int | None = None, status: str | None = None) -> list[Version]:
        where: list[str] = []
        args: list[object] = []
        if author_id is not None:
            where.append("v.author_id = ?")
            args.append(author_id)
        if status is not None:
            where.append("v.status = ?")
            args.append(status)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        rows = self._db.execute(
            f"SELECT {VERSION_COLUMNS} FROM versions v JOIN authors a ON a.id = v.author_id "
            f"{clause} ORDER BY v.id",
            args,
        ).fetchall()
        return [Version(*row) for row in rows]

    def set_status(self, version_id: int, status: str, note: str = "") -> Version:
        if status not in STATUSES:
            raise LeagueStoreError(f"status {status!r}: expected one of {', '.join(STATUSES)}")
        with _transaction(self._db):
            self._db.execute(
                "UPDATE versions SET status = ?, note = ?, changed = ? WHERE id = ?",
                (status, note, _now(), version_id),
            )
        return self.version(version_id)

    # -- deal-sets and matches -------------------------------------------------------------

    def add_dealset(self, game: str, seed: int, seats: Sequence[int]) -> DealSet:
        """Write a deal-set, and count its seats (seats, seated, meetings) with it."""
        with _transaction(self._db):
            cursor = self._db.execute(
                "INSERT INTO dealsets (game, seed, seats, created) VALUES (?, ?, ?, ?)",
                (game, str(seed), json.dumps(list(seats)), _now()),
            )
            assert cursor.lastrowid is not None
            _count_dealset(self._db, cursor.lastrowid, game, seats)
        return self.dealset(cursor.lastrowid)

    def dealset(self, dealset_id: int) -> DealSet:
        row = self._db.execute(
            "SELECT id, game, seed, seats, done FROM dealsets WHERE id = ?", (dealset_id,)
        ).fetchone()
        if row is None:
            raise LeagueStoreError(f"no deal-set with id {dealset_id}")
        return _dealset(row)

    def open_dealsets(self) -> list[DealSet]:
        rows = self._db.execute(
            "SELECT id, game, seed, seats, done FROM dealsets WHERE done = 0 ORDER BY id"
        ).fetchall()
        return [_dealset(row) for row in rows]

    def dealsets_per_game(self) -> dict[str, int]:
        rows = self._db.execute("SELECT game, count(*) FROM dealsets GROUP BY game").fetchall()
        return dict(rows)

    def dealset_seats(self, game: str) -> list[tuple[int, ...]]:
        """The seats (version ids) of every deal-set of ``game``, played or being played."""
        rows = self._db.execute("SELECT seats FROM dealsets WHERE game = ?", (game,)).fetchall()
        return [tuple(json.loads(row[0])) for row in rows]

    def seatings(self, game: str) -> tuple[dict[int, int], dict[frozenset[int], int]]:
        """Per version id, the deal-sets of ``game`` it sits in; per pair of version ids, the
        deal-sets of ``game`` they met in (what :meth:`dealset_seats` would count, read from
        the counts kept as deal-sets are written)."""
        seated = self._db.execute(
            "SELECT version, dealsets FROM seated WHERE game = ?", (game,)
        ).fetchall()
        met = self._db.execute(
            "SELECT a, b, dealsets FROM meetings WHERE game = ?", (game,)
        ).fetchall()
        return dict(seated), {frozenset((a, b)): n for a, b, n in met}

    def dealset_count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM dealsets").fetchone()[0])

    def finish_dealset(self, dealset_id: int, ratings: Sequence[RatingPoint] = ()) -> None:
        """Mark the deal-set done and keep ``ratings`` (its versions' ratings now), together."""
        with _transaction(self._db):
            self._db.execute("UPDATE dealsets SET done = 1 WHERE id = ?", (dealset_id,))
            self._keep_ratings(ratings)

    def keep_ratings(self, ratings: Sequence[RatingPoint]) -> None:
        """Keep ratings of deal-sets done before the history was kept (a row kept is kept)."""
        with _transaction(self._db):
            self._keep_ratings(ratings)

    def _keep_ratings(self, ratings: Sequence[RatingPoint]) -> None:
        now = _now()
        self._db.executemany(
            "INSERT OR IGNORE INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
            [(r.dealset, r.scope, r.version, r.mu, r.sigma, r.at or now) for r in ratings],
        )

    def rating_history(self, version_id: int) -> list[RatingPoint]:
        """The version's ratings after each deal-set it sat in, in the order they were kept."""
        rows = self._db.execute(
            "SELECT dealset, scope, version, mu, sigma, at FROM ratings WHERE version = ? "
            "ORDER BY rowid",
            (version_id,),
        ).fetchall()
        return [RatingPoint(*row) for row in rows]

    def finish_times(self) -> dict[int, str]:
        """When each deal-set's last stored match finished (deal-set id -> ISO time)."""
        rows = self._db.execute("SELECT dealset, max(finished) FROM matches GROUP BY dealset")
        return dict(rows.fetchall())

    def done_dealsets(self) -> list[DealSet]:
        rows = self._db.execute(
            "SELECT id, game, seed, seats, done FROM dealsets WHERE done = 1 ORDER BY id"
        ).fetchall()
        return [_dealset(row) for row in rows]

    def stored_rotations(self, dealset_id: int) -> set[int]:
        rows = self._db.execute(
            "SELECT rotation FROM matches WHERE dealset = ?", (dealset_id,)
        ).fetchall()
        return {row[0] for row in rows}

    def save_match(self, dealset_id: int, rotation: int, match: StoredMatch) -> None:
        """Store one rotation's match; LeagueStoreError if that rotation is stored already."""
        try:
            with _transaction(self._db):
                self._db.execute(
                    "INSERT INTO matches VALUES (?, ?, ?, ?)",
                    (dealset_id, rotation, _match_json(match), _now()),
                )
        except sqlite3.IntegrityError:
            raise LeagueStoreError(
                f"deal-set {dealset_id} rotation {rotation}: stored already (a match is never "
                "played twice)"
            ) from None

    def matches(self, *, latest: int | None = None) -> list[StoredMatch]:
        """Every stored match in the order stored, or the ``latest`` few, newest first."""
        if latest is None:
            rows = self._db.execute("SELECT match FROM matches ORDER BY rowid").fetchall()
        else:
            rows = self._db.execute(
                "SELECT match FROM matches ORDER BY rowid DESC LIMIT ?", (latest,)
            ).fetchall()
        return [_decode_match(row[0]) for row in rows]

    def matches_with_faults(self, version_id: int | None = None) -> list[StoredMatch]:
        """The stored matches with a fault (of the deal-sets ``version_id`` sits in), in the
        order stored: only those are decoded (faults are rare; the ladder lists the latest)."""
        has_fault = "json_array_length(m.match, '$.faults') > 0"
        if version_id is None:
            query = f"SELECT m.match FROM matches m WHERE {has_fault} ORDER BY m.rowid"
            rows = self._db.execute(query).fetchall()
        else:
            query = (
                "SELECT m.match FROM seats s JOIN matches m ON m.dealset = s.dealset "
                f"WHERE s.version = ? AND {has_fault} ORDER BY m.rowid"
            )
            rows = self._db.execute(query, (version_id,)).fetchall()
        return [_decode_match(row[0]) for row in rows]

    def matches_of(self, version_id: int, *, latest: int | None = None) -> list[StoredMatch]:
        """The stored matches ``version_id`` played in the order stored, or its ``latest`` few,
        newest first (found through the deal-sets it sits in, not by reading every match)."""
        query = (
            "SELECT m.match FROM seats s JOIN matches m ON m.dealset = s.dealset "
            "WHERE s.version = ? ORDER BY m.rowid"
        )
        if latest is None:
            rows = self._db.execute(query, (version_id,)).fetchall()
        else:
            rows = self._db.execute(query + " DESC LIMIT ?", (version_id, latest)).fetchall()
        return [_decode_match(row[0]) for row in rows]

    def iter_match_rows(self) -> Iterator[tuple[int, int, str]]:
        """(dealset, rotation, finished) of every stored match, in the order stored."""
        yield from self._db.execute(
            "SELECT dealset, rotation, finished FROM matches ORDER BY rowid"
        )

    def match(self, dealset_id: int, rotation: int) -> StoredMatch | None:
        row = self._db.execute(
            "SELECT match FROM matches WHERE dealset = ? AND rotation = ?", (dealset_id, rotation)
        ).fetchone()
        return None if row is None else _decode_match(row[0])


def _lock_for_serving(path: Path) -> int:
    """An exclusive lock on ``<store>.lock``, held while the server runs (the kernel drops it
    when the process ends, however it ends)."""
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LeagueStoreError(
            f"{path}: another arena league serve plays this league (one server per league "
            "folder: stop it first, or give this league another folder)"
        ) from None
    return fd


def _count_dealset(db: sqlite3.Connection, dealset: int, game: str, seats: Sequence[int]) -> None:
    """Count one deal-set's seats (in the caller's transaction): each version once."""
    versions = sorted(set(seats))
    db.executemany("INSERT INTO seats VALUES (?, ?)", [(v, dealset) for v in versions])
    db.executemany(
        "INSERT INTO seated VALUES (?, ?, 1) "
        "ON CONFLICT (game, version) DO UPDATE SET dealsets = dealsets + 1",
        [(game, v) for v in versions],
    )
    db.executemany(
        "INSERT INTO meetings VALUES (?, ?, ?, 1) "
        "ON CONFLICT (game, a, b) DO UPDATE SET dealsets = dealsets + 1",
        [(game, a, b) for a, b in itertools.combinations(versions, 2)],
    )


def _count_seats(db: sqlite3.Connection) -> None:
    """Schema 1 to 2: count the seats of every deal-set stored, in one transaction."""
    with _transaction(db):
        db.execute("DELETE FROM seats")
        db.execute("DELETE FROM seated")
        db.execute("DELETE FROM meetings")
        for dealset, game, seats in db.execute("SELECT id, game, seats FROM dealsets").fetchall():
            _count_dealset(db, dealset, game, json.loads(seats))
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))


def _dealset(row: tuple[Any, ...]) -> DealSet:
    return DealSet(row[0], row[1], int(row[2]), tuple(json.loads(row[3])), bool(row[4]))


def _read_meta(db: sqlite3.Connection) -> dict[str, str] | None:
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        if tables:
            return {"app": "unknown (tables: " + ", ".join(sorted(tables)) + ")"}
        return None
    return dict(db.execute("SELECT key, value FROM meta").fetchall())


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an error), on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if kind is not None else "COMMIT")
