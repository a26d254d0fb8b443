"""``clone_world``: a copy that plays exactly like the original and shares nothing it mutates.

In every game, player count and option, from positions of seeded random play (engine states and
sampled worlds, whose dealer is a stacked one): the clone plays a random continuation to the end
of the match while the original stays exactly as it was; the original then plays the same
continuation and gives the same events and result as the clone did."""

from __future__ import annotations

import random

import pytest

from arena.games import GAMES
from arena.games.core import GameState
from arena.kit import clone_world, sample_world

CONFIGS = [
    (game, players, options)
    for game, spec in GAMES.items()
    for players in spec.player_counts
    for options in (
        [{}, {"drop_out": True}]
        if game == "vingt-down"
        else [{}, {"no_undertrump": True}]
        if game == "all-fours"
        else [{}]
    )
]


def seen_by(state: GameState, seat: int) -> list[dict]:
    return [e.data for e in state.events if e.visible_to(seat)]


def snapshot(state: GameState) -> tuple:
    return (
        state.view(None),
        list(state.legal_actions()),
        [e.data for e in state.events],
        list(state.actions),
        state.dealer.rng.state,
        state.dealer.shuffles,
    )


def play_out(state: GameState, seed: int) -> tuple:
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(rng.choice(state.legal_actions()))
    return [e.data for e in state.events], state.result().scores


@pytest.mark.parametrize(("game", "players", "options"), CONFIGS)
def test_a_clone_plays_like_the_original_and_leaves_it_untouched(game, players, options) -> None:
    spec = GAMES[game]
    rng = random.Random(f"clone {game} {players} {options}")
    for match in range(3):
        state = spec.new_match(players, options, seed=match)
        for _ in range(rng.randrange(1, 60)):
            if state.is_over:
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.is_over:
            continue
        seat = state.seat_to_move
        world = sample_world(state.view(seat), seen_by(state, seat), rng, state.options)
        for original in (state, world):
            before = snapshot(original)
            twin = clone_world(original)
            assert snapshot(twin) == before
            continuation = rng.getrandbits(32)
            from_twin = play_out(twin, continuation)
            assert snapshot(original) == before  # the clone shares nothing the engine mutates
            assert play_out(original, continuation) == from_twin
