"""Encoding and decoding of protocol messages, JSON-lines framing, and the JSON Schema export.

One encoder and one decoder per direction are built once and reused (they are the hot path).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET

from .messages import PROTOCOL_VERSION, Action, FromBot, ToBot

SCHEMA_PATH = Path(__file__).with_name("schema.json")

_encoder = msgspec.json.Encoder()
_to_bot_decoder = msgspec.json.Decoder(ToBot)
_from_bot_decoder = msgspec.json.Decoder(FromBot)


def encode_line(message: msgspec.Struct) -> bytes:
    """One message as a JSON line (UTF-8, ending in a newline)."""
    buffer = bytearray()
    _encoder.encode_into(message, buffer)
    buffer += b"\n"
    return bytes(buffer)


def encode_lines(messages: list[msgspec.Struct]) -> bytes:
    """Several messages as consecutive JSON lines, for one write."""
    buffer = bytearray()
    for message in messages:
        _encoder.encode_into(message, buffer, len(buffer))
        buffer += b"\n"
    return bytes(buffer)


INT_LIMIT = 1 << 63  # ids and indexes beyond a signed 64-bit integer are malformed


def decode_from_bot(line: bytes | str) -> FromBot:
    """Parse one line from a bot; raises msgspec.DecodeError / ValidationError with a reason, and
    nothing else, whatever the line holds (a bot's line must never raise in the referee).

    A key given twice (``{"index": 5, "index": 0}``) is rejected: msgspec alone would keep the
    last one. The exact check (the standard json module) runs only when the line holds more
    quote characters than the plain message needs, so an ordinary action costs one count.
    """
    try:
        message = _from_bot_decoder.decode(line)
        raw = line if isinstance(line, bytes) else line.encode()
        # An action line without repeats: "type":"action" and "id" (6 quotes), plus "action":"..."
        # (4) or "index" (2). More quotes: a repeat, or an escaped quote; the exact check decides.
        if type(message) is not Action or raw.count(b'"') > (10 if message.index is UNSET else 8):
            _reject_duplicate_keys(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise
    except RecursionError:  # msgspec skipping an unknown field's deep nesting, looking for "type"
        raise msgspec.DecodeError("JSON nested too deeply") from None
    except Exception as error:  # anything else a line provokes is still that line's fault
        raise msgspec.DecodeError(f"unreadable ({type(error).__name__}: {error})") from None
    if type(message) is Action:
        if not -INT_LIMIT <= message.id < INT_LIMIT:
            raise msgspec.ValidationError("`id` is out of range (a 64-bit integer is expected)")
        if message.index is not UNSET and not -INT_LIMIT <= message.index < INT_LIMIT:
            raise msgspec.ValidationError("`index` is out of range (a 64-bit integer is expected)")
    return message


def decode_plain_action(line: bytes) -> Action | None:
    """The line as an action message without a repeated key, or None for any other line (then
    decode_from_bot says what it is or what is wrong with it): the referee's shortcut for the
    usual reply, the same checks less the ranges of ``id`` and ``index``, which the caller
    compares with its own (no out-of-range value equals a pending id or a legal index)."""
    try:
        message = _from_bot_decoder.decode(line)
    except Exception:  # whatever a line provokes: decode_from_bot reports it
        return None
    if type(message) is not Action or line.count(b'"') > (10 if message.index is UNSET else 8):
        return None
    return message


class IndexReply(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The usual reply, ``{"type":"action","id":N,"index":K}``, and only it: no ``action``, no
    other key, no negative index (decode_index_reply raises for any other line)."""

    type: Literal["action"]  # (a field, not a tag: a Struct decoded alone may omit its tag)
    id: int
    index: Annotated[int, msgspec.Meta(ge=0)]  # (so legal[index] is the index-th or raises)


decode_index_reply = msgspec.json.Decoder(IndexReply).decode
# A line decode_index_reply takes that is no longer than this cannot repeat a key: the shortest
# that does, {"type":"action","id":1,"index":0,"id":1}, has 41 bytes. Then it is an action message
# decode_plain_action takes too, the same one, without its count of the quotes (~1.2k
# instructions). An ordinary reply is this short while its id has at most 7 digits.
INDEX_REPLY_MAX_BYTES = 40
QUOTE = ord('"')  # a reply by name ends with it before its "}" (index_reply)


def index_reply(line: bytes) -> IndexReply | None:
    """The line as an IndexReply when it is one decode_plain_action takes too (the same id and
    index), else None: the referee's check of the usual reply (quick_reply). A reply by name
    ends in '"}' and is not tried: its failed decode, the exception caught, cost ~5k
    instructions per decision (Python random bots, cachegrind)."""
    if not 2 <= len(line) <= INDEX_REPLY_MAX_BYTES or line[-2] == QUOTE:
        return None
    try:
        return decode_index_reply(line)
    except Exception:  # whatever a line provokes: the general path judges it
        return None


def stale_action_id(line: bytes, pending_id: int) -> int | None:
    """The id of ``line`` when it is a stale answer: an action message decode_from_bot takes, whose
    id is below ``pending_id``; else None, whatever the line is (decode_from_bot then judges it:
    it may be stale too, e.g. one with an escaped quote, which takes the exact check). One
    decode, for the referee's skipping of many stale lines (decode_plain_action's checks, and
    the ranges decode_from_bot checks that it leaves out)."""
    message = decode_plain_action(line)
    if message is None or not -INT_LIMIT <= message.id < min(pending_id, INT_LIMIT):
        return None
    index = message.index
    if index is not UNSET and not -INT_LIMIT <= index < INT_LIMIT:
        return None
    return message.id


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _reject_duplicate_keys(raw: bytes) -> None:
    try:
        json.loads(raw, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as duplicate:
        raise msgspec.ValidationError(
            f"key {duplicate.args[0]!r} is given more than once"
        ) from None
    except ValueError:  # json's stricter corners (e.g. lone surrogates): msgspec accepted it
        pass


def decode_to_bot(line: bytes | str) -> ToBot:
    """Parse one line from the referee (for bots written in Python)."""
    return _to_bot_decoder.decode(line)


_REFEREE_SENT = (
    "Hello",
    "Limits",
    "MatchStart",
    "SeatInfo",
    "Event",
    "Request",
    "Fault",
    "MatchEnd",
    "Bye",
)
_GAME_OBJECTS = (
    (
        "Event",
        "event",
        'One event of the game: an object with a "type"; each game\'s events '
        "and their fields are specified in SPEC.md section 9.",
    ),
    (
        "Request",
        "view",
        "What the seat may know now; the common fields are in SPEC.md section 9, "
        "each game's fields in its own part of section 9.",
    ),
)


def json_schema() -> dict:
    """The JSON Schema of both directions, for bot authors in other languages."""
    (to_bot, from_bot), components = msgspec.json.schema_components(
        (ToBot, FromBot), ref_template="#/$defs/{name}"
    )
    # The referee always sends every field of its messages, even those with defaults (defaults
    # exist only so that Python bots decode messages of older referees): say so in the schema.
    for name in _REFEREE_SENT:
        definition = components[name]
        definition["required"] = sorted(definition.get("properties", {}))
    for name, field_name, text in _GAME_OBJECTS:
        components[name]["properties"][field_name]["description"] = text
    # Exactly one of action/index (the referee checks it too: a malformed fault otherwise).
    components["Action"]["oneOf"] = [{"required": ["action"]}, {"required": ["index"]}]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Trick Arena bot protocol, version {PROTOCOL_VERSION}",
        "description": "Each line is one JSON object. 'referee_to_bot' lists what a bot receives, "
        "'bot_to_referee' what it may send. See SPEC.md.",
        "$defs": {**components, "referee_to_bot": to_bot, "bot_to_referee": from_bot},
        "oneOf": [{"$ref": "#/$defs/referee_to_bot"}, {"$ref": "#/$defs/bot_to_referee"}],
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m protocol.codec > protocol/schema.json
    print(schema_text(), end="")
