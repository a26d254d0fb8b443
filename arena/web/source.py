"""One tournament's web view: its parts, each with one job, wired together.

``arena serve`` and ``arena tournament --web``'s web process make a :class:`TournamentSource`
of a results file; the server asks it for every page. What it keeps lives in its parts:

- ``index`` (arena.web.index.StoredIndex): what is stored, in memory that does not grow with the
  matches (the latest, the faults, a bit per completed match, the deals still open, each bot's
  worst seats), and the reads of the results file for the rest;
- ``fold`` (arena.web.fold.WebStandings): the standings, the tournament's own fold;
- ``running_matches`` (arena.web.running.RunningMatches): the matches being played, found at
  the end of the records files (read through arena.web.records);
- ``feed`` (arena.web.feed.LiveFeed): takes each stored match into those, and says what changed
  (the version the event streams wait on), following the results file;
- ``seals`` (arena.web.sealed.Seals): which cards are sealed and what a viewer sees of them;
- ``pages`` (arena.web.pages.Pages): the JSON each page and API route returns.

Its methods are those parts' calls that the server (and the tests) make of a tournament.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from arena.referee.record import RecordPlace
from arena.stats.moments import CONFIDENCE
from arena.tournament.compare import COMPARE_SCHEDULE, CompareLayout
from arena.tournament.config import plans_of
from arena.tournament.schedule import Schedule, build_schedule
from arena.tournament.standings import MARGIN_MS, Standings, StandingsFold
from arena.tournament.store import ResultStore, StoredMatch
from arena.web.access import SPECTATOR, Viewer
from arena.web.feed import POLL_S, SETTLE_S, LiveFeed
from arena.web.fold import WebStandings
from arena.web.index import LATEST, StoredIndex
from arena.web.pages import TIME_BUCKETS_MS, NotFound, Pages
from arena.web.pages import match_line as _match_line
from arena.web.running import RUNNING_FRESH_S, RunningMatches
from arena.web.sealed import Sealed, Seals

__all__ = [
    "LATEST",
    "RUNNING_FRESH_S",
    "SETTLE_S",
    "TIME_BUCKETS_MS",
    "NotFound",
    "Sealed",
    "TournamentSource",
    "_match_line",
    "schedule_from_definition",
]


def schedule_from_definition(
    definition: Mapping[str, Any], kind: str | None = None
) -> Schedule | CompareLayout:
    """The tournament's schedule, rebuilt from the definition stored in its results file
    (``kind``: the file's special schedule, that of ``arena compare``, if any)."""
    bots = [b["name"] for b in definition.get("bots", [])]
    # A secret seed is null until the tournament ends (SPEC 10.3): what the pages take of the
    # schedule (its size and ids) does not depend on it, so 0 stands in for it (but for a
    # comparison of sampled tables, whose tables OLD sits at it decides).
    seed = int(definition.get("seed") or 0)
    if kind == COMPARE_SCHEDULE:
        return CompareLayout(seed, bots[0], bots[1], bots[2:], plans_of(definition))
    return build_schedule(seed, bots, plans_of(definition), definition.get("seating", "duplicate"))


class TournamentSource:
    """One tournament's stored matches and standings, as the pages need them."""

    def __init__(
        self,
        results: Path,
        *,
        name: str,
        definition: Mapping[str, Any],
        records_dir: Path | None = None,
        fold: StandingsFold | None = None,
        confidence: float = CONFIDENCE,
        clock: Callable[[], float] = time.monotonic,
        kind: str | None = None,
    ) -> None:
        self.results = Path(results)
        self.name = name
        self.definition = dict(definition)
        self.bots = [b["name"] for b in self.definition.get("bots", [])]
        self.games = [g["label"] for g in self.definition.get("games", [])]
        self.kind = kind
        self.schedule: Schedule | CompareLayout | None
        try:
            self.schedule = schedule_from_definition(self.definition, kind)
        except Exception:  # an odd definition (any kind): no schedule, no progress total
            self.schedule = None
        seating = str(self.definition.get("seating", "duplicate"))
        self.index = StoredIndex(self.results, self.schedule, seating)
        # The fold: the caller's (``arena tournament --web`` shares its own, which it feeds),
        # else the file's cached one, read with the first rows (poll_file), or one made over
        # the matches given to load(); its settings the tournament's (``confidence``: its stop
        # rule's, if any).
        self.fold = WebStandings(
            self.results,
            self.bots,
            self.games,
            seating=seating,
            confidence=confidence,
            margin_ms=int(self.definition.get("time", {}).get("margin_ms", MARGIN_MS)),
            fold=fold,
        )
        # (is_running is looked up on each call: whoever holds the source may stand in for it)
        self.running_matches = RunningMatches(
            self.index, records_dir, lambda: self.is_running(), RUNNING_FRESH_S
        )
        self.feed = LiveFeed(self.index, self.fold, self.running_matches, clock)
        self.seals = Seals(self.index)
        self.pages = Pages(
            name,
            self.bots,
            self.games,
            kind,
            index=self.index,
            fold=self.fold,
            feed=self.feed,
            running=self.running_matches,
            seals=self.seals,
            is_running=lambda: self.is_running(),
        )

    @classmethod
    def of_file(cls, results: Path, store: ResultStore, **settings: Any) -> TournamentSource:
        """The source of the results file open in ``store`` (its name, definition and special
        schedule, if any; ``settings``: the other arguments)."""
        return cls(
            results,
            name=store.name(),
            definition=store.definition(),
            kind=store.note("schedule"),
            **settings,
        )

    def is_running(self) -> bool:
        """Whether the tournament is running: its results file is being written."""
        return ResultStore.is_being_written(self.results)

    @property
    def records_dir(self) -> Path | None:
        """Where the tournament keeps its records (None: none, or none known yet)."""
        return self.running_matches.records_dir

    @records_dir.setter
    def records_dir(self, folder: Path | None) -> None:
        self.running_matches.records_dir = folder

    # -- the feed ---------------------------------------------------------------------------------

    def add(self, match: StoredMatch, rowid: int = 0) -> None:
        self.feed.add(match, rowid)

    def load(self, matches: Iterable[StoredMatch], *, folded: bool = False) -> None:
        self.feed.load(matches, folded=folded)

    def poll_file(self, store: ResultStore) -> bool:
        return self.feed.poll_file(store)

    async def watch(self, store: ResultStore, poll_s: float = POLL_S) -> None:
        await self.feed.watch(store, poll_s)

    async def wait_changed(self, version: int, timeout: float) -> None:
        await self.feed.wait_changed(version, timeout)

    async def refresh(self) -> None:
        await self.feed.refresh()

    @property
    def computing(self) -> bool:
        return self.fold.computing

    # -- what is stored, and sealed ---------------------------------------------------------------

    def is_done(self, match_id: str) -> bool:
        return self.index.is_done(match_id)

    def deal_sealed(self, game: str, table: int, deal: int) -> bool:
        return self.seals.deal_sealed(game, table, deal)

    # what is kept, as tests/web/test_source.py holds it to stay bounded
    @property
    def _latest(self) -> deque[StoredMatch]:
        return self.index.latest

    @property
    def _open_deals(self) -> dict[tuple[str, int, int], list[StoredMatch]]:
        return self.index.open_deals

    @property
    def _done_odd(self) -> set[str]:
        return self.index.done_odd

    # -- the pages --------------------------------------------------------------------------------

    def standings(self) -> tuple[Standings, bool]:
        return self.pages.standings()

    def strained(self, match_id: str) -> str | None:
        return self.pages.strained(match_id)

    def summary(self, viewer: Viewer = SPECTATOR) -> dict[str, Any]:
        return self.pages.summary(viewer)

    def running(self) -> list[dict[str, Any]]:
        return self.pages.running_list()

    def bot_page(self, bot: str, viewer: Viewer = SPECTATOR) -> dict[str, Any]:
        return self.pages.bot_page(bot, viewer)

    def compare_page(self) -> dict[str, Any]:
        return self.pages.compare_page()

    def deal_page(
        self, game: str, table: int, deal: int, viewer: Viewer = SPECTATOR
    ) -> dict[str, Any]:
        return self.pages.deal_page(game, table, deal, viewer)

    def record_of(self, match_id: str) -> tuple[RecordPlace | None, StoredMatch | None, bool]:
        return self.pages.record_of(match_id)

    def match_page(
        self, match_id: str, seat: int | None, viewer: Viewer = SPECTATOR
    ) -> dict[str, Any]:
        return self.pages.match_page(match_id, seat, viewer)
