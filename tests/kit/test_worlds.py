"""``sample_world`` against the truth: thousands of sampled worlds in every game, player count and
option, each checked against everything the seat saw; the true deal always satisfies the
constraints the sampler derives (so, the dealer being uniform over those, it is a possible
sample); on small positions the worlds the sampler can draw are enumerated and compared with
every deal that replays consistently; and every sample plays on to the end without an error."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from arena.games import GAMES
from arena.games.core import GameState
from arena.kit import InconsistentView, count_deals, sample_world
from arena.kit import worlds as worlds_module

CONFIGS = [
    (game, players, options)
    for game, spec in GAMES.items()
    for players in spec.player_counts
    for options in (
        [{}, {"drop_out": True}]
        if game == "vingt-down"
        else [{}, {"no_undertrump": True, "game_points": 2}]
        if game == "all-fours"
        else [{}]
    )
]


def seen_by(state: GameState, seat: int) -> list[dict[str, Any]]:
    return [e.data for e in state.events if e.visible_to(seat)]


def deal_events(events: list[dict[str, Any]], game: str) -> list[dict[str, Any]]:
    """This deal's events after its start, without the running team totals that All Fours'
    awards carry (a world keeps the score it is given, not the history that made it)."""
    deal = worlds_module.current_deal_events(events, GAMES[game].state_class.DEAL_STARTS)[1:]
    return [{k: v for k, v in e.items() if k != "scores"} for e in deal]


def true_holdings(state: GameState, seat: int) -> dict[str, set[str]]:
    """What each holder the sampler deals to (the other hands, their discards, the stock) really
    holds now, by its ``card_locations`` name."""
    others = [s for s in range(state.players) if s != seat]
    dealt = {"stock", *(f"hand {s}" for s in others), *(f"discards {s}" for s in others)}
    return {
        name: set(cards)
        for name, cards in state.card_locations().items()
        if name in dealt and (cards or name.startswith("hand"))
    }


class Recorder:
    """Wraps the dealer ``sample_world`` uses, keeping the last problem it was given."""

    def __init__(self) -> None:
        self.real = worlds_module.deal_uniform
        self.last: tuple | None = None

    def __call__(self, cards, sizes, forbidden, rng):
        self.last = (list(cards), dict(sizes), {h: set(f) for h, f in forbidden.items()})
        return self.real(cards, sizes, forbidden, rng)


def play_on(world: GameState, rng: random.Random, to_end_of_match: bool) -> None:
    marker = len(world.events)
    starts = world.DEAL_STARTS
    while not world.is_over:
        world.apply(rng.choice(world.legal_actions()))
        if not to_end_of_match and any(e.data.get("type") in starts for e in world.events[marker:]):
            return
    world.result()


@pytest.mark.parametrize(
    "game, players, options", CONFIGS, ids=[f"{g}-{p}-{o}" for g, p, o in CONFIGS]
)
def test_sampled_worlds_agree_with_everything_the_seat_knows(
    game, players, options, monkeypatch
) -> None:
    recorder = Recorder()
    monkeypatch.setattr(worlds_module, "deal_uniform", recorder)
    rng = random.Random(f"{game}/{players}")
    samples = decisions = 0
    for seed in itertools.count(players * 31 + len(options)):
        state = GAMES[game].new_match(players, options, seed)
        while not state.is_over and samples < 500:
            seat = state.seat_to_move
            view, events = state.view(seat), seen_by(state, seat)
            decisions += 1
            for draw in range(2):
                world = sample_world(view, events, rng, state.options)
                samples += 1
                assert world.view(seat) == view
                assert world.legal_actions() == state.legal_actions()
                assert deal_events(seen_by(world, seat), game) == deal_events(events, game)
                # The truth satisfies every constraint the sampler dealt under.
                cards, sizes, forbidden = recorder.last
                truth = true_holdings(state, seat)
                assert set(cards) == set().union(*truth.values())
                for holder, size in sizes.items():
                    held = truth.get(holder, set())
                    assert len(held) == size, (holder, held, size)
                    assert not held & forbidden.get(holder, set()), (holder, held, forbidden)
                play_on(world, rng, to_end_of_match=(decisions % 25 == 0 and draw == 0))
            state.apply(rng.choice(state.legal_actions()))
        if samples >= 500:
            break


def enumerate_consistent(state: GameState, seat: int, monkeypatch) -> tuple[set, int]:
    """Every assignment of the hidden cards to the other hands (the stock taking the rest) that
    replays without a contradiction and gives the seat its view; and the sampler's own count."""
    recorder = Recorder()
    monkeypatch.setattr(worlds_module, "deal_uniform", recorder)
    view, events = state.view(seat), seen_by(state, seat)
    sample_world(view, events, random.Random(0), state.options)
    cards, sizes, forbidden = recorder.last
    others = [h for h in sizes if h != "stock"]
    consistent = set()
    for chosen in itertools.permutations(cards, sum(sizes[h] for h in others)):
        parts, start = {}, 0
        for h in others:
            parts[h] = sorted(chosen[start : start + sizes[h]])
            start += sizes[h]
        key = tuple(tuple(parts[h]) for h in others)
        if key in consistent or any(parts[h] != sorted(parts[h]) for h in others):
            continue
        forced = (
            {**parts, "stock": [c for c in cards if c not in chosen]} if "stock" in sizes else parts
        )
        monkeypatch.setattr(worlds_module, "deal_uniform", lambda *a, forced=forced: forced)
        try:
            world = sample_world(view, events, random.Random(0), state.options)
        except InconsistentView:
            continue
        if world.view(seat) == view:
            consistent.add(key)
    monkeypatch.setattr(worlds_module, "deal_uniform", recorder.real)
    return consistent, count_deals(cards, sizes, forbidden)


def small_positions(game: str, players: int, hidden_at_most: int, wanted: int, decision: str):
    """Positions late in a deal where the other hands hold few cards (random play)."""
    rng = random.Random(game)
    found = 0
    for seed in range(200):
        state = GAMES[game].new_match(players, {}, seed)
        while not state.is_over:
            seat = state.seat_to_move
            hidden = sum(len(state.hands[s]) for s in range(players) if s != seat)
            if 0 < hidden <= hidden_at_most and state.decision == decision:
                yield state, seat
                found += 1
                if found == wanted:
                    return
                break
            state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(
    "game, players, hidden, decision",
    [
        ("eight-rounds", 3, 5, "play"),
        ("eight-rounds", 4, 6, "play"),
        ("eight-rounds", 4, 6, "patience"),
        ("alles-oder-nichts", 3, 2, "play"),
        ("all-fours", 4, 2, "play"),
    ],
)
def test_on_small_positions_the_samples_are_exactly_the_consistent_deals(
    game, players, hidden, decision, monkeypatch
) -> None:
    positions = list(small_positions(game, players, hidden, 3, decision))
    assert positions
    for state, seat in positions:
        consistent, counted = enumerate_consistent(state, seat, monkeypatch)
        truth = tuple(tuple(sorted(state.hands[s])) for s in range(players) if s != seat)
        assert truth in consistent
        view, events = state.view(seat), seen_by(state, seat)
        rng = random.Random(1)
        seen = set()
        for _ in range(min(40 * len(consistent), 1500)):
            world = sample_world(view, events, rng, state.options)
            seen.add(tuple(tuple(sorted(world.hands[s])) for s in range(players) if s != seat))
        assert seen <= consistent
        if 40 * len(consistent) <= 1500:
            assert seen == consistent
        if game == "eight-rounds":  # no stock: the sampler's count is the number of deals
            assert counted == len(consistent)


def test_a_view_that_contradicts_its_events_is_refused() -> None:
    state = GAMES["eight-rounds"].new_match(4, {}, 1)
    seat = state.seat_to_move
    view = state.view(seat)
    with pytest.raises(InconsistentView):
        sample_world({**view, "game": "chess"}, seen_by(state, seat), random.Random(0))
    with pytest.raises(InconsistentView):
        sample_world(view, seen_by(state, (seat + 1) % 4), random.Random(0))
    with pytest.raises(InconsistentView):
        sample_world(view, [], random.Random(0))
