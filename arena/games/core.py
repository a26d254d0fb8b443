"""The game API shared by every game: a pure, deterministic state machine per match.

A game is described by a :class:`GameSpec` (id, aliases, player counts, options) and played through
a :class:`GameState`::

    state = spec.new_match(players=4, options={}, seed=7)
    while not state.is_over:
        seat = state.seat_to_move          # whose decision is next
        actions = state.legal_actions()    # notation strings, e.g. ["bid:0", "bid:1"] or ["QS", "7H"]
        state.apply(actions[0])            # IllegalAction for anything else, state unchanged
    state.result()                         # scores and placings (1 = best, equal scores share)

``state.events`` is the append-only list of what happened, each :class:`Event` with its audience
(everyone, or a tuple of seats), so the referee forwards events without knowing any rule.
``state.view(seat)`` is exactly what that seat may know now; ``state.view(None)`` sees everything.

(game, players, options, seed, actions) replays a match exactly: all chance comes from the
:class:`~arena.games.cards.Dealer`, seeded from the match seed.

Everything a game gives is a hook declared on :class:`GameState` (what it must give, what it may
give and the default): a game is one module, and nothing outside it calls its private methods.

Errors::

    GameError
    ├── IllegalAction      an action the rules forbid now (names action, seat, reason)
    ├── OptionError        an unknown option, a bad option value, or an unsupported player count
    └── InconsistentView   a seat's view and events that contradict each other (resample)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from .cards import Dealer, Deck, Rng


class GameError(Exception):
    """Base of everything the rules layer raises on purpose."""


class IllegalAction(GameError):
    def __init__(self, action: object, seat: int | None, reason: str) -> None:
        self.action = action
        self.seat = seat
        self.reason = reason
        super().__init__(f"seat {seat}: {action!r} is illegal: {reason}")


class OptionError(GameError):
    pass


class InconsistentView(GameError, ValueError):
    """A seat's view and events contradict each other (or come from another game or seat)."""


# How ``GameState.resample`` has the hidden cards placed: ``deal(cards, sizes, forbidden)`` gives
# each holder (a ``card_locations`` name) exactly ``sizes[holder]`` of ``cards``, none of
# ``forbidden[holder]``, drawn uniformly over every such placement (arena.kit.deal_uniform).
Deal = Callable[
    [Sequence[str], Mapping[str, int], Mapping[str, Iterable[str]]], Mapping[str, list[str]]
]


@dataclass(frozen=True)
class Option:
    """A game parameter with its default. ``choices`` or ``minimum``/``maximum`` bound its value."""

    name: str
    default: bool | int | str
    doc: str
    choices: tuple | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, game_id: str, value: object) -> bool | int | str:
        """The value in its proper type; text (from a command line or TOML) is converted."""
        kind = type(self.default)
        expected = self._expected()
        if isinstance(value, str) and kind is not str:
            text = value.strip().lower()
            if kind is bool:
                if text in ("true", "yes", "on", "1"):
                    value = True
                elif text in ("false", "no", "off", "0"):
                    value = False
            elif kind is int:
                try:
                    value = int(text)
                except ValueError:
                    pass
        if type(value) is not kind:
            raise OptionError(f"{game_id}: option {self.name} = {value!r}: expected {expected}")
        if self.choices is not None and value not in self.choices:
            raise OptionError(f"{game_id}: option {self.name} = {value!r}: expected {expected}")
        if isinstance(value, int) and (
            (self.minimum is not None and value < self.minimum)
            or (self.maximum is not None and value > self.maximum)
        ):
            raise OptionError(f"{game_id}: option {self.name} = {value!r}: expected {expected}")
        return value

    def _expected(self) -> str:
        kind = type(self.default)
        if kind is bool:
            return "true or false"
        if self.choices is not None:
            return "one of " + ", ".join(map(str, self.choices))
        if kind is int:
            low = "" if self.minimum is None else f" >= {self.minimum}"
            high = "" if self.maximum is None else f" <= {self.maximum}"
            return "an integer" + (low + (" and" if low and high else "") + high)
        return "a string"


class Event(NamedTuple):
    """Something that happened. ``audience`` None means every seat saw it; else only those seats.

    A NamedTuple rather than a dataclass: events are created on every step and this is cheaper.
    """

    audience: tuple[int, ...] | None
    data: dict[str, Any]

    def visible_to(self, seat: int) -> bool:
        return self.audience is None or seat in self.audience


# Builds an Event without NamedTuple's Python-level __new__ (emit runs on every step).
_new_event = tuple.__new__


@dataclass(frozen=True)
class Result:
    """Final scores and placings per seat (1 = best, equal scores share the better placing).

    ``teams`` gives each seat's team index in team games (partners share score and placing).
    """

    scores: tuple[int, ...]
    placings: tuple[int, ...]
    teams: tuple[int, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scores": list(self.scores), "placings": list(self.placings)}
        if self.teams is not None:
            out["teams"] = list(self.teams)
        return out


def placings(scores: tuple[int, ...] | list[int], higher_is_better: bool = True) -> tuple[int, ...]:
    """Competition ranking: 1 + the number of seats with a strictly better score."""
    if higher_is_better:
        return tuple(1 + sum(other > mine for other in scores) for mine in scores)
    return tuple(1 + sum(other < mine for other in scores) for mine in scores)


class GameState:
    """One match in progress: the base of every game's state, declaring every hook a game gives.

    A game must give (each is declared below with its docstring):
    - ``SPEC`` (its :class:`GameSpec`) and ``DECK`` (its :class:`~arena.games.cards.Deck`);
    - ``__init__`` that deals and sets ``self.seat_to_move`` (None once the match is over) and
      ``self.decision`` (a word naming the kind of decision pending, e.g. "bid"), as it does
      whenever the turn changes; all chance from ``self.dealer``;
    - ``_legal()``, ``_apply(action)``, ``_scores()``: the rules (``apply``, ``legal_actions``
      and ``result`` call them);
    - ``view(seat)`` and ``card_locations()``: what a seat may know, where every card is;
    - ``resample(view, events, options, deal, rng)``: a state that agrees with all a seat knows
      (the bot kit's sampled worlds, arena.kit).

    A game may give (the default in brackets):
    - ``_explain(action)``: why an action is illegal [the legal actions are listed];
    - ``hidden_from(seat)``: the cards a seat may not know [the other hands and the stock];
    - ``HIGHER_IS_BETTER`` [True]; ``termination``: how a finished match ended ["completed"];
    - ``VIEW_KEYS`` with ``view_values(seat)``: a seat's view as values, the referee's quick
      twin of ``view`` [None: the referee calls ``view``];
    - ``DEAL_STARTS`` and ``DEAL_ENDS``: the events that start and end a deal [none: the match is
      one deal]; ``SCORING_EVENTS``: the events that score, for the web match page [none].

    The referee, the replay, the check, the web pages and the kit use only the public methods and
    these hooks; nothing outside a game's module calls its private methods.
    """

    SPEC: ClassVar[GameSpec]
    DECK: ClassVar[Deck]
    HIGHER_IS_BETTER: ClassVar[bool] = True
    """Whether a higher score is better (placings, and the kit's value of a score)."""

    termination: ClassVar[str] = "completed"
    """How a match that ends by the rules ended, as the referee reports it in ``match_end``, the
    record and the result (SPEC.md 8): "completed"; ``arena check`` ends its matches after the
    decisions it tests, and says "cut short"."""

    DEAL_STARTS: ClassVar[tuple[str, ...]] = ()
    """The event types that start a deal (a round, a hand; a redeal too): ``resample`` rebuilds
    the current deal from the last of them. Empty: the match is one deal."""

    DEAL_ENDS: ClassVar[Mapping[str, str]] = {}
    """The event types that end a deal, each with its field of running totals (per seat, or per
    team in a team game): the kit's rollouts stop at the first. Empty: at the end of the match."""

    SCORING_EVENTS: ClassVar[tuple[str, ...]] = ()
    """The event types that score (a deal's end, an award): the web match page lists them as
    "scoring so far"."""

    def __init__(
        self, players: int, options: Mapping[str, Any], seed: int, dealer: Dealer | None = None
    ) -> None:
        self.players = players
        self.options = dict(options)
        self.seed = seed
        self.dealer = dealer if dealer is not None else Dealer(Rng(seed))
        self.events: list[Event] = []
        self.actions: list[str] = []
        self.seat_to_move: int | None = None
        self.decision: str = ""
        self._legal_cache: list[str] | None = None

    # -- the public API ---------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.seat_to_move is None

    @property
    def mover(self) -> int:
        """The seat to move, for the rules methods, which run only while the match is on."""
        seat = self.seat_to_move
        if seat is None:
            raise GameError("the match is over: no seat to move")
        return seat

    def legal_actions(self) -> list[str]:
        """The legal actions of the seat to move (empty once the match is over). Do not mutate."""
        cached = self._legal_cache
        if cached is None:
            cached = self._legal_cache = [] if self.seat_to_move is None else self._legal()
        return cached

    def apply(self, action: str) -> None:
        """Apply the seat to move's action, or raise IllegalAction and change nothing."""
        legal = self._legal_cache
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            if self.seat_to_move is None:
                raise IllegalAction(action, None, "the match is over")
            raise IllegalAction(action, self.seat_to_move, self.explain_illegal(action))
        self._legal_cache = None
        self.actions.append(action)
        self._apply(action)

    def explain_illegal(self, action: object) -> str:
        if not isinstance(action, str):
            return f"an action is a string, got {type(action).__name__}"
        reason = self._explain(action)
        legal = self.legal_actions()
        shown = ", ".join(legal[:12]) + (", ..." if len(legal) > 12 else "")
        return (
            f"{reason} (legal now: {shown})" if reason else f"not one of the legal actions: {shown}"
        )

    def result(self) -> Result:
        if self.seat_to_move is not None:
            raise GameError("the match is not over")
        scores = tuple(self._scores())
        teams = self.SPEC.teams(self.players)
        if teams is None:
            return Result(scores, placings(scores, self.HIGHER_IS_BETTER))
        # Teams are placed among teams: partners share the team's score and placing (1 or 2).
        team_scores = [scores[teams.index(team)] for team in range(max(teams) + 1)]
        team_places = placings(team_scores, self.HIGHER_IS_BETTER)
        return Result(scores, tuple(team_places[team] for team in teams), teams)

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know now, as JSON-ready data; ``None`` for the all-seeing view."""
        raise NotImplementedError

    VIEW_KEYS: ClassVar[tuple[str, ...] | None] = None
    """The keys ``view(seat)`` has, in its order, for ``view_values``; None: no quick form."""

    def view_values(self, seat: int) -> tuple | None:
        """``view(seat)``'s values in VIEW_KEYS order, or None: then the referee calls view().

        The quick twin of ``view``, kept because the referee sends a view with every request:
        building view()'s dict and the copies that make it a snapshot costs 20-30% more
        instructions per decision in the arena process (measured with ``benchmarks/referee_cpu.py
        --instructions``, 17-26k on 76-87k), over the 10% the referee may spend. The values are
        the state's own lists, not copies: encode them at once, neither keep nor change them.
        tests/referee/test_fast_paths.py holds every game's to view() byte for byte."""
        return None

    @classmethod
    def resample(
        cls,
        view: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        deal: Deal,
        rng: random.Random,
    ) -> GameState:
        """A state that agrees with everything one seat knows: ``view`` (its view now, of a match
        in progress), ``events`` (every event it has seen, in order) and ``options`` (the match's,
        from ``match_start``). The cards the seat cannot see are placed by ``deal`` (holders named
        as ``card_locations`` names them, "hand N", "stock"...), under every constraint the play
        showed (a seat that did not follow suit holds none of it); decisions nobody saw are drawn
        with ``rng``, and so is the seed of what is not dealt yet. The state is rebuilt at the
        start of the current deal and the deal's actions are applied again, so every rule is
        checked: InconsistentView when they do not replay. This is OpenSpiel's
        ``ResampleFromInfostate``; arena.kit.sample_world calls it (arena.games.knowledge holds
        what the trick games share for it)."""
        raise NotImplementedError(f"{cls.__name__} does not resample a seat's world")

    def card_locations(self) -> dict[str, list[str]]:
        """Where every card of the current deal is: each card exactly once.

        Names: ``"hand N"`` for seat N's hand, ``"stock"`` for undealt cards nobody has seen; other
        names (``"trick"``, ``"played"``, ``"discards N"``, ``"removed"``...) as the game needs.
        """
        raise NotImplementedError

    def hidden_from(self, seat: int) -> set[str]:
        """The cards ``seat`` may not know now: by default the other hands and the stock.

        Conformance and leak tests check that none of these ever reaches the seat.
        """
        locations = self.card_locations()
        hidden = set(locations.get("stock", ()))
        for other in range(self.players):
            if other != seat:
                hidden.update(locations[f"hand {other}"])
        return hidden

    # -- helpers for subclasses --------------------------------------------------------------

    def emit(self, data: dict[str, Any], audience: tuple[int, ...] | None = None) -> None:
        self.events.append(_new_event(Event, (audience, data)))

    def _end_match(self) -> None:
        """No decision is pending any more: the match is over."""
        self.seat_to_move = None
        self.decision = ""

    # -- the rules: hooks the public methods call ----------------------------------------------

    def _legal(self) -> list[str]:
        """The legal actions of ``seat_to_move`` (a decision is pending), in a fixed, documented
        order; a new list each time (``legal_actions`` keeps it until the next action)."""
        raise NotImplementedError

    def _apply(self, action: str) -> None:
        """Carry out ``action``, a legal action of ``seat_to_move`` (``apply`` has checked it and
        recorded it): change the state, ``emit`` what happened, set the next ``seat_to_move`` and
        ``decision`` (or ``_end_match()``)."""
        raise NotImplementedError

    def _explain(self, action: str) -> str:
        """Why ``action`` (a string, not legal now) is illegal, in a few words, or "" to let
        ``explain_illegal`` say it is not among the legal actions."""
        return ""

    def _scores(self) -> list[int]:
        """Every seat's final score, once the match is over (``result`` places them)."""
        raise NotImplementedError


@dataclass(frozen=True)
class GameSpec:
    """A registered game: what it is called, who can play it, its options, and its state class."""

    id: str
    name: str
    aliases: tuple[str, ...]
    player_counts: tuple[int, ...]
    default_players: int
    options: tuple[Option, ...]
    state_class: type[GameState]
    team_size: int = 1
    summary: str = ""

    def teams(self, players: int) -> tuple[int, ...] | None:
        """Each seat's team (seat i is on team i % number_of_teams), or None for no teams."""
        if self.team_size == 1:
            return None
        count = players // self.team_size
        return tuple(seat % count for seat in range(players))

    def option(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        known = ", ".join(o.name for o in self.options) or "none"
        raise OptionError(f"{self.id}: unknown option {name!r} (options: {known})")

    def resolve_options(self, given: Mapping[str, object] | None = None) -> dict[str, Any]:
        """All options with defaults filled in; unknown names and bad values raise OptionError."""
        resolved = {o.name: o.default for o in self.options}
        for name, value in (given or {}).items():
            resolved[name] = self.option(name).check(self.id, value)
        return resolved

    def check_players(self, players: int) -> int:
        if players not in self.player_counts:
            allowed = ", ".join(map(str, self.player_counts))
            raise OptionError(f"{self.id}: {players} players: expected one of {allowed}")
        return players

    def new_match(
        self,
        players: int | None = None,
        options: Mapping[str, object] | None = None,
        seed: int = 0,
        dealer: Dealer | None = None,
    ) -> GameState:
        count = self.check_players(self.default_players if players is None else players)
        return self.state_class(count, self.resolve_options(options), seed, dealer)
