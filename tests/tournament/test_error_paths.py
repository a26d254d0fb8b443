"""Error paths of a tournament (issue 16): each is one line naming the file or field, loses
nothing stored, modifies no file that is not ours (or is damaged), and never shows a traceback."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.process import BotProcess, BotStartupError
from arena.tournament.config import ConfigError, config_from_table
from arena.tournament.errors import TournamentError
from arena.tournament.runner import Progress, run_tournament
from arena.tournament.store import OutputLock, ResultStore, StoreError
from tests.tournament.test_runner import Bots, make_config, open_store, referee, schedule_of
from tests.tournament.test_tournament_cli import PATIENCE_S, RANDOM_BOT, bot_processes

ROOT = Path(__file__).resolve().parents[2]


def table(**bot):
    entry = {"name": "a", "argv": [sys.executable, str(RANDOM_BOT)], **bot}
    return {"bots": [entry, {"name": "b", "argv": [sys.executable, str(RANDOM_BOT)]}]}


@pytest.mark.parametrize(
    "bot, expected",
    [
        ({"memory_mb": 2**44}, "bots[0].memory_mb: found 17592186044416 (an integer); expected"),
        ({"file_mb": 2**44}, "bots[0].file_mb: found"),
        ({"cpu_seconds": 2**63 - 1}, "bots[0].cpu_seconds: found 9223372036854775807"),
        ({"env": {"A=B": "x"}}, "bots[0].env.A=B: found the name 'A=B'; expected a variable name"),
        ({"env": {"A": "x\0y"}}, "bots[0].env.A: found"),
        ({"argv": [sys.executable, "a\0b"]}, "bots[0].argv: found"),
        ({"argv": None, "cmd": "python3 'a\0b'"}, "bots[0].cmd: found"),
    ],
)
def test_limits_env_and_nul_are_mistakes_of_the_file(bot, expected):
    data = table(**bot)
    if data["bots"][0].get("argv") is None:
        del data["bots"][0]["argv"]
    with pytest.raises(ConfigError) as caught:
        config_from_table(data, source="t.toml")
    assert str(caught.value).startswith(f"t.toml: {expected}")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "spec",
    [
        BotSpec("nul", (sys.executable, "a\0b")),
        BotSpec("env", (sys.executable, str(RANDOM_BOT)), env=(("A=B", "x"),)),
        BotSpec("huge", (sys.executable, str(RANDOM_BOT)), memory_mb=2**44),
    ],
    ids=["nul", "env", "huge"],
)
async def test_what_exec_refuses_is_a_startup_error(spec, tmp_path):
    with pytest.raises(BotStartupError) as caught:
        await BotProcess.start(spec, time_control=TimeControl(startup_ms=5000), log_dir=tmp_path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"bot {spec.name}: ")


def test_a_bot_starts_under_an_organisers_lower_hard_limit(tmp_path):
    """`ulimit -v 3000000` (below a bot's 4096 MiB default): the bot gets the organiser's limit."""
    script = f"""
import resource, sys, trio
sys.path.insert(0, {str(ROOT)!r})
limit = 3_000_000 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.process import BotProcess

async def main():
    spec = BotSpec("r", (sys.executable, {str(RANDOM_BOT)!r}))
    bot = await BotProcess.start(spec, time_control=TimeControl(startup_ms=20000), log_dir={str(tmp_path)!r})
    await bot.close()
    print("ready")

trio.run(main)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=PATIENCE_S
    )
    assert done.returncode == 0 and done.stdout.strip() == "ready", done.stderr


def test_a_foreign_sqlite_file_is_refused_untouched(tmp_path):
    foreign = tmp_path / "songs.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE songs (title TEXT)")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    with pytest.raises(StoreError, match="not a Trick Arena results file"):
        ResultStore.open_for_run(foreign, name="t", fingerprint="x", definition={})
    assert foreign.read_bytes() == before
    assert not Path(f"{foreign}-wal").exists()
    assert sqlite3.connect(foreign).execute("PRAGMA journal_mode").fetchone() == ("delete",)


def _damaged_results(tmp_path):
    path = tmp_path / "r.sqlite"
    config = make_config(tmp_path, deals=40)
    with open_store(config) as store:
        trio.run(
            lambda: run_tournament(
                config,
                schedule_of(config),
                store,
                Progress(total=0),
                start_bot=Bots().start,
                play=referee(),
            ),
            clock=trio.testing.MockClock(autojump_threshold=0),
        )
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    data = bytearray(path.read_bytes())
    page = 4096
    pages = len(data) // page
    assert pages > 4
    for n in range(pages // 2, pages):  # the later pages: the matches and their faults
        data[n * page + 8 : n * page + 64] = b"\xa5" * 56
    path.write_bytes(bytes(data))
    return path, config


def test_a_damaged_results_file_is_one_line_and_never_modified(tmp_path):
    path, config = _damaged_results(tmp_path)
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        with ResultStore.open_read(path) as store:
            store.matches()
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    for restart in (False, True):
        with pytest.raises(StoreError, match="damaged.*was not changed"):
            open_store(config) if not restart else ResultStore.open_for_run(
                path, name="t", fingerprint="x", definition={}, restart=True
            )
    assert path.read_bytes() == before


def test_a_read_only_results_file_can_be_read(tmp_path):
    config = make_config(tmp_path, deals=1)
    with open_store(config) as store:
        trio.run(
            lambda: run_tournament(
                config,
                schedule_of(config),
                store,
                Progress(total=0),
                start_bot=Bots().start,
                play=referee(),
            ),
            clock=trio.testing.MockClock(autojump_threshold=0),
        )
    os.chmod(config.results, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        with ResultStore.open_read(config.results) as store:
            assert len(store.matches()) == len(schedule_of(config))
    finally:
        os.chmod(tmp_path, 0o755)


def test_the_output_folder_is_locked_and_tied_to_its_results_file(tmp_path):
    out = tmp_path / "out"
    held = OutputLock.take(out, out / "results.sqlite")
    held.claim()
    with pytest.raises(StoreError, match="another arena tournament is writing its records"):
        OutputLock.take(out, tmp_path / "other.sqlite")
    held.release()
    with pytest.raises(StoreError, match="holds the records of the results file"):
        OutputLock.take(out, tmp_path / "other.sqlite")
    OutputLock.take(out, out / "results.sqlite").release()  # the same results: resumes
    OutputLock.take(out, tmp_path / "other.sqlite", restart=True).release()  # not claimed:
    with pytest.raises(StoreError, match="holds the records of the results file"):
        OutputLock.take(out, tmp_path / "other.sqlite")  # the folder is still the first one's
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="output: found a file; expected a folder"):
        OutputLock.take(tmp_path / "file", tmp_path / "r.sqlite")


async def test_a_full_disk_for_records_stops_the_run_keeping_what_was_stored(
    tmp_path, autojump_clock
):
    config = make_config(tmp_path, concurrency=1, deals=2)
    fine = referee()
    calls = []

    async def full_after_two(game, seats, **kwargs):
        calls.append(kwargs["match_id"])
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return await fine(game, seats, **kwargs)

    with open_store(config) as store:
        with pytest.raises(TournamentError) as caught:
            await run_tournament(
                config,
                schedule_of(config),
                store,
                Progress(total=0),
                start_bot=Bots().start,
                play=full_after_two,
            )
        stored = store.matches(include_aborted=True)
    assert "No space left on device" in str(caught.value) and "\n" not in str(caught.value)
    assert len(stored) == 2 and all(m.completed for m in stored)


def _quick(tmp_path, *bots, extra=()):
    args = [sys.executable, "-m", "arena", "tournament", "--games", "aon", "--concurrency", "1"]
    for i, bot in enumerate(bots):
        args += ["--bot", f"b{i}={sys.executable} {bot} {i} {tmp_path}"]
    return [*args, "--results", str(tmp_path / "out" / "r.sqlite"), *extra]


def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path):
    args = _quick(tmp_path, RANDOM_BOT, RANDOM_BOT, RANDOM_BOT, extra=["--deals", "40"])
    arena = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert arena.stdout is not None
    arena.stdout.readline()  # like `| head -1`
    arena.stdout.close()
    err = arena.communicate(timeout=PATIENCE_S)[1].decode()
    assert arena.returncode == 141 and "Traceback" not in err and err == "", err
    assert bot_processes(tmp_path) == []


def test_piped_output_prints_every_fault_on_its_own_line(tmp_path):
    garbage = ROOT / "tests" / "bots" / "garbage_bot.py"
    args = _quick(tmp_path, RANDOM_BOT, RANDOM_BOT, garbage, extra=["--deals", "3"])
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=PATIENCE_S)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("fault: ")]
    assert not any("more not shown" in line for line in lines)
    stored = sqlite3.connect(tmp_path / "out" / "r.sqlite").execute("SELECT count(*) FROM faults")
    assert len(lines) == stored.fetchone()[0] > 6
