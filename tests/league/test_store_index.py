"""The league store's indexed queries answer what a scan of every deal-set and match answers:
a version's matches (the version page) and the seats and meetings the matchmaker counts, for a
seeded random league, and for a store of schema 1 brought to 2 on opening."""

from __future__ import annotations

import itertools
import random
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from arena.league.store import LeagueStore, LeagueStoreError
from arena.tournament.schedule import rotate
from tests.league.test_league_store import _match

GAMES = ("three", "four")


def _random_league(store: LeagueStore, seed: int) -> None:
    """Versions of three authors and deal-sets of two games; a version may sit twice at a
    table, and some deal-sets are cut short (not every rotation stored)."""
    rng = random.Random(seed)
    versions = []
    for name in ("ann", "bob", "cy"):
        author = store.add_author(name, f"token-{name}")
        versions += [store.add_version(author.id, "bot", status="active", log="") for _ in "123"]
    for _ in range(120):
        game = rng.choice(GAMES)
        players = 3 if game == "three" else 4
        table = [rng.choice(versions) for _ in range(players)]
        dealset = store.add_dealset(game, rng.getrandbits(64), [v.id for v in table])
        for rotation in range(rng.randint(0, players)):
            bots = rotate(tuple(v.label for v in table), rotation)
            match = replace(_match(dealset.id, rotation), game=game, players=players, bots=bots)
            store.save_match(dealset.id, rotation, match)


def _scanned_seatings(
    store: LeagueStore, game: str
) -> tuple[Counter[int], Counter[frozenset[int]]]:
    """What the matchmaker counted before the index: every deal-set of the game read."""
    seated: Counter[int] = Counter()
    met: Counter[frozenset[int]] = Counter()
    for seats in store.dealset_seats(game):
        seated.update(set(seats))
        for a, b in itertools.combinations(sorted(set(seats)), 2):
            met[frozenset((a, b))] += 1
    return seated, met


def _same_as_the_scan(store: LeagueStore) -> None:
    every = store.matches()
    for version in store.versions():
        scanned = [m for m in every if version.label in m.bots]
        assert store.matches_of(version.id) == scanned
        assert store.matches_of(version.id, latest=5) == scanned[-5:][::-1]
    for game in GAMES:
        seated, met = store.seatings(game)
        assert (Counter(seated), Counter(met)) == _scanned_seatings(store, game)


def test_the_indexed_queries_answer_what_the_scan_answers(tmp_path: Path) -> None:
    store = LeagueStore.open(tmp_path / "league.sqlite", name="l")
    _random_league(store, seed=7)
    assert len(store.matches()) > 100
    _same_as_the_scan(store)
    store.close()


def test_a_store_of_schema_1_is_counted_on_opening(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    store = LeagueStore.open(path, name="l")
    _random_league(store, seed=11)
    store.close()
    with sqlite3.connect(path) as db:  # what schema 1 had: no seats, seated or meetings
        db.executescript(
            "DROP TABLE seats; DROP TABLE seated; DROP TABLE meetings;"
            "UPDATE meta SET value = '1' WHERE key = 'schema';"
        )
    store = LeagueStore.open(path, name="l")
    assert store.note("schema") == "2"
    _same_as_the_scan(store)
    store.close()
    # opened again, nothing is counted twice
    store = LeagueStore.open(path, name="l")
    _same_as_the_scan(store)
    store.close()


def test_a_store_of_a_later_schema_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    LeagueStore.open(path, name="l").close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '9' WHERE key = 'schema'")
    with pytest.raises(LeagueStoreError, match=r"schema '9', made by another version") as refused:
        LeagueStore.open(path, name="l")
    assert "\n" not in str(refused.value)
