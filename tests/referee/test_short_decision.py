"""A compact record's short decision array (format 3, SPEC.md section 8): quick_reply keeps
``[us, index]`` only for the canonical reply, ``{"type":"action","id":N,"index":K}`` byte for
byte, which a reader writes out again from the id and index alone. It proves a line canonical by
its prefix and length against the seat's ``canonical_len``; these tests run that inline check on
the lines around the usual one (test_index_reply's variants) and on Hypothesis's lines, with
every ``canonical_len`` an earlier request of the seat can have left."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee.clock import SeatClock, TimeControl
from arena.referee.match import _Match, _Seat
from arena.referee.record import (
    CANONICAL_ID_AT,
    CANONICAL_REPLY_BASE,
    CANONICAL_TYPE_AT,
    Decision,
    ShortDecision,
    canonical_reply,
)
from tests.referee.test_hostile_lines import lines as hostile_lines
from tests.referee.test_index_reply import variants

LEGAL_100 = [f"c{i}" for i in range(120)]  # (indexes of three digits too)


def recorded(line: bytes, request_id: int, canonical_len: int, control=TimeControl()):
    """What quick_reply keeps for a compact record when ``line`` answers ``request_id`` in time
    (a Decision or a ShortDecision; None when it leaves the line to the full path), and the
    seat's canonical_len afterwards."""
    match = _Match.__new__(_Match)
    match.recording, match.full_record = True, False  # (a compact record)
    match.unwritten_request = 200  # the request's time_left_ms, kept back (compact)
    match.action_recorded = False
    match.record_entries = []
    match.now = lambda: 0.0
    seat = _Seat(0, None, SeatClock(control))  # type: ignore[arg-type]
    seat.canonical_len = canonical_len
    match.quick_reply(seat, request_id, LEGAL_100, 0.0, 1000, line)
    assert len(match.record_entries) <= 1
    return (match.record_entries or [None])[0], seat.canonical_len


def lengths_left_before(request_id: int) -> set[int]:
    """Every canonical_len a seat can have at ``request_id``: none yet (0), or as set by a
    Decision of any earlier request (its next id's digits)."""
    digits = range(1, len(str(request_id)) + 1)  # (of the ids after them: up to this one)
    return {0} | {CANONICAL_REPLY_BASE + 1 + d for d in digits}


def short_only_if_canonical(line: bytes, request_id: int, canonical_len: int) -> bool:
    entry, _ = recorded(line, request_id, canonical_len)
    if isinstance(entry, ShortDecision):
        assert line == canonical_reply(request_id, entry.index).encode(), line
        return True
    return False


def test_only_the_canonical_reply_is_kept_short():
    shorts = 0
    for request_id, index in itertools.product(
        (1, 7, 9, 10, 11, 99, 100, 1234, 999_999), (0, 3, 9, 10, 11, 99, 100)
    ):
        canonical = canonical_reply(request_id, index).encode()
        for canonical_len in lengths_left_before(request_id):
            for line in variants(request_id, index) if index < 12 else [canonical]:
                shorts += short_only_if_canonical(line, request_id, canonical_len)
            # The canonical reply itself is short when the seat's length is of this id's digits
            # and the index has at most two (else it is a Decision, as every other line is).
            entry, _ = recorded(canonical, request_id, canonical_len)
            fits = canonical_len == CANONICAL_REPLY_BASE + 1 + len(str(request_id))
            if fits and index < 100:
                assert entry == ShortDecision(0, index)
            else:
                assert isinstance(entry, Decision) and entry.text == canonical.decode()
    assert shorts > 100


def test_a_decision_in_full_sets_the_length_for_the_next_ids():
    for request_id in (1, 9, 10, 99, 12345):
        line = b'{"type":"action","id":%d, "index":1}' % request_id  # (a space: in full)
        entry, canonical_len = recorded(line, request_id, 0)
        assert isinstance(entry, Decision) and entry.text == line.decode()
        following = canonical_reply(request_id + 1, 1)
        assert canonical_len == len(following)  # the next request's canonical reply fits
    by_name = b'{"type":"action","id":5,"action":"c1"}'  # (not the usual reply: left as it is)
    assert recorded(by_name, 5, 0) == (Decision(0, 5, 200, 0, 0, by_name.decode(), "c1"), 0)


def test_with_a_bank_of_time_every_decision_is_kept_in_full():
    banked = TimeControl(decision_ms=200, bank_ms=900, increment_ms=30)
    for control, kept in ((banked, Decision), (TimeControl(), ShortDecision)):
        canonical_len = 0
        for request_id in range(11, 16):
            canonical = canonical_reply(request_id, 3).encode()
            entry, canonical_len = recorded(canonical, request_id, canonical_len, control)
            if request_id > 11:  # (the seat's first decision here is in full either way)
                assert isinstance(entry, kept), (control, request_id)


def test_the_bytes_record_decision_looks_at_are_the_canonical_replys():
    """record_decision compares two bytes of a reply with the canonical reply's: "type" first
    and "id" second."""
    canonical = canonical_reply(12345, 7).encode()
    assert canonical[CANONICAL_TYPE_AT : CANONICAL_TYPE_AT + 4] == b"type"
    assert canonical[CANONICAL_ID_AT - 1 : CANONICAL_ID_AT + 2] == b'id"'


@settings(max_examples=400, deadline=None)
@given(line=hostile_lines, pending=st.integers(1, 10**7), digits=st.integers(0, 8))
def test_no_other_line_is_kept_short(line, pending, digits):
    canonical_len = 0 if digits == 0 else CANONICAL_REPLY_BASE + 1 + min(digits, len(str(pending)))
    short_only_if_canonical(line, pending, canonical_len)


@settings(max_examples=400, deadline=None)
@given(
    id_text=st.from_regex(rb"\A-?[0-9]{1,7}\Z"),
    index_text=st.from_regex(rb"\A-?[0-9]{1,3}\Z"),
    padding=st.lists(st.sampled_from([b"", b"", b"", b" ", b"\r"]), min_size=4, max_size=4),
)
def test_no_near_canonical_line_is_kept_short(id_text, index_text, padding):
    p = padding
    line = b'{"type":"action","id":%s%s,%s"index":%s%s%s}' % (
        id_text,
        p[0],
        p[1],
        p[2],
        index_text,
        p[3],
    )
    pending = int(id_text)
    if pending > 0:
        for canonical_len in (0, CANONICAL_REPLY_BASE + 1 + len(str(pending))):
            short_only_if_canonical(line, pending, canonical_len)
