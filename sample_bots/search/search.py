"""Determinized Monte Carlo search (perfect-information Monte Carlo) on sampled worlds.

For one decision: again and again until the time budget is spent, draw a world consistent with
everything the seat knows (``arena.kit.sample_world``), and in that same world try every legal
action, each followed by a fast rollout to the end of the current deal (the same rollout seed for
every action, so the actions are compared on equal luck). The action with the best mean value over
the worlds is played. The value is what the deal brings the seat: its own points (Alles oder
Nichts, Eight Rounds), minus its points (Vingt-down, where low wins), or its team's points minus
the other team's (All Fours).

Needs the arena package (``arena.kit`` and ``arena.games``): installed (``pip install -e .``) or on
``PYTHONPATH``. The rollout policy is a cheap rule of thumb with some randomness: win a trick with
the cheapest card that wins when the seat wants tricks, else duck with the dearest card that loses.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from arena.games.core import GameState
from arena.games.eight_rounds import penalty_cards
from arena.games.tricks import trick_winner
from arena.kit import sample_world

ROLLOUT_RANDOMNESS = 0.15  # the share of rollout moves played at random (keeps rollouts varied)


def choose(
    view: dict[str, Any],
    legal: Sequence[str],
    events: Sequence[dict[str, Any]],
    options: dict[str, Any],
    budget_s: float,
    rng: random.Random,
    stats: dict[str, Any] | None = None,
) -> str:
    """The action with the best mean rollout value found within ``budget_s`` seconds."""
    legal = candidates(view, legal)
    if len(legal) == 1:
        return legal[0]
    start = time.perf_counter()
    deadline = start + budget_s
    seat = view["seat"]
    totals = {action: 0.0 for action in legal}
    worlds = 0
    while True:
        world_seed, rollout_seed = rng.getrandbits(63), rng.getrandbits(63)
        values = {}
        for action in legal:
            world = sample_world(view, events, random.Random(world_seed), options)
            values[action] = _value_after(world, seat, action, random.Random(rollout_seed))
            if worlds and time.perf_counter() >= deadline:
                break  # a world not tried with every action is left out (it would bias)
        else:
            for action, value in values.items():
                totals[action] += value
            worlds += 1
            if time.perf_counter() < deadline:
                continue
        break
    if stats is not None:
        stats["worlds"] = stats.get("worlds", 0) + worlds
        stats["rollouts"] = stats.get("rollouts", 0) + worlds * len(legal)
    best = max(totals.values())
    return next(a for a in legal if totals[a] == best)


def candidates(view: dict[str, Any], legal: Sequence[str]) -> list[str]:
    """The actions worth searching. Vingt-down's exchange offers up to 26 discards: only those
    made of the four cards least likely to take a trick (low side cards) are tried, so the time
    goes into more worlds for the 15 that matter (tricks are what a seat wants there)."""
    if view.get("game") != "vingt-down" or view.get("phase") != "exchange":
        return list(legal)
    trump = view.get("trump")
    order = "7 8 9 10 J Q K A".split()
    weakest = sorted(view["hand"], key=lambda c: (c[-1] == trump, order.index(c[:-1])))[:4]
    kept = [
        a
        for a in legal
        if a == "discard:none" or set(a[len("discard:") :].split(",")) <= set(weakest)
    ]
    return kept or list(legal)


def _deal_marker(world: GameState) -> tuple:
    return (
        getattr(world, "round", None),
        getattr(world, "deal", None),
        getattr(world, "hand_number", None),
    )


def _value_after(world: GameState, seat: int, action: str, rng: random.Random) -> float:
    """Apply ``action``, roll out to the end of the deal, and score the deal for ``seat``."""
    before = _standing(world, seat)
    marker = _deal_marker(world)
    world.apply(action)
    while not world.is_over and _deal_marker(world) == marker:
        world.apply(rollout_action(world, rng))
    return _standing(world, seat) - before


def _standing(world: GameState, seat: int) -> float:
    game = world.SPEC.id
    if game == "all-fours":
        own = world.team_scores[seat % 2]
        other = world.team_scores[1 - seat % 2]
        return own - other
    if game == "vingt-down":
        return -world.totals[seat]
    return world.totals[seat]


def rollout_action(world: GameState, rng: random.Random) -> str:
    """A quick, slightly random move for whoever is to move in ``world``."""
    legal = world.legal_actions()
    if len(legal) == 1:
        return legal[0]
    if world.decision == "patience":  # get rid of cards: never pass by choice, 7s last
        cards = [c for c in legal if c != "pass"] or legal
        others = [c for c in cards if c[:-1] != "7"] or cards
        return others[rng.randrange(len(others))]
    if world.decision != "play" or rng.random() < ROLLOUT_RANDOMNESS:
        return legal[rng.randrange(len(legal))]
    seat = world.seat_to_move
    trump = getattr(world, "trump", None)
    rank = world.DECK.rank
    want = _wants_trick(world, seat)

    def strength(card: str) -> tuple[bool, int]:
        return (card[-1] == trump, rank[card])

    trick = world.trick
    if not trick:
        return max(legal, key=strength) if want else min(legal, key=strength)
    winners = [c for c in legal if trick_winner([*trick, (seat, c)], trump, rank) == seat]
    losers = [c for c in legal if c not in winners]
    if want:
        return min(winners, key=strength) if winners else min(legal, key=strength)
    if losers and world.SPEC.id == "eight-rounds" and legal[0][-1] != trick[0][1][-1]:
        dangerous = penalty_cards(world.round, losers)  # void: shed the contract's cards first
        if dangerous:
            return max(dangerous, key=strength)
    return max(losers, key=strength) if losers else max(legal, key=strength)


def _wants_trick(world: GameState, seat: int) -> bool:
    game = world.SPEC.id
    if game == "alles-oder-nichts":
        bid = world.bids[seat]
        return bid is not None and world.tricks[seat] < bid
    if game == "eight-rounds":
        return world.round == 6  # "most-tricks": +10 a trick; every other contract avoids them
    if game == "vingt-down":
        return True  # every trick taken brings the score down, towards the win at 0
    partner_winning = (
        world.trick
        and trick_winner(world.trick, world.trump, world.DECK.rank) == (seat + 2) % 4
        and len(world.trick) == 3
    )
    return not partner_winning
