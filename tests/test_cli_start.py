"""The ``arena`` command imports only what the command it runs needs (arena/cli/__init__.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from arena.cli import LAZY_COMMANDS, main

PROBE = """
import json, sys
from arena.cli import main
sys.argv = ["arena", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def modules_after(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stderr.splitlines()[-1]))


def test_standings_imports_no_trio_referee_or_runner():
    loaded = modules_after("standings", "--help")
    assert "arena.cli.standings" in loaded
    for heavy in (
        "trio",
        "arena.referee.process",
        "arena.referee.match",
        "arena.tournament.runner",
        "arena.tournament.config",
        "arena.cli.tournament",
        "arena.cli.match",
        "importlib.metadata",
        "rich",  # only to draw tables
    ):
        assert heavy not in loaded, heavy


def test_every_lazy_command_is_the_command_of_that_name():
    context = click.Context(main, **main.context_settings)
    assert set(LAZY_COMMANDS) <= set(main.list_commands(context))
    for name in LAZY_COMMANDS:
        command = main.get_command(context, name)
        assert isinstance(command, click.Command) and command.name == name
    assert main.get_command(context, "no-such-command") is None


def test_help_lists_every_command():
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "--help"], capture_output=True, text=True, check=True
    ).stdout
    listed = shown.split("Commands:")[1].split()
    for name in [*LAZY_COMMANDS, "games"]:
        assert name in listed
