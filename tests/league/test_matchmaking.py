"""The matchmaker's rule (SPEC.md 12.4), case by case, and a small seeded simulation: it ranks a
known field right in fewer deal-sets than uniform round robin (the full figures:
benchmarks/league_matchmaking.py)."""

from __future__ import annotations

import statistics

from arena.league.matchmaking import NEW_DEALSETS, Entrant, choose_table, misorder_chance
from arena.league.simulation import simulate


def test_fewer_versions_than_seats_make_no_table() -> None:
    assert choose_table([Entrant("a", 25, 8, 0), Entrant("b", 25, 8, 0)], 3) is None


def test_a_new_version_comes_first() -> None:
    settled = [Entrant(f"old{i}", 20 + 3 * i, 1.0, 40) for i in range(5)]
    new = Entrant("new", 25.0, 8.3, NEW_DEALSETS - 1)
    table = choose_table([*settled, new], 3)
    assert table is not None and table[0] == "new"
    # its opponents: the versions rated nearest it
    assert set(table[1:]) == {"old1", "old2"}


def test_a_starved_version_gets_its_fair_share() -> None:
    field = [Entrant(f"v{i}", 20 + 5 * i, 1.0, 40) for i in range(4)]
    field.append(Entrant("starved", 40.0, 1.0, 10))  # past new, under half the mean
    table = choose_table(field, 3)
    assert table is not None and table[0] == "starved"


def test_the_least_separated_neighbours_are_the_anchor() -> None:
    field = [
        Entrant("top", 40.0, 1.0, 30),
        Entrant("close-a", 30.0, 2.0, 30),
        Entrant("close-b", 29.5, 2.0, 30),
        Entrant("bottom", 10.0, 1.0, 30),
    ]
    table = choose_table(field, 3)
    assert table is not None and table[:2] == ("close-a", "close-b")
    assert misorder_chance(field[1], field[2]) > misorder_chance(field[0], field[1])


def test_equal_uncertainty_prefers_the_pair_that_met_least() -> None:
    field = [Entrant(name, mu, 1.0, 30) for name, mu in (("a", 30), ("b", 29), ("c", 28))]
    met = {frozenset(("a", "b")): 9, frozenset(("b", "c")): 1}
    table = choose_table(field, 2, met)
    assert table == ("b", "c")


def test_it_ranks_a_known_field_in_fewer_dealsets_than_round_robin() -> None:
    strengths = [0.0, 0.6, 1.2, 1.8, 2.4, 3.0]
    needed = {
        policy: [
            simulate(strengths, players=3, dealsets=240, policy=policy, seed=seed)
            for seed in range(10)
        ]
        for policy in ("matchmaker", "round-robin")
    }
    assert statistics.mean(needed["matchmaker"]) < statistics.mean(needed["round-robin"])
    # right at the end in at least as many seeds
    right = {policy: sum(n <= 240 for n in runs) for policy, runs in needed.items()}
    assert right["matchmaker"] >= right["round-robin"]
