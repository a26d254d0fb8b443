"""`arena match` and `arena replay` as a user runs them: help, errors (one line, exit 2), real runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.referee.process import process_running

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'random_bot.py'}"


# The bots' user (tests/conftest.py): a clean environment keeps it, or as root they run as nobody.
USER = {k: v for k, v in os.environ.items() if k == "ARENA_BOT_USER"}


def arena(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "120",
            "NO_COLOR": "1",
            **USER,
            **env,
        },
    )


def test_help_lists_the_options():
    done = arena("match", "--help")
    assert done.returncode == 0
    for option in (
        "--bot",
        "--seed",
        "--players",
        "--option",
        "--record",
        "--json",
        "--decision-ms",
        "--sandbox",
    ):
        assert option in done.stdout
    assert arena("replay", "--help").returncode == 0
    # The default seat count is said exactly: one --bot plays the game's default count.
    assert "with a single --bot, the game's default player count" in " ".join(done.stdout.split())
    assert "default 4" in arena("games").stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["nosuchgame", "--bot", "x"], "unknown game 'nosuchgame'"),
        (
            ["aon", "--bot", "no-such-program-xyz"],
            "program 'no-such-program-xyz' not found on PATH",
        ),
        (["aon", "--bot", "./missing/bot"], "no executable program at ./missing/bot"),
        (["aon", "--bot", f"{sys.executable} missing_bot.py"], "no such file missing_bot.py"),
        (["aon", "--bot", RANDOM_BOT, "--players", "2"], "2 players: expected one of 3, 4, 5, 6"),
        (
            ["aon", "--bot", RANDOM_BOT, "--bot", RANDOM_BOT, "--players", "3"],
            "2 --bot given for 3",
        ),
        (["aon", "--bot", RANDOM_BOT, "--option", "colour=red"], "unknown option 'colour'"),
        (["aon", "--bot", RANDOM_BOT, "--option", "nonsense"], "expected key=value"),
        (["aon", "--bot", "'unclosed"], "No closing quotation"),
        (["aon", "--bot", RANDOM_BOT, "--seed", "-1"], "--seed"),
        (["aon", "--bot", RANDOM_BOT, "--bank-ms", "0"], "--bank-ms"),  # as in tournament files
        (
            ["aon", "--bot", f"{sys.executable} -c pass"],
            ": ended before saying ready: exited with status 0",
        ),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args, message):
    done = arena("match", *args)
    assert done.returncode == 2, done.stderr
    error_lines = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1 and message in error_lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_real_match_prints_a_table_and_replays(tmp_path):
    record = tmp_path / "m.jsonl"
    done = arena(
        "match",
        "aon",
        "--bot",
        RANDOM_BOT,
        "--players",
        "3",
        "--seed",
        "5",
        "--record",
        str(record),
    )
    assert done.returncode == 0, done.stderr
    assert "random_bot-3" in done.stdout and "score" in done.stdout and "seed 5" in done.stdout
    shown = arena("replay", str(record))
    assert shown.returncode == 0, shown.stderr
    assert "dealt to seat 2: " in shown.stdout and "trick:" in shown.stdout
    assert "record checked" in shown.stdout
    seat = arena("replay", str(record), "--seat", "1")
    assert seat.returncode == 0 and "dealt to you: " in seat.stdout
    assert "dealt to seat" not in seat.stdout
    assert arena("replay", str(record), "--seat", "7").returncode == 2


def test_replay_lines_writes_a_compact_record_out_in_full(tmp_path):
    record = tmp_path / "m.jsonl.gz"
    done = arena("match", "aon", "--bot", RANDOM_BOT, "--players", "3", "--record", str(record))
    assert done.returncode == 0, done.stderr
    printed = arena("replay", "--lines", str(record))
    assert printed.returncode == 0, printed.stderr
    lines = [json.loads(line) for line in printed.stdout.splitlines()]
    assert [entry["type"] for entry in lines[:3]] == ["header", "shuffle", "deal"]
    assert lines[-1]["type"] == "result" and "compact" not in lines[0]
    assert sum(entry["type"] == "event" for entry in lines) > 50
    assert "record checked" in arena("replay", "--check", str(record)).stdout


def _recorded(record: Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_replay_shows_every_card_dealt_and_each_decision(tmp_path):
    record = tmp_path / "v.jsonl"
    done = arena("match", "vingt", "--bot", RANDOM_BOT, "--seed", "3", "--record", str(record))
    assert done.returncode == 0, done.stderr
    entries = _recorded(record)
    shown = arena("replay", str(record), "--decisions").stdout
    # Vingt-down deals 2 then 3 cards to each seat: both deals are shown, 5 cards a seat.
    first_deal = shown.split("deal_start: deal=2")[0]
    for seat in range(4):
        dealt = [
            line.split(": ", 1)[1].split()
            for line in first_deal.splitlines()
            if line.strip().startswith(f"dealt to seat {seat}:")
        ]
        assert [len(cards) for cards in dealt] == [2, 3]
    # Each decision: the legal actions the record lists, the choice, the time of its ok reply.
    requests = [e for e in entries if e["type"] == "request"]
    replies = {(e["seat"], e["id"]): e["ms"] for e in entries if e["type"] == "reply"}
    actions = {(e["seat"], e["id"]): e["action"] for e in entries if e["type"] == "action"}
    lines = [line.strip() for line in shown.splitlines() if line.strip().startswith("#")]
    assert len(lines) == len(requests)
    numbers = [0] * 4  # each seat's decisions are numbered 1, 2, ... (what --ask N takes)
    for line, request in zip(lines, requests, strict=True):
        key = (request["seat"], request["id"])
        numbers[request["seat"]] += 1
        legal = " ".join(request["legal"]) if len(request["legal"]) <= 40 else "actions"
        assert line.startswith(f"#{numbers[request['seat']]} seat {request['seat']} (")
        assert f"[{legal}" in line
        assert f"-> {actions[key]} ({replies[key]:.2f} ms of {request['time_left_ms']} ms)" in line
    own = arena("replay", str(record), "--decisions", "--seat", "2").stdout
    mine = [line.strip().split(" ", 1)[1] for line in own.splitlines() if line.strip()[:1] == "#"]
    assert mine and all(line.startswith("seat 2 (") for line in mine)  # not the others' hands
    assert len(mine) == sum(r["seat"] == 2 for r in requests)


def test_the_temporary_log_folder_stays_only_when_a_bot_wrote_to_stderr(tmp_path):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    quiet = arena("match", "aon", "--bot", RANDOM_BOT, "--players", "3", TMPDIR=str(temporary))
    assert quiet.returncode == 0, quiet.stderr
    assert "no bot wrote to stderr" in quiet.stdout
    assert list(temporary.iterdir()) == []
    chatty = f"sh -c 'echo hello from the bot >&2; exec {RANDOM_BOT}'"
    done = arena("match", "aon", "--bot", chatty, "--players", "3", TMPDIR=str(temporary))
    assert done.returncode == 0, done.stderr
    (kept,) = temporary.glob("arena-logs-*")
    assert f"bot stderr logs in {kept}" in done.stdout
    assert len(list(kept.glob("*.stderr.log"))) == 3
    failed = arena("match", "aon", "--bot", "sh -c 'exit 3'", TMPDIR=str(temporary))
    assert failed.returncode == 2 and list(temporary.glob("arena-logs-*")) == [kept]


def test_json_output(tmp_path):
    done = arena(
        "match",
        "aon",
        "--bot",
        RANDOM_BOT,
        "--bot",
        RANDOM_BOT,
        "--bot",
        RANDOM_BOT,
        "--seed",
        "9",
        "--json",
        "--decision-ms",
        "3000",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["game"] == "alles-oder-nichts" and result["seed"] == 9
    assert result["bots"] == ["random_bot", "random_bot-2", "random_bot-3"]
    assert len(result["scores"]) == 3 and sorted(result["placings"])[0] == 1
    assert result["faults"] == [] and result["termination"] == "completed"
    again = json.loads(
        arena("match", "aon", "--bot", RANDOM_BOT, "--players", "3", "--seed", "9", "--json").stdout
    )
    assert again["scores"] == result["scores"]  # same seed, same bots: same match


def test_replay_reports_a_tampered_record(tmp_path):
    record = tmp_path / "m.jsonl"
    assert (
        arena(
            "match",
            "aon",
            "--bot",
            RANDOM_BOT,
            "--players",
            "3",
            "--seed",
            "2",
            "--record",
            str(record),
        ).returncode
        == 0
    )
    lines = record.read_text().splitlines()
    for number, line in enumerate(lines):
        entry = json.loads(line)
        if entry["type"] == "action" and entry["action"].startswith(("1", "2", "3", "4")):
            entry["action"] = "12R" if entry["action"] != "12R" else "11R"
            lines[number] = json.dumps(entry)
            break
    record.write_text("\n".join(lines) + "\n")
    done = arena("replay", str(record))
    assert done.returncode == 1
    assert f"line {number + 1}:" in done.stderr and "replay failed" in done.stderr
    (tmp_path / "junk.jsonl").write_text("not json\n")
    junk = arena("replay", str(tmp_path / "junk.jsonl"))
    assert junk.returncode == 1 and "line 1: not JSON" in junk.stderr
    assert arena("replay", str(tmp_path / "absent.jsonl")).returncode == 2


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_match_ends_every_bot_process(tmp_path, signum):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    bot = tmp_path / "slow_bot.py"
    bot.write_text(
        textwrap.dedent("""
        import json, os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        for pid in (os.getpid(), child.pid):
            open(os.path.join(sys.argv[1], str(pid)), "w").close()
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                print(json.dumps({"type": "ready", "name": "slow"}), flush=True)
            elif message["type"] == "request":
                open(os.path.join(sys.argv[1], os.pardir, "asked"), "w").close()
                time.sleep(600)
    """)
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "match",
            "aon",
            "--bot",
            f"{sys.executable} {bot} {pid_dir}",
            "--players",
            "3",
            "--decision-ms",
            "600000",
            "--sandbox",
            "none",  # (its bots write their pids where the test reads them)
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **USER},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    # Every bot and child has started, and the match has reached its first (never answered)
    # request.
    while not (len(list(pid_dir.iterdir())) == 6 and (tmp_path / "asked").exists()):
        assert time.monotonic() < deadline and process.poll() is None, "the match did not start"
        time.sleep(0.1)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1 and "interrupted" in stderr and "Traceback" not in stderr
    pids = [int(p.name) for p in pid_dir.iterdir()]
    assert len(pids) == 6
    assert not [pid for pid in pids if process_running(pid)]


def test_names_and_environments_per_bot(tmp_path):
    three = ["--bot", RANDOM_BOT] * 3
    named = arena("match", "aon", *three, "--name", "alice", "--name", "bob", "--json")
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["bots"] == ["alice", "bob", "random_bot"]
    shared = arena("match", "aon", "--bot", RANDOM_BOT, "--players", "3", "--name", "x", "--json")
    assert json.loads(shared.stdout)["bots"] == ["x", "x-2", "x-3"]
    # `env KEY=VALUE prog` is named after the program, not after the setting
    via_env = arena(
        "match", "aon", "--bot", f"env LEVEL=1 {RANDOM_BOT}", "--players", "3", "--json"
    )
    assert json.loads(via_env.stdout)["bots"] == ["random_bot", "random_bot-2", "random_bot-3"]
    # --env goes to the --bot of the same position, and only to it
    telling = f"sh -c 'echo LEVEL=$LEVEL MODE=$MODE >&2; exec {RANDOM_BOT}'"
    logs = tmp_path / "logs"
    done = arena(
        "match", "aon", "--bot", telling, "--bot", telling, "--bot", telling,
        "--name", "a", "--name", "b", "--name", "c",
        "--env", "LEVEL=3 MODE='fast play'", "--env", "", "--env", "LEVEL=7",
        "--log-dir", str(logs),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = {p.name.split("-")[0]: p.read_text().splitlines()[0] for p in logs.glob("*.stderr.log")}
    assert said == {"a": "LEVEL=3 MODE=fast play", "b": "LEVEL= MODE=", "c": "LEVEL=7 MODE="}
    too_many = arena("match", "aon", *three, *["--name", "n"] * 2, "--name", "m", "--name", "o")
    assert too_many.returncode == 2 and "4 --name given for 3 --bot" in too_many.stderr
    twice = arena("match", "aon", *three, "--name", "a", "--name", "a")
    assert twice.returncode == 2 and "each once" in twice.stderr
    bad_env = arena("match", "aon", *three, "--env", "LEVEL")
    assert bad_env.returncode == 2 and "expected KEY=VALUE" in bad_env.stderr
