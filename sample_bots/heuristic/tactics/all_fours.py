"""All Fours (SPEC.md 9.4): two teams, play anticlockwise, trumps may be played at will.

Stand on a hand with trumps in the kick's suit and beg without; as dealer give a point away only
when the kick's suit suits us and it cannot hand the opponents the match. In play, weigh each card
by what the trick is worth (card points for Game, the trump jack's 1 or 3) times the chance that
our side takes it: feed points to a partner who is winning, keep them away from the opponents,
never risk our own trump jack, and win valuable tricks as cheaply as possible.
"""

from __future__ import annotations

from .common import STANDARD_52 as DECK
from .common import round_events, suit, trick_winner, voids_from_tricks, win_chance

CARD_POINTS = {"A": 4, "K": 3, "Q": 2, "J": 1, "10": 10}
POINT_VALUE = 0.08  # one card point, in match points (Game is 1 point for the larger share)
SPEND_COST = 0.01  # per rank step: the value of keeping a high card for a later trick
TRUMP_KEEP = 0.3  # and of keeping a trump (trumps take the later tricks)


def choose(view: dict, legal: list[str], events: list[dict]) -> str:
    phase = view["phase"]
    if phase == "beg":
        return beg(view)
    if phase == "give":
        return give(view)
    return play(view, legal, events)


def points(card: str) -> int:
    return CARD_POINTS.get(card[:-1], 0)


def trump_strength(hand: list[str], trump: str) -> float:
    """Roughly how many trump tricks and awards the hand holds in ``trump``."""
    trumps = [c for c in hand if suit(c) == trump]
    high = sum(1 for c in trumps if c[:-1] in ("A", "K", "Q", "J"))
    return len(trumps) + 0.75 * high


def beg(view: dict) -> str:
    team = view["team"]
    if view["team_scores"][team] == view["target"] - 1:
        return "beg"  # a given point wins the match for us
    return "stand" if trump_strength(view["hand"], suit(view["kick"])) >= 3 else "beg"


def give(view: dict) -> str:
    their = view["team_scores"][1 - view["team"]]
    if their + 1 >= view["target"]:
        return "run"  # giving would hand them the match
    return "give" if trump_strength(view["hand"], suit(view["kick"])) >= 3 else "run"


def play(view: dict, legal: list[str], events: list[dict]) -> str:
    seat, trump, partner = view["seat"], view["trump"], view["partner"]
    trick_seats = [t["seat"] for t in view["trick"]]
    trick = [t["card"] for t in view["trick"]]
    later_seats = [(seat - k) % 4 for k in range(1, 4 - len(trick))]
    opponents = [(s, view["hand_counts"][s]) for s in later_seats if s != partner]
    seen = set(view["hand"]) | set(trick) | set(view["kicked"])
    for pile in view["taken"]:
        seen.update(pile)
    unseen = set(DECK.cards) - seen
    voids = voids_from_tricks(round_events(events, "hand_start"), trump, strict_follow=False)
    jack = "J" + trump
    jack_seat = next((s for s, c in zip(trick_seats, trick) if c == jack), None)
    average = sum(points(c) for c in unseen) / len(unseen) if unseen else 0.0
    expected_extra = average * len(later_seats)

    partner_chance = 0.0
    if partner in trick_seats:
        best = trick_winner(trick, DECK, trump)
        if trick_seats[best] == partner:
            rest = trick[:best] + trick[best + 1 :]
            if best == 0:
                rest = []
            partner_chance = win_chance(
                trick[best], rest, opponents, unseen, DECK, trump, voids, trump_at_will=True
            )

    def value(card: str) -> float:
        mine = win_chance(card, trick, opponents, unseen, DECK, trump, voids, trump_at_will=True)
        ours = max(
            mine, partner_chance if trick_winner(trick + [card], DECK, trump) != len(trick) else 0.0
        )
        stake = POINT_VALUE * (sum(points(c) for c in trick) + points(card) + expected_extra)
        gain = loss = stake
        holder = seat if card == jack else jack_seat
        if holder is not None:
            if holder in (seat, partner):
                gain, loss = gain + 1, loss + 3  # our jack: 1 if we keep it, 3 to them if hanged
            else:
                gain, loss = gain + 3, loss + 1  # their jack: we hang it for 3
        spend = SPEND_COST * DECK.rank[card] + (TRUMP_KEEP if suit(card) == trump else 0.0)
        return ours * gain - (1 - ours) * loss - spend

    return max(legal, key=lambda c: (value(c), -DECK.cards.index(c)))
