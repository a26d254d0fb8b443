"""``arena export``: a results file as one JSON-lines file (arena/tournament/export.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from arena.cli.common import InputError
from arena.tournament.export import ExportError, export_matches
from arena.tournament.store import ResultStore, StoreError


@click.command("export")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the JSON lines to this file [standard output].",
)
@click.option(
    "--without-seeds",
    is_flag=True,
    help="Leave the match seeds out (needed while a tournament's secret seed is unrevealed).",
)
def export_command(results: str, output: str | None, without_seeds: bool) -> None:
    """One JSON line per match of a RESULTS file: game, options, seed, seats, actions, scores,
    placings and faults (SPEC.md 10.5), for analysis outside the arena."""
    target = Path(output) if output else None
    try:
        with ResultStore.open_read(Path(results)) as store:
            if target is None:
                summary = export_matches(store, sys.stdout.buffer, without_seeds=without_seeds)
                sys.stdout.buffer.flush()
            else:
                partial = target.with_name(target.name + ".partial")
                with open(partial, "wb") as out:
                    summary = export_matches(store, out, without_seeds=without_seeds)
                partial.replace(target)  # whole or not at all
    except (StoreError, ExportError) as exc:
        raise InputError(str(exc)) from None
    except BrokenPipeError:
        raise  # (the reader went away: arena's group stops quietly)
    except OSError as exc:
        raise InputError(f"{output}: cannot write it: {exc.strerror or exc}") from None
    notes = [f"exported {summary.matches} matches" + (f" to {target}" if target else "")]
    if summary.without_record:
        notes.append(f"{summary.without_record} without actions (no record kept)")
    if summary.seeds_left_out:
        notes.append("seeds left out: the tournament's secret seed is not revealed yet")
    click.echo("; ".join(notes), err=True)
