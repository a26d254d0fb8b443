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

Errors::

    GameError
    ├── IllegalAction   an action the rules forbid now (names action, seat, reason)
    └── OptionError     an unknown option, a bad option value, or an unsupported player count
"""

from __future__ import annotations

from collections.abc import Mapping
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
    """One match in progress. Subclasses implement ``_legal``, ``_apply`` and ``view``.

    Subclass contract:
    - set ``self.seat_to_move`` (None once the match is over) and ``self.decision`` (a word naming
      the kind of decision pending, e.g. "bid") whenever the turn changes;
    - ``_legal()`` returns the legal actions for ``seat_to_move`` in a fixed, documented order;
    - ``_apply(action)`` is only called with a legal action and appends events via ``self.emit``;
    - ``_explain(action)`` says why an action is illegal (the base class covers unknown actions);
    - ``_scores()`` gives final scores once over; ``HIGHER_IS_BETTER`` orders them.
    """

    SPEC: ClassVar[GameSpec]
    DECK: ClassVar[Deck]
    HIGHER_IS_BETTER: ClassVar[bool] = True

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

    # A seat's view as its values alone, for the referee, which encodes every view it sends at
    # once: VIEW_KEYS are the keys view(seat) has, in its order, while view_values(seat) gives
    # values for them (not None). The values are the state's own lists, not copies: read them
    # at once and neither keep nor change them. Games without the shortcut give None.
    VIEW_KEYS: ClassVar[tuple[str, ...] | None] = None

    def view_values(self, seat: int) -> tuple | None:
        """``view(seat)``'s values in VIEW_KEYS order (uncopied), or None: then use view()."""
        return None

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

    def _legal(self) -> list[str]:
        raise NotImplementedError

    def _apply(self, action: str) -> None:
        raise NotImplementedError

    def _explain(self, action: str) -> str:
        return ""

    def _scores(self) -> list[int]:
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
