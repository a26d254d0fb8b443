"""A real tournament for the web tests: sample bots and an illegal-move bot over all four games,
with records, played once per session by the ``arena tournament`` command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|11|12|[1-9JQKA])[CDHSRGBY](?![0-9A-Za-z])")


def tournament_toml(folder: Path, *, deals: int = 1, name: str = "webtest") -> Path:
    """Four bots (one that always answers illegally, so it faults and forfeits), all games."""
    path = folder / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
seed = 11
deals = {deals}
concurrency = 2
workers = 1
output = "{folder / "out"}"
records = true

[time]
decision_ms = 2000

[[bots]]
name = "heuristic"
argv = ["{sys.executable}", "sample_bots/heuristic/heuristic_bot.py", "1"]
cwd = "{ROOT}"

[[bots]]
name = "random-py"
argv = ["{sys.executable}", "sample_bots/python/random_bot.py", "2"]
cwd = "{ROOT}"

[[bots]]
name = "helper"
argv = ["{sys.executable}", "sample_bots/python_helper/helper_bot.py", "3"]
cwd = "{ROOT}"

[[bots]]
name = "illegal"
argv = ["{sys.executable}", "tests/bots/illegal_bot.py"]
cwd = "{ROOT}"

[[games]]
game = "alles-oder-nichts"
players = 4

[[games]]
game = "vingt-down"

[[games]]
game = "eight-rounds"
players = 4

[[games]]
game = "all-fours"
max_tables = 1
"""
    )
    return path


def arena_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results file of a finished tournament (16 matches, every one with a record)."""
    folder = tmp_path_factory.mktemp("webtournament")
    toml = tournament_toml(folder)
    subprocess.run(
        [sys.executable, "-m", "arena", "tournament", str(toml)],
        cwd=ROOT,
        env=arena_env(),
        check=True,
        capture_output=True,
        timeout=300,
    )
    return folder / "out" / "results.sqlite"
