"""The bot author's search kit: deal the cards a seat cannot see, then search on real engines.

    import random
    from arena.kit import sample_world

    world = sample_world(request.view, match.events, random.Random(7), match.options)
    world.legal_actions()          # the same actions the request lists
    world.apply(world.legal_actions()[0])
    ...                            # play on to the end of the deal or the match
    world.result().scores          # every seat's score in that world

``sample_world`` draws uniformly over the deals consistent with all the seat knows (module
:mod:`arena.kit.worlds` says exactly what that covers); :func:`deal_uniform` is the constrained
dealer underneath. :func:`search` is a search loop on such worlds that keeps to a
:class:`Deadline`, and :func:`play_out_deal` rolls a world out to the end of its deal only
(module :mod:`arena.kit.search`). The kit imports only ``arena.games``; the referee never imports
it, so a bot that uses it needs the arena package installed (``pip install -e .``) or on
``PYTHONPATH``.
"""

from __future__ import annotations

from .clone import clone_world
from .deal import InconsistentDeal, count_deals, deal_uniform
from .search import Deadline, OutOfTime, Tally, play_out_deal, random_move, search
from .worlds import InconsistentView, current_deal_events, sample_world

__all__ = [
    "sample_world",
    "clone_world",
    "search",
    "Deadline",
    "Tally",
    "play_out_deal",
    "random_move",
    "OutOfTime",
    "InconsistentView",
    "current_deal_events",
    "deal_uniform",
    "count_deals",
    "InconsistentDeal",
]
