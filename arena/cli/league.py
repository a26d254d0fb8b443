"""``arena league``: serve a league, add authors, disqualify a version. Parse, call, print."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import click

from arena.cli.common import InputError
from arena.cli.serve import DEFAULT_PORT, check_web_extra, organiser_secret
from arena.league.config import HOUSE_AUTHOR, NAME_RE_TEXT, LeagueConfig, load_league
from arena.league.store import LeagueStore, LeagueStoreError
from arena.tournament.config import ConfigError

DEFAULT_LEAGUE = "league.toml"
league_option = click.option(
    "--league",
    "league_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_LEAGUE,
    show_default=True,
    metavar="LEAGUE.toml",
    help="The league file.",
)


def _config(path: Path) -> LeagueConfig:
    try:
        return load_league(path)
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def _store(config: LeagueConfig, *, serving: bool = False) -> LeagueStore:
    try:
        return LeagueStore.open(config.store_path, name=config.name, serving=serving)
    except LeagueStoreError as exc:
        raise InputError(str(exc)) from None


@click.group("league")
def league_command() -> None:
    """A league: authors upload bot versions, the arena plays them for ever (SPEC.md 12)."""


@league_command.command("serve")
@click.argument("league_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests addressed to this host name (DNS rebinding guard).",
)
def serve_command(league_file: Path, port: int, host: str, allowed_hosts: tuple[str, ...]) -> None:
    """Play the league of LEAGUE_FILE for ever and serve its pages, API and uploads.

    Stopped (Ctrl-C, or even killed) and started again, it plays on where it was: every stored
    match is kept and none is played twice."""
    check_web_extra()
    config = _config(league_file)
    from arena.league.league import League
    from arena.league.web import serve_league
    from arena.referee.confine import bwrap_problem
    from arena.tournament.errors import TournamentError

    if config.sandbox == "bwrap" and (problem := bwrap_problem()) is not None:
        raise InputError(f'{league_file}: sandbox = "bwrap" but {problem}')
    secret, made = organiser_secret()
    store = _store(config, serving=True)
    try:
        league = League(config, store)
        league.register_house_bots()

        def ready(url: str) -> None:
            click.echo(
                f"league {config.name} at {url}  (Ctrl-C stops it; started again, it resumes)"
            )
            shown = secret if made else "$ARENA_WEB_SECRET"
            click.echo(f"organiser token: {shown}  (disqualify versions, see every log)")

        try:
            serve_league(
                league,
                host,
                port,
                organiser_token=secret,
                allowed_hosts=allowed_hosts,
                on_ready=ready,
            )
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        except (TournamentError, LeagueStoreError) as exc:
            raise click.ClickException(f"{exc}; the stored matches are kept") from None
    finally:
        store.close()


@league_command.group("author")
def author_command() -> None:
    """The league's authors."""


@author_command.command("add")
@click.argument("name")
@league_option
def author_add_command(name: str, league_file: Path) -> None:
    """Add author NAME and print their token (shown once: only its hash is kept)."""
    if not re.match(NAME_RE_TEXT, name) or name == HOUSE_AUTHOR:
        raise InputError(
            f"author {name!r}: expected 1-40 letters, digits, _ or - (starting with a letter "
            f"or digit), not {HOUSE_AUTHOR!r}"
        )
    config = _config(league_file)
    store = _store(config)
    token = secrets.token_urlsafe(32)
    try:
        store.add_author(name, token)
    except LeagueStoreError as exc:
        raise InputError(str(exc)) from None
    finally:
        store.close()
    click.echo(f"author {name} added; their token (shown once, give it to them privately):")
    click.echo(token)


@author_command.command("list")
@league_option
def author_list_command(league_file: Path) -> None:
    """List the authors and their versions."""
    config = _config(league_file)
    store = _store(config)
    try:
        for author in store.authors():
            versions = store.versions(author_id=author.id)
            shown = ", ".join(f"{v.label} ({v.status})" for v in versions) or "no versions"
            click.echo(f"{author.name}: {shown}")
    finally:
        store.close()


@league_command.command("disqualify")
@click.argument("label")
@click.option("--reason", required=True, help="Why (shown on the version's page).")
@league_option
def disqualify_command(label: str, reason: str, league_file: Path) -> None:
    """Disqualify version LABEL (author.bot.vN): it plays no more; its stored matches stay."""
    config = _config(league_file)
    store = _store(config)
    try:
        found = [v for v in store.versions() if v.label == label]
        if not found:
            raise InputError(
                f"{label}: no such version (expected a label as `arena league author list` shows)"
            )
        store.set_status(found[0].id, "disqualified", f"disqualified by the organiser: {reason}")
    finally:
        store.close()
    click.echo(f"{label} disqualified: it plays no more (its stored matches stay)")
