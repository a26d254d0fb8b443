"""Seeded random play and golden playthroughs, shared by the tests and the benchmarks.

A playthrough is a JSON document: the game, players, options, seed, and for every step the
all-seeing state, the seat to move, its legal actions, every seat's view and the action taken,
then the result. ``tests/golden/<game>.json`` holds one per registered game; a test replays it and
compares every step, so any change in rules or views shows up as a diff.
"""

from __future__ import annotations

from typing import Any

from .cards import Rng, derive_seed
from .core import GameSpec, GameState


def random_playout(
    spec: GameSpec, players: int, seed: int, options: dict | None = None, max_steps: int = 1_000_000
) -> GameState:
    """Play a match to the end choosing uniformly among the legal actions (from ``seed``)."""
    state = spec.new_match(players, options, seed)
    chooser = Rng(derive_seed(seed, "random-player"))
    steps = 0
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[chooser.below(len(legal))])
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"{spec.id}: no end after {max_steps} steps (seed {seed})")
    return state


def record_playthrough(
    spec: GameSpec, players: int, seed: int, options: dict | None = None
) -> dict[str, Any]:
    state = spec.new_match(players, options, seed)
    chooser = Rng(derive_seed(seed, "random-player"))
    steps = []
    while not state.is_over:
        legal = list(state.legal_actions())
        action = legal[chooser.below(len(legal))]
        steps.append(
            {
                "state": state.view(None),
                "to_move": state.seat_to_move,
                "decision": state.decision,
                "legal": legal,
                "views": [state.view(seat) for seat in range(players)],
                "action": action,
            }
        )
        state.apply(action)
    return {
        "game": spec.id,
        "players": players,
        "options": state.options,
        "seed": seed,
        "steps": steps,
        "final_state": state.view(None),
        "events": [
            {"audience": None if e.audience is None else list(e.audience), "data": e.data}
            for e in state.events
        ],
        "result": state.result().as_dict(),
    }
