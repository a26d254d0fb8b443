"""The runner with in-memory fake bots and a fake referee (autojump clock: no real time passes):
pooling, replacement of forfeited processes, the match time limit, cancellation, startup."""

import itertools
from dataclasses import replace

import pytest
import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.process import BotStartupError
from arena.referee.results import FaultCause, FaultKind, FaultRecord, MatchResult
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import PreflightError, Progress, run_tournament
from arena.tournament.schedule import GamePlan, build_schedule
from arena.tournament.standings import compute_standings, standings_as_data
from arena.tournament.store import ResultStore

_ids = itertools.count()


class FakeBot:
    def __init__(self, spec):
        self.spec, self.name, self.version = spec, spec.name, ""
        self.alive, self.closed, self.id, self.matches = True, False, next(_ids), 0

    async def close(self):
        await trio.sleep(0.01)
        self.alive, self.closed = False, True


class Bots:
    """start_bot: every process it started, and bots that refuse to start."""

    def __init__(self, refuse=()):
        self.started, self.refuse = [], set(refuse)

    async def start(self, spec, *, time_control, log_dir):
        await trio.sleep(0.05)
        if spec.name in self.refuse:
            raise BotStartupError(spec.name, "exited before ready (exit status 1)")
        bot = FakeBot(spec)
        self.started.append(bot)
        return bot


def referee(*, stuck=(), forfeit=()):
    """play: a match takes 1 s; a seat of a bot in ``forfeit`` forfeits (its process dies)."""

    async def play(
        game, seats, *, seed, options, match_id, time_control, max_faults, record_path, sent_id
    ):
        absent = {s for s, bot in enumerate(seats) if getattr(bot, "startup_error", None)}
        assert all(bot.alive and not bot.closed for s, bot in enumerate(seats) if s not in absent)
        assert len({id(bot) for bot in seats}) == len(seats)  # one process per seat
        for s, bot in enumerate(seats):
            if s not in absent:
                bot.matches += 1
        await trio.sleep(1)
        if any(bot.name in stuck for bot in seats):
            await trio.sleep_forever()
        names = tuple(bot.name for bot in seats)
        lost = tuple(s for s, name in enumerate(names) if name in forfeit and s not in absent)
        for s in lost:
            seats[s].alive = False
        crash, startup = FaultKind.CRASH, FaultKind.STARTUP
        faults = tuple(
            FaultRecord(s, names[s], crash, None, "died", FaultCause.OUTPUT_ENDED, True)
            for s in lost
        )
        faults += tuple(
            FaultRecord(
                s, names[s], startup, None, seats[s].startup_error, FaultCause.NOT_STARTED, True
            )
            for s in sorted(absent)
        )
        lost = tuple(sorted((*lost, *absent)))
        scores = tuple(10 * (s + 1) for s in range(len(seats)))
        return MatchResult(
            match_id=match_id,
            game=game.id,
            options=dict(options or {}),
            seed=seed,
            players=len(seats),
            bots=names,
            scores=scores,
            placings=tuple(len(seats) - s for s in range(len(seats))),
            teams=None,
            forfeited=lost,
            faults=faults,
            decision_ms=tuple((1.0, 2.0) for _ in seats),
            referee_us=(),
            record_path=record_path,
            duration_s=1.0,
        )

    return play


def make_config(tmp_path, names=("a", "b", "c"), concurrency=2, deals=2, limit=60.0):
    return TournamentConfig(
        name="t",
        seed=1,
        bots=tuple(BotSpec(n, ("none",)) for n in names),
        games=(GamePlan("aon", "alles-oder-nichts", 3, deals=deals),),
        concurrency=concurrency,
        match_time_limit_s=limit,
        output=tmp_path / "out",
        results=tmp_path / "r.sqlite",
        records=False,
    )


def open_store(config):
    return ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
    )


def schedule_of(config):
    return build_schedule(config.seed, [b.name for b in config.bots], config.games)


async def test_every_match_is_stored_and_processes_are_reused(tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=1)
    bots = Bots()
    with open_store(config) as store:
        progress = Progress(total=0)
        summary = await run_tournament(
            config, schedule_of(config), store, progress, start_bot=bots.start, play=referee()
        )
        assert {m.match_id for m in store.matches()} == {m.match_id for m in schedule_of(config)}
    assert summary.played == 6 and progress.done == 6 and progress.total == 6
    assert len(bots.started) == 3  # one process per bot, reused
    assert all(bot.matches == 6 and bot.closed for bot in bots.started)


async def test_concurrent_matches_use_one_process_per_pool_slot(tmp_path, autojump_clock):
    config = make_config(tmp_path, names=("a", "b", "c", "d"), concurrency=3, deals=3)
    bots = Bots()
    with open_store(config) as store:
        summary = await run_tournament(
            config,
            schedule_of(config),
            store,
            Progress(total=0),
            start_bot=bots.start,
            play=referee(),
        )
    assert summary.played == len(schedule_of(config)) == 4 * 3 * 3
    # at most 3 matches at once: at most 3 processes of a bot, far fewer than matches
    per_bot = {name: sum(b.name == name for b in bots.started) for name in "abcd"}
    assert all(1 <= count <= 3 for count in per_bot.values()), per_bot
    assert summary.started_processes == len(bots.started)
    assert all(bot.closed for bot in bots.started)


async def test_a_forfeited_process_is_replaced_never_reused(tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=1)
    bots = Bots()
    with open_store(config) as store:
        await run_tournament(
            config,
            schedule_of(config),
            store,
            Progress(total=0),
            start_bot=bots.start,
            play=referee(forfeit={"b"}),
        )
        stored = store.matches()
    crashers = [bot for bot in bots.started if bot.name == "b"]
    assert len(crashers) == 6  # a fresh one for every match
    assert all(bot.matches == 1 for bot in crashers)
    assert all(bot.matches == 6 for bot in bots.started if bot.name != "b")
    assert all(m.forfeited and m.faults[0].kind == "crash" for m in stored)


async def test_a_stuck_match_is_aborted_and_replayed_on_the_next_run(tmp_path, autojump_clock):
    config = make_config(tmp_path, names=("a", "b", "c", "z"), concurrency=2, limit=30.0)
    bots = Bots()
    schedule = schedule_of(config)
    with open_store(config) as store:
        progress = Progress(total=0)
        summary = await run_tournament(
            config, schedule, store, progress, start_bot=bots.start, play=referee(stuck={"z"})
        )
        with_z = {m.match_id for m in schedule if "z" in m.seats}
        assert summary.aborted == len(with_z) and progress.aborted == len(with_z)
        assert store.completed_ids() == {m.match_id for m in schedule} - with_z
        aborted = [m for m in store.matches(include_aborted=True) if not m.completed]
        assert {m.match_id for m in aborted} == with_z
        assert "cut by the match time limit of 30 s" in aborted[0].reason
        assert any("aborted" in line for line in progress.recent_faults)
    assert all(bot.closed for bot in bots.started)
    with open_store(config) as store:  # run again: only those are played
        again = await run_tournament(
            config, schedule, store, Progress(total=0), start_bot=Bots().start, play=referee()
        )
        assert again.skipped == len(schedule) - len(with_z) and again.played == len(with_z)
        assert store.completed_ids() == {m.match_id for m in schedule}
        assert len(store.matches(include_aborted=True)) == len(schedule)


async def test_cancelling_keeps_finished_matches_and_closes_every_process(tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=2, deals=4)
    bots = Bots()
    with open_store(config) as store:
        with trio.move_on_after(3.5):
            await run_tournament(
                config,
                schedule_of(config),
                store,
                Progress(total=0),
                start_bot=bots.start,
                play=referee(),
            )
        finished = store.completed_ids()
    assert 0 < len(finished) < len(schedule_of(config))
    assert bots.started and all(bot.closed for bot in bots.started)


async def test_a_bot_that_cannot_start_stops_the_run_before_any_match(tmp_path, autojump_clock):
    config = make_config(tmp_path)
    bots = Bots(refuse={"c"})
    with open_store(config) as store:
        with pytest.raises(PreflightError) as caught:
            await run_tournament(
                config,
                schedule_of(config),
                store,
                Progress(total=0),
                start_bot=bots.start,
                play=referee(),
            )
        assert store.matches(include_aborted=True) == []
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(
        "preflight: 1 of 3 bots cannot start, so the run stopped before its next match"
    )
    assert lines[1:] == [
        "bot 'c': `none` in a fresh private folder (no cwd given): exited before ready "
        "(exit status 1); it wrote nothing to stderr"
    ]
    assert {bot.name for bot in bots.started} == {"a", "b"}
    assert all(bot.closed for bot in bots.started)


async def test_a_bot_that_stops_starting_is_given_up_after_three_failures(tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=1, deals=4)
    bots = Bots()
    play = referee(forfeit={"c"})  # every match needs a fresh c
    attempts = []

    async def start(spec, **kwargs):
        if spec.name == "c":
            attempts.append(spec.name)
            if any(b.name == "c" for b in bots.started):
                bots.refuse.add("c")
        return await bots.start(spec, **kwargs)

    with open_store(config) as store:
        summary = await run_tournament(
            config, schedule_of(config), store, Progress(total=0), start_bot=start, play=play
        )
        matches = store.matches()
        assert summary.aborted == 0 and len(matches) == len(schedule_of(config))
        startup = [f for m in matches for f in m.faults if f.kind == "startup"]
        assert len(startup) == len(matches) - 1  # all but the first match
        assert "not started again in this run" in startup[-1].message
        assert len(attempts) == 1 + 3, "after three failures in a row c is not started again"
        assert list(summary.given_up) == ["c"], "the run says it gave c up"
        rows = {r.bot: r for r in compute_standings(matches).tables["overall"]}
        assert rows["c"].faults["startup"] == len(matches) - 1
        assert rows["c"].played == len(matches)
    assert all(bot.closed for bot in bots.started)


async def test_a_referee_error_aborts_only_that_match(tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=1, deals=1)
    bots = Bots()
    fine = referee()
    calls = []

    async def flaky(game, seats, **kwargs):
        calls.append(kwargs["match_id"])
        if len(calls) == 2:
            raise RuntimeError("boom")
        return await fine(game, seats, **kwargs)

    with open_store(config) as store:
        summary = await run_tournament(
            config, schedule_of(config), store, Progress(total=0), start_bot=bots.start, play=flaky
        )
        (aborted,) = [m for m in store.matches(include_aborted=True) if not m.completed]
    assert summary.played == 2 and summary.aborted == 1
    assert aborted.match_id == calls[1] and aborted.reason == "referee error: RuntimeError: boom"
    assert all(bot.closed for bot in bots.started)


def by_content():
    """play: placings and scores follow from the seed and the bots in seat order alone, as with
    deterministic bots, so a match gives the same result whenever it is played."""

    async def play(
        game, seats, *, seed, options, match_id, time_control, max_faults, record_path, sent_id
    ):
        await trio.sleep(1)
        names = tuple(bot.name for bot in seats)
        scores = tuple(hash((seed, s, name)) % 50 for s, name in enumerate(names))
        order = sorted(range(len(seats)), key=lambda s: -scores[s])
        placings = tuple(1 + order.index(s) for s in range(len(seats)))
        return MatchResult(
            match_id=match_id,
            game=game.id,
            options=dict(options or {}),
            seed=seed,
            players=len(seats),
            bots=names,
            scores=scores,
            placings=placings,
            teams=None,
            forfeited=(),
            faults=(),
            decision_ms=tuple((1.0,) for _ in seats),
            referee_us=(),
            record_path=record_path,
            duration_s=1.0,
        )

    return play


async def test_a_grown_tournament_keeps_its_matches_and_ranks_like_a_fresh_run(
    tmp_path, autojump_clock
):
    small = make_config(tmp_path, names=("a", "b", "c"), deals=2)
    grown = replace(
        make_config(tmp_path, names=("a", "b", "c", "d"), deals=3),
        games=(
            GamePlan("aon", "alles-oder-nichts", 3, deals=3),
            GamePlan("eight", "eight-rounds", 3, deals=1),
        ),
    )
    with open_store(small) as store:
        first = await run_tournament(
            small,
            schedule_of(small),
            store,
            Progress(total=0),
            start_bot=Bots().start,
            play=by_content(),
        )
    with open_store(grown) as store:
        again = await run_tournament(
            grown,
            schedule_of(grown),
            store,
            Progress(total=0),
            start_bot=Bots().start,
            play=by_content(),
        )
        kept_standings = standings_as_data(compute_standings(store.matches(), ["a", "b", "c", "d"]))
        kept = store.matches()
    # a, b, c sit at table 0 of aon in both: every deal of the small run is still scheduled
    assert first.played == 2 * 3 and again.skipped == first.played
    assert again.played == len(schedule_of(grown)) - first.played
    fresh_config = replace(grown, results=tmp_path / "fresh.sqlite")
    with open_store(fresh_config) as store:
        await run_tournament(
            fresh_config,
            schedule_of(fresh_config),
            store,
            Progress(total=0),
            start_bot=Bots().start,
            play=by_content(),
        )
        fresh = store.matches()
        fresh_standings = standings_as_data(compute_standings(fresh, ["a", "b", "c", "d"]))
    assert [(m.key, m.scores) for m in kept] == [(m.key, m.scores) for m in fresh]
    assert kept_standings == fresh_standings


async def test_a_match_of_an_earlier_definition_is_kept_but_not_counted(tmp_path, autojump_clock):
    three = make_config(tmp_path, names=("a", "b", "c"), deals=1)
    other = make_config(tmp_path, names=("a", "b", "z"), deals=1)  # same ids, other bots
    for config in (three, other):
        with open_store(config) as store:
            summary = await run_tournament(
                config,
                schedule_of(config),
                store,
                Progress(total=0),
                start_bot=Bots().start,
                play=by_content(),
            )
            assert summary.skipped == 0 and summary.played == 3
            assert {name for m in store.matches() for name in m.bots} == set(
                b.name for b in config.bots
            )
    with open_store(three) as store:  # back to the first: its matches count again
        summary = await run_tournament(
            three,
            schedule_of(three),
            store,
            Progress(total=0),
            start_bot=Bots().start,
            play=by_content(),
        )
        assert summary.skipped == 3 and summary.played == 0
        assert len(store.stored_keys()) == 6
