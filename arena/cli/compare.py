"""``arena compare NEW --against OLD --field BOT ...``: is NEW better than OLD? Parse, call, print.

Exit status (SPEC.md 10.10): 0 NEW is better, 1 NEW is not better (worse in a game, or no
change in any), 2 inconclusive when the deals ran out, 3 a bad argument or file (one line), 4 the
run failed (a bot cannot start, matches aborted, the results file): no verdict, 130 interrupted
(run the same command again to resume). A verdict and an error never share an exit status.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
import trio

from arena.cli.common import STOP_SIGNALS, StopOnSignal, kept_note, time_options
from arena.referee.bot_spec import NAME_PATTERN as BOT_NAME_PATTERN
from arena.referee.clock import TimeControl
from arena.stats.sequential import FLOOR, Overall, TestSettings, Verdict, looks
from arena.tournament.compare import (
    COMPARE_SCHEDULE,
    CompareLook,
    CompareReport,
    CompareSchedule,
    compare_schedule,
    run_compare,
    save_look,
    sent_name,
)
from arena.tournament.config import (
    ConfigError,
    TournamentConfig,
    config_from_table,
    select_games,
)
from arena.tournament.runner import RunSummary, TournamentError, unwrapped
from arena.tournament.sealing import open_sealed, reveal
from arena.tournament.store import ResultStore, StoreError

EXIT_BETTER, EXIT_NOT_BETTER, EXIT_UNDECIDED, EXIT_INPUT, EXIT_FAILED = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
DEFAULT_MAX_DEALS = 2048


class CompareInputError(click.ClickException):
    exit_code = EXIT_INPUT


class CompareUsageError(click.UsageError):
    """A usage error of compare's: exit 3, since 2 means "undecided" to scripts."""

    exit_code = EXIT_INPUT


class _CompareCommand(click.Command):
    """Usage errors exit 3 here: 2 means "undecided" to scripts."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            # Re-raised as our own class: click's exit_code is a class variable.
            raise CompareUsageError(exc.format_message(), exc.ctx or ctx) from None


def bot_entry(text: str, default_name: str) -> dict[str, Any]:
    """``NAME=CMD`` (NAME as in a tournament file) or a bare command line (named
    ``default_name``), run in the current directory."""
    name, sep, cmd = text.partition("=")
    if sep and BOT_NAME_PATTERN.fullmatch(name.strip()) and cmd.strip():
        return {"name": name.strip(), "cmd": cmd.strip(), "cwd": "."}
    if not text.strip():
        raise CompareInputError(f"{default_name}: found an empty command; expected CMD or NAME=CMD")
    return {"name": default_name, "cmd": text.strip(), "cwd": "."}


def parse_test(text: str | None) -> TestSettings:
    """``alpha=0.05,beta=0.05,e0=0,e1=0.2`` (any of them, in any order)."""
    if not text:
        return TestSettings()
    values: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in ("alpha", "beta", "e0", "e1"):
            raise CompareInputError(
                f"--test: found {part.strip()!r}; expected KEY=VALUE with KEY one of alpha, "
                "beta, e0, e1 (e.g. --test alpha=0.05,beta=0.05,e1=0.2)"
            )
        try:
            values[key] = float(value)
        except ValueError:
            raise CompareInputError(f"--test: {key}: found {value!r}; expected a number") from None
    try:
        return TestSettings(**values)
    except ValueError as exc:
        raise CompareInputError(f"--test: {exc}") from None


@click.command("compare", cls=_CompareCommand)
@click.argument("new", metavar="NEW")
@click.option("--against", "old", required=True, metavar="OLD", help="The version to beat.")
@click.option(
    "--field",
    "field_bots",
    multiple=True,
    required=True,
    metavar="BOT",
    help="A bot of the field NEW and OLD play against (repeat for more).",
)
@click.option("--games", default="all", metavar="all|ID,...", help="The games [all].")
@click.option(
    "--deals",
    type=click.IntRange(min=2),
    help="Play exactly N deals per table, then judge once (no early stop).",
)
@click.option(
    "--test",
    "--sprt",
    "test_text",
    metavar="alpha=A,beta=B,e0=E0,e1=E1",
    help="The test's error rates and effects in per-deal standard deviations "
    "[alpha=0.05,beta=0.05,e0=0,e1=0.2] (--sprt: its former name).",
)
@click.option(
    "--max-deals",
    type=click.IntRange(min=2),
    default=DEFAULT_MAX_DEALS,
    show_default=True,
    help="The most deals per table before it says inconclusive.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=2**63 - 1),
    help="The seed of the deals, public to anyone who knows it [a secret one, revealed when "
    "the comparison ends].",
)
@click.option("--concurrency", type=click.IntRange(1, 256), help="Matches at once [cores].")
@click.option("--workers", type=click.IntRange(1, 256), help="Processes playing the matches.")
@click.option(
    "--results",
    "results_path",
    type=click.Path(dir_okay=False),
    help="The results file [results/compare-<hash>/results.sqlite].",
)
@click.option(
    "--restart",
    is_flag=True,
    help="Start the results file afresh, its matches set aside first in OUTPUT/set-aside/TIME/.",
)
@time_options
def compare_command(
    new: str,
    old: str,
    field_bots: tuple[str, ...],
    games: str,
    deals: int | None,
    test_text: str | None,
    max_deals: int,
    seed: int | None,
    concurrency: int | None,
    workers: int | None,
    results_path: str | None,
    restart: bool,
    time_control: TimeControl,
    max_faults: int,
) -> None:
    """Is NEW better than OLD? Both play the same deals in the same seats against the same
    field (NEW takes OLD's seats), and a sequential test on the paired per-deal score
    difference judges every game, stopping once the verdict is decided (SPEC.md 10.10).

    NEW, OLD and each BOT: a command line, or NAME=CMD. Exit status: 0 NEW is better, 1 not
    better, 2 inconclusive at the most deals, 3 a bad argument, 4 the run failed. Run again to
    resume."""
    if deals is not None and test_text is not None:
        raise CompareInputError("give --deals N (a fixed number) or --test ..., not both")
    settings = parse_test(test_text)
    config = _config(new, old, field_bots, games, deals or max_deals, seed, concurrency)
    # (Its own results file for each time control: the path is named by the definition.)
    config = _with_time(config, time_control, max_faults)
    if results_path is not None:
        config = _with_results(config, Path(results_path))
    if workers is not None:
        config = replace(config, workers=workers)
    new_name, old_name = config.bots[0].name, config.bots[1].name
    try:
        store, sealed = open_sealed(config, restart=restart, schedule=COMPARE_SCHEDULE)
    except StoreError as exc:
        raise CompareInputError(str(exc)) from None
    config = sealed.config
    assert config.seed is not None  # (settled by open_sealed)
    if restart:
        save_look(store, None)  # (the verdict of the matches discarded)
    plan = compare_schedule(
        config.seed, new_name, old_name, [b.name for b in config.bots[2:]], config.games
    )
    for note in sealed.notes:
        _say(note)
    most = deals or max_deals
    rounds = [most] if deals else looks(most)
    _say(
        f"compare {new_name} against {old_name} with {len(config.bots) - 2} field bots in "
        f"{', '.join(g.label for g in config.games)}: "
        + (f"{deals} deals per table" if deals else f"at most {most} deals per table")
        + f"; per game: better (worse) at t >= {FLOOR:g} (<= -{FLOOR:g}) standard errors from "
        f"{settings.e0:g} sd, no change when the {settings.confidence:.0%} interval lies within "
        f"±{settings.e1:g} sd; alpha {settings.alpha:g}, beta {settings.beta:g}; the field sees "
        f"{new_name} and {old_name} as {config.bots[0].sent_name}, each match with fresh "
        f"processes; results in {config.results}"
    )
    summary = RunSummary()
    report: CompareReport | None = None
    failure = revealed = None
    try:
        report = trio.run(_run, config, plan, store, settings, rounds, summary)
        # It has ended when it decided, or played its deals, with nothing aborted (SPEC 10.10).
        if report is not None and not report.aborted:
            revealed = reveal(store, sealed)
    except TournamentError as exc:
        failure = f"{exc}\n{kept_note(store)}"
    finally:
        store.close()
    if failure is not None:
        _fail(failure)
    if report is None:
        _say(
            f"stopped: {summary.played} matches played in this run are stored; run the same "
            "command again to resume"
        )
        sys.exit(EXIT_INTERRUPTED)
    if report.aborted:
        _fail(
            f"{report.aborted} matches aborted (no verdict): run the same command again to "
            f"replay them; {summary.played} played in this run are stored"
        )
    assert report.look is not None  # (a report not aborted has judged a look)
    for game in report.look.games:
        _say(f"  {game.label}: {game.said}")
    _say(report.look.said)
    _say(
        f"done: {summary.played} played, {summary.skipped} already stored, "
        f"{summary.aborted} aborted; {summary.started_processes} bot processes started"
    )
    if revealed is not None:
        _say(revealed)
    sys.exit(
        {Overall.BETTER: EXIT_BETTER, Overall.NOT_BETTER: EXIT_NOT_BETTER}.get(
            report.verdict.verdict, EXIT_UNDECIDED
        )
    )


def _fail(message: str) -> None:
    """The run failed: no verdict (exit 4), the message on standard error."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(EXIT_FAILED)


def _look_line(look: CompareLook) -> str:
    parts = []
    for game in look.games:
        t = "t ?" if game.t is None else f"t {game.t:+.2f}"
        if game.verdict != Verdict.UNDECIDED:
            at = "" if game.per_table == look.deals else f" at {game.per_table} deals"
            parts.append(f"{game.label} {t} {game.verdict}{at}")
        else:
            parts.append(f"{game.label} {t}")
    return f"deals {look.deals}: " + "; ".join(parts)


def _say(line: str) -> None:
    click.echo(line)


def _config(
    new: str,
    old: str,
    field_bots: tuple[str, ...],
    games: str,
    deals: int,
    seed: int | None,
    concurrency: int | None,
) -> TournamentConfig:
    entries = [bot_entry(new, "new"), bot_entry(old, "old")]
    entries += [bot_entry(b, f"field-{i + 1}") for i, b in enumerate(field_bots)]
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise CompareInputError(
            f"bot names must differ, found {', '.join(names)}; name them NAME=CMD"
        )
    data: dict[str, Any] = {"name": "compare", "deals": deals, "bots": entries}
    if seed is not None:
        data["seed"] = seed
    if concurrency is not None:
        data["concurrency"] = concurrency
    try:
        data["games"] = select_games(games, source="--games")
        config = config_from_table(data, source="arena compare", default_name="compare")
    except ConfigError as exc:
        raise CompareInputError(str(exc)) from None
    # NEW and OLD under one name, a process per match: the field meets both copies of a deal in
    # the same state and with the same messages (SPEC 10.10)
    shared = sent_name(names)
    bots = tuple(replace(b, sent_name=shared) if i < 2 else b for i, b in enumerate(config.bots))
    config = replace(config, bots=bots, fresh_processes=True)
    output = Path(f"results/compare-{config.fingerprint()[:10]}")
    return _with_results(config, output / "results.sqlite")


def _with_time(config: TournamentConfig, control: TimeControl, max_faults: int) -> TournamentConfig:
    """The comparison at ``arena match``'s time control options, in the default results file
    of that definition (named by its fingerprint, which the time control is part of)."""
    timed = replace(config, time_control=control, max_faults=max_faults)
    return _with_results(timed, Path(f"results/compare-{timed.fingerprint()[:10]}/results.sqlite"))


def _with_results(config: TournamentConfig, results: Path) -> TournamentConfig:
    return replace(config, output=results.parent, results=results)


async def _run(
    config: TournamentConfig,
    plan: CompareSchedule,
    store: ResultStore,
    settings: TestSettings,
    rounds: list[int],
    summary: RunSummary,
) -> CompareReport | None:
    """The comparison (arena.tournament.compare.run_compare), printing a line after each look;
    stopped cleanly by SIGINT, SIGTERM or SIGHUP (the report is then None)."""
    stop = StopOnSignal()
    report: CompareReport | None = None

    def on_look(look: CompareLook) -> None:
        _say(_look_line(look))

    with (
        trio.open_signal_receiver(*STOP_SIGNALS) as signals,
        unwrapped(TournamentError),
    ):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop.watch, signals, nursery.cancel_scope)
            report = await run_compare(
                config, plan, store, settings, rounds, on_look=on_look, summary=summary
            )
            nursery.cancel_scope.cancel()
    return None if stop.stopped else report
