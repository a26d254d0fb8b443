"""Smaller items of issue 35, each with real processes and real results files: a tournament's
folder moved whole keeps its replays, a tournament of too many bots or deals is one line, and a
refused --restart into a foreign file changes nothing."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path

from arena.tournament.config import MAX_BOTS, MAX_DEALS
from arena.tournament.store import OutputLock, ResultStore
from tests.tournament.test_sealed_deals import arena

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "tests" / "bots" / "random_bot.py"


def bots_toml(count: int) -> str:
    return "".join(
        f'[[bots]]\nname = "r{i}"\nargv = ["{sys.executable}", "{RANDOM_BOT}", "{i}"]\n'
        for i in range(count)
    )


def small_tournament(folder: Path, name: str = "moved") -> Path:
    """A tournament whose output and results are in ``folder`` (the file names them relative
    to itself, so the folder can move whole)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nseed = 3\ndeals = 1\nconcurrency = 1\noutput = "out"\n'
        f'games = [{{ game = "aon", players = 3 }}]\n\n{bots_toml(3)}'
    )
    return path


def test_a_moved_tournament_folder_keeps_its_replays(tmp_path):
    path = small_tournament(tmp_path / "before")
    assert arena("tournament", path).returncode == 0
    with sqlite3.connect(tmp_path / "before" / "out" / "results.sqlite") as db:
        names = {row[0] for row in db.execute("SELECT record_path FROM matches")}
    assert names and all(not Path(name).is_absolute() for name in names)  # from the results file
    shutil.move(tmp_path / "before", tmp_path / "after")
    results = tmp_path / "after" / "out" / "results.sqlite"
    with ResultStore.open_read(results) as store:
        match = store.matches()[0]
    assert match.record is not None
    assert match.record.path.parent == (tmp_path / "after" / "out" / "records")
    shown = arena("replay", "--check", match.record.path, "--match", match.match_id)
    assert shown.returncode == 0, shown.stderr
    assert arena("replay", "--check", results).returncode == 0
    report = arena("standings", results, "--bot", "r0")
    assert report.returncode == 0 and str(tmp_path / "after") in report.stdout


def test_an_older_absolute_record_path_still_reads(tmp_path):
    path = small_tournament(tmp_path / "t")
    assert arena("tournament", path).returncode == 0
    results = tmp_path / "t" / "out" / "results.sqlite"
    with sqlite3.connect(results) as db:  # as an older arena stored them
        db.execute(
            "UPDATE matches SET record_path = ? || '/' || record_path", (str(results.parent),)
        )
        absolute = db.execute("SELECT record_path FROM matches").fetchone()[0]
    assert Path(absolute).is_absolute()
    with ResultStore.open_read(results) as store:
        assert store.matches()[0].record.path == Path(absolute)
    assert arena("replay", "--check", results).returncode == 0


def test_too_many_bots_is_one_line_at_once(tmp_path):
    """20,000 bots took 3.2 GB and printed nothing for 100 s; now a stated bound."""
    path = tmp_path / "crowd.toml"
    path.write_text(f'name = "crowd"\n\n{bots_toml(20_000)}')
    started = time.monotonic()
    refused = arena("tournament", path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert f"bots: found 20000 bots; expected at most {MAX_BOTS} bots" in refused.stderr
    assert not (tmp_path / "results").exists()  # nothing was made
    print(f"refused in {time.monotonic() - started:.1f} s")


def test_deals_beyond_the_bound_are_one_line(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(f'name = "long"\ndeals = {2**63 - 1}\n\n{bots_toml(2)}')
    refused = arena("tournament", path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert (
        f"deals: found 9223372036854775807 (an integer); expected an integer >= 1 and <= {MAX_DEALS}"
        in refused.stderr
    )
    bot = f"{sys.executable} {RANDOM_BOT}"
    quick = arena("tournament", "--bot", f"a={bot}", "--bot", f"b={bot}", "--deals", str(2**62))
    assert quick.returncode == 2 and "Traceback" not in quick.stderr
    assert quick.stderr.count("\n") == 1 and "deals" in quick.stderr


def test_a_refused_restart_into_a_foreign_file_changes_nothing(tmp_path):
    path = small_tournament(tmp_path / "t", name="mine")
    assert arena("tournament", path).returncode == 0
    out = tmp_path / "t" / "out"
    lock_before = (out / OutputLock.LOCK_NAME).read_text()
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    foreign_before = foreign.read_bytes()
    refused = arena("tournament", path, "--results", foreign, "--restart")
    # (refused by the output folder, which holds the records of the tournament's own file)
    assert refused.returncode == 2 and f"not of {foreign}" in refused.stderr
    assert (out / OutputLock.LOCK_NAME).read_text() == lock_before
    assert foreign.read_bytes() == foreign_before
    resumed = arena("tournament", path)  # the real results resume, without --restart
    assert resumed.returncode == 0, resumed.stderr
    assert "done: 0 played, 3 already stored" in resumed.stdout
    assert json.loads(json.dumps(lock_before))  # (a plain text file: the results file's path)
