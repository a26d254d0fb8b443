"""protocol/schema.json is generated from protocol/messages.py and must stay fresh."""

import json

import pytest

from protocol.codec import SCHEMA_PATH, encode_line, json_schema, schema_text


def test_schema_file_is_fresh():
    assert SCHEMA_PATH.read_text() == schema_text(), (
        "protocol/schema.json is stale: run `python -m protocol.codec > protocol/schema.json`"
    )


def test_schema_names_every_message_type():
    text = json.dumps(json_schema())
    for tag in (
        "hello",
        "match_start",
        "event",
        "request",
        "fault",
        "match_end",
        "bye",
        "ready",
        "action",
    ):
        assert f'"{tag}"' in text


def test_fields_the_referee_always_sends_are_required():
    defs = json_schema()["$defs"]
    for name in (
        "Hello",
        "Limits",
        "MatchStart",
        "SeatInfo",
        "Event",
        "Request",
        "Fault",
        "MatchEnd",
    ):
        assert set(defs[name]["required"]) == set(defs[name]["properties"]), name
    assert "section 9" in defs["Event"]["properties"]["event"]["description"]
    assert "section 9" in defs["Request"]["properties"]["view"]["description"]


def test_the_schema_accepts_what_the_referee_sends_and_only_valid_actions():
    jsonschema = pytest.importorskip("jsonschema")
    from protocol.messages import Fault, Hello, Limits, MatchEnd

    schema = json_schema()
    validator = jsonschema.Draft202012Validator(schema)
    for message in (
        Hello(protocol=1, name="x", limits=Limits(startup_ms=1, decision_ms=1)),
        Fault(match_id="m", id=None, kind="timeout", message="late"),
        MatchEnd(match_id="m", scores=[1, 2], placings=[2, 1]),
    ):
        validator.validate(json.loads(encode_line(message)))
    good = [{"type": "action", "id": 1, "action": "QS"}, {"type": "action", "id": 1, "index": 0}]
    bad = [
        {"type": "action", "id": 1},
        {"type": "action", "id": 1, "action": "QS", "index": 0},
        {"type": "action", "id": 1, "action": None},
        {"type": "match_end", "match_id": "m", "scores": [], "placings": []},
    ]
    for message in good:
        validator.validate(message)
    for message in bad:
        assert not validator.is_valid(message), message
