"""The heuristic bot's tactics, one module per game: ``choose(view, legal, events) -> action``.

``view`` and ``legal`` come from the request, ``events`` are this match's events so far (SPEC.md).
"""

from __future__ import annotations

import random

from . import all_fours, alles_oder_nichts, eight_rounds, vingt_down

GAMES = {
    "alles-oder-nichts": alles_oder_nichts.choose,
    "vingt-down": vingt_down.choose,
    "eight-rounds": eight_rounds.choose,
    "all-fours": all_fours.choose,
}


def choose(view: dict, legal: list[str], events: list[dict], rng: random.Random) -> str:
    """The action for this request; a game this bot does not know gets a random legal action."""
    tactic = GAMES.get(view.get("game", ""))
    if tactic is None:
        return rng.choice(legal)
    action = tactic(view, legal, events)
    return action if action in legal else rng.choice(legal)
