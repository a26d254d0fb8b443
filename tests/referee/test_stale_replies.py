"""Stale replies: an action message for an earlier request is skipped, however many come, and any
other line still ends the decision as it always did.

A stale line (an action message decode_from_bot takes, with an id below the pending request's) is
never charged: only the first RECORDED_STALE_REPLIES of a request are recorded (verdict "stale"),
and the referee reads on. Its cheap path (arena/referee/match.py, read_reply) must judge exactly
as the full checks: a line decode_from_bot rejects (an id or index out of range, a wrong type, an
extra field, a repeated key, not an action) is malformed, never stale, even in the middle of a
flood; an action for the pending id or a later one ends the decision too.

Each case is a hostile seat whose second request gets, in one write, every kind of stale line,
a flood of a few thousand more (read in several chunks, lines cut at chunk ends), every kind again,
then the line that ends the decision. Checked: the record's lines for that request, exact (under
the autojump clock, times too), in a plain record and in the compact one, and the faults; then the
same through a real bot process and its pipe (times aside).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import RECORDED_STALE_REPLIES, run_match
from arena.referee.process import BotProcess
from arena.referee.record import read_record
from arena.referee.results import CAUSES, FaultKind
from arena.referee.testing import FakeBot
from tests.referee.test_referee_fakes import AON, play

CONTROL = TimeControl(decision_ms=200, margin_ms=20)
FLOOD = 3000  # plain stale lines between the two runs of every kind (~150 kB: several chunks)
HOSTILE_REQUEST = 2  # the hostile seat's own count: its first request's id is then stale

# Every kind of line decode_from_bot takes as an action message, with the id @P (the pending
# request's less one, sent in this match) or another id below the pending one: all stale.
STALE_KINDS = (
    b'{"type":"action","id":@P,"action":"no such card"}',  # not legal: stale all the same
    b'{"type":"action","id":@P,"index":99}',  # an index out of the legal range
    b'{"type": "action", "id": @P, "action": "x", "index": 0}',  # both (spaced, as json.dumps)
    b'{"type":"action","id":@P}',  # neither
    b' {"index" : 0,\t"id":@P, "type":"action"} ',  # spaced and reordered
    b'{"type":"action","id":-7,"index":0}',  # a negative id, never sent
    b'{"type":"action","id":-9223372036854775808,"index":9223372036854775807}',  # in range
    b'{"type":"action","id":@P,"action":"a\\"b"}',  # an escaped quote: the exact check
    b'{"type":"action","id":@P,"action":"\\u00e9"}',
    b'{"type":"action","id":@P,"index":0}\r',  # a carriage return is whitespace
)
PLAIN_STALE = b'{"type": "action", "id": @P, "index": 0}'

# The line that ends the decision, and what it must get: the reply's id (None: the line has no
# valid one), its verdict, the fault's kind and the end of its message (after "bot hostile
# (seat 0), request @R: "). @R: the pending id, @P: the one before, @N: the one after.
ENDINGS = {
    "ok": (b'{"type":"action","id":@R,"index":0}', "@R", "ok", None, None),
    "ok by value": (b'{"type":"action","id":@R,"action":"@FIRST"}', "@R", "ok", None, None),
    "future id": (
        b'{"type":"action","id":@N,"index":0}',
        "@N",
        "malformed",
        FaultKind.MALFORMED,
        "answered request @N, which was never sent (the pending request is @R)",
    ),
    "id below the range": (
        b'{"type":"action","id":-9223372036854775809,"index":0}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"action","id":-9223372036854775809,"index":0}\', which is not a '
        "valid message: `id` is out of range (a 64-bit integer is expected)",
    ),
    "index above the range": (
        b'{"type":"action","id":@P,"index":9223372036854775808}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"action","id":@P,"index":9223372036854775808}\', which is not a '
        "valid message: `index` is out of range (a 64-bit integer is expected)",
    ),
    "extra field": (
        b'{"type":"action","id":@P,"index":0,"x":1}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"action","id":@P,"index":0,"x":1}\', which is not a valid '
        "message: Object contains unknown field `x`",
    ),
    "id a string": (
        b'{"type":"action","id":"@P","index":0}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"action","id":"@P","index":0}\', which is not a valid message: '
        "Expected `int`, got `str` - at `$.id`",
    ),
    "id a float": (
        b'{"type":"action","id":1.5,"index":0}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"action","id":1.5,"index":0}\', which is not a valid message: '
        "Expected `int`, got `float` - at `$.id`",
    ),
    "repeated key": (
        b'{"type":"action","id":@P,"index":0,"index":1}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"action","id":@P,"index":0,"index":1}\', which is not a valid '
        "message: key 'index' is given more than once",
    ),
    "ready": (
        b'{"type":"ready","name":"again"}',
        None,
        "malformed",
        FaultKind.MALFORMED,
        'sent \'{"type":"ready","name":"again"}\' while an action message was expected',
    ),
    "garbage": (
        b"garbage",
        None,
        "malformed",
        FaultKind.MALFORMED,
        "sent 'garbage', which is not a valid message: JSON is malformed: invalid character "
        "(byte 0)",
    ),
    "empty": (
        b"",
        None,
        "malformed",
        FaultKind.MALFORMED,
        "sent '', which is not a valid message: Input data was truncated",
    ),
    "pending id, illegal": (
        b'{"type":"action","id":@R,"index":99}',
        "@R",
        "illegal",
        FaultKind.ILLEGAL,
        None,  # the offered actions, quoted: checked below
    ),
}


def fill(line: bytes, pending: int, legal: list[str]) -> bytes:
    return (
        line.replace(b"@FIRST", legal[0].encode())
        .replace(b"@N", str(pending + 1).encode())
        .replace(b"@R", str(pending).encode())
        .replace(b"@P", str(pending - 1).encode())
    )


def hostile_lines(ending: bytes, pending: int, legal: list[str]) -> list[bytes]:
    """What the hostile seat writes for request ``pending`` (each line without its newline)."""
    kinds = [fill(line, pending, legal) for line in STALE_KINDS]
    flood = [fill(PLAIN_STALE, pending, legal)] * FLOOD
    return [*kinds, *flood, *kinds, fill(ending, pending, legal)]


class Hostile(FakeBot):
    def __init__(self, ending: bytes) -> None:
        super().__init__("hostile")
        self.ending = ending
        self.asked = 0

    async def on_request(self, request):
        self.asked += 1
        if self.asked != HOSTILE_REQUEST:
            return await super().on_request(request)
        lines = hostile_lines(self.ending, request["id"], request["legal"])
        await self.send(b"".join(line + b"\n" for line in lines))


def expected_entries(ending: str, pending: int, legal: list[str], sent_ms: float | str):
    """The hostile request's reply lines and fault, as the record must hold them (``ms`` of a
    stale line naming request @P: ``sent_ms``)."""
    line, written, verdict, kind, reason = ENDINGS[ending]
    stale = [fill(text, pending, legal) for text in STALE_KINDS[:RECORDED_STALE_REPLIES]]
    entries = [
        {
            "type": "reply",
            "seat": 0,
            "id": json.loads(text)["id"],
            "ms": sent_ms if json.loads(text)["id"] == pending - 1 else None,
            "pending": pending,
            "charged_ms": None,
            "text": text.decode(),
            "verdict": "stale",
        }
        for text in stale
    ]
    written_id = None if written is None else int(fill(written.encode(), pending, legal))
    entries.append(
        {
            "type": "reply",
            "seat": 0,
            "id": written_id,
            "ms": 0.0 if written_id == pending else None,  # (no time passes: autojump clock)
            "pending": pending,
            "charged_ms": None,
            "text": fill(line, pending, legal).decode(),
            "verdict": verdict,
        }
    )
    if kind is not None:
        message = f"bot hostile (seat 0), request {pending}: "
        if reason is None:
            message += (
                f"answered index 99, but {len(legal)} actions were offered (0..{len(legal) - 1}: "
            )
            message += ", ".join(legal[:12]) + (", ..." if len(legal) > 12 else "") + ")"
        else:
            message += fill(reason.encode(), pending, legal).decode()
        entries.append(
            {
                "type": "fault",
                "seat": 0,
                "bot": "hostile",
                "kind": str(kind),
                "cause": str(CAUSES[kind][0]),  # (no line here is too long)
                "id": pending,
                "message": message,
                "forfeited": False,
            }
        )
    return entries


def hostile_request(entries: list[dict]) -> dict:
    requests = [e for e in entries if e["type"] == "request" and e["seat"] == 0]
    return requests[HOSTILE_REQUEST - 1]


def without_line(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k != "_line"}  # (read_record's line number)


def decision_entries(entries: list[dict], pending: int, times: bool = True) -> list[dict]:
    """The hostile seat's reply and fault lines of its request ``pending`` (without the
    reader's line numbers; ``times``: False, each reply's ms only as a time or None)."""
    out = []
    for entry in entries:
        if (
            entry["type"] in ("reply", "fault")
            and entry["seat"] == 0
            and entry.get("pending", entry.get("id")) == pending
        ):
            entry = without_line(entry)
            if not times and entry["type"] == "reply":
                entry["ms"] = None if entry["ms"] is None else "t"
            out.append(entry)
    return out


@pytest.mark.parametrize("ending", list(ENDINGS))
async def test_stale_lines_are_skipped_and_any_other_line_ends_the_decision(
    autojump_clock, tmp_path, ending
):
    results, decisions = [], []
    for name in ("m.jsonl", "m.jsonl.gz"):
        bots = [Hostile(ENDINGS[ending][0]), FakeBot("b"), FakeBot("c")]
        result, _ = await play(bots, seed=6, time_control=CONTROL, record_path=tmp_path / name)
        entries = read_record(tmp_path / name)
        request = hostile_request(entries)
        # Under the autojump clock no time passes between the hostile seat's two requests.
        expected = expected_entries(ending, request["id"], request["legal"], 0.0)
        assert decision_entries(entries, request["id"]) == expected
        results.append(result)
        decisions.append(entries)
    kind = ENDINGS[ending][3]
    for result in results:
        assert [(f.seat, f.kind) for f in result.faults] == ([(0, kind)] if kind else [])
        assert result.termination == "completed" and result.forfeited == ()
    plain, compact = decisions
    # The compact record reads as the same lines (its header and result aside) ...
    assert [without_line(e) for e in compact][1:-1] == [without_line(e) for e in plain][1:-1]
    # ... and stores this decision in full: its request line, replies and fault, then its action.
    stored = gzip.decompress((tmp_path / "m.jsonl.gz").read_bytes()).splitlines()
    stored_entries = [json.loads(line) for line in stored if line.startswith(b"{")]
    request = hostile_request(plain)
    assert without_line(request) in stored_entries
    assert decision_entries(stored_entries, request["id"]) == expected_entries(
        ending, request["id"], request["legal"], 0.0
    )


# The same through a real process: its pipe brings the lines in chunks of its own.
HOSTILE_PROCESS = r"""
import json, sys
asked = 0
for text in sys.stdin:
    message = json.loads(text)
    if message["type"] == "hello":
        out = {"type": "ready", "name": "hostile"}
    elif message["type"] == "request":
        asked += 1
        out = {"type": "action", "id": message["id"], "index": 0}
        if asked == ASKED:
            sys.stdout.write(LINES_FOR(message["id"], message["legal"]))
            sys.stdout.flush()
            continue
    else:
        continue
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


def process_script(ending: str) -> str:
    """HOSTILE_PROCESS, with the lines of hostile_lines() for ``ending`` (one write)."""
    parts = {
        "kinds": [line.decode() for line in STALE_KINDS],
        "plain": PLAIN_STALE.decode(),
        "ending": ENDINGS[ending][0].decode(),
        "flood": FLOOD,
    }
    function = f"""
PARTS = {parts!r}
def fill(line, pending, legal):
    return (line.replace("@FIRST", legal[0]).replace("@N", str(pending + 1))
            .replace("@R", str(pending)).replace("@P", str(pending - 1)))
def LINES_FOR(pending, legal):
    kinds = [fill(line, pending, legal) for line in PARTS["kinds"]]
    lines = kinds + [fill(PARTS["plain"], pending, legal)] * PARTS["flood"] + kinds
    lines.append(fill(PARTS["ending"], pending, legal))
    return "".join(line + "\\n" for line in lines)
"""
    return function + HOSTILE_PROCESS.replace("ASKED", str(HOSTILE_REQUEST))


@pytest.mark.parametrize("ending", ["ok", "future id", "index above the range", "repeated key"])
async def test_stale_lines_through_a_real_pipe(tmp_path, ending):
    control = TimeControl(decision_ms=5000, margin_ms=1000)  # the flood must not time out here
    honest = Path(__file__).resolve().parent.parent / "bots" / "first_legal_bot.py"
    specs = [
        BotSpec("hostile", (sys.executable, "-c", process_script(ending))),
        BotSpec("b", (sys.executable, str(honest)), cwd=str(honest.parent)),
        BotSpec("c", (sys.executable, str(honest)), cwd=str(honest.parent)),
    ]
    bots = [await BotProcess.start(spec, time_control=control, log_dir=tmp_path) for spec in specs]
    try:
        record = tmp_path / "m.jsonl"
        result = await run_match(
            AON, bots, seed=6, match_id="m", time_control=control, record_path=record
        )
    finally:
        for bot in bots:
            await bot.close()
    entries = read_record(record)
    request = hostile_request(entries)
    expected = expected_entries(ending, request["id"], request["legal"], "t")
    for entry in expected:
        if entry["type"] == "reply" and entry["ms"] is not None:
            entry["ms"] = "t"  # a time, whatever it is
    assert decision_entries(entries, request["id"], times=False) == expected
    kind = ENDINGS[ending][3]
    assert [(f.seat, f.kind) for f in result.faults] == ([(0, kind)] if kind else [])
