"""The standings the pages show: the tournament's own fold (arena.tournament.standings), kept
up to date.

Given one (``arena tournament --web`` shares its own, which it feeds), that one; following a
file, the fold cached in the file (with the tournament's seating, margin and confidence)
extended with the rows saved since and with each new one. It rates in schedule order, so it is
always what ``arena standings`` prints. Only when a match arrives too far out of order (an
aborted match replayed much later), or when the file has no cached fold, is the fold built
again, in a worker thread, from the file (streamed: arena.tournament.standings.refold).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import trio

from arena.tournament.latency import LatencyReport
from arena.tournament.standings import (
    StaleFold,
    Standings,
    StandingsFold,
    cached_fold,
    refold,
)
from arena.tournament.store import ResultStore, StoredMatch


class WebStandings:
    """One tournament's fold, as matches arrive (its settings: the tournament's seating,
    confidence and margin)."""

    def __init__(
        self,
        results: Path,
        bots: list[str],
        games: list[str],
        *,
        seating: str,
        confidence: float,
        margin_ms: int,
        fold: StandingsFold | None = None,
    ) -> None:
        self.results = results
        self.bots = bots
        self.games = games
        self.settings: dict[str, Any] = {
            "seating": seating,
            "confidence": confidence,
            "margin_ms": margin_ms,
        }
        self.shared = fold is not None
        self._fold: StandingsFold | None = fold
        self.stale = False  # no fold, or a match came too far out of order: see refresh
        # (rowid in the file or 0, match): arrived while stale, folded after the refold
        self._pending: list[tuple[int, StoredMatch]] = []
        self._generation = 0  # a file started afresh (--restart) starts a new one
        self._refresh_lock = trio.Lock()

    def _new_fold(self) -> StandingsFold:
        return StandingsFold(self.bots, self.games, **self.settings)

    def add(self, match: StoredMatch, rowid: int = 0) -> None:
        """Fold in a stored match (``rowid``: its row in the file, 0 if not read from it)."""
        if self.shared:
            return
        if self.stale:
            self._pending.append((rowid, match))
            return
        if self._fold is None:
            self._fold = self._new_fold()
        try:
            self._fold.add(match)
        except StaleFold:  # half added: no longer shown, folded again from the file
            self.stale = True

    def add_in_order(self, matches: Iterable[StoredMatch]) -> None:
        """Fold in matches given at once, in schedule order (no re-rating)."""
        order = (self._fold or self._new_fold()).order
        for match in sorted(matches, key=order):
            self.add(match)

    def read_cached(self, store: ResultStore) -> bool:
        """Take the file's cached fold, unless shared (call it in the snapshot the rows after it
        are read in); False when the file has none usable: a fold is due (:meth:`make_due`)."""
        if self.shared:
            return True
        found = cached_fold(store, self.bots, self.games, **self.settings)
        self._fold = None if found is None else found[0]
        return found is not None

    def make_due(self, due: bool) -> None:
        """Whether the fold is to be made afresh from the file (see :meth:`refresh`)."""
        if not self.shared:
            self.stale = due

    def reset(self) -> None:
        """Forget the fold (the file was started afresh); a shared one is its owner's."""
        if not self.shared:
            self._fold, self.stale, self._pending = None, False, []
        self._generation += 1

    async def refresh(self, *, from_file: bool) -> bool:
        """Make the fold afresh if it is due, over the stored matches (in a worker thread: for a
        large file it takes a while, and the event loop may be playing the tournament); True
        when it did. ``from_file``: the matches arrive by following the file (else they were
        given to :meth:`add`, the file holding each before, as the runner stores them)."""
        async with self._refresh_lock:  # one fold at a time, however many pages ask
            if not self.stale or self.shared:
                return False
            generation = self._generation
            if not from_file:
                self._pending = []  # (the file has them all)
            fresh, covered = await trio.to_thread.run_sync(self._fold_file)
            if generation != self._generation:
                return False  # the file was started afresh meanwhile
            self._fold, self.stale = fresh, False
            arrived, self._pending = self._pending, []
            for rowid, match in arrived:  # stored while the fold was being made
                if rowid == 0 or rowid > covered:  # (else the file's fold has it)
                    self.add(match, rowid)
            return True

    def _fold_file(self) -> tuple[StandingsFold, int]:
        """Every match of the results file folded afresh, and its last row covered (in a worker
        thread, with a connection of its own)."""
        with ResultStore.open_read(self.results) as store, store.snapshot():
            covered = store.last_rowid()
            fold = refold(store, self.bots, self.games, **self.settings)
        fold.standings()  # built here, in the worker thread
        return fold, covered

    @property
    def computing(self) -> bool:
        """The fold is being made afresh (a large file takes a few seconds)."""
        return self._refresh_lock.locked()

    def standings(self) -> Standings:
        """The fold's standings; none while a fold is due (see :meth:`refresh`)."""
        if self.stale:
            return Standings(tables={}, matches={})  # being computed (``computing``)
        if self._fold is None:
            self._fold = self._new_fold()  # nothing stored yet
        return self._fold.standings()

    def latency(self) -> LatencyReport | None:
        """The referee's latency over the completed matches, as ``arena standings`` reports it
        (which matches are strained is the tournament's own verdict, from their stored
        figures); None while the fold is being made."""
        if self.stale or self._fold is None:
            return None
        return self._fold.latency()

    def decision_times(self, bot: str) -> Counter[int]:
        """A bot's decision times over every completed match, in the fold's units (none while
        the fold is being made)."""
        if self.stale or self._fold is None:
            return Counter()
        return self._fold.decision_times(bot)
