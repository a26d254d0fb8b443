"""``sample_world``: a full rules-engine state that agrees with everything one seat knows.

Each game rebuilds it (its ``resample`` hook, :meth:`arena.games.GameState.resample`): at the
start of the current deal (round, hand), with the hidden cards placed by :func:`deal_uniform`,
and the deal's public and own actions replayed through the engine's own ``apply``, so every rule
is checked again: a sampled hand that broke a void shown, or a patience pass that was not
allowed, would raise.

What is drawn (the distribution):
- the cards this seat cannot see are dealt **uniformly over every assignment consistent with the
  seat's knowledge**: its own cards, the cards played, the kick / turned-up / removed cards, the
  hand counts, the exchange counts, and the constraints the play revealed: a seat that did not
  follow suit holds none of that suit (in Vingt-down, not trumping as well shows no trump; in All
  Fours an undertrump under ``no_undertrump`` shows only trumps), a patience pass shows no card
  fitting then other than a 7 (and no 7 before the first 7 is down, or when the pass was forced).
  See :mod:`arena.kit.deal` for how that is exactly uniform;
- decisions nobody saw are drawn uniformly among the legal ones: a secret bid in Alles oder
  Nichts, which cards another seat discarded (any of the cards consistent with the above) and
  which of its cards it drew in Vingt-down;
- what was never dealt yet (later deals, the stock's order) comes from a fresh seed taken from
  ``rng``, so each world has its own future.
Other seats' strategies are not modelled: a card someone would never have played with a hand is
still possible (that is a choice for the search built on top, e.g. weighting worlds).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from arena.games import find_game
from arena.games.core import GameState, InconsistentView, OptionError
from arena.games.knowledge import current_deal_events

from .deal import InconsistentDeal, deal_uniform

Events = Sequence[Mapping[str, Any]]

__all__ = ["Events", "InconsistentView", "current_deal_events", "sample_world"]


def sample_world(
    view: Mapping[str, Any],
    events: Events,
    rng: random.Random,
    options: Mapping[str, Any] | None = None,
) -> GameState:
    """A game state consistent with ``view`` (a request's view) and ``events`` (every event this
    seat has seen in the match, in order), drawn as the module says. ``options`` are the match's
    options from ``match_start`` (All Fours needs them: its view does not show them). The state is
    an ordinary engine state: ``legal_actions()``, ``apply()``, ``view()``, ``is_over``,
    ``result()``; its seed (for later deals) comes from ``rng``."""
    try:
        spec = find_game(str(view.get("game")))
    except OptionError as error:
        raise InconsistentView(f"sample_world: {error}") from None
    if view.get("seat") is None or view.get("to_move") is None:
        raise InconsistentView("sample_world needs a seat's view of a match in progress")

    def deal(cards, sizes, forbidden):
        return deal_uniform(cards, sizes, forbidden, rng)

    try:
        state = spec.state_class.resample(view, events, dict(options or {}), deal, rng)
    except InconsistentDeal as error:
        raise InconsistentView(str(error)) from None
    if state.seat_to_move != view["to_move"]:
        raise InconsistentView(
            f"the replayed deal has seat {state.seat_to_move} to move, the view says "
            f"{view['to_move']}: are these the events of this match and seat?"
        )
    return state
