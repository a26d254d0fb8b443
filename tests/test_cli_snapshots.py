"""Snapshots of the command line, as fastchess keeps them: every command's --help and a set of
error messages, compared with the files under tests/snapshots/. A change to what an organiser
reads shows up as a diff here; regenerate only on purpose:
``python -m pytest tests/test_cli_snapshots.py --update-snapshots``."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.cli import LAZY_COMMANDS, main

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
ROOT = SNAPSHOTS.parents[1]
WIDTH = 100  # the help's width, whatever the terminal running the tests


def commands() -> list[str]:
    return sorted({*LAZY_COMMANDS, *main.commands})


def run(args: list[str]) -> click.testing.Result:
    return CliRunner().invoke(main, args, terminal_width=WIDTH, prog_name="arena")


def compare(path: Path, text: str, update: bool) -> None:
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path.name}: no snapshot yet: run with --update-snapshots"
    assert text == path.read_text(), (
        f"{path.relative_to(ROOT)} differs from what the CLI prints now; if the change is meant, "
        "run `python -m pytest tests/test_cli_snapshots.py --update-snapshots` and commit it"
    )


@pytest.mark.parametrize("command", ["", *commands()])
def test_help(command, update_snapshots):
    result = run([command, "--help"] if command else ["--help"])
    assert result.exit_code == 0, result.output
    compare(SNAPSHOTS / "help" / f"{command or 'arena'}.txt", result.output, update_snapshots)


def test_every_option_says_what_it_does():
    ctx = click.Context(main, **main.context_settings)
    silent = [
        f"arena {name} {'/'.join(param.opts)}"
        for name in commands()
        for param in main.get_command(ctx, name).params
        if isinstance(param, click.Option) and not param.help
    ]
    assert not silent


# Mistakes an organiser makes, each answered in one line (usage errors: click's two lines
# before it). Files are made in a fresh folder and named relative to it.
ERRORS = [
    ["tournament"],
    ["tournament", "missing.toml"],
    ["tournament", "bad.toml"],
    ["tournament", "--bot", "a=python3 bot.py"],
    ["tournament", "good.toml", "--report-every", "0"],
    ["tournament", "good.toml", "--seed", "3"],
    ["standings", "missing.sqlite"],
    ["standings", "notes.txt"],
    ["standings", "results.sqlite", "--json", "--csv"],
    ["replay", "notes.txt"],
    ["match", "chess", "--bot", "python3 bot.py"],
    ["games", "--width", "10"],
    ["compare", "python3 new.py", "--against", "python3 old.py"],
    ["export", "missing.sqlite"],
]


def test_error_messages(tmp_path, monkeypatch, update_snapshots):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("some notes\n")
    (tmp_path / "bad.toml").write_text(
        'name = "bad"\ndeals = 0\nconcurrency = "two"\n[[bots]]\nname = "x"\nargv = [3]\n'
    )
    (tmp_path / "good.toml").write_text(
        f'name = "good"\n[[bots]]\nname = "a"\nargv = ["{sys.executable}", "bot.py"]\ncwd = "."\n'
        f'[[bots]]\nname = "b"\nargv = ["{sys.executable}", "bot.py"]\ncwd = "."\n'
    )
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "results.sqlite").write_bytes(b"")
    blocks = []
    for args in ERRORS:
        result = run(args)
        assert result.exit_code != 0, args
        text = result.stderr.replace(str(tmp_path), "<tmp>").replace(sys.executable, "<python>")
        text = re.sub(r"-[0-9a-f]{10}/", "-<hash>/", text)
        assert "Traceback" not in text
        blocks.append(f"$ arena {' '.join(args)}\nexit {result.exit_code}\n{text}")
    compare(SNAPSHOTS / "errors.txt", "\n".join(blocks), update_snapshots)


def test_the_snapshot_folder_holds_no_stale_help():
    kept = {p.stem for p in (SNAPSHOTS / "help").glob("*.txt")}
    assert kept <= {"arena", *commands()}, kept - {"arena", *commands()}
    assert os.path.isdir(SNAPSHOTS)
