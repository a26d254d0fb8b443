"""``arena standings``: the standings of a results file, read from its cached fold.

Imports only what reading and printing standings needs (no trio, no referee, no runner; rich only
to draw tables, not for --json or --csv): the ``arena`` group imports this module alone for
``arena standings`` (arena/cli/__init__.py)."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena.cli.common import InputError, width_option
from arena.referee.clock import TimeControl
from arena.stats.moments import CONFIDENCE
from arena.tournament.latency import REPLAY_SUSPECT, LatencyReport, latency_line
from arena.tournament.standings import (
    OVERALL,
    BotReport,
    bot_report,
    bot_report_as_data,
    load_fold,
    standings_as_data,
)
from arena.tournament.store import ResultStore, StoreError

if TYPE_CHECKING:
    from rich.console import Console

    from arena.tournament.config import TournamentConfig


def stop_confidence(config: TournamentConfig) -> float:
    return config.stop.confidence if config.stop is not None else CONFIDENCE


def print_latency(console: Console, report: LatencyReport, tournament: str | None = None) -> None:
    """The latency line, the warning, and (with suspect matches) the command that replays only
    them: ``arena tournament TOURNAMENT --replay suspect`` (``tournament``: its arguments)."""
    console.print(latency_line(report), highlight=False, markup=False, soft_wrap=True)
    if report.warning:
        console.print(report.warning, style="yellow", highlight=False, markup=False, soft_wrap=True)
    if report.suspect:
        console.print(
            "replay only those, keeping the rest: arena tournament "
            f"{tournament or 'TOURNAMENT_FILE'} {REPLAY_SUSPECT}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


STANDINGS_CSV_COLUMNS = [  # the first fourteen as before intervals came; new ones after
    "table",
    "rank",
    "bot",
    "played",
    "wins",
    "mean_placing",
    "mean_score",
    "duplicate",
    "mu",
    "sigma",
    "ordinal",
    "faults",
    "forfeits",
    "median_ms",
    "shared_rank",
    "tied",
    "deals",
    "placing_low",
    "placing_high",
    "score_low",
    "score_high",
    "duplicate_low",
    "duplicate_high",
    "rating_low",
    "rating_high",
    "p_better_than_next",
]
# on the overall table's rows (empty on the others): the referee's latency over every match
LATENCY_CSV = [
    "referee_matches",
    "referee_p50_ms",
    "referee_p99_ms",
    "referee_max_ms",
    "max_load_per_core",
    "margin_ms",
    "strained",
    "suspect",
]
PAIRS_CSV_COLUMNS = ["table", "row", "column", "metric", "deals", "mean", "low", "high", "p_better"]


def _latency_csv(report: LatencyReport) -> dict:
    return {
        "referee_matches": report.matches,
        "referee_p50_ms": report.p50_ms,
        "referee_p99_ms": report.p99_ms,
        "referee_max_ms": report.max_ms,
        "max_load_per_core": report.max_load_per_core,
        "margin_ms": report.margin_ms,
        "strained": len(report.strained),
        "suspect": len(report.suspect),
    }


def _csv_row(scope: str, row: dict) -> dict:
    flat = {key: value for key, value in row.items() if not key.endswith("_interval")}
    for name in ("placing", "score", "duplicate", "rating"):
        interval = row.get(f"{name}_interval") or {}
        flat[f"{name}_low"], flat[f"{name}_high"] = interval.get("low"), interval.get("high")
    faults = " ".join(f"{kind}:{n}" for kind, n in row["faults"].items())
    return {**flat, "table": scope, "faults": faults}


@click.command("standings")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="JSON instead of tables.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV (one row per bot and table).")
@click.option(
    "--pairs/--no-pairs",
    default=None,
    help="The pairwise tables after each table [shown]; with --csv, --pairs gives only they, "
    "one row per ordered pair.",
)
@click.option(
    "--bot",
    "bot",
    metavar="NAME",
    help="One bot's report: results per game, faults with reasons, decision times, worst matches "
    "(NAME or a prefix that names one bot: rusty for rusty@2.0.0+9654f83f8dd).",
)
@click.option(
    "--game",
    "game",
    metavar="LABEL",
    help="With --bot: that game's results, faults, times and worst matches only "
    "(a label of the tournament's games, or a prefix that names one).",
)
@click.option(
    "--worst",
    type=click.IntRange(1),
    default=10,
    show_default=True,
    help="With --bot: how many of its worst matches to list.",
)
@width_option
def standings_command(
    file: str,
    as_json: bool,
    as_csv: bool,
    pairs: bool | None,
    bot: str | None,
    game: str | None,
    worst: int,
    width: int | None,
) -> None:
    """Show the standings of a results FILE (or of a tournament file's results), or with --bot
    one bot's report."""
    if as_json and as_csv:
        raise InputError("give --json or --csv, not both")
    if game is not None and bot is None:
        raise InputError("--game is for one bot's report: give --bot NAME with it")
    if bot is not None and as_csv:
        raise InputError("--csv is for the standings; give --bot NAME with --json or alone")
    path = Path(file)
    confidence = CONFIDENCE
    tournament = None
    if path.suffix == ".toml":
        tournament = shlex.quote(file)
        # only for a tournament file: the config module brings the games and the bots' folders
        from arena.tournament.config import ConfigError, load_config

        try:
            config = load_config(path)
        except ConfigError as exc:
            raise InputError(str(exc)) from None
        path, confidence = config.results, stop_confidence(config)
    refolding = _RefoldShown()
    try:
        with ResultStore.open_read(path) as store, refolding:
            definition = store.definition()
            fold, _seq = load_fold(  # the cached fold and the rows saved since, latency included
                store,
                [b["name"] for b in definition.get("bots", [])],
                [g["label"] for g in definition.get("games", [])],
                seating=definition.get("seating", "duplicate"),
                confidence=confidence,
                margin_ms=definition.get("time", {}).get("margin_ms", TimeControl().margin_ms),
                on_refold=refolding.start,
            )
            standings = fold.standings()
            if bot is not None:
                bot = named("--bot", bot, [row.bot for row in standings.tables[OVERALL]], path)
                if game is not None:
                    game = named("--game", game, list(standings.games), path)
                report = bot_report(standings, store.matches_with(bot), bot, worst=worst, game=game)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    if bot is not None:
        if as_json:
            click.echo(json.dumps(bot_report_as_data(report), indent=2))
        else:
            from arena.render.terminal import bot_report_view, output_console, replay_lines

            console = output_console(width)
            console.print(bot_report_view(report, console.width))
            lines = replay_lines(report, _logs_hint(report, bot))
            if lines:
                console.print("Replay them (each command on its line):", style="bold")
            for line in lines:  # whole, however wide: a command to copy
                console.print(line, soft_wrap=True, highlight=False, markup=False)
        return
    latency = fold.latency()
    data = standings_as_data(standings)
    # over every completed match: beside the overall table (consumers iterate the tables)
    data[OVERALL]["referee_latency"] = latency.as_data()
    if definition.get("gauntlet"):  # (the field relative to them: the pairs with them)
        data[OVERALL]["gauntlet"] = list(definition["gauntlet"])
    if as_json:
        click.echo(json.dumps(data, indent=2))
    elif as_csv:
        out = io.StringIO()
        columns = PAIRS_CSV_COLUMNS if pairs is True else STANDINGS_CSV_COLUMNS + LATENCY_CSV
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for scope, table in data.items():
            if pairs is True:
                for pair in table["pairs"]:
                    writer.writerow({**pair, "table": scope})
            else:
                extra = _latency_csv(latency) if scope == OVERALL else {}
                for row in table["rows"]:
                    writer.writerow({**_csv_row(scope, row), **extra})
        click.echo(out.getvalue(), nl=False)
    else:
        from arena.render.terminal import output_console, standings_tables  # rich: tables only

        console = output_console(width)
        console.print(standings_tables(standings, console.width, with_pairs=pairs is not False))
        if definition.get("gauntlet"):
            from arena.render.terminal import gauntlet_tables

            console.print(gauntlet_tables(standings, definition["gauntlet"], console.width))
        print_latency(console, latency, tournament)


class _RefoldShown:
    """The refold's display (arena.render.terminal.RefoldDisplay), made only when a refold
    starts: reading a cached fold never imports rich."""

    def __init__(self) -> None:
        self.display: Any = None

    def start(self, why: str, total: int) -> Callable[[int], None]:
        from arena.render.terminal import RefoldDisplay

        self.display = RefoldDisplay()
        return self.display(why, total)

    def __enter__(self) -> _RefoldShown:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.display is not None:
            self.display.close()


def named(option: str, given: str, known: list[str], path: Path) -> str:
    """The one of ``known`` that ``given`` names: itself, or the only one it begins (a bot's
    name without its version); InputError listing the candidates otherwise."""
    if given in known:
        return given
    found = [name for name in known if name.startswith(given)]
    if len(found) == 1:
        return found[0]
    if found:
        found.sort()
        raise InputError(f"{option} {given}: names {len(found)} in {path}: {', '.join(found)}")
    raise InputError(f"{option} {given}: none such in {path}; expected one of {', '.join(known)}")


def _logs_hint(report: BotReport, bot: str) -> str:
    """Where the bot's stderr logs are: ``<output>/logs`` beside the ``records`` folder."""
    record = next((m.record for m in report.worst if m.record), None)
    if record is None:
        return ""
    logs = record.path.parent.parent / "logs"
    return shlex.quote(str(logs)) + f"/{_safe_log_name(bot)}-*.stderr.log"


def _safe_log_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "bot"
