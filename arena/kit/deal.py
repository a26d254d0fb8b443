"""Deal cards to holders with exact sizes and forbidden cards, uniformly over every way to do it.

``deal_uniform(cards, sizes, forbidden, rng)`` returns one assignment drawn uniformly from all
assignments of ``cards`` to the holders such that holder ``h`` gets exactly ``sizes[h]`` cards and
none of ``forbidden[h]`` (a void suit shown, a card it cannot hold).

How: first plain rejection (shuffle, cut, check), which is exactly uniform whenever it succeeds
and fast when the constraints are loose. After a few failures it switches to an exact sampler:
cards are grouped by the set of holders that may hold them, the number of ways to fill the
remaining holders from every (holder, cards left per group) is counted by dynamic programming,
and holder by holder the number it takes of each group is drawn with probability proportional to
its completions (then which cards of the group, uniformly). Both stages draw from the same uniform
distribution, so their mixture is uniform too. The counts depend only on the constraints, so they
are cached and a bot sampling many worlds for one decision pays for them once.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from functools import cache, lru_cache
from math import comb
from typing import Any

REJECTION_TRIES = 12


class InconsistentDeal(ValueError):
    """No assignment satisfies the sizes and constraints (the knowledge contradicts itself)."""


def deal_uniform(
    cards: Iterable[str],
    sizes: Mapping[Any, int],
    forbidden: Mapping[Any, Iterable[str]],
    rng: random.Random,
) -> dict[Any, list[str]]:
    """A uniformly drawn assignment of ``cards`` to the holders of ``sizes`` (see the module)."""
    pool = list(cards)
    holders = list(sizes)
    if sum(sizes.values()) != len(pool) or any(size < 0 for size in sizes.values()):
        raise InconsistentDeal(f"{len(pool)} cards cannot fill holders of sizes {dict(sizes)}")
    banned = {h: frozenset(forbidden.get(h, ())) for h in holders}
    constrained = [h for h in holders if banned[h] and sizes[h]]
    for _ in range(REJECTION_TRIES if constrained else 1):
        rng.shuffle(pool)
        out: dict[Hashable, list[str]] = {}
        start = 0
        for h in holders:
            out[h] = pool[start : start + sizes[h]]
            start += sizes[h]
        if all(banned[h].isdisjoint(out[h]) for h in constrained):
            return out
    return _exact(pool, holders, sizes, banned, rng)


def count_deals(
    cards: Iterable[str], sizes: Mapping[Any, int], forbidden: Mapping[Any, Iterable[str]]
) -> int:
    """How many assignments ``deal_uniform`` chooses among (0 when none is possible)."""
    pool = sorted(cards)
    holders = list(sizes)
    if sum(sizes.values()) != len(pool):
        return 0
    banned = {h: frozenset(forbidden.get(h, ())) for h in holders}
    holders = sorted(holders, key=lambda h: (-len(banned[h]), sizes[h]))
    groups, caps, _, _ = _problem(pool, holders, sizes, banned)
    return _counter(groups, caps)[0](0, tuple(k for k, _ in groups))


def _problem(pool, holders, sizes, banned):
    """Cards grouped by who may hold them: ((group size, allowed holder indices), ...), caps,
    and the group keys with their cards."""
    by_allowed: dict[tuple[int, ...], list[str]] = {}
    for card in pool:
        allowed = tuple(i for i, h in enumerate(holders) if card not in banned[h])
        by_allowed.setdefault(allowed, []).append(card)
    keys = sorted(by_allowed, key=lambda k: (len(by_allowed[k]), k))
    groups = tuple((len(by_allowed[k]), k) for k in keys)
    return groups, tuple(sizes[h] for h in holders), by_allowed, keys


def _takes(need: int, allowed: Sequence[int], left: tuple[int, ...]):
    """Every way to take ``need`` cards from the ``allowed`` groups with ``left`` cards each:
    tuples of (group index, how many)."""
    if not allowed:
        if need == 0:
            yield ()
        return
    first, rest = allowed[0], allowed[1:]
    room_after = sum(left[g] for g in rest)
    for n in range(max(0, need - room_after), min(need, left[first]) + 1):
        for tail in _takes(need - n, rest, left):
            yield ((first, n), *tail) if n else tail


@lru_cache(maxsize=64)
def _counter(groups: tuple[tuple[int, tuple[int, ...]], ...], caps: tuple[int, ...]):
    """Completion counts, holder by holder: ``count(h, left)`` is the number of ways to fill
    holders h.. from the cards ``left`` in each group (which specific cards counts)."""
    holders = len(caps)
    allowed_groups = [
        tuple(g for g, (_, allowed) in enumerate(groups) if h in allowed) for h in range(holders)
    ]
    last = holders - 1

    @cache
    def count(h: int, left: tuple[int, ...]) -> int:
        if h > last:
            return 1 if not any(left) else 0
        if h == last:  # forced: this holder takes every card left
            if sum(left) != caps[h] or any(
                n and g not in allowed_groups[h] for g, n in enumerate(left)
            ):
                return 0
            return 1
        total = 0
        for take in _takes(caps[h], allowed_groups[h], left):
            ways = 1
            rest = list(left)
            for g, n in take:
                ways *= comb(left[g], n)
                rest[g] -= n
            total += ways * count(h + 1, tuple(rest))
        return total

    return count, allowed_groups


def _exact(pool, holders, sizes, banned, rng: random.Random) -> dict[Hashable, list[str]]:
    # Holders with the most constraints first and an unconstrained one last (its share is
    # forced), so the branching happens where the choices are few.
    holders = sorted(holders, key=lambda h: (-len(banned[h]), sizes[h]))
    pool = sorted(pool)
    groups, caps, by_allowed, keys = _problem(pool, holders, sizes, banned)
    count, allowed_groups = _counter(groups, caps)
    left = tuple(k for k, _ in groups)
    if count(0, left) == 0:
        raise InconsistentDeal(
            "no deal agrees with every constraint: sizes "
            f"{dict(sizes)}, forbidden { ({h: sorted(b) for h, b in banned.items() if b}) }"
        )
    cards = [list(by_allowed[key]) for key in keys]
    for group in cards:
        rng.shuffle(group)  # then each holder takes from the front: a uniform subset
    out: dict[Hashable, list[str]] = {}
    for h, holder in enumerate(holders):
        if h == len(holders) - 1:
            chosen = tuple((g, n) for g, n in enumerate(left) if n)
        else:
            target = rng.randrange(count(h, left))
            for take in _takes(caps[h], allowed_groups[h], left):
                ways = 1
                rest = list(left)
                for g, n in take:
                    ways *= comb(left[g], n)
                    rest[g] -= n
                weight = ways * count(h + 1, tuple(rest))
                if target < weight:
                    chosen = take
                    break
                target -= weight
        mine: list[str] = []
        rest = list(left)
        for g, n in chosen:
            start = len(cards[g]) - rest[g]
            mine.extend(cards[g][start : start + n])
            rest[g] -= n
        out[holder] = mine
        left = tuple(rest)
    return out
