"""Encoding and decoding of protocol messages, JSON-lines framing, and the JSON Schema export.

One encoder and one decoder per direction are built once and reused (they are the hot path).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from .messages import PROTOCOL_VERSION, FromBot, ToBot

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


def decode_from_bot(line: bytes | str) -> FromBot:
    """Parse one line from a bot; raises msgspec.DecodeError / ValidationError with a reason."""
    return _from_bot_decoder.decode(line)


def decode_to_bot(line: bytes | str) -> ToBot:
    """Parse one line from the referee (for bots written in Python)."""
    return _to_bot_decoder.decode(line)


def json_schema() -> dict:
    """The JSON Schema of both directions, for bot authors in other languages."""
    (to_bot, from_bot), components = msgspec.json.schema_components((ToBot, FromBot),
                                                                   ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Trick Arena bot protocol, version {PROTOCOL_VERSION}",
        "description": "Each line is one JSON object. 'referee_to_bot' lists what a bot receives, "
                       "'bot_to_referee' what it may send. See SPEC.md.",
        "$defs": {**components,
                  "referee_to_bot": to_bot,
                  "bot_to_referee": from_bot},
        "oneOf": [{"$ref": "#/$defs/referee_to_bot"}, {"$ref": "#/$defs/bot_to_referee"}],
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m protocol.codec > protocol/schema.json
    print(schema_text(), end="")
