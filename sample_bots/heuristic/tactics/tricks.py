"""Playing a trick on purpose: win it as cheaply as possible, or duck it as safely as possible."""

from __future__ import annotations

from .common import Deck, suit


def cheapest(cards: list[str], deck: Deck, trump: str | None) -> str:
    """The card we would miss least: low ranks first, trumps last."""
    return min(cards, key=lambda c: (suit(c) == trump, deck.rank[c]))


def dearest(cards: list[str], deck: Deck, trump: str | None) -> str:
    return max(cards, key=lambda c: (suit(c) == trump, deck.rank[c]))


def play_to_win(
    chances: dict[str, float],
    deck: Deck,
    trump: str | None,
    must_win_all: bool,
    last_needed: bool = False,
) -> str:
    """Win this trick if we reasonably can, with the cheapest card that does; else throw the cheapest.

    ``last_needed``: this is the last trick we want, so win it with the highest sure winner (it
    would only win an unwanted trick later) and keep the low cards for ducking.
    """
    best = max(chances.values())
    if must_win_all and best > 0:
        return cheapest([c for c, p in chances.items() if p >= best - 1e-9], deck, trump)
    sure = [c for c, p in chances.items() if p >= 0.9]
    if sure:
        return (dearest if last_needed else cheapest)(sure, deck, trump)
    if best >= 0.3:
        return cheapest([c for c, p in chances.items() if p >= best - 0.1], deck, trump)
    return cheapest(list(chances), deck, trump)


def play_to_duck(chances: dict[str, float], deck: Deck, trump: str | None) -> str:
    """Lose this trick: among the cards least likely to win, shed the most dangerous one."""
    least = min(chances.values())
    safest = [c for c, p in chances.items() if p <= least + 0.02]
    return dearest(safest, deck, trump)
