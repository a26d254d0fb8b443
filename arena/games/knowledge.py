"""What one seat knows of the current deal, read from its view and the events it saw: what the
trick games' ``resample`` hooks (:meth:`GameState.resample`) share.

A game's ``resample`` reads the deal (:meth:`DealKnowledge.read`: its events, what was dealt to
the seat, every card played to a trick); has the cards the seat cannot see dealt to the other
hands and the stock under the voids the play showed (:meth:`DealKnowledge.deal_hidden`, with the
game's rule, e.g. :func:`follow_rule`); rebuilds the deal's first state on a deck that deals
those cards (:meth:`DealKnowledge.hands_at_start`, :func:`blank_state`); and applies the deal's
actions again (:func:`replay`), so every rule is checked once more. Each game gives only what
differs: its deck and the cards it shows, its void rule, its other holders, how its deck deals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .cards import StackedDealer
from .core import Deal, GameState, InconsistentView

Events = Sequence[Mapping[str, Any]]
State = TypeVar("State", bound=GameState)
# (seat, card, the led suit or None when it leads) for each card played to a trick
Plays = list[tuple[int, str, str | None]]
# rule(seat, card, led suit, the trick before the card, trump) -> the suits the play shows missing
VoidRule = Callable[[int, str, str, list[tuple[int, str]], str | None], set[str]]


def current_deal_events(events: Events, starts: tuple[str, ...]) -> list[Mapping[str, Any]]:
    """The events since the last one whose type is in ``starts`` (that one included); every
    event when ``starts`` is empty (a match of one deal)."""
    if not starts:
        return list(events)
    for index in range(len(events) - 1, -1, -1):
        if events[index].get("type") in starts:
            return list(events[index:])
    raise InconsistentView(f"no {' or '.join(starts)} event among the events given")


def dealt_to(deal: Events, seat: int) -> list[str]:
    """Every card the deal events show dealt to ``seat`` (all its packets)."""
    cards: list[str] = []
    for event in deal:
        if event.get("type") == "deal" and event.get("seat") == seat and "cards" in event:
            cards.extend(event["cards"])
    return cards


def trick_plays(deal: Events) -> Plays:
    """(seat, card, led suit, None for the lead) for every card played to a trick: the ``play``
    events, a ``trick`` event closing each trick."""
    out: Plays = []
    led: str | None = None
    for event in deal:
        kind = event.get("type")
        if kind == "play":
            card = event["card"]
            out.append((event["seat"], card, led))
            if led is None:
                led = card[-1]
        elif kind == "trick":
            led = None
    return out


def follow_rule(seat, card, led, trick, trump) -> set[str]:
    """Follow suit if you can, else anything: not following shows a void in the led suit."""
    return {led} if card[-1] != led else set()


def voids_in_tricks(
    plays: Plays, me: int, trump: str | None, rule: VoidRule
) -> dict[int, set[str]]:
    """The suits each seat but ``me`` showed void in, from every play of the deal; ``rule`` gives
    the suits one play shows missing."""
    voids: dict[int, set[str]] = {}
    trick: list[tuple[int, str]] = []
    for seat, card, led in plays:
        if led is None:
            trick = []
        elif seat != me:
            voids.setdefault(seat, set()).update(rule(seat, card, led, trick, trump))
        trick.append((seat, card))
    return voids


def forbidden_suits(voids: dict[int, set[str]], pool: list[str]) -> dict[str, set[str]]:
    """Each void seat's hand (``"hand N"``) may hold none of the ``pool``'s cards of its voids."""
    return {f"hand {seat}": {c for c in pool if c[-1] in suits} for seat, suits in voids.items()}


def original_hands(
    players: int, me: int, own: list[str], hidden: Mapping[str, list[str]], plays: Plays
) -> list[list[str]]:
    """Each seat's cards at the start of the deal: its hidden (``"hand N"``) or own cards, plus
    what it played."""
    hands = [list(own) if s == me else list(hidden[f"hand {s}"]) for s in range(players)]
    for seat, card, _ in plays:
        if seat != me:
            hands[seat].append(card)
    return hands


@dataclass(frozen=True)
class DealKnowledge:
    """What one seat knows of the current deal: the pieces every trick game's ``resample`` reads
    the same way."""

    players: int
    seat: int
    hand_counts: Sequence[int]  # every seat's cards in hand now (the view's)
    events: list[Mapping[str, Any]]  # the deal's events, the one that started it first
    own: list[str]  # every card dealt to the seat (all its packets)
    plays: Plays  # every card played in the deal, in order

    @classmethod
    def read(
        cls, view: Mapping[str, Any], events: Events, starts: tuple[str, ...]
    ) -> DealKnowledge:
        """The deal as ``view`` (a seat's, of a match in progress) and ``events`` (all it saw)
        show it; ``starts`` are the game's ``DEAL_STARTS``. The plays are the tricks' cards
        (:func:`trick_plays`); a game that plays otherwise replaces them."""
        deal_events = current_deal_events(events, starts)
        seat = view["seat"]
        return cls(
            view["players"],
            seat,
            view["hand_counts"],
            deal_events,
            dealt_to(deal_events, seat),
            trick_plays(deal_events),
        )

    def played(self) -> list[str]:
        """The cards played in the deal, in order."""
        return [card for _, card, _ in self.plays]

    def voids(self, trump: str | None, rule: VoidRule) -> dict[int, set[str]]:
        """The suits each other seat showed void in (:func:`voids_in_tricks`)."""
        return voids_in_tricks(self.plays, self.seat, trump, rule)

    def deal_hidden(
        self,
        deal: Deal,
        cards: Iterable[str],
        shown: Iterable[str] = (),
        voids: Mapping[int, set[str]] | None = None,
        ruled_out: Mapping[int, Iterable[str]] | None = None,
        holders: Mapping[str, int] | None = None,
        stock: bool = True,
    ) -> Mapping[str, list[str]]:
        """The cards of ``cards`` (the deal's deck, in order) the seat has not seen, dealt by
        ``deal``: to each other seat's hand (``"hand N"``) as many as it holds, none of its
        ``voids``' suits (by seat) nor of its ``ruled_out`` cards (by seat); to the game's other
        ``holders`` (name: size) as many as they hold; and, with ``stock``, the rest to the
        ``"stock"``. Seen: the seat's own cards, the cards played and the cards ``shown`` (a
        turned-up or removed card, a card drawn)."""
        known = {*self.own, *self.played(), *shown}
        pool = [card for card in cards if card not in known]
        sizes = {f"hand {s}": self.hand_counts[s] for s in range(self.players) if s != self.seat}
        sizes.update(holders or {})
        if stock:
            sizes["stock"] = len(pool) - sum(sizes.values())
        forbidden = forbidden_suits(dict(voids or {}), pool)
        for seat, ruled in (ruled_out or {}).items():
            if seat != self.seat:
                forbidden.setdefault(f"hand {seat}", set()).update(ruled)
        return deal(pool, sizes, forbidden)

    def hands_at_start(self, hidden: Mapping[str, list[str]]) -> list[list[str]]:
        """Each seat's cards at the start of the deal (:func:`original_hands`)."""
        return original_hands(self.players, self.seat, self.own, hidden, self.plays)


def blank_state(
    cls: type[State], players: int, options: Mapping[str, Any], deck: list[str], seed: int
) -> State:
    """A state of ``cls`` whose first shuffle gives ``deck`` (then the rest in canonical order;
    later shuffles come from ``seed``), before the game's own set-up has run: the game sets where
    in the match its deal is and deals it."""
    state = cls.__new__(cls)
    resolved = cls.SPEC.resolve_options(options)
    GameState.__init__(state, players, resolved, seed, StackedDealer([deck], seed))
    return state


def replay(state: GameState, actions: list[tuple[int, str]]) -> None:
    """Apply (seat, action) pairs, checking each comes from the seat the engine expects."""
    for seat, action in actions:
        if state.seat_to_move != seat:
            raise InconsistentView(
                f"replaying {action!r}: the engine expects seat {state.seat_to_move}, "
                f"the events say seat {seat}"
            )
        try:
            state.apply(action)
        except Exception as error:  # an illegal replay means the sample broke a constraint
            raise InconsistentView(f"replaying seat {seat}'s {action!r}: {error}") from None
