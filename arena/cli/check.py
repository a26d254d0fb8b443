"""``arena check -- CMD ...``: run a bot through every check and print a scorecard."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from arena.bots.check import FAILED, GROUPS, PASSED, CheckResult, CheckSettings, check_bot
from arena.cli.common import width_option
from arena.games import GAMES, OptionError, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.confine import missing_line
from arena.referee.lines import printable
from arena.render.terminal import PIPED_WIDTH, output_console

STATUS_STYLE = {PASSED: "green", FAILED: "bold red"}


def scorecard(results: list[CheckResult], bot: str, *, expand: bool = True) -> Table:
    """The results as a table (pure: data in, table out); ``expand``: as wide as the screen."""
    table = Table(title=f"arena check: {bot}", show_lines=True, expand=expand)
    table.add_column("", no_wrap=True)
    table.add_column("check", ratio=2)
    table.add_column("details", ratio=5)
    for result in results:
        lines = []
        # (printable: what the bot sent or wrote to stderr reaches the terminal escaped)
        if result.sent:
            lines.append(f"sent: {escape(printable(result.sent))}")
        if result.received:
            lines.append(f"got:  {escape(printable(result.received))}")
        if result.reason:
            lines.append(f"[bold]why:[/bold]  {escape(printable(result.reason))}")
        if result.hint:
            lines.append(f"[italic]hint:[/italic] {escape(result.hint)}")
        style = STATUS_STYLE.get(result.status, "dim")
        table.add_row(f"[{style}]{result.status}[/{style}]", escape(result.name), "\n".join(lines))
    return table


def summary(results: list[CheckResult]) -> str:
    passed = sum(r.status == PASSED for r in results)
    failed = sum(r.status == FAILED for r in results)
    skipped = len(results) - passed - failed
    text = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
    text += ": ready for a tournament." if not failed else ": see the hints above."
    cut = sum(r.cut_short for r in results)
    if cut:
        text += (
            f"\n{cut} {'match was' if cut == 1 else 'matches were'} cut short after the decision "
            'under test (match_end reason "cut short"): their scores and placings are no result.'
        )
    return text


def default_name(command: tuple[str, ...]) -> str:
    """The bot's script if the command names one (python3 my_bot.py -> my_bot), else the program."""
    for arg in command[1:]:
        if not arg.startswith("-") and Path(arg).is_file():
            return Path(arg).stem
    return Path(command[0]).name


def _parse_env(pairs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    env = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r}: expected KEY=VALUE", param_hint="--env")
        env.append((key, value))
    return tuple(env)


@click.command("check", context_settings={"ignore_unknown_options": False})
@click.argument(
    "command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARG...]"
)
@click.option(
    "--name", default="", help="The bot's name in messages (default: the program's name)."
)
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Working directory for the bot (default: the current directory).",
)
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Extra environment for the bot (repeatable).",
)
@click.option(
    "--game",
    "games",
    multiple=True,
    metavar="GAME",
    help="Check only this game (repeatable; id or alias). Default: every game.",
)
@click.option(
    "--only",
    multiple=True,
    type=click.Choice(GROUPS),
    metavar="GROUP",
    help="Run only these checks (repeatable): " + ", ".join(GROUPS) + ". The handshake "
    "always runs.",
)
@click.option(
    "--decision-ms",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Time for each decision.",
)
@click.option(
    "--startup-ms",
    type=click.IntRange(min=1),
    default=10000,
    show_default=True,
    help="Time to answer hello.",
)
@click.option(
    "--low-time-ms",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Time left in the 'time running low' check.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Seed for the deals and the positions checked.",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the bot's stderr logs and match records go (default: a temporary directory).",
)
@width_option
def check_command(
    command: tuple[str, ...],
    name: str,
    cwd: str | None,
    env_pairs: tuple[str, ...],
    games: tuple[str, ...],
    only: tuple[str, ...],
    decision_ms: int,
    startup_ms: int,
    low_time_ms: int,
    seed: int,
    log_dir: str | None,
    width: int | None,
) -> None:
    """Run a bot through every decision of every game and the awkward cases; print a scorecard.

    Put the bot's command after `--`, e.g. `arena check -- python3 my_bot.py`. Exit status 0 when
    every check passed, 1 when any failed.
    """
    try:
        game_ids = tuple(dict.fromkeys(find_game(g).id for g in games))
    except OptionError as error:
        raise click.BadParameter(str(error), param_hint="--game") from None
    spec = BotSpec(
        name=name or default_name(command),
        argv=tuple(command),
        cwd=cwd or os.getcwd(),
        env=_parse_env(env_pairs),
    )
    logs = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="arena-check-"))
    settings = CheckSettings(
        decision_ms=decision_ms,
        startup_ms=startup_ms,
        low_time_ms=low_time_ms,
        seed=seed,
        games=game_ids,
        only=only,
        log_dir=logs,
    )
    console = output_console(width)
    console.print(
        f"Checking [bold]{escape(shlex.join(command))}[/bold] on "
        f"{', '.join(game_ids or tuple(GAMES))} (logs: {escape(str(logs))})"
    )

    note = missing_line([spec])  # said once, at start
    if note:
        console.print(note, highlight=False, markup=False, soft_wrap=True)

    def progress(result: CheckResult) -> None:
        style = STATUS_STYLE.get(result.status, "dim")
        console.print(f"  [{style}]{result.status}[/{style}] {escape(result.name)}")

    try:
        results = check_bot(spec, settings, report=progress)
    except BaseException:
        if not log_dir:
            _remove_if_empty(logs)
        raise
    console.print(scorecard(results, spec.name, expand=console.width < PIPED_WIDTH))
    console.print(summary(results))
    if any(r.status == FAILED for r in results):
        console.print(f"The bot's standard error and every match record: {escape(str(logs))}")
        raise SystemExit(1)
    if not log_dir:  # every check passed: the temporary logs and records tell nothing more
        shutil.rmtree(logs, ignore_errors=True)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:  # something was written: keep it
        pass
