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
from arena.league.client import UploadError, is_league_url, upload
from arena.render.terminal import Column, fitted_table, output_console

DEFAULT_BOTS_DIR = "bots"


@click.command("submit")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--to",
    "destination",
    type=click.Path(file_okay=False),
    metavar="BOTS_DIR|URL",
    default=DEFAULT_BOTS_DIR,
    show_default=True,
    help="The organiser's bots directory (the bot goes to BOTS_DIR/<name>/<hash>/), or a "
    "league's address (https://HOST/): the folder is uploaded there with --token.",
)
@click.option(
    "--token",
    envvar="ARENA_LEAGUE_TOKEN",
    default=None,
    help="Your author's token for a league (--to URL); or set $ARENA_LEAGUE_TOKEN, which other "
    "users of this machine cannot read from the process list.",
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
def submit_command(
    folder: Path, destination: str, token: str | None, skip_check: bool, sandbox: str | None
) -> None:
    """Validate FOLDER/bot.toml, build the bot in a copy, run arena check on it, and install it
    as a new version. Nothing is installed unless every step passes. With --to URL the league
    there does all of that (in its sandbox) and answers with its build log and check report."""
    if is_league_url(destination):
        submit_to_league(folder, destination, token, skip_check=skip_check, sandbox=sandbox)
        return
    if token is not None:
        raise click.UsageError("--token goes with --to URL (a league's address)")
    bots_dir = Path(destination)
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


def submit_to_league(
    folder: Path, url: str, token: str | None, *, skip_check: bool, sandbox: str | None
) -> None:
    """Upload FOLDER to the league at ``url``; exit 1 when it refuses the version."""
    if token is None:
        raise click.UsageError(
            "--to URL needs --token (or $ARENA_LEAGUE_TOKEN): your author's token"
        )
    if skip_check or sandbox:
        raise click.UsageError(
            "--skip-check and --sandbox are the league's to decide: leave them out with --to URL"
        )
    click.echo(f"uploading {folder} to {url}; the league builds and checks it ...", err=True)
    try:
        uploaded = upload(folder, url, token)
    except ManifestError as error:
        raise click.ClickException("; ".join(error.problems) + "; nothing uploaded") from None
    except (BotFolderError, UploadError) as error:
        raise click.ClickException(str(error)) from None
    version = uploaded.version
    if version.get("log"):
        click.echo(version["log"])
    if not uploaded.accepted:
        raise click.ClickException(f"{version.get('label')}: refused by the league (the log above)")
    click.echo(f"{version.get('label')} is {version.get('status')} in the league at {url}")


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
