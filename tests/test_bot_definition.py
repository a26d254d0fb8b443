"""A bot defined in a tournament file (``[[bots]]``) and one defined in a bot folder's
``bot.toml`` keep one set of rules (arena/referee/bot_spec.py, SPEC.md 10.1): each rule refuses
the same values from both, with a one-line message naming the file and the field and saying the
same thing expected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena.bots.manifest import ManifestError, load_manifest
from arena.tournament.config import ConfigError, load_config

# (the field's name in a tournament file's [[bots]] entry, in bot.toml, the TOML line of each,
# what the message says was expected)
RULES = [
    ("name", "name", 'name = "a+b"', "1-40 letters, digits or _ . - (starting with"),
    ("name", "name", 'name = ".hidden"', "1-40 letters, digits or _ . - (starting with"),
    ("name", "name", f'name = "{"n" * 41}"', "1-40 letters, digits or _ . - (starting with"),
    ("name", "name", "name = 7", "1-40 letters, digits or _ . - (starting with"),
    ("memory_mb", "limits.memory_mb", "memory_mb = 1099511627776", "<= 1048576"),
    ("memory_mb", "limits.memory_mb", "memory_mb = 0", "an integer >= 1"),
    ("file_mb", "limits.file_mb", "file_mb = true", "an integer >= 1"),
    ("cpu_seconds", "limits.cpu_seconds", "cpu_seconds = 1e9", "<= 31622400"),
    ("env.1X", "env.1X", 'env = { 1X = "a" }', "a variable name of letters, digits and _"),
    ("env.LEVEL", "env.LEVEL", "env = { LEVEL = 3 }", "a string without NUL"),
    ("argv", "run", 'argv = ["python3", ""]', "(non-empty words, no NUL characters)"),
    ("cmd", "run", 'cmd = "python3 \'unclosed"', "a command line that splits into words"),
]


def tournament_file(tmp_path: Path, line: str) -> Path:
    """A good tournament file but for its second bot's ``line`` (in place of its name or command
    when it sets one)."""
    field = line.split(" ", 1)[0]
    name = "" if field == "name" else 'name = "beta"'
    command = "" if field in ("argv", "cmd") else f'argv = ["{sys.executable}", "bot.py"]'
    bot = "\n".join(part for part in (name, command, line) if part)
    path = tmp_path / "cup.toml"
    path.write_text(
        f'name = "cup"\n\n[[bots]]\nname = "alpha"\nargv = ["{sys.executable}", "bot.py"]\n\n'
        f'[[bots]]\n{bot}\n\n[[games]]\ngame = "aon"\nplayers = 3\n'
    )
    return path


def bot_folder(tmp_path: Path, line: str) -> Path:
    """A good bot.toml but for ``line``, in its place (a limit in [limits], env in [env])."""
    field = line.split(" ", 1)[0]
    top = {"name": 'name = "mini"', "run": 'run = "python3 bot.py"'}
    tables = {"limits": [], "env": []}
    if field in ("memory_mb", "file_mb", "cpu_seconds"):
        tables["limits"].append(line)
    elif field == "env":
        tables["env"].append(line.split("{", 1)[1].rstrip("} ").strip())
    elif field in ("argv", "cmd"):
        top["run"] = "run = " + line.split(" = ", 1)[1]
    else:
        top[field] = line
    text = "\n".join(top.values()) + '\nauthor = "Ann"\nversion = "1.0"\n'
    for table, lines in tables.items():
        if lines:
            text += f"\n[{table}]\n" + "\n".join(lines) + "\n"
    folder = tmp_path / "mini"
    folder.mkdir()
    (folder / "bot.toml").write_text(text)
    return folder


@pytest.mark.parametrize("in_tournament, in_manifest, line, expected", RULES)
def test_each_rule_refuses_the_same_value_from_both_files(
    tmp_path, in_tournament, in_manifest, line, expected
):
    path = tournament_file(tmp_path, line)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    [message] = str(caught.value).splitlines()
    assert message.startswith(f"{path}: bots[1].{in_tournament}: found "), message
    assert expected in message.split("; expected ", 1)[1], message

    folder = bot_folder(tmp_path, line)
    with pytest.raises(ManifestError) as refused:
        load_manifest(folder)
    [problem] = refused.value.problems
    assert problem.startswith(f"{folder / 'bot.toml'}: {in_manifest}: found "), problem
    assert expected in problem.split("; expected ", 1)[1], problem


@pytest.mark.parametrize(
    "line", ['name = "a.b-c_9"', "memory_mb = 1048576", "cpu_seconds = 31622400"]
)
def test_the_largest_and_oddest_allowed_values_pass_in_both_files(tmp_path, line):
    load_config(tournament_file(tmp_path, line))
    load_manifest(bot_folder(tmp_path, line))
