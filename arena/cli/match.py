"""`arena match` (play one match between bot programs) and `arena replay` (re-check a record).

Parse, call, print: the rules live in arena.games, the playing in arena.referee.match.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import statistics
import tempfile
from pathlib import Path
from typing import Any

import click
import trio
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from arena.games import GameSpec, OptionError, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.record import ReplayError, replay_record
from arena.referee.results import MatchResult, match_result_dict
from arena.render.replay import render_replay

INTERPRETERS = {
    "python",
    "python3",
    "node",
    "nodejs",
    "java",
    "ruby",
    "perl",
    "sh",
    "bash",
    "deno",
    "bun",
    "pypy3",
    "env",
}


class StartupFailed(click.ClickException):
    """A bot given on the command line could not start: one line, exit status 2."""

    exit_code = 2


# -- arena match ------------------------------------------------------------------------------------


def parse_bot_command(text: str) -> tuple[str, ...]:
    """A --bot value split like a shell would; the program must exist (UsageError otherwise)."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as error:
        raise click.UsageError(f"--bot {text!r}: {error}") from None
    if not argv:
        raise click.UsageError("--bot '': expected a command that starts a bot")
    program = argv[0]
    if "/" in program:
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise click.UsageError(f"--bot {text!r}: no executable program at {program}")
    elif shutil.which(program) is None:
        raise click.UsageError(f"--bot {text!r}: program {program!r} not found on PATH")
    for arg in argv[1:2]:
        if (
            Path(program).name.split(".")[0] in INTERPRETERS
            and arg.endswith((".py", ".js", ".mjs", ".rb", ".pl", ".sh", ".jar"))
            and not os.path.exists(arg)
        ):
            raise click.UsageError(f"--bot {text!r}: no such file {arg}")
    return argv


def bot_name(argv: tuple[str, ...], taken: set[str]) -> str:
    """A readable, unique name: the script or program name without its extension."""
    words = [a for a in argv if not a.startswith("-")]
    chosen = next((w for w in words if Path(w).name.split(".")[0] not in INTERPRETERS), argv[0])
    base = Path(chosen).stem or "bot"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def parse_options(game: GameSpec, given: tuple[str, ...]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"--option {item!r}: expected key=value")
        options[key.strip()] = value
    try:
        return game.resolve_options(options)
    except OptionError as error:
        raise click.UsageError(str(error)) from None


def _leaves(group: BaseExceptionGroup):
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            yield from _leaves(error)
        else:
            yield error


class Interrupted(Exception):
    """SIGTERM or SIGHUP arrived: the match was stopped and every bot process ended."""


async def play_one_match(
    game: GameSpec,
    specs: list[BotSpec],
    *,
    seed: int,
    options: dict,
    control: TimeControl,
    max_faults: int,
    record: Path | None,
    log_dir: Path,
) -> MatchResult:
    """Start the bots, play, close them: also on Ctrl-C (KeyboardInterrupt) or SIGTERM/SIGHUP."""
    bots: list[BotProcess] = []
    result: MatchResult | None = None

    async def stop_on_signal(scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
            async for _ in signals:
                scope.cancel()
                return

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop_on_signal, nursery.cancel_scope)
            for spec in specs:
                bots.append(await BotProcess.start(spec, time_control=control, log_dir=log_dir))
            result = await run_match(
                game,
                bots,
                seed=seed,
                options=options,
                match_id=f"match-{seed}",
                time_control=control,
                max_faults=max_faults,
                record_path=record,
            )
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The nursery wraps what the match raised (a startup error, Ctrl-C): raise it plainly.
        leaves = list(_leaves(group))
        if len(leaves) == 1:
            raise leaves[0] from None
        raise
    finally:
        for bot in bots:
            await bot.close()
    if result is None:
        raise Interrupted()
    return result


def result_table(result: MatchResult) -> Table:
    table = Table(title=f"{result.game} · seed {result.seed}")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("seat", "right"),
        ("bot", "left"),
        ("score", "right"),
        ("place", "right"),
        ("faults", "right"),
        ("median ms", "right"),
        ("note", "left"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for seat, name in enumerate(result.bots):
        faults = sum(1 for f in result.faults if f.seat == seat)
        times = result.decision_ms[seat]
        median = f"{statistics.median(times):.2f}" if times else "-"
        note = "forfeited" if seat in result.forfeited else ""
        if result.teams is not None:
            note = (f"team {result.teams[seat]} " + note).strip()
        table.add_row(
            str(seat),
            name,
            str(result.scores[seat]),
            str(result.placings[seat]),
            str(faults),
            median,
            note,
        )
    return table


@click.command("match")
@click.argument("game_name", metavar="GAME")
@click.option(
    "--bot",
    "bot_commands",
    multiple=True,
    required=True,
    metavar="CMD",
    help="A bot's command line (split like a shell). One per seat, or one for all seats.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, (1 << 64) - 1),
    default=None,
    help="Match seed (default: random, printed).",
)
@click.option(
    "--players",
    type=int,
    default=None,
    help="Number of seats (default: the number of --bot given; with a single --bot, "
    "the game's default player count, shown by `arena games`).",
)
@click.option("--option", "option_items", multiple=True, metavar="KEY=VALUE", help="A game option.")
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the match record (JSONL) here.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--decision-ms", type=click.IntRange(1), default=1000, show_default=True)
@click.option(
    "--bank-ms",
    type=click.IntRange(1),
    default=None,
    help="Per-match time bank (>= 1; default: no bank).",
)
@click.option("--increment-ms", type=click.IntRange(0), default=0, show_default=True)
@click.option("--margin-ms", type=click.IntRange(0), default=50, show_default=True)
@click.option("--startup-ms", type=click.IntRange(1), default=10000, show_default=True)
@click.option("--max-faults", type=click.IntRange(1), default=3, show_default=True)
@click.option("--memory-mb", type=click.IntRange(16), default=None, help="Per-bot memory limit.")
@click.option("--cpu-seconds", type=click.IntRange(1), default=None, help="Per-bot CPU limit.")
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap"]),
    default=None,
    help="Run every bot in a bubblewrap sandbox.",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where bots' stderr logs go (default: a new temporary directory).",
)
def match_command(
    game_name: str,
    bot_commands: tuple[str, ...],
    seed: int | None,
    players: int | None,
    option_items: tuple[str, ...],
    record: Path | None,
    as_json: bool,
    decision_ms: int,
    bank_ms: int | None,
    increment_ms: int,
    margin_ms: int,
    startup_ms: int,
    max_faults: int,
    memory_mb: int | None,
    cpu_seconds: int | None,
    sandbox: str | None,
    log_dir: Path | None,
) -> None:
    """Play one match of GAME between bot programs and print the result."""
    try:
        game = find_game(game_name)
    except OptionError as error:
        raise click.UsageError(str(error)) from None
    argvs = [parse_bot_command(text) for text in bot_commands]
    if players is None:
        players = len(argvs) if len(argvs) > 1 else game.default_players
    try:
        game.check_players(players)
    except OptionError as error:
        raise click.UsageError(str(error)) from None
    if len(argvs) == 1:
        argvs = argvs * players
    elif len(argvs) != players:
        raise click.UsageError(
            f"{len(argvs)} --bot given for {players} players: give one per seat "
            "or a single one for every seat"
        )
    options = parse_options(game, option_items)
    if seed is None:
        seed = secrets.randbits(63)
    if record is not None and not record.parent.is_dir():
        raise click.UsageError(f"--record {record}: directory {record.parent} does not exist")
    control = TimeControl(
        decision_ms=decision_ms,
        bank_ms=bank_ms,
        increment_ms=increment_ms,
        margin_ms=margin_ms,
        startup_ms=startup_ms,
    )
    taken: set[str] = set()
    # Bots run in the current directory, so relative paths on the command line work.
    specs = [
        BotSpec(
            bot_name(argv, taken),
            argv,
            cwd=os.getcwd(),
            memory_mb=memory_mb,
            cpu_seconds=cpu_seconds,
            sandbox=sandbox,
        )
        for argv in argvs
    ]
    logs = log_dir or Path(tempfile.mkdtemp(prefix="arena-logs-"))
    try:
        result = _play(game, specs, seed, options, control, max_faults, record, logs)
    finally:
        if log_dir is None:
            remove_if_empty(logs)  # quiet bots leave no logs: no empty folder either
    if as_json:
        click.echo(json.dumps(match_result_dict(result), indent=2))
        return
    console = Console()
    console.print(result_table(result))
    for fault in result.faults:
        console.print(Text(f"fault ({fault.kind}): {fault.message}", style="yellow"))
    footer = f"{result.duration_s:.2f} s; " + (
        f"bot stderr logs in {logs}" if logs.is_dir() else "no bot wrote to stderr"
    )
    if record is not None:
        footer += f"; record {record}"
    console.print(footer, highlight=False)


def remove_if_empty(folder: Path) -> None:
    """Remove a log folder the run made if nothing was written into it."""
    try:
        folder.rmdir()
    except OSError:  # not empty (or already gone): keep it
        pass


def _play(
    game: GameSpec,
    specs: list[BotSpec],
    seed: int,
    options: dict[str, Any],
    control: TimeControl,
    max_faults: int,
    record: Path | None,
    logs: Path,
) -> MatchResult:
    try:
        return trio.run(
            lambda: play_one_match(
                game,
                specs,
                seed=seed,
                options=options,
                control=control,
                max_faults=max_faults,
                record=record,
                log_dir=logs,
            )
        )
    except BotStartupError as error:
        raise StartupFailed(str(error)) from None
    except (KeyboardInterrupt, Interrupted):
        raise click.ClickException(
            "interrupted: the match was stopped and every bot process ended"
        ) from None


# -- arena replay -------------------------------------------------------------------------------------


@click.command("replay")
@click.argument("record", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--seat", type=int, default=None, help="Show the match as this seat saw it.")
@click.option(
    "--check", "check_only", is_flag=True, help="Only re-derive the record; print one line."
)
def replay_command(record: Path, seat: int | None, check_only: bool) -> None:
    """Re-derive a match RECORD from its header and the rules, line by line (SPEC.md 8), and
    show it trick by trick. Exits 1 at the first line that departs, naming it."""
    try:
        replay = replay_record(record)
    except ReplayError as error:
        raise click.ClickException(f"replay failed: {error}") from None
    players = replay.header["players"]
    if seat is not None and not 0 <= seat < players:
        raise click.UsageError(f"--seat {seat}: expected 0..{players - 1}")
    console = Console()
    if not check_only:
        console.print(render_replay(replay, seat))
    console.print(
        Text(
            f"record checked: every line agrees with the rules "
            f"({len(replay.state.actions)} actions, {len(replay.faults)} faults)",
            style="bold green",
        )
    )
