"""Per-deal values of a duplicate tournament, folded one match at a time.

The unit of every statistic is the **deal**: one table's deal (one seed), played in its seat
rotations. Matches of one deal share the cards, so they are never independent; deals are (each has
its own seed). For each bot at a deal:

- ``score``: its mean score over its seats of the deal (all rotations played),
- ``placing``: its mean placing over the same seats,
- ``dup``: its mean duplicate delta: for each of its seats, its score minus the mean score those
  seat's cards got over the rotations played, signed so that positive is better (``sign`` = -1
  where a low score wins); only for deals with two or more rotations played.

For each pair of bots that met as opponents at a deal (never partners there):

- ``score``: the difference of their ``dup`` values (row bot minus column bot; positive: the row
  bot did better with the same cards): only for deals with two or more rotations played,
- ``placing``: the column bot's mean placing minus the row bot's (positive: the row bot placed
  better).

A deal stays open (kept whole, folded on demand) until all its rotations are in; then its values
go into exact :class:`Moments` and the deal is dropped. Nothing depends on the order in which the
matches arrive.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.stats.moments import Moments


@dataclass
class BotMoments:
    score: Moments = field(default_factory=Moments)
    placing: Moments = field(default_factory=Moments)
    dup: Moments = field(default_factory=Moments)

    def merged(self, other: BotMoments) -> BotMoments:
        out = BotMoments(self.score.copy(), self.placing.copy(), self.dup.copy())
        out.score.merge(other.score)
        out.placing.merge(other.placing)
        out.dup.merge(other.dup)
        return out


@dataclass
class PairMoments:
    score: Moments = field(default_factory=Moments)  # row's dup minus column's, per deal
    placing: Moments = field(default_factory=Moments)  # column's placing minus row's, per deal

    def merged(self, other: PairMoments) -> PairMoments:
        out = PairMoments(self.score.copy(), self.placing.copy())
        out.score.merge(other.score)
        out.placing.merge(other.placing)
        return out


@dataclass(frozen=True)
class Rotation:
    """One match of a deal, as the statistics need it."""

    bots: tuple[str, ...]
    scores: tuple[int, ...]
    placings: tuple[int, ...]
    teams: tuple[int, ...] | None = None


@dataclass
class _OpenDeal:
    scopes: tuple[str, ...]
    sign: int
    expected: int
    rotations: dict[int, Rotation] = field(default_factory=dict)


@dataclass(frozen=True)
class DealValues:
    """One deal's values: (numerator, denominator) per bot and per ordered pair (a < b)."""

    score: dict[str, tuple[int, int]]
    placing: dict[str, tuple[int, int]]
    dup: dict[str, tuple[int, int]]
    pair_score: dict[tuple[str, str], tuple[int, int]]
    pair_placing: dict[tuple[str, str], tuple[int, int]]


def deal_values(rotations: Sequence[Rotation], sign: int = 1) -> DealValues:
    """The per-deal values of one deal's rotations (see the module's docstring)."""
    count = len(rotations)
    players = len(rotations[0].bots)
    seat_totals = [sum(r.scores[seat] for r in rotations) for seat in range(players)]
    seats: dict[str, int] = defaultdict(int)
    score_sum: dict[str, int] = defaultdict(int)
    placing_sum: dict[str, int] = defaultdict(int)
    dup_sum: dict[str, int] = defaultdict(int)  # in units of 1 / count
    partners: set[frozenset[str]] = set()
    for rotation in rotations:
        for seat, bot in enumerate(rotation.bots):
            seats[bot] += 1
            score_sum[bot] += rotation.scores[seat]
            placing_sum[bot] += rotation.placings[seat]
            dup_sum[bot] += count * rotation.scores[seat] - seat_totals[seat]
        if rotation.teams is not None:
            sides: dict[int, set[str]] = defaultdict(set)
            for seat, bot in enumerate(rotation.bots):
                sides[rotation.teams[seat]].add(bot)
            for side in sides.values():
                partners.update(frozenset((a, b)) for a in side for b in side if a != b)
    bots = sorted(seats)
    score = {b: (score_sum[b], seats[b]) for b in bots}
    placing = {b: (placing_sum[b], seats[b]) for b in bots}
    dup = {b: (sign * dup_sum[b], count * seats[b]) for b in bots} if count >= 2 else {}
    pair_score: dict[tuple[str, str], tuple[int, int]] = {}
    pair_placing: dict[tuple[str, str], tuple[int, int]] = {}
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            if frozenset((a, b)) in partners:
                continue  # partners share their score and placing: nothing to compare
            (pa, da), (pb, db) = placing[a], placing[b]
            pair_placing[(a, b)] = (pb * da - pa * db, da * db)
            if dup:
                (sa, ea), (sb, eb) = dup[a], dup[b]
                pair_score[(a, b)] = (sa * eb - sb * ea, ea * eb)
    return DealValues(score, placing, dup, pair_score, pair_placing)


class DealTally:
    """Per-deal values folded into exact sums per scope (e.g. a game's label and "overall")."""

    def __init__(self) -> None:
        self._open: dict[Hashable, _OpenDeal] = {}
        self._bots: dict[str, dict[str, BotMoments]] = defaultdict(dict)
        self._pairs: dict[str, dict[tuple[str, str], PairMoments]] = defaultdict(dict)

    def add(
        self,
        deal: Hashable,
        rotation: int,
        match: Rotation,
        *,
        scopes: Iterable[str],
        sign: int = 1,
        expected: int = 1,
    ) -> None:
        """One match of ``deal`` (any hashable key naming one table's deal); ``expected`` is the
        number of rotations the deal will have, after which it is folded for good. A rotation
        given again replaces the earlier one."""
        entry = self._open.get(deal)
        if entry is None:
            entry = self._open[deal] = _OpenDeal(tuple(scopes), sign, expected)
        entry.rotations[rotation] = match
        if len(entry.rotations) >= entry.expected:
            del self._open[deal]
            self._fold(entry, self._bots, self._pairs)

    @staticmethod
    def _fold(
        entry: _OpenDeal,
        bots: dict[str, dict[str, BotMoments]],
        pairs: dict[str, dict[tuple[str, str], PairMoments]],
    ) -> None:
        values = deal_values([entry.rotations[r] for r in sorted(entry.rotations)], entry.sign)
        for scope in entry.scopes:
            table = bots[scope]
            for bot, (num, den) in values.score.items():
                row = table.setdefault(bot, BotMoments())
                row.score.add(num, den)
                row.placing.add(*values.placing[bot])
                if bot in values.dup:
                    row.dup.add(*values.dup[bot])
            pair_table = pairs[scope]
            for pair, value in values.pair_placing.items():
                cell = pair_table.setdefault(pair, PairMoments())
                cell.placing.add(*value)
                if pair in values.pair_score:
                    cell.score.add(*values.pair_score[pair])

    def _with_open(
        self,
    ) -> tuple[dict[str, dict[str, BotMoments]], dict[str, dict[tuple[str, str], PairMoments]]]:
        if not self._open:
            return self._bots, self._pairs
        bots: dict[str, dict[str, BotMoments]] = defaultdict(dict)
        pairs: dict[str, dict[tuple[str, str], PairMoments]] = defaultdict(dict)
        for scope, table in self._bots.items():
            bots[scope] = {bot: BotMoments().merged(m) for bot, m in table.items()}
        for scope, pair_table in self._pairs.items():
            pairs[scope] = {pair: PairMoments().merged(m) for pair, m in pair_table.items()}
        for entry in self._open.values():
            self._fold(entry, bots, pairs)
        return bots, pairs

    def bots(self, scope: str) -> dict[str, BotMoments]:
        """Per bot of ``scope``: the sums of its per-deal values (open deals included)."""
        return dict(self._with_open()[0].get(scope, {}))

    def pairs(self, scope: str) -> dict[tuple[str, str], PairMoments]:
        """Per pair (a, b) with a < b of ``scope``: the sums of the per-deal differences."""
        return dict(self._with_open()[1].get(scope, {}))

    def snapshot(
        self,
    ) -> tuple[dict[str, dict[str, BotMoments]], dict[str, dict[tuple[str, str], PairMoments]]]:
        """Every scope's bot and pair sums at once (open deals folded into copies)."""
        return self._with_open()

    def to_data(self) -> dict[str, Any]:
        """The whole state as plain JSON-ready data (deal keys must be JSON-ready lists or
        scalars; tuples come back as lists), for a fold kept between runs."""
        return {
            "open": [
                {
                    "deal": list(key) if isinstance(key, tuple) else key,
                    "scopes": list(entry.scopes),
                    "sign": entry.sign,
                    "expected": entry.expected,
                    "rotations": {
                        str(r): [list(m.bots), list(m.scores), list(m.placings), m.teams]
                        for r, m in sorted(entry.rotations.items())
                    },
                }
                for key, entry in self._open.items()
            ],
            "bots": {
                scope: {
                    bot: [m.score.to_data(), m.placing.to_data(), m.dup.to_data()]
                    for bot, m in sorted(table.items())
                }
                for scope, table in self._bots.items()
            },
            "pairs": {
                scope: [
                    [a, b, m.score.to_data(), m.placing.to_data()]
                    for (a, b), m in sorted(table.items())
                ]
                for scope, table in self._pairs.items()
            },
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DealTally:
        tally = cls()
        for entry in data["open"]:
            deal = entry["deal"]
            key = tuple(deal) if isinstance(deal, list) else deal
            tally._open[key] = _OpenDeal(
                tuple(entry["scopes"]),
                int(entry["sign"]),
                int(entry["expected"]),
                {
                    int(r): Rotation(
                        tuple(bots),
                        tuple(scores),
                        tuple(placings),
                        None if teams is None else tuple(teams),
                    )
                    for r, (bots, scores, placings, teams) in entry["rotations"].items()
                },
            )
        for scope, table in data["bots"].items():
            tally._bots[scope] = {
                bot: BotMoments(*(Moments.from_data(m) for m in sums))
                for bot, sums in table.items()
            }
        for scope, rows in data["pairs"].items():
            tally._pairs[scope] = {
                (a, b): PairMoments(Moments.from_data(score), Moments.from_data(placing))
                for a, b, score, placing in rows
            }
        return tally
