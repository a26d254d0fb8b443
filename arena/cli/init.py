"""`arena init [DIR]`: write the sample bots and the demo tournament file into a folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from arena.bots.samples import InitError, write_demo


@click.command("init")
@click.argument("folder", required=False, default=".", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite sample files already there.")
def init_command(folder: str, force: bool) -> None:
    """Write the sample bots and a demo tournament file into FOLDER (default: here)."""
    try:
        demo = write_demo(Path(folder), force=force)
    except InitError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {Path(folder) / 'sample_bots'}/ and {demo}")
    click.echo(f"run the demo:  arena tournament {demo}")
    if shutil.which("node") is None:
        click.echo(
            "note: Node.js (node) is not installed: the demo's JavaScript bot cannot start; "
            "install Node.js, or delete its [[bots]] entry from the file"
        )
