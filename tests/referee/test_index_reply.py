"""The referee's shortcut for the usual reply (quick_reply's index_reply) takes exactly what its
general path takes, with the same action: decode_plain_action and quick_reply's checks, as they
were before the shortcut (``general_choice`` below). Lines around the usual one, each changed in
one way (whitespace, leading zeros, signs, big numbers, repeated keys, another key order, extra
keys, unicode escapes, floats, booleans, nesting, truncation), and Hypothesis's lines.
"""

from __future__ import annotations

import itertools

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee.clock import SeatClock, TimeControl
from arena.referee.match import _Match, _Seat
from protocol.codec import INDEX_REPLY_MAX_BYTES, decode_plain_action, index_reply
from tests.referee.test_hostile_lines import lines as hostile_lines

LEGAL = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]


def general_choice(line: bytes, request_id: int, legal: list[str]) -> str | None:
    """quick_reply's choice by the general decode alone (the path before the shortcut)."""
    message = decode_plain_action(line)
    if message is None or message.id != request_id:
        return None
    if message.index is not msgspec.UNSET:
        if not 0 <= message.index < len(legal) or message.action is not msgspec.UNSET:
            return None
        return legal[message.index]
    if not isinstance(message.action, str) or message.action not in legal:
        return None
    return message.action


def quick_choice(line: bytes, request_id: int, legal: list[str]) -> str | None:
    """What quick_reply itself answers (a match of its own, no record, in time)."""
    match = _Match.__new__(_Match)
    match.recording = match.full_record = False
    match.unwritten_request = None
    match.now = lambda: 0.0
    seat = _Seat(0, None, SeatClock(TimeControl()))  # type: ignore[arg-type]
    return match.quick_reply(seat, request_id, legal, 0.0, 1000, line)


def check(line: bytes, request_id: int, legal: list[str] = LEGAL) -> str | None:
    expected = general_choice(line, request_id, legal)
    assert quick_choice(line, request_id, legal) == expected, line
    reply = index_reply(line)
    if reply is not None:  # the shortcut takes it: so does the general decode, the same message
        message = decode_plain_action(line)
        assert message is not None, line
        assert (message.id, message.index, message.action) == (
            reply.id,
            reply.index,
            msgspec.UNSET,
        ), line
    return expected


def variants(request_id: int, index: int) -> list[bytes]:
    """The usual line and lines near it, each different in one way."""
    n, k = str(request_id).encode(), str(index).encode()
    usual = b'{"type":"action","id":%s,"index":%s}' % (n, k)
    found = [usual]
    # Whitespace wherever JSON allows it (and where it does not: inside a token).
    for at in range(len(usual) + 1):
        for space in (b" ", b"\t", b"\r", b"\n", b"\x0b", b"\xc2\xa0"):
            found.append(usual[:at] + space + usual[at:])
    # Cut short, or more after it.
    found += [usual[:at] for at in range(len(usual))]
    found += [usual + tail for tail in (b"}", b" ", b",", b"x", b"\x00", b"{}", b"\n")]
    for id_text, index_text in itertools.product(
        [
            n,
            b"0" + n,
            b"-" + n,
            b"+" + n,
            b"-0",
            n + b".0",
            n + b"e0",
            b"%se1" % n,
            b"1" * 20,
            b"%d" % (request_id + (1 << 64)),
            b"%d" % (1 << 63),
            b'"%s"' % n,
            b"true",
            b"null",
            b"[%s]" % n,
            b"0x1",
            b"1_0",
            b"\xd9\xa1",  # an Arabic-Indic digit
        ],
        [
            k,
            b"0" + k,
            b"00",
            b"-" + k,
            b"-0",
            b"+" + k,
            k + b".0",
            k + b".5",
            k + b"e0",
            b"1E1",
            b"%d" % len(LEGAL),
            b"%d" % (index + (1 << 64)),
            b"%d" % (1 << 63),
            b"9" * 30,
            b'"%s"' % k,
            b"true",
            b"false",
            b"null",
            b"[%s]" % k,
            b'{"i":%s}' % k,
            b"NaN",
            b"Infinity",
            b"1_0",
            b" " + k,
        ],
    ):
        found.append(b'{"type":"action","id":%s,"index":%s}' % (id_text, index_text))
    pairs = [b'"type":"action"', b'"id":%s' % n, b'"index":%s' % k]
    for order in itertools.permutations(pairs):
        found.append(b"{" + b",".join(order) + b"}")
    for extra in (
        b'"id":%s' % n,
        b'"id":0',
        b'"index":%s' % k,
        b'"index":0',
        b'"type":"action"',
        b'"type":"ready"',
        b'"action":"a"',
        b'"action":null',
        b'"x":1',
        b'"":0',
        b'"\\u0069d":%s' % n,
        b'"\\u0069ndex":0',
        b'"name":"x"',
    ):
        for at in range(4):
            found.append(b"{" + b",".join([*pairs[:at], extra, *pairs[at:]]) + b"}")
    for key_type, value_type, key_id, key_index in (
        (b'"\\u0074ype"', b'"action"', b'"id"', b'"index"'),
        (b'"type"', b'"\\u0061ction"', b'"id"', b'"index"'),
        (b'"type"', b'"act\\u0069on"', b'"id"', b'"index"'),
        (b'"type"', b'"action"', b'"\\u0069d"', b'"index"'),
        (b'"type"', b'"action"', b'"id"', b'"\\u0069ndex"'),
        (b'"type"', b'"action"', b'"id"', b'"ind\\u0065x"'),
        (b'"type"', b'"Action"', b'"id"', b'"index"'),
        (b'"type"', b'"action "', b'"id"', b'"index"'),
        (b'"Type"', b'"action"', b'"id"', b'"index"'),
        (b'"type"', b'"action"', b'"ID"', b'"index"'),
        (b'"type"', b'"action"', b'"id"', b'"Index"'),
        (b'"type"', b'"action"', b'"id"', b'"idx"'),
        (b"'type'", b'"action"', b'"id"', b'"index"'),
    ):
        found.append(b"{%s:%s,%s:%s,%s:%s}" % (key_type, value_type, key_id, n, key_index, k))
    found += [
        b'{"type":"action","id":%s}' % n,
        b'{"type":"action","index":%s}' % k,
        b'{"id":%s,"index":%s}' % (n, k),
        b'{"type":"action","id":%s,"action":"%s"}' % (n, LEGAL[index].encode()),
        b'{"type":"action","id":%s,"action":"zz"}' % n,
        b'[{"type":"action","id":%s,"index":%s}]' % (n, k),
        b'{"type":"action","id":%s,"index":%s,}' % (n, k),
        b'{"type":"action","id":%s,,"index":%s}' % (n, k),
        b'{"type":"action";"id":%s,"index":%s}' % (n, k),
        b'{"type":"action","id":%s "index":%s}' % (n, k),
        b"\xef\xbb\xbf" + usual,  # a byte order mark
        usual.replace(b'"', b"'"),
        b"",
        b"}",  # (under 2 bytes: quick_reply looks at the byte before the last)
        b'{"type":"action","id":%s,"action":"%s" }' % (n, LEGAL[index].encode()),
        b"{}",
        b"null",
    ]
    return found


def test_the_usual_reply_is_taken_and_every_variant_as_the_general_path_takes_it():
    taken = 0
    for request_id, index in itertools.product(
        (1, 7, 10, 99, 1234, 999_999, 1_000_000, 9_999_999, 10_000_000, 1 << 62), (0, 3, 9, 10, 11)
    ):
        for line in variants(request_id, index):
            for pending in (request_id, request_id - 1, request_id + 1):
                for legal in (LEGAL, LEGAL[:1], LEGAL[:4], []):
                    taken += check(line, pending, legal) is not None
        usual = b'{"type":"action","id":%d,"index":%d}' % (request_id, index)
        assert check(usual, request_id) == LEGAL[index]
        # The shortcut itself takes it while the line is short enough (ids of up to 7 digits).
        assert (index_reply(usual) is not None) == (len(usual) <= INDEX_REPLY_MAX_BYTES)
    assert taken > 1000


def test_no_line_with_a_repeated_key_is_short_enough_for_the_shortcut():
    shortest = b'{"type":"action","id":1,"index":0,"id":1}'
    assert len(shortest) == INDEX_REPLY_MAX_BYTES + 1
    assert index_reply(shortest) is None and decode_plain_action(shortest) is None
    for line in (
        b'{"type":"action","id":1,"index":0}',
        b'{"type":"action","id":1234567,"index":9}',
    ):
        assert index_reply(line) is not None


@settings(max_examples=400, deadline=None)
@given(line=hostile_lines, pending=st.integers(-2, 2**64), size=st.integers(0, 40))
def test_any_line_gets_the_general_paths_answer(line, pending, size):
    check(line, pending, LEGAL[:size] + ["x"] * max(0, size - len(LEGAL)))


@settings(max_examples=400, deadline=None)
@given(
    id_text=st.from_regex(rb"\A-?[0-9]{1,9}(\.[0-9])?\Z"),
    index_text=st.from_regex(rb"\A-?[0-9]{1,3}(\.0|e0)?\Z"),
    padding=st.lists(st.sampled_from([b"", b" ", b"\t"]), min_size=8, max_size=8),
    pending=st.integers(0, 10**9),
)
def test_near_usual_lines_get_the_general_paths_answer(id_text, index_text, padding, pending):
    p = padding
    line = b'%s{%s"type"%s:"action",%s"id":%s%s,"index"%s:%s%s}' % (
        p[0],
        p[1],
        p[2],
        p[3],
        id_text,
        p[4],
        p[5],
        index_text,
        p[6],
    )
    check(line + p[7], pending)
    check(line, int(id_text) if id_text.lstrip(b"-").isdigit() else pending)
