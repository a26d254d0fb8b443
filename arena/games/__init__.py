"""The game registry: every game the arena can referee, found by id or alias.

Adding a game: write ``arena/games/<game>.py`` with a ``SPEC`` (a :class:`GameSpec` whose state
class gives the hooks :class:`GameState` declares), import it below and name it in the tuple
passed to :func:`register`, and add a golden playthrough (``python -m pytest tests/games
--update-golden``). Nothing else in the arena names a game: the referee, the check, the replay,
the kit, the standings and the web pages work for every registered game.
"""

from __future__ import annotations

from . import all_fours, alles_oder_nichts, eight_rounds, vingt_down
from .cards import Dealer, Deck, Rng
from .core import Event, GameError, GameSpec, GameState, IllegalAction, Option, OptionError, Result

GAMES: dict[str, GameSpec] = {}
_BY_NAME: dict[str, GameSpec] = {}


def register(*specs: GameSpec) -> None:
    """Add games to the registry, in this order; a name (id or alias, any case) already taken
    raises OptionError and adds none of them."""
    names = [name.lower() for spec in specs for name in (spec.id, *spec.aliases)]
    taken = sorted({name for name in names if name in _BY_NAME or names.count(name) > 1})
    if taken:
        raise OptionError(f"game names already taken: {', '.join(taken)}")
    for spec in specs:
        GAMES[spec.id] = spec
        for name in (spec.id, *spec.aliases):
            _BY_NAME[name.lower()] = spec


def unregister(game_id: str) -> None:
    """Take a game out of the registry (a test's own game, when the test is done)."""
    spec = GAMES.pop(game_id)
    for name in (spec.id, *spec.aliases):
        del _BY_NAME[name.lower()]


register(alles_oder_nichts.SPEC, vingt_down.SPEC, eight_rounds.SPEC, all_fours.SPEC)


def find_game(name: str) -> GameSpec:
    """The game called ``name`` (its id or an alias, any case); OptionError names the known ones."""
    spec = _BY_NAME.get(name.strip().lower())
    if spec is None:
        known = ", ".join(GAMES)
        raise OptionError(f"unknown game {name!r} (games: {known})")
    return spec


__all__ = [
    "GAMES",
    "find_game",
    "register",
    "unregister",
    "Dealer",
    "Deck",
    "Rng",
    "Event",
    "GameError",
    "GameSpec",
    "GameState",
    "IllegalAction",
    "Option",
    "OptionError",
    "Result",
]
