"""The index of what a results file stores, as the pages need it, kept as each match arrives.

:class:`StoredIndex` keeps, in memory that does not grow with the matches stored: the latest
matches and faults, each bot's latest faults and count, the aborted matches (until replayed),
one bit per completed match (by its game, table, rotation and deal: whether or not the file's
definition gives a schedule), the deals still open (kept whole until their last rotation
arrives) and each bot's worst seats of the deals complete. An older match or a complete deal is
read from the results file when a page asks (:meth:`StoredIndex.stored`,
:meth:`StoredIndex.deal_rotations`: blocking, in a worker thread); all SQL is in
``arena.tournament.store``.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter, deque
from pathlib import Path
from typing import Any

from arena.tournament.compare import CompareLayout
from arena.tournament.schedule import Schedule, split_match_id
from arena.tournament.schedule import match_id as match_id_of
from arena.tournament.standings import higher_is_better
from arena.tournament.store import ResultStore, StoredMatch, StoreError

LATEST = 20  # finished matches and faults listed on the tournament page
BOT_FAULTS = 200  # a bot's latest faults listed on its page (all are counted)
WORST = 20  # a bot's worst seats by duplicate score listed on its page


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


class StoredIndex:
    """What of one results file's stored matches the pages list, and where to read the rest."""

    def __init__(
        self, results: Path, schedule: Schedule | CompareLayout | None, seating: str
    ) -> None:
        self.results = results
        self.schedule = schedule
        self.seating = seating
        self.latest: deque[StoredMatch] = deque(maxlen=LATEST)
        # the latest faults, oldest first, as the tournament page lists them (newest first);
        # longer than shown, so a replayed match's dropped faults leave enough
        self.faults: deque[dict[str, Any]] = deque(maxlen=4 * LATEST)
        self.bot_faults: dict[str, deque[dict[str, Any]]] = {}
        self.fault_counts: Counter[str] = Counter()
        self.aborted: dict[str, StoredMatch] = {}  # stored aborted, not (yet) replayed
        self.completed = 0
        # stored completed: a bit per deal of each game, table and rotation (an id of no
        # match's spelling by name)
        self._done: dict[tuple[str, int, int], _Bits] = {}
        self.done_odd: set[str] = set()
        self.seen_bots: set[str] = set()
        # deals with a completed rotation but not all of them: (game, table, deal) -> rotations
        self.open_deals: dict[tuple[str, int, int], list[StoredMatch]] = {}
        # each game's players: the schedule's, else (a definition it cannot be rebuilt from,
        # as an older arena's) those of its stored matches
        self._players = (
            {} if schedule is None else {plan.label: plan.players for plan in schedule.games}
        )
        # each bot's worst seats of the deals complete: sorted (dup, match id, seat, score)
        self._worst_done: dict[str, list[tuple[float, str, int, int]]] = {}
        self._changes = 0  # matches taken in (and resets): the worst seats' cache key
        self._worst: tuple[int, dict[str, list[dict[str, Any]]]] | None = None

    # -- taking matches in ------------------------------------------------------------------------

    def note(self, match: StoredMatch) -> None:
        """Take in a stored match. A match stored again (an aborted one replayed) replaces the
        earlier one: its faults and its line go, the new ones come last."""
        self._changes += 1
        match_id = match.match_id
        done = self.is_done(match_id)
        if self.schedule is None:
            self._players.setdefault(match.game, match.players)
        earlier = self.aborted.pop(match_id, None)
        if earlier is not None:
            self._drop_faults(earlier)
        if earlier is not None or done:  # stored again: its line moves to the end
            for i, kept in enumerate(self.latest):
                if kept.match_id == match_id:
                    del self.latest[i]
                    break
        self.latest.append(match)
        self.seen_bots.update(match.bots)
        if not match.completed:
            self.aborted[match_id] = match
            self.faults.append(
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
            self.completed += 1
            self._note_rotation(match)
        for fault in match.faults:
            self.seen_bots.add(fault.bot)
            self.faults.append(
                {
                    "match_id": match_id,
                    "bot": fault.bot,
                    "seat": fault.seat,
                    "kind": fault.kind,
                    "message": fault.message,
                }
            )
            if fault.bot not in self.bot_faults:
                self.bot_faults[fault.bot] = deque(maxlen=2 * BOT_FAULTS)
            self.bot_faults[fault.bot].append(
                {
                    "match_id": match_id,
                    "seat": fault.seat,
                    "kind": fault.kind,
                    "message": fault.message,
                }
            )
            self.fault_counts[fault.bot] += 1

    def _drop_faults(self, match: StoredMatch) -> None:
        """Forget an aborted match's faults (it was stored again)."""
        match_id = match.match_id
        kept = [f for f in self.faults if f["match_id"] != match_id]
        self.faults = deque(kept, maxlen=self.faults.maxlen)
        for fault in match.faults:
            self.fault_counts[fault.bot] -= 1
        for bot in {fault.bot for fault in match.faults}:
            listed = self.bot_faults.get(bot)
            if listed is not None:
                kept = [f for f in listed if f["match_id"] != match_id]
                self.bot_faults[bot] = deque(kept, maxlen=listed.maxlen)

    def _note_rotation(self, match: StoredMatch) -> None:
        """A completed rotation of its deal: the deal stays open until its last rotation, then
        only its seats among each bot's worst are kept."""
        key = (match.game, match.table, match.deal)
        group = self.open_deals.setdefault(key, [])
        group.append(match)
        rotations = self.rotation_ids(*key)
        if rotations is None or len(group) < len(rotations):
            return  # (a game the schedule does not know stays open)
        del self.open_deals[key]
        for dup, match_id, seat, score, bot in duplicate_seats(group):
            worst = self._worst_done.setdefault(bot, [])
            seat_of = (dup, match_id, seat, score)
            if len(worst) < WORST or seat_of < worst[-1]:
                insort(worst, seat_of)
                del worst[WORST:]

    def _mark_done(self, match_id: str) -> None:
        place = split_match_id(match_id)
        if place is None:
            self.done_odd.add(match_id)
            return
        label, table, deal, rotation = place
        self._done.setdefault((label, table, rotation), _Bits()).add(deal)

    def reset(self) -> None:
        """Forget every match (the file was started afresh)."""
        self._changes += 1
        self.latest.clear()
        self.faults.clear()
        self.bot_faults.clear()
        self.fault_counts.clear()
        self.aborted.clear()
        self.completed = 0
        self._done.clear()
        self.done_odd.clear()
        self.seen_bots.clear()
        self.open_deals.clear()
        self._worst_done.clear()

    # -- what is stored ---------------------------------------------------------------------------

    def is_done(self, match_id: str) -> bool:
        """Whether a match of this id is stored completed."""
        place = split_match_id(match_id)
        if place is None:
            return match_id in self.done_odd
        label, table, deal, rotation = place
        deals = self._done.get((label, table, rotation))
        return deals is not None and deal in deals

    def has_bot(self, bot: str) -> bool:
        """Whether a stored match or fault names this bot."""
        return bot in self.seen_bots

    def playable(self, match_id: str) -> bool:
        """Whether a match of this id may be being played: scheduled, not stored completed."""
        if self.schedule is not None and not self.schedule.contains_id(match_id):
            return False
        return not self.is_done(match_id)

    def unstored(self, match_id: str | None) -> bool:
        """Whether a whole record of this match may be of one just finished, not yet stored
        (not of one stored completed or aborted)."""
        return match_id is not None and match_id not in self.aborted and self.playable(match_id)

    def rotation_ids(self, game: str, table: int, deal: int) -> list[str] | None:
        """The ids of a deal's rotations (the same cards in other seats), None for a game of
        unknown players (not in the schedule; without one, none of its matches stored)."""
        players = self._players.get(game)
        if players is None:
            return None
        rotations = range(players) if self.seating == "duplicate" else [deal % players]
        return [match_id_of(game, table, deal, r) for r in rotations]

    def worst_seats(self) -> dict[str, list[dict[str, Any]]]:
        """Each bot's worst seats by duplicate score (ties by match id and seat), made once per
        change: those of the deals complete, kept as each completed, and those of the deals
        still open, whose means may still move."""
        if self._worst is None or self._worst[0] != self._changes:
            seats = {bot: list(kept) for bot, kept in self._worst_done.items()}
            for group in self.open_deals.values():
                for dup, match_id, seat, score, bot in duplicate_seats(group):
                    seats.setdefault(bot, []).append((dup, match_id, seat, score))
            worst = {
                bot: [
                    {"match_id": match_id, "bot": bot, "seat": seat, "score": score, "dup": dup}
                    for dup, match_id, seat, score in sorted(found)[:WORST]
                ]
                for bot, found in seats.items()
            }
            self._worst = (self._changes, worst)
        return self._worst[1]

    # -- read from the results file (blocking: in a worker thread) --------------------------------

    def stored(self, match_id: str) -> StoredMatch | None:
        """The stored match of this id: one of the latest or aborted, else (completed) read
        from the results file."""
        for match in self.latest:
            if match.match_id == match_id:
                return match
        if match_id in self.aborted:
            return self.aborted[match_id]
        if not self.is_done(match_id):
            return None
        try:
            with ResultStore.open_read(self.results) as store:
                return store.match(match_id, times=False)
        except StoreError:
            return None

    def deal_rotations(self, game: str, table: int, deal: int) -> list[StoredMatch]:
        """The completed rotations of a deal, by rotation: kept while the deal is open, else
        read from the results file."""
        group = self.open_deals.get((game, table, deal))
        if group is not None:
            return sorted(group, key=lambda m: m.rotation)
        if not self.results.exists():
            return []
        ids = self.rotation_ids(game, table, deal)  # read by the index of ids
        try:
            with ResultStore.open_read(self.results) as store:
                return store.deal_matches(game, table, deal, ids)
        except StoreError:
            return []


def duplicate_seats(group: list[StoredMatch]) -> list[tuple[float, str, int, int, str]]:
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
