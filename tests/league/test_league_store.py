"""The league store: a rotation is stored once, tokens are kept as hashes, a file of something
else is refused in one line, and what was written is there after reopening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.league.store import LeagueStore, LeagueStoreError
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


def test_a_rotation_is_stored_once_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    store = LeagueStore.open(path, name="l")
    author = store.add_author("a", "secret-token")
    version = store.add_version(author.id, "x", status="active", log="ok")
    dealset = store.add_dealset("g", 2**64 - 1, [version.id] * 3)
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
