"""``clone_world``: an independent copy of an engine state, much cheaper than sampling again.

A search that tries every action in one sampled world needs that world once per action. Sampling
it again replays the whole deal; ``copy.deepcopy`` walks every event. This copies what the
engines mutate (their lists, dicts and sets, nested to any depth, and the dealer's generator) and
shares what they never change in place: strings, numbers, tuples (cards, trick entries, events:
an engine only ever appends new events) and class-level data (the spec, the deck).
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from arena.games.cards import Dealer, Rng
from arena.games.core import GameState

State = TypeVar("State", bound=GameState)

_SHARED = {str, int, bool, float, type(None), tuple, frozenset}


def _shared(kind: type) -> bool:
    """Whether values of ``kind`` are immutable: the basic kinds and every tuple (Event too)."""
    if kind in _SHARED:
        return True
    if issubclass(kind, tuple):
        _SHARED.add(kind)  # remembered: the next check is a set lookup
        return True
    return False


def clone_world(state: State) -> State:
    """A copy of ``state`` on which any sequence of ``apply`` gives what it gives on ``state``,
    and which never changes ``state`` (nor is changed by it)."""
    twin = object.__new__(type(state))
    twin.__dict__.update({name: _copy(value) for name, value in vars(state).items()})
    return twin


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind in _SHARED or _shared(kind):
        return value
    if kind is list:
        for item in value:
            if type(item) not in _SHARED and not _shared(type(item)):
                return [_copy(item) for item in value]
        return value[:]  # only immutable items (cards, events, trick entries): a flat copy
    if kind is dict:
        return {key: _copy(item) for key, item in value.items()}
    if kind is set:
        return set(value)  # the engines' sets hold cards or seats
    if isinstance(value, Dealer):
        dealer = copy.copy(value)
        dealer.rng = Rng(value.rng.state)
        if hasattr(value, "tops"):  # StackedDealer: the prepared decks it still has to hand out
            dealer.tops = [list(top) for top in value.tops]  # type: ignore[attr-defined]
        return dealer
    return copy.deepcopy(value)  # anything else an engine may hold: correct, if slower
