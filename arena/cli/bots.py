"""``arena submit FOLDER`` and ``arena bots``: parse, call arena.bots.submit / arena.bots.installed, print.

``arena submit`` exits 0 when installed (or already there), 1 when refused (bad manifest, failed
build or check; nothing installed), 2 on a bad command line.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click
from rich.table import Table

from arena.bots.installed import BotsDirError, InstalledBot, installed_versions
from arena.bots.manifest import BotFolderError, ManifestError
from arena.bots.submit import SubmitError, arena_check, submit
from arena.cli.common import InputError, width_option
from arena.render.terminal import Column, fitted_table, output_console

DEFAULT_BOTS_DIR = "bots"


@click.command("submit")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--to",
    "bots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="BOTS_DIR",
    default=DEFAULT_BOTS_DIR,
    show_default=True,
    help="The organiser's bots directory; the bot goes to BOTS_DIR/<name>/<hash>/.",
)
@click.option(
    "--skip-check",
    is_flag=True,
    help="Install without arena check (for bots you trust); the build still runs.",
)
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap"]),
    default=None,
    help="Run the bot in a bubblewrap sandbox during the check (the build is not).",
)
def submit_command(folder: Path, bots_dir: Path, skip_check: bool, sandbox: str | None) -> None:
    """Validate FOLDER/bot.toml, build the bot in a copy, run arena check on it, and install it
    as a new version. Nothing is installed unless every step passes."""
    if skip_check and sandbox:
        raise click.UsageError("--sandbox applies to the check: it cannot go with --skip-check")
    try:
        checker = None if skip_check else partial(arena_check, sandbox=sandbox)
        outcome = submit(
            folder,
            bots_dir,
            checker=checker,
            progress=lambda message: click.echo(message, err=True),
        )
    except ManifestError as error:
        if len(error.problems) == 1:
            raise click.ClickException(f"{error.problems[0]}; nothing installed") from None
        heading = f"{error.path}: {len(error.problems)} problems; nothing installed"
        raise click.ClickException("\n  ".join([heading, *error.problems])) from None
    except (BotFolderError, BotsDirError, SubmitError) as error:
        raise click.ClickException(str(error)) from None
    if outcome.already_installed:
        unchecked = ", installed unchecked" if not outcome.installed.checked else ""
        click.echo(
            f"{outcome.label} is already installed at {outcome.installed.folder} "
            f"(identical content{unchecked}): nothing to do"
        )
        return
    if outcome.check is not None:
        click.echo(outcome.check.report)
    unchecked = " (unchecked: --skip-check)" if not outcome.installed.checked else ""
    click.echo(f"installed {outcome.label} at {outcome.installed.folder}{unchecked}")


@click.command("bots")
@click.option(
    "--dir",
    "bots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="BOTS_DIR",
    default=DEFAULT_BOTS_DIR,
    show_default=True,
    help="The bots directory to list.",
)
@click.option(
    "--all", "all_versions", is_flag=True, help="Every installed version, not just the latest."
)
@width_option
def bots_command(bots_dir: Path, all_versions: bool, width: int | None) -> None:
    """List the bots `arena submit` installed: the latest version of each (what a tournament with
    bots_dir plays), or every version with --all."""
    try:
        versions = installed_versions(bots_dir)
    except BotsDirError as error:
        raise InputError(str(error)) from None
    chosen = [bot for found in versions.values() for bot in (found if all_versions else found[-1:])]
    console = output_console(width)
    console.print(installed_table(chosen, title=f"Bots in {bots_dir}", width=console.width))


INSTALLED_COLUMNS = (
    Column("bot", justify="left"),
    Column("author", keep=20, justify="left"),
    Column("submitted (UTC)", keep=30, justify="left"),
    Column("checked", keep=40, justify="left"),
    Column("folder", keep=50, justify="left"),
)


def installed_table(bots: list[InstalledBot], *, title: str, width: int | None = None) -> Table:
    """The installed versions as a table fitted to ``width`` (pure: data in, table out)."""
    rows = [
        [
            f"{bot.manifest.name}@{bot.spec.version}",
            bot.manifest.author,
            bot.submitted_at.replace("+00:00", ""),
            "yes" if bot.checked else "no",
            str(bot.folder),
        ]
        for bot in bots
    ]
    return fitted_table(INSTALLED_COLUMNS, rows, width=width, title=title)
