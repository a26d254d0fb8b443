"""A league on a Dask cluster (``arena league serve --cluster``), for real: ``local:2`` (a Dask
cluster on 127.0.0.1 over TLS) plays the same deal-sets, stores the same matches and so keeps
the same ladder as the server playing them itself, from the same seed; and a worker killed
while it plays a league's rotations loses none and stores none twice."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import trio

from arena.league.config import load_league
from arena.league.league import League
from arena.league.store import LeagueStore
from arena.tournament.standings import StandingsFold, standings_as_data
from arena.tournament.store import StoredMatch
from tests.league.conftest import league_toml, open_store, serving
from tests.tournament.test_cluster import kill_a_busy_worker, needs_dask, two_workers
from tests.waiting import wait_for

DEALSETS = 2
SEEDED = "seed = 11\n"


def _first_dealsets(toml: Path, count: int) -> list[StoredMatch] | None:
    """The stored matches of deal-sets 1..count once all are done (None before)."""
    store = open_store(toml)
    try:
        if store.dealset_count() < count or any(
            not store.dealset(d).done for d in range(1, count + 1)
        ):
            return None
        matches = [m for m in store.matches() if m.deal <= count]
    finally:
        store.close()
    return sorted(matches, key=lambda m: (m.deal, m.rotation))


def _outcome(match: StoredMatch) -> tuple:
    return (match.match_id, match.bots, match.scores, match.placings, match.status)


def _ladder(matches: list[StoredMatch]) -> dict:
    """The ladder of ``matches``, less the bots' decision times (the clock's, not the cards')."""
    fold = StandingsFold(games=["eight-rounds"])
    for match in matches:
        fold.add(match)
    data = standings_as_data(fold.standings())
    for table in data.values():
        for row in table["rows"]:
            del row["median_ms"]
    return data


@needs_dask
def test_a_league_on_a_local_cluster_stores_what_the_server_plays_itself(tmp_path: Path) -> None:
    played = {}
    for name, options in (("here", ()), ("dask", ("--cluster", "local:2"))):
        folder = tmp_path / name
        folder.mkdir()
        toml = league_toml(folder, extra=SEEDED)
        with serving(toml, *options):
            played[name] = wait_for(
                f"{DEALSETS} deal-sets played {name}",
                lambda toml=toml: _first_dealsets(toml, DEALSETS),
            )
    assert len(played["here"]) == 3 * DEALSETS
    assert all(m.completed for m in played["here"])
    assert [_outcome(m) for m in played["dask"]] == [_outcome(m) for m in played["here"]]
    assert _ladder(played["dask"]) == _ladder(played["here"])
    # each match's record is kept beside the league's, as a local run keeps it
    assert all(m.record is not None and m.record.path.is_file() for m in played["dask"])


@needs_dask
def test_a_worker_killed_mid_dealset_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    from arena.tournament.executors.dask_cluster import DaskCluster

    config = load_league(league_toml(tmp_path, extra=SEEDED))
    store = LeagueStore.open(config.store_path, name=config.name)
    cluster, client = two_workers()
    try:
        pids = client.run(os.getpid)
        league = League(config, store, DaskCluster(cluster.scheduler_address, keep_connected=True))
        league.register_house_bots()
        victims: list[str] = []
        saved: list[tuple[int, int]] = []
        save = store.save_match

        def save_and_kill(dealset: int, rotation: int, match: StoredMatch) -> None:
            save(dealset, rotation, match)
            saved.append((dealset, rotation))
            if not victims:  # the first time a worker plays a rotation of ours: killed
                victim = kill_a_busy_worker(client, pids)
                if victim is not None:
                    victims.append(victim)

        store.save_match = save_and_kill  # type: ignore[method-assign]

        async def play() -> None:
            try:
                for _ in range(3):
                    dealset = league.next_dealset()
                    assert dealset is not None
                    await league.play_dealset(dealset)
            finally:
                assert league.cluster is not None
                await league.cluster.aclose()

        trio.run(play)
        assert victims, "no worker was busy with a rotation when the test looked"
        assert Counter(saved) == Counter((d, r) for d in (1, 2, 3) for r in range(3))
        assert len(store.matches()) == 9 and not store.open_dealsets()
    finally:
        store.close()
        client.close()
        cluster.close()
