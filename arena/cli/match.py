"""`arena match` (play one match between bot programs) and `arena replay` (re-check a record).

Parse, call, print: the rules live in arena.games, the playing in arena.referee.match.
"""

from __future__ import annotations

import json
import os
import re
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
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from arena.cli.common import match_options, time_options, width_option
from arena.games import GameSpec, OptionError, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.confine import missing_line
from arena.referee.cores import pinned, spread_cores
from arena.referee.lines import printable
from arena.referee.match import run_match
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.results import MatchResult, match_result_dict
from arena.render.terminal import output_console

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
    # not an option, not an environment setting (`env LEVEL=3 ./bot`)
    words = [a for a in argv if not a.startswith("-") and not re.match(r"^[A-Za-z_]\w*=", a)]
    chosen = next((w for w in words if Path(w).name.split(".")[0] not in INTERPRETERS), argv[0])
    return unique_name(Path(chosen).stem or "bot", taken)


def unique_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3``, ... if taken; the name is added to ``taken``."""
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def parse_env(text: str) -> tuple[tuple[str, str], ...]:
    """An --env value: ``KEY=VALUE`` settings separated by spaces (quoted like a shell)."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise click.UsageError(f"--env {text!r}: {error}") from None
    env = []
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise click.UsageError(
                f"--env {text!r}: found {word!r}; expected KEY=VALUE settings separated by spaces"
            )
        env.append((key, value))
    return tuple(env)


def per_seat(flag: str, values: tuple[str, ...], bots: int, players: int) -> list[str | None]:
    """--name / --env values, one per --bot in order (or one for every seat with a single
    --bot); seats without one get None."""
    if len(values) > max(bots, 1) and not (bots == 1 and len(values) == players):
        raise click.UsageError(
            f"{len(values)} {flag} given for {bots} --bot: give at most one per --bot, in order"
        )
    if bots == 1 and len(values) == 1:
        return [values[0]] * players
    return [*values, *[None] * (players - len(values))]


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
    affinity: bool = True,
) -> MatchResult:
    """Start the bots, play, close them: also on Ctrl-C (KeyboardInterrupt) or SIGTERM/SIGHUP.
    With ``affinity`` the bots start on every core, then this process and they play on one
    (SPEC 7)."""
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
            cores = spread_cores([1])[0] if affinity else None
            with pinned(cores) as on:
                if on:
                    for bot in bots:
                        bot.pin(on)
                result = await run_match(
                    game,
                    bots,
                    seed=seed,
                    options=options,
                    match_id="match",  # (never the seed: bots are sent it, SPEC 3)
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
@match_options()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@time_options
@click.option("--memory-mb", type=click.IntRange(16), default=None, help="Per-bot memory limit.")
@click.option("--cpu-seconds", type=click.IntRange(1), default=None, help="Per-bot CPU limit.")
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "none"]),
    default=None,
    help="bwrap: every bot in a bubblewrap sandbox; none: no seal, for trusted bots that "
    "need the network [sealed as the machine allows] (SPEC.md 7).",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where bots' stderr logs go (default: a new temporary directory).",
)
@click.option(
    "--name",
    "name_items",
    multiple=True,
    metavar="NAME",
    help="The name of each --bot, in order (default: its script's name).",
)
@click.option(
    "--env",
    "env_items",
    multiple=True,
    metavar="'KEY=VALUE ...'",
    help="Environment settings of each --bot, in order, e.g. --env 'LEVEL=3 DEBUG=1'.",
)
@click.option(
    "--affinity/--no-affinity",
    default=True,
    show_default=True,
    help="Run the referee and every bot on one core (SPEC.md 7).",
)
@width_option
def match_command(
    game_name: str,
    bot_commands: tuple[str, ...],
    seed: int | None,
    players: int | None,
    option_items: tuple[str, ...],
    record: Path | None,
    as_json: bool,
    time_control: TimeControl,
    max_faults: int,
    memory_mb: int | None,
    cpu_seconds: int | None,
    sandbox: str | None,
    log_dir: Path | None,
    name_items: tuple[str, ...],
    env_items: tuple[str, ...],
    affinity: bool,
    width: int | None,
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
    names = per_seat("--name", name_items, len(argvs), players)
    envs = [
        parse_env(e) if e is not None else ()
        for e in per_seat("--env", env_items, len(argvs), players)
    ]
    if len(argvs) == 1:
        argvs = argvs * players
    elif len(argvs) != players:
        raise click.UsageError(
            f"{len(argvs)} --bot given for {players} players: give one per seat "
            "or a single one for every seat"
        )
    options = parse_options(game, option_items)
    if seed is None:
        seed = secrets.randbits(63)  # secret while the match runs; shown after it
    else:
        click.echo(
            f"--seed {seed}: a bot that knows the seed can know every card; leave it out for a "
            "secret one (shown after the match)",
            err=True,
        )
    if record is not None and not record.parent.is_dir():
        raise click.UsageError(f"--record {record}: directory {record.parent} does not exist")
    control = time_control
    taken: set[str] = set()
    shared = len(bot_commands) == 1 and len(name_items) == 1  # one --name for every seat
    if len(set(name_items)) != len(name_items) or any(not n.strip() for n in name_items):
        raise click.UsageError(
            f"--name {' '.join(name_items)}: expected non-empty names, each once"
        )
    for seat, name in enumerate(names):
        if name is not None:
            names[seat] = unique_name(name, taken) if shared else name
            taken.add(name)
    # Bots run in the current directory, so relative paths on the command line work.
    specs = [
        BotSpec(
            names[seat] or bot_name(argv, taken),
            argv,
            cwd=os.getcwd(),
            env=envs[seat],
            memory_mb=memory_mb,
            cpu_seconds=cpu_seconds,
            sandbox=sandbox,
        )
        for seat, argv in enumerate(argvs)
    ]
    note = missing_line(specs)  # said once, at start (stderr: --json's output stays JSON)
    if note:
        click.echo(note, err=True)
    logs = log_dir or Path(tempfile.mkdtemp(prefix="arena-logs-"))
    try:
        result = _play(game, specs, seed, options, control, max_faults, record, logs, affinity)
    finally:
        if log_dir is None:
            remove_if_empty(logs)  # quiet bots leave no logs: no empty folder either
    if as_json:
        click.echo(json.dumps(match_result_dict(result), indent=2))
        return
    console = output_console(width)
    console.print(result_table(result))
    for fault in result.faults:
        console.print(Text(f"fault ({fault.kind}): {printable(fault.message)}", style="yellow"))
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
    affinity: bool,
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
                affinity=affinity,
            )
        )
    except BotStartupError as error:
        raise StartupFailed(str(error)) from None
    except (KeyboardInterrupt, Interrupted):
        raise click.ClickException(
            "interrupted: the match was stopped and every bot process ended"
        ) from None
