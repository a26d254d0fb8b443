"""A real tournament for the web tests: sample bots and an illegal-move bot over all four games,
with records, played once per session by the ``arena tournament`` command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|11|12|[1-9JQKA])[CDHSRGBY](?![0-9A-Za-z])")


# The sample bots and a bot that always answers illegally (so it faults and forfeits), by name:
# each is a script under ROOT run by this Python, with its arguments.
BOTS: dict[str, tuple[str, ...]] = {
    "heuristic": ("sample_bots/heuristic/heuristic_bot.py", "1"),
    "random-py": ("sample_bots/python/random_bot.py", "2"),
    "helper": ("sample_bots/python_helper/helper_bot.py", "3"),
    "illegal": ("tests/bots/illegal_bot.py",),
}

ALL_GAMES = """
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


def tournament_toml(
    folder: Path,
    *,
    deals: int = 1,
    name: str = "webtest",
    seed: int = 11,
    bots: Mapping[str, tuple[str, ...]] = BOTS,
    games: str = ALL_GAMES,
) -> Path:
    """A tournament file in ``folder`` writing to ``folder/out`` with records; by default four
    bots (one faults and forfeits) over all four games."""
    entries = "".join(
        f"""
[[bots]]
name = "{bot}"
argv = {json.dumps([sys.executable, *script])}
cwd = "{ROOT}"
"""
        for bot, script in bots.items()
    )
    path = folder / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
seed = {seed}
deals = {deals}
concurrency = 2
workers = 1
output = "{folder / "out"}"
records = true

[time]
decision_ms = 2000
{entries}{games}"""
    )
    return path


def play_tournament(toml: Path) -> Path:
    """Runs ``arena tournament`` on ``toml`` to the end; the results file it wrote."""
    subprocess.run(
        [sys.executable, "-m", "arena", "tournament", str(toml)],
        cwd=ROOT,
        env=arena_env(),
        check=True,
        capture_output=True,
        timeout=300,
    )
    return toml.parent / "out" / "results.sqlite"


def arena_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results file of a finished tournament (16 matches, every one with a record)."""
    folder = tmp_path_factory.mktemp("webtournament")
    return play_tournament(tournament_toml(folder))
