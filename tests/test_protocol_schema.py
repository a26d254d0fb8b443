"""protocol/schema.json is generated from protocol/messages.py and must stay fresh."""

import json

from protocol.codec import SCHEMA_PATH, json_schema, schema_text


def test_schema_file_is_fresh():
    assert SCHEMA_PATH.read_text() == schema_text(), (
        "protocol/schema.json is stale: run `python -m protocol.codec > protocol/schema.json`")


def test_schema_names_every_message_type():
    text = json.dumps(json_schema())
    for tag in ("hello", "match_start", "event", "request", "fault", "match_end", "bye",
                "ready", "action"):
        assert f'"{tag}"' in text
