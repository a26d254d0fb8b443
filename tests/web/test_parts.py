"""The web's parts on their own, over the real tournament's results file: the seals decide from
the index alone (no server, no source), and the running matches take whether the tournament
runs and how fresh a record must be as given."""

from __future__ import annotations

import dataclasses
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

from arena.referee.record import RecordShelf, RecordWriter
from arena.tournament.store import ResultStore, StoredMatch
from arena.web.access import ORGANISER, SPECTATOR, Viewer
from arena.web.index import StoredIndex
from arena.web.running import RunningMatches
from arena.web.sealed import Sealed, Seals
from arena.web.source import schedule_from_definition
from tests.web.test_server import compact_lines, go_on, stored_matches


def empty_index(played: Path) -> StoredIndex:
    with ResultStore.open_read(played) as store:
        definition = store.definition()
    return StoredIndex(played, schedule_from_definition(definition), "duplicate")


def deals_of(played: Path) -> list[list[StoredMatch]]:
    """Every deal's completed rotations, by rotation."""
    deals: dict[tuple[str, int, int], list[StoredMatch]] = defaultdict(list)
    for match in stored_matches(played):
        if match.completed:
            deals[match.game, match.table, match.deal].append(match)
    return [sorted(group, key=lambda m: m.rotation) for group in deals.values()]


@pytest.mark.parametrize("order", ["forwards", "backwards"])
def test_a_deal_stays_sealed_until_its_last_rotation_is_stored_completed(
    played: Path, order: str
) -> None:
    index = empty_index(played)
    seals = Seals(index)
    group = max(deals_of(played), key=len)
    assert len(group) > 1
    if order == "backwards":
        group = group[::-1]
    game, table, deal = group[0].game, group[0].table, group[0].deal
    *first, last = group
    for match in first:
        index.note(match)
        assert seals.deal_sealed(game, table, deal)
        assert all(seals.match_sealed(m.match_id) for m in group)
    index.note(dataclasses.replace(last, status="aborted", reason="stopped"))
    assert seals.deal_sealed(game, table, deal)  # (aborted: to be played again)
    index.note(last)
    assert not seals.deal_sealed(game, table, deal)
    assert not any(seals.match_sealed(m.match_id) for m in group)
    assert seals.match_sealed("no-such-game/t0/d0/r0")  # unknown to the schedule


def test_a_sealed_match_shows_each_viewer_what_it_may_see(played: Path) -> None:
    seals = Seals(empty_index(played))
    match = deals_of(played)[0][0]
    bots = list(match.bots)
    assert seals.of_match(match.match_id, match, running=False)  # nothing stored: sealed
    owner = Viewer(bots=frozenset([bots[1]]))

    allowed, all_hands = seals.match_seats(owner, bots, sealed=True, running=True)
    assert 1 in allowed and not all_hands
    seals.require(1, allowed, all_hands, running=True)
    with pytest.raises(Sealed, match="your token shows seat") as refused:
        seals.require(None, allowed, all_hands, running=True)
    assert refused.value.allowed == allowed

    allowed, all_hands = seals.match_seats(owner, bots, sealed=True, running=False)
    assert (allowed, all_hands) == ([], False)  # finished: its deal's other rotations deal them
    with pytest.raises(Sealed, match="seat 1: its cards are still in play"):
        seals.require(1, allowed, all_hands, running=False)

    allowed, all_hands = seals.match_seats(ORGANISER, bots, sealed=True, running=True)
    seals.require(None, allowed, all_hands, running=True)
    allowed, all_hands = seals.match_seats(SPECTATOR, bots, sealed=False, running=False)
    seals.require(None, allowed, all_hands, running=False)
    assert all_hands and allowed == list(range(len(bots)))


def test_faults_of_a_sealed_match_are_withheld_but_from_the_organiser(played: Path) -> None:
    seals = Seals(empty_index(played))
    fault = {"match_id": deals_of(played)[0][0].match_id, "bot": "illegal", "message": "9H"}
    assert seals.faults_for([fault], SPECTATOR) == [{**fault, "message": None, "withheld": True}]
    assert seals.faults_for([fault], ORGANISER) == [fault]


def test_running_matches_follow_the_given_run_state_and_freshness(
    played: Path, tmp_path: Path
) -> None:
    index = empty_index(played)
    playing = deals_of(played)[0][0]
    records = tmp_path / "records"
    records.mkdir()
    file = RecordShelf(records).take()
    go_on(RecordWriter(file), compact_lines(playing)[:12])
    runs = [True]
    running = RunningMatches(index, records, lambda: runs[0], fresh_s=600.0)
    found = running.playing()
    assert [(p.match_id, p.bots) for p in found] == [(playing.match_id, list(playing.bots))]
    assert running.find(playing.match_id) == found[0].record

    index.note(playing)  # stored completed: no longer being played
    assert running.playing() == [] and running.find(playing.match_id) is None

    fresh = RunningMatches(empty_index(played), records, lambda: runs[0], fresh_s=600.0)
    assert len(fresh.playing()) == 1
    past = time.time() - 3600
    os.utime(file.path, (past, past))
    assert fresh.playing() == []  # written to an hour ago: not running
    fresh.fresh_s = 7200.0
    assert len(fresh.playing()) == 1
    runs[0] = False  # the tournament stopped
    assert fresh.playing() == [] and fresh.find(playing.match_id) is None
    file.close()
