"""Alles oder Nichts (1988), 3-6 players.

The rules as this arena plays them are SPEC.md section 9.1 (from the publisher's rules, in
translation, settled by the project's rulings). Choices, in our words:
- 48 cards in four colours R G B Y of values 1..12, 12 high (no publisher's deck survives).
- Seven rounds of 6, 5, 4, 3, 4, 5, 6 cards. The first dealer is drawn from the seed (the Rng's
  first draw); the deal passes one seat clockwise (seat + 1) each round.
- Each round: shuffle all 48, deal, turn up the next card: its colour is trump.
- Bids 0..hand size are committed secretly, asked in order from the dealer's left; nobody learns
  another's bid while bidding. Then, from the dealer's left and dealer last, each declares open
  (the bid is revealed at once) or secret.
- The dealer's left leads; follow the led colour if you can (trump too), else any card. The highest
  trump wins, else the highest card of the led colour. The trick's winner leads next.
- Score: secret T (+3 if T == bid); open 2T + 3 if T == bid, else 0. Secret bids are shown at round
  end. Highest total after 7 rounds wins; equal totals share the placing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from .cards import COLOURS_48
from .core import Deal, GameSpec
from .knowledge import (
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
from .tricks import SEAT_VIEW_TAIL, TrickGame, follow_suit
from .tricks import trick_winner as winning_seat

HAND_SIZES = (6, 5, 4, 3, 4, 5, 6)
RANK = COLOURS_48.rank
ORDER = COLOURS_48.order
# Each hand size's bids, made once: _legal hands out a copy (its caller may keep the list).
BIDS = {size: tuple(f"bid:{b}" for b in range(size + 1)) for size in HAND_SIZES}


class AllesOderNichts(TrickGame):
    DECK = COLOURS_48
    DEAL_STARTS = ("round_start",)
    DEAL_ENDS = {"round_end": "totals"}
    SCORING_EVENTS = ("round_end",)

    def __init__(self, players, options, seed, dealer=None) -> None:
        super().__init__(players, options, seed, dealer)
        self._begin(0, self.dealer.rng.below(players), [0] * players)

    def _begin(self, round_index: int, first_dealer: int, totals: list[int]) -> None:
        """The match from round ``round_index`` (0-based) on, with these totals: deal it."""
        players = self.players
        self.round = round_index  # 0-based index into HAND_SIZES
        self.first_dealer = first_dealer
        self.totals = totals
        self._others = [tuple(s for s in range(players) if s != seat) for seat in range(players)]
        self._start_round()

    # -- round structure ---------------------------------------------------------------------

    @property
    def dealer_seat(self) -> int:
        return (self.first_dealer + self.round) % self.players

    def _start_round(self) -> None:
        n, size = self.players, HAND_SIZES[self.round]
        # Only the dealt cards and the turn-up are ever seen: shuffle just those positions.
        deck = self.dealer.shuffled(COLOURS_48.cards, n * size + 1)
        self.hands = [
            sorted(deck[i * size : (i + 1) * size], key=ORDER.__getitem__) for i in range(n)
        ]
        self.trump_card = deck[n * size]
        self.trump = self.trump_card[-1]
        self.stock = deck[n * size + 1 :]
        self.bids: list[int | None] = [None] * n
        self.declared: list[str | None] = [None] * n
        # Kept for the views: the bids everyone may see (declared open), and who has bid.
        self.open_bids: list[int | None] = [None] * n
        self.has_bid = [False] * n
        self.tricks = [0] * n
        self.played: list[str] = []  # cards of this round's finished tricks, in play order
        self._new_tricks()
        self.leader = (self.dealer_seat + 1) % n
        self.emit(
            {
                "type": "round_start",
                "round": self.round + 1,
                "dealer": self.dealer_seat,
                "hand_size": size,
            }
        )
        for seat in range(n):
            self.emit({"type": "deal", "seat": seat, "cards": list(self.hands[seat])}, (seat,))
        self.emit({"type": "trump", "card": self.trump_card, "suit": self.trump})
        self.decision = "bid"
        self.seat_to_move = self.leader

    def _end_round(self) -> None:
        points = []
        for seat in range(self.players):
            taken, bid = self.tricks[seat], self.bids[seat]
            if self.declared[seat] == "open":
                points.append(2 * taken + 3 if taken == bid else 0)
            else:
                points.append(taken + (3 if taken == bid else 0))
        self.totals = [t + p for t, p in zip(self.totals, points)]
        summary = {
            "round": self.round + 1,
            "bids": list(self.bids),
            "declarations": list(self.declared),
            "tricks": list(self.tricks),
            "points": points,
            "totals": list(self.totals),
        }
        self.emit({"type": "round_end", **summary})
        self.round += 1
        if self.round == len(HAND_SIZES):
            self._end_match()
        else:
            self._start_round()

    # -- the rules -----------------------------------------------------------------------------

    def _legal(self) -> list[str]:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        if self.decision == "play":
            # The led colour if you can, else any card.
            return follow_suit(self.hands[seat], self.trick)
        if self.decision == "bid":
            return [*BIDS[HAND_SIZES[self.round]]]
        return ["declare:open", "declare:secret"]

    def _explain(self, action: str) -> str:
        seat = self.mover
        if self.decision == "play":
            if action not in ORDER:
                return f"the play phase wants a card from your hand, not {action!r}"
            if action not in self.hands[seat]:
                return f"you do not hold {action}"
            return f"you must follow the led colour {self.trick[0][1][-1]}"
        if self.decision == "bid":
            return f"bid a number of tricks from 0 to {HAND_SIZES[self.round]} as bid:N"
        return "declare your bid as declare:open or declare:secret"

    def _apply(self, action: str) -> None:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        n = self.players
        if self.decision == "play":
            # (the play's first step here, not in a method: a call fewer on most cards)
            if self._play_card(seat, action) < n:
                self.seat_to_move = (seat + 1) % n
            else:
                self._end_trick()
        elif self.decision == "bid":
            bid = int(action[4:])
            self.bids[seat] = bid
            self.has_bid[seat] = True
            self.emit({"type": "bid", "seat": seat, "bid": bid}, (seat,))
            self.emit({"type": "bid", "seat": seat}, self._others[seat])
            nxt = (seat + 1) % n
            if nxt == self.leader:
                self.decision = "declare"
            self.seat_to_move = nxt
        else:
            how = action[8:]
            self.declared[seat] = how
            event: dict[str, Any] = {"type": "declare", "seat": seat, "declaration": how}
            if how == "open":
                event["bid"] = self.open_bids[seat] = self.bids[seat]
            self.emit(event)
            nxt = (seat + 1) % n
            if nxt == self.leader:
                self.decision = "play"
            self.seat_to_move = nxt

    def _end_trick(self) -> None:
        """The trick is complete: its winner takes it and leads, or the round ends."""
        self.last_trick = taken = self._take_trick(self.trump)
        winner = taken["winner"]
        self.tricks[winner] += 1
        self.emit({"type": "trick", **taken})
        self.played.extend(taken["cards"])
        if self.hands[winner]:
            self.leader = winner
            self.seat_to_move = winner
        else:
            self._end_round()

    def _scores(self) -> list[int]:
        return list(self.totals)

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
    ) -> AllesOderNichts:
        """The round as the seat knows it (GameState.resample): the other hands and the stock
        dealt under the voids shown; a secret bid of another seat drawn among the legal ones."""
        n, me = view["players"], view["seat"]
        round_index = view["round"] - 1
        size = HAND_SIZES[round_index]
        round_events = current_deal_events(events, cls.DEAL_STARTS)
        own = dealt_to(round_events, me)
        plays = trick_plays(round_events)
        played = [card for _, card, _ in plays]
        trump_card = view["trump_card"]
        known = set(own) | set(played) | {trump_card}
        pool = [c for c in COLOURS_48.cards if c not in known]
        counts = view["hand_counts"]
        sizes = {f"hand {s}": counts[s] for s in range(n) if s != me}
        sizes["stock"] = len(pool) - sum(sizes.values())
        voids = voids_in_tricks(plays, me, None, follow_rule)
        hidden = deal(pool, sizes, forbidden_suits(voids, pool))
        hands = original_hands(n, me, own, hidden, plays)
        deck = [c for s in range(n) for c in hands[s]] + [trump_card]
        state = blank_state(cls, n, {}, deck, rng.getrandbits(63))
        state._begin(round_index, (view["dealer"] - round_index) % n, list(view["scores"]))
        open_bids = view["bids"]
        actions: list[tuple[int, str]] = []
        for event in round_events:
            kind = event.get("type")
            if kind == "bid":
                seat = event["seat"]
                bid = event.get("bid", open_bids[seat])
                if bid is None:  # a secret bid: any is possible
                    bid = rng.randrange(size + 1)
                actions.append((seat, f"bid:{bid}"))
            elif kind == "declare":
                actions.append((event["seat"], "declare:" + event["declaration"]))
            elif kind == "play":
                actions.append((event["seat"], event["card"]))
        replay(state, actions)
        return state

    # -- what a seat may know -------------------------------------------------------------------

    VIEW_KEYS = (
        "game",
        "players",
        "seat",
        "round",
        "rounds",
        "hand_size",
        "dealer",
        "phase",
        "to_move",
        "trump_card",
        "trump",
        "bids",
        "has_bid",
        "declarations",
        *SEAT_VIEW_TAIL,
    )

    def view(self, seat: int | None) -> dict[str, Any]:
        n = self.players
        over = self.seat_to_move is None
        if over:
            bids: list[int | None] = [None] * n
        elif seat is None:
            bids = list(self.bids)
        else:
            bids = list(self.open_bids)  # and the seat's own bid, secret or not
            bids[seat] = self.bids[seat]
        view: dict[str, Any] = {
            "game": "alles-oder-nichts",
            "players": n,
            "seat": seat,
            "round": min(self.round + 1, len(HAND_SIZES)),
            "rounds": len(HAND_SIZES),
            "hand_size": HAND_SIZES[min(self.round, len(HAND_SIZES) - 1)],
            "dealer": self.dealer_seat % n if not over else None,
            "phase": self.decision or "over",
            "to_move": self.seat_to_move,
            "trump_card": self.trump_card,
            "trump": self.trump,
            "bids": bids,
            "has_bid": list(self.has_bid),
            "declarations": list(self.declared),
        }
        return self._view_tail(view, seat, self.totals, self.stock, self.played, self.tricks)

    def view_values(self, seat: int) -> tuple | None:
        """view(seat)'s values in VIEW_KEYS order, the state's own lists uncopied (GameState)."""
        if self.seat_to_move is None:
            return None
        n, index = self.players, self.round
        bids = self.open_bids.copy()
        bids[seat] = self.bids[seat]
        return (
            "alles-oder-nichts",
            n,
            seat,
            index + 1,
            len(HAND_SIZES),
            HAND_SIZES[index],
            (self.first_dealer + index) % n,
            self.decision or "over",
            self.seat_to_move,
            self.trump_card,
            self.trump,
            bids,
            self.has_bid,
            self.declared,
            self.trick_shown,
            self.last_trick,
            self.played,
            self.tricks,
            [*map(len, self.hands)],
            self.totals,
            self.hands[seat],
        )


def trick_winner(trick: list[tuple[int, str]], trump: str) -> int:
    """The seat that wins: highest trump, else highest card of the led colour."""
    return winning_seat(trick, trump, RANK)


SPEC = GameSpec(
    id="alles-oder-nichts",
    name="Alles oder Nichts",
    aliases=("aon", "alles", "double-or-nothing"),
    player_counts=(3, 4, 5, 6),
    default_players=4,
    options=(),
    state_class=AllesOderNichts,
    summary="7 rounds of 6-5-4-3-4-5-6 cards; bid secretly, then declare open (double or nothing) or secret.",
)
AllesOderNichts.SPEC = SPEC
