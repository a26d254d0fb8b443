"""The runner with in-memory fake bots and a fake referee (autojump clock: no real time passes):
pooling, replacement of forfeited processes, the match time limit, cancellation, startup."""

import itertools

import pytest
import trio

from arena.bot_process import BotStartupError
from arena.bots import BotSpec
from arena.tournament.runner import Progress
from arena.results import FaultKind, FaultRecord, MatchResult
from arena.store import ResultStore
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import TournamentError, run_tournament
from arena.tournament.schedule import GamePlan, build_schedule

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
    async def play(game, seats, *, seed, options, match_id, time_control, max_faults, record_path):
        assert all(bot.alive and not bot.closed for bot in seats)
        assert len({bot.id for bot in seats}) == len(seats)       # one process per seat
        for bot in seats:
            bot.matches += 1
        await trio.sleep(1)
        if any(bot.name in stuck for bot in seats):
            await trio.sleep_forever()
        names = tuple(bot.name for bot in seats)
        lost = tuple(s for s, name in enumerate(names) if name in forfeit)
        for s in lost:
            seats[s].alive = False
        faults = tuple(FaultRecord(s, names[s], FaultKind.CRASH, None, "died") for s in lost)
        scores = tuple(10 * (s + 1) for s in range(len(seats)))
        return MatchResult(match_id=match_id, game=game.id, options=dict(options or {}), seed=seed,
                           players=len(seats), bots=names, scores=scores,
                           placings=tuple(len(seats) - s for s in range(len(seats))), teams=None,
                           forfeited=lost, faults=faults,
                           decision_ms=tuple((1.0, 2.0) for _ in seats), referee_us=(),
                           record_path=record_path, duration_s=1.0)
    return play


def make_config(tmp_path, names=("a", "b", "c"), concurrency=2, deals=2, limit=60.0):
    return TournamentConfig(
        name="t", seed=1, bots=tuple(BotSpec(n, ("none",)) for n in names),
        games=(GamePlan("aon", "alles-oder-nichts", 3, deals=deals),), concurrency=concurrency,
        match_time_limit_s=limit, output=tmp_path / "out", results=tmp_path / "r.sqlite",
        records=False)


def open_store(config):
    return ResultStore.open_for_run(config.results, name=config.name,
                                    fingerprint=config.fingerprint(),
                                    definition=config.definition())


def schedule_of(config):
    return build_schedule(config.seed, [b.name for b in config.bots], config.games)


async def test_every_match_is_stored_and_processes_are_reused(tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=1)
    bots = Bots()
    with open_store(config) as store:
        progress = Progress(total=0)
        summary = await run_tournament(config, schedule_of(config), store, progress,
                                       start_bot=bots.start, play=referee())
        assert {m.match_id for m in store.matches()} == {m.match_id for m in schedule_of(config)}
    assert summary.played == 6 and progress.done == 6 and progress.total == 6
    assert len(bots.started) == 3                          # one process per bot, reused
    assert all(bot.matches == 6 and bot.closed for bot in bots.started)


async def test_concurrent_matches_use_one_process_per_pool_slot(tmp_path, autojump_clock):
    config = make_config(tmp_path, names=("a", "b", "c", "d"), concurrency=3, deals=3)
    bots = Bots()
    with open_store(config) as store:
        summary = await run_tournament(config, schedule_of(config), store, Progress(total=0),
                                       start_bot=bots.start, play=referee())
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
        await run_tournament(config, schedule_of(config), store, Progress(total=0),
                             start_bot=bots.start, play=referee(forfeit={"b"}))
        stored = store.matches()
    crashers = [bot for bot in bots.started if bot.name == "b"]
    assert len(crashers) == 6                               # a fresh one for every match
    assert all(bot.matches == 1 for bot in crashers)
    assert all(bot.matches == 6 for bot in bots.started if bot.name != "b")
    assert all(m.forfeited and m.faults[0].kind == "crash" for m in stored)


async def test_a_stuck_match_is_aborted_and_replayed_on_the_next_run(tmp_path, autojump_clock):
    config = make_config(tmp_path, names=("a", "b", "c", "z"), concurrency=2, limit=30.0)
    bots = Bots()
    schedule = schedule_of(config)
    with open_store(config) as store:
        progress = Progress(total=0)
        summary = await run_tournament(config, schedule, store, progress, start_bot=bots.start,
                                       play=referee(stuck={"z"}))
        with_z = {m.match_id for m in schedule if "z" in m.seats}
        assert summary.aborted == len(with_z) and progress.aborted == len(with_z)
        assert store.completed_ids() == {m.match_id for m in schedule} - with_z
        aborted = [m for m in store.matches(include_aborted=True) if not m.completed]
        assert {m.match_id for m in aborted} == with_z
        assert "cut by the match time limit of 30 s" in aborted[0].reason
        assert any("aborted" in line for line in progress.recent_faults)
    assert all(bot.closed for bot in bots.started)
    with open_store(config) as store:                     # run again: only those are played
        again = await run_tournament(config, schedule, store, Progress(total=0),
                                     start_bot=Bots().start, play=referee())
        assert again.skipped == len(schedule) - len(with_z) and again.played == len(with_z)
        assert store.completed_ids() == {m.match_id for m in schedule}
        assert len(store.matches(include_aborted=True)) == len(schedule)


async def test_cancelling_keeps_finished_matches_and_closes_every_process(tmp_path,
                                                                         autojump_clock):
    config = make_config(tmp_path, concurrency=2, deals=4)
    bots = Bots()
    with open_store(config) as store:
        with trio.move_on_after(3.5):
            await run_tournament(config, schedule_of(config), store, Progress(total=0),
                                 start_bot=bots.start, play=referee())
        finished = store.completed_ids()
    assert 0 < len(finished) < len(schedule_of(config))
    assert bots.started and all(bot.closed for bot in bots.started)


async def test_a_bot_that_cannot_start_stops_the_tournament_before_any_match(tmp_path,
                                                                             autojump_clock):
    config = make_config(tmp_path)
    bots = Bots(refuse={"c"})
    with open_store(config) as store:
        with pytest.raises(TournamentError, match="bot c: exited before ready"):
            await run_tournament(config, schedule_of(config), store, Progress(total=0),
                                 start_bot=bots.start, play=referee())
        assert store.completed_ids() == set()
    assert all(bot.closed for bot in bots.started)


async def test_a_bot_that_stops_starting_later_fails_its_matches_then_the_tournament(
        tmp_path, autojump_clock):
    config = make_config(tmp_path, concurrency=1, deals=4)
    bots = Bots()
    play = referee(forfeit={"c"})                          # every match needs a fresh c

    async def start(spec, **kwargs):
        if spec.name == "c" and any(b.name == "c" for b in bots.started):
            bots.refuse.add("c")
        return await bots.start(spec, **kwargs)

    with open_store(config) as store:
        with pytest.raises(TournamentError, match="bot c failed to start 3 times in a row"):
            await run_tournament(config, schedule_of(config), store, Progress(total=0),
                                 start_bot=start, play=play)
        assert len(store.completed_ids()) == 1
        assert [m.reason for m in store.matches(include_aborted=True) if not m.completed] == [
            "a bot did not start: bot c: exited before ready (exit status 1)"] * 2
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
        summary = await run_tournament(config, schedule_of(config), store, Progress(total=0),
                                       start_bot=bots.start, play=flaky)
        (aborted,) = [m for m in store.matches(include_aborted=True) if not m.completed]
    assert summary.played == 2 and summary.aborted == 1
    assert aborted.match_id == calls[1] and aborted.reason == "referee error: RuntimeError: boom"
    assert all(bot.closed for bot in bots.started)
