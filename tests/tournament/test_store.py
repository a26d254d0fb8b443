"""The results file: round trip, resume bookkeeping, refusal of a changed definition, bad files."""

import os
import sqlite3
from dataclasses import replace

import pytest

from arena.referee.results import FaultRecord
from arena.tournament.store import ResultStore, StoredMatch, StoreError

DEFINITION = {"name": "cup", "seed": 1, "bots": [{"name": "a"}, {"name": "b"}]}


def match(match_id="g/t0/d0/r0", status="completed", **changes):
    fields = dict(
        match_id=match_id,
        game="g",
        game_id="alles-oder-nichts",
        table=0,
        deal=0,
        rotation=0,
        seed=2**64 - 5,
        players=3,
        options={"x": 1},
        bots=("a", "b", "a"),
        scores=(10, 7, 3),
        placings=(1, 2, 3),
        teams=None,
        forfeited=(2,),
        faults=(FaultRecord.read(2, "a", "timeout", 4, "a: no answer to request 4 in 1000 ms"),),
        decision_ms=((1.5, 2.25), (3.0,), ()),
        status=status,
        reason="completed" if status == "completed" else "cut",
        record_path="r/x.jsonl",
        duration_s=0.5,
    )
    fields.update(changes)
    return StoredMatch(**fields)


def open_store(path, definition=DEFINITION, restart=False):
    return ResultStore.open_for_run(
        path,
        name="cup",
        fingerprint=str(hash(str(definition))),
        definition=definition,
        restart=restart,
    )


def test_round_trip_keeps_every_field(tmp_path):
    path = tmp_path / "sub" / "results.sqlite"
    original = match()
    with open_store(path) as store:
        store.save(original)
        store.save(match("g/t0/d0/r1", rotation=1, teams=(0, 1, 0), faults=()))
    with ResultStore.open_read(path) as store:
        first, second = store.matches()
        # no key given: keyed by id; the record's path (stored relative to the results file's
        # folder) read back whole
        assert first == replace(
            original, key=original.match_id, record_path=os.path.abspath("r/x.jsonl")
        )
        assert second.teams == (0, 1, 0) and second.faults == ()
        assert store.completed_ids() == {"g/t0/d0/r0", "g/t0/d0/r1"}
        assert store.definition() == DEFINITION and store.name() == "cup"
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_json_columns_msgspec_refuses_still_read_back(tmp_path):
    """json.dumps writes NaN and lone surrogates, which the fast decoder refuses: read by json."""
    path = tmp_path / "results.sqlite"
    odd = match(options={"x": float("nan"), "name": "\ud800"}, scores=(1.5, float("inf"), 3))
    with open_store(path) as store:
        store.save(odd)
    with ResultStore.open_read(path) as store:
        (back,) = store.matches()
    assert back.options["x"] != back.options["x"] and back.options["name"] == "\ud800"
    assert back.scores == (1.5, float("inf"), 3) and back.decision_ms == odd.decision_ms


def test_an_aborted_match_is_not_done_and_its_replay_replaces_it(tmp_path):
    path = tmp_path / "r.sqlite"
    with open_store(path) as store:
        store.save(match(status="aborted", scores=(), placings=(), faults=()))
        assert store.completed_ids() == set()
        assert store.matches() == []
        assert len(store.matches(include_aborted=True)) == 1
    with open_store(path) as store:  # same definition: resumes
        store.save(match())
        (only,) = store.matches(include_aborted=True)
        assert only.completed and len(only.faults) == 1
        store.save(match())  # saving twice never duplicates faults
        assert len(store.matches()[0].faults) == 1


def test_a_bot_whose_program_changed_is_refused_unless_restart(tmp_path):
    path = tmp_path / "r.sqlite"
    before = {**DEFINITION, "bots": [{"name": "a", "program": {"a.py": "1"}}, {"name": "b"}]}
    with open_store(path, before) as store:
        store.save(match())
    grown = {**before, "seed": 2, "bots": [*before["bots"], {"name": "c"}]}
    with open_store(path, grown) as store:  # another definition: kept, matches by content
        assert store.definition() == grown
    changed = {**grown, "bots": [{"name": "a", "program": {"a.py": "2"}}, {"name": "b"}]}
    with pytest.raises(StoreError) as caught:
        open_store(path, changed)
    text = str(caught.value)
    assert "\n" not in text and str(path) in text
    assert "bot 'a' changed since its matches were stored (a.py differs)" in text
    assert "--restart" in text and "new name or version" in text
    renamed = {**changed, "bots": [{"name": "a", "version": "2", "program": {"a.py": "2"}}]}
    with open_store(path, renamed) as store:  # a new version is another bot: accepted
        assert store.definition() == renamed
    with open_store(path, changed, restart=True) as store:
        assert store.completed_ids() == set()
        assert store.definition() == changed


def test_stored_matches_count_only_when_current(tmp_path):
    path = tmp_path / "r.sqlite"
    with open_store(path) as store:
        store.save(match(key="k1"))
        store.save(match(key="k2"))  # same id, other content (e.g. a grown tournament)
        assert store.set_current(["k2"]) == (1, 1)
        (only,) = store.matches()
        assert only.key == "k2" and store.completed_ids() == {"g/t0/d0/r0"}
        assert sorted(store.stored_keys()) == [("k1", "g/t0/d0/r0"), ("k2", "g/t0/d0/r0")]
    with ResultStore.open_read(path) as store:
        assert [m.key for m in store.matches()] == ["k2"]


def test_corrupt_and_foreign_files_get_one_clear_line(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database at all" * 100)
    foreign = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE songs (title TEXT)")
    db.commit()
    db.close()
    for path, message in (
        (garbage, "not a Trick Arena results file"),
        (foreign, "an SQLite file, but not a Trick Arena results file"),
    ):
        for opener in (ResultStore.open_read, open_store):
            with pytest.raises(StoreError) as caught:
                opener(path)
            assert str(caught.value).startswith(f"{path}: ")
            assert message in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(StoreError, match="no such results file"):
        ResultStore.open_read(tmp_path / "missing.sqlite")


def test_a_results_file_that_cannot_be_created_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match=r"file/sub/r.sqlite: cannot create it: "):
        open_store(blocker / "sub" / "r.sqlite")


def test_one_tournament_at_a_time_writes_a_results_file(tmp_path):
    path = tmp_path / "r.sqlite"
    with open_store(path) as store:
        store.save(match())
        with pytest.raises(StoreError, match="r.sqlite: another arena tournament is writing to it"):
            open_store(path)
        with ResultStore.open_read(path) as reader:  # reading is always allowed
            assert reader.completed_ids() == {"g/t0/d0/r0"}
    with open_store(path) as store:  # the lock went with the writer
        assert store.completed_ids() == {"g/t0/d0/r0"}


def test_restart_never_discards_a_file_that_is_not_a_results_file(tmp_path):
    foreign = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE songs (title TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a Trick Arena results file"):
        open_store(foreign, restart=True)
    assert sqlite3.connect(foreign).execute("SELECT count(*) FROM songs").fetchone() == (0,)


def test_a_failed_write_is_one_line_and_keeps_what_was_stored(tmp_path):
    path = tmp_path / "r.sqlite"
    with open_store(path) as store:
        store.save(match("g/t0/d0/r0"))
        # Simulate a full disk: the database may not grow by another page.
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")
        huge = tuple(tuple(float(i) for i in range(20000)) for _ in range(3))
        with pytest.raises(StoreError, match=r"cannot store match g/t0/d0/r1 .*full.*kept"):
            store.save(match("g/t0/d0/r1", rotation=1, decision_ms=huge))
    with ResultStore.open_read(path) as store:
        assert store.completed_ids() == {"g/t0/d0/r0"}


def test_the_rows_saved_since_come_with_their_own_faults_in_order(tmp_path, monkeypatch):
    """`matches(since=)` of more rows than one query's parameters: every row gets exactly its
    faults, in the order stored, whether looked up by key (in chunks) or in one pass."""
    from arena.tournament import store as store_module

    path = tmp_path / "results.sqlite"
    saved = []
    with open_store(path) as store:
        for i in range(1300):
            faults = tuple(
                FaultRecord.read(k % 3, "abc"[k % 3], "timeout", k, f"m{i} f{k}")
                for k in range(i % 3)
            )
            saved.append(match(f"g/t0/d{i}/r0", deal=i, faults=faults))
            store.save(saved[-1])
        since = store.last_seq() - 1200
    with ResultStore.open_read(path) as store:
        for up_to in (20000, 10):  # by key in chunks of 500; every fault in one pass
            monkeypatch.setattr(store_module, "FAULTS_BY_KEY_UP_TO", up_to)
            newer = {m.match_id: m.faults for m in store.matches(since=since)}
            assert newer == {m.match_id: m.faults for m in saved[100:]}


def test_a_record_span_is_stored_and_an_older_file_reads_without_it(tmp_path):
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        store.save(match("g/t0/d0/r0", record_path="r/run.jsonl.gz", record_span=(4096, 1534)))
        store.save(match("g/t0/d0/r1", rotation=1))  # a record of its own: no span
    with ResultStore.open_read(path) as store:
        spanned, own = store.matches()
        assert spanned.record_span == (4096, 1534)
        assert spanned.record_path == os.path.abspath("r/run.jsonl.gz")
        assert own.record_span is None and own.record_path == os.path.abspath("r/x.jsonl")
    # An older arena's file: the same tables without the span's columns (records of their own).
    db = sqlite3.connect(path)
    for column in ("record_at", "record_length"):
        db.execute(f"ALTER TABLE matches DROP COLUMN {column}")
    db.commit()
    db.close()
    with ResultStore.open_read(path) as store:  # read as it is, never written to
        assert [m.record_span for m in store.matches()] == [None, None]
    with open_store(path) as store:  # opened for a run: the columns come back, nothing is lost
        store.save(match("g/t0/d0/r2", rotation=2, record_span=(0, 10)))
    with ResultStore.open_read(path) as store:
        assert [m.record_span for m in store.matches()] == [None, None, (0, 10)]
