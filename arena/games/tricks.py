"""Trick primitives shared by the trick-taking games."""

from __future__ import annotations

from collections.abc import Mapping


def trick_winner(trick: list[tuple[int, str]], trump: str | None,
                 rank: Mapping[str, int]) -> int:
    """The seat that wins a trick of (seat, card) in play order: the highest trump, else the
    highest card of the led suit (``rank`` orders cards within a suit; ``trump`` None = no trump)."""
    led = trick[0][1][-1]
    best_seat, best_card = trick[0]
    best_trump = led == trump
    for seat, card in trick[1:]:
        suit = card[-1]
        if suit == trump:
            if not best_trump or rank[card] > rank[best_card]:
                best_seat, best_card, best_trump = seat, card, True
        elif suit == led and not best_trump and rank[card] > rank[best_card]:
            best_seat, best_card = seat, card
    return best_seat
