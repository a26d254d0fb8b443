"""``arena compare``: NEW against OLD over the same deals, in the same seats, against the same
field: a tournament with a special schedule, and the paired per-deal difference it measures.

The schedule is the duplicate schedule of OLD and the field (SPEC 10.2, 10.3), keeping the tables
at which OLD sits; each of those matches is played twice, once as scheduled and once with NEW in
every seat OLD holds (same seed, same rotation, same field). NEW's copy of table ``t`` (of ``T``
tables of that game) is table ``T + t``, so match ids stay ``L/t<table>/d<deal>/r<rotation>``,
the results file is an ordinary one and ``arena standings`` reads it (as a tournament in which
NEW and OLD never meet).

Per deal of one of OLD's tables, once both copies have every rotation: the difference of NEW's
mean score over its seats and OLD's over the same seats, signed so that positive means NEW did
better (negated where a low score wins). These differences, one per deal and game, feed the SPRT
of ``arena.stats.sprt`` and the t-interval of ``arena.stats.moments``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import msgspec

from arena.stats.moments import CONFIDENCE, Moments, estimate
from arena.stats.sprt import BETTER, NOT_BETTER, SprtSettings, game_llr, llr, verdict
from arena.tournament.schedule import (
    GamePlan,
    ScheduledMatch,
    build_schedule,
    match_id,
    split_match_id,
)
from arena.tournament.standings import higher_is_better
from arena.tournament.store import ResultStore, StoredMatch, StoreError

COMPARE_SCHEDULE = "compare"  # how a comparison's results file names its schedule (meta note)


@dataclass(frozen=True)
class CompareSchedule:
    """The matches of a comparison in schedule order (deal by deal), and where NEW's copies sit."""

    matches: list[ScheduledMatch]
    tables: dict[str, int]  # game label -> T, the number of OLD's tables (NEW's: T .. 2T-1)

    def first_deals(self, deals: int) -> list[ScheduledMatch]:
        return [m for m in self.matches if m.deal < deals]


def compare_schedule(
    seed: int, new: str, old: str, field_bots: Sequence[str], games: Sequence[GamePlan]
) -> CompareSchedule:
    """Every match OLD plays in the duplicate schedule of ``[old, *field]``, each followed by its
    copy with NEW in OLD's seats."""
    base = build_schedule(seed, [old, *field_bots], games, "duplicate")
    tables = {plan.label: len(base.tables[g]) for g, plan in enumerate(base.games)}
    matches: list[ScheduledMatch] = []
    for match in base:
        if old not in match.seats:
            continue
        matches.append(match)
        matches.append(_twin(match, tables[match.game], new, old))
    return CompareSchedule(matches, tables)


def _twin(match: ScheduledMatch, tables: int, new: str, old: str) -> ScheduledMatch:
    """NEW's copy of one of OLD's matches (of a game with ``tables`` tables of OLD's field)."""
    table = tables + match.table
    return replace(
        match,
        match_id=match_id(match.game, table, match.deal, match.rotation),
        table=table,
        seats=tuple(new if bot == old else bot for bot in match.seats),
    )


class CompareLayout:
    """A comparison's matches by id, as :class:`arena.tournament.schedule.Schedule` answers for
    a tournament's, without listing them (the web pages of a comparison's results file): the
    duplicate schedule of OLD and the field, its matches where OLD sits and their copies."""

    def __init__(
        self, seed: int, new: str, old: str, field_bots: Sequence[str], games: Sequence[GamePlan]
    ) -> None:
        self.new, self.old = new, old
        self._base = build_schedule(seed, [old, *field_bots], games, "duplicate")
        self.games = self._base.games
        self.seating = "duplicate"
        self.tables = {plan.label: len(self._base.tables[g]) for g, plan in enumerate(self.games)}
        olds = [sum(old in table for table in tables) for tables in self._base.tables]
        self._length = 2 * sum(
            count * plan.players * plan.deals for count, plan in zip(olds, self.games, strict=True)
        )

    def __len__(self) -> int:
        return self._length

    def by_id(self, match_id_: str) -> ScheduledMatch | None:
        """The match of this id, None if the comparison has none."""
        place = split_match_id(match_id_)
        if place is None or place[0] not in self.tables:
            return None
        label, table, deal, rotation = place
        count = self.tables[label]
        twin = table >= count
        match = self._base.by_id(match_id(label, table - count if twin else table, deal, rotation))
        if match is None or self.old not in match.seats:
            return None
        return _twin(match, count, self.new, self.old) if twin else match

    def contains_id(self, match_id_: str) -> bool:
        return self.by_id(match_id_) is not None


@dataclass
class _Side:
    rotations: dict[int, int] = field(default_factory=dict)  # rotation -> score sum over seats
    seats: int = 0  # seats per match of the compared bot


class CompareTally:
    """The paired per-deal differences NEW minus OLD, from stored matches in any order."""

    def __init__(self, new: str, old: str, tables: dict[str, int]) -> None:
        self.new, self.old, self.tables = new, old, tables
        # (label, OLD's table, deal) -> [OLD's side, NEW's side]
        self._deals: dict[tuple[str, int, int], list[_Side]] = defaultdict(
            lambda: [_Side(), _Side()]
        )
        self._players: dict[tuple[str, int, int], int] = {}
        self._sign: dict[str, int] = {}

    def add(self, match: StoredMatch) -> None:
        if not match.completed or match.game not in self.tables:
            return
        count = self.tables[match.game]
        is_new = match.table >= count
        bot = self.new if is_new else self.old
        seats = [s for s, name in enumerate(match.bots) if name == bot]
        if not seats:
            return
        key = (match.game, match.table - count if is_new else match.table, match.deal)
        side = self._deals[key][1 if is_new else 0]
        side.rotations[match.rotation] = sum(match.scores[s] for s in seats)
        side.seats = len(seats)
        self._players[key] = match.players
        self._sign[match.game] = 1 if higher_is_better(match.game_id) else -1

    def differences(self, deals: int | None = None) -> dict[str, Moments]:
        """Per game label: the sums of the per-deal differences of the deals below ``deals``
        (all when None) whose rotations are all in, for both NEW and OLD."""
        found: dict[str, Moments] = {label: Moments() for label in self.tables}
        for (label, _table, deal), (old, new) in sorted(self._deals.items()):
            if deals is not None and deal >= deals:
                continue
            players = self._players[(label, _table, deal)]
            if len(old.rotations) < players or len(new.rotations) < players:
                continue
            if old.seats != new.seats:
                continue  # cannot happen with one schedule: NEW takes exactly OLD's seats
            total = sum(new.rotations.values()) - sum(old.rotations.values())
            found[label].add(self._sign[label] * total, players * old.seats)
        return found

    def add_all(self, matches: Iterable[StoredMatch]) -> None:
        for match in matches:
            self.add(match)


COMPARE_NOTE = "compare"  # a comparison's latest look, kept in its results file (meta note)


class GameLook(msgspec.Struct, frozen=True):
    """One game at a look: its complete deals, the mean per-deal difference NEW minus OLD with
    its t-interval, its LLR (None: infinite, every deal alike; its sign is the mean's), and its
    own verdict where the test gives one."""

    label: str
    deals: int
    mean: float | None
    low: float | None
    high: float | None
    llr: float | None
    verdict: str | None = None


class CompareLook(msgspec.Struct, frozen=True):
    """What ``arena compare`` decided at a look (after ``deals`` deals per table): the LLR
    summed over the games (None: infinite) against Wald's bounds, the verdict, and each game;
    ``most``: the deals it plays at most, ``fixed``: ``--deals N``, judged once at the end."""

    new: str
    old: str
    deals: int
    most: int
    fixed: bool
    alpha: float
    beta: float
    e0: float
    e1: float
    lower: float
    upper: float
    confidence: float
    llr: float | None
    verdict: str
    games: list[GameLook]

    @property
    def llr_value(self) -> float:
        """The LLR as a number (an infinite one is stored as None: its verdict gives its sign)."""
        if self.llr is not None:
            return self.llr
        return {BETTER: math.inf, NOT_BETTER: -math.inf}.get(self.verdict, math.nan)


def compare_look(
    tally: CompareTally, deals: int, settings: SprtSettings, *, most: int, fixed: bool
) -> CompareLook:
    """The look at the first ``deals`` deals of every table (SPEC 10.10)."""
    sums = tally.differences(deals)
    games = []
    for label, moments in sums.items():
        found = estimate(moments)
        games.append(
            GameLook(
                label,
                found.n,
                found.mean,
                found.low,
                found.high,
                _finite(game_llr(found.n, found.mean, found.sd, settings)),
            )
        )
    value = llr(sums, settings)
    return CompareLook(
        new=tally.new,
        old=tally.old,
        deals=deals,
        most=most,
        fixed=fixed,
        alpha=settings.alpha,
        beta=settings.beta,
        e0=settings.e0,
        e1=settings.e1,
        lower=settings.lower,
        upper=settings.upper,
        confidence=CONFIDENCE,
        llr=_finite(value),
        verdict=verdict(value, settings),
        games=games,
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def save_look(store: ResultStore, look: CompareLook | None) -> None:
    """Keep the latest look in the results file (None: drop it, a comparison started afresh)."""
    store.save_note(COMPARE_NOTE, None if look is None else msgspec.json.encode(look).decode())


def read_look(store: ResultStore) -> CompareLook | None:
    """The latest look kept in a comparison's results file (None: none yet, or a file of an
    arena that kept none); a damaged one is a StoreError."""
    text = store.note(COMPARE_NOTE)
    if text is None:
        return None
    try:
        return msgspec.json.decode(text, type=CompareLook)
    except msgspec.ValidationError as exc:
        raise StoreError(f"{store.path}: note:{COMPARE_NOTE}: {exc}") from None
    except msgspec.DecodeError:
        raise StoreError(f"{store.path}: note:{COMPARE_NOTE}: not JSON") from None
