"""What the trick-taking games share: who wins a trick, and :class:`TrickGame`, the hands and the
trick in progress as every game keeps, plays, shows and locates them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cards import IN_SUIT
from .core import GameState


def trick_winner(trick: list[tuple[int, str]], trump: str | None, rank: Mapping[str, int]) -> int:
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


def follow_suit(hand: list[str], trick: list[tuple[int, str]]) -> list[str]:
    """The cards of ``hand`` in the led suit; the whole hand when void or leading (a new list).
    (filter(): no Python step per card.)"""
    if trick:
        follow = [*filter(IN_SUIT[trick[0][1][-1]], hand)]
        if follow:
            return follow
    return list(hand)


# The keys ``TrickGame._view_tail`` ends a seat's view with, in its order: the games' VIEW_KEYS
# end with them (SEAT_VIEW_TAIL when the view counts the deal's played cards and tricks).
SEAT_VIEW_TAIL = ("trick", "last_trick", "played", "tricks", "hand_counts", "scores", "hand")
SEAT_VIEW_TAIL_UNCOUNTED = ("trick", "last_trick", "hand_counts", "scores", "hand")


class TrickGame(GameState):
    """A game whose deals are played out in tricks.

    The game keeps ``hands`` (each seat's cards, canonical order) and uses:
    - ``_new_tricks()`` at every deal: no trick in progress, no last trick;
    - ``_play_card(seat, card)``: the card goes from the hand to the trick, announced by a ``play``
      event; returns how many cards the trick holds now;
    - ``_take_trick(trump)`` once the trick is complete: finds the winner (:func:`trick_winner`)
      and returns ``{"leader", "cards", "winner"}`` (the game keeps it as ``last_trick``, possibly
      with more fields, and announces it), and starts an empty trick;
    - ``_view_tail`` and ``_card_locations`` for the parts of a view and of ``card_locations`` that
      every trick game shows the same way.

    Views are built on every decision, so the trick as views show it (``{"seat", "card"}`` per
    card, ``trick_shown``) is kept as cards are played rather than built for each view. A view
    shares those small dicts and ``last_trick`` with the state, which never changes them once made.
    """

    hands: list[list[str]]
    trick: list[tuple[int, str]]
    trick_shown: list[dict[str, Any]]
    last_trick: dict[str, Any] | None

    def _new_tricks(self) -> None:
        self.trick = []
        self.trick_shown = []
        self.last_trick = None

    def _play_card(self, seat: int, card: str) -> int:
        self.hands[seat].remove(card)
        trick = self.trick
        trick.append((seat, card))
        self.trick_shown.append({"seat": seat, "card": card})
        self.emit({"type": "play", "seat": seat, "card": card})
        return len(trick)

    def _take_trick(self, trump: str | None) -> dict[str, Any]:
        trick = self.trick
        winner = trick_winner(trick, trump, self.DECK.rank)
        self.trick = []
        self.trick_shown = []
        return {"leader": trick[0][0], "cards": [card for _, card in trick], "winner": winner}

    def _view_tail(
        self,
        view: dict[str, Any],
        seat: int | None,
        scores: list[int],
        stock: list[str],
        played: list[str] | None = None,
        tricks: list[int] | None = None,
    ) -> dict[str, Any]:
        """Finish ``view`` with, in this order: ``trick``, ``last_trick``, ``played`` and ``tricks``
        (if given: the cards of this deal's finished tricks, tricks per seat), ``hand_counts``,
        ``scores``; then the seat's ``hand``, or for the all-seeing view (``seat`` None) every
        seat's ``hands`` and the ``stock``. Every list is a copy."""
        view["trick"] = list(self.trick_shown)
        view["last_trick"] = self.last_trick
        if played is not None:
            view["played"] = list(played)
        if tricks is not None:
            view["tricks"] = list(tricks)
        view["hand_counts"] = list(map(len, self.hands))
        view["scores"] = list(scores)
        if seat is None:
            view["hands"] = [list(hand) for hand in self.hands]
            view["stock"] = list(stock)
        else:
            view["hand"] = list(self.hands[seat])
        return view

    def _card_locations(self, more: dict[str, list[str]]) -> dict[str, list[str]]:
        """Each seat's ``hand N`` and the ``trick``, then the game's other places ``more``."""
        locations = {f"hand {seat}": list(hand) for seat, hand in enumerate(self.hands)}
        locations["trick"] = [card for _, card in self.trick]
        locations.update(more)
        return locations
