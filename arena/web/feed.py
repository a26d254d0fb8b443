"""The live feed: what changed since a page last looked.

:class:`LiveFeed` takes in each stored match (into the index, the standings and the running
matches' cursors) and counts a ``version`` that moves with every change, which the event streams
wait on (:meth:`LiveFeed.wait_changed`). It is fed by :meth:`LiveFeed.watch`, which polls the
SQLite file's ``data_version`` and reads only the rows added since (``arena serve``, and
``arena tournament --web``'s web process, on a running tournament), or by :meth:`LiveFeed.add`
(the runner) and :meth:`LiveFeed.load` (tests). The standings are called exact once nothing has
arrived for :data:`SETTLE_S`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import trio

from arena.tournament.store import ResultStore, StoredMatch
from arena.web.fold import WebStandings
from arena.web.index import StoredIndex
from arena.web.running import RunningMatches

SETTLE_S = 3.0  # no new match for this long: the standings are called exact (final order)
POLL_S = 0.5  # how often `arena serve` asks the results file whether anything changed


@dataclass
class _Arrivals:
    """When matches arrived, for a rate and an ETA."""

    times: deque[float] = field(default_factory=lambda: deque(maxlen=2000))

    def note(self, now: float) -> None:
        self.times.append(now)

    def per_second(self, now: float, window: float = 60.0) -> float:
        recent = [t for t in self.times if now - t <= window]
        if len(recent) < 2:
            return 0.0
        span = max(now - recent[0], 1e-9)
        return len(recent) / span


class LiveFeed:
    """Feeds one tournament's stored matches to the parts that keep them, and says when
    anything changed."""

    def __init__(
        self,
        index: StoredIndex,
        standings: WebStandings,
        running: RunningMatches,
        clock: Callable[[], float],
    ) -> None:
        self.index = index
        self.standings = standings
        self.running = running
        self.clock = clock
        self.version = 0
        self._changed = trio.Event()
        self._arrivals = _Arrivals()
        self._last_arrival = float("-inf")
        # how far the results file was read: its last row, its SQLite data_version, and when
        # it was created (another time: started afresh)
        self._rowid = 0
        self._data_version: int | None = None
        self._created = ""

    # -- what changed -----------------------------------------------------------------------------

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self, version: int, timeout: float) -> None:
        """Return once the version is past ``version``, or after ``timeout`` seconds."""
        with trio.move_on_after(timeout):
            while self.version <= version:
                await self._changed.wait()

    def settled(self) -> bool:
        """Nothing new for SETTLE_S: the standings are exact."""
        return self.clock() - self._last_arrival >= SETTLE_S

    def rate(self) -> float:
        """Matches stored per second lately (none counted of those loaded)."""
        return self._arrivals.per_second(self.clock())

    async def refresh(self) -> None:
        """Bring the standings up to date (see WebStandings.refresh); new ones move the
        version on, so the pages' cached summary and streams do."""
        if await self.standings.refresh(from_file=self._data_version is not None):
            self._bump()

    # -- taking matches in ------------------------------------------------------------------------

    def _take(self, match: StoredMatch) -> None:
        self.index.note(match)
        self.running.note_stored(match)

    def add(self, match: StoredMatch, rowid: int = 0) -> None:
        """A match was stored (called by the runner, or by the file watcher with its row)."""
        self.standings.add(match, rowid)
        self._take(match)
        now = self.clock()
        self._arrivals.note(now)
        self._last_arrival = now
        self._bump()

    def load(self, matches: Iterable[StoredMatch], *, folded: bool = False) -> None:
        """The matches already stored when serving starts (no arrival rate from these);
        ``folded``: the fold holds them already (the file's cached fold)."""
        loaded = []
        for match in matches:
            if folded or self.standings.shared:
                self._take(match)
            else:
                loaded.append(match)
        if loaded:  # (a source with a fold of its own, given its matches: tests)
            self.standings.add_in_order(loaded)
            for match in loaded:  # in the order given: the order they were stored
                self._take(match)
        self._bump()

    # -- following the results file ---------------------------------------------------------------

    def _reset(self) -> None:
        self.index.reset()
        self.running.reset()
        self.standings.reset()
        self._rowid = 0

    def _read_first(self, store: ResultStore) -> bool:
        """Every stored row, taken in a few thousand at a time, and, unless the fold is shared,
        the file's fold of exactly them (its cache and the rows saved since: both read from one
        state of the file). Without a usable cache the fold is due: :meth:`refresh` makes it in
        a worker thread. True if any row was stored."""
        with store.snapshot():
            cached = self.standings.read_cached(store)
            # without decision times: the cached fold has them, or the refold reads the file
            rows = 0
            for rowid, match in store.iter_matches_after(0, times=False):
                self._rowid = max(self._rowid, rowid)
                rows += 1
                self._take(match)
            self.standings.make_due(not cached and rows > 0)
        self._bump()
        return rows > 0

    def poll_file(self, store: ResultStore) -> bool:
        """Read what is new in the results file; True if anything was. Cheap when nothing is:
        one ``PRAGMA data_version``."""
        version = store.data_version()
        if version == self._data_version:
            return False
        self._data_version = version
        created = store.created()
        if self._created and created != self._created or store.last_rowid() < self._rowid:
            self._reset()  # the file was started afresh (--restart)
            self._created = created
            self._read_first(store)
            return True
        self._created = created
        if self._rowid == 0:
            return self._read_first(store)
        rows = store.matches_after(self._rowid)
        for rowid, match in rows:
            self._rowid = max(self._rowid, rowid)
            self.add(match, rowid)
        return bool(rows)

    async def watch(self, store: ResultStore, poll_s: float = POLL_S) -> None:
        """Follow the results file of a tournament running in another process."""
        while True:
            self.poll_file(store)
            await trio.sleep(poll_s)
