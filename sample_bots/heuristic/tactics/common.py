"""What every game's tactics share: decks, card arithmetic, what is still unseen, who is void,
and the chance that a card played now wins the trick.

Everything here works on the JSON views and events the referee sends (SPEC.md), so it knows no
Python of the arena.
"""

from __future__ import annotations

from math import comb


class Deck:
    """A deck shape: suit letters and ranks from low to high (SPEC.md section 2)."""

    def __init__(self, suits: str, ranks: list[str]) -> None:
        self.suits = tuple(suits)
        self.ranks = tuple(ranks)
        self.cards = tuple(r + s for s in self.suits for r in self.ranks)
        self.rank = {card: self.ranks.index(card[:-1]) for card in self.cards}


COLOURS_48 = Deck("RGBY", [str(v) for v in range(1, 13)])
PIQUET_32 = Deck("CDHS", ["7", "8", "9", "10", "J", "Q", "K", "A"])
STANDARD_52 = Deck("CDHS", ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"])


def suit(card: str) -> str:
    return card[-1]


def round_events(events: list[dict], start: str = "round_start") -> list[dict]:
    """The events since the last event of type ``start`` (the current round or deal)."""
    for index in range(len(events) - 1, -1, -1):
        if events[index].get("type") == start:
            return events[index:]
    return events


def voids_from_tricks(
    events: list[dict], trump: str | None, strict_follow: bool = True
) -> dict[int, set[str]]:
    """The suits each seat has shown it lacks, from the finished tricks and plays in ``events``.

    A seat that did not follow the led suit lacks it, unless the rules let it trump while holding
    the suit (``strict_follow=False``, All Fours): then only a card of a third suit proves a void.
    """
    voids: dict[int, set[str]] = {}
    led: str | None = None
    for event in events:
        kind = event.get("type")
        if kind == "trick":
            led = None
        elif kind == "play":
            card = event.get("card")
            if not isinstance(card, str):
                continue
            if led is None:
                led = suit(card)
            elif suit(card) != led and (strict_follow or suit(card) != trump):
                voids.setdefault(event["seat"], set()).add(led)
    return voids


def chance_holds_any(unseen: int, wanted: int, hand: int) -> float:
    """The chance that ``hand`` cards drawn from ``unseen`` cards include one of ``wanted`` of them."""
    if wanted <= 0 or hand <= 0:
        return 0.0
    if hand > unseen:
        hand = unseen
    return 1.0 - comb(unseen - wanted, hand) / comb(unseen, hand)


def trick_winner(cards: list[str], deck: Deck, trump: str | None) -> int:
    """The index in ``cards`` (play order) of the winning card: highest trump, else highest of the led suit."""
    led = suit(cards[0])
    best = 0
    for index in range(1, len(cards)):
        card, top = cards[index], cards[best]
        if trump is not None and suit(card) == trump:
            if suit(top) != trump or deck.rank[card] > deck.rank[top]:
                best = index
        elif suit(card) == led and suit(top) == led and deck.rank[card] > deck.rank[top]:
            best = index
    return best


def win_chance(
    card: str,
    trick: list[str],
    later: list[tuple[int, int]],
    unseen: set[str],
    deck: Deck,
    trump: str | None,
    voids: dict[int, set[str]],
    overtake: float = 1.0,
    trump_at_will: bool = False,
) -> float:
    """The chance that ``card``, played now to ``trick``, wins it.

    ``later`` lists (seat, cards in hand) for the seats still to play after us. They may beat us
    with a higher card of the led suit, or (void in the led suit) with a trump. Cards are taken to
    be spread at random among the unseen ones (the other hands and anything undealt), and a later
    player who can beat us does so with chance ``overtake`` (1: they want the trick; lower when
    they would rather duck). ``trump_at_will``: the rules let a player trump while holding the
    led suit (All Fours), so any later hand with a higher trump is a threat, void or not.
    """
    cards = trick + [card]
    if trick_winner(cards, deck, trump) != len(cards) - 1:
        return 0.0
    led = suit(cards[0])
    total = len(unseen)
    if total == 0 or not later:
        return 1.0
    if trump is not None and suit(card) == trump:
        higher_trumps = sum(
            1 for c in unseen if suit(c) == trump and deck.rank[c] > deck.rank[card]
        )
        higher_led = higher_trumps if led == trump else 0
    else:
        higher_trumps = sum(1 for c in unseen if trump is not None and suit(c) == trump)
        higher_led = sum(1 for c in unseen if suit(c) == led and deck.rank[c] > deck.rank[card])
    # A higher card of the led suit in any of the later hands (taken together: the cards are
    # spread without replacement, and a known void holds none of that suit).
    followers = sum(hand for seat, hand in later if led not in voids.get(seat, ()))
    chance = 1.0 - overtake * chance_holds_any(total, higher_led, followers)
    if trump is None or led == trump:
        return chance
    led_unseen = sum(1 for c in unseen if suit(c) == led)
    for seat, hand in later:
        if trump_at_will or led in voids.get(seat, ()):
            void = 1.0
        else:
            void = 1.0 - chance_holds_any(total, led_unseen, hand)
        ruff = void * chance_holds_any(max(total - led_unseen, 1), higher_trumps, hand)
        chance *= 1.0 - overtake * ruff
    return chance


def exact_distribution(chances: list[float]) -> list[float]:
    """P(exactly k successes) for independent events with the given chances (Poisson binomial)."""
    dist = [1.0]
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        for k, q in enumerate(dist):
            nxt[k] += q * (1.0 - p)
            nxt[k + 1] += q * p
        dist = nxt
    return dist
