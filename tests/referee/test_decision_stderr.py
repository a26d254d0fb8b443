"""A decision's stderr in the record (SPEC.md 8): what a bot writes to stderr before its reply is
kept on that reply's line, bounded per decision and per match with a marker, shown by
``arena replay --decisions``; a bot that writes none keeps its compact decision lines."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
import trio

from arena.cli.match import play_one_match
from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import STDERR_DECISION_BYTES, STDERR_MATCH_BYTES
from arena.referee.record import ReplayError, replay_record
from tests.referee.test_cli_match import arena

BOTS = Path(__file__).resolve().parents[1] / "bots"


def play(tmp_path: Path, bots: list[tuple[str, ...]], game_id: str = "alles-oder-nichts") -> Path:
    specs = [
        BotSpec(f"b{n}", (sys.executable, *(str(a) for a in argv)), sandbox="none")
        for n, argv in enumerate(bots)
    ]
    record = tmp_path / "m.jsonl.gz"
    trio.run(
        lambda: play_one_match(
            find_game(game_id),
            specs,
            seed=4,
            options={},
            control=TimeControl(decision_ms=5000),
            max_faults=3,
            record=record,
            log_dir=tmp_path / "logs",
            affinity=False,
        )
    )
    return record


def test_each_decision_keeps_what_the_bot_wrote_to_stderr_before_its_reply(tmp_path):
    talk = (BOTS / "transcript_bot.py", tmp_path / "t.txt")
    quiet = (BOTS / "first_legal_bot.py",)
    record = play(tmp_path, [talk, quiet, quiet])
    replay = replay_record(record)  # (the record checks out, stderr and all)
    requests = {(e["seat"], e["id"]): e for e in replay.entries if e["type"] == "request"}
    replies = [e for e in replay.entries if e["type"] == "reply"]
    talked = [e for e in replies if e["seat"] == 0]
    assert len(talked) == sum(seat == 0 for seat, _ in requests) > 10
    for reply in talked:
        legal = requests[(0, reply["pending"])]["legal"]
        assert reply["stderr"] == f"thinking about request {reply['id']} ({len(legal)} legal)\n"
    assert not any("stderr" in e for e in replies if e["seat"] != 0)
    # The quiet bots' decisions stay compact: one array line each, no reply line written.
    with gzip.open(record) as lines:
        written = [json.loads(line) for line in lines]
    objects = [line for line in written if isinstance(line, dict)]
    assert all(line.get("seat") == 0 for line in objects if line["type"] == "reply")
    shown = arena("replay", str(record), "--decisions", "--seat", "0").stdout
    assert "    stderr | thinking about request 1 (7 legal)" in shown


def test_stderr_is_bounded_per_decision_and_per_match_and_says_so(tmp_path):
    flood = (BOTS / "stderr_flood_bot.py",)
    quiet = (BOTS / "first_legal_bot.py",)
    record = play(tmp_path, [flood, quiet, quiet])
    replies = [e for e in replay_record(record).entries if e["type"] == "reply" and e["seat"] == 0]
    kept = [e["stderr"] for e in replies if "stderr" in e]
    full = STDERR_MATCH_BYTES // STDERR_DECISION_BYTES
    assert len(kept) == full + 1 < len(replies)  # then nothing more, said once
    for text in kept[:full]:
        marker, _, rest = text.partition("\n")
        assert marker.startswith("[arena: ") and marker.endswith(
            " bytes of stderr before these not kept]"
        )
        assert len(rest.encode()) == STDERR_DECISION_BYTES and "stderr flood" in rest
    assert (
        kept[-1].startswith("[arena: ")
        and "nor any more in this match: the record keeps" in kept[-1]
    )


def test_a_record_whose_stderr_is_not_text_is_refused(tmp_path):
    talk = (BOTS / "transcript_bot.py", tmp_path / "t.txt")
    record = play(tmp_path, [talk, talk, talk])
    lines = gzip.decompress(record.read_bytes()).decode().splitlines()
    edited = [line.replace('"stderr":"thinking', '"stderr":5,"x":"', 1) for line in lines]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(edited) + "\n")
    with pytest.raises(ReplayError, match='field "stderr" is 5'):
        replay_record(bad)
