"""Eight Rounds (SPEC.md 9.3): seven no-trump contracts, then competitive patience.

In the avoiding contracts each card is judged by what taking the trick would cost (the contract's
penalty for the trick and for the cards in it, ours included) times the chance that the card takes
it, less a bonus for getting rid of dangerous cards (high ones, penalty cards) while it is safe.
In "most tricks" every trick is wanted. In the patience round we play the card that lets us go on
playing (a run of our own cards) and opens the least for the others, and never pass by choice.
"""

from __future__ import annotations

from .common import STANDARD_52 as DECK
from .common import chance_holds_any, round_events, suit, voids_from_tricks, win_chance
from .tricks import play_to_win

PATIENCE_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")  # Ace low
UNLOCK_COST = 0.6  # patience: a card of the others' that our play lets them play
OVERTAKE = 0.3  # avoiding contracts: how often a player who could beat our card does
SHED_HIGH = 0.3  # per rank step: how much we like to be rid of a high card while it is safe


def choose(view: dict, legal: list[str], events: list[dict]) -> str:
    if view["contract"] == "patience":
        return patience(view, legal)
    return play(view, legal, events)


def card_penalty(contract: str, card: str) -> int:
    """What holding ``card`` in a taken trick costs in ``contract``."""
    if contract == "king-of-diamonds":
        return 50 if card == "KD" else 0
    if contract == "queens":
        return 25 if card[:-1] == "Q" else 0
    if contract == "hearts":
        return 10 if suit(card) == "H" else 0
    if contract == "jacks":
        return 25 if card[:-1] == "J" else 0
    return 0


def trick_cost(contract: str, number: int, total: int) -> int:
    """What taking trick ``number`` (1-based) of ``total`` costs, apart from the cards in it."""
    if contract == "tricks":
        return 10
    if contract == "first-fifth-last":
        return 25 if number in (1, 5, total) else 0
    return 0


def play(view: dict, legal: list[str], events: list[dict]) -> str:
    seat, players, contract = view["seat"], view["players"], view["contract"]
    trick = [t["card"] for t in view["trick"]]
    later = [
        ((seat + k) % players, view["hand_counts"][(seat + k) % players])
        for k in range(1, players - len(trick))
    ]
    seen = set(view["hand"]) | set(view["played"]) | set(trick) | set(view["removed"])
    unseen = set(DECK.cards) - seen
    voids = voids_from_tricks(round_events(events), None)
    if contract == "most-tricks":
        chances = {
            card: win_chance(card, trick, later, unseen, DECK, None, voids) for card in legal
        }
        return play_to_win(chances, DECK, None, must_win_all=False)
    chances = {
        card: win_chance(card, trick, later, unseen, DECK, None, voids, OVERTAKE) for card in legal
    }
    number = len(view["played"]) // players + 1
    base = trick_cost(contract, number, view["hand_size"])
    in_trick = sum(card_penalty(contract, c) for c in trick)
    led = suit(trick[0]) if trick else None
    incoming = {
        card: dumped_on_us(contract, led or suit(card), later, unseen, voids) for card in legal
    }

    def expected_cost(card: str) -> float:
        p = chances[card]
        own = card_penalty(contract, card)
        taking = p * (base + in_trick + own + incoming[card])
        shed = (1 - p) * (own + SHED_HIGH * DECK.rank[card])
        return taking - shed

    return min(legal, key=lambda c: (expected_cost(c), DECK.cards.index(c)))


def dumped_on_us(
    contract: str,
    led: str,
    later: list[tuple[int, int]],
    unseen: set[str],
    voids: dict[int, set[str]],
) -> float:
    """The penalty the later players can be expected to add to a trick we take: a penalty card of
    the led suit may have to follow, any other may be thrown by a player void in the led suit."""
    # in deck order, not the set's: a float sum in set order depends on PYTHONHASHSEED
    penalties = [
        (c, card_penalty(contract, c))
        for c in DECK.cards
        if c in unseen and card_penalty(contract, c)
    ]
    if not penalties or not unseen:
        return 0.0
    total = len(unseen)
    led_unseen = sum(1 for c in unseen if suit(c) == led)
    expected = 0.0
    for seat, hand in later:
        void = (
            1.0 if led in voids.get(seat, ()) else 1.0 - chance_holds_any(total, led_unseen, hand)
        )
        for card, penalty in penalties:
            held = hand / total
            expected += held * penalty * (0.4 if suit(card) == led else 0.6 * void)
    return expected


def patience(view: dict, legal: list[str]) -> str:
    cards = [c for c in legal if c != "pass"]
    if not cards:
        return "pass"
    removed = set(view["removed"])
    hand = set(view["hand"])
    rows = {s: [r + s for r in PATIENCE_RANKS if r + s not in removed] for s in DECK.suits}

    def run_from(row: list[str], index: int, step: int) -> float:
        """Our own cards that follow in this direction (we can go on playing them), less the
        others' cards it unlocks before the next card of ours blocks the row again."""
        ours = unlocked = 0
        index += step
        while 0 <= index < len(row) and row[index] in hand:
            ours += 1
            index += step
        while 0 <= index < len(row) and row[index] not in hand:
            unlocked += 1
            index += step
        return ours - UNLOCK_COST * unlocked

    def value(card: str) -> float:
        row = rows[suit(card)]
        index = row.index(card)
        if card[:-1] == "7":
            return run_from(row, index, 1) + run_from(row, index, -1)
        layout = view["patience"][suit(card)]
        step = (
            1
            if layout is not None and card == row[min(row.index(layout["high"]) + 1, len(row) - 1)]
            else -1
        )
        return run_from(row, index, step)

    # Passing costs 10 for certain; a card never costs us anything now, so we always play one.
    return max(cards, key=lambda c: (value(c), -DECK.cards.index(c)))
