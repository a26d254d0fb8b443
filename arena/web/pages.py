"""The page builders: the JSON each page and API route of a tournament returns.

:class:`Pages` builds the tournament page (:meth:`Pages.summary`, cached per version of the
feed), a bot's page, the duplicate view of a deal, the match page and a comparison's verdict
from the parts that keep them (the index, the fold, the running matches) and asks
:class:`arena.web.sealed.Seals` what each viewer may see of the cards. The builders marked
blocking read the results file or records: call them in a worker thread.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from arena.referee.record import RecordPlace
from arena.tournament.compare import COMPARE_SCHEDULE, read_look
from arena.tournament.latency import LatencyReport
from arena.tournament.standings import (
    TIME_RESOLUTION_MS,
    Standings,
    higher_is_better,
    standings_as_data,
)
from arena.tournament.store import ResultStore, StoredMatch, StoreError
from arena.web.access import SPECTATOR, Viewer
from arena.web.feed import LiveFeed
from arena.web.fold import WebStandings
from arena.web.index import BOT_FAULTS, LATEST, StoredIndex
from arena.web.matchview import MatchViewError, first_deal, match_frames
from arena.web.records import record_bots, record_entries
from arena.web.running import RunningMatches
from arena.web.sealed import Seals

TIME_BUCKETS_MS = (0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000)


class NotFound(Exception):
    """A page asked for something the tournament does not have (one line, shown as a 404)."""


class Pages:
    """The pages of one tournament (``name``, its ``bots`` and ``games``; ``kind``: its special
    schedule, if any), built from its parts; ``is_running``: whether its results file is being
    written."""

    def __init__(
        self,
        name: str,
        bots: list[str],
        games: list[str],
        kind: str | None,
        *,
        index: StoredIndex,
        fold: WebStandings,
        feed: LiveFeed,
        running: RunningMatches,
        seals: Seals,
        is_running: Callable[[], bool],
    ) -> None:
        self.name = name
        self.bots = bots
        self.games = games
        self.kind = kind
        self.index = index
        self.fold = fold
        self.feed = feed
        self.running = running
        self.seals = seals
        self.is_running = is_running
        self._summary: tuple[int, bool, dict[str, Any]] | None = None
        self._latency: tuple[int, LatencyReport] | None = None

    # -- the tournament page ----------------------------------------------------------------------

    def standings(self) -> tuple[Standings, bool]:
        """(standings, exact): the fold's, ``exact`` once settled (nothing new for SETTLE_S);
        none while a fold is due (see WebStandings.refresh)."""
        return self.fold.standings(), self.feed.settled()

    def summary(self, viewer: Viewer = SPECTATOR) -> dict[str, Any]:
        """Everything the tournament page shows, as ``viewer`` may see it: the faults' messages
        of sealed matches withheld (see Seals.faults_for)."""
        data = dict(self._summary_data())
        data["faults"] = self.seals.faults_for(data["faults"], viewer)
        return data

    def _summary_data(self) -> dict[str, Any]:
        """The tournament page's data, cached per version."""
        standings, exact = self.standings()
        version = self.feed.version
        if self._summary is not None and self._summary[:2] == (version, exact):
            cached = self._summary[2]
            cached["progress"] = self._progress()  # the rate and ETA move with the clock
            cached["running"] = self.running_list()
            return cached
        latency = self.latency()
        strained = {} if latency is None else latency.details
        data = {
            "name": self.name,
            "version": version,
            "exact": exact,
            "computing": self.fold.computing and not standings.tables,
            "games": self.games,
            "bots": self.bots,
            "compare": self.kind == COMPARE_SCHEDULE,
            "standings": standings_as_data(standings),
            "latency": None if latency is None else latency_data(latency),
            "progress": self._progress(),
            "faults": [dict(f) for f in reversed(self.index.faults)][:LATEST],
            "latest": [
                {**match_line(m), "strained": strained.get(m.match_id) or None}
                for m in reversed(self.index.latest)
            ],
            "running": self.running_list(),
        }
        self._summary = (version, exact, data)
        return data

    def latency(self) -> LatencyReport | None:
        """The referee's latency over the completed matches (WebStandings.latency), made once
        per version; None while the fold is being made."""
        version = self.feed.version
        if self._latency is not None and self._latency[0] == version and not self.fold.stale:
            return self._latency[1]
        report = self.fold.latency()
        self._latency = None if report is None else (version, report)
        return report

    def strained(self, match_id: str) -> str | None:
        """Why a match is strained (None: it is not, or the fold is being made)."""
        latency = self.latency()
        return None if latency is None else latency.details.get(match_id) or None

    def _progress(self) -> dict[str, Any]:
        completed = self.index.completed
        schedule = self.index.schedule
        total = len(schedule) if schedule is not None else None
        rate = self.feed.rate()
        running = self.is_running()
        left = None if total is None else max(total - completed, 0)
        return {
            "completed": completed,
            "total": total,
            "aborted": len(self.index.aborted),
            "rate": rate if running else None,
            "eta_s": left / rate if running and rate > 0 and left is not None else None,
            "running": running,
        }

    def running_list(self) -> list[dict[str, Any]]:
        """Matches being played now (only when the tournament keeps records): see
        RunningMatches.playing."""
        return [
            {"match_id": p.match_id, "game": p.match_id.rsplit("/", 3)[0], "bots": p.bots}
            for p in self.running.playing()
        ]

    # -- a bot's page -----------------------------------------------------------------------------

    def bot_page(self, bot: str, viewer: Viewer = SPECTATOR) -> dict[str, Any]:
        if bot not in self.bots and not self.index.has_bot(bot):
            raise NotFound(f"no bot {bot!r} in tournament {self.name!r}")
        standings, exact = self.standings()
        data = standings_as_data(standings)
        per_game = {}
        for scope, table in data.items():
            for row in table["rows"]:
                if row["bot"] == bot:
                    per_game[scope] = row
        faults = self.seals.faults_for(reversed(self.index.bot_faults.get(bot, ())), viewer, bot)
        return {
            "bot": bot,
            "tournament": self.name,
            "exact": exact,
            "tables": per_game,
            "faults": faults[:BOT_FAULTS],
            "fault_count": self.index.fault_counts[bot],
            # on the fold's grid of TIME_RESOLUTION_MS, of every completed match
            "times": histogram(self.fold.decision_times(bot)),
            "worst": self.index.worst_seats().get(bot, []),
        }

    # -- a comparison -----------------------------------------------------------------------------

    def compare_page(self) -> dict[str, Any]:
        """A comparison's verdict at its latest look: ``arena compare``'s own, kept in its
        results file (SPEC 10.10). Blocking: call it in a thread."""
        if self.kind != COMPARE_SCHEDULE:
            raise NotFound(f"tournament {self.name!r} is not a comparison (of arena compare)")
        try:
            with ResultStore.open_read(self.index.results) as store:
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

    def deal_page(
        self, game: str, table: int, deal: int, viewer: Viewer = SPECTATOR
    ) -> dict[str, Any]:
        """The duplicate view of one deal; its cards only once every rotation is over (or for
        the organiser). Blocking: call it in a thread."""
        group = self.index.deal_rotations(game, table, deal)
        if not group:
            raise NotFound(f"no completed match of {game} table {table} deal {deal}")
        first = group[0]
        sealed = self.seals.deal_sealed(game, table, deal)
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
            if self.seals.deal_hands_shown(viewer, sealed)
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

    def record_of(self, match_id: str) -> tuple[RecordPlace | None, StoredMatch | None, bool]:
        """(where its record is, stored match, still running) of a match. Blocking (it may read
        the results file and records files): call it in a thread."""
        stored = self.index.stored(match_id)
        if stored is not None and stored.completed:
            return stored.record, stored, False
        schedule = self.index.schedule
        scheduled = schedule is not None and schedule.contains_id(match_id)
        if not scheduled and stored is None:
            raise NotFound(f"no match {match_id!r} in tournament {self.name!r}")
        record = self.running.find(match_id)
        return record, stored, record is not None

    def match_page(
        self, match_id: str, seat: int | None, viewer: Viewer = SPECTATOR
    ) -> dict[str, Any]:
        """The match page's data, as ``seat`` saw it (None: all hands). Blocking: call it in a
        thread. A sealed match is shown only as ``viewer`` may see it (Seals.match_seats):
        asking for more is arena.web.sealed.Sealed, whose message says what may be seen."""
        record, stored, running = self.record_of(match_id)
        sealed = self.seals.of_match(match_id, stored, running)
        bots = _seat_bots(record, stored)
        allowed, all_hands = self.seals.match_seats(viewer, bots, sealed=sealed, running=running)
        base: dict[str, Any] = {
            "match_id": match_id,
            "stored": None if stored is None else match_line(stored),
            # the referee's latency in it (SPEC 10.6), as stored
            "referee": None if stored is None or not stored.referee else dict(stored.referee),
            "running": running,
            "sealed": sealed,
            "all_hands_allowed": all_hands,
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
        self.seals.require(seat, allowed, all_hands, running=running)
        try:
            base.update(match_frames(record_entries(record, running=running), seat))
        except MatchViewError as error:
            base["frames"] = None
            base["why"] = str(error)
        return base


def _seat_bots(record: RecordPlace | None, stored: StoredMatch | None) -> list[str]:
    """The bots of a match's seats: stored, else from its record's header ([] if neither is at
    hand yet)."""
    if stored is not None and stored.bots:
        return list(stored.bots)
    if record is not None:
        return record_bots(record.path, record.at) or []
    return []


def match_line(match: StoredMatch) -> dict[str, Any]:
    """A stored match as the pages list it."""
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
        "record": match.record is not None,
        "faults": len(match.faults),
        "duration_s": round(match.duration_s, 3),
    }


def latency_data(report: LatencyReport) -> dict[str, Any]:
    """The latency report as ``arena standings --json`` gives it, its lists of strained and
    suspect matches cut to the first :data:`LATEST` (with their counts): a page is sent often."""
    data = report.as_data()
    for key in ("strained", "suspect"):
        data[f"{key}_count"] = len(data[key])
        data[key] = data[key][:LATEST]
    return data


def histogram(times: Mapping[int, int]) -> dict[str, Any]:
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
