"""The stopping rule (``stop = {confidence, min_deals, max_deals}``): deals in rounds until every
game's ranking is separated, with fake bots and a fake referee whose results depend on the bots'
skills, the deal's cards (the seed) and some noise; autojump clock, no processes."""

import random
from dataclasses import replace

import pytest
import trio

from arena.referee.results import MatchResult
from arena.tournament.config import ConfigError, StopRule, config_from_table
from arena.tournament.runner import Progress, RunSummary, first_deals, run_in_rounds
from tests.tournament.test_runner import Bots, make_config, open_store, schedule_of


def skilled_referee(skill):
    async def play(
        game, seats, *, seed, options, match_id, time_control, max_faults, record_path, sent_id
    ):
        await trio.sleep(1)
        names = tuple(bot.name for bot in seats)
        rotation = int(match_id.rsplit("/r", 1)[1])
        cards = random.Random(seed)
        luck = [cards.randrange(40) for _ in seats]  # the same seat's cards in every rotation
        noise = random.Random(f"{seed}/{rotation}")
        scores = tuple(luck[s] + skill[n] + noise.randrange(-6, 7) for s, n in enumerate(names))
        placings = tuple(1 + sorted(scores, reverse=True).index(x) for x in scores)
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
            record=None,  # (records off: this stand-in writes none)
            duration_s=1.0,
        )

    return play


def stop_config(tmp_path, stop, deals):
    return replace(make_config(tmp_path, concurrency=3, deals=deals), stop=stop)


async def run(config, skill, **kwargs):
    summary = RunSummary()
    with open_store(config) as store:
        report = await run_in_rounds(
            config,
            schedule_of(config),
            store,
            Progress(total=0),
            config.stop,
            summary=summary,
            start_bot=Bots().start,
            play=skilled_referee(skill),
            **kwargs,
        )
        stored = {m.match_id: m for m in store.matches()}
    return summary, report, stored


async def test_clear_differences_stop_after_the_first_round(tmp_path, autojump_clock):
    config = stop_config(tmp_path, StopRule(0.95, 8, 64), deals=64)
    summary, report, stored = await run(config, {"a": 20, "b": 0, "c": -20})
    assert report.settled and report.deals == 8
    assert "after 8 deals: every game's ranking is separated at 95%" in report.reason
    assert len(stored) == summary.played == 8 * 3  # 8 deals of one table in 3 rotations
    assert {m.deal for m in stored.values()} == set(range(8))
    assert [r.bot for r in report.standings.tables["aon"]] == ["a", "b", "c"]


async def test_equal_bots_play_to_max_deals_and_say_which_pair(tmp_path, autojump_clock):
    config = stop_config(tmp_path, StopRule(0.95, 4, 16), deals=16)
    summary, report, stored = await run(config, {"a": 20, "b": 0, "c": 0})
    assert not report.settled and report.deals == 16 and len(stored) == 16 * 3
    assert "stopped at the most deals (16): not separated at 95%" in report.reason
    assert "aon: b ~ c" in report.reason or "aon: c ~ b" in report.reason


async def test_resuming_continues_the_same_sequence(tmp_path, autojump_clock):
    skill = {"a": 4, "b": 2, "c": 0}  # needs a few rounds
    whole = stop_config(tmp_path / "whole", StopRule(0.95, 4, 64), deals=64)
    _, report, stored = await run(whole, skill)
    assert report.deals > 4  # more than one round was needed
    cut = stop_config(tmp_path / "cut", StopRule(0.95, 4, 64), deals=64)
    with trio.move_on_after(13.5):  # in the middle of the second round (3 at once, 1 s each)
        await run(cut, skill)
    with open_store(cut) as store:
        assert 0 < len(store.matches()) < len(stored)
    _, resumed, again = await run(cut, skill)
    assert resumed.deals == report.deals and resumed.reason == report.reason
    assert again.keys() == stored.keys()
    assert all(again[k].scores == stored[k].scores for k in stored)


def test_rounds_double_from_min_deals_to_the_most():
    assert StopRule(0.95, 8, 1024).rounds(1024) == [8, 16, 32, 64, 128, 256, 512, 1024]
    assert StopRule(0.95, 8, 1024).rounds(24) == [8, 16, 24]
    assert StopRule(0.95, 8, 1024).rounds(5) == [5]


def test_first_deals_keeps_ids_and_order(tmp_path):
    config = make_config(tmp_path, deals=6)
    schedule = schedule_of(config)
    part = first_deals(schedule, 2)
    assert list(part) == [m for m in schedule if m.deal < 2]


def test_the_stop_table_in_a_tournament_file():
    base = {"bots": [{"name": "a", "argv": ["python3"]}, {"name": "b", "argv": ["python3"]}]}
    config = config_from_table(
        {
            **base,
            "stop": {"confidence": 0.9, "max_deals": 100},
            "games": ["aon", {"game": "all-fours", "deals": 24}],
        },
        source="t.toml",
    )
    assert config.stop == StopRule(0.9, 8, 100)
    assert [g.deals for g in config.games] == [100, 24]  # max_deals, or the game's own
    capped = config_from_table({**base, "deals": 500, "stop": {"max_deals": 64}}, source="t.toml")
    assert {g.deals for g in capped.games} == {64}
    assert config_from_table(base, source="t.toml").stop is None
    for stop, message in [
        ({"confidence": 1.2}, "stop.confidence: found 1.2"),
        ({"confidence": "high"}, "a number between 0.5 and 1"),
        ({"min_deals": 1}, "stop.min_deals: found 1"),
        ({"min_deals": 16, "max_deals": 8}, "stop.max_deals: found 8"),
        ({"deals": 3}, "stop"),
    ]:
        with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
            config_from_table({**base, "stop": stop}, source="t.toml")
