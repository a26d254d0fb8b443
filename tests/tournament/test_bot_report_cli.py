"""`arena standings FILE --bot NAME` after a real tournament (real bot processes, one of which
crashes in every match): results, faults with their stderr, times, and the worst matches with
commands that work."""

import json
import re
import shlex
import subprocess
import sys
from glob import glob
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    bots = "".join(
        f'[[bots]]\nname = "{name}"\nargv = ["{sys.executable}", "{BOTS / script}", "{seed}"]\n'
        for name, script, seed in (
            ("crashy-1.0", "crash_bot.py", 0),
            ("r1", "random_bot.py", 1),
            ("r2", "random_bot.py", 2),
        )
    )
    path = folder / "t.toml"
    path.write_text(
        f'name = "report"\nseed = 3\nconcurrency = 1\noutput = "{folder / "out"}"\n'
        f'[time]\ndecision_ms = 10000\n[[games]]\ngame = "aon"\nplayers = 3\ndeals = 2\n{bots}'
    )
    done = arena("tournament", path)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / "out" / "results.sqlite"


def test_the_report_names_faults_times_and_worst_matches(results):
    done = arena("standings", results, "--bot", "crashy-1.0")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "crashy-1.0: 6 completed matches" in out
    assert "Results per game" in out and "alles-oder-nichts" in out and "overall" in out
    assert "Decision times" in out and "p90 ms" in out
    assert "crash: 6" in out  # one crash per match, each with the stack trace's last lines
    assert "RuntimeError: crash bot: crashing on purpose" in out and "Traceback" in out
    assert "Worst matches by duplicate score" in out
    commands = [
        line[line.index("arena replay") :].strip()
        for line in out.splitlines()
        if "arena replay" in line
    ]
    assert len(commands) == 6
    replay = arena(*shlex.split(commands[0])[1:])  # the first command replays the worst match
    assert replay.returncode == 0, replay.stderr
    assert "record checked" in replay.stdout
    # The grep hint names log files that exist and hold the worst match's marker.
    hint = next(line for line in out.splitlines() if line.startswith("its stderr in match 1"))
    worst_id = hint.split("'match ")[1].split(" '")[0]
    logs = glob(hint.rsplit(" ", 1)[1])
    assert logs and any(f"[arena: match {worst_id} (" in Path(p).read_text() for p in logs)


def test_the_replay_commands_are_whole_lines_at_any_width(results):
    """Issue 38 item 7: even at 40 columns each command is one line, uncut, to be copied."""
    narrow = arena("standings", results, "--bot", "crashy-1.0", "--width", "40")
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    commands = [line for line in lines if re.match(r"\d+: arena replay ", line)]
    assert [line.split(":")[0] for line in commands] == ["1", "2", "3", "4", "5", "6"]
    assert all(line.endswith(" --decisions") and len(line) > 40 for line in commands)
    assert any(line.startswith("its stderr in match 1: grep -n -A40 ") for line in lines)
    first = shlex.split(commands[0].split(": ", 1)[1])
    assert arena(*first[1:]).returncode == 0


def test_the_report_as_json_and_its_errors(results):
    done = arena("standings", results, "--bot", "crashy-1.0", "--json", "--worst", "2")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["bot"] == "crashy-1.0" and data["matches"] == 6
    assert [f["kind"] for f in data["faults"]] == ["crash"] * 6
    assert len(data["worst"]) == 2
    assert data["worst"][0]["scaled"] <= data["worst"][1]["scaled"]
    assert set(data["decision_ms"]) == {"alles-oder-nichts", "overall"}
    unknown = arena("standings", results, "--bot", "nobody")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert "--bot nobody: none such" in unknown.stderr and "crashy-1.0" in unknown.stderr


def test_a_bot_and_a_game_by_a_prefix_that_names_one(results):
    # A unique prefix names the bot (its version left out), the same report as the full name.
    short = arena("standings", results, "--bot", "crashy", "--json")
    full = arena("standings", results, "--bot", "crashy-1.0", "--json")
    assert short.returncode == 0 and short.stdout == full.stdout
    one = arena("standings", results, "--bot", "crashy", "--game", "alles", "--json")
    assert one.returncode == 0, one.stderr
    data = json.loads(one.stdout)
    assert set(data["tables"]) == set(data["decision_ms"]) == {"alles-oder-nichts"}
    assert all(m["game"] == "alles-oder-nichts" for m in data["worst"])
    for args, message in [
        (["--bot", "r"], "--bot r: names 2 in "),
        (["--bot", "crashy", "--game", "vingt"], "--game vingt: none such in "),
        (["--game", "alles"], "--game is for one bot's report: give --bot NAME with it"),
    ]:
        done = arena("standings", results, *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert message in done.stderr
    assert "r1, r2" in arena("standings", results, "--bot", "r").stderr  # the candidates


def test_replay_deal_shows_the_other_rotations_side_by_side(results):
    from arena.tournament.store import ResultStore

    with ResultStore.open_read(results) as store:
        rotations = store.deal_matches("alles-oder-nichts", 0, 1)
    assert [m.rotation for m in rotations] == [0, 1, 2]
    record = rotations[1].record_path
    assert rotations[1].record_span is not None  # a records file of many matches (SPEC 8)
    alone = arena("replay", record)
    assert alone.returncode == 1 and alone.stderr.count("\n") == 1
    assert "several matches" in alone.stderr and "--match" in alone.stderr
    by_id = ("--match", rotations[1].match_id)
    done = arena("replay", record, *by_id, "--deal")  # the results file beside records/ is found
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "the same deal in 3 rotations" in out
    assert "r0" in out and "r1*" in out and "r2" in out  # * marks the record shown
    seat_rows = [line for line in out.split("the same deal in")[1].splitlines()]
    for seat in range(3):  # each seat's cards: who held them in each rotation, what they scored
        row = next(i for i, line in enumerate(seat_rows) if line.strip().startswith(f"{seat}: "))
        names, scores = seat_rows[row], seat_rows[row + 1]
        for match in rotations:
            assert match.bots[seat] in names
            assert f"{match.scores[seat]}, {match.placings[seat]}" in scores
    elsewhere = arena(
        "replay", record, *by_id, "--deal", "--results", results.parent / "nope.sqlite"
    )
    assert elsewhere.returncode == 2 and "no results file at" in elsewhere.stderr
