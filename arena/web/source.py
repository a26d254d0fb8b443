"""What the web pages show, kept up to date as matches are stored.

A :class:`TournamentSource` keeps what the pages need of one results file, in memory that does
not grow with the matches stored: the live standings fold, the latest matches and faults, each
bot's latest faults and count, each bot's worst seats by duplicate score (the deals still open
kept whole until their last rotation arrives), the aborted matches, and one bit per scheduled
match for those completed. A page about an older match or deal reads it from the results file
(in a worker thread, by match id). It is fed either in-process (``arena tournament --web``: the
runner's ``on_stored`` callback) or by :meth:`TournamentSource.watch`, which polls the SQLite
file's ``data_version`` (microseconds) and reads only the rows added since (``arena serve`` on a
running tournament). Pure reads; all SQL is in ``arena.tournament.store``.

The standings are the tournament's own fold (arena.tournament.standings): in-process the live
one the runner feeds; watching a file, the fold cached in the file (with the tournament's
seating, margin and confidence) extended with the rows saved since and with each new one. It
rates in schedule order, so it is always what ``arena standings`` prints; they are called
``exact`` once nothing has arrived for :data:`SETTLE_S`. Only when a match arrives too far out
of order (an aborted match replayed much later), or when the file has no cached fold, is the
fold built again, in a worker thread, from the file (streamed: arena.tournament.standings.refold).
"""

from __future__ import annotations

import glob
import re
import statistics
import time
from bisect import insort
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.games import find_game
from arena.referee.record import ReplayError, record_bytes, replay_record
from arena.stats.moments import CONFIDENCE
from arena.tournament.runner import Progress
from arena.tournament.schedule import GamePlan, Schedule, build_schedule
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
from arena.web.matchview import MatchViewError, first_deal, match_frames, read_entries

SETTLE_S = 3.0  # no new match for this long: the standings are called exact (final order)
POLL_S = 0.5  # how often `arena serve` asks the results file whether anything changed
RUNNING_FRESH_S = 30.0  # a record file touched this recently, of a match not stored, is running
LATEST = 20  # finished matches and faults listed on the tournament page
BOT_FAULTS = 200  # a bot's latest faults listed on its page (all are counted)
WORST = 20  # a bot's worst seats by duplicate score listed on its page
# tournaments name records <id with _>-<key prefix>.jsonl.gz (SPEC 8); older ones .jsonl
RECORD_NAME = re.compile(r"^(.+)_t(\d+)_d(\d+)_r(\d+)(?:-[0-9a-f]+)?\.jsonl(?:\.gz)?$")
TIME_BUCKETS_MS = (0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000)


class NotFound(Exception):
    """A page asked for something the tournament does not have (one line, shown as a 404)."""


@dataclass
class _Arrivals:
    """When matches arrived, for a rate and an ETA when the runner's Progress is not at hand."""

    times: deque[float] = field(default_factory=lambda: deque(maxlen=2000))

    def note(self, now: float) -> None:
        self.times.append(now)

    def per_second(self, now: float, window: float = 60.0) -> float:
        recent = [t for t in self.times if now - t <= window]
        if len(recent) < 2:
            return 0.0
        span = max(now - recent[0], 1e-9)
        return len(recent) / span


def schedule_from_definition(definition: Mapping[str, Any]) -> Schedule:
    """The tournament's schedule, rebuilt from the definition stored in its results file."""
    plans = []
    for game in definition.get("games", []):
        spec = find_game(str(game["game"]))
        plans.append(
            GamePlan(
                label=game["label"],
                game_id=spec.id,
                players=int(game["players"]),
                deals=int(game["deals"]),
                options=dict(game.get("options", {})),
                team_size=spec.team_size,
                max_tables=int(game["max_tables"]),
            )
        )
    bots = [b["name"] for b in definition.get("bots", [])]
    return build_schedule(
        int(definition.get("seed", 0)), bots, plans, definition.get("seating", "duplicate")
    )


class TournamentSource:
    """One tournament's stored matches and standings, as the pages need them."""

    def __init__(
        self,
        results: Path,
        *,
        name: str,
        definition: Mapping[str, Any],
        records_dir: Path | None = None,
        progress: Progress | None = None,
        organiser: bool = False,
        fold: StandingsFold | None = None,
        confidence: float = CONFIDENCE,
        clock: Callable[[], float] = time.monotonic,
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
        self.schedule: Schedule | None
        try:
            self.schedule = schedule_from_definition(self.definition)
        except Exception:  # an odd definition (any kind): no schedule, no progress total
            self.schedule = None
        self.records_dir = records_dir
        self.progress = progress  # the runner's, in-process; None when watching a file
        self.organiser = organiser  # may see every hand of a running match
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
        self._done = bytearray()  # a bit per schedule position: stored completed
        self._done_elsewhere: set[str] = set()  # completed, of an id the schedule has not
        self._seen_bots: set[str] = set()
        # deals with a completed rotation but not all of them: (game, table, deal) -> rotations
        self._open_deals: dict[tuple[str, int, int], list[StoredMatch]] = {}
        self._rotations = self._rotation_counts()
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
        self._changed = trio.Event()
        self._refresh_lock = trio.Lock()
        self._rowid = 0
        self._data_version: int | None = None
        self._created = ""

    # -- feeding --------------------------------------------------------------------------------

    def _fold_settings(self) -> dict[str, Any]:
        """The tournament's settings of its fold (confidence: that of its tables)."""
        return {"seating": self.seating, "confidence": self.confidence, "margin_ms": self.margin_ms}

    def _new_fold(self) -> StandingsFold:
        return StandingsFold(self.bots, self.games, **self._fold_settings())

    def _rotation_counts(self) -> dict[str, int]:
        """The rotations a deal of each game has (none known without a schedule)."""
        if self.schedule is None:
            return {}
        duplicate = self.schedule.seating == "duplicate"
        return {plan.label: plan.players if duplicate else 1 for plan in self.schedule.games}

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

    def _position(self, match: StoredMatch) -> int | None:
        """The match's place in the schedule (None for one it does not have)."""
        if self.schedule is None:
            return None
        found = self.schedule.position_of(match.game, match.table, match.deal, match.rotation)
        if found is None or match_id_of(match.game, match.table, match.deal, match.rotation) != (
            match.match_id
        ):
            return None
        return found

    def is_done(self, match_id: str) -> bool:
        """Whether a match of this id is stored completed."""
        position = None if self.schedule is None else self.schedule.position(match_id)
        return self._done_at(position, match_id)

    def _done_at(self, position: int | None, match_id: str) -> bool:
        if position is None:
            return match_id in self._done_elsewhere
        byte = position >> 3
        return byte < len(self._done) and bool(self._done[byte] >> (position & 7) & 1)

    def _mark_done(self, position: int | None, match_id: str) -> None:
        if position is None:
            self._done_elsewhere.add(match_id)
            return
        byte = position >> 3
        if byte >= len(self._done):
            self._done.extend(bytes(byte + 1 - len(self._done)))
        self._done[byte] |= 1 << (position & 7)

    def _note(self, match: StoredMatch) -> None:
        """Take in a stored match for the pages. A match stored again (an aborted one
        replayed) replaces the earlier one: its faults and its line go, the new ones come
        last."""
        match_id = match.match_id
        position = self._position(match)
        done = self._done_at(position, match_id)
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
            self._mark_done(position, match_id)
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
        expected = self._rotations.get(match.game)
        if expected is None or len(group) < expected:
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
        self._done = bytearray()
        self._done_elsewhere.clear()
        self._seen_bots.clear()
        self._open_deals.clear()
        self._worst_done.clear()
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
        if self.progress is not None:
            return True  # in-process: the pages live as long as the run
        return ResultStore.is_being_written(self.results)

    def _settled(self) -> bool:
        if self.progress is not None:
            # In the tournament's own process the live fold serves (as on the terminal): an
            # exact fold of a large file would compete with the referee for the interpreter.
            return False
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

    def summary(self) -> dict[str, Any]:
        """Everything the tournament page shows (cached per version)."""
        standings, exact = self.standings()
        if self._summary is not None and self._summary[:2] == (self.version, exact):
            cached = self._summary[2]
            cached["progress"] = self._progress()  # the rate and ETA move with the clock
            cached["running"] = self.running()
            return cached
        data = {
            "name": self.name,
            "version": self.version,
            "exact": exact,
            "computing": self.computing and not standings.tables,
            "games": self.games,
            "bots": self.bots,
            "standings": standings_as_data(standings),
            "progress": self._progress(),
            "faults": [dict(f) for f in reversed(self._faults)][:LATEST],
            "latest": [_match_line(m) for m in reversed(self._latest)],
            "running": self.running(),
        }
        self._summary = (self.version, exact, data)
        return data

    def _progress(self) -> dict[str, Any]:
        now = self.clock()
        completed = self._completed
        total = len(self.schedule) if self.schedule is not None else None
        if self.progress is not None:
            rate = self.progress.per_second()
            total = self.progress.total or total
        else:
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
        """Matches being played now: a record file written to lately, of a match not stored as
        completed (only when the tournament keeps records)."""
        if self.records_dir is None or not self.is_running():
            return []
        found = []
        try:
            entries = list(Path(self.records_dir).iterdir())
        except OSError:
            return []
        wall = time.time()
        for path in entries:
            match_id = self._match_id_of_record(path.name)
            if match_id is None:
                continue
            if self.is_done(match_id):
                continue
            try:
                fresh = wall - path.stat().st_mtime <= RUNNING_FRESH_S
                first_line = record_bytes(path, partial=True).split(b"\n", 1)[0]  # plain or gzip
                header = msgspec.json.decode(first_line)
                bots = [s["bot"] for s in header["seats"]]
                game = match_id.rsplit("/", 3)[0]
            except (OSError, ReplayError, msgspec.DecodeError, KeyError, TypeError):
                continue  # not yet a whole header line
            if fresh:
                found.append({"match_id": match_id, "game": game, "bots": bots})
        return sorted(found, key=lambda m: m["match_id"])

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

    def bot_page(self, bot: str) -> dict[str, Any]:
        if bot not in self.bots and bot not in self._seen_bots:
            raise NotFound(f"no bot {bot!r} in tournament {self.name!r}")
        standings, exact = self.standings()
        data = standings_as_data(standings)
        per_game = {}
        for scope, table in data.items():
            for row in table["rows"]:
                if row["bot"] == bot:
                    per_game[scope] = row
        faults = [dict(f) for f in reversed(self._bot_faults.get(bot, ()))]  # latest first
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

    # -- the duplicate view -----------------------------------------------------------------------

    def _deal_rotations(self, game: str, table: int, deal: int) -> list[StoredMatch]:
        """The completed rotations of a deal, by rotation: kept while the deal is open, else
        read from the results file (blocking: in a worker thread)."""
        group = self._open_deals.get((game, table, deal))
        if group is not None:
            return sorted(group, key=lambda m: m.rotation)
        if not self.results.exists():
            return []
        plan = (
            next((g for g in self.schedule.games if g.label == game), None)
            if self.schedule
            else None
        )
        ids = None  # the ids its rotations can have: read by the index of ids
        if plan is not None and self.schedule is not None:
            duplicate = self.schedule.seating == "duplicate"
            rotations = range(plan.players) if duplicate else [deal % plan.players]
            ids = [match_id_of(game, table, deal, r) for r in rotations]
        try:
            with ResultStore.open_read(self.results) as store:
                return store.deal_matches(game, table, deal, ids)
        except StoreError:
            return []

    def deal_page(self, game: str, table: int, deal: int) -> dict[str, Any]:
        """The duplicate view of one deal. Blocking: call it in a thread."""
        group = self._deal_rotations(game, table, deal)
        if not group:
            raise NotFound(f"no completed match of {game} table {table} deal {deal}")
        first = group[0]
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
            "hands": first_deal(first.game_id, first.players, first.options, first.seed),
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

    def record_of(self, match_id: str) -> tuple[Path | None, StoredMatch | None, bool]:
        """(record path, stored match, still running) of a match. Blocking (it may read the
        results file): call it in a thread."""
        stored = self._stored(match_id)
        if stored is not None and stored.completed:
            return (Path(stored.record_path) if stored.record_path else None), stored, False
        scheduled = self.schedule is not None and self.schedule.contains_id(match_id)
        if not scheduled and stored is None:
            raise NotFound(f"no match {match_id!r} in tournament {self.name!r}")
        if self.records_dir is not None and self.is_running():
            stem = match_id.replace("/", "_")
            for path in sorted(Path(self.records_dir).glob(f"{glob.escape(stem)}*.jsonl*")):
                if RECORD_NAME.match(path.name) and self._match_id_of_record(path.name) == match_id:
                    return path, stored, True
        return None, stored, False

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

    def match_page(self, match_id: str, seat: int | None) -> dict[str, Any]:
        """The match page's data, as ``seat`` saw it (None: all hands). Blocking: call it in a
        thread. All hands of a running match only for the organiser."""
        path, stored, running = self.record_of(match_id)
        base: dict[str, Any] = {
            "match_id": match_id,
            "stored": None if stored is None else _match_line(stored),
            "running": running,
            "all_hands_allowed": not running or self.organiser,
        }
        if running and seat is None and not self.organiser:
            raise PermissionError(
                "this match is still being played: choose a seat (all hands are for the "
                "organiser: arena serve --organiser)"
            )
        if path is None:
            base["frames"] = None
            base["why"] = (
                "no record kept for this match (records = false in the tournament file)"
                if stored is not None
                else "this match has not been played yet"
            )
            return base
        try:
            if running:
                entries = read_entries(path, partial=True)
            else:
                entries = replay_record(path).entries
            base.update(match_frames(entries, seat))
        except (ReplayError, MatchViewError) as error:
            base["frames"] = None
            base["why"] = str(error)
        return base


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
