"""Vingt-down (Ralf Brostedt's "Zwanzig ab"), 4 players.

The rules as this arena plays them are SPEC.md section 9.2 (from a machine translation into
French, settled by the project's rulings). Choices, in our words:
- 32 cards, C D H S x 7 8 9 10 J Q K A (A high). Everyone starts at 20; low is good.
- The first dealer is the Rng's first draw, ``below(4)``; the deal passes clockwise (seat + 1).
  Forehand is the dealer's left; it names trump, leads the first trick and exchanges first.
- How the shuffled deck is dealt (our choice, like a dealer at a table): positions 0-7 give two
  cards each to forehand, forehand + 1, forehand + 2 and the dealer (in that order, two at a time);
  positions 8-19 then give three cards each in the same order; positions 20-31 are the stock, and
  position 20 is its top: cards are drawn from the front of what is left.
- Forehand names any of the four suits as trump having seen only its first two cards. From the
  ninth deal on hearts are trump and nobody chooses.
- The exchange: forehand first, clockwise, each player once discards 0-3 cards face down and draws
  as many from the top of the stock. The count is public; the discards (dead for the deal) and the
  drawn cards are known only to that player.
- Option ``drop_out`` (off by default; in the original game): after the exchange each player but
  forehand, from forehand's left and the dealer last, stays or drops out; a dropped player scores
  nothing for the deal and its hand takes no part. Nobody may drop out when diamonds are trump (the
  decision is skipped). If all three drop out, forehand takes all five tricks without play.
- Five tricks: follow suit if you can; if you can't, you must trump if you can; else any card. No
  duty to overtrump. The highest trump wins, else the highest card of the led suit.
- Score with t tricks: -t, a further -5 when t = 5, +5 when t = 0; all doubled with hearts trump.
- The match ends after a deal in which anyone is at 0 or below, or after option ``max_deals``
  (default 100) deals. The lowest total wins; equal totals share the placing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from .cards import IN_SUIT, PIQUET_32, parse_card_list
from .core import Deal, GameSpec, Option
from .knowledge import (
    blank_state,
    current_deal_events,
    forbidden_suits,
    replay,
    trick_plays,
    voids_in_tricks,
)
from .tricks import SEAT_VIEW_TAIL, TrickGame

PLAYERS = 4
START_SCORE = 20
FIRST_PACKET, SECOND_PACKET = 2, 3
HAND_SIZE = FIRST_PACKET + SECOND_PACKET
MAX_EXCHANGE = 3  # (_legal spells out the choices of 1, 2 and 3 cards)
HEARTS_FROM_DEAL = 9
SUITS = PIQUET_32.suits
TRUMP_CHOICES = tuple(f"trump:{suit}" for suit in SUITS)
RANK = PIQUET_32.rank
ORDER = PIQUET_32.order
# Seats in turn from each seat clockwise (the deal's order from forehand), and each seat's others
# (who see an exchange's count only): made once, not per deal or exchange.
SEATS_FROM = tuple(tuple((first + i) % PLAYERS for i in range(PLAYERS)) for first in range(PLAYERS))
OTHERS = tuple(tuple(s for s in range(PLAYERS) if s != seat) for seat in range(PLAYERS))


# Each exchange action by its cards in canonical order, ("7H", "KS") -> "discard:7H,KS", for every
# choice of 1-3 cards (5,488; made at import in ~4 ms): _legal looks its 25 choices up instead of
# joining and concatenating them (43k -> 22k instructions per exchange decision).
DISCARD_NAMES = {
    cards: "discard:" + ",".join(cards)
    for size in range(1, MAX_EXCHANGE + 1)
    for cards in combinations(PIQUET_32.cards, size)
}


class VingtDown(TrickGame):
    DECK = PIQUET_32
    HIGHER_IS_BETTER = False
    DEAL_STARTS = ("deal_start",)
    DEAL_ENDS = {"deal_end": "totals"}
    SCORING_EVENTS = ("deal_end",)

    def __init__(self, players, options, seed, dealer=None) -> None:
        super().__init__(players, options, seed, dealer)
        self._begin(self.dealer.rng.below(players), 1, [START_SCORE] * players)

    def _begin(self, first_dealer: int, deal: int, totals: list[int]) -> None:
        """The match from deal number ``deal`` (1-based) on, with these totals: deal it."""
        self.first_dealer = first_dealer
        self.max_deals: int = self.options["max_deals"]
        self.drop_out: bool = self.options["drop_out"]
        self.deal = deal - 1  # 1-based number of the current deal, once _start_deal counts it
        self.totals = totals
        self._start_deal()

    # -- deal structure ------------------------------------------------------------------------

    def _start_deal(self) -> None:
        n = self.players
        self.deal += 1
        # The deal's dealer and forehand, kept (the views show them at every decision; the rules
        # ask them at every exchange, drop and deal) rather than derived on each use.
        self.dealer_seat = (self.first_dealer + self.deal - 1) % n
        self.forehand = (self.dealer_seat + 1) % n
        self.in_play = n  # the seats that play this deal's tricks: fewer after drops
        self.stock = self.dealer.shuffled(PIQUET_32.cards)  # dealt and drawn from the front
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.discards: list[list[str]] = [[] for _ in range(n)]
        self.exchanged: list[int | None] = [None] * n
        self.drops: list[str | None] = [None] * n  # "stay" / "drop" once decided
        self.trump: str | None = None
        self.trump_chosen_by: int | None = None
        self.tricks = [0] * n
        self.played: list[str] = []  # cards of this deal's finished tricks, in play order
        self._new_tricks()
        self.emit(
            {
                "type": "deal_start",
                "deal": self.deal,
                "dealer": self.dealer_seat,
                "forehand": self.forehand,
            }
        )
        self._deal_packet(FIRST_PACKET)
        if self.deal >= HEARTS_FROM_DEAL:
            self._set_trump("H", None)
        else:
            self.decision = "trump"
            self.seat_to_move = self.forehand

    def _deal_packet(self, size: int) -> None:
        """``size`` cards to each seat from the front of the stock, forehand first, dealer last."""
        # (new lists sorted in place: sorted() would copy them again and look up their sort(); the
        # first packet is the whole hand: a copy, no second sort; each seat's deal event as its
        # packet is dealt: the same events in the same order, no dict of packets)
        stock, hands, canonical = self.stock, self.hands, ORDER.__getitem__
        for seat in SEATS_FROM[self.forehand]:
            packet = stock[:size]
            del stock[:size]
            packet.sort(key=canonical)
            hand = hands[seat] + packet
            if len(hand) > size:
                hand.sort(key=canonical)
            hands[seat] = hand
            self.emit({"type": "deal", "seat": seat, "cards": packet}, (seat,))

    def _set_trump(self, suit: str, chosen_by: int | None) -> None:
        self.trump = suit
        self.trump_chosen_by = chosen_by
        self.emit({"type": "trump", "suit": suit, "chosen_by": chosen_by})
        self._deal_packet(SECOND_PACKET)
        self.decision = "exchange"
        self.seat_to_move = self.forehand

    def _after_exchange(self) -> None:
        if self.drop_out and self.trump != "D":
            self.decision = "drop"
            self.seat_to_move = (self.forehand + 1) % self.players
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.decision = "play"
        self.seat_to_move = self.forehand

    def _end_deal(self) -> None:
        factor = 2 if self.trump == "H" else 1
        points = []
        for seat, taken in enumerate(self.tricks):
            if self.drops[seat] == "drop":
                points.append(0)
            else:
                bonus = -5 if taken == HAND_SIZE else 5 if taken == 0 else 0
                points.append(factor * (bonus - taken))
        self.totals = [t + p for t, p in zip(self.totals, points)]
        self.emit(
            {
                "type": "deal_end",
                "deal": self.deal,
                "trump": self.trump,
                "dropped": [d == "drop" for d in self.drops],
                "tricks": list(self.tricks),
                "points": points,
                "totals": list(self.totals),
            }
        )
        if min(self.totals) <= 0 or self.deal >= self.max_deals:
            self._end_match()
        else:
            self._start_deal()

    # -- the rules -----------------------------------------------------------------------------

    def _legal(self) -> list[str]:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        decision = self.decision
        if decision == "play":
            # Follow the led suit if you can; else trump if you can; else any card (canonical
            # order). (Here, not in a function of its own: a call fewer on every decision.)
            hand, trick = self.hands[seat], self.trick
            if not trick:
                return list(hand)
            follow = [*filter(IN_SUIT[trick[0][1][-1]], hand)]
            if follow:
                return follow
            trump = self.trump
            trumps = [] if trump is None else [*filter(IN_SUIT[trump], hand)]
            return trumps or list(hand)
        if decision == "exchange":
            # Every choice of 1 to MAX_EXCHANGE (3) cards in combinations() order, looked up by
            # map() (no Python step per choice).
            hand, name = self.hands[seat], DISCARD_NAMES.__getitem__
            return [
                "discard:none",
                *map(name, combinations(hand, 1)),
                *map(name, combinations(hand, 2)),
                *map(name, combinations(hand, 3)),
            ]
        if decision == "drop":
            return ["stay", "drop"]
        return [*TRUMP_CHOICES]

    def _explain(self, action: str) -> str:
        seat = self.mover
        decision = self.decision
        if decision == "play":
            if action not in ORDER:
                return f"the play phase wants a card from your hand, not {action!r}"
            if action not in self.hands[seat]:
                return f"you do not hold {action}"
            led = self.trick[0][1][-1]
            if any(c[-1] == led for c in self.hands[seat]):
                return f"you must follow the led suit {led}"
            return f"you cannot follow {led}, so you must trump ({self.trump})"
        if decision == "exchange":
            return self._explain_discard(seat, action)
        if decision == "drop":
            return "decide whether to play this deal: stay or drop"
        return "name trump as trump:C, trump:D, trump:H or trump:S"

    def _explain_discard(self, seat: int, action: str) -> str:
        usage = (
            "discard 0-3 of your cards: discard:none, or discard:CARD,CARD in canonical order "
            "(e.g. discard:7H,KS)"
        )
        if not action.startswith("discard:") or action == "discard:":
            return usage
        cards = parse_card_list(action[len("discard:") :])
        for card in cards:
            if card not in ORDER:
                return f"{card!r} is not a card; {usage}"
            if card not in self.hands[seat]:
                return f"you do not hold {card}"
        if len(cards) > MAX_EXCHANGE:
            return f"at most {MAX_EXCHANGE} cards may be exchanged, not {len(cards)}"
        return f"list each card once, in canonical order; {usage}"

    def _apply(self, action: str) -> None:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        decision = self.decision
        if decision == "play":
            # (the play's first step here, not in a method: a call fewer on most cards)
            in_play = self.in_play
            if self._play_card(seat, action) < in_play:
                nxt = (seat + 1) % PLAYERS
                if in_play < PLAYERS:  # the next seat clockwise that has not dropped out
                    drops = self.drops
                    while drops[nxt] == "drop":
                        nxt = (nxt + 1) % PLAYERS
                self.seat_to_move = nxt
            else:
                self._end_trick()
        elif decision == "exchange":
            self._exchange(seat, action)
        elif decision == "drop":
            self.drops[seat] = action
            if action == "drop":
                self.in_play -= 1
            self.emit({"type": "drop", "seat": seat, "choice": action})
            nxt = (seat + 1) % self.players
            if nxt != self.forehand:
                self.seat_to_move = nxt
            elif self.in_play == 1:
                self._uncontested()
            else:
                self._start_play()
        else:
            self._set_trump(action[len("trump:") :], seat)

    def _exchange(self, seat: int, action: str) -> None:
        argument = action[len("discard:") :]
        # (a legal action: its cards split() without parse_card_list's check for empty parts)
        discarded = [] if argument == "none" else argument.split(",")
        count = len(discarded)
        stock = self.stock
        drawn = stock[:count]
        del stock[:count]
        # A new hand sorted in place (sorted() would copy it again; filterfalse() with the list's
        # __contains__ costs more than remove(): 9.8k -> 5.5k instructions per exchange).
        hand = self.hands[seat] + drawn
        for card in discarded:
            hand.remove(card)
        hand.sort(key=ORDER.__getitem__)
        self.hands[seat] = hand
        drawn.sort(key=ORDER.__getitem__)
        self.discards[seat] = discarded
        self.exchanged[seat] = count
        self.emit(
            {
                "type": "exchange",
                "seat": seat,
                "count": count,
                "discarded": list(discarded),
                "drawn": drawn,
            },
            (seat,),
        )
        self.emit({"type": "exchange", "seat": seat, "count": count}, OTHERS[seat])
        nxt = (seat + 1) % PLAYERS
        if nxt == self.forehand:
            self._after_exchange()
        else:
            self.seat_to_move = nxt

    def _uncontested(self) -> None:
        """Everyone else dropped out: forehand takes all five tricks without play."""
        self.tricks[self.forehand] = HAND_SIZE
        self.emit({"type": "uncontested", "seat": self.forehand, "tricks": HAND_SIZE})
        self._end_deal()

    def _end_trick(self) -> None:
        """The trick is complete: its winner takes it and leads, or the deal ends."""
        self.last_trick = taken = self._take_trick(self.trump)
        winner = taken["winner"]
        self.tricks[winner] += 1
        self.played.extend(taken["cards"])
        self.emit({"type": "trick", **taken})
        if self.hands[winner]:
            self.seat_to_move = winner
        else:
            self._end_deal()

    def _scores(self) -> list[int]:
        return list(self.totals)

    # -- where the cards are, and who may know them ---------------------------------------------

    def card_locations(self) -> dict[str, list[str]]:
        locations = self._card_locations({"played": list(self.played), "stock": list(self.stock)})
        for seat, cards in enumerate(self.discards):
            locations[f"discards {seat}"] = list(cards)
        return locations

    def hidden_from(self, seat: int) -> set[str]:
        """The stock, the other hands, and the other seats' discards (a seat knows its own)."""
        hidden = set(self.stock)
        for other in range(self.players):
            if other != seat:
                hidden.update(self.hands[other])
                hidden.update(self.discards[other])
        return hidden

    @classmethod
    def resample(
        cls,
        view: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        deal: Deal,
        rng: random.Random,
    ) -> VingtDown:
        """The deal as the seat knows it (GameState.resample): the other hands, their discards
        and the stock dealt under the voids shown (not trumping shows no trump); which of its
        cards another seat drew, and how its packets came, drawn uniformly."""
        n, me = view["players"], view["seat"]
        forehand, trump = view["forehand"], view["trump"]
        deal_events = current_deal_events(events, cls.DEAL_STARTS)
        packets = [
            e["cards"] for e in deal_events if e.get("type") == "deal" and e.get("seat") == me
        ]
        counts: dict[int, int] = {}  # exchange counts, for every seat that has exchanged
        own_discards: list[str] = []
        own_drawn: list[str] = []
        for event in deal_events:
            if event.get("type") == "exchange":
                counts[event["seat"]] = event["count"]
                if event["seat"] == me:
                    own_discards, own_drawn = event["discarded"], event["drawn"]
        plays = trick_plays(deal_events)
        played = {card for _, card, _ in plays}
        known = {c for packet in packets for c in packet} | set(own_drawn) | played
        pool = [c for c in PIQUET_32.cards if c not in known]
        hand_counts = view["hand_counts"]
        others = [s for s in range(n) if s != me]
        sizes = {f"hand {s}": hand_counts[s] for s in others}
        for s in others:
            if s in counts:
                sizes[f"discards {s}"] = counts[s]
        sizes["stock"] = len(pool) - sum(sizes.values())
        voids = voids_in_tricks(plays, me, trump, _vingt_rule)
        hidden = deal(pool, sizes, forbidden_suits(voids, pool))
        played_by: dict[int, list[str]] = {s: [] for s in range(n)}
        for seat, card, _ in plays:
            played_by[seat].append(card)
        # Each seat's packets and draws, then the deck in dealing order (SPEC 9.2).
        first: dict[int, list[str]] = {}
        second: dict[int, list[str]] = {}
        drawn: dict[int, list[str]] = {}
        discards: dict[int, list[str]] = {}
        second_dealt = len(packets) >= 2
        for s in range(n):
            if s == me:
                first[s] = list(packets[0])
                second[s] = list(packets[1]) if second_dealt else []
                drawn[s], discards[s] = list(own_drawn), list(own_discards)
                continue
            after = list(hidden[f"hand {s}"]) + played_by[s]  # what it held after its exchange
            discards[s] = list(hidden.get(f"discards {s}", []))
            if s in counts:
                rng.shuffle(after)
                drawn[s] = after[: counts[s]]
                dealt = after[counts[s] :] + discards[s]
            else:
                drawn[s], dealt = [], after
            rng.shuffle(dealt)
            first[s], second[s] = dealt[:2], dealt[2:]
        order = [(forehand + i) % n for i in range(n)]
        stock = list(hidden["stock"])
        rng.shuffle(stock)
        deck = [c for s in order for c in first[s]]
        if second_dealt:  # else the second packets are still in the stock (its first 12 cards)
            deck += [c for s in order for c in second[s]]
        deck += [c for s in order if s in counts for c in drawn[s]] + stock
        shown = {"max_deals": view["max_deals"], "drop_out": view["drop_out"]}  # (in the view)
        state = blank_state(cls, n, {**options, **shown}, deck, rng.getrandbits(63))
        state._begin((view["dealer"] - (view["deal"] - 1)) % n, view["deal"], list(view["scores"]))
        actions: list[tuple[int, str]] = []
        for event in deal_events:
            kind = event.get("type")
            if kind == "trump" and event.get("chosen_by") is not None:
                actions.append((event["chosen_by"], "trump:" + event["suit"]))
            elif kind == "exchange":
                seat = event["seat"]
                cards = PIQUET_32.sorted(discards[seat])
                actions.append((seat, "discard:" + (",".join(cards) if cards else "none")))
            elif kind == "drop":
                actions.append((event["seat"], event["choice"]))
            elif kind == "play":
                actions.append((event["seat"], event["card"]))
        replay(state, actions)
        return state

    VIEW_KEYS = (
        "game",
        "players",
        "seat",
        "phase",
        "to_move",
        "deal",
        "max_deals",
        "dealer",
        "forehand",
        "trump",
        "trump_chosen_by",
        "drop_out",
        "exchanged",
        "stock_count",
        "drops",
        *SEAT_VIEW_TAIL,
        "discarded",
    )

    def view(self, seat: int | None) -> dict[str, Any]:
        view: dict[str, Any] = {
            "game": "vingt-down",
            "players": self.players,
            "seat": seat,
            "phase": self.decision or "over",
            "to_move": self.seat_to_move,
            "deal": self.deal,
            "max_deals": self.max_deals,
            "dealer": self.dealer_seat,
            "forehand": self.forehand,
            "trump": self.trump,
            "trump_chosen_by": self.trump_chosen_by,
            "drop_out": self.drop_out,
            "exchanged": list(self.exchanged),
            "stock_count": len(self.stock),
            "drops": list(self.drops),
        }
        self._view_tail(view, seat, self.totals, self.stock, self.played, self.tricks)
        if seat is None:
            view["discards"] = [list(d) for d in self.discards]
        else:
            view["discarded"] = list(self.discards[seat])
        return view

    def view_values(self, seat: int) -> tuple | None:
        """view(seat)'s values in VIEW_KEYS order, the state's own lists uncopied (GameState)."""
        first, second, third, fourth = self.hands  # (four players: no map() per view)
        return (
            "vingt-down",
            PLAYERS,
            seat,
            self.decision or "over",
            self.seat_to_move,
            self.deal,
            self.max_deals,
            self.dealer_seat,
            self.forehand,
            self.trump,
            self.trump_chosen_by,
            self.drop_out,
            self.exchanged,
            len(self.stock),
            self.drops,
            self.trick_shown,
            self.last_trick,
            self.played,
            self.tricks,
            [len(first), len(second), len(third), len(fourth)],
            self.totals,
            self.hands[seat],
            self.discards[seat],
        )


def _vingt_rule(seat, card, led, trick, trump) -> set[str]:
    """Follow suit; else trump if you can: not following shows a void, not trumping too."""
    if card[-1] == led:
        return set()
    return {led} if card[-1] == trump or trump is None else {led, trump}


SPEC = GameSpec(
    id="vingt-down",
    name="Vingt-down",
    aliases=("zwanzig-ab", "vingt", "zwanzig"),
    player_counts=(PLAYERS,),
    default_players=PLAYERS,
    options=(
        Option("max_deals", 100, "the match ends after this many deals at the latest", minimum=1),
        Option(
            "drop_out",
            False,
            "after the exchange, players but forehand may drop out of a deal "
            "(not with diamonds trump)",
        ),
    ),
    state_class=VingtDown,
    summary="Start at 20, each trick taken counts -1; a deal leaving anyone at 0 or below ends "
    "the match, lowest wins. Forehand names trump from 2 cards; exchange up to 3.",
)
VingtDown.SPEC = SPEC
