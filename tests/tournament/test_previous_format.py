"""A results file and a records file written before faults had a cause (by main at 56ee273,
from previous_format/tournament.toml: a random bot, one that answers illegally, one that is too
slow and one that crashes, four rotations of one Alles oder Nichts deal) still read: every fault
gets its cause and whether it forfeited from its kind and message, the same from the results
file and from the record, and the audit finds the two agree."""

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from arena.referee.record import replay_record
from arena.referee.results import FaultCause, FaultKind, FaultRecord, Termination, old_fault_facts
from arena.tournament.audit import audit_results, record_of
from arena.tournament.standings import compute_standings
from arena.tournament.store import ResultStore
from tests.tournament.test_store import open_store

FIXTURE = Path(__file__).parent / "previous_format"


@pytest.fixture
def results(tmp_path) -> Path:
    """A copy of the old files (reading must not change them, but a test never risks it)."""
    shutil.copytree(FIXTURE, tmp_path / "old")
    return tmp_path / "old" / "results.sqlite"


def test_an_old_results_file_reads_with_every_faults_facts(results):
    with ResultStore.open_read(results) as store:
        matches = store.matches(include_aborted=True)
    assert len(matches) == 4 and all(m.completed for m in matches)
    assert {m.reason for m in matches} == {Termination.COMPLETED}
    faults = [f for m in matches for f in m.faults]
    causes = {(f.bot, f.kind, f.cause) for f in faults}
    assert causes == {
        ("slow", FaultKind.TIMEOUT, FaultCause.NO_REPLY),
        ("illegal", FaultKind.ILLEGAL, FaultCause.ILLEGAL_ACTION),
        ("crasher", FaultKind.CRASH, FaultCause.OUTPUT_ENDED),
    }
    for match in matches:
        for fault in match.faults:
            seat_faults = [f for f in match.faults if f.seat == fault.seat]
            # A crash forfeits at once, anything else at its third fault (max_faults = 3).
            forfeits = fault.kind is FaultKind.CRASH or seat_faults.index(fault) == 2
            assert fault.forfeits == forfeits, fault
            assert (fault.seat in match.forfeited) >= fault.forfeits
    standings = compute_standings(matches)
    assert standings  # (the fold reads them too)


def test_old_records_replay_to_the_facts_the_old_results_file_gives(results):
    with ResultStore.open_read(results) as store:
        matches = store.matches(include_aborted=True)
    for match in matches:
        where = record_of(match)
        assert where is not None
        replay = replay_record(where[0], at=where[1], length=where[2])
        assert replay.faults == list(match.faults)
    report = audit_results(results)
    assert report.checked == 4 and report.problems == []


@pytest.mark.parametrize(
    "kind, reason, cause, forfeits",
    [
        ("startup", "did not start: exited with status 1", FaultCause.NOT_STARTED, True),
        ("timeout", "no answer to a play decision within 700 ms (+50 ms margin)", "no reply", 0),
        ("timeout", "answered after 812 ms; 700 ms were allowed (+50 ms margin)", "late reply", 0),
        ("timeout", "did not read its input within 700 ms (+50 ms margin)", "input not read", 1),
        ("malformed", "sent 'x', which is not a valid message: ...", "malformed line", 0),
        ("malformed", "sent a line longer than 65536 bytes (starting 'aaa')", "line too long", 0),
        ("illegal", "answered 'bid:99' to a bid decision, which is illegal", "illegal action", 0),
        ("crash", "ended or closed its output: exited with status 1", "output ended", 1),
        ("crash", "ended while its output stayed open: killed by SIGKILL", "died", 1),
        ("crash", "cannot be written to any more: exited", "unwritable", 1),
    ],
)
def test_every_old_message_gives_its_cause(kind, reason, cause, forfeits):
    """How the referee worded each fault before causes were recorded (arena/referee/match.py at
    56ee273): the only place any code reads a fact from a message."""
    message = f"bot b (seat 1), request 4: {reason}"
    assert old_fault_facts(FaultKind(kind), message) == (FaultCause(cause), bool(forfeits))
    # The third fault of a seat said it forfeited; so did a crash, also in its message.
    counted = f"{message}; fault 3, forfeits the match"
    assert old_fault_facts(FaultKind(kind), counted) == (FaultCause(cause), True)


def test_an_old_message_is_read_by_its_reason_only():
    """What a bot sent or wrote to stderr, quoted in a message, never names the cause."""
    quoted = (
        "bot b (seat 0), request 2: sent 'did not read its input', which is not a valid message"
    )
    assert old_fault_facts(FaultKind.MALFORMED, quoted) == (FaultCause.MALFORMED_LINE, False)
    crashed = (
        "bot b (seat 0), request 2: ended or closed its output: exited with status 1 (stderr: "
        "cannot be written to any more)"
    )
    assert old_fault_facts(FaultKind.CRASH, crashed)[0] is FaultCause.OUTPUT_ENDED
    named = "bot did not read its input (seat 0), request 2: no answer to a play decision"
    assert old_fault_facts(FaultKind.TIMEOUT, named) == (FaultCause.NO_REPLY, False)


def test_a_new_results_file_keeps_the_facts_it_is_given(results, tmp_path):
    """Stored now, a fault keeps its cause and forfeit as fields: nothing is read from the
    message (which here says otherwise)."""
    with ResultStore.open_read(results) as store:
        [match, *_] = store.matches(include_aborted=True)
    fault = FaultRecord(0, "b", FaultKind.TIMEOUT, 3, "no answer", FaultCause.INPUT_NOT_READ, True)
    with open_store(tmp_path / "new.sqlite") as store:
        store.save(replace(match, faults=(fault,)))
        [stored] = store.matches(include_aborted=True)
    assert stored.faults == (fault,)
