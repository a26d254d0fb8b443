"""Following a results file while a tournament writes it: only new rows are read, the standings
settle to exactly what ``arena standings`` prints, and a restarted file is read afresh."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.tournament.standings import compute_standings, standings_as_data
from arena.tournament.store import ResultStore
from arena.web.access import ORGANISER
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
    assert [m["match_id"] for m in source.summary()["latest"]] == [matches[0].match_id]
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


async def test_the_bot_page_counts_decision_times_from_the_fold(tmp_path: Path) -> None:
    """The pages keep no decision times (the bulk of a row): the bot page's histogram and
    percentiles come from the fold's counts, on its 0.01 ms grid, the same with the file's
    cached fold, with a refold of the file, and in-process."""
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
        progress = source.summary()["progress"]
        assert progress["completed"] + progress["aborted"] == len({m.match_id for m in history})
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


def _scheduled_history(rng, definition: dict) -> list:
    """Every match of the definition's schedule, stored in schedule order with random scores,
    some faults, and a few aborted, each of those stored again (completed) a little later."""
    from arena.referee.results import FaultRecord
    from arena.tournament.store import StoredMatch
    from arena.web.source import schedule_from_definition

    stored, replays = [], []
    for scheduled in schedule_from_definition(definition):
        scores = tuple(rng.randint(-20, 40) for _ in range(scheduled.players))
        aborted = rng.random() < 0.08

        def one(status: str, faults: int, scheduled=scheduled, scores=scores) -> StoredMatch:
            return StoredMatch(
                match_id=scheduled.match_id,
                game=scheduled.game,
                game_id=scheduled.game_id,
                table=scheduled.table,
                deal=scheduled.deal,
                rotation=scheduled.rotation,
                seed=scheduled.seed,
                players=scheduled.players,
                options={},
                bots=scheduled.seats,
                scores=scores,
                placings=tuple(1 + sum(o > s for o in scores) for s in scores),
                teams=None,
                forfeited=(),
                faults=tuple(
                    FaultRecord.read(i % 4, scheduled.seats[i % 4], "timeout", i, f"late {i}")
                    for i in range(faults)
                ),
                decision_ms=((0.5,),) * scheduled.players,
                status=status,
                reason="cut" if status == "aborted" else "",
            )

        if aborted:
            stored.append(one("aborted", rng.randint(0, 2)))
            replays.append(one("completed", rng.choice((0, 0, 1))))
        else:
            stored.append(one("completed", 1 if rng.random() < 0.1 else 0))
        if replays and rng.random() < 0.3:
            stored.append(replays.pop(0))
    return stored + replays


def _as_the_pages_were(history: list) -> dict:
    """What the pages showed when they kept every stored match (keyed by id; stored again,
    it moved to the end): the reference the bounded source must equal."""
    import statistics

    from arena.tournament.standings import higher_is_better
    from arena.web.source import LATEST, _match_line

    kept: dict = {}
    for match in history:
        kept.pop(match.match_id, None)
        kept[match.match_id] = match
    stored = list(kept.values())
    faults = []
    for match in reversed(stored):
        for fault in reversed(match.faults):
            faults.append(
                {
                    "match_id": match.match_id,
                    "bot": fault.bot,
                    "seat": fault.seat,
                    "kind": fault.kind,
                    "message": fault.message,
                }
            )
        if not match.completed:
            faults.append(
                {
                    "match_id": match.match_id,
                    "bot": None,
                    "seat": None,
                    "kind": "aborted",
                    "message": match.reason,
                }
            )
    bot_faults: dict = {}
    for match in stored:
        for fault in match.faults:
            bot_faults.setdefault(fault.bot, []).append(
                {
                    "match_id": match.match_id,
                    "seat": fault.seat,
                    "kind": fault.kind,
                    "message": fault.message,
                }
            )
    groups: dict = {}
    for match in stored:
        if match.completed:
            groups.setdefault((match.game, match.table, match.deal), []).append(match)
    worst: dict = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        sign = 1 if higher_is_better(group[0].game_id) else -1
        means = [statistics.fmean(m.scores[s] for m in group) for s in range(group[0].players)]
        for m in group:
            for seat, bot in enumerate(m.bots):
                dup = sign * (m.scores[seat] - means[seat])
                worst.setdefault(bot, []).append((dup, m.match_id, seat, m.scores[seat]))
    return {
        "latest": [{**_match_line(m), "strained": None} for m in reversed(stored[-LATEST:])],
        "faults": faults[:LATEST],
        "completed": sum(m.completed for m in stored),
        "aborted": sum(not m.completed for m in stored),
        "bot_faults": {bot: (len(f), f[::-1][:200]) for bot, f in bot_faults.items()},
        "worst": {
            bot: [
                {"match_id": i, "bot": bot, "seat": s, "score": score, "dup": dup}
                for dup, i, s, score in sorted(found)[:20]
            ]
            for bot, found in worst.items()
        },
        "groups": groups,
        "kept": kept,
    }


@pytest.mark.parametrize("definition_of", ["a tournament's", "an older arena's"])
async def test_the_pages_keep_what_they_show_not_every_match(
    tmp_path: Path, definition_of: str
) -> None:
    """The source keeps the latest matches and faults, each bot's faults and worst seats and
    the deals still open, not every match: fed a tournament match by match (in-process) or
    following its file, what the pages show equals what they showed when they kept every
    match, at every step; a completed deal's view and an old match are read from the file.
    The same from a file whose definition the schedule cannot be rebuilt from (an older
    arena's, without the games' players and deals): its deals are let go once complete too."""
    import random

    from arena.tournament.standings import StandingsFold
    from arena.web.source import LATEST, _match_line

    bots = ["alpha", "beta", "gamma", "delta"]
    definition = {
        "seed": 5,
        "seating": "duplicate",
        "bots": [{"name": b} for b in bots],
        "games": [
            {"label": "vd", "game": "vingt-down", "players": 4, "deals": 30, "max_tables": 2},
            {"label": "er", "game": "eight-rounds", "players": 4, "deals": 20, "max_tables": 2},
        ],
    }
    history = _scheduled_history(random.Random(41), definition)
    if definition_of == "an older arena's":
        games = [{"label": g["label"], "game": g["game"]} for g in definition["games"]]
        definition = {**definition, "games": games}
    assert any(not m.completed for m in history)
    assert len({m.match_id for m in history}) < len(history)  # some stored again
    path = tmp_path / "results.sqlite"
    writer = ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition)
    reader = ResultStore.open_read(path)
    fold = StandingsFold(bots, ["vd", "er"])
    in_process = TournamentSource(path, name="t", definition=definition, fold=fold)
    followed = TournamentSource(path, name="t", definition=definition)

    def check(source: TournamentSource, expected: dict) -> None:
        summary = source.summary(ORGANISER)  # (what others may read: tests/web/test_sealed.py)
        assert summary["latest"] == expected["latest"]
        assert summary["faults"] == expected["faults"]
        assert summary["progress"]["completed"] == expected["completed"]
        assert summary["progress"]["aborted"] == expected["aborted"]
        for bot in bots:
            page = source.bot_page(bot, ORGANISER)
            count, listed = expected["bot_faults"].get(bot, (0, []))
            assert (page["fault_count"], page["faults"]) == (count, listed)
            assert page["worst"] == expected["worst"].get(bot, [])
        assert len(source._latest) <= LATEST
        assert all(len(group) < 4 for group in source._open_deals.values())
        assert not source._done_odd  # (completed matches are a bit each)

    for step, match in enumerate(history):
        writer.save(match)
        fold.add(match)
        in_process.add(match)
        followed.poll_file(reader)
        if step % 9 == 0 or step == len(history) - 1:
            expected = _as_the_pages_were(history[: step + 1])
            check(in_process, expected)
            check(followed, expected)
    assert not in_process._open_deals and not followed._open_deals  # every deal complete

    expected = _as_the_pages_were(history)
    (game, table, deal), group = next(iter(expected["groups"].items()))
    for source in (in_process, followed):
        page = source.deal_page(game, table, deal)  # read from the file
        rotations = page["seats"][0]["rotations"]
        assert [r["match_id"] for r in rotations] == [m.match_id for m in group]
        assert [r["score"] for r in rotations] == [m.scores[0] for m in group]
        first = history[0].match_id  # long out of the latest: read from the file
        path_, stored, running = source.record_of(first)
        assert stored is not None and not running and path_ is None
        assert _match_line(stored) == _match_line(expected["kept"][first])
        assert source.is_done(first) and not source.is_done("vd/t0/d99/r0")
    served = TournamentSource(path, name="t", definition=definition)  # arena serve, afterwards
    served.poll_file(reader)
    check(served, expected)
    assert (served.schedule is None) == (definition_of == "an older arena's")
    assert not served.deal_sealed(game, table, deal)  # every rotation is in
    writer.close()
    reader.close()
