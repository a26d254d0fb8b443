"""What the web pages show, kept up to date as matches are stored.

A :class:`TournamentSource` keeps what the pages need of one results file, in memory that does
not grow with the matches stored: the live standings fold, the latest matches and faults, each
bot's latest faults and count, each bot's worst seats by duplicate score (the deals still open
kept whole until their last rotation arrives), the aborted matches, and one bit per completed
match (by its game, table, rotation and deal: whether or not the file's definition gives a
schedule). A page about an older match or deal reads it from the results file
(in a worker thread, by match id). It is fed by :meth:`TournamentSource.watch`, which polls the
SQLite file's ``data_version`` (microseconds) and reads only the rows added since (``arena
serve``, and ``arena tournament --web``'s web process, on a running tournament), or by
:meth:`add` and :meth:`load` (tests). Pure reads; all SQL is in ``arena.tournament.store``.

What of it each viewer may see (the cards sealed while their deal is in play) is decided here,
by :class:`arena.web.access.Viewer`: see :meth:`match_page`, :meth:`deal_page` and
:meth:`_faults_for`.

The matches being played are the records not (yet) stored at the end of the records files
written to lately (a tournament appends each match's record to one, SPEC 8): each file is read
on from where the last look stopped, the first time from where the records it stores end (the
stored matches' spans), so a look reads only the bytes added since.

The standings are the tournament's own fold (arena.tournament.standings): given one (tests), that
one; watching a file, the fold cached in the file (with the tournament's seating, margin and
confidence) extended with the rows saved since and with each new one. It rates in schedule
order, so it is always what ``arena standings`` prints; they are called ``exact`` once nothing
has arrived for :data:`SETTLE_S`. Only when a match arrives too far out of order (an aborted
match replayed much later), or when the file has no cached fold, is the fold built again, in a
worker thread, from the file (streamed: arena.tournament.standings.refold).
"""

from __future__ import annotations

import glob
import os
import re
import statistics
import threading
import time
import zlib
from bisect import insort
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.referee.record import (
    GZIP_MAGIC,
    RECORDS_SUFFIX,
    RecordMember,
    ReplayError,
    decode_line,
    read_span,
    record_members,
    replay_record,
)
from arena.stats.moments import CONFIDENCE
from arena.tournament.compare import COMPARE_SCHEDULE, CompareLayout, read_look
from arena.tournament.config import plans_of
from arena.tournament.latency import LatencyReport
from arena.tournament.schedule import Schedule, build_schedule, split_match_id
from arena.tournament.schedule import match_id as match_id_of
from arena.tournament.standings import (
    MARGIN_MS,
    TIME_RESOLUTION_MS,
    StaleFold,
    Standings,
    StandingsFold,
    cached_fold,
    higher_is_better,
    refold,
    standings_as_data,
)
from arena.tournament.store import ResultStore, StoredMatch, StoreError
from arena.web.access import SPECTATOR, Viewer
from arena.web.matchview import MatchViewError, first_deal, match_frames, read_entries

SETTLE_S = 3.0  # no new match for this long: the standings are called exact (final order)
POLL_S = 0.5  # how often `arena serve` asks the results file whether anything changed
RUNNING_FRESH_S = 30.0  # a record file touched this recently, of a match not stored, is running
LATEST = 20  # finished matches and faults listed on the tournament page
BOT_FAULTS = 200  # a bot's latest faults listed on its page (all are counted)
WORST = 20  # a bot's worst seats by duplicate score listed on its page
# older tournaments named each match's own record <id with _>-<key prefix>.jsonl.gz, older
# ones still .jsonl; tournaments now append records to records files, <started>-<pid>-<n>.jsonl.gz
RECORD_NAME = re.compile(r"^(.+)_t(\d+)_d(\d+)_r(\d+)(?:-[0-9a-f]+)?\.jsonl(?:\.gz)?$")
HEAD_READ = 65536  # bytes read of a record to find its header line
UNSTORED_KEPT = 64  # whole records of a file not (yet) stored that are remembered, at most
TIME_BUCKETS_MS = (0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000)


class NotFound(Exception):
    """A page asked for something the tournament does not have (one line, shown as a 404)."""


class Sealed(PermissionError):
    """A match's cards this viewer may not see yet (one line, shown as a 403 with the seats
    that it may see)."""

    def __init__(self, message: str, allowed: list[int]) -> None:
        super().__init__(message)
        self.allowed = allowed


@dataclass(frozen=True)
class RecordAt:
    """Where a match's record is: the file ``path`` (a record of its own: ``at`` None), or the
    gzip member at byte ``at`` of a records file, ``length`` bytes long (None: up to the end of
    the file, a record still being written)."""

    path: Path
    at: int | None = None
    length: int | None = None


def _stored_record(match: StoredMatch) -> RecordAt | None:
    """Where a stored match's record is (None: none was kept)."""
    if not match.record_path:
        return None
    if match.record_span is None:
        return RecordAt(Path(match.record_path))
    at, length = match.record_span
    return RecordAt(Path(match.record_path), at, length)


@dataclass(frozen=True)
class _Playing:
    """A match being played (or just finished, not yet stored), and its record."""

    match_id: str
    record: RecordAt
    bots: list[str]


@dataclass
class _RecordsFile:
    """What the source has read of one records file: each poll reads only the bytes after
    ``cursor`` (every member before it is whole), and nothing when the file is unchanged."""

    cursor: int
    seen: tuple[int, int] = (-1, -1)  # (size, mtime_ns) when last read
    cut: RecordMember | None = None  # the last member, cut short: being written
    # whole members passed whose match was not stored: just finished (the results file gets it
    # a moment later), or aborted
    unstored: list[RecordMember] = field(default_factory=list)
    bots: dict[int, list[str]] = field(default_factory=dict)  # of members by offset, read once


class _Bits:
    """A set of small non-negative numbers, a bit each."""

    __slots__ = ("_bytes",)

    def __init__(self) -> None:
        self._bytes = bytearray()

    def __contains__(self, number: int) -> bool:
        byte = number >> 3
        return byte < len(self._bytes) and bool(self._bytes[byte] >> (number & 7) & 1)

    def add(self, number: int) -> None:
        byte = number >> 3
        if byte >= len(self._bytes):
            self._bytes.extend(bytes(byte + 1 - len(self._bytes)))
        self._bytes[byte] |= 1 << (number & 7)


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
        # the fold's settings, as the tournament's (``confidence``: its stop rule's, if any)
        self.seating = str(self.definition.get("seating", "duplicate"))
        self.margin_ms = int(self.definition.get("time", {}).get("margin_ms", MARGIN_MS))
        self.confidence = confidence
        self.kind = kind
        self.schedule: Schedule | CompareLayout | None
        try:
            self.schedule = schedule_from_definition(self.definition, kind)
        except Exception:  # an odd definition (any kind): no schedule, no progress total
            self.schedule = None
        self.records_dir = records_dir
        # Records files (by name): how far each stored match's record reaches in it (where a
        # new reader of the file starts), and what has been read of each file, by the event
        # loop's summaries and the worker threads' match pages alike (hence the lock).
        self._record_ends: dict[str, int] = {}
        self._records_files: dict[str, _RecordsFile] = {}
        self._records_lock = threading.Lock()
        self.clock = clock
        # What the pages show, kept as matches arrive (see _note): none of it grows with the
        # matches stored but the bits of those completed and the deals still open.
        self._latest: deque[StoredMatch] = deque(maxlen=LATEST)
        # the latest faults, oldest first, as the tournament page lists them (newest first);
        # longer than shown, so a replayed match's dropped faults leave enough
        self._faults: deque[dict[str, Any]] = deque(maxlen=4 * LATEST)
        self._bot_faults: dict[str, deque[dict[str, Any]]] = {}
        self._fault_counts: Counter[str] = Counter()
        self._aborted: dict[str, StoredMatch] = {}  # stored aborted, not (yet) replayed
        self._completed = 0
        # stored completed: a bit per deal of each game, table and rotation (an id of no
        # match's spelling by name)
        self._done: dict[tuple[str, int, int], _Bits] = {}
        self._done_odd: set[str] = set()
        self._seen_bots: set[str] = set()
        # deals with a completed rotation but not all of them: (game, table, deal) -> rotations
        self._open_deals: dict[tuple[str, int, int], list[StoredMatch]] = {}
        # each game's players: the schedule's, else (a definition it cannot be rebuilt from,
        # as an older arena's) those of its stored matches
        self._players = (
            {}
            if self.schedule is None
            else {plan.label: plan.players for plan in self.schedule.games}
        )
        # each bot's worst seats of the deals complete: sorted (dup, match id, seat, score)
        self._worst_done: dict[str, list[tuple[float, str, int, int]]] = {}
        self.version = 0
        self._arrivals = _Arrivals()
        self._last_arrival = float("-inf")
        # The fold: the caller's (``arena tournament --web`` shares its own, which it feeds),
        # else the file's cached one, read with the first rows (:meth:`poll_file`), or one made
        # over the matches given to :meth:`load`.
        self._shared_fold = fold is not None
        self._fold: StandingsFold | None = fold
        self._stale = False  # no fold, or a match came too far out of order: see refresh
        # (rowid in the file or 0, match): arrived while stale, folded after the refold
        self._pending: list[tuple[int, StoredMatch]] = []
        self._generation = 0  # a file started afresh (--restart) starts a new one
        self._summary: tuple[int, bool, dict[str, Any]] | None = None
        self._worst: tuple[int, dict[str, list[dict[str, Any]]]] | None = None  # _worst_seats
        self._latency: tuple[int, LatencyReport] | None = None  # latency(), per version
        self._changed = trio.Event()
        self._refresh_lock = trio.Lock()
        self._rowid = 0
        self._data_version: int | None = None
        self._created = ""

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

    # -- feeding --------------------------------------------------------------------------------

    def _fold_settings(self) -> dict[str, Any]:
        """The tournament's settings of its fold (confidence: that of its tables)."""
        return {"seating": self.seating, "confidence": self.confidence, "margin_ms": self.margin_ms}

    def _new_fold(self) -> StandingsFold:
        return StandingsFold(self.bots, self.games, **self._fold_settings())

    def _fold_in(self, match: StoredMatch, rowid: int = 0) -> None:
        if self._shared_fold:
            return
        if self._stale:
            self._pending.append((rowid, match))
            return
        if self._fold is None:
            self._fold = self._new_fold()
        try:
            self._fold.add(match)
        except StaleFold:  # half added: no longer shown, folded again from the file
            self._stale = True

    def is_done(self, match_id: str) -> bool:
        """Whether a match of this id is stored completed."""
        place = split_match_id(match_id)
        if place is None:
            return match_id in self._done_odd
        label, table, deal, rotation = place
        deals = self._done.get((label, table, rotation))
        return deals is not None and deal in deals

    def _mark_done(self, match_id: str) -> None:
        place = split_match_id(match_id)
        if place is None:
            self._done_odd.add(match_id)
            return
        label, table, deal, rotation = place
        self._done.setdefault((label, table, rotation), _Bits()).add(deal)

    def _note(self, match: StoredMatch) -> None:
        """Take in a stored match for the pages. A match stored again (an aborted one
        replayed) replaces the earlier one: its faults and its line go, the new ones come
        last."""
        match_id = match.match_id
        done = self.is_done(match_id)
        if self.schedule is None:
            self._players.setdefault(match.game, match.players)
        earlier = self._aborted.pop(match_id, None)
        if earlier is not None:
            self._drop_faults(earlier)
        if earlier is not None or done:  # stored again: its line moves to the end
            for i, kept in enumerate(self._latest):
                if kept.match_id == match_id:
                    del self._latest[i]
                    break
        self._latest.append(match)
        self._seen_bots.update(match.bots)
        if match.record_span is not None and match.record_path:
            name = os.path.basename(match.record_path)
            end = match.record_span[0] + match.record_span[1]
            if end > self._record_ends.get(name, 0):
                self._record_ends[name] = end
        if not match.completed:
            self._aborted[match_id] = match
            self._faults.append(
                {
                    "match_id": match_id,
                    "bot": None,
                    "seat": None,
                    "kind": "aborted",
                    "message": match.reason,
                }
            )
        elif not done:
            self._mark_done(match_id)
            self._completed += 1
            self._note_rotation(match)
        for fault in match.faults:
            self._seen_bots.add(fault.bot)
            self._faults.append(
                {
                    "match_id": match_id,
                    "bot": fault.bot,
                    "seat": fault.seat,
                    "kind": fault.kind,
                    "message": fault.message,
                }
            )
            if fault.bot not in self._bot_faults:
                self._bot_faults[fault.bot] = deque(maxlen=2 * BOT_FAULTS)
            self._bot_faults[fault.bot].append(
                {
                    "match_id": match_id,
                    "seat": fault.seat,
                    "kind": fault.kind,
                    "message": fault.message,
                }
            )
            self._fault_counts[fault.bot] += 1

    def _drop_faults(self, match: StoredMatch) -> None:
        """Forget an aborted match's faults (it was stored again)."""
        match_id = match.match_id
        kept = [f for f in self._faults if f["match_id"] != match_id]
        self._faults = deque(kept, maxlen=self._faults.maxlen)
        for fault in match.faults:
            self._fault_counts[fault.bot] -= 1
        for bot in {fault.bot for fault in match.faults}:
            listed = self._bot_faults.get(bot)
            if listed is not None:
                kept = [f for f in listed if f["match_id"] != match_id]
                self._bot_faults[bot] = deque(kept, maxlen=listed.maxlen)

    def _note_rotation(self, match: StoredMatch) -> None:
        """A completed rotation of its deal: the deal stays open until its last rotation, then
        only its seats among each bot's worst are kept."""
        key = (match.game, match.table, match.deal)
        group = self._open_deals.setdefault(key, [])
        group.append(match)
        rotations = self._rotation_ids(*key)
        if rotations is None or len(group) < len(rotations):
            return  # (a game the schedule does not know stays open)
        del self._open_deals[key]
        for dup, match_id, seat, score, bot in _duplicate_seats(group):
            worst = self._worst_done.setdefault(bot, [])
            seat_of = (dup, match_id, seat, score)
            if len(worst) < WORST or seat_of < worst[-1]:
                insort(worst, seat_of)
                del worst[WORST:]

    def add(self, match: StoredMatch, rowid: int = 0) -> None:
        """A match was stored (called by the runner, or by the file watcher with its row)."""
        self._fold_in(match, rowid)
        self._note(match)
        now = self.clock()
        self._arrivals.note(now)
        self._last_arrival = now
        if match.record_path and self.records_dir is None:
            self.records_dir = Path(match.record_path).parent
        self._bump()

    def load(self, matches: Iterable[StoredMatch], *, folded: bool = False) -> None:
        """The matches already stored when serving starts (no arrival rate from these);
        ``folded``: the fold holds them already (the file's cached fold)."""
        loaded = []
        for match in matches:
            if folded or self._shared_fold:
                self._note(match)
            else:
                loaded.append(match)
            if match.record_path and self.records_dir is None:
                self.records_dir = Path(match.record_path).parent
        if loaded:  # (a source with a fold of its own, given its matches: tests)
            order = (self._fold or self._new_fold()).order
            for match in sorted(loaded, key=order):  # in schedule order: no re-rating
                self._fold_in(match)
            for match in loaded:  # in the order given: the order they were stored
                self._note(match)
        self._bump()

    def _reset(self) -> None:
        self._latest.clear()
        self._faults.clear()
        self._bot_faults.clear()
        self._fault_counts.clear()
        self._aborted.clear()
        self._completed = 0
        self._done.clear()
        self._done_odd.clear()
        self._seen_bots.clear()
        self._open_deals.clear()
        self._worst_done.clear()
        with self._records_lock:
            self._record_ends.clear()
            self._records_files.clear()
        if not self._shared_fold:
            self._fold, self._stale, self._pending = None, False, []
        self._generation += 1
        self._rowid = 0

    def _read_first(self, store: ResultStore) -> bool:
        """Every stored row, taken in a few thousand at a time, and, unless the fold is shared,
        the file's fold of exactly them (its cache and the rows saved since: both read from one
        state of the file). Without a usable cache the fold is due: :meth:`refresh` makes it in
        a worker thread. True if any row was stored."""
        with store.snapshot():
            if not self._shared_fold:
                found = cached_fold(store, self.bots, self.games, **self._fold_settings())
                self._fold = None if found is None else found[0]
            # without decision times: the cached fold has them, or the refold reads the file
            rows = 0
            for rowid, match in store.iter_matches_after(0, times=False):
                self._rowid = max(self._rowid, rowid)
                rows += 1
                self._note(match)
                if match.record_path and self.records_dir is None:
                    self.records_dir = Path(match.record_path).parent
            if not self._shared_fold:
                self._stale = found is None and rows > 0
        self._bump()
        return rows > 0

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self, version: int, timeout: float) -> None:
        """Return once the version is past ``version``, or after ``timeout`` seconds."""
        with trio.move_on_after(timeout):
            while self.version <= version:
                await self._changed.wait()

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

    # -- the tournament page ----------------------------------------------------------------------

    def is_running(self) -> bool:
        return ResultStore.is_being_written(self.results)

    def _settled(self) -> bool:
        return self.clock() - self._last_arrival >= SETTLE_S

    async def refresh(self) -> None:
        """Bring the standings up to date: the fold's tables, or, when a match came too far out
        of order, a new fold over the stored matches (in a worker thread: for a large file it
        takes a while, and the event loop may be playing the tournament)."""
        async with self._refresh_lock:  # one fold at a time, however many pages ask
            if not self._stale or self._shared_fold:
                return
            generation = self._generation
            if self._data_version is None:
                # fed by load() and add() with a fold of its own (tests): the file holds every
                # match given so far, as the runner stores each before it calls on_stored
                self._pending = []
            fresh, covered = await trio.to_thread.run_sync(self._fold_file)
            if generation != self._generation:
                return  # the file was started afresh meanwhile
            self._fold, self._stale = fresh, False
            arrived, self._pending = self._pending, []
            for rowid, match in arrived:  # stored while the fold was being made
                if rowid == 0 or rowid > covered:  # (else the file's fold has it)
                    self._fold_in(match, rowid)
            self._bump()  # new standings: the pages' cached summary and streams move on

    def _fold_file(self) -> tuple[StandingsFold, int]:
        """Every match of the results file folded afresh, and its last row covered (in a worker
        thread, with a connection of its own)."""
        with ResultStore.open_read(self.results) as store, store.snapshot():
            covered = store.last_rowid()
            fold = refold(store, self.bots, self.games, **self._fold_settings())
        fold.standings()  # built here, in the worker thread
        return fold, covered

    def standings(self) -> tuple[Standings, bool]:
        """(standings, exact): the fold's, ``exact`` once settled (nothing new for SETTLE_S);
        none while a fold is due (see :meth:`refresh`)."""
        if self._stale:
            return Standings(tables={}, matches={}), False  # being computed (``computing``)
        if self._fold is None:
            self._fold = self._new_fold()  # nothing stored yet
        return self._fold.standings(), self._settled()

    @property
    def computing(self) -> bool:
        """The exact standings are being folded (a large file takes a few seconds)."""
        return self._refresh_lock.locked()

    def summary(self, viewer: Viewer = SPECTATOR) -> dict[str, Any]:
        """Everything the tournament page shows, as ``viewer`` may see it: the faults' messages
        of sealed matches withheld (see :meth:`_faults_for`)."""
        data = dict(self._summary_data())
        data["faults"] = self._faults_for(data["faults"], viewer)
        return data

    def _summary_data(self) -> dict[str, Any]:
        """The tournament page's data, cached per version."""
        standings, exact = self.standings()
        if self._summary is not None and self._summary[:2] == (self.version, exact):
            cached = self._summary[2]
            cached["progress"] = self._progress()  # the rate and ETA move with the clock
            cached["running"] = self.running()
            return cached
        latency = self.latency()
        strained = {} if latency is None else latency.details
        data = {
            "name": self.name,
            "version": self.version,
            "exact": exact,
            "computing": self.computing and not standings.tables,
            "games": self.games,
            "bots": self.bots,
            "compare": self.kind == COMPARE_SCHEDULE,
            "standings": standings_as_data(standings),
            "latency": None if latency is None else _latency_data(latency),
            "progress": self._progress(),
            "faults": [dict(f) for f in reversed(self._faults)][:LATEST],
            "latest": [
                {**_match_line(m), "strained": strained.get(m.match_id) or None}
                for m in reversed(self._latest)
            ],
            "running": self.running(),
        }
        self._summary = (self.version, exact, data)
        return data

    def latency(self) -> LatencyReport | None:
        """The referee's latency over the completed matches, as ``arena standings`` reports it
        (the fold's: which matches are strained is the tournament's own verdict, from their
        stored figures), made once per version; None while the fold is being made."""
        if self._stale or self._fold is None:
            return None
        if self._latency is None or self._latency[0] != self.version:
            self._latency = (self.version, self._fold.latency())
        return self._latency[1]

    def strained(self, match_id: str) -> str | None:
        """Why a match is strained (None: it is not, or the fold is being made)."""
        latency = self.latency()
        return None if latency is None else latency.details.get(match_id) or None

    def _progress(self) -> dict[str, Any]:
        now = self.clock()
        completed = self._completed
        total = len(self.schedule) if self.schedule is not None else None
        rate = self._arrivals.per_second(now)
        running = self.is_running()
        left = None if total is None else max(total - completed, 0)
        return {
            "completed": completed,
            "total": total,
            "aborted": len(self._aborted),
            "rate": rate if running else None,
            "eta_s": left / rate if running and rate > 0 and left is not None else None,
            "running": running,
        }

    def running(self) -> list[dict[str, Any]]:
        """Matches being played now (only when the tournament keeps records): see
        :meth:`_playing`."""
        return [
            {"match_id": p.match_id, "game": p.match_id.rsplit("/", 3)[0], "bots": p.bots}
            for p in self._playing()
        ]

    def _playing(self, *, alone: bool = True) -> list[_Playing]:
        """The matches being played, by match id: in each records file written to lately, the
        records after those stored, of matches not stored as completed: the last one cut short
        (being written), or whole (just finished, not yet stored). ``alone``: also the records
        of their own (an older arena's) written to lately, of matches not stored completed. A
        file that cannot be read is skipped."""
        if self.records_dir is None or not self.is_running():
            return []
        # (named first: an older arena's folder holds a file per match, stored ones not looked at)
        candidates: list[tuple[os.stat_result, Path, str | None]] = []
        names = set()
        try:
            with os.scandir(self.records_dir) as listing:
                for entry in listing:
                    name = entry.name
                    match_id = None
                    if RECORD_NAME.match(name):
                        match_id = self._match_id_of_record(name) if alone else None
                        if match_id is None or self.is_done(match_id):
                            continue
                    elif name.endswith(RECORDS_SUFFIX):
                        names.add(name)
                    else:
                        continue
                    try:
                        candidates.append((entry.stat(), Path(entry.path), match_id))
                    except OSError:
                        continue  # (gone meanwhile)
        except OSError:
            return []
        wall = time.time()
        found: dict[str, _Playing] = {}
        # oldest first: a match found twice (a killed run's cut record, and the same match
        # played again) is the one written to last
        for stat, path, match_id in sorted(candidates, key=lambda c: c[0].st_mtime_ns):
            if wall - stat.st_mtime > RUNNING_FRESH_S:
                continue
            if match_id is None:
                for playing in self._playing_in(path, stat):
                    found[playing.match_id] = playing
                continue
            bots = _record_bots(path, None)
            if bots is not None:
                found[match_id] = _Playing(match_id, RecordAt(path), bots)
        with self._records_lock:
            for gone in self._records_files.keys() - names:
                del self._records_files[gone]
        return sorted(found.values(), key=lambda p: p.match_id)

    def _playing_in(self, path: Path, stat: os.stat_result) -> list[_Playing]:
        """The records of a records file after those stored, of matches not stored: reads
        only what was added since the last look, from where the stored records end the first
        time (a running match's record is at the end of its file)."""
        name = path.name
        with self._records_lock:
            state = self._records_files.get(name)
            if state is None or stat.st_size < state.cursor:  # (smaller: another file now)
                start = self._record_ends.get(name, 0) if state is None else 0
                state = _RecordsFile(cursor=start if start <= stat.st_size else 0)
                self._records_files[name] = state
            seen = (stat.st_size, stat.st_mtime_ns)
            if seen != state.seen:
                state.seen = seen
                self._read_on(path, state)
            state.unstored = [m for m in state.unstored if self._unstored(m.match_id)]
            members = list(state.unstored)
            cut = state.cut
            if cut is not None and cut.match_id is not None and self._playable(cut.match_id):
                members.append(cut)
            found = []
            for member in members:
                bots = state.bots.get(member.at)
                if bots is None:
                    bots = _record_bots(path, member.at)
                    if bots is None:
                        continue
                    state.bots[member.at] = bots
                assert member.match_id is not None  # (members without one are not kept)
                record = RecordAt(path, member.at, member.length)
                found.append(_Playing(member.match_id, record, bots))
            kept = {member.at for member in members}
            state.bots = {at: bots for at, bots in state.bots.items() if at in kept}
        return found

    def _read_on(self, path: Path, state: _RecordsFile) -> None:
        """Read a records file's members from ``state.cursor`` on, moving the cursor past the
        whole ones; a damaged file keeps what was found before the damage."""
        cut = None
        try:
            for member in record_members(path, state.cursor):
                if member.length is None:
                    cut = member
                    break
                state.cursor = member.at + member.length
                if member.match_id is not None and self._unstored(member.match_id):
                    state.unstored.append(member)
                    del state.unstored[:-UNSTORED_KEPT]
        except (OSError, ReplayError):
            pass  # (read again when the file changes: from the last whole member on)
        state.cut = cut

    def _playable(self, match_id: str) -> bool:
        """Whether a match of this id may be being played: scheduled, not stored completed."""
        if self.schedule is not None and not self.schedule.contains_id(match_id):
            return False
        return not self.is_done(match_id)

    def _unstored(self, match_id: str | None) -> bool:
        """Whether a whole record of this match may be of one just finished, not yet stored
        (not of one stored completed or aborted)."""
        return match_id is not None and match_id not in self._aborted and self._playable(match_id)

    def _match_id_of_record(self, name: str) -> str | None:
        """The match id of a record file's name (ids have "/" where names have "_")."""
        found = RECORD_NAME.match(name)
        if found is None:
            return None
        match_id = f"{found[1]}/t{found[2]}/d{found[3]}/r{found[4]}"
        if self.schedule is not None and not self.schedule.contains_id(match_id):
            return None
        return match_id

    # -- a bot's page -----------------------------------------------------------------------------

    def bot_page(self, bot: str, viewer: Viewer = SPECTATOR) -> dict[str, Any]:
        if bot not in self.bots and bot not in self._seen_bots:
            raise NotFound(f"no bot {bot!r} in tournament {self.name!r}")
        standings, exact = self.standings()
        data = standings_as_data(standings)
        per_game = {}
        for scope, table in data.items():
            for row in table["rows"]:
                if row["bot"] == bot:
                    per_game[scope] = row
        faults = self._faults_for(reversed(self._bot_faults.get(bot, ())), viewer, bot)
        # the fold counts every completed match's decision times (none while it is being made)
        times = Counter() if self._stale or self._fold is None else self._fold.decision_times(bot)
        worst = self._worst_seats().get(bot, [])
        return {
            "bot": bot,
            "tournament": self.name,
            "exact": exact,
            "tables": per_game,
            "faults": faults[:BOT_FAULTS],
            "fault_count": self._fault_counts[bot],
            "times": _histogram(times),  # on the fold's grid of TIME_RESOLUTION_MS
            "worst": worst,
        }

    def _worst_seats(self) -> dict[str, list[dict[str, Any]]]:
        """Each bot's worst seats by duplicate score (ties by match id and seat), made once per
        version: those of the deals complete, kept as each completed, and those of the deals
        still open, whose means may still move."""
        if self._worst is None or self._worst[0] != self.version:
            seats = {bot: list(kept) for bot, kept in self._worst_done.items()}
            for group in self._open_deals.values():
                for dup, match_id, seat, score, bot in _duplicate_seats(group):
                    seats.setdefault(bot, []).append((dup, match_id, seat, score))
            worst = {
                bot: [
                    {"match_id": match_id, "bot": bot, "seat": seat, "score": score, "dup": dup}
                    for dup, match_id, seat, score in sorted(found)[:WORST]
                ]
                for bot, found in seats.items()
            }
            self._worst = (self.version, worst)
        return self._worst[1]

    # -- what is sealed ----------------------------------------------------------------------------

    def _rotation_ids(self, game: str, table: int, deal: int) -> list[str] | None:
        """The ids of a deal's rotations (the same cards in other seats), None for a game of
        unknown players (not in the schedule; without one, none of its matches stored)."""
        players = self._players.get(game)
        if players is None:
            return None
        rotations = range(players) if self.seating == "duplicate" else [deal % players]
        return [match_id_of(game, table, deal, r) for r in rotations]

    def deal_sealed(self, game: str, table: int, deal: int) -> bool:
        """Whether a deal's cards are still hidden: one of its rotations is not stored
        completed (being played, not played yet, or aborted and to be played again), or the
        deal is unknown to the schedule."""
        ids = self._rotation_ids(game, table, deal)
        return ids is None or not all(self.is_done(i) for i in ids)

    def match_sealed(self, match_id: str) -> bool:
        """:meth:`deal_sealed` of the deal a match id names (sealed when the id is unknown)."""
        scheduled = None if self.schedule is None else self.schedule.by_id(match_id)
        if scheduled is None:
            return True
        return self.deal_sealed(scheduled.game, scheduled.table, scheduled.deal)

    def _faults_for(
        self, faults: Iterable[dict[str, Any]], viewer: Viewer, bot: str | None = None
    ) -> list[dict[str, Any]]:
        """Faults (of ``bot``, unless each names its own) as ``viewer`` may read them: a fault
        message can name the cards of the faulting seat, so it is withheld while its match is
        sealed, but from the organiser (an aborted match's reason names none)."""
        shown = []
        for fault in faults:
            fault = dict(fault)
            faulting = fault.get("bot", bot)
            sealed = faulting is not None and self.match_sealed(fault["match_id"])
            if sealed and not viewer.may_see(faulting, sealed=True):
                fault["message"] = None
                fault["withheld"] = True
            shown.append(fault)
        return shown

    # -- a comparison -----------------------------------------------------------------------------

    def compare_page(self) -> dict[str, Any]:
        """A comparison's verdict at its latest look: ``arena compare``'s own, kept in its
        results file (SPEC 10.10). Blocking: call it in a thread."""
        if self.kind != COMPARE_SCHEDULE:
            raise NotFound(f"tournament {self.name!r} is not a comparison (of arena compare)")
        try:
            with ResultStore.open_read(self.results) as store:
                look = read_look(store)
        except StoreError as error:
            raise NotFound(str(error)) from None
        return {
            "name": self.name,
            "new": self.bots[0],
            "old": self.bots[1],
            "field": self.bots[2:],
            "look": None if look is None else msgspec.to_builtins(look),
            "why": None
            if look is not None
            else "no verdict kept yet: arena compare keeps it from its first look on (after 2 "
            "deals per table); a file of an older arena keeps none, or only its former test's "
            "(the same arena compare command, run again, judges the stored deals and keeps it)",
        }

    # -- the duplicate view -----------------------------------------------------------------------

    def _deal_rotations(self, game: str, table: int, deal: int) -> list[StoredMatch]:
        """The completed rotations of a deal, by rotation: kept while the deal is open, else
        read from the results file (blocking: in a worker thread)."""
        group = self._open_deals.get((game, table, deal))
        if group is not None:
            return sorted(group, key=lambda m: m.rotation)
        if not self.results.exists():
            return []
        ids = self._rotation_ids(game, table, deal)  # read by the index of ids
        try:
            with ResultStore.open_read(self.results) as store:
                return store.deal_matches(game, table, deal, ids)
        except StoreError:
            return []

    def deal_page(
        self, game: str, table: int, deal: int, viewer: Viewer = SPECTATOR
    ) -> dict[str, Any]:
        """The duplicate view of one deal; its cards only once every rotation is over (or for
        the organiser). Blocking: call it in a thread."""
        group = self._deal_rotations(game, table, deal)
        if not group:
            raise NotFound(f"no completed match of {game} table {table} deal {deal}")
        first = group[0]
        sealed = self.deal_sealed(game, table, deal)
        sign = 1 if higher_is_better(first.game_id) else -1
        means: list[float | None] = [
            statistics.fmean(m.scores[s] for m in group) if len(group) > 1 else None
            for s in range(first.players)
        ]

        def dup(score: int, mean: float | None) -> float | None:
            return None if mean is None else sign * (score - mean)

        return {
            "game": game,
            "game_id": first.game_id,
            "table": table,
            "deal": deal,
            "higher_is_better": sign == 1,
            "hands": first_deal(first.game_id, first.players, first.options, first.seed)
            if viewer.may_see(None, sealed=sealed)
            else None,
            "sealed": sealed,
            "seats": [
                {
                    "seat": seat,
                    "mean": means[seat],
                    "rotations": [
                        {
                            "match_id": m.match_id,
                            "rotation": m.rotation,
                            "bot": m.bots[seat],
                            "score": m.scores[seat],
                            "placing": m.placings[seat],
                            "forfeited": seat in m.forfeited,
                            "dup": dup(m.scores[seat], means[seat]),
                        }
                        for m in group
                    ],
                }
                for seat in range(first.players)
            ],
        }

    # -- the match page ---------------------------------------------------------------------------

    def record_of(self, match_id: str) -> tuple[RecordAt | None, StoredMatch | None, bool]:
        """(where its record is, stored match, still running) of a match. Blocking (it may read
        the results file and records files): call it in a thread."""
        stored = self._stored(match_id)
        if stored is not None and stored.completed:
            return _stored_record(stored), stored, False
        scheduled = self.schedule is not None and self.schedule.contains_id(match_id)
        if not scheduled and stored is None:
            raise NotFound(f"no match {match_id!r} in tournament {self.name!r}")
        if self.records_dir is not None and self.is_running():
            for playing in self._playing(alone=False):
                if playing.match_id == match_id:
                    return playing.record, stored, True
            # an older arena's record of its own, by name
            stem = match_id.replace("/", "_")
            for path in sorted(Path(self.records_dir).glob(f"{glob.escape(stem)}*.jsonl*")):
                if RECORD_NAME.match(path.name) and self._match_id_of_record(path.name) == match_id:
                    return RecordAt(path), stored, True
        return None, stored, False

    @staticmethod
    def _seat_bots(record: RecordAt | None, stored: StoredMatch | None) -> list[str]:
        """The bots of a match's seats: stored, else from its record's header ([] if neither
        is at hand yet)."""
        if stored is not None and stored.bots:
            return list(stored.bots)
        if record is not None:
            return _record_bots(record.path, record.at) or []
        return []

    def _stored(self, match_id: str) -> StoredMatch | None:
        """The stored match of this id: one of the latest or aborted, else (completed) read
        from the results file (blocking: in a worker thread)."""
        for match in self._latest:
            if match.match_id == match_id:
                return match
        if match_id in self._aborted:
            return self._aborted[match_id]
        if not self.is_done(match_id):
            return None
        try:
            with ResultStore.open_read(self.results) as store:
                return store.match(match_id, times=False)
        except StoreError:
            return None

    def match_page(
        self, match_id: str, seat: int | None, viewer: Viewer = SPECTATOR
    ) -> dict[str, Any]:
        """The match page's data, as ``seat`` saw it (None: all hands). Blocking: call it in a
        thread. A sealed match (being played, or a rotation of its deal not over: the same
        cards) is shown only as ``viewer`` may see it (arena.web.access.Viewer.may_see):
        asking for more is :class:`Sealed`, whose message says what may be seen."""
        record, stored, running = self.record_of(match_id)
        sealed = running or stored is None or not stored.completed or self.match_sealed(match_id)
        bots = self._seat_bots(record, stored)
        allowed = [
            s for s, bot in enumerate(bots) if viewer.may_see(bot, sealed=sealed, playing=running)
        ]
        base: dict[str, Any] = {
            "match_id": match_id,
            "stored": None if stored is None else _match_line(stored),
            # the referee's latency in it (SPEC 10.6), as stored
            "referee": None if stored is None or not stored.referee else dict(stored.referee),
            "running": running,
            "sealed": sealed,
            "all_hands_allowed": viewer.may_see(None, sealed=sealed),
            "seats_allowed": allowed,
        }
        if record is None:
            base["frames"] = None
            if stored is None:
                base["why"] = "this match has not been played yet"
            elif not stored.completed:  # (its record, cut short, is not stored: SPEC 8)
                base["why"] = (
                    f"this match was aborted ({stored.reason}): the next run plays it again"
                )
            else:
                base["why"] = (
                    "no record kept for this match (records = false in the tournament file)"
                )
            return base
        if seat is None and not base["all_hands_allowed"]:
            if not running:
                why = (
                    "all hands of this match are shown once every rotation of its deal is over "
                    "(they are the same cards): until then to the organiser only"
                )
            elif allowed:
                why = (
                    "this match is being played: all hands are shown to the organiser only; your "
                    f"token shows seat {', '.join(map(str, allowed))}"
                )
            else:
                why = f"this match is being played: {_SEALED}"
            raise Sealed(why, allowed)
        if seat is not None and not (base["all_hands_allowed"] or seat in allowed):
            raise Sealed(f"seat {seat}: {_SEALED}", allowed)
        try:
            at, length = record.at, record.length
            if running:
                entries = read_entries(record.path, partial=True, at=at, length=length)
            else:
                entries = replay_record(record.path, at=at, length=length).entries
            base.update(match_frames(entries, seat))
        except (ReplayError, MatchViewError) as error:
            base["frames"] = None
            base["why"] = str(error)
        return base


_SEALED = (
    "its cards are still in play (this match or another rotation of its deal, the same cards): "
    "they are shown to everyone once every rotation of the deal is over; until then to the "
    "organiser, and a seat of a match being played to its bot's owner (with their tokens)"
)


def _record_bots(path: Path, at: int | None) -> list[str] | None:
    """The bots of a record's seats, from its header line (None until it is whole): read from
    the record's first bytes only (the record, being written, is not expanded by the rules)."""
    try:
        head = read_span(path, at or 0, HEAD_READ)
        if head[:2] == GZIP_MAGIC:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_READ)
        line, newline, _rest = head.partition(b"\n")
        header = decode_line(line) if newline else None
        return [str(seat["bot"]) for seat in header["seats"]] if header else None
    except (OSError, zlib.error, msgspec.DecodeError, KeyError, TypeError, IndexError):
        return None


def _duplicate_seats(group: list[StoredMatch]) -> list[tuple[float, str, int, int, str]]:
    """(dup, match id, seat, score, bot) of every seat of a deal's completed rotations: the
    score minus the mean score of those cards over the rotations (the standings' ``dup``,
    signed so positive is better); none for a deal of one rotation."""
    if len(group) < 2:
        return []
    sign = 1 if higher_is_better(group[0].game_id) else -1
    players = group[0].players
    means = [sum(m.scores[s] for m in group) / len(group) for s in range(players)]  # (fmean's)
    return [
        (sign * (m.scores[seat] - means[seat]), m.match_id, seat, m.scores[seat], m.bots[seat])
        for m in group
        for seat in range(players)
    ]


def _match_line(match: StoredMatch) -> dict[str, Any]:
    return {
        "match_id": match.match_id,
        "game": match.game,
        "table": match.table,
        "deal": match.deal,
        "rotation": match.rotation,
        "bots": list(match.bots),
        "scores": list(match.scores),
        "placings": list(match.placings),
        "forfeited": list(match.forfeited),
        "status": match.status,
        "reason": match.reason,
        "record": bool(match.record_path),
        "faults": len(match.faults),
        "duration_s": round(match.duration_s, 3),
    }


def _latency_data(report: LatencyReport) -> dict[str, Any]:
    """The latency report as ``arena standings --json`` gives it, its lists of strained and
    suspect matches cut to the first :data:`LATEST` (with their counts): a page is sent often."""
    data = report.as_data()
    for key in ("strained", "suspect"):
        data[f"{key}_count"] = len(data[key])
        data[key] = data[key][:LATEST]
    return data


def _histogram(times: Mapping[int, int]) -> dict[str, Any]:
    """Decision times, counted in units of TIME_RESOLUTION_MS, into buckets (upper bounds in
    ms; the last is open) and nearest-rank percentiles (``p90``: a time 90 % did not exceed)."""
    bounds = [round(bound / TIME_RESOLUTION_MS) for bound in TIME_BUCKETS_MS]
    counts = [0] * (len(TIME_BUCKETS_MS) + 1)
    ordered = sorted((unit, n) for unit, n in times.items() if n > 0)
    for unit, n in ordered:
        counts[next((i for i, bound in enumerate(bounds) if unit <= bound), len(bounds))] += n
    total = sum(n for _unit, n in ordered)

    def pct(q: float) -> float | None:
        if not total:
            return None
        rank, seen = min(int(q * total), total - 1), 0  # the rank-th time, counting from 0
        for unit, n in ordered:
            seen += n
            if seen > rank:
                return round(unit * TIME_RESOLUTION_MS, 6)
        return None  # (not reached)

    return {
        "bounds_ms": list(TIME_BUCKETS_MS),
        "counts": counts,
        "count": total,
        "p50": pct(0.5),
        "p90": pct(0.9),
        "p99": pct(0.99),
        "max": round(ordered[-1][0] * TIME_RESOLUTION_MS, 6) if ordered else None,
    }
