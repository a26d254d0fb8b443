"""The referee's latency per match: in the results file (older files migrated), the report, and
the warning that names the matches whose timeouts may be the arena's."""

import sqlite3

from arena.referee.results import FaultRecord, latency_summary
from arena.tournament.latency import latency_report
from arena.tournament.store import ResultStore
from tests.tournament.test_store import match, open_store

CALM = {"p50_ms": 0.02, "p99_ms": 0.08, "max_ms": 0.3, "load_per_core": 0.4}
TIMEOUT = FaultRecord.read(0, "a", "timeout", 3, "a: no answer")


def test_latency_summary_takes_latencies_that_happened():
    assert latency_summary([]) == {"p50_ms": None, "p99_ms": None, "max_ms": None}
    us = [float(n) for n in range(1, 201)]  # 1..200 us
    assert latency_summary(us) == {"p50_ms": 0.1, "p99_ms": 0.198, "max_ms": 0.2}
    assert latency_summary([5000.0]) == {"p50_ms": 5.0, "p99_ms": 5.0, "max_ms": 5.0}


def test_the_latency_is_stored_and_an_older_file_gets_the_column(tmp_path):
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        store.save(match("g/t0/d0/r0", referee=CALM))
    # An older arena's file: the same tables without the referee column.
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE matches DROP COLUMN referee")
    db.commit()
    db.close()
    with ResultStore.open_read(path) as store:  # read as it is, never written to
        (old,) = store.matches()
        assert old.referee is None
    with open_store(path) as store:  # opened for a run: the column is added, nothing is lost
        store.save(match("g/t0/d0/r1", rotation=1, referee=CALM))
    with ResultStore.open_read(path) as store:
        old, new = store.matches()
        assert old.referee is None and old.scores == (10, 7, 3)
        assert new.referee == CALM


def test_strained_matches_are_named_and_only_those_with_timeouts_suspect():
    matches = [
        match("calm", referee=CALM, faults=(TIMEOUT,)),
        match("slow-referee", referee={**CALM, "max_ms": 30.0}, faults=(TIMEOUT,)),
        match("slow-no-timeout", referee={**CALM, "max_ms": 25.0}, faults=()),
        match("old", referee=None, faults=(TIMEOUT,)),
    ]
    report = latency_report(matches, margin_ms=50)
    assert report.matches == 3
    # in the store's order (game, table, deal, rotation, id), whatever order they came in
    assert report.strained == ("slow-no-timeout", "slow-referee")
    assert report.suspect == ("slow-referee",)
    assert report.max_ms == 30.0
    warning = report.warning
    assert warning is not None and "\n" not in warning
    assert "slow-referee" in warning and "calm" not in warning and "50 ms margin" in warning
    assert "--replay suspect" in warning and "the other matches are kept" in warning
    assert latency_report(matches[:1], margin_ms=50).warning is None


def test_only_the_matchs_own_latency_decides_not_the_machines_load():
    """Issue 38 item 2: on a busy machine (load 9 per core) with a referee that kept up, no
    match is strained; a match is strained exactly when its worst latency reached half the
    margin, whatever the load."""
    busy = {**CALM, "load_per_core": 9.0}
    below = match("below", referee={**busy, "max_ms": 24.999}, faults=(TIMEOUT,))
    at = match("at", referee={**CALM, "load_per_core": 0.1, "max_ms": 25.0}, faults=(TIMEOUT,))
    report = latency_report([below, match("busy", referee=busy, faults=(TIMEOUT,))], 50)
    assert report.strained == () and report.warning is None
    assert report.max_load_per_core == 9.0  # still shown beside the figures
    report = latency_report([below, at], 50)
    assert report.strained == report.suspect == ("at",)
    assert latency_report([at], margin_ms=200).strained == ()  # 25 ms of a 200 ms margin
    calm_only = latency_report([match("x", referee=CALM, faults=())], 50)
    assert "none of them" not in (calm_only.warning or "")


def test_the_warning_is_kept_in_the_results(tmp_path):
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        store.save_note("latency_warning", "warning: x")
    with ResultStore.open_read(path) as store:
        assert store.note("latency_warning") == "warning: x"
    with open_store(path) as store:
        store.save_note("latency_warning", None)
        assert store.note("latency_warning") is None
