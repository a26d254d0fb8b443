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

import msgspec

from arena.stats.moments import Moments
from arena.stats.sequential import (
    FLOOR,
    Judgement,
    Overall,
    OverallVerdict,
    TestSettings,
    Verdict,
    judge,
    overall,
)
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import Progress, RunSummary, run_tournament
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
    look: CompareLook | None = None  # the last look (None: aborted before one)
    aborted: int = 0  # matches aborted in the last round played: no verdict (run again)


COMPARE_NOTE = "compare"  # a comparison's latest look, kept in its results file (meta note)


class GameLook(msgspec.Struct, frozen=True):
    """One game's verdict at a look, as ``arena compare`` prints it: the deals it rests on
    (``per_table``: per table, ``deals``: in all), the mean per-deal difference NEW minus OLD
    with its interval, its t-statistic against the bound it needs, and why."""

    label: str
    verdict: str
    why: str
    per_table: int
    deals: int
    mean: float | None
    low: float | None
    high: float | None
    t: float | None  # None: no spread yet (fewer than 2 deals, or every deal alike)
    bound: float
    said: str  # the line arena compare prints for it (after "  <label>: ")


class CompareLook(msgspec.Struct, frozen=True):
    """What ``arena compare`` decided at a look (after ``deals`` deals per table): the verdict
    across games (SPEC 10.10) with its wording, and each game's; the test's settings;
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
    floor: float
    confidence: float
    verdict: str
    text: str
    said: str  # the verdict line arena compare prints (at a look before the last: so far)
    games: list[GameLook]


def compare_look(
    tally: CompareTally,
    look: int,
    judgements: Mapping[str, Judgement],
    deals: Mapping[str, int],
    settings: TestSettings,
    *,
    most: int,
    fixed: bool,
) -> CompareLook:
    """The look after ``look`` deals per table, each game judged on its ``deals[label]``."""
    found = overall(judgements)
    games = [
        GameLook(
            label=label,
            verdict=str(j.verdict),
            why=j.why,
            per_table=deals[label],
            deals=j.n,
            mean=j.mean,
            low=j.low,
            high=j.high,
            t=j.t,
            bound=j.bound,
            said=_judgement_text(j, deals[label]),
        )
        for label, j in judgements.items()
    ]
    return CompareLook(
        new=tally.new,
        old=tally.old,
        deals=look,
        most=most,
        fixed=fixed,
        alpha=settings.alpha,
        beta=settings.beta,
        e0=settings.e0,
        e1=settings.e1,
        floor=FLOOR,
        confidence=settings.confidence,
        verdict=str(found.verdict),
        text=found.text,
        said=_verdict_line(found, judgements, tally, look, most, settings),
        games=games,
    )


def _verdict_line(
    found: OverallVerdict,
    judgements: Mapping[str, Judgement],
    tally: CompareTally,
    look: int,
    most: int,
    settings: TestSettings,
) -> str:
    """``NEW is better than OLD: better in A; no change in B``, and the others of SPEC 10.10."""
    new, old, detail = tally.new, tally.old, found.text
    if found.verdict is Overall.BETTER:
        return f"{new} is better than {old}: {detail}"
    if found.verdict is Overall.NOT_BETTER:
        if any(j.verdict is Verdict.WORSE for j in judgements.values()):
            return f"{new} is not better than {old}: {detail}"
        return (
            f"{new} is not better than {old}: no game gained {settings.e1:g} sd or more ({detail})"
        )
    if look < most:
        return f"undecided so far: {look} of at most {most} deals per table: {detail}"
    return f"inconclusive at max: {most} deals per table: {detail}"


def _judgement_text(judgement: Judgement, deals: int) -> str:
    """``better (t = +5.31 >= 5.00): NEW - OLD per deal +3.21, 95% interval [...] over 16
    deals``."""
    what = f"{judgement.verdict} ({judgement.why})"
    if judgement.mean is None:
        return f"{what}: no complete deal yet"
    estimate = f"NEW - OLD per deal {judgement.mean:+.2f}"
    if judgement.low is not None and judgement.high is not None:
        estimate += (
            f", {judgement.confidence:.0%} interval [{judgement.low:+.2f}, {judgement.high:+.2f}]"
        )
    tables = "" if judgement.n == deals else f" of its tables, {deals} per table"
    return f"{what}: {estimate} over {judgement.n} deals{tables}"


def save_look(store: ResultStore, look: CompareLook | None) -> None:
    """Keep the latest look in the results file (None: drop it, a comparison started afresh)."""
    store.save_note(COMPARE_NOTE, None if look is None else msgspec.json.encode(look).decode())


def read_look(store: ResultStore) -> CompareLook | None:
    """The latest look kept in a comparison's results file (None: none yet, or a file of an
    arena that kept none, or kept the single LLR of an older test); a damaged one is a
    StoreError."""
    text = store.note(COMPARE_NOTE)
    if text is None:
        return None
    try:
        if "llr" in msgspec.json.decode(text, type=dict[str, object]):
            return None  # an older arena's look, of its single LLR: judged afresh when run
        return msgspec.json.decode(text, type=CompareLook)
    except msgspec.ValidationError as exc:
        raise StoreError(f"{store.path}: note:{COMPARE_NOTE}: {exc}") from None
    except msgspec.DecodeError:
        raise StoreError(f"{store.path}: note:{COMPARE_NOTE}: not JSON") from None


LookCallback = Callable[[CompareLook], None]


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
    kept: CompareLook | None = None
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
            return CompareReport(judgements, deals, verdict, total, aborted=played.aborted)
        judgements = tally.judge(deals, settings, sequential=len(rounds) > 1)
        for label, judgement in judgements.items():
            if judgement.final:
                frozen.setdefault(label, deals[label])
        verdict = overall(judgements)
        kept = compare_look(
            tally, look, judgements, deals, settings, most=rounds[-1], fixed=len(rounds) == 1
        )
        save_look(store, kept)  # (for the web page, arena serve: SPEC 10.7)
        if on_look is not None:
            on_look(kept)
        if verdict.verdict is not Overall.INCONCLUSIVE:
            break
    return CompareReport(judgements, deals, verdict, total, kept)
