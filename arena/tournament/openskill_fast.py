"""openskill's Plackett-Luce update, and the one module that calls openskill's internals.

:func:`rate` is the standings fold's update: bit for bit what ``PlackettLuce.rate`` gives
(:func:`rate_public`), by the steps ``rate`` takes (tau added to sigma, the teams sorted by rank,
then the model's private ``_compute``) on model objects reused across calls. Why it exists:
``rate`` makes a new rating object per player and per copy, each drawing a uuid4 from the OS
(~0.5 us each), which a fold of a large tournament pays per match and scope
(benchmarks/standings_fold.py).

At import a self-check rates a few fixed matches both ways and compares the bits. Where they
differ, or the installed openskill has no ``_compute``, :func:`rate` takes ``rate_public`` and the
arena says so once on stderr. tests/tournament/test_openskill_fast.py ties the two paths; no other
module of the arena may call a private name of openskill (tests/test_layout.py).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import openskill
from openskill.models import PlackettLuce, PlackettLuceRating

Rating = tuple[float, float]  # mu, sigma

MODEL = PlackettLuce()
DEFAULT_RATING: Rating = (MODEL.mu, MODEL.sigma)
_TAU_SQUARED = MODEL.tau * MODEL.tau  # as PlackettLuce.rate squares it


def rate_public(teams: list[list[Rating | None]], ranks: Sequence[float]) -> list[list[Rating]]:
    """The new rating of every player of ``teams`` (None: not rated yet) after a match in which
    team i placed ``ranks[i]`` (lower is better, equal is a tie), by openskill's public ``rate``."""
    rated = MODEL.rate(
        [[MODEL.rating(*(rating or DEFAULT_RATING)) for rating in team] for team in teams],
        ranks=list(ranks),
    )
    return [[(player.mu, player.sigma) for player in team] for team in rated]


def _rate_in_place(
    players: list[PlackettLuceRating], teams: list[list[Rating | None]], ranks: Sequence[float]
) -> list[list[Rating]]:
    """:func:`rate_public`'s answer by ``rate``'s own steps on ``players``, model objects reused
    across calls (grown as needed)."""
    needed = sum(len(team) for team in teams)
    while len(players) < needed:
        players.append(MODEL.rating())
    objects: list[list[PlackettLuceRating]] = []
    used = 0
    for team in teams:
        side = players[used : used + len(team)]
        used += len(team)
        for player, rating in zip(side, team, strict=True):
            mu, sigma = rating or DEFAULT_RATING
            player.mu = mu
            player.sigma = math.sqrt(sigma * sigma + _TAU_SQUARED)
        objects.append(side)
    order = sorted(range(len(teams)), key=ranks.__getitem__)  # stable, as rate's sort
    MODEL._compute(teams=[objects[i] for i in order], ranks=sorted(ranks))  # updates in place
    return [[(player.mu, player.sigma) for player in side] for side in objects]


# Fixed matches of every kind the fold rates: ties, teams of several, new and rated players.
_CHECKS: list[tuple[list[list[Rating | None]], list[float]]] = [
    ([[None], [None]], [1.0, 2.0]),
    ([[(27.5, 6.1)], [None], [(19.0, 2.5)], [(25.0, 8.0)]], [2.0, 1.0, 2.0, 4.0]),
    ([[(30.0, 4.0), None], [(22.0, 7.5), (24.0, 1.0)]], [2.0, 1.0]),
    ([[(-3.0, 0.5)], [(55.0, 8.9)], [(25.0, 3.0)]], [1.5, 1.5, 3.0]),
]


def _self_check() -> str | None:
    """None when the in-place update gives rate's bits on the fixed matches; else why not."""
    players: list[PlackettLuceRating] = []
    try:
        for teams, ranks in _CHECKS:
            if _rate_in_place(players, teams, ranks) != rate_public(teams, ranks):
                return "PlackettLuce._compute no longer gives what rate gives"
    except (AttributeError, TypeError, ValueError) as error:
        return f"PlackettLuce's internals differ ({type(error).__name__}: {error})"
    return None


_problem = _self_check()
if _problem is not None:
    print(
        f"arena: openskill {getattr(openskill, '__version__', '?')}: {_problem}; the standings "
        "take openskill's public rate (the same ratings, slower)",
        file=sys.stderr,
    )


def problem() -> str | None:
    """Why :func:`rate` takes openskill's public path in this process, or None."""
    return _problem


def rate(
    players: list[PlackettLuceRating], teams: list[list[Rating | None]], ranks: Sequence[float]
) -> list[list[Rating]]:
    """:func:`rate_public`'s answer, on ``players`` (the caller's model objects, reused across
    calls) where the self-check passed."""
    if _problem is None:
        return _rate_in_place(players, teams, ranks)
    return rate_public(teams, ranks)


__all__ = ["DEFAULT_RATING", "MODEL", "Rating", "problem", "rate", "rate_public"]
