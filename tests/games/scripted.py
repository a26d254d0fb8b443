"""Helpers for scripted deals: a match dealt from prepared decks, actions in a row, events by type."""

from __future__ import annotations

from arena.games import GameSpec, GameState
from arena.games.cards import StackedDealer, seed_for_first_draw


def stacked_match(
    spec: GameSpec, players: int, decks: list[list[str]], first_dealer: int, **options
) -> GameState:
    """A match whose shuffles deal ``decks`` in order (then seeded ones), first dealer fixed."""
    dealer = StackedDealer(decks, seed_for_first_draw(players, first_dealer))
    return spec.new_match(players, options, seed=0, dealer=dealer)


def play(state: GameState, *actions: str) -> None:
    for action in actions:
        state.apply(action)


def events(state: GameState, kind: str) -> list[dict]:
    return [e.data for e in state.events if e.data["type"] == kind]
