"""The package as a user gets it: one version, and a wheel that can still run the demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

import arena

ROOT = Path(__file__).resolve().parents[1]


def test_one_version_number():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert arena.__version__ == version("trick-arena") == declared
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == f"arena, version {declared}"


def test_the_license_is_in_the_metadata():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert project["license"] == {"text": "MIT"}
    assert "License :: OSI Approved :: MIT License" in project["classifiers"]
    assert project["authors"] and project["urls"]


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory) -> Path:
    """The wheel built from this checkout, unpacked: what `pip install` would put on sys.path."""
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        tail = (built.stderr or built.stdout).strip().splitlines()[-1:]
        pytest.skip(f"cannot build a wheel here: {tail[0] if tail else built.returncode}")
    (wheel,) = out.glob("*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def _run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Only the unpacked wheel and the installed dependencies: never this checkout.
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "import sys; from arena.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_wheel_carries_the_demo_and_arena_init_writes_it(unpacked_wheel, tmp_path):
    assert (unpacked_wheel / "arena" / "demo" / "tournaments" / "demo.toml").is_file()
    assert (unpacked_wheel / "protocol" / "schema.json").is_file()
    elsewhere = tmp_path / "somewhere"
    elsewhere.mkdir()
    done = _run_installed(unpacked_wheel, elsewhere, "init", "league")
    assert done.returncode == 0, done.stderr
    demo = elsewhere / "league" / "tournaments" / "demo.toml"
    assert demo.is_file()
    for bot in (
        "heuristic/heuristic_bot.py",
        "python/random_bot.py",
        "javascript/random_bot.js",
        "rust/src/main.rs",
        "java/StarterBot.java",
        "cpp/starter_bot.cpp",
        "go/main.go",
    ):
        assert (elsewhere / "league" / "sample_bots" / bot).is_file()
    assert not list((elsewhere / "league").rglob("__pycache__"))
    again = _run_installed(unpacked_wheel, elsewhere, "init", "league")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert "Traceback" not in again.stderr


def test_the_initialised_demo_plays_from_another_folder(unpacked_wheel, tmp_path):
    """The copied demo file finds its bots wherever arena runs (paths are the file's own)."""
    _run_installed(unpacked_wheel, tmp_path, "init", "league")
    cup = tmp_path / "league" / "tournaments" / "cup.toml"
    text = (tmp_path / "league" / "tournaments" / "demo.toml").read_text()
    # The demo's bots on one small game, so the test stays short; node may be missing here.
    head = text.split("[[bots]]")[0].replace("deals = 64", "deals = 1")
    # Its bots run `python3`: here this interpreter, whichever python3 the caller's PATH has.
    bots = [
        b.replace('["python3", ', f"[{json.dumps(sys.executable)}, ")
        for b in text.split("[[bots]]")[1:]
        if "node" not in b
    ]
    assert bots and all(sys.executable in b for b in bots)
    body = "".join("[[bots]]" + b.split("[[games]]")[0] for b in bots)
    cup.write_text(head + body + '[[games]]\ngame = "alles-oder-nichts"\nplayers = 3\n')
    run_from = tmp_path / "elsewhere"
    run_from.mkdir()
    done = _run_installed(unpacked_wheel, run_from, "tournament", str(cup))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "league" / "results" / "demo" / "results.sqlite").is_file()
    assert "forfeit" not in done.stdout.lower()
