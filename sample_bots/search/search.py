"""Determinized Monte Carlo search (perfect-information Monte Carlo) on sampled worlds.

For one decision, the kit's search (``arena.kit.search``, which stops at its deadline): again and
again until the time budget is spent, draw a world consistent with everything the seat knows, and
in that same world (a copy of it per action) try every legal action, each followed by a fast
rollout to the end of the current deal (the same rollout seed for every action, so the actions are
compared on equal luck). The action with the best mean value over the worlds is played. The value
is what the deal brings the seat: its own points (Alles oder Nichts, Eight Rounds), the other
seats' mean points minus its own (Vingt-down, where low wins: a trick counts by how it moves the
seat against the table), or its team's points minus the other team's (All Fours, whose rollouts
stop when the hand is scored instead of dealing the next one).

With a ``prior`` (the search bot passes the heuristic bot's choice in the games of
``PRIOR_GAMES``) the search overrules it only when its best action beats the prior's by more than
``PRIOR_Z`` standard errors of the paired differences over the worlds: where the rule of thumb is
already good, the search's noise and the rollouts' blind spots cost less.

Needs the arena package (``arena.kit`` and ``arena.games``): installed (``pip install -e .``) or on
``PYTHONPATH``. The rollout policy is a cheap rule of thumb with some randomness: win a trick with
the cheapest card that wins when the seat wants tricks, else duck with the dearest card that loses;
in All Fours the heuristic bot's ideas (keep 10s, honours and the trump jack from the other side,
feed a winning partner, stand or give with a hand of trumps); in Vingt-down its exchange and its
card play (win with the cheapest card that surely wins, else throw the cheapest), where "surely"
is judged on the rollout world's hands.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

from arena.games.cards import PIQUET_32, STANDARD_52
from arena.games.core import GameState
from arena.games.eight_rounds import penalty_cards
from arena.games.tricks import trick_winner
from arena.kit import Deadline, play_out_deal, search

CLOCK = time.perf_counter  # wall clock: the referee's limit is wall clock
ROLLOUT_RANDOMNESS = 0.15
PRIOR_Z = 1.0  # how many standard errors the search's choice must gain over the prior's
PRIOR_GAMES = {
    "all-fours",
    "vingt-down",
}  # the games where the bot is given a prior  # the share of rollout moves played at random (keeps rollouts varied)


def choose(
    view: dict[str, Any],
    legal: Sequence[str],
    events: Sequence[dict[str, Any]],
    options: dict[str, Any],
    budget_s: float,
    rng: random.Random,
    stats: dict[str, Any] | None = None,
    max_worlds: int = 1 << 30,
    prior: str | None = None,
) -> str:
    """The action with the best mean rollout value found within ``budget_s`` seconds (the kit's
    search, which stops at its deadline); with a ``prior`` action (a rule of thumb's choice),
    that one unless the best beats it clearly, and when no world was finished in time."""
    legal = candidates(view, legal)
    if prior is not None and prior not in legal:
        legal.append(prior)
    if len(legal) == 1:
        return legal[0]
    deadline = Deadline(budget_s, CLOCK)
    tally = search(
        view, legal, events, rng, deadline, options,
        rollout=_rollout, value=_standing, max_worlds=max_worlds,
    )  # fmt: skip
    if stats is not None:
        stats["worlds"] = stats.get("worlds", 0) + tally.worlds
        stats["rollouts"] = stats.get("rollouts", 0) + tally.worlds * len(legal)
    chosen = tally.best()
    if prior is None or chosen == prior or tally.worlds == 0:
        return chosen if prior is None else prior
    gains = [a - b for a, b in zip(tally.values[chosen], tally.values[prior], strict=True)]
    return (
        chosen if overrules(sum(gains), sum(g * g for g in gains), tally.worlds, PRIOR_Z) else prior
    )


def overrules(gain_sum: float, gain_squares: float, worlds: int, z: float) -> bool:
    """Whether the search's choice beats the prior: its mean gain over the prior's value, paired
    over the worlds (same worlds, same rollout luck), is above ``z`` standard errors, and above 0
    (a tie keeps the prior). Never on fewer than two worlds."""
    if worlds < 2:
        return False
    gain = gain_sum / worlds
    variance = max(gain_squares / worlds - gain * gain, 0.0) * worlds / (worlds - 1)
    return gain > 0 and gain > z * (variance / worlds) ** 0.5


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


def _rollout(world: GameState, action: str, rng: random.Random, deadline: Deadline) -> list[int]:
    """``action``, then the rollout policy to the end of the deal: every seat's totals then."""
    if ALL_FOURS_HAND_STOP and world.SPEC.id == "all-fours":
        # Stop this throwaway copy at the end of the hand instead of dealing the next one (a
        # sixth of the rollout's time): the next hand's kick is luck the decision cannot change.
        world._start_hand = partial(_stop, world)  # type: ignore[method-assign]
    return play_out_deal(world, rng, first=action, policy=rollout_action, deadline=deadline)


ALL_FOURS_HAND_STOP = True
VINGT_RELATIVE = True


def _stop(world: GameState) -> None:
    world.seat_to_move = None  # is_over: the rollout loop ends here


def _standing(totals: Sequence[float], seat: int, world: GameState) -> float:
    """How the totals at the end of a deal stand for ``seat`` (the same deal's start is the same
    in every world, so comparing standings compares what the deal brings)."""
    game = world.SPEC.id
    if game == "all-fours":
        return totals[seat] - totals[(seat + 1) % 4]  # our team's points minus theirs
    if game == "vingt-down":
        if not VINGT_RELATIVE:
            return -totals[seat]
        # Low wins: the others' mean score minus ours (a trick or a doubled deal counts by how
        # it moves us against the table, and a seat left without tricks pays its +5).
        others = (sum(totals) - totals[seat]) / (len(totals) - 1)
        return others - totals[seat]
    return totals[seat]


def rollout_action(world: GameState, rng: random.Random) -> str:
    """A quick, slightly random move for whoever is to move in ``world``."""
    legal = world.legal_actions()
    if len(legal) == 1:
        return legal[0]
    if world.decision == "patience":  # get rid of cards: never pass by choice, 7s last
        cards = [c for c in legal if c != "pass"] or legal
        others = [c for c in cards if c[:-1] != "7"] or cards
        return others[rng.randrange(len(others))]
    if world.SPEC.id == "all-fours" and world.decision in ("beg", "give"):
        return _all_fours_trump_call(world)
    if world.decision == "exchange" and VINGT_EXCHANGE:
        return _vingt_exchange(world, legal)
    if world.decision != "play" or rng.random() < ROLLOUT_RANDOMNESS:
        return legal[rng.randrange(len(legal))]
    if world.SPEC.id == "all-fours" and ALL_FOURS_POLICY:
        return _all_fours_play(world, legal)
    if world.SPEC.id == "vingt-down" and VINGT_POLICY:
        return _vingt_play(world, legal)
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


VINGT_EXCHANGE = True
PIQUET_ORDER = "7 8 9 10 J Q K A".split()


def _vingt_exchange(world: GameState, legal: list[str]) -> str:
    """Vingt-down's exchange as the heuristic bot makes it: discard the side cards below the
    king, at most three, weakest first (trumps and high cards take the tricks)."""
    trump = world.trump
    weak = sorted(
        (c for c in world.hands[world.seat_to_move] if c[-1] != trump and c[:-1] not in "KA"),
        key=lambda c: PIQUET_ORDER.index(c[:-1]),
    )[:3]
    action = "discard:" + ",".join(world.DECK.sorted(weak)) if weak else "discard:none"
    return action if action in legal else "discard:none"


VINGT_POLICY = True
_PIQUET_RANK = {c: PIQUET_ORDER.index(c[:-1]) for c in PIQUET_32.cards}


def _vingt_play(world: GameState, legal: list[str]) -> str:
    """Vingt-down card play for rollouts, as the heuristic bot plays (win the trick with the
    cheapest card that surely wins it, else throw the cheapest card), but knowing the rollout
    world's hands: a card surely wins when no seat still to play can beat it."""
    seat, trump, trick = world.seat_to_move, world.trump, world.trick
    played = {who for who, _ in trick}
    later = [
        world.hands[s]
        for s in range(len(world.hands))
        if s != seat and s not in played and world.drops[s] != "drop"
    ]
    led = trick[0][1][-1] if trick else None
    top = None
    for _, card in trick:
        if top is None or _vingt_beats(card, top, trump):
            top = card

    def sure(card: str) -> bool:
        if top is not None and not _vingt_beats(card, top, trump):
            return False
        suit_led = led or card[-1]
        for hand in later:
            answers = [c for c in hand if c[-1] == suit_led] or [
                c for c in hand if c[-1] == trump
            ]  # follow suit, else trump; a hand with neither cannot beat anything
            if any(_vingt_beats(c, card, trump) for c in answers):
                return False
        return True

    def cost(card: str) -> tuple[bool, int]:
        return (card[-1] == trump, _PIQUET_RANK[card])

    winners = [c for c in legal if sure(c)]
    return min(winners or legal, key=cost)


def _vingt_beats(card: str, top: str, trump: str) -> bool:
    if card[-1] == top[-1]:
        return _PIQUET_RANK[card] > _PIQUET_RANK[top]
    return card[-1] == trump


ALL_FOURS_POLICY = True
CARD_POINTS = {"A": 4, "K": 3, "Q": 2, "J": 1, "10": 10}  # All Fours' Game points


def _all_fours_trump_call(world: GameState) -> str:
    """Stand (as beggar) or give (as dealer) with a hand of trumps in the kick's suit (as the
    heuristic bot does), else beg or run."""
    kick_suit = world.kick[-1]
    trumps = [c for c in world.hands[world.seat_to_move] if c[-1] == kick_suit]
    strong = len(trumps) + 0.75 * sum(1 for c in trumps if c[:-1] in ("A", "K", "Q", "J")) >= 3
    if world.decision == "beg":
        return "stand" if strong else "beg"
    return "give" if strong else "run"


def _all_fours_play(world: GameState, legal: list[str]) -> str:
    """All Fours card play for rollouts, after the heuristic bot's ideas: keep the 10s, honours
    and trumps (the trump jack above all) away from tricks the other side wins, feed points to
    a partner who is winning, win tricks worth something as cheaply as possible."""
    seat, trump = world.seat_to_move, world.trump
    cost = _ALL_FOURS_COST[trump].__getitem__
    trick = world.trick
    if not trick:
        aces = [c for c in legal if c[:-1] == "A" and c[-1] != trump]
        return aces[0] if aces else min(legal, key=cost)
    winner, top = trick[0]
    stake = 0
    for who, card in trick:
        stake += _ALL_FOURS_STAKE[trump][card]
        if _beats(card, top, trump):
            winner, top = who, card
    if winner == (seat + 2) % 4:
        safe = len(trick) == 3 or top[:-1] == "A" or (top[-1] == trump and _RANK[top] >= 10)
        if safe:  # feed the partner: the biggest point card that is not a trump
            feed = [c for c in legal if c[-1] != trump and c in CARD_POINTS_CARDS]
            if feed:
                return max(feed, key=_POINTS.__getitem__)
        return min(legal, key=cost)
    winners = [c for c in legal if _beats(c, top, trump)]
    if winners:
        best = min(winners, key=cost)
        if best[-1] != trump or stake > 0:
            return best
    return min(legal, key=cost)


def _beats(card: str, top: str, trump: str) -> bool:
    """Whether ``card`` beats ``top``, the card winning the trick so far."""
    if card[-1] == top[-1]:
        return _RANK[card] > _RANK[top]
    return card[-1] == trump


_RANK = STANDARD_52.rank
_POINTS = {c: CARD_POINTS.get(c[:-1], 0) for c in STANDARD_52.cards}
CARD_POINTS_CARDS = {c for c, points in _POINTS.items() if points}
# What giving a card up costs, by trump: the trump jack most, then trumps, then points and rank.
_ALL_FOURS_COST = {
    trump: {
        c: 30 * (c == "J" + trump) + 8 * (c[-1] == trump) + _POINTS[c] + 0.3 * _RANK[c]
        for c in STANDARD_52.cards
    }
    for trump in STANDARD_52.suits
}
# What a card in a trick is worth to whoever takes it: its points, 3 more for the trump jack.
_ALL_FOURS_STAKE = {
    trump: {c: _POINTS[c] + 3 * (c == "J" + trump) for c in STANDARD_52.cards}
    for trump in STANDARD_52.suits
}


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
