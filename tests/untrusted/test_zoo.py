"""The zoo against the real referee: every hostile bot plays real matches, as a real process.

For each zoo bot (tests/bots/zoo_catalogue.py) a match of Alles oder Nichts against the two honest
bots must complete with scores the rules confirm (the record replays), every fault must be of a
kind the catalogue expects and charged to the zoo bot only, and once the bots are closed no process
that any of them started may be alive (a /proc scan for the mark each bot carries in its
environment, which also finds processes that left their process group and session). The
referee's own peak memory stays bounded while it deals with the floods.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from sandbox_support import BWRAP

from arena.games import find_game
from arena.referee.match import run_match
from arena.referee.process import BotProcess, BotStartupError
from arena.tournament.errors import PreflightError
from arena.tournament.store import ResultStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
from zoo_catalogue import (
    HONEST,
    ZOO,
    ZOO_TIME_CONTROL,
    ZooBot,
    assert_none_survive,
    leftover_processes,
    peak_rss_mb,
    run_zoo_tournament,
    start_measuring_rss,
    zoo_match_problems,
)

GAME = find_game("alles-oder-nichts")
STARTING = tuple(bot.name for bot in ZOO if not bot.fails_to_start)
CONTROL = ZOO_TIME_CONTROL
REFEREE_GROWTH_MB = 150  # the floods send tens of MB; the referee may keep only a bounded part
RECORD_LIMIT_BYTES = 1 << 20  # a record keeps a bounded part of what a bot sends (~150 KB normally)


async def assert_no_leftovers(mark: str) -> None:
    await assert_none_survive(lambda: leftover_processes(mark), "bot processes outlived close()")


async def start_bots(specs, log_dir: Path) -> list[BotProcess]:
    bots = []
    try:
        for spec in specs:
            bots.append(await BotProcess.start(spec, time_control=CONTROL, log_dir=log_dir))
    except BaseException:
        for bot in bots:
            await bot.close()
        raise
    return bots


def check_match(result, zoo_bot: ZooBot) -> None:
    """The match completed, the rules confirm its scores, and only the zoo bot was charged, with
    the kinds of fault the catalogue expects."""
    assert zoo_match_problems(result) == []
    assert result.record_path is not None, "these tests always keep a record to replay"
    zoo_seat = result.bots.index(zoo_bot.name)
    if zoo_bot.forfeits:
        assert result.placings[zoo_seat] == 3, "a forfeiting bot is placed last"


@pytest.mark.parametrize("zoo_bot", ZOO, ids=[bot.name for bot in ZOO])
async def test_a_zoo_bot_cannot_hurt_a_match(zoo_bot, tmp_path):
    mark = uuid.uuid4().hex
    specs = [zoo_bot.spec(mark), *(bot.spec(mark) for bot in HONEST)]
    baseline = start_measuring_rss()
    bots = []
    try:
        if zoo_bot.fails_to_start:
            with pytest.raises(
                BotStartupError, match=f"bot {zoo_bot.name}: ended before saying ready"
            ):
                await start_bots(specs, tmp_path)
            return
        bots = await start_bots(specs, tmp_path)
        record = tmp_path / "match.jsonl"
        result = await run_match_between(bots, record, f"zoo-{zoo_bot.name}")
        check_match(result, zoo_bot)
        assert record.stat().st_size < RECORD_LIMIT_BYTES
        assert bots[0].alive == (not zoo_bot.forfeits)
        assert all(bot.alive for bot in bots[1:]), "an honest bot was retired"
    finally:
        for bot in bots:
            await bot.close()
        await assert_no_leftovers(mark)
    assert peak_rss_mb() - baseline < REFEREE_GROWTH_MB


async def run_match_between(bots, record: Path, match_id: str, seed: int = 5):
    return await run_match(
        GAME, bots, seed=seed, match_id=match_id, time_control=CONTROL, record_path=record
    )


async def test_the_late_bot_goes_on_playing_in_the_next_match(tmp_path):
    """A timeout costs one decision, not the process: the same late bot plays two matches."""
    late = next(bot for bot in ZOO if bot.name == "late")
    mark = uuid.uuid4().hex
    bots = await start_bots([late.spec(mark), *(bot.spec(mark) for bot in HONEST)], tmp_path)
    try:
        for match in range(2):
            record = tmp_path / f"late-{match}.jsonl"
            result = await run_match_between(bots, record, f"late-{match}", seed=match)
            check_match(result, late)
            assert [fault.kind for fault in result.faults] == ["timeout"]
            assert bots[0].alive
    finally:
        for bot in bots:
            await bot.close()
        await assert_no_leftovers(mark)


async def test_the_stderr_log_is_capped_and_the_flood_still_drained(tmp_path):
    flood = next(bot for bot in ZOO if bot.name == "stderr-flood")
    mark = uuid.uuid4().hex
    bots = await start_bots([flood.spec(mark), *(bot.spec(mark) for bot in HONEST)], tmp_path)
    try:
        await run_match_between(bots, tmp_path / "flood.jsonl", "flood")
        log = bots[0].log_path
        sent = bots[0].transport.stderr_bytes
    finally:
        for bot in bots:
            await bot.close()
        await assert_no_leftovers(mark)
    assert sent > 5 * 1024 * 1024, f"the flood bot wrote only {sent} bytes to stderr"
    assert log.stat().st_size < 2 * 1024 * 1024
    assert "stderr capped" in log.read_text()


@pytest.mark.parametrize("sandbox", [None, BWRAP])
async def test_a_tournament_of_the_whole_zoo_finishes(tmp_path, sandbox):
    """Every zoo bot that starts and both honest bots: every match completes, every fault is of the
    right kind, no process survives, the referee's memory stays bounded."""
    mark = uuid.uuid4().hex
    baseline = start_measuring_rss()
    try:
        summary, matches, _ = await run_zoo_tournament(
            tmp_path / "zoo", mark, sandbox=sandbox, include=STARTING
        )
    finally:
        await assert_no_leftovers(mark)
    assert summary.aborted == 0 and summary.played == len(matches) > 0
    problems = [
        problem
        for match in matches
        for problem in zoo_match_problems(match, sandboxed=sandbox is not None)
    ]
    assert problems == []
    assert {name for match in matches for name in match.bots} == {bot.name for bot in HONEST} | set(
        STARTING
    )
    assert peak_rss_mb() - baseline < REFEREE_GROWTH_MB


async def test_a_zoo_bot_that_cannot_start_stops_the_tournament_before_any_match(tmp_path):
    """The preflight (arena/tournament/pool.py): a bot that cannot start stops the tournament
    before its first match, with a line naming it; nothing is stored."""
    quitter = next(bot for bot in ZOO if bot.fails_to_start)
    mark = uuid.uuid4().hex
    try:
        with pytest.raises(PreflightError, match=f"bot '{quitter.name}': .*ended before saying"):
            await run_zoo_tournament(tmp_path / "zoo", mark, include=(quitter.name,))
    finally:
        await assert_no_leftovers(mark)
    with ResultStore.open_read(tmp_path / "zoo" / "results.sqlite") as store:
        assert store.matches(include_aborted=True) == []
