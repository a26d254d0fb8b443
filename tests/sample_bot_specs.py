"""How the tests run each sample bot (a BotSpec per bot), building the C bot in a temporary folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee.bot_spec import BotSpec

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
BROKEN = ROOT / "tests" / "bots" / "broken"

SAMPLE_BOTS = ("python", "javascript", "c", "python_helper", "heuristic")


def build_c_bot(folder: Path) -> Path:
    """Copy the C bot's sources to ``folder`` and build them there with make."""
    if shutil.which("make") is None or (shutil.which("cc") is None and shutil.which("gcc") is None):
        pytest.skip("the C sample bot needs make and a C compiler (cc or gcc), not installed here")
    for name in ("random_bot.c", "Makefile"):
        shutil.copy(SAMPLES / "c" / name, folder / name)
    done = subprocess.run(["make", "-s"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"make failed:\n{done.stdout}\n{done.stderr}"
    return folder / "random_bot"


def sample_bot(kind: str, tmp_path: Path, name: str | None = None, seed: int = 7) -> BotSpec:
    """The BotSpec of one sample bot (skips when its language is not installed)."""
    env = (("BOT_SEED", str(seed)),)
    name = name or kind
    if kind == "python":
        return BotSpec(name, (sys.executable, str(SAMPLES / "python" / "random_bot.py")), env=env)
    if kind == "javascript":
        node = shutil.which("node")
        if node is None:
            pytest.skip("the JavaScript sample bot needs Node.js (node), not installed here")
        return BotSpec(name, (node, str(SAMPLES / "javascript" / "random_bot.js")), env=env)
    if kind == "c":
        folder = tmp_path / "c-bot"
        if not (folder / "random_bot").exists():
            folder.mkdir(exist_ok=True)
            build_c_bot(folder)
        return BotSpec(name, (str(folder / "random_bot"),), env=env)
    if kind == "python_helper":
        return BotSpec(
            name, (sys.executable, str(SAMPLES / "python_helper" / "helper_bot.py")), env=env
        )
    if kind == "heuristic":
        return BotSpec(
            name, (sys.executable, str(SAMPLES / "heuristic" / "heuristic_bot.py")), env=env
        )
    raise ValueError(kind)


def broken_bot(name: str) -> BotSpec:
    return BotSpec(name, (sys.executable, str(BROKEN / f"{name}.py")))
