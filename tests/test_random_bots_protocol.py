"""The three random sample bots read awkward but valid JSON alike (the C bot's hand-written scanner
especially): nested fields with the same names, escapes, non-ASCII, any field order, unknown
message types and fields; and they stop at bye, or at the end of their input."""

from __future__ import annotations

import json
import subprocess

import pytest
from sample_bot_specs import sample_bot

HELLO = (
    '{"type":"hello","protocol":1,"name":"b\\u00f6t \\"x\\"","limits":{"startup_ms":1,'
    '"decision_ms":1,"bank_ms":null}}'
)
LINES = [
    HELLO,
    # fields in another order, spaces, a non-ASCII match id written raw
    ' { "seat" : 2 , "players":3, "match_id" : "mätch-1", "type" : "match_start", "game":"x",'
    ' "options":{"a":[1,{"b":"}"}]}, "seats":[] } ',
    # nested "type", "id" and "legal" keys must not be taken for the message's own
    '{"type":"event","match_id":"m\\u00e4tch-1","event":{"type":"request","id":99,"legal":["no"]}}',
    '{"type":"x_future","id":5,"legal":["a"]}',
    '{"view":{"id":123,"legal":[1,2,3,4,5,6,7,8,9],"type":"view","s":"a\\\\\\"]}"},'
    '"legal":["bid:0","bid:1","bid:2","bid:3","bid:4"],"type":"request","match_id":"mätch-1",'
    '"id":17,"decision":"bid","time_left_ms":5,"x_new":{"deep":[[],{}]}}',
    '{"type":"fault","match_id":"mätch-1","id":17,"kind":"illegal","message":"tab\\there \\ud83c\\udca1",'
    '"forfeited":false}',
    '{"type":"request","match_id":"mätch-1","id":18,"decision":"play","view":{},'
    '"legal":["7H","8H","9H","10H","JH","QH","KH","AH","7S","8S","9S"],"time_left_ms":5}',
    '{"type":"match_end","match_id":"mätch-1","scores":[1,2,3],"placings":[3,2,1]}',
]


def answers(kind: str, tmp_path, script: list[str]) -> list[dict]:
    spec = sample_bot(kind, tmp_path)
    done = subprocess.run(
        spec.argv,
        input="".join(line + "\n" for line in script).encode(),
        capture_output=True,
        timeout=60,
        env={**dict(spec.env), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def chosen(replies: list[dict], legal_by_id: dict[int, list[str]]) -> list[tuple[int, str]]:
    """(request id, action) per answer, whether the bot answered by value or by index."""
    out = []
    for reply in replies[1:]:
        assert reply["type"] == "action"
        legal = legal_by_id[reply["id"]]
        out.append((reply["id"], reply["action"] if "action" in reply else legal[reply["index"]]))
    return out


@pytest.mark.parametrize("kind", ["python", "javascript", "c"])
def test_awkward_json_is_read_alike(kind, tmp_path):
    legal_by_id = {
        17: ["bid:0", "bid:1", "bid:2", "bid:3", "bid:4"],
        18: ["7H", "8H", "9H", "10H", "JH", "QH", "KH", "AH", "7S", "8S", "9S"],
    }
    replies = answers(kind, tmp_path, LINES + ['{"type":"bye"}', HELLO])
    assert replies[0]["type"] == "ready" and replies[0]["name"] == f"random-{kind}"
    assert [r["id"] for r in replies[1:]] == [17, 18]  # nothing after bye
    python = chosen(answers("python", tmp_path, LINES), legal_by_id)
    assert chosen(replies, legal_by_id) == python


@pytest.mark.parametrize("kind", ["python", "javascript", "c"])
def test_end_of_input_without_bye_ends_the_bot(kind, tmp_path):
    assert len(answers(kind, tmp_path, LINES)) == 3
