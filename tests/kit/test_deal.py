"""The constrained dealer: exact counts, every consistent deal possible, uniform, never wrong."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from arena.kit import InconsistentDeal, count_deals, deal_uniform
from arena.kit import deal as deal_module


def brute_force(cards, sizes, forbidden):
    """Every assignment, by trying every permutation (small problems only)."""
    holders = list(sizes)
    found = set()
    for perm in itertools.permutations(cards):
        out, start = [], 0
        for h in holders:
            part = perm[start : start + sizes[h]]
            start += sizes[h]
            if set(part) & set(forbidden.get(h, ())):
                break
            out.append(frozenset(part))
        else:
            found.add(tuple(out))
    return found


PROBLEMS = [
    (list("abcdef"), {"x": 2, "y": 2, "z": 2}, {}),
    (list("abcdef"), {"x": 2, "y": 2, "z": 2}, {"x": {"a", "b", "c"}, "y": {"a"}}),
    (list("abcdefg"), {0: 3, 1: 1, "stock": 3}, {0: {"a", "b", "c", "d"}, 1: {"e", "f"}}),
    (list("abcdef"), {"x": 3, "y": 3}, {"x": {"a", "b", "c"}, "y": {"d", "e", "f"}}),
]


@pytest.mark.parametrize("cards, sizes, forbidden", PROBLEMS)
def test_counts_match_brute_force(cards, sizes, forbidden) -> None:
    assert count_deals(cards, sizes, forbidden) == len(brute_force(cards, sizes, forbidden))


@pytest.mark.parametrize("exact_only", [False, True])
@pytest.mark.parametrize("cards, sizes, forbidden", PROBLEMS[1:3])
def test_every_consistent_deal_is_drawn_about_equally_often(
    cards, sizes, forbidden, exact_only, monkeypatch
) -> None:
    if exact_only:  # skip the rejection stage: the dynamic programme alone must be uniform
        monkeypatch.setattr(deal_module, "REJECTION_TRIES", 0)
    rng = random.Random(5)
    possible = brute_force(cards, sizes, forbidden)
    draws = 300 * len(possible)
    seen: Counter = Counter()
    for _ in range(draws):
        out = deal_uniform(cards, sizes, forbidden, rng)
        for h, part in out.items():
            assert len(part) == sizes[h] and not set(part) & set(forbidden.get(h, ()))
        assert sorted(c for part in out.values() for c in part) == sorted(cards)
        seen[tuple(frozenset(out[h]) for h in sizes)] += 1
    assert set(seen) == possible
    # Each of the k deals is expected 300 times; a 5-sigma band for a binomial count.
    for count in seen.values():
        assert abs(count - 300) < 5 * (300 * (1 - 1 / len(possible))) ** 0.5


def test_a_contradiction_is_an_error_not_a_wrong_deal() -> None:
    with pytest.raises(InconsistentDeal):
        deal_uniform(list("abcd"), {"x": 2, "y": 2}, {"x": {"a", "b", "c"}}, random.Random(1))
    with pytest.raises(InconsistentDeal):
        deal_uniform(list("abc"), {"x": 2, "y": 2}, {}, random.Random(1))
    assert count_deals(list("abcd"), {"x": 2, "y": 2}, {"x": {"a", "b", "c"}}) == 0


def test_many_holders_and_heavy_constraints_stay_fast() -> None:
    """Eight Rounds with 8 players late in a round: 7 hidden hands, voids everywhere."""
    rng = random.Random(3)
    suits = "CDHS"
    cards = [f"{r}{s}" for s in suits for r in range(7)]
    sizes = {h: 4 for h in range(7)}
    forbidden = {h: {c for c in cards if c[-1] == suits[h % 4]} for h in range(6)}
    total = count_deals(cards, sizes, forbidden)
    assert total > 0
    for _ in range(200):
        out = deal_uniform(cards, sizes, forbidden, rng)
        assert all(not set(out[h]) & forbidden.get(h, set()) for h in sizes)
