"""The standings fold extended match by match, in any order, and cached in the results file,
always equals a full refold of the same matches in schedule order."""

import random
import sqlite3

import msgspec
import pytest

from arena.tournament import standings as standings_module
from arena.tournament.standings import (
    LiveStandings,
    StaleFold,
    StandingsFold,
    compute_standings,
    fold_from_bytes,
    fold_to_bytes,
    load_fold,
)
from arena.tournament.store import ResultStore, StoredFault, StoredMatch

BOTS = ["a", "b", "c", "d", "e"]
GAMES = ["vd", "aon", "af"]  # tournament order differs from label order on purpose


def random_history(rng: random.Random, deals: int) -> list[StoredMatch]:
    """Matches of three games in schedule order, some forfeited, faulty, aborted or unrated."""
    out = []
    for deal in range(deals):
        for game in GAMES:
            players, teams = (4, (0, 1, 0, 1)) if game == "af" else (rng.choice((3, 4)), None)
            game_id = {"vd": "vingt-down", "aon": "alles-oder-nichts", "af": "all-fours"}[game]
            for table in range(2):
                seated = rng.sample(BOTS, players) if rng.random() < 0.9 else ["a"] * players
                for rotation in range(rng.choice((1, players, players))):
                    bots = tuple(seated[(k - rotation) % players] for k in range(players))
                    scores = tuple(rng.randint(-5, 30) for _ in range(players))
                    placings = tuple(1 + sorted(scores, reverse=True).index(s) for s in scores)
                    faulty = rng.random() < 0.2
                    out.append(
                        StoredMatch(
                            match_id=f"{game}/t{table}/d{deal}/r{rotation}",
                            game=game,
                            game_id=game_id,
                            table=table,
                            deal=deal,
                            rotation=rotation,
                            seed=deal,
                            players=players,
                            options={},
                            bots=bots,
                            scores=scores,
                            placings=placings,
                            teams=teams,
                            forfeited=(0,) if faulty and rng.random() < 0.5 else (),
                            faults=(StoredFault(0, bots[0], "timeout", 3, "late"),)
                            if faulty
                            else (),
                            decision_ms=tuple(
                                tuple(round(rng.uniform(0, 3), 2) for _ in range(rng.randint(0, 4)))
                                for _ in range(players)
                            ),
                            status="aborted" if rng.random() < 0.05 else "completed",
                        )
                    )
    return out


def nearly_in_order(rng: random.Random, matches: list, spread: int) -> list:
    """The matches as concurrent runs finish them: each a few places from its own."""
    keyed = [(i + rng.uniform(0, spread), m) for i, m in enumerate(matches)]
    return [m for _, m in sorted(keyed, key=lambda pair: pair[0])]


def completed_version(match: StoredMatch) -> StoredMatch:
    return StoredMatch(**{**match.__dict__, "status": "completed", "faults": ()})


@pytest.mark.parametrize("seed", range(12))
def test_the_fold_in_any_nearby_order_with_reloads_equals_the_refold(seed, monkeypatch):
    monkeypatch.setattr(standings_module, "RATING_WINDOW", 40)
    monkeypatch.setattr(standings_module, "CHECKPOINT_EVERY", 8)
    rng = random.Random(seed)
    history = random_history(rng, deals=6)
    arrivals = nearly_in_order(rng, history, spread=rng.choice((1, 5, 30)))
    # aborted matches are played again later (and replace the aborted row)
    arrivals += [completed_version(m) for m in history if m.status == "aborted"]
    stored: dict[str, StoredMatch] = {}
    fold = StandingsFold(BOTS, GAMES)
    stale = 0
    for i, match in enumerate(arrivals):
        stored[match.match_id] = match
        try:
            fold.add(match)
        except StaleFold:  # what LiveStandings does: fold everything stored again
            stale += 1
            fold = StandingsFold(BOTS, GAMES)
            for again in sorted(stored.values(), key=fold.order):
                fold.add(again)
        if rng.random() < 0.05:
            fold = fold_from_bytes(fold_to_bytes(fold))
            assert fold is not None
        if i % 17 == 0 or i == len(arrivals) - 1:
            assert fold.standings() == compute_standings(stored.values(), BOTS, GAMES)
    # only the matches replayed long after being aborted came before the window
    assert stale <= sum(1 for m in history if m.status == "aborted")


def test_a_match_before_the_window_is_reported_stale(monkeypatch):
    monkeypatch.setattr(standings_module, "RATING_WINDOW", 8)
    monkeypatch.setattr(standings_module, "CHECKPOINT_EVERY", 2)
    history = [m for m in random_history(random.Random(3), deals=4) if m.completed]
    fold = StandingsFold(BOTS, GAMES)
    with pytest.raises(StaleFold):
        for match in reversed(history):
            fold.add(match)


def test_a_state_of_another_format_or_a_foreign_blob_is_not_a_fold():
    fold = StandingsFold(BOTS, GAMES)
    assert fold_from_bytes(b"\x93garbage") is None
    other = msgspec.msgpack.decode(fold_to_bytes(fold))
    other["format"] += 1
    assert fold_from_bytes(msgspec.msgpack.encode(other)) is None
    # classes that are not marked @persisted are never created from a state
    foreign = {"format": standings_module.FOLD_FORMAT, "fold": {"$o": "Popen", "a": {}}}
    assert fold_from_bytes(msgspec.msgpack.encode(foreign)) is None
    with pytest.raises(TypeError, match="persisted"):
        fold._games = [object()]  # type: ignore[list-item]
        fold_to_bytes(fold)


def save_all(store, matches):
    for match in matches:
        store.save(match)


def open_store(path):
    return ResultStore.open_for_run(path, name="t", fingerprint="f", definition={"bots": []})


def test_the_cached_fold_in_a_real_results_file_equals_the_refold(tmp_path, monkeypatch):
    monkeypatch.setattr(standings_module, "PERSIST_EVERY", 25)
    rng = random.Random(7)
    history = random_history(rng, deals=8)
    arrivals = nearly_in_order(rng, history, spread=4)
    path = tmp_path / "results.sqlite"
    half = len(arrivals) // 2
    with open_store(path) as store:  # a first run, cut halfway
        live = LiveStandings(store, BOTS, GAMES)
        for match in arrivals[:half]:
            store.save(match)
            live.add(match)
    with open_store(path) as store:  # resumed: starts from the cache, ends with the rest
        assert store.fold_state("standings") is not None
        live = LiveStandings(store, BOTS, GAMES)
        for match in arrivals[half:]:
            store.save(match)
            live.add(match)
        save_all(store, [completed_version(m) for m in history if m.status == "aborted"])
        # the last matches were stored without the live fold (the cache is behind)
    with ResultStore.open_read(path) as store:
        everything = store.matches(include_aborted=True)
        fold, seq = load_fold(store, BOTS, GAMES)
        assert seq == store.last_seq()
        assert fold.standings() == compute_standings(everything, BOTS, GAMES)
        # a cache made for another list of bots is not used
        assert load_fold(store, BOTS[:-1], GAMES)[0].standings() == compute_standings(
            everything, BOTS[:-1], GAMES
        )


def test_a_damaged_cache_or_rows_without_save_numbers_mean_a_refold(tmp_path):
    history = random_history(random.Random(11), deals=3)
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        save_all(store, history)
        live = LiveStandings(store, BOTS, GAMES)
        live.persist()
        expected = compute_standings(store.matches(include_aborted=True), BOTS, GAMES)
    db = sqlite3.connect(path)
    with db:  # an older arena stored a match (no save number) and damaged the cache
        db.execute("UPDATE matches SET seq = NULL, scores = '[99,0,0,0]' WHERE rowid = 1")
        db.execute("UPDATE fold_state SET state = x'00'")
    db.close()
    with ResultStore.open_read(path) as store:
        changed = compute_standings(store.matches(include_aborted=True), BOTS, GAMES)
        assert changed != expected
        assert load_fold(store, BOTS, GAMES)[0].standings() == changed


def test_a_results_file_from_before_save_numbers_gains_them(tmp_path):
    history = random_history(random.Random(5), deals=2)
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        save_all(store, history)
    db = sqlite3.connect(path)
    with db:  # as an older arena left it
        db.execute("DROP TABLE fold_state")
        db.execute("DROP INDEX matches_by_seq")
        db.execute("ALTER TABLE matches DROP COLUMN seq")
    db.close()
    with ResultStore.open_read(path) as store:  # read-only: refolded, nothing written
        assert store.fold_state("standings") is None and store.unsequenced()
        before = load_fold(store, BOTS, GAMES)[0].standings()
    with open_store(path) as store:
        assert not store.unsequenced() and store.last_seq() > 0
        assert load_fold(store, BOTS, GAMES)[0].standings() == before


@pytest.mark.parametrize("seating", ["duplicate", "single"])
def test_the_statistics_survive_the_cache_and_follow_seating_and_confidence(tmp_path, seating):
    """Per-deal intervals, pairwise tables and ties (arena.stats) come back from the cached
    fold, open deals included; a cache of the other seating is not used; the confidence is
    the reader's."""
    rng = random.Random(13)
    history = [m for m in random_history(rng, deals=6) if m.completed]
    arrivals = nearly_in_order(rng, history, spread=6)
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        live = LiveStandings(store, BOTS, GAMES, seating=seating)
        for match in arrivals[: len(arrivals) * 2 // 3]:  # some deals still open
            store.save(match)
            live.add(match)
        live.persist()
        save_all(store, arrivals[len(arrivals) * 2 // 3 :])
    with ResultStore.open_read(path) as store:
        everything = store.matches(include_aborted=True)
        for confidence in (0.95, 0.6):
            expected = compute_standings(
                everything, BOTS, GAMES, seating=seating, confidence=confidence
            )
            assert any(expected.pairs.values()) and expected.confidence == confidence
            fold, _seq = load_fold(store, BOTS, GAMES, seating=seating, confidence=confidence)
            assert fold.standings() == expected
        other = "single" if seating == "duplicate" else "duplicate"
        assert load_fold(store, BOTS, GAMES, seating=other)[0].standings() == compute_standings(
            everything, BOTS, GAMES, seating=other
        )
