"""Vingt-down (SPEC.md 9.2): every trick taken brings the score down, none at all costs +5.

Name the suit of the two cards we hold (hearts, which doubles the deal, only when it is clearly
ours), keep trumps and aces in the exchange, drop out of a hopeless deal when allowed, and try to
take every trick, as cheaply as possible.
"""

from __future__ import annotations

from .common import PIQUET_32 as DECK
from .common import round_events, suit, voids_from_tricks, win_chance
from .tricks import play_to_win

HIGH = DECK.rank["KS"]  # K and A count as high cards


def choose(view: dict, legal: list[str], events: list[dict]) -> str:
    phase = view["phase"]
    if phase == "trump":
        return f"trump:{trump_suit(view['hand'])}"
    if phase == "exchange":
        return exchange(view, legal)
    if phase == "drop":
        return "drop" if expected_tricks(view["hand"], view["trump"]) < 0.6 else "stay"
    return play(view, legal, events)


def trump_suit(hand: list[str]) -> str:
    """The suit our two cards are strongest in; hearts (everything doubled) only with a pair of
    hearts holding the king or ace."""

    def strength(s: str) -> float:
        return sum(1 + DECK.rank[c] / 4 for c in hand if suit(c) == s)

    best = max("CDS", key=strength)
    hearts = [c for c in hand if suit(c) == "H"]
    if len(hearts) == 2 and max(DECK.rank[c] for c in hearts) >= HIGH:
        return "H"
    return best if strength(best) > 0 else "C"


def keep_value(card: str, trump: str) -> float:
    if suit(card) == trump:
        return 10 + DECK.rank[card]
    return DECK.rank[card] if DECK.rank[card] >= HIGH else DECK.rank[card] - 10


def exchange(view: dict, legal: list[str]) -> str:
    """Discard the weak side cards (below the king), at most three, weakest first."""
    trump = view["trump"]
    weak = sorted(
        (c for c in view["hand"] if keep_value(c, trump) < 0), key=lambda c: keep_value(c, trump)
    )
    discard = sorted(weak[:3], key=lambda c: DECK.cards.index(c))
    action = "discard:" + (",".join(discard) if discard else "none")
    return action if action in legal else "discard:none"


def expected_tricks(hand: list[str], trump: str) -> float:
    trumps = [c for c in hand if suit(c) == trump]
    aces = [c for c in hand if c[:-1] == "A" and suit(c) != trump]
    return 0.7 * len(trumps) + 0.2 * sum(DECK.rank[c] >= HIGH for c in trumps) + 0.6 * len(aces)


def active_seats_after(view: dict, count: int) -> list[int]:
    """The next ``count`` seats clockwise after us that play this deal (dropped seats sit out)."""
    drops = view.get("drops") or [None] * view["players"]
    seats, seat = [], view["seat"]
    while len(seats) < count:
        seat = (seat + 1) % view["players"]
        if drops[seat] != "drop":
            seats.append(seat)
    return seats


def play(view: dict, legal: list[str], events: list[dict]) -> str:
    trump = view["trump"]
    drops = view.get("drops") or [None] * view["players"]
    active = sum(1 for d in drops if d != "drop")
    trick = [t["card"] for t in view["trick"]]
    later = [(s, view["hand_counts"][s]) for s in active_seats_after(view, active - len(trick) - 1)]
    seen = set(view["hand"]) | set(view["played"]) | set(trick) | set(view.get("discarded") or [])
    unseen = set(DECK.cards) - seen
    voids = voids_from_tricks(round_events(events, "deal_start"), trump)
    chances = {card: win_chance(card, trick, later, unseen, DECK, trump, voids) for card in legal}
    return play_to_win(chances, DECK, trump, must_win_all=False)
