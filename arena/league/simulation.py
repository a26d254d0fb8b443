"""A seeded simulation of a league: a known field of versions, each deal-set's results drawn
from their true strengths, rated as the ladder rates them (OpenSkill, Plackett-Luce), tables
chosen by the league's matchmaker or by uniform round robin. It measures how many deal-sets
each needs before the ranking is right and stays right (benchmarks/league_matchmaking.py).

A deal-set is duplicate: seat ``k``'s cards bring the same luck to whoever holds them in every
rotation, and each match adds noise of its own.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Sequence

from openskill.models import PlackettLuce

from arena.league.matchmaking import Entrant, choose_table

POLICIES = ("matchmaker", "round-robin")


def _round_robin(
    labels: Sequence[str], players: int, rng: random.Random
) -> Iterator[tuple[str, ...]]:
    tables = list(itertools.combinations(labels, players))
    while True:
        rng.shuffle(tables)
        yield from tables


def simulate(
    strengths: Sequence[float],
    *,
    players: int,
    dealsets: int,
    policy: str,
    seed: int,
    luck: float = 1.0,
    noise: float = 1.0,
) -> int:
    """Deal-sets played until the ranking by rating was right at every later deal-set up to
    ``dealsets`` (``dealsets + 1``: not right at the end)."""
    rng = random.Random(seed)
    labels = [f"v{i}" for i in range(len(strengths))]
    strength = dict(zip(labels, strengths, strict=True))
    truth = sorted(labels, key=lambda label: -strength[label])
    model = PlackettLuce()
    ratings = {label: model.rating(name=label) for label in labels}
    played: Counter[str] = Counter()
    meetings: Counter[frozenset[str]] = Counter()
    round_robin = _round_robin(labels, players, rng)
    right_since = dealsets + 1
    for index in range(1, dealsets + 1):
        if policy == "matchmaker":
            entrants = [
                Entrant(label, ratings[label].mu, ratings[label].sigma, played[label])
                for label in labels
            ]
            table = choose_table(entrants, players, meetings)
            assert table is not None
        else:
            table = next(round_robin)
        seat_luck = [rng.gauss(0, luck) for _ in range(players)]
        for rotation in range(players):
            seats = table[rotation:] + table[:rotation]
            performance = [
                strength[bot] + seat_luck[seat] + rng.gauss(0, noise)
                for seat, bot in enumerate(seats)
            ]
            order = sorted(range(players), key=lambda seat: -performance[seat])
            ranks = [0.0] * players
            for place, seat in enumerate(order):
                ranks[seat] = place + 1.0
            rated = model.rate([[ratings[bot]] for bot in seats], ranks=ranks)
            for bot, (rating,) in zip(seats, rated, strict=True):
                ratings[bot] = rating
        for bot in table:
            played[bot] += 1
        for a, b in itertools.combinations(table, 2):
            meetings[frozenset((a, b))] += 1
        ranking = sorted(labels, key=lambda label: -ratings[label].mu)
        if ranking != truth:
            right_since = dealsets + 1
        elif right_since > dealsets:
            right_since = index
    return right_since
