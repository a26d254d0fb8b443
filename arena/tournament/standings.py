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
  overall table: of placing) with its interval and P(row bot better). A row is **separated**
  from a row above it when their two-sided test rejects "equal" (Holm over every pair of the
  table) and the upper is better; its rank is 1 + the rows above separated from it, and a row
  not separated from a neighbour is tied (``=``).
- The rating's interval is ``mu ± 1.96 sigma`` (OpenSkill's own uncertainty).
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import msgspec
from openskill.models import PlackettLuceRating

from arena.games import GAMES
from arena.referee.clock import TimeControl
from arena.stats.deals import BotMoments, DealTally, PairMoments, Rotation
from arena.stats.moments import CONFIDENCE, Estimate, estimate, holm
from arena.tournament import openskill_fast
from arena.tournament.latency import LatencyReport, LatencyTally
from arena.tournament.openskill_fast import DEFAULT_RATING, Rating
from arena.tournament.store import ResultStore, StoredMatch

OVERALL = "overall"
TIME_RESOLUTION_MS = 0.01  # decision times are counted on this grid for the median
RATING_Z = 1.96  # the rating's 95% interval: mu ± 1.96 sigma
MARGIN_MS = TimeControl().margin_ms  # the margin a fold's latency figures use unless told


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
    # per label: for rows i and i+1, whether row i is separated from (better than) row i+1:
    # two-sided tests, Holm over every pair of the table at 1 - confidence (separation)
    separated: Mapping[str, list[bool]] = field(default_factory=dict)
    # per label: each row's rank, 1 + the rows above it separated from it (separation)
    ranks: Mapping[str, list[int]] = field(default_factory=dict)

    @property
    def games(self) -> list[str]:
        return [label for label in self.tables if label != OVERALL]

    def pair(self, scope: str, row: str, column: str) -> PairStanding | None:
        for pair in self.pairs.get(scope, []):
            if pair.row == row and pair.column == column:
                return pair
        return None

    def shared_ranks(self, scope: str) -> list[int]:
        """Each row's rank: 1 + the rows above it separated from it, so a rank never claims
        more than the tests show (1, 2, 2, 4 when rows two and three are tied and the rest
        apart; 1, 1, 2 when only the first and the last are apart)."""
        rows = self.tables.get(scope, [])
        return list(self.ranks.get(scope, [])) or [1] * len(rows)

    def settled(self, scope: str) -> bool:
        """Every adjacent pair of rows of ``scope`` separated at the confidence."""
        return all(self.separated.get(scope, []))


# -- persisting the fold ----------------------------------------------------------------------
#
# The fold's state is kept in the results file and extended as matches arrive. It is serialised
# generically: the attributes of the fold and of every object in it, recursively, so an
# accumulator added to the fold is persisted without more code, provided it is built from the
# types below (its class, if any, marked ``@persisted``). Only those classes are ever created
# when a state is read back, so a results file from elsewhere cannot run code.

FOLD_FORMAT = 7  # bump when the fold's attributes change meaning; a state of another is refolded
_PERSISTED: dict[str, type] = {}
_INT64 = 2**63


def persisted(cls: type) -> type:
    """Mark a class whose instances may be in the persisted fold (their ``__dict__`` is)."""
    _PERSISTED[cls.__name__] = cls
    return cls


# the statistics' accumulators (arena.stats, below this layer): DealTally says its own state
# (to_data/from_data: exact integer sums and the open deals' rotations, order-independent)
persisted(DealTally)
persisted(LatencyTally)  # the referee's latency figures (attributes of the types below)


_PLAIN = (type(None), bool, int, float, str)  # stored as themselves (ints of 64 bits)
_AS_IS = (type(None), bool, float, str)  # stored as themselves without a look (ints: their size)


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        if kind is int and not -_INT64 <= value < _INT64:
            return {"$i": str(value)}
        return value
    if kind is list:
        return [v if type(v) in _AS_IS else _encode(v) for v in value]
    if kind is tuple:
        return {"$t": [_encode(v) for v in value]}
    if kind is Counter or kind is dict:
        tag = "$C" if kind is Counter else "$d"
        return {tag: [[_encode(k) for k in value], [_encode(v) for v in value.values()]]}
    if kind is Fraction:
        return {"$F": str(value)}
    name = kind.__name__
    if _PERSISTED.get(name) is kind:
        if hasattr(kind, "from_data"):  # a class that says its own state (arena.stats)
            return {"$x": name, "d": _encode(value.to_data())}
        transient = getattr(kind, "TRANSIENT", ())  # caches of derived values: not state
        return {
            "$o": name,
            "a": {k: _encode(v) for k, v in vars(value).items() if k not in transient},
        }
    raise TypeError(f"the standings fold cannot persist a {name}: mark its class @persisted")


def _decode_all(values: list[Any]) -> list[Any]:
    plain = _PLAIN
    return [v if type(v) in plain else _decode(v) for v in values]


def _decode(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if type(value) is list:
        return _decode_all(value)
    if type(value) is not dict or not value:
        raise ValueError("not a standings fold state")
    (tag, payload), *rest = value.items()
    if tag == "$t":
        return tuple(_decode_all(payload))
    if tag in ("$C", "$d"):
        keys, values = payload
        pairs = zip(_decode_all(keys), _decode_all(values), strict=True)
        return Counter(dict(pairs)) if tag == "$C" else dict(pairs)
    if tag == "$F":
        return Fraction(payload)
    if tag == "$i":
        return int(payload)
    if tag == "$x" and rest and rest[0][0] == "d" and payload in _PERSISTED:
        restore: Any = _PERSISTED[payload]  # a class with from_data (checked when encoded)
        return restore.from_data(_decode(rest[0][1]))
    if tag == "$o" and rest and rest[0][0] == "a" and payload in _PERSISTED:
        obj: Any = object.__new__(
            _PERSISTED[payload]
        )  # __init__ skipped: the state sets every field
        vars(obj).update({k: _decode(v) for k, v in rest[0][1].items()})
        return obj
    raise ValueError(f"not a standings fold state (tag {tag!r})")


def fold_to_bytes(fold: StandingsFold) -> bytes:
    return msgspec.msgpack.encode({"format": FOLD_FORMAT, "fold": _encode(fold)})


def fold_from_bytes(data: bytes) -> StandingsFold | None:
    """The fold persisted in ``data``; None when it is of another format (or not a fold)."""
    try:
        decoded = msgspec.msgpack.decode(data)
        if not isinstance(decoded, dict) or decoded.get("format") != FOLD_FORMAT:
            return None
        fold = _decode(decoded["fold"])
    except (msgspec.DecodeError, ValueError, TypeError, KeyError, ZeroDivisionError):
        return None
    return fold if isinstance(fold, StandingsFold) else None


@persisted
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


def schedule_order(match: StoredMatch, games: Sequence[str] = ()) -> tuple:
    """The order matches are played and rated in (SPEC 10.3): deal by deal, then the games in
    the tournament's order (``games``; labels it does not list follow by name), table, rotation."""
    position = games.index(match.game) if match.game in games else len(games)
    return (match.deal, position, match.game, match.table, match.rotation, match.match_id)


def compute_standings(
    matches: Iterable[StoredMatch],
    bots: Sequence[str] = (),
    games: Sequence[str] = (),
    *,
    seating: str = "duplicate",
    confidence: float = CONFIDENCE,
) -> Standings:
    """Fold completed matches, in schedule order, into standings. ``bots`` lists bots to show
    even before they play; ``games`` orders the game tables (others follow by name) and the
    games within a deal; ``seating`` says how many rotations a deal has (every seat's, or one);
    ``confidence`` is that of the intervals and of the separation of ranks."""
    fold = StandingsFold(bots, games, seating=seating, confidence=confidence)
    for match in sorted(matches, key=fold.order):
        fold.add(match)
    return fold.standings()


class StaleFold(Exception):
    """A match arrived too far before the ones already rated: fold again from the start."""


RATING_WINDOW = 1024  # rated matches kept for re-rating when one arrives out of order


@persisted
class StandingsFold:
    """The fold, one match at a time, in any order: :meth:`add` is cheap (a running tournament
    calls it as each match is stored), :meth:`standings` builds the tables from the running sums.

    The result is that of folding the same matches in schedule order. Everything but the ratings
    is order-independent (counts, integer sums, exact fractions; new accumulators must be so
    too). The ratings are order-dependent: they are applied in schedule order, and a match that
    arrives before some already rated (matches finish out of order at concurrency > 1) is put in
    its place: the ones after it are undone, and rated again after it. Only the last
    ``RATING_WINDOW`` rated matches are kept for that: one arriving before them raises
    :class:`StaleFold`.

    The referee's latency figures (:meth:`latency`) are folded beside them, with
    ``margin_ms``, the tournament's margin they are judged against.

    The whole object (but its model) is persisted in the results file (:func:`fold_to_bytes`),
    so that standings extend it rather than refold every stored match.
    """

    # not persisted: the last tables built (until the next match), the model's rating objects
    TRANSIENT = ("_memo", "_players")

    def __init__(
        self,
        bots: Sequence[str] = (),
        games: Sequence[str] = (),
        *,
        seating: str = "duplicate",
        confidence: float = CONFIDENCE,
        margin_ms: int = MARGIN_MS,
    ) -> None:
        self._bots = list(bots)
        self._games = list(games)
        self._single = seating == "single"
        self.confidence = confidence  # applied when the tables are built, not folded in
        self._tallies: dict[str, dict[str, _Tally]] = {}
        self._counts: Counter[str] = Counter()
        self._unrated: Counter[str] = Counter()
        # stored aborted matches: match id -> (game label, faults as (bot, kind)); only their
        # faults count, until a completed match of the same id replaces them
        self._aborted: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        # per-deal statistics (duplicate, intervals, pairs): exact, the same in any order
        self._deals = DealTally()
        # ratings in schedule order: the current ones, and the window of recent rated matches
        # [key, (game, sides, ranks), what undoes it (see _apply)]
        self._ratings: dict[str, dict[str, Rating]] = {}
        self._window: list[list[Any]] = []
        self._floor: tuple | None = None  # key of the last match that left the window
        self._latency = LatencyTally(margin_ms)
        self._changes = 0  # matches added: the tables built are reused until the next one
        self._memo: tuple[tuple[int, float], Standings] | None = None
        self._players: list[
            PlackettLuceRating
        ] = []  # the model's objects, reused (openskill_fast.rate)

    def order(self, match: StoredMatch) -> tuple:
        return schedule_order(match, self._games)

    def _scope(self, scope: str) -> dict[str, _Tally]:
        if scope not in self._tallies:
            self._tallies[scope] = {bot: _Tally() for bot in self._bots}
            self._ratings.setdefault(scope, {})
        return self._tallies[scope]

    @property
    def margin_ms(self) -> int:
        return self._latency.margin_ms

    def decision_times(self, bot: str) -> Counter[int]:
        """The bot's decision times over every completed match folded, counted in units of
        TIME_RESOLUTION_MS (the tally's own Counter: read it, do not change it)."""
        row = self._tallies.get(OVERALL, {}).get(bot)
        return row.times if row is not None else Counter()

    def latency(self) -> LatencyReport:
        """The referee's latency over the completed matches folded (arena.tournament.latency)."""
        return self._latency.report()

    def add(self, match: StoredMatch) -> None:
        self._changes += 1
        self._latency.add(match)
        if not match.completed:  # an aborted match counts only its (startup) faults
            for scope in (match.game, OVERALL):
                self._scope(scope)
            self._aborted[match.match_id] = (
                match.game,
                [(fault.bot, str(fault.kind)) for fault in match.faults],  # (plain: persisted)
            )
            return
        self._aborted.pop(match.match_id, None)
        self._counts[match.game] += 1
        self._counts[OVERALL] += 1
        # lists, not Counters: Counter.update counts a list in C, a Counter item by item
        times = [[round(ms / TIME_RESOLUTION_MS) for ms in seat] for seat in match.decision_ms]
        for scope in (match.game, OVERALL):
            tally = self._scope(scope)
            for seat, bot in enumerate(match.bots):
                row = tally.setdefault(bot, _Tally())
                row.played += 1
                row.wins += match.placings[seat] == 1
                row.placing_sum += match.placings[seat]
                row.score_sum += match.scores[seat]
                row.forfeits += seat in match.forfeited
                if seat < len(times):
                    row.times.update(times[seat])
            for fault in match.faults:
                tally.setdefault(fault.bot, _Tally()).faults[str(fault.kind)] += 1
        self._deals.add(
            (match.game, match.table, match.deal),
            match.rotation,
            Rotation(match.bots, match.scores, match.placings, match.teams),
            scopes=(match.game, OVERALL),
            sign=1 if higher_is_better(match.game_id) else -1,
            expected=1 if self._single else match.players,
        )
        sides = _rating_sides(match)
        if sides is None:
            for scope in (match.game, OVERALL):
                self._unrated[scope] += 1
            return
        self._rate_in_order(self.order(match), (match.game, *sides))

    # -- ratings -----------------------------------------------------------------------------

    def _rate_in_order(self, key: tuple, rating: tuple) -> None:
        window = self._window
        if not window or key > window[-1][0]:
            window.append([key, rating, self._apply(rating)])
            self._trim()
            return
        if self._floor is not None and key < self._floor:
            raise StaleFold(f"match {key[-1]} arrived before the ratings' window")
        at = bisect.bisect_left(window, key, key=_entry_key)
        # back to the ratings before ``at`` (each entry undone), then the late match and the
        # ones after it rated again: the cost grows with how late it is, not with the window
        for i in range(len(window) - 1, at - 1, -1):
            self._undo(window[i][1], window[i][2])
        window.insert(at, [key, rating, None])
        for i in range(at, len(window)):
            window[i][2] = self._apply(window[i][1])
        self._trim()

    def _trim(self) -> None:
        """Forget the oldest rated matches beyond the window."""
        window = self._window
        if len(window) > RATING_WINDOW:
            cut = len(window) - RATING_WINDOW
            self._floor = window[cut - 1][0]
            del window[:cut]

    def _apply(self, rating: tuple) -> list[float | None]:
        """Rate one match in both its scopes; returns what undoes it: the ratings before it,
        mu and sigma flat, scope by scope, bot by bot (None, None: the bot had none). Floats
        alone, not the names: the persisted window stays small."""
        game, members, ranks = rating
        undo: list[float | None] = []
        players = getattr(self, "_players", None)  # (a fold read back from bytes has none)
        if players is None:
            players = self._players = []
        for scope in (game, OVERALL):
            ratings = self._ratings.setdefault(scope, {})
            before = [[ratings.get(bot) for bot in side] for side in members]
            after = openskill_fast.rate(players, before, ranks)
            for side, olds, news in zip(members, before, after, strict=True):
                for bot, old, new in zip(side, olds, news, strict=True):
                    ratings[bot] = new
                    undo += old or (None, None)
        return undo

    def _undo(self, rating: tuple, undo: list[float | None]) -> None:
        """Put back the ratings from before a rated match (``undo``: what _apply returned)."""
        game, members, _ranks = rating
        values = iter(undo)
        for scope in (game, OVERALL):
            ratings = self._ratings[scope]
            for side in members:
                for bot in side:
                    mu, sigma = next(values), next(values)
                    if mu is None or sigma is None:
                        del ratings[bot]
                    else:
                        ratings[bot] = (mu, sigma)

    # -- the tables --------------------------------------------------------------------------

    def standings(self) -> Standings:
        """The tables (built once per state: asking again before another match is free)."""
        key = (self._changes, self.confidence)
        memo = getattr(self, "_memo", None)  # (a fold read back from bytes has none)
        if memo is not None and memo[0] == key:
            return memo[1]
        built = self._standings()
        self._memo = (key, built)
        return built

    def _standings(self) -> Standings:
        for label, _faults in self._aborted.values():
            self._scope(label)
        played = [label for label in self._tallies if label != OVERALL]
        labels = [g for g in self._games if g in played] + sorted(set(played) - set(self._games))
        self._scope(OVERALL)
        extra_faults: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        for label, faults in self._aborted.values():
            for bot, kind in faults:
                for scope in (label, OVERALL):
                    extra_faults[scope][bot][kind] += 1
        by_deal, by_pair = self._deals.snapshot()
        tables, pairs, adjacent = {}, {}, {}
        for scope in [*labels, OVERALL]:
            with_scores = scope != OVERALL
            tallies = self._tallies[scope]
            bots = list(tallies) + [b for b in extra_faults.get(scope, {}) if b not in tallies]
            rows = [
                _row(
                    bot,
                    tallies.get(bot) or _Tally(),
                    self._ratings.get(scope, {}).get(bot),
                    by_deal.get(scope, {}).get(bot),
                    extra_faults.get(scope, {}).get(bot),
                    with_scores=with_scores,
                    confidence=self.confidence,
                )
                for bot in bots
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
            tables[scope] = rows
        matches = {scope: self._counts[scope] for scope in tables}
        unrated = {scope: self._unrated[scope] for scope in tables}
        built = Standings(
            tables=tables,
            matches=matches,
            unrated=unrated,
            pairs=pairs,
            adjacent=adjacent,
            confidence=self.confidence,
        )
        alpha = 1 - self.confidence
        for scope in tables:  # each table is a family of its own
            built = separation(built, [scope], alpha)
        return built


def _entry_key(entry: list[Any]) -> tuple:
    return entry[0]


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


def separation(standings: Standings, scopes: Sequence[str], alpha: float) -> Standings:
    """``standings`` with every pair of rows of each of ``scopes`` judged, all in one family
    (SPEC 10.6): the upper row is separated from the lower when the two-sided t-test of their
    per-deal difference rejects "equal" under Holm's procedure over every pair of those tables
    at ``alpha``, and the upper is the better one. Two-sided, because the rating, not the metric,
    chose which of the two is above. A row's rank is 1 + the rows above it separated from it;
    rows not separated from a neighbour are marked ``tied``."""
    family = []
    for scope in scopes:
        rows = standings.tables.get(scope, [])
        met = {(p.row, p.column): p for p in standings.pairs.get(scope, [])}
        for j, lower in enumerate(rows):
            family += [
                (scope, i, j, met.get((upper.bot, lower.bot))) for i, upper in enumerate(rows[:j])
            ]
    rejected = holm(
        [None if pair is None else pair.estimate.p_two_sided for *_, pair in family], alpha
    )
    above: dict[str, dict[int, set[int]]] = {scope: defaultdict(set) for scope in scopes}
    for (scope, i, j, pair), sure in zip(family, rejected, strict=True):
        if sure and pair is not None and pair.p_better is not None and pair.p_better > 0.5:
            above[scope][j].add(i)
    tables, separated, ranks = dict(standings.tables), {}, {}
    for scope in scopes:
        rows = standings.tables.get(scope, [])
        apart = [j - 1 in above[scope][j] for j in range(1, len(rows))]
        tables[scope] = [
            replace(row, tied=(i > 0 and not apart[i - 1]) or (i < len(apart) and not apart[i]))
            for i, row in enumerate(rows)
        ]
        separated[scope] = apart
        ranks[scope] = [1 + len(above[scope][j]) for j in range(len(rows))]
    return replace(
        standings,
        tables=tables,
        separated={**standings.separated, **separated},
        ranks={**standings.ranks, **ranks},
    )


def _rating_sides(match: StoredMatch) -> tuple[list[list[str]], list[float]] | None:
    """The sides of a Plackett-Luce update (bots per side) and their ranks (forfeits last,
    partners as teams, a bot in several seats by its mean placing); None when the match cannot
    be rated (a bot on two opposing sides)."""
    worst = match.players + 1
    placing = [worst if seat in match.forfeited else p for seat, p in enumerate(match.placings)]
    sides: dict[object, list[int]] = defaultdict(list)  # side -> seats
    for seat, bot in enumerate(match.bots):
        side = match.teams[seat] if match.teams is not None else bot
        sides[side].append(seat)
    members = {side: sorted({match.bots[s] for s in seats}) for side, seats in sides.items()}
    everyone = [bot for bots in members.values() for bot in bots]
    if len(sides) < 2 or len(everyone) != len(set(everyone)):
        return None  # a bot against itself teaches the model nothing
    order = list(sides)
    ranks = [statistics.fmean(placing[s] for s in sides[side]) for side in order]
    return [members[side] for side in order], ranks


def _row(
    bot: str,
    tally: _Tally,
    rating: Rating | None,
    by_deal: BotMoments | None,
    extra_faults: Counter[str] | None,
    *,
    with_scores: bool,
    confidence: float,
) -> BotStanding:
    mu, sigma = rating or DEFAULT_RATING
    played = tally.played
    by_deal = by_deal or BotMoments()
    dup = by_deal.dup
    faults = tally.faults + extra_faults if extra_faults else tally.faults
    return BotStanding(
        bot=bot,
        played=played,
        wins=tally.wins,
        mean_placing=tally.placing_sum / played if played else None,
        mean_score=tally.score_sum / played if played and with_scores else None,
        duplicate=dup.mean() if dup.n and with_scores else None,
        mu=mu,
        sigma=sigma,
        faults=dict(sorted(faults.items())),
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


FOLD_NAME = "standings"
# a running tournament caches its fold every so many stored matches: a reader then folds at most
# that many rows on top (~0.14 ms each; caching costs ~15 ms: a few per mille of their play)
PERSIST_EVERY = 1000


RefoldProgress = Callable[[int], None]  # matches folded so far


def refold(
    store: ResultStore,
    bots: Sequence[str],
    games: Sequence[str],
    *,
    seating: str = "duplicate",
    confidence: float = CONFIDENCE,
    margin_ms: int = MARGIN_MS,
    progress: RefoldProgress | None = None,
) -> StandingsFold:
    """Every stored match folded afresh, in schedule order (streamed from the file: memory
    does not grow with the matches); ``progress``, given, is told how many are folded every
    REFOLD_REPORT_EVERY matches and at the end."""
    fold = StandingsFold(bots, games, seating=seating, confidence=confidence, margin_ms=margin_ms)
    folded = 0
    for match in store.matches_in_rating_order(games):
        fold.add(match)
        folded += 1
        if progress is not None and folded % REFOLD_REPORT_EVERY == 0:
            progress(folded)
    if progress is not None:
        progress(folded)
    return fold


REFOLD_REPORT_EVERY = 1000


def load_fold(
    store: ResultStore,
    bots: Sequence[str],
    games: Sequence[str],
    *,
    seating: str = "duplicate",
    confidence: float = CONFIDENCE,
    margin_ms: int = MARGIN_MS,
    on_refold: Callable[[str, int], RefoldProgress] | None = None,
) -> tuple[StandingsFold, int]:
    """The fold of every stored match and the save number it covers: the cached fold extended
    with the matches stored since, or (no usable cache, or one of other bots, games, seating or
    margin) a refold of them all. ``on_refold(why, matches)``, given, is called before a refold
    with the reason and how many matches it folds, and gives the refold's progress callback."""
    settings: dict[str, Any] = {
        "seating": seating,
        "confidence": confidence,
        "margin_ms": margin_ms,
    }
    seq = store.last_seq()
    found = _cached(store, bots, games, **settings)
    if not isinstance(found, str):
        return found[0], max(seq, found[1])
    progress = None if on_refold is None else on_refold(found, store.count_current())
    return refold(store, bots, games, **settings, progress=progress), seq


def cached_fold(
    store: ResultStore,
    bots: Sequence[str],
    games: Sequence[str],
    *,
    seating: str = "duplicate",
    confidence: float = CONFIDENCE,
    margin_ms: int = MARGIN_MS,
) -> tuple[StandingsFold, int] | None:
    """The cached fold extended with the matches stored since, and the save number it covers;
    None when the file has no usable cache (see :func:`load_fold`)."""
    found = _cached(store, bots, games, seating=seating, confidence=confidence, margin_ms=margin_ms)
    return None if isinstance(found, str) else found


def _cached(
    store: ResultStore,
    bots: Sequence[str],
    games: Sequence[str],
    *,
    seating: str,
    confidence: float,
    margin_ms: int,
) -> tuple[StandingsFold, int] | str:
    """:func:`cached_fold`, or why there is none to use (one phrase)."""
    cached = store.fold_state(FOLD_NAME)
    if cached is None:
        return "the file holds no cached standings (written by an older arena, or deleted)"
    if store.unsequenced():
        return "its rows have no save numbers yet (written by an older arena)"
    state, covered = cached
    fold = fold_from_bytes(state)
    if fold is None:
        return f"its cached standings are of another format (this arena's is {FOLD_FORMAT})"
    for what, cached_value, wanted in (
        ("bots", fold._bots, list(bots)),
        ("games", fold._games, list(games)),
        ("seating", fold._single, seating == "single"),
        ("margin_ms", fold.margin_ms, margin_ms),
    ):
        if cached_value != wanted:
            return f"its cached standings are of other {what} than its definition's"
    fold.confidence = confidence  # the tables' confidence, not part of the sums
    try:
        newer = store.matches(include_aborted=True, since=covered)
        for match in sorted(newer, key=fold.order):
            fold.add(match)
        fold.standings()  # a damaged cache fails here, not in front of the reader
    except Exception:  # StaleFold, or a damaged cache: refolded, never fatal
        return "its cached standings could not take the matches stored since"
    return fold, covered


class LiveStandings:
    """The standings of a results file while a tournament fills it: the fold is extended with
    each stored match and cached in the file every ``PERSIST_EVERY`` matches and on
    :meth:`persist`, so the next reader starts from there."""

    def __init__(
        self,
        store: ResultStore,
        bots: Sequence[str],
        games: Sequence[str],
        *,
        seating: str = "duplicate",
        confidence: float = CONFIDENCE,
        margin_ms: int = MARGIN_MS,
    ) -> None:
        self._store = store
        self._bots, self._games = list(bots), list(games)
        self._seating, self._confidence, self._margin_ms = seating, confidence, margin_ms
        self.fold, _seq = load_fold(
            store,
            self._bots,
            self._games,
            seating=seating,
            confidence=confidence,
            margin_ms=margin_ms,
        )
        self._unsaved = 0

    def add(self, match: StoredMatch) -> None:
        """Fold a match just stored (the latest save: every save is folded in the order made,
        so the fold covers every save up to the store's latest)."""
        try:
            self.fold.add(match)
        except StaleFold:  # far out of order: start again from what is stored
            # in place: whoever holds self.fold (the web pages) sees the refolded one
            fresh = refold(
                self._store,
                self._bots,
                self._games,
                seating=self._seating,
                confidence=self._confidence,
                margin_ms=self._margin_ms,
            )
            vars(self.fold).update(vars(fresh))
        self._unsaved += 1
        if self._unsaved >= PERSIST_EVERY:
            self.persist()

    def persist(self) -> None:
        self._store.save_fold_state(FOLD_NAME, fold_to_bytes(self.fold), self._store.last_seq())
        self._unsaved = 0

    def standings(self) -> Standings:
        return self.fold.standings()

    def latency(self) -> LatencyReport:
        return self.fold.latency()


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
    record_span: tuple[int, int] | None = None  # where in record_path, a records file (SPEC 8)
    # duplicate over its game's spread (the standard deviation of every seat's score minus its
    # cards' mean, over the deals in the report): comparable across games of any scale
    scaled: float = 0.0


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
    worst: Sequence[MatchScore]  # worst scaled duplicate score first
    matches: int  # completed matches it played
    spreads: Mapping[str, float] = field(default_factory=dict)  # game label -> its spread


def percentiles(times: Sequence[float]) -> TimePercentiles | None:
    if not times:
        return None
    ordered = sorted(times)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    return TimePercentiles(len(ordered), rank(0.5), rank(0.9), rank(0.99), ordered[-1])


def bot_report(
    standings: Standings,
    matches: Iterable[StoredMatch],
    bot: str,
    *,
    worst: int = 10,
    game: str | None = None,
) -> BotReport:
    """``bot``'s rows of ``standings`` and, from ``matches`` (the ones it sat in: every rotation
    of its deals, as ResultStore.matches_with gives them), its faults, decision-time percentiles
    and its ``worst`` matches by duplicate score scaled to each game's spread (so that a game
    scored in hundreds does not hide the others). ``game``: that game label's only."""
    if game is not None:
        matches = [match for match in matches if match.game == game]
    rows: dict[str, BotStanding] = {}
    ranks: dict[str, tuple[int, int]] = {}
    for scope, table in standings.tables.items():
        if game is not None and scope != game:
            continue
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
                if game is None:  # (of one game, "overall" would be that game again)
                    times[OVERALL].extend(match.decision_ms[seat])
    scored: list[MatchScore] = []
    apart: dict[str, list[float]] = defaultdict(list)  # game -> every seat's score - its mean
    for group in deals.values():
        if len(group) < 2:
            continue  # one rotation: nothing to compare with
        sign = 1 if higher_is_better(group[0].game_id) else -1
        players = group[0].players
        means = [statistics.fmean(m.scores[seat] for m in group) for seat in range(players)]
        apart[group[0].game] += [m.scores[s] - means[s] for m in group for s in range(players)]
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
                    record_span=match.record_span,
                )
            )
    spreads = {label: math.sqrt(statistics.fmean(d * d for d in v)) for label, v in apart.items()}
    scored = [
        replace(m, scaled=m.duplicate / spreads[m.game] if spreads[m.game] else 0.0) for m in scored
    ]
    scored.sort(key=lambda m: (m.scaled, m.duplicate, m.match_id))
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
        spreads=spreads,
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
        "spreads": dict(report.spreads),
    }
