"""Plain Tricks: a small trick-taking game that exists only for the tests, written as a new game
is (one module, the hooks :class:`arena.games.GameState` declares) to prove that the contract is
complete: tests/test_fifth_game.py registers it and takes it through everything the four real
games go through.

The rules: 3 or 4 players, the piquet deck of 32 cards. ``deals`` deals (an option, 2 by
default); the first dealer is drawn from the seed, the deal passes clockwise. Each deal: shuffle,
five cards to each seat, the next card turned up for trump, the rest a stock nobody sees. The
dealer's left leads; follow suit if you can, else any card; the highest trump wins, else the
highest card of the led suit, and the winner leads next. A trick is worth a point, and with the
option ``last_trick_bonus`` the last trick of a deal two more. Highest total wins.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from arena.games import GameSpec, Option
from arena.games.cards import PIQUET_32
from arena.games.core import Deal
from arena.games.knowledge import (
    blank_state,
    current_deal_events,
    dealt_to,
    follow_rule,
    forbidden_suits,
    original_hands,
    replay,
    trick_plays,
    voids_in_tricks,
)
from arena.games.tricks import TrickGame, follow_suit

HAND_SIZE = 5


class PlainTricks(TrickGame):
    DECK = PIQUET_32
    DEAL_STARTS = ("deal_start",)
    DEAL_ENDS = {"deal_end": "totals"}
    SCORING_EVENTS = ("deal_end",)

    def __init__(self, players, options, seed, dealer=None) -> None:
        super().__init__(players, options, seed, dealer)
        self._begin(1, self.dealer.rng.below(players), [0] * players)

    def _begin(self, deal: int, dealer_seat: int, totals: list[int]) -> None:
        """The match from deal number ``deal`` on, dealt by ``dealer_seat``, with these totals."""
        self.deal = deal
        self.dealer_seat = dealer_seat
        self.totals = totals
        self._start_deal()

    def _start_deal(self) -> None:
        n = self.players
        cards = self.dealer.shuffled(PIQUET_32.cards)
        self.hands = [
            PIQUET_32.sorted(cards[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in range(n)
        ]
        self.trump_card = cards[n * HAND_SIZE]
        self.trump = self.trump_card[-1]
        self.stock = cards[n * HAND_SIZE + 1 :]
        self.tricks = [0] * n
        self.played: list[str] = []
        self._new_tricks()
        self.emit({"type": "deal_start", "deal": self.deal, "dealer": self.dealer_seat})
        for seat in range(n):
            self.emit({"type": "deal", "seat": seat, "cards": list(self.hands[seat])}, (seat,))
        self.emit({"type": "trump", "card": self.trump_card, "suit": self.trump})
        self.decision = "play"
        self.seat_to_move = (self.dealer_seat + 1) % n

    # -- the rules -----------------------------------------------------------------------------

    def _legal(self) -> list[str]:
        return follow_suit(self.hands[self.mover], self.trick)

    def _explain(self, action: str) -> str:
        if action not in PIQUET_32.order:
            return f"play a card of your hand, not {action!r}"
        if action not in self.hands[self.mover]:
            return f"you do not hold {action}"
        return f"you must follow the led suit {self.trick[0][1][-1]}"

    def _apply(self, action: str) -> None:
        seat = self.mover
        if self._play_card(seat, action) < self.players:
            self.seat_to_move = (seat + 1) % self.players
            return
        self.last_trick = taken = self._take_trick(self.trump)
        winner = taken["winner"]
        last = not self.hands[winner]
        self.tricks[winner] += 1
        self.totals[winner] += 1 + (2 if last and self.options["last_trick_bonus"] else 0)
        self.played.extend(taken["cards"])
        self.emit({"type": "trick", **taken})
        if not last:
            self.seat_to_move = winner
            return
        self.emit(
            {
                "type": "deal_end",
                "deal": self.deal,
                "tricks": list(self.tricks),
                "totals": list(self.totals),
            }
        )
        if self.deal == self.options["deals"]:
            self._end_match()
        else:
            self._begin(self.deal + 1, (self.dealer_seat + 1) % self.players, list(self.totals))

    def _scores(self) -> list[int]:
        return list(self.totals)

    # -- what a seat may know, where the cards are ----------------------------------------------

    def view(self, seat: int | None) -> dict[str, Any]:
        view: dict[str, Any] = {
            "game": self.SPEC.id,
            "players": self.players,
            "seat": seat,
            "deal": self.deal,
            "deals": self.options["deals"],
            "dealer": self.dealer_seat,
            "phase": self.decision or "over",
            "to_move": self.seat_to_move,
            "trump_card": self.trump_card,
            "trump": self.trump,
        }
        return self._view_tail(view, seat, self.totals, self.stock, self.played, self.tricks)

    def card_locations(self) -> dict[str, list[str]]:
        return self._card_locations(
            {
                "played": list(self.played),
                "trump card": [self.trump_card],
                "stock": list(self.stock),
            }
        )

    @classmethod
    def resample(
        cls,
        view: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        deal: Deal,
        rng: random.Random,
    ) -> PlainTricks:
        """The deal as the seat knows it: the other hands and the stock dealt under the voids
        the play showed, the deal's plays replayed."""
        n, me = view["players"], view["seat"]
        deal_events = current_deal_events(events, cls.DEAL_STARTS)
        own = dealt_to(deal_events, me)
        plays = trick_plays(deal_events)
        known = set(own) | {card for _, card, _ in plays} | {view["trump_card"]}
        pool = [card for card in PIQUET_32.cards if card not in known]
        sizes = {f"hand {s}": view["hand_counts"][s] for s in range(n) if s != me}
        sizes["stock"] = len(pool) - sum(sizes.values())
        voids = voids_in_tricks(plays, me, None, follow_rule)
        hidden = deal(pool, sizes, forbidden_suits(voids, pool))
        hands = original_hands(n, me, own, hidden, plays)
        stock = list(hidden["stock"])
        rng.shuffle(stock)
        deck = [card for hand in hands for card in hand] + [view["trump_card"], *stock]
        state = blank_state(cls, n, options, deck, rng.getrandbits(63))
        before = [total - won for total, won in zip(view["scores"], view["tricks"])]
        state._begin(view["deal"], view["dealer"], before)
        replay(state, [(seat, card) for seat, card, _ in plays])
        return state


SPEC = GameSpec(
    id="plain-tricks",
    name="Plain Tricks (a test-only game)",
    aliases=("plain",),
    player_counts=(3, 4),
    default_players=4,
    options=(
        Option("deals", 2, "how many deals a match has", minimum=1, maximum=6),
        Option("last_trick_bonus", False, "the last trick of a deal is worth 3 points, not 1"),
    ),
    state_class=PlainTricks,
    summary="Five cards each, a turned-up trump, a point a trick (a test-only game).",
)
PlainTricks.SPEC = SPEC
