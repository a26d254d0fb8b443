"""The ``arena`` command line: parse, call, print. No game logic lives here."""

from __future__ import annotations

import os
import sys

import click
from rich.console import Console
from rich.table import Table

from arena.cli.bots import bots_command, submit_command
from arena.cli.check import check_command
from arena.cli.compare import compare_command
from arena.cli.init import init_command
from arena.cli.match import match_command, replay_command
from arena.cli.serve import serve_command
from arena.cli.tournament import standings_command, tournament_command
from arena.games import GAMES
from arena.referee.process import protect_referee

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away


def _only_broken_pipes(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return all(_only_broken_pipes(e) for e in error.exceptions)
    if isinstance(error, SystemExit):  # rich's Console ends like this on a broken pipe
        return isinstance(error.__context__, BrokenPipeError)
    return isinstance(error, BrokenPipeError)


class ArenaGroup(click.Group):
    """``arena ... | head``: when the reader of our output goes away, stop quietly (the running
    tournament's bots are closed and its stored matches kept on the way out)."""

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
def games_command() -> None:
    """List the games, their player counts and options."""
    table = Table(title="Games")
    for column in ("id", "aliases", "players", "options (default)"):
        table.add_column(column)
    for spec in GAMES.values():
        options = "\n".join(f"{o.name} ({o.default!r}): {o.doc}" for o in spec.options) or "-"
        players = ", ".join(map(str, spec.player_counts))
        if len(spec.player_counts) > 1:
            players += f" (default {spec.default_players})"
        table.add_row(spec.id, ", ".join(spec.aliases), players, options)
    Console().print(table)


main.add_command(init_command)
main.add_command(match_command)
main.add_command(replay_command)
main.add_command(check_command)
main.add_command(tournament_command)
main.add_command(standings_command)
main.add_command(compare_command)
main.add_command(submit_command)
main.add_command(bots_command)
main.add_command(serve_command)
