"""``arena serve``: the web pages of a finished or running tournament. Parse, call, print."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import click

from arena.stats.moments import CONFIDENCE
from arena.tournament.config import ConfigError, TournamentConfig, load_config
from arena.tournament.store import ResultStore, StoreError
from arena.web.access import SECRET_ENV, TOKEN_PARAM, SecretError, check_secret, new_secret

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


def check_web_extra() -> None:
    """One line if the web extra is missing (found without importing it: ``--web`` serves from
    a process of its own, and the tournament's process stays without the server's modules)."""
    if any(importlib.util.find_spec(name) is None for name in ("starlette", "hypercorn")):
        raise click.ClickException(WEB_EXTRA_MISSING)


def organiser_secret() -> tuple[str, bool]:
    """(the organiser's token, whether it was made now): ``$ARENA_WEB_SECRET``, else a new one.
    Taken from the environment, never from an argument (any user can read a command line)."""
    given = os.environ.get(SECRET_ENV)
    if given is None:
        return new_secret(), True
    try:
        return check_secret(given), False
    except SecretError as exc:
        raise InputError(str(exc)) from None


def say_url(
    url: str, secret: str | None = None, made: bool = False, *, with_tournament: bool = False
) -> None:
    until = (
        "the pages close when the tournament ends; arena serve RESULTS serves them afterwards"
        if with_tournament
        else "Ctrl-C stops serving"
    )
    click.echo(f"watch it at {url}  (read-only; {until})")
    if secret is not None:
        token = secret if made else f"${SECRET_ENV}"
        click.echo(
            f"organiser: {url}?{TOKEN_PARAM}={token}  (every hand, even of matches being played: "
            f"keep it to yourself; the bots' owners' tokens: {url}api/tokens with it)"
        )


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
    help=f"Accept the organiser's token (${SECRET_ENV}, else one made now and printed) and the "
    "bots' owners' tokens made from it: the cards of matches being played for those who give "
    "them (SPEC.md 10.7). Without it they are shown to no one until their deal is over.",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests addressed to this host name (e.g. the machine's, with --host "
    "0.0.0.0); others are refused (DNS rebinding).",
)
@click.option(
    "--allow-play",
    is_flag=True,
    help="Let a visitor (with --organiser: the organiser alone) play against the tournament's "
    "bots from its pages (SPEC.md 11); needs the tournament file. The matches are recorded in "
    "played/ beside the results, never in them.",
)
@click.option(
    "--play-limit",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="With --allow-play: the most persons' matches played at once.",
)
def serve_command(
    results: str,
    port: int,
    host: str,
    organiser: bool,
    allowed_hosts: tuple[str, ...],
    allow_play: bool,
    play_limit: int,
) -> None:
    """Serve the web pages of RESULTS: a results file, or a tournament file whose results to show.

    It follows a tournament still running (live standings, matches being played) and serves a
    finished one; it never writes to the file."""
    server = web_server()
    from arena.web.access import Access
    from arena.web.source import TournamentSource

    path = Path(results)
    records_dir = None
    config = None
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
    if allow_play and config is None:
        raise InputError(
            f"--allow-play: expected the tournament file (its bots' commands), not {path}"
        )
    if allow_play and not organiser and not _loopback(host):
        raise InputError(
            f"--allow-play on {host}: anyone reaching it could start bots; add --organiser "
            "(the organiser alone plays) or serve on 127.0.0.1"
        )
    secret, made = organiser_secret() if organiser else (None, False)
    try:
        store = ResultStore.open_read(path)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    try:
        source = TournamentSource.of_file(
            path, store, records_dir=records_dir, confidence=confidence
        )
        server.serve_until_signalled(
            store,
            source,
            host,
            port,
            access=Access(secret, source.bots),
            allowed_hosts=allowed_hosts,
            on_ready=lambda url: say_url(url, secret, made),
            play=None if config is None or not allow_play else person_tables(config, play_limit),
        )
    except server.ServeError as exc:
        raise InputError(str(exc)) from None
    finally:
        store.close()


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def person_tables(config: TournamentConfig, limit: int) -> Any:
    """The persons' matches the pages may start: against this tournament's bots, as it starts
    them (arena.tournament.person)."""
    from functools import partial

    from arena.tournament.person import play_against_tournament
    from arena.web.play import PersonTables

    return PersonTables(
        partial(play_against_tournament, config),
        [g.label for g in config.games],
        [b.name for b in config.bots],
        limit,
    )
