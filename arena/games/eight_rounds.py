"""Eight Rounds (a compendium of the Barbu/Kings family), 3-8 players.

The rules as this arena plays them are SPEC.md section 9.3 (from a short, partly
machine-translated description, settled by the project's rulings). Choices, in our words:
- A standard 52-card pack. With n players, 52 mod n cards are removed in the order 2D, 2H, 2S, 2C
  (3: 2D; 4: none; 5: 2D 2H; 6 and 8: all four 2s; 7: 2D 2H 2S); all the rest is dealt out.
- The first dealer is drawn from the seed (the Rng's first draw, ``below(n)``). Eight deals, one per
  round, each from a fresh shuffle of the remaining cards; the deal passes clockwise (seat + 1).
  Seat 0 gets the first hand-size cards of the shuffled list, seat 1 the next, and so on.
- Round k plays contract k. Rounds 1-7: the dealer's left leads, no trump, follow suit if you can,
  otherwise any card; the highest card of the led suit wins (Ace high) and leads next; every trick
  is played out. Points: 1 -10 per trick; 2 -50 for the king of diamonds; 3 -25 per queen; 4 -10 per
  heart; 5 -25 per jack; 6 -25 each for the 1st, 5th and last trick (every player count has at least
  6 tricks, so these are three different tricks); 7 +10 per trick.
- Round 8, competitive patience, Ace low: each suit's row starts with its 7 and is built up to K and
  down to A; where the 2 was removed the A goes straight onto the 3. The dealer's left starts; turns
  go clockwise, one card or one pass each.
  - Until a 7 is on the table: play a 7 if you hold one (any of them), else pass.
  - Then a card fits if it is a 7 or the next card up or down of an open row. Holding a fitting card
    other than a 7 you must play (a 7 is allowed too); holding only fitting 7s you may pass; holding
    none you pass. Every pass, forced or chosen, scores -10.
  - No voluntary pass when the previous n-1 turns were all passes (the whole table passed).
  - The round ends the moment a player plays their last card: every other player scores -5 per card
    still in hand. The cards left in hands are never revealed (only the counts), and a pass event
    does not say whether the pass was forced (that would tell the table about the hand).
- No deadlock is possible (so no guard beyond the rules is needed): every card not on the table is in
  a hand. Before the first 7 someone holds a 7 and must play it within n turns. Afterwards, while
  nobody has emptied their hand, some row is unfinished or some suit unopened, so some hand holds a
  fitting card (the unopened suit's 7, or the next card of an unfinished row). The table does not
  change while players pass, so after n-1 passes in a row nobody may pass by choice and the holder of
  that card plays within the next n turns. Each play empties hands by one card, so the round ends.
- Highest total after round 8 wins; equal totals share the placing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from .cards import STANDARD_52
from .core import Deal, GameSpec
from .knowledge import (
    Events,
    Plays,
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

CONTRACTS = (
    "tricks",
    "king-of-diamonds",
    "queens",
    "hearts",
    "jacks",
    "first-fifth-last",
    "most-tricks",
    "patience",
)
PATIENCE_ROUND = len(CONTRACTS) - 1  # 0-based index of round 8
REMOVAL_ORDER = ("2D", "2H", "2S", "2C")
SUITS = STANDARD_52.suits
RANK = STANDARD_52.rank
ORDER = STANDARD_52.order
PATIENCE_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")  # Ace low
SEVENS = frozenset("7" + suit for suit in SUITS)  # a 7 always fits (none is ever removed)
PASS = "pass"


def removed_cards(players: int) -> list[str]:
    """The cards taken out so that the pack deals out evenly: 52 mod n of them, 2D first."""
    return list(REMOVAL_ORDER[: 52 % players])


# Each suit's patience row per player count, Ace low, without a removed 2 (so A sits next to 3).
# Module data rather than the state's (the engines never change it): Eight Rounds' state keeps
# at most 29 attributes, so its instances share their attribute keys (CPython 3.11), which makes
# each self.x cheaper.
SEQUENCES = {
    players: {
        s: [r + s for r in PATIENCE_RANKS if r + s not in removed_cards(players)] for s in SUITS
    }
    for players in range(3, 9)
}


def penalty_cards(contract: int, cards: list[str]) -> list[str]:
    """The cards among ``cards`` that score in ``contract`` (0-based; only contracts 2-5 have any)."""
    if contract == 1:
        return [c for c in cards if c == "KD"]
    if contract == 2:
        return [c for c in cards if c[0] == "Q"]
    if contract == 3:
        return [c for c in cards if c[-1] == "H"]
    if contract == 4:
        return [c for c in cards if c[0] == "J"]
    return []


def trick_points(contract: int, cards: list[str], number: int, total: int) -> int:
    """What taking this trick (the ``number``-th of ``total``, from 1) scores in ``contract`` (0-based)."""
    if contract == 0:
        return -10
    if contract == 1:
        return -50 * len(penalty_cards(1, cards))
    if contract in (2, 4):
        return -25 * len(penalty_cards(contract, cards))
    if contract == 3:
        return -10 * len(penalty_cards(3, cards))
    if contract == 5:
        return -25 if number in (1, 5, total) else 0
    return 10


def trick_winner(trick: list[tuple[int, str]]) -> int:
    """No trump: the highest card of the led suit wins (Ace high)."""
    return winning_seat(trick, None, RANK)


class EightRounds(TrickGame):
    DECK = STANDARD_52

    DEAL_STARTS = ("round_start",)
    DEAL_ENDS = {"round_end": "totals"}
    SCORING_EVENTS = ("round_end",)

    def __init__(self, players, options, seed, dealer=None) -> None:
        super().__init__(players, options, seed, dealer)
        self._begin(0, self.dealer.rng.below(players), [0] * players)

    def _begin(self, round_index: int, first_dealer: int, totals: list[int]) -> None:
        """The match from round ``round_index`` (0-based) on, with these totals: deal it."""
        self.first_dealer = first_dealer
        self.removed = removed_cards(self.players)
        self.hand_size = (52 - len(self.removed)) // self.players
        self.totals = totals
        self.round = round_index  # 0-based: round k + 1 plays CONTRACTS[k]
        self._start_round()

    # -- round structure ---------------------------------------------------------------------

    @property
    def sequences(self) -> dict[str, list[str]]:
        """Each suit's patience row, Ace low, without a removed 2 (SEQUENCES)."""
        return SEQUENCES[self.players]

    @property
    def dealer_seat(self) -> int:
        return (self.first_dealer + self.round) % self.players

    def _start_round(self) -> None:
        n, size = self.players, self.hand_size
        deck = self.dealer.shuffled(STANDARD_52.without(self.removed))
        self.hands = [
            sorted(deck[i * size : (i + 1) * size], key=ORDER.__getitem__) for i in range(n)
        ]
        self.round_points = [0] * n
        # Rounds 1-7.
        self.tricks = [0] * n
        self.taken: list[list[str]] = [[] for _ in range(n)]  # the contract's penalty cards won
        self.trick_winners: list[int] = []
        self.played: list[str] = []  # cards of this round's finished tricks, in play order
        self._new_tricks()
        # Round 8.
        self.rows: dict[str, tuple[int, int] | None] = {
            s: None for s in SUITS
        }  # (low, high) indices
        self._layout: dict[str, dict[str, str] | None] = {s: None for s in SUITS}  # for views
        self.fits: set[str] = set()  # the next card up or down of every open row
        self.table: list[str] = []  # patience cards in the order they were played
        self.passes = [0] * n
        self.consecutive_passes = 0
        leader = (self.dealer_seat + 1) % n
        self.emit(
            {
                "type": "round_start",
                "round": self.round + 1,
                "contract": CONTRACTS[self.round],
                "dealer": self.dealer_seat,
                "leader": leader,
                "hand_size": size,
                "removed": list(self.removed),
            }
        )
        for seat in range(n):
            self.emit({"type": "deal", "seat": seat, "cards": list(self.hands[seat])}, (seat,))
        self.decision = "patience" if self.round == PATIENCE_ROUND else "play"
        self.seat_to_move = leader

    def _end_round(self, out: int | None = None) -> None:
        summary: dict[str, Any] = {"round": self.round + 1, "contract": CONTRACTS[self.round]}
        if out is None:
            summary["tricks"] = list(self.tricks)
            summary["taken"] = [list(cards) for cards in self.taken]
        else:
            cards_left = [len(hand) for hand in self.hands]
            for seat, left in enumerate(cards_left):
                self.round_points[seat] -= 5 * left
            summary.update(out=out, passes=list(self.passes), cards_left=cards_left)
        self.totals = [t + p for t, p in zip(self.totals, self.round_points)]
        self.emit(
            {
                "type": "round_end",
                **summary,
                "points": list(self.round_points),
                "totals": list(self.totals),
            }
        )
        self.round += 1
        if self.round == len(CONTRACTS):
            self._end_match()
        else:
            self._start_round()

    # -- the rules -----------------------------------------------------------------------------

    def _fitting(self, hand: list[str]) -> list[str]:
        """Cards of ``hand`` that may go on the patience table now (7s only until one is down)."""
        # (filter(): no Python step per card)
        return [*filter((self.fits | SEVENS).__contains__, hand)]

    def _may_pass_by_choice(self, fitting: list[str]) -> bool:
        return (
            bool(self.table)
            and self.consecutive_passes < self.players - 1
            and all(c[:-1] == "7" for c in fitting)
        )

    def _legal(self) -> list[str]:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        hand = self.hands[seat]
        if self.decision == "play":
            return follow_suit(hand, self.trick)  # the led suit if you can, else any card
        fitting = self._fitting(hand)
        if not fitting:
            return [PASS]
        return fitting + [PASS] if self._may_pass_by_choice(fitting) else fitting

    def _explain(self, action: str) -> str:
        seat = self.mover
        hand = self.hands[seat]
        if action == PASS:
            if self.decision == "play":
                return "passing is only allowed in the patience round (round 8)"
            if not self.table:
                return "you hold a 7 and must play one: no 7 is on the table yet"
            if self.consecutive_passes >= self.players - 1:
                return (
                    f"the previous {self.players - 1} turns were all passes, so you must play; "
                    "no voluntary pass"
                )
            return "you hold a card other than a 7 that fits, so you must play"
        if action not in ORDER:
            wanted = "a card from your hand" + (" or pass" if self.decision == "patience" else "")
            return f"the {self.decision} decision wants {wanted}, not {action!r}"
        if action not in hand:
            return f"you do not hold {action}"
        if self.decision == "play":
            return f"you must follow the led suit {self.trick[0][1][-1]}"
        if not self.table:
            return f"{action} does not fit: the first card on the table must be a 7"
        return f"{action} does not fit: it is not a 7 nor next to an end of an open row"

    def _apply(self, action: str) -> None:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        if self.decision == "play":
            # (the play's first step here, not in a method: a call fewer on most cards)
            if self._play_card(seat, action) < self.players:
                self.seat_to_move = (seat + 1) % self.players
            else:
                self._end_trick()
        elif action == PASS:
            self.passes[seat] += 1
            self.round_points[seat] -= 10
            self.consecutive_passes += 1
            self.emit({"type": "pass", "seat": seat})
            self.seat_to_move = (seat + 1) % self.players
        else:
            self._lay_down(seat, action)

    def _end_trick(self) -> None:
        """The trick is complete: its winner takes it (and its points) and leads, or the round ends."""
        record = self._take_trick(None)  # (no trump)
        winner, cards = record["winner"], record["cards"]
        number = len(self.trick_winners) + 1
        points = trick_points(self.round, cards, number, self.hand_size)
        self.tricks[winner] += 1
        self.taken[winner].extend(penalty_cards(self.round, cards))
        self.trick_winners.append(winner)
        self.round_points[winner] += points
        self.played.extend(cards)
        self.last_trick = {"number": number, **record, "points": points}
        self.emit({"type": "trick", **self.last_trick})
        if self.hands[winner]:
            self.seat_to_move = winner
        else:
            self._end_round()

    def _lay_down(self, seat: int, card: str) -> None:
        self.hands[seat].remove(card)
        suit = card[-1]
        sequence = SEQUENCES[self.players][suit]
        index = sequence.index(card)
        row = self.rows[suit]
        if row is None:
            low = high = index
        else:
            low, high = min(row[0], index), max(row[1], index)
        self.rows[suit] = (low, high)
        self.fits = self._row_ends()
        # A new dict, not an update of the old one: views made earlier share that one.
        self._layout[suit] = {"low": sequence[low], "high": sequence[high]}
        self.table.append(card)
        self.consecutive_passes = 0
        self.emit({"type": "play", "seat": seat, "card": card})
        if self.hands[seat]:
            self.seat_to_move = (seat + 1) % self.players
        else:
            self._end_round(out=seat)

    def _row_ends(self) -> set[str]:
        """The next card down and up of every open row (a finished end adds nothing)."""
        ends = set()
        for suit, row in self.rows.items():
            if row is not None:
                sequence = SEQUENCES[self.players][suit]
                if row[0] > 0:
                    ends.add(sequence[row[0] - 1])
                if row[1] < len(sequence) - 1:
                    ends.add(sequence[row[1] + 1])
        return ends

    def _scores(self) -> list[int]:
        return list(self.totals)

    def card_locations(self) -> dict[str, list[str]]:
        return self._card_locations(
            {
                "played": list(self.played),
                "table": list(self.table),
                "removed": list(self.removed),
                "stock": [],
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
    ) -> EightRounds:
        """The round as the seat knows it (GameState.resample): the other hands dealt under the
        voids shown, or in the patience round under what each pass ruled out."""
        n, me = view["players"], view["seat"]
        round_index = view["round"] - 1
        round_events = current_deal_events(events, cls.DEAL_STARTS)
        own = dealt_to(round_events, me)
        removed = list(view["removed"])
        counts = view["hand_counts"]
        if round_index == PATIENCE_ROUND:
            plays, forbidden = _patience_knowledge(round_events, n, removed)
        else:
            plays = trick_plays(round_events)
            forbidden = {}
        played = {card for _, card, _ in plays}
        pool = [c for c in STANDARD_52.without(removed) if c not in played and c not in own]
        if round_index != PATIENCE_ROUND:
            voids = voids_in_tricks(plays, me, None, follow_rule)
            forbidden = forbidden_suits(voids, pool)
        forbidden.pop(f"hand {me}", None)
        sizes = {f"hand {s}": counts[s] for s in range(n) if s != me}
        hidden = deal(pool, sizes, forbidden)
        hands = original_hands(n, me, own, hidden, plays)
        deck = [c for s in range(n) for c in hands[s]]
        state = blank_state(cls, n, {}, deck, rng.getrandbits(63))
        state._begin(round_index, (view["dealer"] - round_index) % n, list(view["scores"]))
        actions = [
            (event["seat"], event["card"] if event["type"] == "play" else PASS)
            for event in round_events
            if event.get("type") in ("play", PASS)
        ]
        replay(state, actions)
        return state

    # -- what a seat may know -------------------------------------------------------------------

    def patience_layout(self) -> dict[str, dict[str, str] | None]:
        """Per suit: the low and high end card of its row, or None while its 7 is not down."""
        return dict(self._layout)

    VIEW_KEYS = (
        "game",
        "players",
        "seat",
        "round",
        "rounds",
        "contract",
        "hand_size",
        "removed",
        "dealer",
        "phase",
        "to_move",
        "trick_winners",
        "taken",
        "patience",
        "passes",
        "consecutive_passes",
        "round_points",
        *SEAT_VIEW_TAIL,
    )

    def view(self, seat: int | None) -> dict[str, Any]:
        over = self.seat_to_move is None
        index = min(self.round, PATIENCE_ROUND)
        view: dict[str, Any] = {
            "game": "eight-rounds",
            "players": self.players,
            "seat": seat,
            "round": index + 1,
            "rounds": len(CONTRACTS),
            "contract": CONTRACTS[index],
            "hand_size": self.hand_size,
            "removed": list(self.removed),
            "dealer": None if over else self.dealer_seat,
            "phase": self.decision or "over",
            "to_move": self.seat_to_move,
            "trick_winners": list(self.trick_winners),
            "taken": [list(cards) for cards in self.taken],
            "patience": self.patience_layout(),
            "passes": list(self.passes),
            "consecutive_passes": self.consecutive_passes,
            "round_points": list(self.round_points),
        }
        return self._view_tail(view, seat, self.totals, [], self.played, self.tricks)

    def view_values(self, seat: int) -> tuple | None:
        """view(seat)'s values in VIEW_KEYS order, the state's own lists uncopied (GameState)."""
        if self.seat_to_move is None:
            return None
        index = self.round
        return (
            "eight-rounds",
            self.players,
            seat,
            index + 1,
            len(CONTRACTS),
            CONTRACTS[index],
            self.hand_size,
            self.removed,
            (self.first_dealer + index) % self.players,
            self.decision or "over",
            self.seat_to_move,
            self.trick_winners,
            self.taken,
            self._layout,
            self.passes,
            self.consecutive_passes,
            self.round_points,
            self.trick_shown,
            self.last_trick,
            self.played,
            self.tricks,
            [*map(len, self.hands)],
            self.totals,
            self.hands[seat],
        )


def _patience_knowledge(
    round_events: Events, players: int, removed: list[str]
) -> tuple[Plays, dict[str, set[str]]]:
    """The patience plays as (seat, card, None) and, per hand ("hand N"), the cards its passes
    rule out: a pass shows no fitting card but a 7, and no 7 before the first 7 is down or when
    the pass was forced."""
    sequences = {s: [c for c in (r + s for r in PATIENCE_RANKS) if c not in removed] for s in SUITS}
    rows: dict[str, tuple[int, int]] = {}
    plays: Plays = []
    forbidden: dict[str, set[str]] = {}
    consecutive = 0
    for event in round_events:
        kind = event.get("type")
        if kind == "play":
            card = event["card"]
            plays.append((event["seat"], card, None))
            seq = sequences[card[-1]]
            index = seq.index(card)
            low, high = rows.get(card[-1], (index, index))
            rows[card[-1]] = (min(low, index), max(high, index))
            consecutive = 0
        elif kind == PASS:
            ruled_out = forbidden.setdefault(f"hand {event['seat']}", set())
            if not rows or consecutive >= players - 1:  # no 7 down yet, or a forced pass
                ruled_out |= SEVENS
            for suit, (low, high) in rows.items():
                seq = sequences[suit]
                if low > 0:
                    ruled_out.add(seq[low - 1])
                if high < len(seq) - 1:
                    ruled_out.add(seq[high + 1])
            consecutive += 1
    return plays, forbidden


SPEC = GameSpec(
    id="eight-rounds",
    name="Eight Rounds",
    aliases=("eight", "barbu", "kings"),
    player_counts=(3, 4, 5, 6, 7, 8),
    default_players=4,
    options=(),
    state_class=EightRounds,
    summary="7 no-trump contracts (avoid tricks, KD, queens, hearts, jacks, 1st/5th/last; "
    "win tricks), then a competitive patience round.",
)
EightRounds.SPEC = SPEC
