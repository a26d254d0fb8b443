"""The searching sample bot: legal answers in every game from its search, and whole matches as a
real process through the referee, without a fault."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from arena.games import GAMES
from arena.kit import Deadline
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.results import FaultKind

ROOT = Path(__file__).resolve().parents[1]
SEARCH = ROOT / "sample_bots" / "search"
sys.path.insert(0, str(SEARCH))

import search  # noqa: E402  (the sample bot's module, found on the path above)


@pytest.mark.parametrize("game", list(GAMES))
def test_search_answers_a_legal_action_at_every_kind_of_decision(game) -> None:
    spec = GAMES[game]
    rng = random.Random(game)
    state = spec.new_match(spec.default_players, {}, seed=3)
    decisions: set[str] = set()
    stats: dict = {}
    while not state.is_over and len(decisions) < 4 and len(state.actions) < 120:
        seat = state.seat_to_move
        legal = list(state.legal_actions())
        view = state.view(seat)
        events = [e.data for e in state.events if e.visible_to(seat)]
        action = search.choose(view, legal, events, state.options, 60.0, rng, stats, 1)
        assert action in legal
        decisions.add(state.decision)
        state.apply(action)
    assert stats["worlds"] > 0  # it did search (one world per decision: max_worlds 1)


@pytest.mark.parametrize("game", list(GAMES))
def test_with_an_impossible_margin_the_prior_is_played(game, monkeypatch) -> None:
    monkeypatch.setattr(search, "PRIOR_Z", 1e9)
    spec = GAMES[game]
    rng = random.Random(game)
    state = spec.new_match(spec.default_players, {}, seed=4)
    for _ in range(8):
        seat = state.seat_to_move
        legal = list(state.legal_actions())
        view, events = state.view(seat), [e.data for e in state.events if e.visible_to(seat)]
        prior = rng.choice(legal)
        args = (view, legal, events, state.options, 5.0, random.Random(1), None, 8)
        assert search.choose(*args, prior=prior) == prior
        state.apply(rng.choice(legal))


def test_the_search_overrules_the_prior_only_by_a_clear_margin() -> None:
    # 10 worlds, gains of 1 in each: a clear gain with no spread at all.
    assert search.overrules(10.0, 10.0, 10, 1.0)
    # A mean gain of 0.1 with a spread of about 1: 0.3 standard errors, not enough for 1...
    assert not search.overrules(1.0, 10.0, 10, 1.0)
    assert search.overrules(1.0, 10.0, 10, 0.2)  # ...enough for 0.2
    assert not search.overrules(0.0, 0.0, 10, -5.0)  # a tie keeps the prior
    assert not search.overrules(-5.0, 2.5, 10, -5.0)  # so does a loss
    assert not search.overrules(5.0, 25.0, 1, 0.0)  # one world proves nothing


def test_a_value_is_where_the_deal_leaves_the_seat_against_the_table() -> None:
    state = GAMES["vingt-down"].new_match(4, {}, seed=5)
    seat = state.seat_to_move
    totals = search._rollout(state, state.legal_actions()[0], random.Random(1), Deadline(60.0))
    assert state.deal == 2 or state.is_over
    assert totals == state.totals  # the first deal's end
    value = search._standing(totals, seat, state)
    others = (sum(totals) - totals[seat]) / 3
    assert value == pytest.approx(others - totals[seat])  # low is good in Vingt-down
    assert value != pytest.approx(-totals[seat])  # (this deal tells the two apart)


def test_an_all_fours_rollout_stops_at_the_end_of_the_hand(monkeypatch) -> None:
    from arena.kit import clone_world

    for seed in range(6):
        state = GAMES["all-fours"].new_match(4, {}, seed=seed)
        seat, action = state.seat_to_move, state.legal_actions()[0]
        dealt_on = clone_world(state)
        monkeypatch.setattr(search, "ALL_FOURS_HAND_STOP", False)
        search._rollout(dealt_on, action, random.Random(seed), Deadline(60.0))
        monkeypatch.setattr(search, "ALL_FOURS_HAND_STOP", True)
        totals = search._rollout(state, action, random.Random(seed), Deadline(60.0))
        value = search._standing(totals, seat, state)
        hand_ends = [e.data for e in state.events if e.data["type"] == "hand_end"]
        if hand_ends:  # the match went on: nothing after the hand's scores, no next deal
            assert state.events[-1].data["type"] == "hand_end"
            scores = hand_ends[-1]["scores"]
            assert value == scores[seat % 2] - scores[1 - seat % 2]
            assert len(dealt_on.events) > len(state.events)  # the other went on dealing
        else:  # a team reached 14: the match ended as it does without the stop
            assert state.is_over and dealt_on.is_over
            assert state.team_scores == dealt_on.team_scores
        assert state.actions == dealt_on.actions[: len(state.actions)]  # the same rollout


def test_vingt_rollouts_win_with_the_cheapest_sure_card_else_throw_the_cheapest() -> None:
    state = GAMES["vingt-down"].new_match(4, {}, seed=1)
    while state.decision != "play":
        state.apply(state.legal_actions()[0])
    state.trump = "S"
    leader = state.seat_to_move
    second, third, fourth = [(leader + i) % 4 for i in (1, 2, 3)]
    state.hands[leader] = ["AH", "KH", "7C", "8S"]
    state.hands[second] = ["QH", "9D"]
    state.hands[third] = ["10H", "7D"]
    state.hands[fourth] = ["9C", "JS"]  # void in hearts: must trump a heart lead
    legal = list(state.hands[leader])
    # No card surely wins (fourth trumps hearts, beats 8S with JS, follows clubs higher with 9C)
    # -> the cheapest card, a low side card: 7C.
    assert search._vingt_play(state, legal) == "7C"
    state.hands[fourth] = ["9C", "7D"]  # no trump: AH and KH now surely win, KH is cheaper
    assert search._vingt_play(state, legal) == "KH"
    state.trick = [(leader, "QH")]  # following: KH and AH beat QH; nobody behind has a trump
    state.hands[second] = ["AH", "KH", "7C", "8S"]
    state.hands[third], state.hands[fourth] = ["10H", "7D"], ["9C", "7D"]
    state.seat_to_move = second
    assert search._vingt_play(state, ["AH", "KH"]) == "KH"
    state.hands[third] = ["JH", "7D"]
    assert search._vingt_play(state, ["AH", "KH"]) == "KH"  # JH cannot beat KH


def not_the_machines(faults) -> list[str]:
    """The faults a loaded machine cannot cause: everything but a timeout (a stall of the whole
    machine longer than the bot's margin makes one however well the bot keeps time; that the
    bot stays within its budget is measured by benchmarks/search.py, p99 and max)."""
    return [f.message for f in faults if f.kind != FaultKind.TIMEOUT]


async def test_the_bot_process_plays_whole_matches_without_a_fault(tmp_path) -> None:
    # A small share of the time (10 ms a decision) keeps the test quick; the time logic is the
    # bot's own (time_left_ms x fraction - safety).
    control = TimeControl(decision_ms=1000, startup_ms=60000)
    spec = BotSpec(
        "search", (sys.executable, str(SEARCH / "search_bot.py"), "1", "--fraction", "0.05")
    )
    seats = [
        await BotProcess.start(spec, time_control=control, log_dir=tmp_path / "logs")
        for _ in range(3)
    ]
    try:
        result = await run_match(
            GAMES["alles-oder-nichts"], seats, seed=11, match_id="search-aon", time_control=control
        )
        assert result.termination == "completed"
        assert not_the_machines(result.faults) == []
    finally:
        for seat in seats:
            await seat.close()


def test_the_guide_shows_the_minimal_search_bot_as_it_is() -> None:
    guide = (ROOT / "docs" / "writing-a-bot.md").read_text()
    assert (SEARCH / "minimal_search_bot.py").read_text() in guide


async def test_the_minimal_search_bot_plays_a_whole_match(tmp_path) -> None:
    control = TimeControl(decision_ms=150, startup_ms=60000)  # it thinks 30% of that
    spec = BotSpec(
        "minimal",
        (sys.executable, str(SEARCH / "minimal_search_bot.py")),
        env=(("PYTHONPATH", str(ROOT)),),  # it imports arena.kit: the checkout under test
    )
    seats = [
        await BotProcess.start(spec, time_control=control, log_dir=tmp_path / "logs")
        for _ in range(4)
    ]
    try:
        result = await run_match(
            GAMES["all-fours"], seats, seed=2, match_id="minimal-af", time_control=control
        )
        assert result.termination == "completed"
        assert not_the_machines(result.faults) == []
    finally:
        for seat in seats:
            await seat.close()
