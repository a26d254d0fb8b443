"""What one seat knows of the current deal, read from the events it saw: the pieces the trick
games' ``resample`` hooks (:meth:`GameState.resample`) share.

A game's ``resample`` finds the deal's events (:func:`current_deal_events`), what was dealt to the
seat (:func:`dealt_to`) and every card played (:func:`trick_plays`), which suits each other seat
showed void in (:func:`voids_in_tricks` with the game's rule, e.g. :func:`follow_rule`); has the
unseen cards dealt under those constraints; rebuilds the deal's first state on a deck that deals
those cards (:func:`blank_state`); and applies the deal's actions again (:func:`replay`), so every
rule is checked once more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .cards import StackedDealer
from .core import GameState, InconsistentView

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
