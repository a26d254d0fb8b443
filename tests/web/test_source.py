"""Following a results file while a tournament writes it: only new rows are read, the standings
settle to exactly what ``arena standings`` prints, and a restarted file is read afresh."""

from __future__ import annotations

from pathlib import Path

from arena.tournament.standings import compute_standings, standings_as_data
from arena.tournament.store import ResultStore
from arena.web.source import SETTLE_S, TournamentSource


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_watched_file_is_followed_across_a_resume_and_a_restart(
    played: Path, tmp_path: Path
) -> None:
    with ResultStore.open_read(played) as finished:
        definition = finished.definition()
        matches = finished.matches(include_aborted=True)
    path = tmp_path / "live.sqlite"
    writer = ResultStore.open_for_run(path, name="webtest", fingerprint="f", definition=definition)
    for match in matches[:4]:
        writer.save(match)
    clock = Clock()
    reader = ResultStore.open_read(path)
    source = TournamentSource(
        path, name="webtest", definition=definition, records_dir=None, clock=clock
    )
    assert source.poll_file(reader)
    assert not source.poll_file(reader)  # nothing new: one PRAGMA, no rows read
    assert source.is_running()  # the writer holds the file's lock
    await source.refresh()
    assert source.summary()["progress"]["completed"] == 4 and source.summary()["exact"]

    for match in matches[4:10]:
        writer.save(match)
    assert source.poll_file(reader)
    clock.now += 1
    await source.refresh()
    live = source.summary()
    assert live["progress"]["completed"] == 10 and not live["exact"]  # still arriving
    clock.now += SETTLE_S
    await source.refresh()
    settled = source.summary()
    bots = [b["name"] for b in definition["bots"]]
    games = [g["label"] for g in definition["games"]]
    expected = standings_as_data(compute_standings(matches[:10], bots, games))
    assert settled["exact"] and settled["standings"] == expected

    # The tournament stops, and is run again with --restart: the file starts afresh.
    writer.close()
    assert not source.is_running()
    writer = ResultStore.open_for_run(
        path, name="webtest", fingerprint="f", definition=definition, restart=True
    )
    writer.save(matches[0])
    assert source.poll_file(reader)
    assert list(source.matches) == [matches[0].match_id]
    for match in matches[1:]:
        writer.save(match)
    source.poll_file(reader)
    clock.now += SETTLE_S
    await source.refresh()
    assert source.summary()["progress"]["completed"] == len(matches) == 16
    assert source.summary()["standings"] == standings_as_data(
        compute_standings(matches, bots, games)
    )
    writer.close()
    reader.close()


async def test_serve_alone_reads_the_files_cached_fold_with_the_tournaments_settings(
    tmp_path: Path, monkeypatch
) -> None:
    """`arena serve` on a file another process writes: the standings come from the fold cached
    in the file plus the rows saved since (not a fold of its own), with the tournament's
    seating, margin and confidence, and equal a full refold at every step; without a cache the
    stored matches are folded once, in a worker thread."""
    import random
    import sqlite3

    from arena.tournament.standings import LiveStandings, StandingsFold
    from tests.tournament.test_standings_cache import BOTS, GAMES, random_history

    history = random_history(random.Random(23), deals=5)
    last = history.pop()  # stored while the file is followed without a cache
    definition = {
        "bots": [{"name": b} for b in BOTS],
        "games": [{"label": g} for g in GAMES],
        "seating": "single",
        "time": {"margin_ms": 30},
    }
    settings = {"seating": "single", "confidence": 0.8}
    path = tmp_path / "results.sqlite"
    writer = ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition)
    live = LiveStandings(writer, BOTS, GAMES, margin_ms=30, **settings)  # type: ignore[arg-type]
    half = len(history) // 2
    for match in history[:half]:
        writer.save(match)
        live.add(match)
    live.persist()
    for match in history[half : half + 5]:
        writer.save(match)  # after the cache

    folded: list[str] = []
    real_add = StandingsFold.add
    refolding = []  # set while the expected standings are computed (not counted)

    def counted(self: StandingsFold, match) -> None:
        if not refolding:
            folded.append(match.match_id)
        real_add(self, match)

    monkeypatch.setattr(StandingsFold, "add", counted)
    reader = ResultStore.open_read(path)

    def expected() -> object:
        refolding.append(True)
        stored = reader.matches(include_aborted=True)
        result = compute_standings(stored, BOTS, GAMES, **settings)  # type: ignore[arg-type]
        refolding.clear()
        return result

    clock = Clock()
    source = TournamentSource(path, name="t", definition=definition, clock=clock, confidence=0.8)
    assert source.poll_file(reader)
    assert len(folded) == 5  # the rows saved after the cache, nothing else
    assert source.standings()[0] == expected()
    for match in history[half + 5 :]:
        writer.save(match)
    assert source.poll_file(reader)
    assert len(folded) == 5 + len(history) - half - 5
    clock.now += SETTLE_S
    summary = source.summary()
    assert summary["exact"] and summary["standings"] == standings_as_data(expected())  # type: ignore[arg-type]
    writer.close()

    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM fold_state")
    db.close()
    bare = TournamentSource(path, name="t", definition=definition, clock=clock, confidence=0.8)
    bare.poll_file(reader)
    writer = ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition)
    writer.save(last)
    assert bare.poll_file(reader)  # arrives while the fold is due
    assert bare.standings()[0].tables == {}  # being folded
    assert bare.summary()["standings"] == {}
    await bare.refresh()
    assert bare.standings()[0] == expected()
    assert bare.summary()["standings"] == standings_as_data(expected())  # type: ignore[arg-type]
    writer.close()
    reader.close()


async def test_a_followed_file_keeps_no_decision_times_and_the_bot_page_counts_them(
    tmp_path: Path,
) -> None:
    """The pages keep the stored matches without their decision times (the bulk of a row): the
    bot page's histogram and percentiles come from the fold's counts, on its 0.01 ms grid, the
    same with the file's cached fold, with a refold of the file, and in-process."""
    import random

    from arena.tournament.standings import TIME_RESOLUTION_MS, LiveStandings, StandingsFold
    from arena.web.source import TIME_BUCKETS_MS
    from tests.tournament.test_standings_cache import BOTS, GAMES, random_history

    history = random_history(random.Random(29), deals=6)
    definition = {"bots": [{"name": b} for b in BOTS], "games": [{"label": g} for g in GAMES]}
    path = tmp_path / "results.sqlite"
    with ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition) as w:
        for match in history:
            w.save(match)

    def expected_times(bot: str) -> dict:
        units = sorted(
            round(ms / TIME_RESOLUTION_MS)
            for m in history
            if m.completed
            for seat, name in enumerate(m.bots)
            if name == bot
            for ms in m.decision_ms[seat]
        )
        grid = [u * TIME_RESOLUTION_MS for u in units]
        counts = [0] * (len(TIME_BUCKETS_MS) + 1)
        for ms in grid:
            counts[next((i for i, b in enumerate(TIME_BUCKETS_MS) if ms <= b + 1e-9), -1)] += 1

        def rank(q: float) -> float:
            return round(grid[min(int(q * len(grid)), len(grid) - 1)], 6)

        return {
            "count": len(grid),
            "counts": counts,
            "p50": rank(0.5),
            "p90": rank(0.9),
            "p99": rank(0.99),
            "max": round(grid[-1], 6),
        }

    def check(source: TournamentSource) -> None:
        assert all(m.decision_ms == () for m in source.matches.values())
        assert len(source.matches) == len({m.match_id for m in history})
        for bot in BOTS:
            times = source.bot_page(bot)["times"]
            assert times["count"] > 0
            assert {k: times[k] for k in expected_times(bot)} == expected_times(bot)

    with ResultStore.open_read(path) as reader:  # no cached fold: refolded from the file
        followed = TournamentSource(path, name="t", definition=definition)
        followed.poll_file(reader)
        assert followed.bot_page("a")["times"]["count"] == 0  # while the fold is being made
        await followed.refresh()
        check(followed)
    with ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition) as w:
        LiveStandings(w, BOTS, GAMES).persist()
    with ResultStore.open_read(path) as reader:  # the file's cached fold
        cached = TournamentSource(path, name="t", definition=definition)
        cached.poll_file(reader)
        check(cached)
    fold = StandingsFold(BOTS, GAMES)  # in-process: the tournament's own fold
    in_process = TournamentSource(path, name="t", definition=definition, fold=fold)
    for match in sorted(history, key=fold.order):
        fold.add(match)
    in_process.load(history)
    check(in_process)


def test_the_worst_seats_made_once_per_version_follow_new_matches(tmp_path: Path) -> None:
    """A bot's worst seats are computed once per version for every bot's page: a match that
    arrives after a page was shown is in the next one, as in a source given everything at once."""
    import random

    from tests.tournament.test_standings_cache import BOTS, GAMES, random_history

    history = [m for m in random_history(random.Random(31), deals=6) if m.completed]
    definition = {"bots": [{"name": b} for b in BOTS], "games": [{"label": g} for g in GAMES]}
    path = tmp_path / "none.sqlite"
    growing = TournamentSource(path, name="t", definition=definition)
    growing.load(history[: len(history) // 2])
    before = {bot: growing.bot_page(bot)["worst"] for bot in BOTS}
    for match in history[len(history) // 2 :]:
        growing.add(match)
    whole = TournamentSource(path, name="t", definition=definition)
    whole.load(history)
    after = {bot: growing.bot_page(bot)["worst"] for bot in BOTS}
    assert after == {bot: whole.bot_page(bot)["worst"] for bot in BOTS} != before
