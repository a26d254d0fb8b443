"""The ``arena`` command line: parse, call, print. No game logic lives here.

Each command's module is imported only when that command runs (or when ``arena --help`` lists
them all): ``arena standings`` must not pay for trio, the referee and the runner at every start.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from arena.cli.common import width_option
from arena.referee.protect import protect_referee

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away

# command name -> "module:attribute" of its click command, imported when needed
LAZY_COMMANDS = {
    "init": "arena.cli.init:init_command",
    "match": "arena.cli.match:match_command",
    "play": "arena.cli.play:play_command",
    "replay": "arena.cli.replay:replay_command",
    "check": "arena.cli.check:check_command",
    "tournament": "arena.cli.tournament:tournament_command",
    "standings": "arena.cli.standings:standings_command",
    "compare": "arena.cli.compare:compare_command",
    "submit": "arena.cli.bots:submit_command",
    "bots": "arena.cli.bots:bots_command",
    "serve": "arena.cli.serve:serve_command",
    "league": "arena.cli.league:league_command",
    "export": "arena.cli.export:export_command",
}


def _only_broken_pipes(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return all(_only_broken_pipes(e) for e in error.exceptions)
    if isinstance(error, SystemExit):  # rich's Console ends like this on a broken pipe
        return isinstance(error.__context__, BrokenPipeError)
    return isinstance(error, BrokenPipeError)


class ArenaGroup(click.Group):
    """``arena ... | head``: when the reader of our output goes away, stop quietly (the running
    tournament's bots are closed and its stored matches kept on the way out). Commands of
    :data:`LAZY_COMMANDS` are imported when they are looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            module, _, attribute = LAZY_COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BaseException as error:
            if not _only_broken_pipes(error):
                raise
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # nothing more to flush into the closed pipe
            sys.exit(EXIT_BROKEN_PIPE)


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trick-arena", prog_name="arena")
def main() -> None:
    """Trick Arena: referee and tournaments for trick-taking card game bots."""
    # Before anything is read or dealt: a bot of the same user must not read this process's
    # environment (the organiser's secrets) or its memory (every hand) through /proc (SPEC 7).
    protect_referee()


@main.command("games")
@width_option
def games_command(width: int | None) -> None:
    """List the games, their player counts and options."""
    import json

    from arena.games import GAMES
    from arena.render.terminal import Column, fitted_table, output_console

    rows = []
    for spec in GAMES.values():
        # as a tournament file or --option writes them: TOML's true and false, not Python's
        options = "\n".join(f"{o.name} = {json.dumps(o.default)}: {o.doc}" for o in spec.options)
        players = ", ".join(map(str, spec.player_counts))
        if len(spec.player_counts) > 1:
            players += f" (default {spec.default_players})"
        rows.append([spec.id, ", ".join(spec.aliases), players, options or "-"])
    console = output_console(width)
    columns = [
        Column("id", justify="left"),
        Column("aliases", justify="left", wrap=True),
        Column("players", justify="left", wrap=True),
        Column("options = default", justify="left", wrap=True),
    ]
    console.print(fitted_table(columns, rows, width=console.width, title="Games"))
