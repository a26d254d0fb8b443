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

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from arena.stats.moments import Moments
from arena.tournament.schedule import (
    GamePlan,
    ScheduledMatch,
    build_schedule,
    match_id,
    split_match_id,
)
from arena.tournament.standings import higher_is_better
from arena.tournament.store import StoredMatch

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
