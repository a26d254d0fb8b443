"""The game registry: every game the arena can referee, found by id or alias.

Adding a game: write ``arena/games/<game>.py`` with a ``SPEC`` (a :class:`GameSpec`), import it
below, and add a golden playthrough (``python -m pytest tests/games --update-golden``).
"""

from __future__ import annotations

from . import all_fours, alles_oder_nichts, eight_rounds, vingt_down
from .cards import Dealer, Deck, Rng
from .core import Event, GameError, GameSpec, GameState, IllegalAction, Option, OptionError, Result

GAMES: dict[str, GameSpec] = {
    spec.id: spec
    for spec in (
        alles_oder_nichts.SPEC,
        vingt_down.SPEC,
        eight_rounds.SPEC,
        all_fours.SPEC,
    )
}

_BY_NAME: dict[str, GameSpec] = {}
for _spec in GAMES.values():
    for _name in (_spec.id, *_spec.aliases):
        _BY_NAME[_name] = _spec


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
