"""All Fours (Trinidad), 4 players in two teams.

The rules as this arena plays them are SPEC.md section 9.4 (from a German description, cut off
mid-sentence, completed and settled by the project's rulings). Choices, in our words:
- Seats 0 and 2 are team 0, seats 1 and 3 team 1. One standard 52-card pack, A high. The deal and
  play go anticlockwise: the next seat is seat - 1 (mod 4). The first dealer is the Rng's first
  draw, ``below(4)``; the deal passes to the right (dealer - 1) after each hand.
- Deal positions: each deal shuffles the full pack; the first 6 cards go to the dealer's right (the
  beggar), the next 6 to the seat right of that, and so on round to the dealer; the next card is
  the kick. A run deals the next 3 cards each in the same seat order, then the next card is the
  new kick. What is left is the stock (never shown).
- Every kick scores for the dealer's team at once: A 1, 6 2, J 3.
- The beggar stands (the kick's suit is trump) or begs. After a beg the dealer gives one (the
  beggar's team scores 1, the kick's suit is trump) or runs the pack. A run kick of a different suit
  than the first kick of the deal makes that suit trump; the same suit is set aside and the pack is
  run again. A run needs 13 cards (12 + a kick); with fewer left (after two runs: 52 - 24 - 1 - 26
  = 1 card) the same dealer collects every card, reshuffles and deals afresh. Kick points stand.
- Our choices where the rules are silent: a redeal starts the deal over, so the beggar may again
  stand or beg (one beg per deal). With no trump dealt into any hand, High and Low are not
  scored; Jack only if the trump jack was dealt (a kicked jack is never in play).
- The match is to 14: every award (kick, give, High, Low, Jack, Game) is added on its own, and the
  moment a team reaches 14 the match ends, even mid-deal (a kick) or mid-scoring.
- Play: the beggar leads; trump led -> play trump if able; another suit led and held -> that suit or
  a trump; void -> anything. Option ``no_undertrump``: once a trump was played to a trick led in
  another suit, a lower trump may not be played unless the hand holds only trumps.
- Game (option ``game_points``, at least 1): the team with more card points in its tricks (A 4,
  K 3, Q 2, J 1, 10 10); equal totals score nothing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from .cards import IN_SUIT, STANDARD_52, SUIT_CARDS
from .core import Deal, GameError, GameSpec, Option
from .knowledge import (
    VoidRule,
    blank_state,
    current_deal_events,
    dealt_to,
    forbidden_suits,
    original_hands,
    replay,
    trick_plays,
    voids_in_tricks,
)
from .tricks import SEAT_VIEW_TAIL_UNCOUNTED, TrickGame

TARGET = 14
PLAYERS = 4
FIRST_DEAL = 6
RUN_DEAL = 3
RUN_NEEDS = PLAYERS * RUN_DEAL + 1  # 12 cards for the hands and one new kick
KICK_POINTS = {"A": 1, "6": 2, "J": 3}
CARD_POINTS = {"A": 4, "K": 3, "Q": 2, "J": 1, "10": 10}
POINTS_OF = {card: CARD_POINTS.get(card[:-1], 0) for card in STANDARD_52.cards}  # per card
RANK = STANDARD_52.rank
# Whether a card is of the led suit or trump, by trump (None: none yet) and led suit, for
# _legal's filter: each set's bound __contains__, made once (no tuple key, no binding per play).
IS_LED_OR_TRUMP = {
    trump: {
        led: (
            SUIT_CARDS[led] | (SUIT_CARDS[trump] if trump is not None else frozenset())
        ).__contains__
        for led in STANDARD_52.suits
    }
    for trump in (*STANDARD_52.suits, None)
}
ORDER = STANDARD_52.order
TEAMS = (0, 1, 0, 1)  # each seat's team: seat % 2
# Each dealer's seats in dealing order, the beggar (its right) first and the dealer last: made
# once, not per packet.
DEAL_ORDER = tuple(
    tuple((dealer - 1 - i) % PLAYERS for i in range(PLAYERS)) for dealer in range(PLAYERS)
)
# The trump jack of each suit, which _end_trick looks for in every trick (None: no trump yet, which
# play never sees: a KeyError, as _trump_suit's GameError without its call per trick).
JACK_OF: dict[str | None, str] = {suit: "J" + suit for suit in STANDARD_52.suits}


def team_of(seat: int) -> int:
    return seat % 2


def right_of(seat: int) -> int:
    """The next seat anticlockwise: play and the deal go to the right."""
    return (seat - 1) % PLAYERS


class AllFours(TrickGame):
    DECK = STANDARD_52

    DEAL_STARTS = ("hand_start", "redeal")
    DEAL_ENDS = {"hand_end": "scores", "match_won": "scores"}  # (a match may end mid-hand)
    SCORING_EVENTS = ("award", "hand_end", "match_won")

    def __init__(self, players, options, seed, dealer=None) -> None:
        super().__init__(players, options, seed, dealer)
        self._begin(self.dealer.rng.below(PLAYERS), 1)

    def _begin(self, dealer_seat: int, hand_number: int) -> None:
        """The match from hand ``hand_number`` on, dealt by ``dealer_seat``, the score 0-0."""
        self.no_undertrump: bool = self.options["no_undertrump"]
        self.game_points: int = self.options["game_points"]
        self.dealer_seat = dealer_seat
        self.team_scores = [0, 0]
        self.hand_number = hand_number
        self._start_hand()

    # -- the deal ------------------------------------------------------------------------------

    @property
    def beggar(self) -> int:
        return right_of(self.dealer_seat)

    def _start_hand(self) -> None:
        self.emit(
            {
                "type": "hand_start",
                "hand": self.hand_number,
                "dealer": self.dealer_seat,
                "beggar": self.beggar,
            }
        )
        self._deal_afresh()

    def _deal_afresh(self) -> None:
        """Shuffle the whole pack, deal 6 each, kick. Also used by the redeal."""
        self.stock = self.dealer.shuffled(STANDARD_52.cards)
        self.hands: list[list[str]] = [[] for _ in range(PLAYERS)]
        self.dealt: list[list[str]] = [[] for _ in range(PLAYERS)]  # every card dealt to a seat
        self.kicked: list[str] = []
        self.kick: str = ""
        self.trump: str | None = None
        self.begged = False
        self.runs = 0
        self._new_tricks()
        self.taken: list[list[str]] = [[], []]
        self.pile_points = [0, 0]  # card points in ``taken``, kept as tricks are taken
        self.tricks_won = [0, 0]
        self.jack_winner: int | None = None  # the seat that took the trick holding the trump jack
        self._deal_cards(FIRST_DEAL)
        if self._turn_kick():
            return
        self.decision = "beg"
        self.seat_to_move = self.beggar

    def _deal_cards(self, count: int) -> None:
        # (new lists sorted in place: sorted() would copy them again and look up their sort())
        stock, hands, canonical = self.stock, self.hands, ORDER.__getitem__
        for seat in DEAL_ORDER[self.dealer_seat]:
            cards = stock[:count]
            del stock[:count]
            self.dealt[seat].extend(cards)  # (in the order dealt)
            hand = hands[seat] + cards
            hand.sort(key=canonical)
            hands[seat] = hand
            cards.sort(key=canonical)
            self.emit({"type": "deal", "seat": seat, "cards": cards}, (seat,))

    def _turn_kick(self) -> bool:
        """Turn the next card face up and score it for the dealer's team. True if that won."""
        card = self.stock.pop(0)
        self.kick = card
        self.kicked.append(card)
        points = KICK_POINTS.get(card[:-1], 0)
        team = team_of(self.dealer_seat)
        self.emit(
            {
                "type": "kick",
                "card": card,
                "suit": card[-1],
                "points": points,
                "team": team,
                "run": self.runs,
            }
        )
        return points > 0 and self._award(team, points, "kick", card=card)

    def _run_pack(self) -> None:
        """Run until a kick of another suit than the first kick, or redeal when the pack is short."""
        begged_suit = self.kicked[0][-1]
        while True:
            if len(self.stock) < RUN_NEEDS:
                self.emit(
                    {
                        "type": "redeal",
                        "dealer": self.dealer_seat,
                        "reason": f"the pack cannot supply another run ({len(self.stock)} card{'' if len(self.stock) == 1 else 's'} left)",
                    }
                )
                self._deal_afresh()
                return
            self.runs += 1
            self._deal_cards(RUN_DEAL)
            if self._turn_kick():
                return
            if self.kick[-1] != begged_suit:
                self._set_trump(self.kick[-1], "run")
                return

    def _set_trump(self, suit: str, how: str) -> None:
        self.trump = suit
        self.emit({"type": "trump", "suit": suit, "card": self.kick, "how": how})
        self.decision = "play"
        self.seat_to_move = self.beggar

    # -- awards --------------------------------------------------------------------------------

    def _award(self, team: int, points: int, reason: str, **details: Any) -> bool:
        """Add one award; True (and the match is over) if it takes the team to 14."""
        self.team_scores[team] += points
        self.emit(
            {
                "type": "award",
                "team": team,
                "points": points,
                "reason": reason,
                **details,
                "scores": list(self.team_scores),
            }
        )
        if self.team_scores[team] < TARGET:
            return False
        self.emit({"type": "match_won", "team": team, "scores": list(self.team_scores)})
        self._end_match()
        return True

    def _score_hand(self) -> bool:
        """High, Low, Jack, Game in that order; True if an award ended the match."""
        trump = self._trump_suit()
        holders = {
            card: seat
            for seat, cards in enumerate(self.dealt)
            for card in filter(IN_SUIT[trump], cards)
        }
        if holders:
            high = max(holders, key=RANK.__getitem__)
            low = min(holders, key=RANK.__getitem__)
            if self._award(team_of(holders[high]), 1, "high", seat=holders[high], card=high):
                return True
            if self._award(team_of(holders[low]), 1, "low", seat=holders[low], card=low):
                return True
        jack = "J" + trump
        if jack in holders:
            holder = holders[jack]
            winner = self.jack_winner
            if winner is None:  # every dealt card is played, so the trick holding it was won
                raise GameError(f"{jack} was dealt but no trick took it")
            if team_of(winner) == team_of(holder):
                done = self._award(
                    team_of(winner), 1, "jack", seat=holder, card=jack, winner=winner
                )
            else:
                done = self._award(
                    team_of(winner), 3, "hang_jack", seat=holder, card=jack, winner=winner
                )
            if done:
                return True
        card_points = self.card_points()
        if card_points[0] != card_points[1]:
            team = 0 if card_points[0] > card_points[1] else 1
            if self._award(team, self.game_points, "game", card_points=card_points):
                return True
        return False

    def _trump_suit(self) -> str:
        """This hand's trump; the tricks and the scoring come only after it is turned."""
        if self.trump is None:
            raise GameError("no trump has been turned in this hand")
        return self.trump

    def card_points(self) -> list[int]:
        """Each team's card points in the tricks it has taken this hand."""
        return list(self.pile_points)

    # -- the rules -----------------------------------------------------------------------------

    def _legal(self) -> list[str]:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        if self.decision != "play":
            return ["stand", "beg"] if self.decision == "beg" else ["give", "run"]
        # The cards that may be played (here, not in a method of their own: a call fewer on
        # every decision).
        hand, trick = self.hands[seat], self.trick
        if not trick:
            return list(hand)
        trump = self.trump
        led = trick[0][1][-1]
        # (filter() with a set's __contains__: no Python step per card)
        if led == trump:
            trumps = [*filter(IS_LED_OR_TRUMP[trump][led], hand)]
            return trumps or list(hand)
        if SUIT_CARDS[led].isdisjoint(hand):
            allowed = list(hand)
        else:
            allowed = [*filter(IS_LED_OR_TRUMP[trump][led], hand)]
        if self.no_undertrump:
            top = max((RANK[c] for _, c in trick if c[-1] == trump), default=None)
            if top is not None and any(c[-1] != trump for c in hand):
                allowed = [c for c in allowed if c[-1] != trump or RANK[c] > top]
        return allowed

    def _explain(self, action: str) -> str:
        seat = self.mover
        if self.decision == "beg":
            return "the beggar answers the kick with stand or beg"
        if self.decision == "give":
            return "the dealer answers the beg with give (one point to the beggar's team) or run"
        if action not in ORDER:
            return f"the play phase wants a card from your hand, not {action!r}"
        if action not in self.hands[seat]:
            return f"you do not hold {action}"
        led = self.trick[0][1][-1]
        if led == self.trump:
            return f"trump ({self.trump}) was led: you must play trump"
        if action[-1] != self.trump:
            return f"{led} was led: play {led} or a trump ({self.trump}), not a third suit"
        return "no undertrumping: play a trump higher than the one in the trick, or another card"

    def _apply(self, action: str) -> None:
        seat = self.seat_to_move  # (not mover: a call fewer on every decision)
        assert seat is not None  # (a decision is pending whenever this runs)
        if self.decision == "play":
            # (the play's first step here, not in a method: a call fewer on most cards)
            if self._play_card(seat, action) < PLAYERS:
                self.seat_to_move = (seat - 1) % PLAYERS  # right_of(seat), a call fewer per card
            else:
                self._end_trick()
        elif action == "stand":
            self.emit({"type": "stand", "seat": seat})
            self._set_trump(self.kick[-1], "stand")
        elif action == "beg":
            self.begged = True
            self.emit({"type": "beg", "seat": seat})
            self.decision = "give"
            self.seat_to_move = self.dealer_seat
        elif action == "give":
            self.emit({"type": "give", "seat": seat})
            if not self._award(team_of(self.beggar), 1, "give"):
                self._set_trump(self.kick[-1], "give")
        else:
            self.emit({"type": "run", "seat": seat})
            self._run_pack()

    def _end_trick(self) -> None:
        """The trick is complete: its winner's team takes it; the winner leads, or the hand is scored."""
        self.last_trick = taken = self._take_trick(self.trump)
        winner, cards = taken["winner"], taken["cards"]
        team = winner % 2  # team_of(winner)
        if JACK_OF[self.trump] in cards:  # (no string made, no call per trick)
            self.jack_winner = winner
        self.taken[team].extend(cards)
        self.pile_points[team] += sum(map(POINTS_OF.__getitem__, cards))
        self.tricks_won[team] += 1
        self.emit({"type": "trick", **taken, "team": team})
        if self.hands[winner]:
            self.seat_to_move = winner
            return
        if self._score_hand():
            return
        self.emit(
            {
                "type": "hand_end",
                "hand": self.hand_number,
                "trump": self.trump,
                "card_points": self.card_points(),
                "tricks": list(self.tricks_won),
                "scores": list(self.team_scores),
            }
        )
        self.hand_number += 1
        self.dealer_seat = right_of(self.dealer_seat)
        self._start_hand()

    def _scores(self) -> list[int]:
        team_0, team_1 = self.team_scores
        return [team_0, team_1, team_0, team_1]  # seat by seat, as in TEAMS

    def card_locations(self) -> dict[str, list[str]]:
        return self._card_locations(
            {
                "taken 0": list(self.taken[0]),
                "taken 1": list(self.taken[1]),
                "kicked": list(self.kicked),
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
    ) -> AllFours:
        """The hand as the seat knows it (GameState.resample): the other hands and the stock
        dealt under the voids shown (under ``no_undertrump``, an undertrump shows only trumps);
        which packet each of another seat's cards came in drawn uniformly."""
        me = view["seat"]
        n = PLAYERS
        hand_events = current_deal_events(events, cls.DEAL_STARTS)
        no_undertrump = bool(cls.SPEC.resolve_options(options)["no_undertrump"])
        own = dealt_to(hand_events, me)
        plays = trick_plays(hand_events)
        played = {card for _, card, _ in plays}
        kicked = list(view["kicked"])
        known = set(own) | played | set(kicked)
        pool = [c for c in STANDARD_52.cards if c not in known]
        counts = view["hand_counts"]
        sizes = {f"hand {s}": counts[s] for s in range(n) if s != me}
        sizes["stock"] = len(pool) - sum(sizes.values())
        voids = voids_in_tricks(plays, me, view["trump"], _void_rule(no_undertrump))
        hidden = deal(pool, sizes, forbidden_suits(voids, pool))
        hands = original_hands(n, me, own, hidden, plays)
        for seat, hand in enumerate(hands):
            if seat != me:  # which packet each of its cards came in is never seen
                rng.shuffle(hand)
        dealer = view["dealer"]
        deck = [c for s in DEAL_ORDER[dealer] for c in hands[s][:FIRST_DEAL]] + [kicked[0]]
        for run in range(1, len(kicked)):
            start = FIRST_DEAL + RUN_DEAL * (run - 1)
            deck += [c for s in DEAL_ORDER[dealer] for c in hands[s][start : start + RUN_DEAL]]
            deck.append(kicked[run])
        stock = list(hidden["stock"])
        rng.shuffle(stock)
        deck += stock
        state = blank_state(cls, n, options, deck, rng.getrandbits(63))
        # From 0-0, so that the kicks replayed cannot end the match; then the real score.
        state._begin(dealer, view["hand_number"])
        actions = [
            (event["seat"], event["type"])
            for event in hand_events
            if event.get("type") in ("stand", "beg", "give", "run")
        ] + [(event["seat"], event["card"]) for event in hand_events if event.get("type") == "play"]
        replay(state, actions)
        state.team_scores = list(view["team_scores"])
        return state

    # -- what a seat may know -------------------------------------------------------------------

    VIEW_KEYS = (
        "game",
        "players",
        "seat",
        "phase",
        "to_move",
        "teams",
        "team",
        "partner",
        "hand_number",
        "dealer",
        "beggar",
        "begged",
        "kick",
        "kicked",
        "runs",
        "trump",
        "taken",
        "tricks_won",
        "card_points",
        "team_scores",
        "target",
        *SEAT_VIEW_TAIL_UNCOUNTED,
    )

    def view(self, seat: int | None) -> dict[str, Any]:
        view: dict[str, Any] = {
            "game": "all-fours",
            "players": PLAYERS,
            "seat": seat,
            "phase": self.decision or "over",
            "to_move": self.seat_to_move,
            "teams": list(TEAMS),
            "team": None if seat is None else team_of(seat),
            "partner": None if seat is None else (seat + 2) % PLAYERS,
            "hand_number": self.hand_number,
            "dealer": self.dealer_seat,
            "beggar": self.beggar,
            "begged": self.begged,
            "kick": self.kick,
            "kicked": list(self.kicked),
            "runs": self.runs,
            "trump": self.trump,
            "taken": [list(pile) for pile in self.taken],
            "tricks_won": list(self.tricks_won),
            "card_points": list(self.pile_points),
            "team_scores": list(self.team_scores),
            "target": TARGET,
        }
        return self._view_tail(view, seat, self._scores(), self.stock)

    def view_values(self, seat: int) -> tuple | None:
        """view(seat)'s values in VIEW_KEYS order, the state's own lists uncopied (GameState)."""
        dealer = self.dealer_seat
        first, second, third, fourth = self.hands  # (four players: no map() per view)
        team_0, team_1 = self.team_scores  # (the seats' scores without a _scores() call)
        return (
            "all-fours",
            PLAYERS,
            seat,
            self.decision or "over",
            self.seat_to_move,
            TEAMS,
            seat % 2,  # team_of(seat) (no calls per view)
            (seat + 2) % PLAYERS,
            self.hand_number,
            dealer,
            (dealer - 1) % PLAYERS,  # right_of(dealer): the beggar
            self.begged,
            self.kick,
            self.kicked,
            self.runs,
            self.trump,
            self.taken,
            self.tricks_won,
            self.pile_points,
            self.team_scores,
            TARGET,
            self.trick_shown,
            self.last_trick,
            [len(first), len(second), len(third), len(fourth)],
            [team_0, team_1, team_0, team_1],
            self.hands[seat],
        )


def _void_rule(no_undertrump: bool) -> VoidRule:
    """What a play shows missing: trump led and not followed, no trump; another suit led and
    neither followed nor trumped, no card of it; under ``no_undertrump``, an undertrump, only
    trumps in the hand."""

    def rule(seat, card, led, trick, trump) -> set[str]:
        suit = card[-1]
        if led == trump:
            return {trump} if suit != trump else set()
        if suit != led and suit != trump:
            return {led}
        if no_undertrump and suit == trump:
            top = max((RANK[c] for _, c in trick if c[-1] == trump), default=None)
            if top is not None and RANK[card] < top:
                return {s for s in STANDARD_52.suits if s != trump}  # it held only trumps
        return set()

    return rule


SPEC = GameSpec(
    id="all-fours",
    name="All Fours (Trinidad)",
    aliases=("allfours", "trinidad", "all-fours-trinidad"),
    player_counts=(PLAYERS,),
    default_players=PLAYERS,
    options=(
        Option(
            "no_undertrump",
            False,
            "after another suit was led and trumped, a lower trump may not be played "
            "unless the hand holds only trumps",
        ),
        Option("game_points", 1, "points for Game (more card points in tricks)", minimum=1),
    ),
    state_class=AllFours,
    team_size=2,
    summary="Teams 0+2 v 1+3 to 14: kick, stand or beg, give one or run the pack; "
    "High, Low, Jack (hang jack 3), Game.",
)
AllFours.SPEC = SPEC
