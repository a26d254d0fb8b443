"""The kit's search keeps time: under a fake clock that moves with the engines' moves, it stops
within one move (or one sampling of a world) of its deadline, and drops a world the deadline cut;
rollouts end with the deal, whichever action ends it."""

from __future__ import annotations

import random

import pytest

from arena.games import GAMES
from arena.games.core import GameState
from arena.kit import Deadline, Tally, play_out_deal, sample_world, search
from arena.kit.search import own_total


class MoveClock:
    """A fake clock that moves ``step`` seconds with every move any engine state applies (the
    search's unit of work: sampling a world replays its deal, a rollout plays on), and not at
    all while it is read: a search that worked on without looking would overshoot."""

    def __init__(self, monkeypatch, step: float = 0.001) -> None:
        self.now = 0.0
        self.step = step
        apply = GameState.apply

        def timed_apply(state: GameState, action: str) -> None:
            self.now += step
            apply(state, action)

        monkeypatch.setattr(GameState, "apply", timed_apply)

    def __call__(self) -> float:
        return self.now


def position(game: str, decision: str, seed: int = 3) -> tuple[GameState, dict, list[dict]]:
    """The first position of seeded random play where ``decision`` has a choice: the state, the
    view of the seat to move and the events it saw."""
    spec = GAMES[game]
    rng = random.Random(seed)
    state = spec.new_match(spec.default_players, {}, seed)
    while not state.is_over:
        legal = state.legal_actions()
        if state.decision == decision and len(legal) > 1:
            seat = state.seat_to_move
            return state, state.view(seat), [e.data for e in state.events if e.visible_to(seat)]
        state.apply(rng.choice(legal))
    raise AssertionError(f"no {decision} decision with a choice in {game} seed {seed}")


@pytest.mark.parametrize(
    "game, decision",
    [
        ("vingt-down", "exchange"),  # 26 actions: the world that used to outlast the time
        ("alles-oder-nichts", "bid"),
        ("eight-rounds", "play"),
        ("all-fours", "play"),
    ],
)
@pytest.mark.parametrize("budget", [0.0005, 0.05, 2.0])
def test_the_search_stops_at_its_deadline(monkeypatch, game, decision, budget):
    state, view, events = position(game, decision)
    clock = MoveClock(monkeypatch)
    start = clock.now
    sample_world(view, events, random.Random(2), state.options)
    sampling = clock.now - start  # what one world costs to sample: the deal's moves replayed
    deadline = Deadline(budget, clock)
    tally = search(view, state.legal_actions(), events, random.Random(1), deadline, state.options)
    # Past it by at most what it did since its last look: a move of a rollout, or the sampling
    # of a world and its first action.
    assert clock.now - deadline.at <= sampling + clock.step + 1e-9
    assert clock.now >= deadline.at or tally.worlds == 0
    # Every action was valued in the same worlds: a world the deadline cut is dropped.
    assert {len(values) for values in tally.values.values()} == {tally.worlds}
    assert tally.best() in state.legal_actions()
    if budget == 0.0005:  # not even one move of a rollout
        assert tally.worlds == 0 and tally.best() == state.legal_actions()[0]
    if budget == 2.0:  # 2000 moves: a world of rollouts to the end of the deal fits
        assert tally.worlds >= 1


def test_max_worlds_stops_the_search_before_the_deadline():
    state, view, events = position("alles-oder-nichts", "play")
    tally = search(
        view, state.legal_actions(), events, random.Random(1), Deadline(60.0), max_worlds=3
    )
    assert tally.worlds == 3


def deal_ends(state: GameState) -> int:
    return sum(1 for event in state.events if event.data.get("type") in state.DEAL_ENDS)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_play_out_deal_plays_to_the_end_of_the_deal_only(game):
    spec = GAMES[game]
    for seed in range(3):
        state = spec.new_match(spec.default_players, {}, seed)
        rng = random.Random(seed)
        while not state.is_over:
            ended = deal_ends(state)
            totals = play_out_deal(state, rng)
            assert deal_ends(state) == ended + 1 or state.is_over
            ends = state.DEAL_ENDS
            end = next(e.data for e in reversed(state.events) if e.data.get("type") in ends)
            field = ends[end["type"]]
            teams = spec.teams(spec.default_players)
            expected = [end[field][t] for t in teams] if teams else end[field]
            assert totals == expected
        assert state.result().scores == tuple(totals)  # the last deal's totals are the match's


@pytest.mark.parametrize("game", sorted(GAMES))
def test_an_action_that_ends_the_deal_is_the_whole_rollout(game):
    """``first`` may end the deal itself: its totals come back and nothing more is played."""
    spec = GAMES[game]
    state = spec.new_match(spec.default_players, {}, 5)
    rng = random.Random(5)
    ended = deal_ends(state)
    previous = None
    while deal_ends(state) == ended:  # find the action that ends the first deal
        previous = state.actions[:]
        state.apply(rng.choice(state.legal_actions()))
    last = state.actions[len(previous)]
    replayed = spec.new_match(spec.default_players, {}, 5)
    for action in previous:
        replayed.apply(action)
    totals = play_out_deal(replayed, random.Random(0), first=last, deadline=Deadline(0.0))
    assert replayed.actions == previous + [last]  # no move after it, though the deadline passed
    ends = replayed.DEAL_ENDS
    end = next(e.data for e in replayed.events if e.data.get("type") in ends)
    assert totals == [end[ends[end["type"]]][t] for t in spec.teams(4) or range(4)]


def test_a_low_score_wins_in_vingt_down_so_the_value_is_negated():
    vingt = GAMES["vingt-down"].new_match(4, {}, 1)
    aon = GAMES["alles-oder-nichts"].new_match(4, {}, 1)
    assert own_total([20, 15, 3, 9], 2, vingt) == -3
    assert own_total([20, 15, 3, 9], 2, aon) == 3


def test_the_best_action_is_the_first_of_the_highest_mean():
    tally = Tally(["a", "b", "c"], {"a": [1.0, 3.0], "b": [4.0, 0.0], "c": [2.0, 1.0]})
    assert tally.worlds == 2 and tally.mean("a") == 2.0
    assert tally.best() == "a"  # a and b tie at 2.0
    assert Tally(["x", "y"], {"x": [], "y": []}).best() == "x"
