"""The matches being played: the records not (yet) stored at the end of the records files
written to lately.

A tournament appends each match's record to a records file (SPEC 8): each file is read on from
where the last look stopped, the first time from where the records it stores end (the stored
matches' spans, :meth:`RunningMatches.note_stored`), so a look reads only the bytes added since.
An older arena wrote a file per match, named for it. The reading itself is
``arena.web.records``'.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.referee.record import RECORDS_SUFFIX, RecordPlace
from arena.tournament.store import StoredMatch
from arena.web.index import StoredIndex
from arena.web.records import RECORD_NAME, RecordsFile, record_bots, record_id_of_name

RUNNING_FRESH_S = 30.0  # a record file touched this recently, of a match not stored, is running


@dataclass(frozen=True)
class Playing:
    """A match being played (or just finished, not yet stored), and its record."""

    match_id: str
    record: RecordPlace
    bots: list[str]


class RunningMatches:
    """The matches being played of one tournament, found in its records folder (``records_dir``,
    None: it keeps none, or none is known yet) while ``is_running`` (its results file is being
    written); ``fresh_s``: how recently a record must have been written to to be running."""

    def __init__(
        self,
        index: StoredIndex,
        records_dir: Path | None,
        is_running: Callable[[], bool],
        fresh_s: float = RUNNING_FRESH_S,
    ) -> None:
        self.index = index
        self.records_dir = records_dir
        self.is_running = is_running
        self.fresh_s = fresh_s
        # Records files (by name): how far each stored match's record reaches in it (where a
        # new reader of the file starts), and what has been read of each file, by the event
        # loop's summaries and the worker threads' match pages alike (hence the lock).
        self._record_ends: dict[str, int] = {}
        self._records_files: dict[str, RecordsFile] = {}
        self._lock = threading.Lock()

    def note_stored(self, match: StoredMatch) -> None:
        """A match was stored: its record's end in its records file, and (the first one kept)
        the records folder."""
        span = None if match.record is None else match.record.span
        if match.record is not None and span is not None:
            name = match.record.path.name
            end = span[0] + span[1]
            if end > self._record_ends.get(name, 0):
                self._record_ends[name] = end
        if match.record and self.records_dir is None:
            self.records_dir = match.record.path.parent

    def reset(self) -> None:
        """Forget what was read (the results file was started afresh)."""
        with self._lock:
            self._record_ends.clear()
            self._records_files.clear()

    def find(self, match_id: str) -> RecordPlace | None:
        """The record of a match being played (None: it is not, as far as its records show).
        Blocking (it reads records files): call it in a thread."""
        if self.records_dir is None or not self.is_running():
            return None
        for playing in self.playing(alone=False):
            if playing.match_id == match_id:
                return playing.record
        # an older arena's record of its own, by name
        stem = match_id.replace("/", "_")
        for path in sorted(Path(self.records_dir).glob(f"{glob.escape(stem)}*.jsonl*")):
            if RECORD_NAME.match(path.name) and self._match_id_of_record(path.name) == match_id:
                return RecordPlace(path)
        return None

    def playing(self, *, alone: bool = True) -> list[Playing]:
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
                        if match_id is None or self.index.is_done(match_id):
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
        found: dict[str, Playing] = {}
        # oldest first: a match found twice (a killed run's cut record, and the same match
        # played again) is the one written to last
        for stat, path, match_id in sorted(candidates, key=lambda c: c[0].st_mtime_ns):
            if wall - stat.st_mtime > self.fresh_s:
                continue
            if match_id is None:
                for playing in self._playing_in(path, stat):
                    found[playing.match_id] = playing
                continue
            bots = record_bots(path, None)
            if bots is not None:
                found[match_id] = Playing(match_id, RecordPlace(path), bots)
        with self._lock:
            for gone in self._records_files.keys() - names:
                del self._records_files[gone]
        return sorted(found.values(), key=lambda p: p.match_id)

    def _playing_in(self, path: Path, stat: os.stat_result) -> list[Playing]:
        """The records of a records file after those stored, of matches not stored: reads
        only what was added since the last look, from where the stored records end the first
        time (a running match's record is at the end of its file)."""
        name = path.name
        unstored = self.index.unstored
        with self._lock:
            state = self._records_files.get(name)
            if state is None or stat.st_size < state.cursor:  # (smaller: another file now)
                start = self._record_ends.get(name, 0) if state is None else 0
                state = RecordsFile(cursor=start if start <= stat.st_size else 0)
                self._records_files[name] = state
            seen = (stat.st_size, stat.st_mtime_ns)
            if seen != state.seen:
                state.seen = seen
                state.read_on(path, unstored)
            state.unstored = [m for m in state.unstored if unstored(m.match_id)]
            members = list(state.unstored)
            cut = state.cut
            if cut is not None and cut.match_id is not None and self.index.playable(cut.match_id):
                members.append(cut)
            found = []
            for member in members:
                bots = state.bots.get(member.at)
                if bots is None:
                    bots = record_bots(path, member.at)
                    if bots is None:
                        continue
                    state.bots[member.at] = bots
                assert member.match_id is not None  # (members without one are not kept)
                record = RecordPlace(path, member.at, member.length)
                found.append(Playing(member.match_id, record, bots))
            kept = {member.at for member in members}
            state.bots = {at: bots for at, bots in state.bots.items() if at in kept}
        return found

    def _match_id_of_record(self, name: str) -> str | None:
        """The match id of a record file's name, if the schedule has it."""
        match_id = record_id_of_name(name)
        schedule = self.index.schedule
        if match_id is None or schedule is not None and not schedule.contains_id(match_id):
            return None
        return match_id
