"""``arena submit FOLDER``: parse, call arena.submit, print. Exit 0 installed (or already there),
1 refused (bad manifest, failed build or check; nothing installed), 2 bad command line."""

from __future__ import annotations

from pathlib import Path

import click

from arena.bots_dir import BotsDirError
from arena.manifest import BotFolderError, ManifestError
from arena.submit import SubmitError, arena_check, submit

DEFAULT_BOTS_DIR = "bots"


@click.command("submit")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--to", "bots_dir", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_BOTS_DIR, show_default=True,
              help="The organiser's bots directory; the bot goes to BOTS_DIR/<name>/<hash>/.")
@click.option("--skip-check", is_flag=True,
              help="Install without running arena check (for bots you trust); the build still runs.")
def submit_command(folder: Path, bots_dir: Path, skip_check: bool) -> None:
    """Validate FOLDER/bot.toml, build the bot, check it, and install it as a new version."""
    try:
        outcome = submit(folder, bots_dir, checker=None if skip_check else arena_check,
                         progress=lambda message: click.echo(message, err=True))
    except ManifestError as error:
        if len(error.problems) == 1:
            raise click.ClickException(f"{error.problems[0]}; nothing installed") from None
        heading = f"{error.path}: {len(error.problems)} problems; nothing installed"
        raise click.ClickException("\n  ".join([heading, *error.problems])) from None
    except (BotFolderError, BotsDirError, SubmitError) as error:
        raise click.ClickException(str(error)) from None
    if outcome.already_installed:
        click.echo(f"{outcome.label} is already installed at {outcome.installed.folder} "
                   f"(identical content): nothing to do")
        return
    if outcome.check is not None:
        click.echo(outcome.check.report)
    unchecked = " (unchecked: --skip-check)" if not outcome.installed.checked else ""
    click.echo(f"installed {outcome.label} at {outcome.installed.folder}{unchecked}")
