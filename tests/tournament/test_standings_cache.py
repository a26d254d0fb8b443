"""The standings fold extended match by match, in any order, and cached in the results file,
always equals a full refold of the same matches in schedule order."""

import random
import sqlite3
from dataclasses import replace

import msgspec
import pytest

from arena.referee.results import FaultRecord
from arena.tournament import openskill_fast
from arena.tournament import standings as standings_module
from arena.tournament.latency import LatencyReport
from arena.tournament.standings import (
    LiveStandings,
    StaleFold,
    StandingsFold,
    compute_standings,
    fold_from_bytes,
    fold_to_bytes,
    load_fold,
    refold,
    schedule_order,
)
from arena.tournament.store import ResultStore, StoredMatch

BOTS = ["a", "b", "c", "d", "e"]
MANY = [*BOTS, *"fghijklmn"]  # enough that tables often share no bot: late matches reuse more
GAMES = ["vd", "aon", "af"]  # tournament order differs from label order on purpose


def random_history(rng: random.Random, deals: int, pool=BOTS) -> list[StoredMatch]:
    """Matches of three games in schedule order, some forfeited, faulty, aborted or unrated."""
    out = []
    for deal in range(deals):
        for game in GAMES:
            players, teams = (4, (0, 1, 0, 1)) if game == "af" else (rng.choice((3, 4)), None)
            game_id = {"vd": "vingt-down", "aon": "alles-oder-nichts", "af": "all-fours"}[game]
            for table in range(2):
                seated = rng.sample(pool, players) if rng.random() < 0.9 else ["a"] * players
                for rotation in range(rng.choice((1, players, players))):
                    bots = tuple(seated[(k - rotation) % players] for k in range(players))
                    scores = tuple(rng.randint(-5, 30) for _ in range(players))
                    placings = tuple(1 + sorted(scores, reverse=True).index(s) for s in scores)
                    faulty = rng.random() < 0.2
                    out.append(
                        StoredMatch(
                            match_id=f"{game}/r{rotation}/t{table}/d{deal}",  # not in the store order,
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
                            faults=(FaultRecord.read(0, bots[0], "timeout", 3, "late"),)
                            if faulty
                            else (),
                            decision_ms=tuple(
                                tuple(round(rng.uniform(0, 3), 2) for _ in range(rng.randint(0, 4)))
                                for _ in range(players)
                            ),
                            status="aborted" if rng.random() < 0.05 else "completed",
                            referee=referee_figures(rng),
                        )
                    )
    return out


def referee_figures(rng: random.Random) -> dict | None:
    """The referee's latency in a match: missing (older rows), calm, slow or overloaded."""
    if rng.random() < 0.1:
        return None
    p50 = round(rng.choice((0.02, 0.03, 0.05, 0.08)) * rng.choice((1, 1, 2)), 3)
    worst = round(rng.choice((0.3, 1.0, 12.0, 26.0, 40.0)), 3)  # half the 50 ms margin: 25
    return {
        "p50_ms": p50 if rng.random() < 0.95 else None,
        "p99_ms": round(min(worst, p50 * rng.uniform(2, 9)), 3),
        "max_ms": worst,
        "load_per_core": rng.choice((0.2, 0.7, 0.99, 1.0, 1.6, None)),
    }


def in_store_order(matches) -> list[StoredMatch]:
    """As ResultStore.matches lists them (the latency report's order of strained matches)."""
    return sorted(matches, key=lambda m: (m.game, m.table, m.deal, m.rotation, m.match_id))


def latency_report(matches, margin_ms: int) -> LatencyReport:
    """The latency report computed directly from every match (what the fold must equal)."""
    ordered = in_store_order(m for m in matches if m.completed and m.referee)
    figures = [m.referee for m in ordered]

    def present(name):
        return [f[name] for f in figures if f.get(name) is not None]

    strained, details = [], {}
    for m in ordered:
        worst = m.referee.get("max_ms")  # (the load decides nothing: issue 38)
        if worst is not None and worst >= margin_ms / 2:
            strained.append(m)
            details[m.match_id] = f"referee latency {worst} ms of a {margin_ms} ms margin"
    medians = sorted(present("p50_ms"))
    return LatencyReport(
        matches=len(ordered),
        p50_ms=medians[len(medians) // 2] if medians else None,
        p99_ms=max(present("p99_ms"), default=None),
        max_ms=max(present("max_ms"), default=None),
        max_load_per_core=max(present("load_per_core"), default=None),
        strained=tuple(m.match_id for m in strained),
        suspect=tuple(m.match_id for m in strained if any(f.kind == "timeout" for f in m.faults)),
        margin_ms=margin_ms,
        details=details,
    )


def nearly_in_order(rng: random.Random, matches: list, spread: int) -> list:
    """The matches as concurrent runs finish them: each a few places from its own."""
    keyed = [(i + rng.uniform(0, spread), m) for i, m in enumerate(matches)]
    return [m for _, m in sorted(keyed, key=lambda pair: pair[0])]


def completed_version(match: StoredMatch) -> StoredMatch:
    return StoredMatch(**{**match.__dict__, "status": "completed", "faults": ()})


@pytest.mark.parametrize("bots", [BOTS, MANY], ids=["5 bots", "14 bots"])
@pytest.mark.parametrize("seed", range(12))
def test_the_fold_in_any_nearby_order_with_reloads_equals_the_refold(seed, bots, monkeypatch):
    monkeypatch.setattr(standings_module, "RATING_WINDOW", 40)
    rng = random.Random(seed)
    history = random_history(rng, deals=6, pool=bots)
    arrivals = nearly_in_order(rng, history, spread=rng.choice((1, 5, 30, 40)))
    # aborted matches are played again later (and replace the aborted row)
    arrivals += [completed_version(m) for m in history if m.status == "aborted"]
    stored: dict[str, StoredMatch] = {}
    fold = StandingsFold(bots, GAMES)
    stale = 0
    for i, match in enumerate(arrivals):
        stored[match.match_id] = match
        try:
            fold.add(match)
        except StaleFold:  # what LiveStandings does: fold everything stored again
            stale += 1
            fold = StandingsFold(bots, GAMES)
            for again in sorted(stored.values(), key=fold.order):
                fold.add(again)
        if rng.random() < 0.05:
            fold = fold_from_bytes(fold_to_bytes(fold))
            assert fold is not None
        if i % 17 == 0 or i == len(arrivals) - 1:
            assert fold.standings() == compute_standings(stored.values(), bots, GAMES)
            assert fold.latency() == latency_report(stored.values(), 50)
            # the ratings themselves, bit for bit, and no bot rated that the refold has not
            fresh = StandingsFold(bots, GAMES)
            for again in sorted(stored.values(), key=fresh.order):
                fresh.add(again)
            assert hexed(fold._ratings) == hexed(fresh._ratings)
    assert fold.latency().strained and fold.latency().suspect  # the histories have both
    # only the matches replayed long after being aborted came before the window
    assert stale <= sum(1 for m in history if m.status == "aborted")


def hexed(ratings):
    """The ratings of each scope as exact text (-0.0 and 0.0 differ), rated bots only."""
    return {
        scope: {bot: (mu.hex(), sigma.hex()) for bot, (mu, sigma) in rows.items()}
        for scope, rows in ratings.items()
        if rows
    }


def counted_updates(monkeypatch) -> list:
    """A list that grows by one per update of the model (one match in one scope)."""
    updates: list = []
    real = openskill_fast.rate
    monkeypatch.setattr(openskill_fast, "rate", lambda *args: updates.append(1) or real(*args))
    return updates


def two_player(deal, game, bots, table=0, winner=0):
    placings = (1, 2) if winner == 0 else (2, 1)
    return replace(
        random_history(random.Random(1), 1)[0],
        match_id=f"{game}{deal}{bots}",
        game=game,
        deal=deal,
        table=table,
        bots=tuple(bots),
        players=len(bots),
        placings=placings,
        scores=placings,
        teams=None,
        forfeited=(),
        faults=(),
        status="completed",
        decision_ms=(),
    )


def test_a_late_match_costs_what_came_after_it_not_the_window(monkeypatch):
    """A match k places late is rated, and the k after it again: 2 (k + 1) updates of the
    model (its game and the overall table), however many matches the window holds."""
    updates = counted_updates(monkeypatch)
    history = [two_player(deal, "vd", "ab", winner=deal % 3 == 0) for deal in range(100)]
    fold = StandingsFold(BOTS, GAMES)
    for m in history[:97] + history[98:]:
        fold.add(m)
    assert len(updates) == 2 * 99
    updates.clear()
    fold.add(history[97])
    assert len(updates) == 2 * 3
    assert hexed(fold._ratings) == hexed(compute_fold(history)._ratings)


def compute_fold(matches):
    fold = StandingsFold(BOTS, GAMES)
    for m in sorted(matches, key=fold.order):
        fold.add(m)
    return fold


def test_a_match_before_the_window_is_reported_stale(monkeypatch):
    monkeypatch.setattr(standings_module, "RATING_WINDOW", 8)
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
        assert fold.latency() == latency_report(everything, 50)
        # a tournament of another margin judges strained matches otherwise: refolded
        wider, _seq = load_fold(store, BOTS, GAMES, margin_ms=200)
        assert wider.latency() == latency_report(everything, 200) != fold.latency()
        # a cache made for another list of bots is not used
        assert load_fold(store, BOTS[:-1], GAMES)[0].standings() == compute_standings(
            everything, BOTS[:-1], GAMES
        )


def test_the_refold_streams_the_file_in_rating_order(tmp_path):
    """Read a chunk at a time in SQL, the matches come in exactly the order a fold rates them,
    a label the tournament does not list (last, by name) and replaced aborted rows included."""
    rng = random.Random(5)
    history = random_history(rng, deals=5)
    odd = [
        StoredMatch(**{**m.__dict__, "game": "zz", "match_id": "zz" + m.match_id})
        for m in history[:7]
    ]
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        save_all(store, nearly_in_order(rng, history + odd, spread=40))
        save_all(store, [completed_version(m) for m in history if m.status == "aborted"])
    with ResultStore.open_read(path) as store:
        stored = store.matches(include_aborted=True)
        expected = sorted(stored, key=lambda m: schedule_order(m, GAMES))
        for chunk in (1, 7, 1000):
            assert list(store.matches_in_rating_order(GAMES, chunk=chunk)) == expected
        assert list(store.matches_in_rating_order([])) == sorted(stored, key=schedule_order)
        assert refold(store, BOTS, GAMES).standings() == compute_standings(stored, BOTS, GAMES)


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


def test_arena_standings_reads_only_the_cache_and_the_rows_saved_since(tmp_path, monkeypatch):
    """`arena standings` (tables, latency line, --json, --csv) from the cached fold plus the
    rows saved after it: never every stored match; the latency equals the direct report."""
    import csv
    import io
    import json

    from click.testing import CliRunner

    from arena.cli import main

    rng = random.Random(17)
    history = random_history(rng, deals=5)
    definition = {
        "bots": [{"name": b} for b in BOTS],
        "games": [{"label": g} for g in GAMES],
        "time": {"margin_ms": 30},
    }
    path = tmp_path / "results.sqlite"
    with ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition) as store:
        live = LiveStandings(store, BOTS, GAMES, margin_ms=30)
        for match in history[:-7]:
            store.save(match)
            live.add(match)
        live.persist()
        save_all(store, history[-7:])  # saved after the cache: read and folded on top
        covered = store.fold_state("standings")[1]  # type: ignore[index]
        everything = store.matches(include_aborted=True)
    reads: list[int | None] = []
    real_matches = ResultStore.matches

    def counted(self, *, include_aborted=False, since=None):
        reads.append(since)
        return real_matches(self, include_aborted=include_aborted, since=since)

    monkeypatch.setattr(ResultStore, "matches", counted)
    expected = latency_report(everything, 30)
    assert expected.strained
    as_json = CliRunner().invoke(main, ["standings", str(path), "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert data["overall"]["referee_latency"] == json.loads(json.dumps(expected.as_data()))
    assert set(data) == {*GAMES, "overall"}  # still one entry per table
    as_csv = CliRunner().invoke(main, ["standings", str(path), "--csv"])
    rows = list(csv.DictReader(io.StringIO(as_csv.output)))
    overall = [r for r in rows if r["table"] == "overall"]
    assert overall and all(r["strained"] == str(len(expected.strained)) for r in overall)
    assert all(r["referee_p50_ms"] == str(expected.p50_ms) for r in overall)
    assert all(r["referee_matches"] == "" for r in rows if r["table"] != "overall")
    shown = CliRunner().invoke(main, ["standings", str(path)])
    assert f"median {expected.p50_ms} ms" in shown.output and "warning:" in shown.output
    assert reads and all(since == covered for since in reads)
