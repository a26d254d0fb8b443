"""``kill -9`` of ``arena league serve`` in the middle of a deal-set, and a restart: every stored
match is still there, unchanged; the interrupted deal-set is played on from its first missing
rotation; no rotation of any deal-set is stored twice."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

from tests.league.conftest import league_toml, open_store, serving, stored_rows
from tests.waiting import wait_for


def _mid_dealset(toml: Path) -> tuple[int, set[int]] | None:
    """A deal-set not done with some but not all of its rotations stored (a match is being
    played), after at least one whole deal-set."""
    store = open_store(toml)
    try:
        open_sets = store.open_dealsets()
        finished = store.dealset_count() - len(open_sets)
        for dealset in open_sets:
            stored = store.stored_rotations(dealset.id)
            if finished >= 1 and 0 < len(stored) < len(dealset.seats):
                return dealset.id, stored
        return None
    finally:
        store.close()


def test_kill_9_mid_play_loses_nothing_and_plays_nothing_twice(tmp_path: Path) -> None:
    toml = league_toml(tmp_path)
    with serving(toml) as server:
        dealset, rotations_before = wait_for("a deal-set half played", lambda: _mid_dealset(toml))
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
    before = stored_rows(toml)
    store = open_store(toml)
    matches_before = {(m.deal, m.rotation): m for m in store.matches()}
    store.close()
    assert {(d, r) for d, r, _ in before if d == dealset} >= {
        (dealset, r) for r in rotations_before
    }

    with serving(toml) as server:

        def interrupted_done() -> bool:
            store = open_store(toml)
            try:
                return store.dealset(dealset).done and len(store.matches()) > len(before) + 3
            finally:
                store.close()

        wait_for("the interrupted deal-set to be played on", interrupted_done)
        status, ladder = server.get("api/ladder")
        assert status == 200
    after = stored_rows(toml)
    store = open_store(toml)
    try:
        matches_after = {(m.deal, m.rotation): m for m in store.matches()}
        # nothing stored is lost or changed
        for key, match in matches_before.items():
            assert matches_after[key] == match
        # every rotation at most once, and the interrupted deal-set whole
        assert len(after) == len({(d, r) for d, r, _ in after})
        assert store.stored_rotations(dealset) == {0, 1, 2}
        for done in (d for d in {d for d, _, _ in after} if store.dealset(d).done):
            assert Counter(d for d, _, _ in after)[done] == 3
    finally:
        store.close()
    assert ladder["tables"]["eight-rounds"]["matches"] >= len(before)
