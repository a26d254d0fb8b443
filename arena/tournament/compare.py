"""``arena compare``: NEW against OLD over the same deals, in the same seats, against the same
field: a tournament with a special schedule, the paired per-deal differences it measures, and
the rounds of its sequential test (SPEC.md 10.10).

The schedule is the duplicate schedule of OLD and the field (SPEC 10.2, 10.3), keeping the tables
at which OLD sits; each of those matches is played twice, once as scheduled and once with NEW in
every seat OLD holds (same seed, same rotation, same field). NEW's copy of table ``t`` (of ``T``
tables of that game) is table ``T + t``, so match ids stay ``L/t<table>/d<deal>/r<rotation>``,
the results file is an ordinary one and ``arena standings`` reads it (as a tournament in which
NEW and OLD never meet). The bots are sent an id without the table (SPEC 4.1), so both copies
of a deal are sent the same one; NEW and OLD are sent one name, and every bot process plays one
match: the field cannot tell the copies apart until NEW and OLD act differently.

Per deal of one of OLD's tables, once both copies have every rotation: the difference of NEW's
mean score over its seats and OLD's over the same seats, signed so that positive means NEW did
better (negated where a low score wins). These differences, one series per game, and the
matches NEW or OLD forfeited, feed the test of ``arena.stats.sequential``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from arena.stats.moments import Moments
from arena.stats.sequential import (
    Judgement,
    Overall,
    OverallVerdict,
    TestSettings,
    judge,
    overall,
)
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import Progress, RunSummary, run_tournament
from arena.tournament.schedule import GamePlan, ScheduledMatch, build_schedule, match_id
from arena.tournament.standings import higher_is_better
from arena.tournament.store import ResultStore, StoredMatch

COMPARE_SCHEDULE = "compare"  # how a comparison's results file names its schedule (meta note)
SENT_NAME = "candidate"  # the name NEW and OLD are both sent (another if a field bot has it)


def sent_name(names: Iterable[str]) -> str:
    """The one name NEW and OLD are sent: ``candidate``, or ``candidate-2``, ... when a bot of
    the comparison is called that."""
    taken = set(names)
    found, count = SENT_NAME, 1
    while found in taken:
        count += 1
        found = f"{SENT_NAME}-{count}"
    return found


@dataclass(frozen=True)
class CompareSchedule:
    """The matches of a comparison in schedule order (deal by deal), and where NEW's copies sit."""

    matches: list[ScheduledMatch]
    tables: dict[str, int]  # game label -> T, the number of OLD's tables (NEW's: T .. 2T-1)

    def first_deals(self, deals: int | Mapping[str, int]) -> list[ScheduledMatch]:
        """The matches of the first ``deals`` deals (per game label, when a mapping: a game
        left out has none)."""
        if isinstance(deals, int):
            return [m for m in self.matches if m.deal < deals]
        return [m for m in self.matches if m.deal < deals.get(m.game, 0)]


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
        twin_table = tables[match.game] + match.table
        matches.append(match)
        matches.append(
            replace(
                match,
                match_id=match_id(match.game, twin_table, match.deal, match.rotation),
                table=twin_table,
                seats=tuple(new if bot == old else bot for bot in match.seats),
            )
        )
    return CompareSchedule(matches, tables)


@dataclass
class _Side:
    rotations: dict[int, int] = field(default_factory=dict)  # rotation -> score sum over seats
    forfeited: dict[int, bool] = field(default_factory=dict)  # rotation -> it forfeited a seat
    seats: int = 0  # seats per match of the compared bot


class CompareTally:
    """The paired per-deal differences NEW minus OLD, and the matches each forfeited where the
    other did not, from stored matches in any order."""

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
        side.forfeited[match.rotation] = any(s in match.forfeited for s in seats)
        side.seats = len(seats)
        self._players[key] = match.players
        self._sign[match.game] = 1 if higher_is_better(match.game_id) else -1

    def add_all(self, matches: Iterable[StoredMatch]) -> None:
        for match in matches:
            self.add(match)

    def _below(
        self, deals: int | Mapping[str, int] | None
    ) -> Iterable[tuple[str, int, _Side, _Side]]:
        """(label, players, OLD's side, NEW's side) of each deal below ``deals`` (all when None;
        per label when a mapping), in order."""
        for key, (old, new) in sorted(self._deals.items()):
            label, _table, deal = key
            limit = deals if deals is None or isinstance(deals, int) else deals.get(label, 0)
            if limit is None or deal < limit:
                yield label, self._players[key], old, new

    def differences(self, deals: int | Mapping[str, int] | None = None) -> dict[str, Moments]:
        """Per game label: the sums of the per-deal differences of the deals below ``deals``
        whose rotations are all in, for both NEW and OLD."""
        found: dict[str, Moments] = {label: Moments() for label in self.tables}
        for label, players, old, new in self._below(deals):
            if len(old.rotations) < players or len(new.rotations) < players:
                continue
            if old.seats != new.seats:
                continue  # cannot happen with one schedule: NEW takes exactly OLD's seats
            total = sum(new.rotations.values()) - sum(old.rotations.values())
            found[label].add(self._sign[label] * total, players * old.seats)
        return found

    def forfeits(self, deals: int | Mapping[str, int] | None = None) -> dict[str, tuple[int, int]]:
        """Per game label, over the rotations below ``deals`` that both copies played: (matches
        NEW forfeited where OLD did not, matches OLD forfeited where NEW did not)."""
        found = {label: (0, 0) for label in self.tables}
        for label, _players, old, new in self._below(deals):
            new_only = old_only = 0
            for rotation, lost in new.forfeited.items():
                if rotation in old.forfeited:
                    new_only += lost and not old.forfeited[rotation]
                    old_only += old.forfeited[rotation] and not lost
            before = found[label]
            found[label] = (before[0] + new_only, before[1] + old_only)
        return found

    def judge(
        self, deals: Mapping[str, int], settings: TestSettings, *, sequential: bool = True
    ) -> dict[str, Judgement]:
        """Every game's verdict on its deals below ``deals[label]``."""
        sums, lost = self.differences(deals), self.forfeits(deals)
        return {
            label: judge(
                sums[label],
                settings,
                games=len(self.tables),
                sequential=sequential,
                forfeits=lost[label],
            )
            for label in self.tables
        }


@dataclass
class CompareReport:
    """Where a comparison stopped: each game's verdict and the deals it rests on, the verdict
    across games, and what was played."""

    judgements: dict[str, Judgement]
    deals: dict[str, int]  # per game label: the deals its verdict rests on
    verdict: OverallVerdict
    summary: RunSummary
    aborted: int = 0  # matches aborted in the last round played: no verdict (run again)


LookCallback = Callable[[int, dict[str, Judgement], dict[str, int]], None]


async def run_compare(
    config: TournamentConfig,
    plan: CompareSchedule,
    store: ResultStore,
    settings: TestSettings,
    rounds: Sequence[int],
    *,
    on_look: LookCallback | None = None,
    summary: RunSummary | None = None,
) -> CompareReport:
    """Play the comparison in rounds of deals (``rounds``: the deal counts after which it looks,
    one for a fixed number of deals) and judge every game after each. A game that is decided
    keeps its verdict and plays no more deals; the run stops once the verdict across games is
    decided, or after the last round. Each look judges exactly the deals below it, so a resumed
    run (stored rounds are not played again) decides as an uninterrupted one. (A game that is
    only "not better" keeps playing: the verdict across games may need to know whether it is
    worse.)"""
    new, old = config.bots[0].name, config.bots[1].name
    tally = CompareTally(new, old, plan.tables)
    tally.add_all(store.matches())
    total = summary if summary is not None else RunSummary()
    frozen: dict[str, int] = {}  # decided games: the deals their verdict rests on
    deals = dict.fromkeys(plan.tables, 0)
    judgements: dict[str, Judgement] = {}
    verdict = overall(judgements)
    before = 0  # matches of the earlier rounds (all stored)
    for look in rounds:
        deals = {label: frozen.get(label, look) for label in plan.tables}
        part = plan.first_deals(deals)
        played = RunSummary()
        try:
            await run_tournament(
                config,
                part,
                store,
                Progress(total=len(part)),
                workers=config.worker_count(),
                on_stored=tally.add,
                summary=played,
                definition_matches=plan.matches,
            )
        finally:  # (a round cut short, by Ctrl-C or a failure, still counts what it stored)
            total.played += played.played
            total.aborted += played.aborted
            total.skipped += max(0, played.skipped - before)
            total.started_processes += played.started_processes
        before = len(part)
        if played.aborted:
            return CompareReport(judgements, deals, verdict, total, played.aborted)
        judgements = tally.judge(deals, settings, sequential=len(rounds) > 1)
        for label, judgement in judgements.items():
            if judgement.final:
                frozen.setdefault(label, deals[label])
        verdict = overall(judgements)
        if on_look is not None:
            on_look(look, judgements, deals)
        if verdict.verdict is not Overall.INCONCLUSIVE:
            break
    return CompareReport(judgements, deals, verdict, total)
