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

import hashlib
import hmac
import itertools
import json
import math
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

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
    # a deal set (SPEC 10.3, ``deals_from``): deal d of every table is dealt from the d-th seed
    deal_seeds: tuple[int, ...] = ()
    # a gauntlet (SPEC 10.2): only the tables where one of these bots sits are played
    gauntlet: tuple[str, ...] = ()


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
    key: str = ""  # what the match is, by content (match_key); "" until the config keys it
    sent_id: str = ""  # the match id the bots are sent (sent_match_id); "" until the run sets it


def deal_seed(tournament_seed: int, label: str, table: int, deal: int) -> int:
    return derive_seed(tournament_seed, f"{label}/t{table}/d{deal}")


def match_id(label: str, table: int, deal: int, rotation: int) -> str:
    return f"{label}/t{table}/d{deal}/r{rotation}"


class Dealt(Protocol):
    """What decides a match's deal and seats: a scheduled match, or a stored one."""

    @property
    def game_id(self) -> str: ...
    @property
    def players(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def rotation(self) -> int: ...


def sent_match_id(secret: bytes, match: Dealt) -> str:
    """The match id the bots are sent (SPEC 4.1): 16 hex digits of an HMAC-SHA256, keyed with
    the tournament's secret (kept in its results file), of the game, players, deal seed and
    rotation. Opaque: a bot learns nothing of the schedule or the seed from it. The table is
    left out, so that ``arena compare``'s two copies of a deal, at tables t and T + t with the
    same seed, are sent the same id. (The options are left out too: the seed already differs
    between the games of a tournament, and a stored match's options are resolved where a
    scheduled one's are as written.)"""
    content = {
        "game": match.game_id,
        "players": match.players,
        "seed": match.seed,
        "rotation": match.rotation,
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:16]


def split_match_id(match_id_: str) -> tuple[str, int, int, int] | None:
    """(game label, table, deal, rotation) of a match id as :func:`match_id` spells it, None
    for anything else (a non-canonical spelling, e.g. "t01", is no match's id)."""
    label, _, rest = match_id_.rpartition("/t")
    try:
        table_s, deal_s, rotation_s = rest.split("/")
        table, deal, rotation = int(table_s), int(deal_s[1:]), int(rotation_s[1:])
    except ValueError:
        return None
    if match_id(label, table, deal, rotation) != match_id_:
        return None
    return label, table, deal, rotation


def match_key(
    match: ScheduledMatch,
    identities: Mapping[str, str],
    time_control: Mapping[str, Any],
    max_faults: int,
) -> str:
    """A match's identity by what it is, not where it sits in the schedule: game label and id,
    players, options, the bots in seat order (each by its identity: definition and program
    hash), deal seed, rotation, time control and fault policy. A grown tournament keeps every
    stored match whose key is still in its schedule."""
    content = {
        "game": match.game,
        "game_id": match.game_id,
        "players": match.players,
        "options": dict(match.options),
        "seats": [identities.get(name, name) for name in match.seats],
        "seed": match.seed,
        "rotation": match.rotation,
        "time": dict(time_control),
        "max_faults": max_faults,
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


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
    splits_per_group = len(team_splits(bots[:n], n, plan.team_size))
    if math.comb(len(bots), n) * splits_per_group <= plan.max_tables:
        return [
            seating
            for group in itertools.combinations(bots, n)
            for seating in team_splits(group, n, plan.team_size)
        ]
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
        _balanced_groups(len(bots), plan.players, size, Rng(rng.next()))
        for _ in range(SAMPLE_TRIES)
    ]
    best = min(tries, key=lambda found: _pair_spread(len(bots), found[1]))[0]
    for group in ([bots[b] for b in indices] for indices in best):
        seatings = team_splits(group, plan.players, plan.team_size)
        seating = min(seatings, key=lambda s: _partner_repeats(s, plan, partners))
        for team in _teams_of(seating, plan):
            for a, b in itertools.combinations(team, 2):
                partners[frozenset((a, b))] += 1
        tables.append(seating)
    return tables


def _pair_spread(bot_count: int, meets: list[list[int]]) -> tuple[int, int]:
    """(max - min meetings over all pairs, sum of squared meetings): smaller is more even."""
    counts = [meets[a][b] for a in range(bot_count) for b in range(a + 1, bot_count)]
    return max(counts) - min(counts), sum(c * c for c in counts)


def _balanced_groups(
    bot_count: int, n: int, size: int, rng: Rng
) -> tuple[list[list[int]], list[list[int]]]:
    """``size`` groups of ``n`` bots (by index) in which every bot plays equally often (when
    ``size * n`` is a multiple of the number of bots) and pair meetings are spread as evenly as
    the search finds; returned with the matrix of pair meetings.

    Greedy first: each group takes the bots that have played least (so play counts never differ by
    more than one and end equal), preferring those that have met the chosen ones least. Then swaps
    of two bots between two groups, which keep every play count, are kept when they lower the sum
    of squared pair counts (the same total spread more evenly), or keep it equal.

    The swap loop is the schedule's hot spot (2,000 steps per try), so it works on bot indices,
    a meetings matrix and group bitmasks.
    """
    plays = [0] * bot_count
    meets = [[0] * bot_count for _ in range(bot_count)]
    groups: list[list[int]] = []
    for _ in range(size):
        order = list(range(bot_count))
        rng.shuffle(order)  # random tie-breaks, stable for a seed
        low = min(plays)
        must = [b for b in order if plays[b] == low]
        chosen: list[int] = []
        met = [0] * bot_count  # met[b]: meetings of b with the bots chosen so far
        while len(chosen) < n:
            pool = must if must else [b for b in order if b not in chosen]
            best = pool[0]  # the first of the least (met, plays), as min() would pick
            best_key = (met[best], plays[best])
            for b in pool:
                key = (met[b], plays[b])
                if key < best_key:
                    best, best_key = b, key
            chosen.append(best)
            for b, count in enumerate(meets[best]):
                met[b] += count
            if best in must:
                must.remove(best)
        for a, b in itertools.combinations(chosen, 2):
            meets[a][b] += 1
            meets[b][a] += 1
        for b in chosen:
            plays[b] += 1
        groups.append(chosen)
    if size < 2:
        return groups, meets
    masks = [sum(1 << b for b in group) for group in groups]
    for _ in range(SWAP_ATTEMPTS):
        gi, gj = rng.below(size), rng.below(size)
        if gi == gj:
            continue
        group_i, group_j = groups[gi], groups[gj]
        xi, yj = rng.below(n), rng.below(n)  # (rng.choice of each group, by position)
        x, y = group_i[xi], group_j[yj]
        mask_i, mask_j = masks[gi], masks[gj]
        if mask_j >> x & 1 or mask_i >> y & 1:
            continue
        # Moving x to group j and y to group i changes the pairs of x and y with the bots of
        # one group only (a bot in both groups keeps meeting each once): each such pair count
        # moves by one, and (m + 1)^2 - m^2 = 2m + 1, (m - 1)^2 - m^2 = 1 - 2m.
        meets_x, meets_y = meets[x], meets[y]
        delta = 0
        for b in group_i:
            if b != x and not mask_j >> b & 1:
                delta += 2 * (meets_y[b] - meets_x[b]) + 2
        for b in group_j:
            if b != y and not mask_i >> b & 1:
                delta += 2 * (meets_x[b] - meets_y[b]) + 2
        if delta <= 0:  # sideways moves cross plateaus
            for b in group_i:
                if b != x and not mask_j >> b & 1:
                    meets_y[b] += 1
                    meets[b][y] += 1
                    meets_x[b] -= 1
                    meets[b][x] -= 1
            for b in group_j:
                if b != y and not mask_i >> b & 1:
                    meets_x[b] += 1
                    meets[b][x] += 1
                    meets_y[b] -= 1
                    meets[b][y] -= 1
            group_i[xi], group_j[yj] = y, x
            masks[gi] = mask_i ^ (1 << x) ^ (1 << y)
            masks[gj] = mask_j ^ (1 << x) ^ (1 << y)
    return groups, meets


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
) -> Schedule:
    """Every match of the tournament, ordered deal by deal across the games (so early standings
    cover every game) and with the rotations of one deal next to each other.

    Only the tables are built here (O(tables) time and memory); the matches are generated as
    they are read, so a schedule of 10**12 deals costs no more than one of two."""
    if seating not in SEATINGS:
        raise ValueError(f"seating {seating!r}: expected one of {', '.join(SEATINGS)}")
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise ValueError("a schedule needs at least two bots with distinct names")
    tables = [
        tables_for(bots, plan, Rng(derive_seed(seed, f"{plan.label}/tables"))) for plan in games
    ]
    schedule = Schedule(seed, list(games), tables, seating)
    named = {name for plan in games for name in plan.gauntlet}
    return schedule.gauntlet(named) if named else schedule


class Schedule(Sequence[ScheduledMatch]):
    """The matches of a tournament in schedule order, generated on demand from its tables.

    The order is by deal, then game (in the tournament's order), table and rotation. Deal ``d``
    is one block: every game with more than ``d`` deals contributes its tables times its
    rotations per deal. Between two games' deal counts the block size is constant, so a
    position is found by arithmetic (``schedule[i]``) and the length is a sum over those spans.
    """

    def __init__(
        self,
        seed: int,
        games: list[GamePlan],
        tables: list[list[tuple[str, ...]]],
        seating: str,
        numbers: list[list[int]] | None = None,
    ) -> None:
        self.seed = seed
        self.games = games
        self.tables = tables
        self.seating = seating
        # each table's number (its match ids and seeds): its place among all the game's tables,
        # also when only some are played (a gauntlet's)
        self.numbers = numbers if numbers is not None else [list(range(len(t))) for t in tables]
        self._by_number = [{n: i for i, n in enumerate(nums)} for nums in self.numbers]
        self._labels: dict[str, int] = {}  # a label's first game, as a match id names it
        for g, plan in enumerate(games):
            self._labels.setdefault(plan.label, g)
        self._counts = [self._rotation_count(g) for g in range(len(games))]
        # spans of deals [start, end) with the same games playing: (start, end, first index,
        # matches per deal, the playing game indices)
        self._spans: list[tuple[int, int, int, int, list[int]]] = []
        start = index = 0
        for end in sorted({plan.deals for plan in games}):
            playing = [g for g, plan in enumerate(games) if plan.deals >= end]
            per_deal = sum(len(tables[g]) * self._rotation_count(g) for g in playing)
            if per_deal:
                self._spans.append((start, end, index, per_deal, playing))
                index += (end - start) * per_deal
            start = end
        self._length = index
        # per span, each playing game's first place in a deal's block (for position)
        self._block_starts: list[dict[int, int]] = []
        for _start, _end, _index, _per_deal, playing in self._spans:
            starts, at = {}, 0
            for g in playing:
                starts[g] = at
                at += len(tables[g]) * self._counts[g]
            self._block_starts.append(starts)

    def _rotation_count(self, game: int) -> int:
        return self.games[game].players if self.seating == "duplicate" else 1

    def _rotations(self, game: int, deal: int) -> range:
        players = self.games[game].players
        if self.seating == "duplicate":
            return range(players)
        return range(deal % players, deal % players + 1)

    def _match(self, game: int, table: int, deal: int, rotation: int) -> ScheduledMatch:
        """The match of the game's ``table``-th table played here (its number may differ)."""
        plan = self.games[game]
        number = self.numbers[game][table]
        return ScheduledMatch(
            match_id=match_id(plan.label, number, deal, rotation),
            game=plan.label,
            game_id=plan.game_id,
            players=plan.players,
            options=dict(plan.options),
            table=number,
            deal=deal,
            rotation=rotation,
            seed=plan.deal_seeds[deal]
            if plan.deal_seeds
            else deal_seed(self.seed, plan.label, number, deal),
            seats=rotate(self.tables[game][table], rotation),
        )

    def _deal_block(self, deal: int, games: Sequence[int]) -> Iterator[ScheduledMatch]:
        for g in games:
            for t in range(len(self.tables[g])):
                for r in self._rotations(g, deal):
                    yield self._match(g, t, deal, r)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[ScheduledMatch]:
        for start, end, _index, _per_deal, playing in self._spans:
            for deal in range(start, end):
                yield from self._deal_block(deal, playing)

    @overload
    def __getitem__(self, position: int) -> ScheduledMatch: ...

    @overload
    def __getitem__(self, position: slice) -> list[ScheduledMatch]: ...

    def __getitem__(self, position: int | slice) -> ScheduledMatch | list[ScheduledMatch]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(self._length))]
        if position < 0:
            position += self._length
        if not 0 <= position < self._length:
            raise IndexError("schedule index out of range")
        span = next(s for s in reversed(self._spans) if s[2] <= position)
        start, _end, index, per_deal, playing = span
        deal, offset = start + (position - index) // per_deal, (position - index) % per_deal
        for g in playing:
            rotations = self._rotations(g, deal)
            size = len(self.tables[g]) * len(rotations)
            if offset < size:
                return self._match(
                    g, offset // len(rotations), deal, rotations[0] + offset % len(rotations)
                )
            offset -= size
        raise AssertionError("a position inside a span is in one of its games")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(self) != len(other):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def only(self, labels: Collection[str]) -> Schedule:
        """The same schedule restricted to the games labelled ``labels`` (same matches, order)."""
        keep = [g for g, plan in enumerate(self.games) if plan.label in labels]
        return Schedule(
            self.seed,
            [self.games[g] for g in keep],
            [self.tables[g] for g in keep],
            self.seating,
            [self.numbers[g] for g in keep],
        )

    def gauntlet(self, named: Collection[str]) -> Schedule:
        """Only the tables where a bot of ``named`` sits (a gauntlet, SPEC 10.2): the same
        matches, ids, seeds and order as in this schedule."""
        kept = [[t for t, table in enumerate(ts) if set(table) & set(named)] for ts in self.tables]
        return Schedule(
            self.seed,
            self.games,
            [[self.tables[g][t] for t in keep] for g, keep in enumerate(kept)],
            self.seating,
            [[self.numbers[g][t] for t in keep] for g, keep in enumerate(kept)],
        )

    def with_deals(self, games: list[GamePlan]) -> Schedule:
        """The same tables with the games' deals of ``games`` (its first deals: a round)."""
        return Schedule(self.seed, games, self.tables, self.seating, self.numbers)

    def bots(self) -> set[str]:
        """Every bot seated at some table."""
        return {bot for tables in self.tables for table in tables for bot in table}

    def contains_id(self, match_id_: str) -> bool:
        """Whether a match of this id is in the schedule (ids are ``label/t../d../r..``)."""
        return self.by_id(match_id_) is not None

    def by_id(self, match_id_: str) -> ScheduledMatch | None:
        """The match of this id (``label/t../d../r..``), None if the schedule has none."""
        found = self._locate(match_id_)
        return None if found is None else self._match(*found)

    def position(self, match_id_: str) -> int | None:
        """Where the match of this id sits (``schedule[position]`` is it), None if nowhere."""
        found = self._locate(match_id_)
        return None if found is None else self._position(*found)

    def position_of(self, label: str, table: int, deal: int, rotation: int) -> int | None:
        """:meth:`position` of the match of this game label, table (number), deal and
        rotation."""
        game = self._game_of(label, table, deal, rotation)
        if game is None:
            return None
        return self._position(game, self._by_number[game][table], deal, rotation)

    def _game_of(self, label: str, table: int, deal: int, rotation: int) -> int | None:
        """The index of the game whose match this is (``table``: its number), None if the
        schedule has no such match."""
        game = self._labels.get(label)
        if game is None or table not in self._by_number[game]:
            return None
        plan = self.games[game]
        first = 0 if self.seating == "duplicate" else deal % plan.players
        if not 0 <= deal < plan.deals or not first <= rotation < first + self._counts[game]:
            return None
        return game

    def _position(self, game: int, table: int, deal: int, rotation: int) -> int | None:
        count = self._counts[game]
        first = 0 if count > 1 else rotation  # single seating: one rotation a deal
        for (start, end, index, per_deal, _playing), starts in zip(
            self._spans, self._block_starts, strict=True
        ):
            if start <= deal < end:
                return (
                    index
                    + (deal - start) * per_deal
                    + starts[game]
                    + table * count
                    + (rotation - first)
                )
        return None  # (not reached: a located match is in a span)

    def _locate(self, match_id_: str) -> tuple[int, int, int, int] | None:
        """(game index, table index here, deal, rotation) of the match of this id, None if
        none."""
        found = split_match_id(match_id_)
        if found is None:
            return None
        label, table, deal, rotation = found
        game = self._game_of(label, table, deal, rotation)
        return None if game is None else (game, self._by_number[game][table], deal, rotation)
