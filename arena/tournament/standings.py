"""Standings: a pure fold over stored match results, per game and overall.

Per bot: seats played, wins (placing 1, shared wins count), mean placing, mean score, the
duplicate comparison, an OpenSkill rating (Plackett-Luce) with its uncertainty, faults by kind,
forfeits and the median decision time. Only completed matches count, except that the faults of
an aborted match (a bot that could not start) are counted too.

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
- The median decision time is exact on a 0.01 ms grid (times are counted, not kept).
- The overall table pools every game; it has no score columns (score scales differ by game).
- **Intervals** (``arena.stats``): the unit is the deal (one table's deal in its rotations), never
  the match. Per bot: 95% t-intervals of its per-deal mean placing, score and ``dup``. Per pair
  of bots that met as opponents: the per-deal paired difference (game tables: of ``dup``, the
  overall table: of placing) with its interval and P(row bot better). Adjacent rows are
  **separated** when P(upper better than lower) reaches the confidence; others are tied.
- The rating's interval is ``mu ± 1.96 sigma`` (OpenSkill's own uncertainty).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from openskill.models import PlackettLuce, PlackettLuceRating

from arena.games import GAMES
from arena.stats.deals import BotMoments, DealTally, PairMoments, Rotation
from arena.stats.moments import CONFIDENCE, Estimate, estimate
from arena.tournament.store import StoredMatch

OVERALL = "overall"
TIME_RESOLUTION_MS = 0.01  # decision times are counted on this grid for the median
RATING_Z = 1.96  # the rating's 95% interval: mu ± 1.96 sigma


@dataclass(frozen=True)
class BotStanding:
    bot: str
    played: int
    wins: int
    mean_placing: float | None
    mean_score: float | None  # None in the overall table
    duplicate: float | None  # None without a deal played in two or more rotations
    mu: float
    sigma: float
    faults: Mapping[str, int] = field(default_factory=dict)
    forfeits: int = 0
    median_ms: float | None = None
    deals: int = 0  # deals (one table's deal, in any of its rotations) the bot played
    # by-deal estimates (SPEC 10.6); score and dup are None in the overall table
    placing_estimate: Estimate | None = None
    score_estimate: Estimate | None = None
    dup_estimate: Estimate | None = None
    tied: bool = False  # not separated from the row above or below at the confidence

    @property
    def ordinal(self) -> float:
        """A conservative skill estimate (mu - 3 sigma): the sort key of the standings."""
        return self.mu - 3 * self.sigma

    @property
    def rating_interval(self) -> tuple[float, float]:
        return (self.mu - RATING_Z * self.sigma, self.mu + RATING_Z * self.sigma)


@dataclass(frozen=True)
class PairStanding:
    """The per-deal paired difference of ``row`` over ``column`` (positive: ``row`` better):
    of the duplicate score in a game's table, of placing in the overall table."""

    row: str
    column: str
    metric: str  # "dup" or "placing"
    estimate: Estimate

    @property
    def p_better(self) -> float | None:
        return self.estimate.p_positive


@dataclass(frozen=True)
class Standings:
    tables: Mapping[str, list[BotStanding]]  # game label -> rows (best first); "overall" last
    matches: Mapping[str, int]  # completed matches per game label, and overall
    # completed matches left out of the ratings (one bot on two opposing teams), per label
    unrated: Mapping[str, int] = field(default_factory=dict)
    # per label: every ordered pair of bots that met as opponents, in rank order of the rows
    pairs: Mapping[str, list[PairStanding]] = field(default_factory=dict)
    # per label: for rows i and i+1, P(row i better than row i+1) (None: they never met)
    adjacent: Mapping[str, list[float | None]] = field(default_factory=dict)
    confidence: float = CONFIDENCE

    @property
    def games(self) -> list[str]:
        return [label for label in self.tables if label != OVERALL]

    def pair(self, scope: str, row: str, column: str) -> PairStanding | None:
        for pair in self.pairs.get(scope, []):
            if pair.row == row and pair.column == column:
                return pair
        return None

    def shared_ranks(self, scope: str) -> list[int]:
        """Each row's rank, shared by a run of rows not separated from their neighbours (the
        first row's rank, as in golf: 1, 2, 2, 4 when rows two and three are tied)."""
        ranks: list[int] = []
        for i, p in enumerate([None, *self.adjacent.get(scope, [])]):
            apart = i == 0 or (p is not None and p >= self.confidence)
            ranks.append(i + 1 if apart else ranks[-1])
        return ranks[: len(self.tables.get(scope, []))]

    def settled(self, scope: str) -> bool:
        """Every adjacent pair of rows of ``scope`` separated at the confidence."""
        return all(p is not None and p >= self.confidence for p in self.adjacent.get(scope, []))


class _Tally:
    """Running sums for one bot in one table."""

    def __init__(self) -> None:
        self.played = 0
        self.wins = 0
        self.placing_sum = 0
        self.score_sum = 0
        self.faults: Counter[str] = Counter()
        self.forfeits = 0
        self.times: Counter[int] = Counter()  # decision times in units of TIME_RESOLUTION_MS


def higher_is_better(game_id: str) -> bool:
    spec = GAMES.get(game_id)
    return True if spec is None else spec.state_class.HIGHER_IS_BETTER


def schedule_order(match: StoredMatch) -> tuple:
    return (match.deal, match.game, match.table, match.rotation, match.match_id)


def compute_standings(
    matches: Iterable[StoredMatch],
    bots: Sequence[str] = (),
    games: Sequence[str] = (),
    *,
    seating: str = "duplicate",
    confidence: float = CONFIDENCE,
) -> Standings:
    """Fold completed matches, in schedule order, into standings. ``bots`` lists bots to show
    even before they play; ``games`` orders the game tables (others follow by name); ``seating``
    says how many rotations a deal has (every seat's, or one); ``confidence`` is that of the
    intervals and of the separation of ranks."""
    fold = StandingsFold(bots, games, seating=seating, confidence=confidence)
    for match in sorted(matches, key=schedule_order):
        fold.add(match)
    return fold.standings()


class StandingsFold:
    """The fold, one match at a time: :meth:`add` is cheap (a running tournament calls it as each
    match is stored), :meth:`standings` builds the tables from the running sums."""

    def __init__(
        self,
        bots: Sequence[str] = (),
        games: Sequence[str] = (),
        *,
        seating: str = "duplicate",
        confidence: float = CONFIDENCE,
    ) -> None:
        self._bots = list(bots)
        self._games = list(games)
        self._single = seating == "single"
        self.confidence = confidence
        self._model = PlackettLuce()
        self._tallies: dict[str, dict[str, _Tally]] = {}
        self._ratings: dict[str, dict[str, PlackettLuceRating]] = {}
        self._deals = DealTally()  # per-deal sums: exact, the same in any order of arrival
        self._counts: Counter[str] = Counter()
        self._unrated: Counter[str] = Counter()

    def _scope(self, scope: str) -> dict[str, _Tally]:
        if scope not in self._tallies:
            self._tallies[scope] = {bot: _Tally() for bot in self._bots}
            self._ratings[scope] = {}
        return self._tallies[scope]

    def add(self, match: StoredMatch) -> None:
        if not match.completed:  # an aborted match counts only its (startup) faults
            for scope in (match.game, OVERALL):
                tally = self._scope(scope)
                for fault in match.faults:
                    tally.setdefault(fault.bot, _Tally()).faults[fault.kind] += 1
            return
        self._counts[match.game] += 1
        self._counts[OVERALL] += 1
        self._deals.add(
            (match.game, match.table, match.deal),
            match.rotation,
            Rotation(match.bots, match.scores, match.placings, match.teams),
            scopes=(match.game, OVERALL),
            sign=1 if higher_is_better(match.game_id) else -1,
            expected=1 if self._single else match.players,
        )
        for scope in (match.game, OVERALL):
            tally = self._scope(scope)
            for seat, bot in enumerate(match.bots):
                row = tally.setdefault(bot, _Tally())
                row.played += 1
                row.wins += match.placings[seat] == 1
                row.placing_sum += match.placings[seat]
                row.score_sum += match.scores[seat]
                row.forfeits += seat in match.forfeited
                if seat < len(match.decision_ms):
                    row.times.update(
                        round(ms / TIME_RESOLUTION_MS) for ms in match.decision_ms[seat]
                    )
            for fault in match.faults:
                tally.setdefault(fault.bot, _Tally()).faults[fault.kind] += 1
            if not _rate(self._model, self._ratings[scope], match):
                self._unrated[scope] += 1

    def standings(self) -> Standings:
        played = [label for label in self._tallies if label != OVERALL]
        labels = [g for g in self._games if g in played] + sorted(set(played) - set(self._games))
        self._scope(OVERALL)
        by_deal, by_pair = self._deals.snapshot()
        tables, pairs, adjacent = {}, {}, {}
        for scope in [*labels, OVERALL]:
            with_scores = scope != OVERALL
            rows = [
                _row(
                    bot,
                    tally,
                    self._ratings[scope].get(bot),
                    by_deal.get(scope, {}).get(bot),
                    with_scores=with_scores,
                    model=self._model,
                    confidence=self.confidence,
                )
                for bot, tally in self._tallies[scope].items()
            ]
            rows.sort(
                key=lambda r: (
                    -r.ordinal,
                    r.mean_placing if r.mean_placing is not None else 99,
                    r.bot,
                )
            )
            metric = "dup" if with_scores else "placing"
            pairs[scope] = _pairs(rows, by_pair.get(scope, {}), metric, self.confidence)
            adjacent[scope] = _adjacent(rows, pairs[scope])
            tables[scope] = _mark_ties(rows, adjacent[scope], self.confidence)
        matches = {scope: self._counts[scope] for scope in tables}
        unrated = {scope: self._unrated[scope] for scope in tables}
        return Standings(
            tables=tables,
            matches=matches,
            unrated=unrated,
            pairs=pairs,
            adjacent=adjacent,
            confidence=self.confidence,
        )


def _pairs(
    rows: Sequence[BotStanding],
    sums: Mapping[tuple[str, str], PairMoments],
    metric: str,
    confidence: float,
) -> list[PairStanding]:
    """Every ordered pair of rows that met as opponents, row-major in rank order."""
    found = []
    for row in rows:
        for column in rows:
            if row.bot == column.bot:
                continue
            flip = row.bot > column.bot  # sums are kept for (a, b) with a < b
            cell = sums.get((column.bot, row.bot) if flip else (row.bot, column.bot))
            if cell is None:
                continue
            moments = cell.score if metric == "dup" else cell.placing
            if moments.n == 0:
                continue
            est = estimate(moments, confidence)
            found.append(PairStanding(row.bot, column.bot, metric, _negated(est) if flip else est))
    return found


def _negated(est: Estimate) -> Estimate:
    def neg(x: float | None) -> float | None:
        return None if x is None else -x

    return Estimate(
        n=est.n,
        mean=neg(est.mean),
        sd=est.sd,
        low=neg(est.high),
        high=neg(est.low),
        p_positive=None if est.p_positive is None else 1.0 - est.p_positive,
        confidence=est.confidence,
    )


def _adjacent(rows: Sequence[BotStanding], pairs: Sequence[PairStanding]) -> list[float | None]:
    p_better = {(p.row, p.column): p.p_better for p in pairs}
    return [p_better.get((upper.bot, lower.bot)) for upper, lower in zip(rows, rows[1:])]


def _mark_ties(
    rows: list[BotStanding], adjacent: Sequence[float | None], confidence: float
) -> list[BotStanding]:
    apart = [p is not None and p >= confidence for p in adjacent]
    marked = []
    for i, row in enumerate(rows):
        tied = (i > 0 and not apart[i - 1]) or (i < len(apart) and not apart[i])
        marked.append(replace(row, tied=tied) if tied else row)
    return marked


def _rate(model: PlackettLuce, ratings: dict[str, PlackettLuceRating], match: StoredMatch) -> bool:
    """One Plackett-Luce update from the match's placings (forfeits last, partners as teams);
    False when the match cannot be rated (a bot on two opposing sides)."""
    worst = match.players + 1
    placing = [worst if seat in match.forfeited else p for seat, p in enumerate(match.placings)]
    sides: dict[object, list[int]] = defaultdict(list)  # side -> seats
    for seat, bot in enumerate(match.bots):
        side = match.teams[seat] if match.teams is not None else bot
        sides[side].append(seat)
    members = {side: sorted({match.bots[s] for s in seats}) for side, seats in sides.items()}
    everyone = [bot for bots in members.values() for bot in bots]
    if len(sides) < 2 or len(everyone) != len(set(everyone)):
        return False  # a bot against itself teaches the model nothing
    order = list(sides)
    teams = [
        [ratings.get(bot) or model.rating(name=bot) for bot in members[side]] for side in order
    ]
    ranks = [statistics.fmean(placing[s] for s in sides[side]) for side in order]
    for rated_side, new_team in zip(order, model.rate(teams, ranks=ranks), strict=True):
        for bot, rating in zip(members[rated_side], new_team, strict=True):
            ratings[bot] = rating
    return True


def _row(
    bot: str,
    tally: _Tally,
    rating: PlackettLuceRating | None,
    by_deal: BotMoments | None,
    *,
    with_scores: bool,
    model: PlackettLuce,
    confidence: float,
) -> BotStanding:
    rating = rating or model.rating(name=bot)
    played = tally.played
    by_deal = by_deal or BotMoments()
    dup = by_deal.dup
    return BotStanding(
        bot=bot,
        played=played,
        wins=tally.wins,
        mean_placing=tally.placing_sum / played if played else None,
        mean_score=tally.score_sum / played if played and with_scores else None,
        duplicate=dup.mean() if dup.n and with_scores else None,
        mu=rating.mu,
        sigma=rating.sigma,
        faults=dict(sorted(tally.faults.items())),
        forfeits=tally.forfeits,
        median_ms=_median(tally.times),
        deals=by_deal.placing.n,
        placing_estimate=estimate(by_deal.placing, confidence) if by_deal.placing.n else None,
        score_estimate=estimate(by_deal.score, confidence)
        if with_scores and by_deal.score.n
        else None,
        dup_estimate=estimate(dup, confidence) if with_scores and dup.n else None,
    )


def _median(times: Counter[int]) -> float | None:
    """The median of times counted on the TIME_RESOLUTION_MS grid (mean of the middle two)."""
    total = sum(times.values())
    if not total:
        return None
    middle = ((total - 1) // 2, total // 2)
    found: list[int] = []
    seen = 0
    for value in sorted(times):
        count = times[value]
        for position in middle:
            if seen <= position < seen + count:
                found.append(value)
        seen += count
        if len(found) == 2:
            break
    return (found[0] + found[1]) / 2 * TIME_RESOLUTION_MS


def _interval(est: Estimate | None) -> dict | None:
    return None if est is None else {"low": est.low, "high": est.high, "deals": est.n}


def standings_as_data(standings: Standings) -> dict:
    """Plain JSON-ready data (for ``arena standings --json``)."""
    return {
        scope: {
            "matches": standings.matches.get(scope, 0),
            "unrated": standings.unrated.get(scope, 0),
            "confidence": standings.confidence,
            "settled": standings.settled(scope),
            "rows": [
                {
                    "rank": i + 1,
                    "bot": r.bot,
                    "tied": r.tied,
                    "shared_rank": shared[i],
                    "played": r.played,
                    "deals": r.deals,
                    "wins": r.wins,
                    "mean_placing": r.mean_placing,
                    "placing_interval": _interval(r.placing_estimate),
                    "mean_score": r.mean_score,
                    "score_interval": _interval(r.score_estimate),
                    "duplicate": r.duplicate,
                    "duplicate_interval": _interval(r.dup_estimate),
                    "mu": r.mu,
                    "sigma": r.sigma,
                    "ordinal": r.ordinal,
                    "rating_interval": {
                        "low": r.rating_interval[0],
                        "high": r.rating_interval[1],
                    },
                    "p_better_than_next": (
                        standings.adjacent[scope][i]
                        if i < len(standings.adjacent.get(scope, []))
                        else None
                    ),
                    "faults": dict(r.faults),
                    "forfeits": r.forfeits,
                    "median_ms": r.median_ms,
                }
                for i, r in enumerate(rows)
            ],
            "pairs": [
                {
                    "row": p.row,
                    "column": p.column,
                    "metric": p.metric,
                    "deals": p.estimate.n,
                    "mean": p.estimate.mean,
                    "low": p.estimate.low,
                    "high": p.estimate.high,
                    "p_better": p.p_better,
                }
                for p in standings.pairs.get(scope, [])
            ],
        }
        for scope, rows in standings.tables.items()
        for shared in [standings.shared_ranks(scope)]
    }


# -- one bot's report (``arena standings FILE --bot NAME``) --------------------------------------


@dataclass(frozen=True)
class TimePercentiles:
    """Decision times in ms (nearest rank: ``p90`` is a time 90 % of decisions did not exceed)."""

    count: int
    p50: float
    p90: float
    p99: float
    max: float


@dataclass(frozen=True)
class MatchScore:
    """How a bot did in one match against the same cards in the deal's other rotations."""

    match_id: str
    game: str
    seats: tuple[int, ...]
    score: float  # the bot's mean score over its seats
    placing: float
    duplicate: float  # score minus the mean of those seats' cards over the rotations (+ = better)
    record_path: str | None


@dataclass(frozen=True)
class BotFault:
    match_id: str
    seat: int
    kind: str
    message: str


@dataclass(frozen=True)
class BotReport:
    bot: str
    rows: Mapping[str, BotStanding]  # per game label, then "overall"
    ranks: Mapping[str, tuple[int, int]]  # label -> (rank, bots in the table)
    faults: Sequence[BotFault]  # in schedule order
    times: Mapping[str, TimePercentiles]  # per game label, then "overall"
    worst: Sequence[MatchScore]  # worst duplicate score first
    matches: int  # completed matches it played


def percentiles(times: Sequence[float]) -> TimePercentiles | None:
    if not times:
        return None
    ordered = sorted(times)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    return TimePercentiles(len(ordered), rank(0.5), rank(0.9), rank(0.99), ordered[-1])


def bot_report(
    standings: Standings, matches: Iterable[StoredMatch], bot: str, *, worst: int = 10
) -> BotReport:
    """``bot``'s rows of ``standings`` and, from ``matches`` (the ones it sat in: every rotation
    of its deals, as ResultStore.matches_with gives them), its faults, decision-time percentiles
    and its ``worst`` matches by duplicate score."""
    rows: dict[str, BotStanding] = {}
    ranks: dict[str, tuple[int, int]] = {}
    for scope, table in standings.tables.items():
        for rank, row in enumerate(table, start=1):
            if row.bot == bot:
                rows[scope] = row
                ranks[scope] = (rank, len(table))
    faults: list[BotFault] = []
    times: dict[str, list[float]] = defaultdict(list)
    deals: dict[tuple[str, int, int], list[StoredMatch]] = defaultdict(list)
    played = 0
    for match in sorted(matches, key=schedule_order):
        faults += [
            BotFault(match.match_id, f.seat, f.kind, f.message)
            for f in match.faults
            if f.bot == bot
        ]
        if not match.completed:
            continue
        deals[(match.game, match.table, match.deal)].append(match)
        held = [seat for seat, name in enumerate(match.bots) if name == bot]
        played += bool(held)
        for seat in held:
            if seat < len(match.decision_ms):
                times[match.game].extend(match.decision_ms[seat])
                times[OVERALL].extend(match.decision_ms[seat])
    scored: list[MatchScore] = []
    for group in deals.values():
        if len(group) < 2:
            continue  # one rotation: nothing to compare with
        sign = 1 if higher_is_better(group[0].game_id) else -1
        players = group[0].players
        means = [statistics.fmean(m.scores[seat] for m in group) for seat in range(players)]
        for match in group:
            seats = tuple(seat for seat, name in enumerate(match.bots) if name == bot)
            if not seats:
                continue
            scored.append(
                MatchScore(
                    match_id=match.match_id,
                    game=match.game,
                    seats=seats,
                    score=statistics.fmean(match.scores[s] for s in seats),
                    placing=statistics.fmean(match.placings[s] for s in seats),
                    duplicate=statistics.fmean(sign * (match.scores[s] - means[s]) for s in seats),
                    record_path=match.record_path,
                )
            )
    scored.sort(key=lambda m: (m.duplicate, m.match_id))
    order = [*standings.games, OVERALL]
    found = {scope: percentiles(values) for scope, values in times.items()}
    return BotReport(
        bot=bot,
        rows={scope: rows[scope] for scope in order if scope in rows},
        ranks=ranks,
        faults=faults,
        times={
            scope: value
            for scope in [*order, *sorted(set(found) - set(order))]
            if (value := found.get(scope)) is not None
        },
        worst=scored[:worst],
        matches=played,
    )


def bot_report_as_data(report: BotReport) -> dict:
    """Plain JSON-ready data (for ``arena standings FILE --bot NAME --json``)."""
    tables = standings_as_data(
        Standings(tables={s: [r] for s, r in report.rows.items()}, matches={})
    )
    return {
        "bot": report.bot,
        "matches": report.matches,
        "tables": {
            scope: {
                **tables[scope]["rows"][0],
                "rank": report.ranks[scope][0],
                "of": report.ranks[scope][1],
            }
            for scope in report.rows
        },
        "faults": [vars(f) for f in report.faults],
        "decision_ms": {scope: vars(t) for scope, t in report.times.items()},
        "worst": [{**vars(m), "seats": list(m.seats)} for m in report.worst],
    }
