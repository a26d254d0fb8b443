"""Who plays whom, in which seat, with which cards: the tournament schedule (pure, deterministic).

For each game the bots are split into **tables** (one group of bots, in seat order):

- at least as many bots as seats: every combination of bots when there are at most
  ``max_tables`` of them, else a balanced sample in which every bot sits at the same number of
  tables and every pair of bots meets about equally often;
- in team games (``team_size`` > 1, seat i on team ``i % teams``) every way of splitting a group
  into teams is its own table, so partners change between tables but never within one;
- fewer bots than seats: bots fill several seats, ``bots[(i + k) % n]`` at seat k of table i, so
  every bot holds the same number of seats overall.

Each table plays ``deals`` deals (one match seed each). With ``seating = "duplicate"`` every deal is
played once per **rotation**: rotation r moves the bot of seat k to seat (k + r) mod players, so the
bots at a table all hold every seat's cards in turn. Rotating by one seat keeps partners together
(seat parity flips for the whole team), so in team games the teams swap sides. With
``seating = "single"`` a deal is played once, in rotation ``deal mod players``.

Match ids are stable and readable, ``<label>/t<table>/d<deal>/r<rotation>``; the match seed is
``derive_seed(tournament seed, "<label>/t<table>/d<deal>")``, shared by the rotations of a deal.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games.cards import Rng, derive_seed

SEATINGS = ("duplicate", "single")
DEFAULT_MAX_TABLES = 24
SWAP_ATTEMPTS = 2000  # local search steps per try when sampling tables
SAMPLE_TRIES = 8  # independent tries; the most even one is kept


@dataclass(frozen=True)
class GamePlan:
    """One game of a tournament as the schedule needs it (validated by the config module)."""

    label: str  # unique in the tournament; the game id unless given
    game_id: str
    players: int
    deals: int = 2
    options: Mapping[str, Any] = field(default_factory=dict)
    team_size: int = 1
    max_tables: int = DEFAULT_MAX_TABLES


@dataclass(frozen=True)
class ScheduledMatch:
    """One match to play: a deal of a table in one seat rotation."""

    match_id: str
    game: str  # the game's label
    game_id: str
    players: int
    options: Mapping[str, Any]
    table: int
    deal: int
    rotation: int
    seed: int
    seats: tuple[str, ...]  # bot name per seat


def deal_seed(tournament_seed: int, label: str, table: int, deal: int) -> int:
    return derive_seed(tournament_seed, f"{label}/t{table}/d{deal}")


def match_id(label: str, table: int, deal: int, rotation: int) -> str:
    return f"{label}/t{table}/d{deal}/r{rotation}"


def rotate(table: Sequence[str], rotation: int) -> tuple[str, ...]:
    """Seat k of the result holds the bot that sat at seat (k - rotation) mod n."""
    n = len(table)
    return tuple(table[(k - rotation) % n] for k in range(n))


def team_splits(group: Sequence[str], players: int, team_size: int) -> list[tuple[str, ...]]:
    """Every way to seat ``group`` as teams (team of seat i is i % teams), one seating per split.

    Splits are unordered sets of teams; the team holding ``group[0]`` sits on the even side.
    """
    if team_size <= 1:
        return [tuple(group)]
    teams = players // team_size
    splits: list[list[list[str]]] = []

    def extend(rest: list[str], chosen: list[list[str]]) -> None:
        if not rest:
            splits.append(chosen)
            return
        first, others = rest[0], rest[1:]
        for mates in itertools.combinations(others, team_size - 1):
            team = [first, *mates]
            extend([b for b in others if b not in mates], [*chosen, team])

    extend(list(group), [])
    seatings = []
    for split in splits:
        seats = [""] * players
        for t, team in enumerate(split):
            for j, bot in enumerate(team):
                seats[t + j * teams] = bot
        seatings.append(tuple(seats))
    return seatings


def _canonical_rotation(table: tuple[str, ...]) -> tuple[str, ...]:
    return min(rotate(table, r) for r in range(len(table)))


def tables_for(bots: Sequence[str], plan: GamePlan, rng: Rng) -> list[tuple[str, ...]]:
    """The tables of one game, each a tuple of bot names in seat order (before rotation)."""
    n = plan.players
    if len(bots) < n:
        tables: list[tuple[str, ...]] = []
        seen: set[tuple[str, ...]] = set()
        for i in range(len(bots)):
            table = tuple(bots[(i + k) % len(bots)] for k in range(n))
            key = _canonical_rotation(table)
            if key not in seen:  # with len(bots) dividing n, all are rotations of the first
                seen.add(key)
                tables.append(table)
        return tables
    groups = list(itertools.combinations(bots, n))
    splits_per_group = len(team_splits(groups[0], n, plan.team_size))
    if len(groups) * splits_per_group <= plan.max_tables:
        return [seating for group in groups for seating in team_splits(group, n, plan.team_size)]
    return _balanced_sample(bots, plan, rng)


def sample_size(bot_count: int, players: int, max_tables: int) -> int:
    """The number of sampled tables: a multiple of ``bot_count / gcd(bot_count, players)``, so that
    every bot can sit at the same number of tables; the largest not above ``max_tables``, if any."""
    step = bot_count // math.gcd(bot_count, players)
    return max(step, (max_tables // step) * step)


def _balanced_sample(bots: Sequence[str], plan: GamePlan, rng: Rng) -> list[tuple[str, ...]]:
    """Balanced groups of bots, each seated in the team split that repeats partnerships least."""
    partners: Counter[frozenset[str]] = Counter()
    tables = []
    size = sample_size(len(bots), plan.players, plan.max_tables)
    tries = [
        _balanced_groups(bots, plan.players, size, Rng(rng.next())) for _ in range(SAMPLE_TRIES)
    ]
    for group in min(tries, key=lambda groups: _pair_spread(bots, groups)):
        seatings = team_splits(group, plan.players, plan.team_size)
        seating = min(seatings, key=lambda s: _partner_repeats(s, plan, partners))
        for team in _teams_of(seating, plan):
            for a, b in itertools.combinations(team, 2):
                partners[frozenset((a, b))] += 1
        tables.append(seating)
    return tables


def _pair_spread(bots: Sequence[str], groups: Sequence[Sequence[str]]) -> tuple[int, int]:
    """(max - min meetings over all pairs, sum of squared meetings): smaller is more even."""
    meets = Counter(frozenset(p) for g in groups for p in itertools.combinations(g, 2))
    counts = [meets[frozenset(p)] for p in itertools.combinations(bots, 2)]
    return max(counts) - min(counts), sum(c * c for c in counts)


def _balanced_groups(bots: Sequence[str], n: int, size: int, rng: Rng) -> list[list[str]]:
    """``size`` groups of ``n`` bots in which every bot plays equally often (when ``size * n`` is a
    multiple of the number of bots) and pair meetings are spread as evenly as the search finds.

    Greedy first: each group takes the bots that have played least (so play counts never differ by
    more than one and end equal), preferring those that have met the chosen ones least. Then swaps
    of two bots between two groups, which keep every play count, are kept when they lower the sum
    of squared pair counts (the same total spread more evenly), or keep it equal.
    """
    plays: Counter[str] = Counter({b: 0 for b in bots})
    meets: Counter[frozenset[str]] = Counter()
    groups: list[list[str]] = []
    for _ in range(size):
        order = list(bots)
        rng.shuffle(order)  # random tie-breaks, stable for a seed
        low = min(plays.values())
        must = [b for b in order if plays[b] == low]
        chosen: list[str] = []
        while len(chosen) < n:
            pool = must if must else [b for b in order if b not in chosen]
            best = min(
                pool, key=lambda b: (sum(meets[frozenset((b, c))] for c in chosen), plays[b])
            )
            chosen.append(best)
            if best in must:
                must.remove(best)
        for a, b in itertools.combinations(chosen, 2):
            meets[frozenset((a, b))] += 1
        for b in chosen:
            plays[b] += 1
        groups.append(chosen)
    if size < 2:
        return groups
    for _ in range(SWAP_ATTEMPTS):
        gi, gj = rng.below(size), rng.below(size)
        if gi == gj:
            continue
        x, y = rng.choice(groups[gi]), rng.choice(groups[gj])
        if x in groups[gj] or y in groups[gi]:
            continue
        rest_i = [b for b in groups[gi] if b != x]
        rest_j = [b for b in groups[gj] if b != y]
        removed = [frozenset((x, b)) for b in rest_i] + [frozenset((y, b)) for b in rest_j]
        added = [frozenset((y, b)) for b in rest_i] + [frozenset((x, b)) for b in rest_j]
        change = Counter(added)
        change.subtract(removed)
        delta = sum((meets[p] + d) ** 2 - meets[p] ** 2 for p, d in change.items() if d)
        if delta <= 0:  # sideways moves cross plateaus
            meets.update({p: d for p, d in change.items() if d})
            groups[gi] = [y if b == x else b for b in groups[gi]]
            groups[gj] = [x if b == y else b for b in groups[gj]]
    return groups


def _teams_of(seating: Sequence[str], plan: GamePlan) -> list[list[str]]:
    if plan.team_size <= 1:
        return []
    teams = plan.players // plan.team_size
    return [[seating[s] for s in range(t, plan.players, teams)] for t in range(teams)]


def _partner_repeats(
    seating: Sequence[str], plan: GamePlan, partners: Counter[frozenset[str]]
) -> int:
    return sum(
        partners[frozenset((a, b))]
        for team in _teams_of(seating, plan)
        for a, b in itertools.combinations(team, 2)
    )


def build_schedule(
    seed: int, bots: Sequence[str], games: Sequence[GamePlan], seating: str = "duplicate"
) -> list[ScheduledMatch]:
    """Every match of the tournament, ordered deal by deal across the games (so early standings
    cover every game) and with the rotations of one deal next to each other."""
    if seating not in SEATINGS:
        raise ValueError(f"seating {seating!r}: expected one of {', '.join(SEATINGS)}")
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise ValueError("a schedule needs at least two bots with distinct names")
    keyed = []
    for game_index, plan in enumerate(games):
        rng = Rng(derive_seed(seed, f"{plan.label}/tables"))
        for t, table in enumerate(tables_for(bots, plan, rng)):
            for deal in range(plan.deals):
                s = deal_seed(seed, plan.label, t, deal)
                if seating == "duplicate":
                    rotations = range(plan.players)
                else:
                    rotations = range(deal % plan.players, deal % plan.players + 1)
                for r in rotations:
                    match = ScheduledMatch(
                        match_id=match_id(plan.label, t, deal, r),
                        game=plan.label,
                        game_id=plan.game_id,
                        players=plan.players,
                        options=dict(plan.options),
                        table=t,
                        deal=deal,
                        rotation=r,
                        seed=s,
                        seats=rotate(table, r),
                    )
                    keyed.append(((deal, game_index, t, r), match))
    keyed.sort(key=lambda pair: pair[0])
    return [match for _, match in keyed]
