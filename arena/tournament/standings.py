"""Standings: a pure fold over stored match results, per game and overall.

Per bot: seats played, wins (placing 1, shared wins count), mean placing, mean score, the
duplicate comparison, an OpenSkill rating (Plackett-Luce) with its uncertainty, faults by kind,
forfeits and the median decision time. Only completed matches count.

- Every seat a bot holds counts as one game played (a bot holds several seats only when there
  are fewer bots than seats).
- **Duplicate** (``dup``): the rotations of one deal give every seat's cards to every bot at the
  table. For each seat's cards, a bot's score is compared with the mean score those cards got
  over the rotations played; ``dup`` is the mean of these differences, signed so that positive
  is better (games where a low score wins flip the sign). Deals with one rotation played so far
  are left out.
- **Rating**: one Plackett-Luce update per match, in schedule order, ranks from the placings. A
  forfeited seat ranks last. In team games (All Fours) partners are one team. A bot holding seats
  in several places of one match is ranked by its mean placing; a bot on two opposing teams of a
  match (possible only with fewer bots than seats) leaves that match unrated.
- The overall table pools every game; it has no score columns (score scales differ by game).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from openskill.models import PlackettLuce

from arena.games import GAMES
from arena.store import StoredMatch

OVERALL = "overall"


@dataclass(frozen=True)
class BotStanding:
    bot: str
    played: int
    wins: int
    mean_placing: float | None
    mean_score: float | None           # None in the overall table
    duplicate: float | None            # None without a deal played in two or more rotations
    mu: float
    sigma: float
    faults: Mapping[str, int] = field(default_factory=dict)
    forfeits: int = 0
    median_ms: float | None = None

    @property
    def ordinal(self) -> float:
        """A conservative skill estimate (mu - 3 sigma): the sort key of the standings."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class Standings:
    tables: Mapping[str, list[BotStanding]]       # game label -> rows (best first); "overall" last
    matches: Mapping[str, int]                    # completed matches per game label, and overall

    @property
    def games(self) -> list[str]:
        return [label for label in self.tables if label != OVERALL]


class _Tally:
    """Running sums for one bot in one table."""

    def __init__(self) -> None:
        self.played = 0
        self.wins = 0
        self.placing_sum = 0
        self.score_sum = 0
        self.dup: list[float] = []
        self.faults: Counter[str] = Counter()
        self.forfeits = 0
        self.times: list[float] = []


def higher_is_better(game_id: str) -> bool:
    spec = GAMES.get(game_id)
    return True if spec is None else spec.state_class.HIGHER_IS_BETTER


def compute_standings(matches: Iterable[StoredMatch], bots: Sequence[str] = ()) -> Standings:
    """Fold completed matches into standings. ``bots`` lists bots to show even before they play."""
    done = sorted((m for m in matches if m.completed),
                  key=lambda m: (m.deal, m.game, m.table, m.rotation, m.match_id))
    labels = sorted({m.game for m in done})
    scopes = [*labels, OVERALL]
    tallies: dict[str, dict[str, _Tally]] = {s: defaultdict(_Tally) for s in scopes}
    for scope in scopes:
        for bot in bots:
            tallies[scope][bot]           # noqa: B018 (create the row)
    model = PlackettLuce()
    ratings: dict[str, dict[str, object]] = {s: {} for s in scopes}

    for match in done:
        for scope in (match.game, OVERALL):
            tally = tallies[scope]
            for seat, bot in enumerate(match.bots):
                row = tally[bot]
                row.played += 1
                row.wins += match.placings[seat] == 1
                row.placing_sum += match.placings[seat]
                row.score_sum += match.scores[seat]
                row.forfeits += seat in match.forfeited
                if seat < len(match.decision_ms):
                    row.times.extend(match.decision_ms[seat])
            for fault in match.faults:
                tally[fault.bot].faults[fault.kind] += 1
            _rate(model, ratings[scope], match)

    for (label, _table, _deal), group in _deals(done).items():
        sign = 1 if higher_is_better(group[0].game_id) else -1
        for bot, delta in _duplicate_deltas(group):
            tallies[label][bot].dup.append(sign * delta)

    tables = {}
    for scope in scopes:
        rows = [_row(bot, tally, ratings[scope].get(bot), with_scores=scope != OVERALL, model=model)
                for bot, tally in tallies[scope].items()]
        rows.sort(key=lambda r: (-r.ordinal, r.mean_placing if r.mean_placing is not None else 99,
                                 r.bot))
        tables[scope] = rows
    counts = Counter(m.game for m in done)
    counts[OVERALL] = len(done)
    return Standings(tables=tables, matches=dict(counts))


def _deals(done: Sequence[StoredMatch]) -> dict[tuple[str, int, int], list[StoredMatch]]:
    groups: dict[tuple[str, int, int], list[StoredMatch]] = defaultdict(list)
    for match in done:
        groups[(match.game, match.table, match.deal)].append(match)
    return groups


def _duplicate_deltas(group: Sequence[StoredMatch]) -> list[tuple[str, float]]:
    """(bot, score minus the mean score of the same seat's cards) for every seat of the group."""
    if len(group) < 2:
        return []
    players = group[0].players
    means = [statistics.fmean(m.scores[seat] for m in group) for seat in range(players)]
    return [(m.bots[seat], m.scores[seat] - means[seat]) for m in group for seat in range(players)]


def _rate(model: PlackettLuce, ratings: dict[str, object], match: StoredMatch) -> None:
    """One Plackett-Luce update from the match's placings (forfeits last, partners as teams)."""
    worst = match.players + 1
    placing = [worst if seat in match.forfeited else p for seat, p in enumerate(match.placings)]
    sides: dict[object, list[int]] = defaultdict(list)      # side -> seats
    for seat, bot in enumerate(match.bots):
        side = match.teams[seat] if match.teams is not None else bot
        sides[side].append(seat)
    members = {side: sorted({match.bots[s] for s in seats}) for side, seats in sides.items()}
    everyone = [bot for bots in members.values() for bot in bots]
    if len(sides) < 2 or len(everyone) != len(set(everyone)):
        return                               # a bot against itself teaches the model nothing
    order = list(sides)
    teams = [[ratings.get(bot) or model.rating(name=bot) for bot in members[side]]
             for side in order]
    ranks = [statistics.fmean(placing[s] for s in sides[side]) for side in order]
    for side, new_team in zip(order, model.rate(teams, ranks=ranks), strict=True):
        for bot, rating in zip(members[side], new_team, strict=True):
            ratings[bot] = rating


def _row(bot: str, tally: _Tally, rating: object, *, with_scores: bool,
         model: PlackettLuce) -> BotStanding:
    rating = rating or model.rating(name=bot)
    played = tally.played
    return BotStanding(
        bot=bot, played=played, wins=tally.wins,
        mean_placing=tally.placing_sum / played if played else None,
        mean_score=tally.score_sum / played if played and with_scores else None,
        duplicate=statistics.fmean(tally.dup) if tally.dup and with_scores else None,
        mu=rating.mu, sigma=rating.sigma,  # type: ignore[attr-defined]
        faults=dict(sorted(tally.faults.items())), forfeits=tally.forfeits,
        median_ms=statistics.median(tally.times) if tally.times else None)


def standings_as_data(standings: Standings) -> dict:
    """Plain JSON-ready data (for ``arena standings --json``)."""
    return {
        scope: {
            "matches": standings.matches.get(scope, 0),
            "rows": [{"rank": i + 1, "bot": r.bot, "played": r.played, "wins": r.wins,
                      "mean_placing": r.mean_placing, "mean_score": r.mean_score,
                      "duplicate": r.duplicate, "mu": r.mu, "sigma": r.sigma,
                      "ordinal": r.ordinal, "faults": dict(r.faults), "forfeits": r.forfeits,
                      "median_ms": r.median_ms} for i, r in enumerate(rows)],
        }
        for scope, rows in standings.tables.items()
    }
