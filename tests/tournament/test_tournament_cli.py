"""End to end with real processes: `python -m arena tournament` killed with SIGKILL mid-run and run
again, stopped with Ctrl-C, and its error messages. Generous time limits; nothing is timed."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.referee.record import replay_record
from arena.tournament.config import load_config
from arena.tournament.schedule import build_schedule
from arena.tournament.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "tests" / "bots" / "random_bot.py"
PATIENCE_S = 600  # a guard against a hang only: a loaded machine may be slow, never wrong


def tournament_file(tmp_path, deals=8, concurrency=2):
    """Three seeded random bots (tests/bots/random_bot.py) that hold while ``tmp_path/hold``
    exists; a decision may take 10 minutes, so a held bot is never timed out."""
    bots = "".join(
        f'[[bots]]\nname = "r{i}"\nargv = ["{sys.executable}", "{RANDOM_BOT}", "{i}", '
        f'"{tmp_path}"]\n'
        'sandbox = "none"\n'  # (they look for tmp_path/hold, which a seal would hide)
        for i in range(3)
    )
    text = (
        f'name = "kill-test"\nseed = 11\nconcurrency = {concurrency}\n'
        f'output = "{tmp_path / "out"}"\n\n[time]\ndecision_ms = 600000\n\n'
        f'[[games]]\ngame = "aon"\nplayers = 3\n'
        f"deals = {deals}\n\n{bots}"
    )
    path = tmp_path / "kill.toml"
    path.write_text(text)
    return path


def arena(*args, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def completed_count(results):
    if not results.exists():
        return 0
    try:
        db = sqlite3.connect(f"{results.as_uri()}?mode=ro", uri=True)
        try:
            return db.execute("SELECT count(*) FROM matches WHERE status = 'completed'").fetchone()[
                0
            ]
        finally:
            db.close()
    except sqlite3.Error:  # the file is being created
        return 0


def wait_for_matches(process, results, count):
    deadline = time.monotonic() + PATIENCE_S
    while completed_count(results) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the tournament made no progress"
        time.sleep(0.05)


def bot_processes(marker):
    """Pids of processes whose command line mentions ``marker`` (our bots carry tmp_path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(marker).encode() in cmdline and RANDOM_BOT.name.encode() in cmdline:
                found.append(int(entry.name))
    return found


def stop_at_matches(process, path, count):
    """Wait until ``count`` matches of the tournament file ``path`` are stored, then hold its
    bots (see tournament_file), so the run is mid-way whenever the test kills it."""
    wait_for_matches(process, load_config(path).results, count)
    (path.parent / "hold").touch()


def release(path):
    (path.parent / "hold").unlink()


def wait_until_no_bots(marker):
    deadline = time.monotonic() + 30
    while bot_processes(marker):
        assert time.monotonic() < deadline, f"bot processes left: {bot_processes(marker)}"
        time.sleep(0.1)


def test_sigkill_mid_run_then_rerun_loses_and_duplicates_nothing(tmp_path):
    path = tournament_file(tmp_path)
    config = load_config(path)
    expected = {
        m.match_id for m in build_schedule(config.seed, [b.name for b in config.bots], config.games)
    }
    process = arena("tournament", path)
    stop_at_matches(process, path, 4)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=PATIENCE_S)
    release(path)
    wait_until_no_bots(tmp_path)  # orphaned bots see end of input and leave
    with ResultStore.open_read(config.results) as store:
        before = {m.match_id: m for m in store.matches()}
    assert 4 <= len(before) < len(expected)

    rerun = arena("tournament", path)
    out, err = rerun.communicate(timeout=PATIENCE_S)
    assert rerun.returncode == 0, err
    assert "already stored" in out
    with ResultStore.open_read(config.results) as store:
        after = store.matches(include_aborted=True)
    ids = [m.match_id for m in after]
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == expected and all(m.completed for m in after)
    for match in after:  # what was stored before the kill is kept as it was
        if match.match_id in before:
            assert match == before[match.match_id]
    for match in after:  # every record reads back from its span, whichever run wrote it
        assert match.record is not None and match.record.span is not None
        replayed = replay_record(match.record)
        assert replayed.header["match_id"] == match.match_id and replayed.result is not None
    # The rerun never appends after what the killed run left (perhaps a cut record).
    killed_files = {m.record.path for m in after if m.record and m.match_id in before}
    assert killed_files.isdisjoint(
        m.record.path for m in after if m.record and m.match_id not in before
    )
    db = sqlite3.connect(config.results)
    assert db.execute("SELECT count(*) FROM faults").fetchone()[0] == sum(
        len(m.faults) for m in after
    )
    db.close()
    wait_until_no_bots(tmp_path)

    standings = arena("standings", config.results, "--json")
    out, err = standings.communicate(timeout=PATIENCE_S)
    assert standings.returncode == 0, err
    data = json.loads(out)
    assert data["overall"]["matches"] == len(expected)
    assert sorted(row["bot"] for row in data["overall"]["rows"]) == ["r0", "r1", "r2"]
    as_csv = arena("standings", path, "--csv")  # the tournament file finds its results
    out, err = as_csv.communicate(timeout=PATIENCE_S)
    assert as_csv.returncode == 0, err
    rows = out.splitlines()
    assert rows[0].startswith("table,rank,bot,played,wins,mean_placing,mean_score,duplicate,mu")
    assert len(rows) == 1 + 3 + 3  # alles-oder-nichts and overall


def test_ctrl_c_stops_cleanly_keeping_finished_matches(tmp_path):
    path = tournament_file(tmp_path, deals=30)
    config = load_config(path)
    process = arena("tournament", path)
    stop_at_matches(process, path, 2)  # a Ctrl-C while every bot is thinking
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=PATIENCE_S)
    release(path)
    assert process.returncode == 130, err
    assert "stopped:" in out and "Traceback" not in err
    assert bot_processes(tmp_path) == []  # closed before the arena exited
    assert completed_count(config.results) >= 2
    (line,) = [line for line in out.splitlines() if line.startswith("stopped: ")]
    stored = int(line.split()[1])
    assert stored == completed_count(config.results), "it says how many it stored"


def test_errors_are_one_line_with_exit_status_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bots = "".join(f'[[bots]]\nname = "b{i}"\ncmd = "true"\n' for i in range(2))
    bad.write_text('name = "x"\nseed = "soon"\n' + bots)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_text("not a database")
    cases = [
        (
            ("tournament", bad),
            f'Error: {bad}: seed: found "soon" (a string); expected an '
            "integer >= 0 and <= 9223372036854775807",
        ),
        (("tournament",), "Error: give a tournament FILE, or two or more --bot NAME=CMD"),
        (("standings", garbage), f"Error: {garbage}: not a Trick Arena results file"),
        (
            ("tournament", bad, "--seed", "3"),
            "Error: --seed is for a quick tournament without FILE",
        ),
    ]
    for args, message in cases:
        process = arena(*args)
        out, err = process.communicate(timeout=PATIENCE_S)
        assert process.returncode == 2, (args, err)
        assert err.startswith(message) and err.count("\n") == 1, err


def run_ok(*args):
    process = arena(*args)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 0 and "Traceback" not in err, (out, err)
    return out


def test_a_grown_definition_keeps_its_matches_and_a_changed_bot_is_refused(tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text(RANDOM_BOT.read_text())
    path = tournament_file(tmp_path, deals=1)
    text = path.read_text().replace(f'"{RANDOM_BOT}", "0"', f'"{mine}", "0"')
    path.write_text(text)
    assert "done: 3 played, 0 already stored" in run_ok("tournament", path)
    path.write_text(text.replace("deals = 1", "deals = 2"))  # grown: one more deal
    out = run_ok("tournament", path)
    assert "kept 3 stored matches, 3 to play" in out and "done: 3 played, 3 already stored" in out
    path.write_text(text.replace("seed = 11", "seed = 12"))  # other deals: nothing to keep
    out = run_ok("tournament", path)
    assert "kept 0 stored matches, 3 to play; 6 stored matches of an earlier definition" in out
    mine.write_text(mine.read_text() + "# changed\n")
    refused = arena("tournament", path)
    out, err = refused.communicate(timeout=PATIENCE_S)
    assert refused.returncode == 2 and "Traceback" not in err
    assert (
        err.count("\n") == 1
        and f"bot 'r0' changed since its matches were stored ({tmp_path}/ differs)" in err
    )
    assert "done: 3 played, 0 already stored" in run_ok("tournament", path, "--restart")


def test_games_option_with_a_file_plays_only_those_games(tmp_path):
    from arena.cli.tournament import InputError, _only_games

    config = load_config(tournament_file(tmp_path))
    labels = {plan.label for plan in config.games}
    assert _only_games(config, "alles") == labels
    assert _only_games(config, "all") == labels
    with pytest.raises(InputError, match="--games: found 'vingt-down'; expected a game of"):
        _only_games(config, "vingt-down")


def test_until_confident_stops_when_the_ranking_is_separated(tmp_path):
    """Real bots: the heuristic bot against the random one is told apart after the first round
    (8 deals); the rerun plays nothing and says the same; standings show the pairwise table."""
    heuristic = ROOT / "sample_bots" / "heuristic" / "heuristic_bot.py"
    args = [
        "tournament",
        "--bot",
        f"h={sys.executable} {heuristic} 1",
        "--bot",
        f"r={sys.executable} {RANDOM_BOT} 2 {tmp_path}",
        "--games",
        "aon",
        "--until-confident",
        "--deals",
        "64",
        "--concurrency",
        "2",
        "--results",
        tmp_path / "r.sqlite",
    ]
    process = arena(*args)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 0, err
    assert "stopped after 8 deals: every game's ranking is separated at 95%" in out
    assert "done: 32 played" in out  # 8 deals of the one table, 4 rotations each
    rerun = arena(*args)
    out, err = rerun.communicate(timeout=PATIENCE_S)
    assert rerun.returncode == 0, err
    assert "stopped after 8 deals" in out and "done: 0 played, 32 already stored" in out
    shown = arena("standings", tmp_path / "r.sqlite")
    out, err = shown.communicate(timeout=PATIENCE_S)
    assert shown.returncode == 0, err
    assert (
        "alles-oder-nichts pairs: row minus column" in out
        and "mean dup difference" in out
        and "(100%)" in out
    )
    as_csv = arena("standings", tmp_path / "r.sqlite", "--csv", "--pairs")
    out, _ = as_csv.communicate(timeout=PATIENCE_S)
    assert out.splitlines()[0] == "table,row,column,metric,deals,mean,low,high,p_better"
    assert len(out.splitlines()) == 1 + 2 + 2  # h-r and r-h, in aon and overall
