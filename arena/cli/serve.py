"""``arena serve``: the web pages of a finished or running tournament. Parse, call, print."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import click
import trio

from arena.stats.moments import CONFIDENCE
from arena.tournament.config import ConfigError, load_config
from arena.tournament.pool import unwrapped
from arena.tournament.store import ResultStore, StoreError

DEFAULT_PORT = 8018
WEB_EXTRA_MISSING = "the web pages need the web extra: install with pip install -e '.[web]'"


class InputError(click.ClickException):
    exit_code = 2


def web_server() -> Any:
    """The server module, or one line saying how to install it."""
    try:
        from arena.web import server
    except ImportError:
        raise click.ClickException(WEB_EXTRA_MISSING) from None
    return server


def say_url(url: str, organiser: bool = False, *, with_tournament: bool = False) -> None:
    note = " (organiser: every hand of a running match is shown)" if organiser else ""
    until = (
        "the pages close when the tournament ends; arena serve RESULTS serves them afterwards"
        if with_tournament
        else "Ctrl-C stops serving"
    )
    click.echo(f"watch it at {url}{note}  (read-only; {until})")


@click.command("serve")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on (0: any free one).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--organiser",
    is_flag=True,
    help="Allow every hand of a match still being played to be shown (keep it off for spectators).",
)
def serve_command(results: str, port: int, host: str, organiser: bool) -> None:
    """Serve the web pages of RESULTS: a results file, or a tournament file whose results to show.

    It follows a tournament still running (live standings, matches being played) and serves a
    finished one; it never writes to the file."""
    server = web_server()
    from arena.web.source import TournamentSource

    path = Path(results)
    records_dir = None
    confidence = CONFIDENCE  # the standings' (as `arena standings` shows them)
    if path.suffix == ".toml":
        try:
            config = load_config(path)
        except ConfigError as exc:
            raise InputError(str(exc)) from None
        path = config.results
        records_dir = config.records_dir if config.records else None
        if config.stop is not None:
            confidence = config.stop.confidence
    try:
        store = ResultStore.open_read(path)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    try:
        source = TournamentSource(
            path,
            name=store.name(),
            definition=store.definition(),
            records_dir=records_dir,
            organiser=organiser,
            confidence=confidence,
        )

        async def run() -> None:
            source.poll_file(store)
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
                async with trio.open_nursery() as nursery:
                    url = await nursery.start(server.serve_tournament, source, host, port)
                    say_url(url, organiser)
                    nursery.start_soon(source.watch, store)
                    nursery.start_soon(source.refresh)  # the exact standings, before anyone asks
                    async for _ in signals:
                        nursery.cancel_scope.cancel()
                        break

        try:
            with unwrapped(OSError):
                trio.run(run)
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        store.close()
