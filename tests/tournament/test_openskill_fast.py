"""arena/tournament/openskill_fast.py, the one module that calls openskill's internals: its
self-check passes on the installed openskill and catches an update that gives other bits, and the
public path it then takes gives the same standings to the last bit."""

from __future__ import annotations

import random

from arena.tournament import openskill_fast
from arena.tournament.standings import OVERALL, compute_standings
from tests.tournament.test_standings import played


def test_the_installed_openskill_passes_the_self_check():
    assert openskill_fast.problem() is None, openskill_fast.problem()


def test_the_self_check_catches_an_update_with_other_bits(monkeypatch):
    # (A step of rate's taken a little differently: the bits differ in the last place.)
    monkeypatch.setattr(openskill_fast, "_TAU_SQUARED", openskill_fast._TAU_SQUARED * (1 + 1e-15))
    assert openskill_fast._self_check() == "PlackettLuce._compute no longer gives what rate gives"
    monkeypatch.undo()
    assert openskill_fast._self_check() is None
    monkeypatch.delattr(type(openskill_fast.MODEL), "_compute")
    assert "AttributeError" in (openskill_fast._self_check() or "")


def _matches(seed: int) -> list:
    """A round robin's worth of seeded matches: four bots, ties, teams, forfeits."""
    rng = random.Random(seed)
    found = []
    for number in range(60):
        bots = rng.sample("abcde", 4)
        if number % 3 == 0:  # a team game: seats 0 and 2 against 1 and 3
            first = rng.choice((1, 2))
            placings = (first, 3 - first, first, 3 - first)
            found.append(
                played(number, bots, (1, 0, 1, 0), placings, game="af", teams=(0, 1, 0, 1))
            )
        else:
            placings = tuple(rng.choice((1, 2, 2, 3, 4)) for _ in bots)
            forfeited = (rng.randrange(4),) if rng.random() < 0.1 else ()
            found.append(played(number, bots, placings, placings, forfeited=forfeited))
    return found


def _ratings(standings) -> dict:
    return {
        scope: [(row.bot, row.mu.hex(), row.sigma.hex()) for row in rows]
        for scope, rows in standings.tables.items()
    }


def test_the_public_path_gives_the_same_standings_to_the_last_bit(monkeypatch):
    for seed in range(3):
        matches = _matches(seed)
        fast = _ratings(compute_standings(matches))
        with monkeypatch.context() as forced:
            forced.setattr(openskill_fast, "_problem", "forced off by a test")
            forced.setattr(openskill_fast, "_rate_in_place", None)  # (never called now)
            public = _ratings(compute_standings(matches))
        assert fast == public
        assert len(fast[OVERALL]) == 5
