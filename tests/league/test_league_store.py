"""The league store: a rotation is stored once, tokens are kept as hashes, a file of something
else is refused in one line, and what was written is there after reopening."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from arena.league.store import Author, DealSet, LeagueStore, LeagueStoreError, Version
from arena.referee.results import FaultRecord, RecordPlace
from arena.tournament.store import StoredMatch


def _match(dealset: int, rotation: int) -> StoredMatch:
    return StoredMatch(
        match_id=f"g/s{dealset}/r{rotation}",
        game="g",
        game_id="eight-rounds",
        table=dealset,
        deal=dealset,
        rotation=rotation,
        seed=2**64 - 1,
        players=3,
        options={},
        bots=("a.x.v1", "b.y.v1", "a.x.v1"),
        scores=(1, 2, 3),
        placings=(3, 2, 1),
        teams=None,
        forfeited=(),
        faults=(),
        decision_ms=((1.0,), (2.0,), (3.0,)),
    )


def _with_a_dealset(path: Path) -> tuple[LeagueStore, Author, Version, DealSet]:
    """A new league store with an author, a version of its bot and a deal-set of it."""
    store = LeagueStore.open(path, name="l")
    author = store.add_author("a", "secret-token")
    version = store.add_version(author.id, "x", status="active", log="ok")
    return store, author, version, store.add_dealset("g", 2**64 - 1, [version.id] * 3)


def test_a_rotation_is_stored_once_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    store, author, version, dealset = _with_a_dealset(path)
    store.save_match(dealset.id, 0, _match(dealset.id, 0))
    with pytest.raises(LeagueStoreError, match="stored already"):
        store.save_match(dealset.id, 0, _match(dealset.id, 0))
    store.close()
    store = LeagueStore.open(path, name="l")
    assert store.matches() == [_match(dealset.id, 0)]
    assert store.open_dealsets()[0].seed == 2**64 - 1
    assert store.author_of_token("secret-token") == author
    assert store.author_of_token("another") is None
    assert store.version(version.id).label == "a.x.v1"
    assert store.add_version(author.id, "x", status="rejected", log="no").number == 2
    store.close()
    assert b"secret-token" not in path.read_bytes()


def test_a_file_of_something_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (x)")
    with pytest.raises(LeagueStoreError, match="an SQLite file of something else"):
        LeagueStore.open(path, name="l")
    path.write_bytes(b"not a database at all, just text" * 100)
    with pytest.raises(LeagueStoreError, match="not a league store"):
        LeagueStore.open(path, name="l")


def test_one_server_per_league(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    serving = LeagueStore.open(path, name="l", serving=True)
    with pytest.raises(LeagueStoreError, match="another arena league serve plays this league"):
        LeagueStore.open(path, name="l", serving=True)
    LeagueStore.open(path, name="l").close()  # an author added meanwhile: no lock needed
    serving.close()
    LeagueStore.open(path, name="l", serving=True).close()


# A match's row as league files hold it (its record a member of a records file): the columns
# ``record_path`` and ``record_span`` of the JSON, each where it has always been.
ROW = (
    '{"match_id":"g/s1/r0","game":"g","game_id":"eight-rounds","table":1,"deal":1,"rotation":0,'
    '"seed":18446744073709551615,"players":3,"options":{},"bots":["a.x.v1","b.y.v1","a.x.v1"],'
    '"scores":[1,2,3],"placings":[3,2,1],"teams":null,"forfeited":[],"faults":[{"seat":2,'
    '"bot":"a.x.v1","kind":"timeout","request_id":4,"message":"a.x.v1: no answer",'
    '"cause":"no reply","forfeits":false}],"decision_ms":[[1.0],[2.0],[3.0]],'
    '"status":"completed","reason":"completed",'
    '"record_path":"/l/records/20261205T101010-1-1.jsonl.gz","duration_s":0.0,"key":"",'
    '"referee":{"p50_ms":0.1,"p99_ms":0.2,"max_ms":0.3,"load_per_core":null},'
    '"record_span":[4096,1534]}'
)


def test_a_match_row_is_written_and_read_as_league_files_hold_it(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    store, _author, _version, dealset = _with_a_dealset(path)
    match = replace(
        _match(1, 0),
        faults=(FaultRecord.read(2, "a.x.v1", "timeout", 4, "a.x.v1: no answer"),),
        record=RecordPlace(Path("/l/records/20261205T101010-1-1.jsonl.gz"), 4096, 1534),
        referee={"p50_ms": 0.1, "p99_ms": 0.2, "max_ms": 0.3, "load_per_core": None},
    )
    store.save_match(dealset.id, 0, match)
    unrecorded = replace(_match(1, 1), record=None)
    store.save_match(dealset.id, 1, unrecorded)
    store.close()
    with sqlite3.connect(path) as db:
        rows = [row[0] for row in db.execute("SELECT match FROM matches ORDER BY rotation")]
    assert rows[0] == ROW
    assert '"record_path":null,' in rows[1] and rows[1].endswith('"record_span":null}')
    store = LeagueStore.open(path, name="l")
    assert store.matches() == [match, unrecorded]
    store.close()


# The store as it was before the ratings' history was kept (schema "1" of main at cfd01a6).
OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE, created TEXT NOT NULL);
CREATE TABLE versions (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES authors(id),
    bot TEXT NOT NULL, number INTEGER NOT NULL, label TEXT NOT NULL UNIQUE, content_hash TEXT,
    folder TEXT, status TEXT NOT NULL, log TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL, changed TEXT NOT NULL, UNIQUE (author_id, bot, number));
CREATE TABLE uploads (author_id INTEGER NOT NULL, at REAL NOT NULL);
CREATE TABLE dealsets (id INTEGER PRIMARY KEY, game TEXT NOT NULL, seed TEXT NOT NULL,
    seats TEXT NOT NULL, created TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE matches (dealset INTEGER NOT NULL REFERENCES dealsets(id),
    rotation INTEGER NOT NULL, match TEXT NOT NULL, finished TEXT NOT NULL,
    PRIMARY KEY (dealset, rotation));
INSERT INTO meta VALUES ('app', 'trick-arena-league'), ('schema', '1'), ('name', 'testleague');
INSERT INTO authors VALUES (1, 'house', 'x', '2026-12-01T00:00:00+00:00');
"""


def _played(dealset: int, rotation: int, labels: tuple[str, ...], places: tuple[int, ...]):
    """A completed eight-rounds match of ``labels`` at rotation ``rotation``."""
    import dataclasses

    n = len(labels)
    seats = tuple(labels[(i - rotation) % n] for i in range(n))
    placings = tuple(places[(i - rotation) % n] for i in range(n))
    return dataclasses.replace(
        _match(dealset, rotation),
        match_id=f"eight-rounds/s{dealset}/r{rotation}",
        game="eight-rounds",
        bots=seats,
        placings=placings,
        scores=tuple(10 - p for p in placings),
    )


def test_a_store_from_before_the_history_opens_and_gets_its_history(tmp_path: Path) -> None:
    """An old league store (no ratings table) opens; the league fills the history of its done
    deal-sets once, each point the rating the ladder had after that deal-set."""
    import msgspec

    from arena.league.config import load_league
    from arena.league.league import League
    from arena.tournament.standings import OVERALL, compute_standings
    from tests.league.conftest import league_toml

    config = load_league(league_toml(tmp_path, house=3))
    config.folder.mkdir()
    labels = ("house.house1.v1", "house.house2.v1", "house.house3.v1")
    played = {  # deal-set -> its matches (deal-set 3 is not done: one rotation stored)
        1: [_played(1, r, labels, (1, 2, 3)) for r in range(3)],
        2: [_played(2, r, labels, (1, 3, 2)) for r in range(3)],
        3: [_played(3, 0, labels, (3, 2, 1))],
    }
    with sqlite3.connect(config.store_path) as db:
        db.executescript(OLD_SCHEMA)
        for number, label in enumerate(labels, 1):
            db.execute(
                "INSERT INTO versions (id, author_id, bot, number, label, status, log, created, "
                "changed) VALUES (?, 1, ?, 1, ?, 'active', '', '', '')",
                (number, f"house{number}", label),
            )
        for dealset, matches in played.items():
            db.execute(
                "INSERT INTO dealsets VALUES (?, 'eight-rounds', '7', '[1, 2, 3]', '', ?)",
                (dealset, int(dealset < 3)),
            )
            for match in matches:
                db.execute(
                    "INSERT INTO matches VALUES (?, ?, ?, ?)",
                    (dealset, match.rotation, msgspec.json.encode(match).decode(), f"t{dealset}"),
                )
    store = LeagueStore.open(config.store_path, name="testleague")
    try:
        assert store.rating_history(1) == []  # (opened as it was: nothing kept yet)
        league = League(config, store)
        for version, label in enumerate(labels, 1):
            history = store.rating_history(version)
            assert [(p.dealset, p.scope) for p in history] == [
                (1, "eight-rounds"),
                (1, OVERALL),
                (2, "eight-rounds"),
                (2, OVERALL),
            ]
            for point in history:
                so_far = [m for d in range(1, point.dealset + 1) for m in played[d]]
                rows = compute_standings(so_far, games=["eight-rounds"]).tables[point.scope]
                row = next(r for r in rows if r.bot == label)
                assert (point.mu, point.sigma) == (row.mu, row.sigma)
                assert point.at == f"t{point.dealset}"
        # the ladder itself is every stored match's, the unfinished deal-set's included
        everything = [m for matches in played.values() for m in matches]
        assert league.standings() == compute_standings(everything, games=["eight-rounds"])
        # filled once: a deal-set done now adds its own points, nothing is filled again
        store.finish_dealset(3, league.ratings_after(store.dealset(3)))
        League(config, store)
        assert [p.dealset for p in store.rating_history(1)] == [1, 1, 2, 2, 3, 3]
    finally:
        store.close()
