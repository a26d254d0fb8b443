"""``arena compare NEW --against OLD --field BOT ...``: is NEW better than OLD? Parse, call, print.

Exit status: 0 NEW is better, 1 NEW is not better, 2 undecided when the deals ran out, 3 a bad
argument or file (one line), 130 interrupted (run the same command again to resume).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
import trio

from arena.cli.common import STOP_SIGNALS, StopOnSignal
from arena.referee.bot_spec import NAME_PATTERN as BOT_NAME_PATTERN
from arena.stats.moments import Estimate, estimate
from arena.stats.sprt import BETTER, NOT_BETTER, SprtSettings, llr, verdict
from arena.tournament.compare import (
    COMPARE_SCHEDULE,
    CompareSchedule,
    CompareTally,
    compare_schedule,
)
from arena.tournament.config import (
    ConfigError,
    TournamentConfig,
    config_from_table,
    select_games,
)
from arena.tournament.runner import Progress, RunSummary, TournamentError, run_tournament, unwrapped
from arena.tournament.sealing import open_sealed, reveal
from arena.tournament.store import ResultStore, StoreError

EXIT_BETTER, EXIT_NOT_BETTER, EXIT_UNDECIDED, EXIT_INPUT = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
ROUND_DEALS = 2  # the SPRT looks after every 2 deals of every table
DEFAULT_MAX_DEALS = 1024


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


def parse_sprt(text: str | None) -> SprtSettings:
    """``alpha=0.05,beta=0.05,e0=0,e1=0.2`` (any of them, in any order)."""
    if not text:
        return SprtSettings()
    values: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in ("alpha", "beta", "e0", "e1"):
            raise CompareInputError(
                f"--sprt: found {part.strip()!r}; expected KEY=VALUE with KEY one of alpha, "
                "beta, e0, e1 (e.g. --sprt alpha=0.05,beta=0.05,e1=0.2)"
            )
        try:
            values[key] = float(value)
        except ValueError:
            raise CompareInputError(f"--sprt: {key}: found {value!r}; expected a number") from None
    try:
        return SprtSettings(**values)
    except ValueError as exc:
        raise CompareInputError(f"--sprt: {exc}") from None


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
    help="Play exactly N deals per table, then judge (no early stop).",
)
@click.option(
    "--sprt",
    "sprt_text",
    metavar="alpha=A,beta=B,e0=E0,e1=E1",
    help="The SPRT's error rates and effects in per-deal standard deviations "
    "[alpha=0.05,beta=0.05,e0=0,e1=0.2].",
)
@click.option(
    "--max-deals",
    type=click.IntRange(min=2),
    default=DEFAULT_MAX_DEALS,
    show_default=True,
    help="With the SPRT: the most deals per table before it says undecided.",
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
@click.option("--restart", is_flag=True, help="Discard the results file's matches first.")
def compare_command(
    new: str,
    old: str,
    field_bots: tuple[str, ...],
    games: str,
    deals: int | None,
    sprt_text: str | None,
    max_deals: int,
    seed: int | None,
    concurrency: int | None,
    workers: int | None,
    results_path: str | None,
    restart: bool,
) -> None:
    """Is NEW better than OLD? Both play the same deals in the same seats against the same
    field (NEW takes OLD's seats), and a sequential probability ratio test on the paired
    per-deal score difference stops as soon as it is decided (SPEC.md 10.10).

    NEW, OLD and each BOT: a command line, or NAME=CMD. Exit status: 0 NEW is better, 1 not
    better, 2 undecided at the most deals, 3 a bad argument. Run again to resume."""
    if deals is not None and sprt_text is not None:
        raise CompareInputError("give --deals N (a fixed number) or --sprt ..., not both")
    settings = parse_sprt(sprt_text)
    config = _config(new, old, field_bots, games, deals or max_deals, seed, concurrency)
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
    plan = compare_schedule(
        config.seed, new_name, old_name, [b.name for b in config.bots[2:]], config.games
    )
    for note in sealed.notes:
        _say(note)
    most = deals or max_deals
    rounds = [most] if deals else [*range(ROUND_DEALS, most, ROUND_DEALS), most]
    low, high = settings.lower, settings.upper
    _say(
        f"compare {new_name} against {old_name} with {len(config.bots) - 2} field bots in "
        f"{', '.join(g.label for g in config.games)}: "
        + (f"{deals} deals per table" if deals else f"SPRT, at most {most} deals per table")
        + f"; H0: NEW - OLD = {settings.e0:g} sd, H1: {settings.e1:g} sd per deal, "
        f"alpha {settings.alpha:g}, beta {settings.beta:g}; decide at LLR <= {low:.2f} "
        f"(not better) or >= {high:.2f} (better); results in {config.results}"
    )
    try:
        outcome = trio.run(_run, config, plan, store, rounds, settings)
        summary, interrupted, value, played_deals, differences = outcome
        # It has ended when it decided, or played its deals, with nothing aborted (SPEC 10.10).
        revealed = reveal(store, sealed) if not interrupted and not summary.aborted else None
    except TournamentError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if interrupted:
        _say("stopped: the matches played are stored; run the same command again to resume")
        sys.exit(EXIT_INTERRUPTED)
    decided = verdict(value, settings)
    for label, est in differences.items():
        _say(f"  {label}: NEW - OLD per deal {_estimate_text(est)}")
    if decided == BETTER:
        _say(f"{new_name} is better than {old_name} (LLR {value:+.2f} >= {high:.2f})")
    elif decided == NOT_BETTER:
        _say(f"{new_name} is not better than {old_name} (LLR {value:+.2f} <= {low:.2f})")
    else:
        _say(
            f"inconclusive at max: {played_deals} deals per table, LLR {value:+.2f} "
            f"within ({low:.2f}, {high:.2f})"
        )
    _say(
        f"done: {summary.played} played, {summary.skipped} already stored, "
        f"{summary.aborted} aborted"
    )
    if revealed is not None:
        _say(revealed)
    sys.exit({BETTER: EXIT_BETTER, NOT_BETTER: EXIT_NOT_BETTER}.get(decided, EXIT_UNDECIDED))


def _estimate_text(est: Estimate) -> str:
    if est.mean is None:
        return "no complete deal yet"
    if est.low is None or est.high is None:
        return f"{est.mean:+.2f} (1 deal)"
    return (
        f"{est.mean:+.2f}, {est.confidence:.0%} interval [{est.low:+.2f}, {est.high:+.2f}] "
        f"over {est.n} deals"
    )


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
    output = Path(f"results/compare-{config.fingerprint()[:10]}")
    return _with_results(config, output / "results.sqlite")


def _with_results(config: TournamentConfig, results: Path) -> TournamentConfig:
    return replace(config, output=results.parent, results=results)


async def _run(
    config: TournamentConfig,
    plan: CompareSchedule,
    store: ResultStore,
    rounds: list[int],
    settings: SprtSettings,
) -> tuple[RunSummary, bool, float, int, dict[str, Estimate]]:
    """Rounds of deals; after each, the LLR of exactly the deals so far (so a resumed run
    decides as an uninterrupted one). Stops on a decision, at the last round, or on a signal."""
    new, old = config.bots[0].name, config.bots[1].name
    tally = CompareTally(new, old, plan.tables)
    tally.add_all(store.matches())
    total = RunSummary()
    stop = StopOnSignal()
    value, played, before = 0.0, 0, 0
    differences: dict[str, Estimate] = {}
    with (
        trio.open_signal_receiver(*STOP_SIGNALS) as signals,
        unwrapped(TournamentError),
    ):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop.watch, signals, nursery.cancel_scope)
            for deals in rounds:
                part = plan.first_deals(deals)
                progress = Progress(total=len(part))
                summary = await run_tournament(
                    config,
                    part,
                    store,
                    progress,
                    workers=config.worker_count(),
                    on_stored=tally.add,
                    definition_matches=plan.matches,
                )
                total.played += summary.played
                total.aborted += summary.aborted
                total.skipped += max(0, summary.skipped - before)
                before = len(part)
                sums = tally.differences(deals)
                value, played = llr(sums, settings), deals
                differences = {label: estimate(m) for label, m in sums.items()}
                shown = ", ".join(
                    f"{label} {e.mean:+.2f}"
                    for label, e in differences.items()
                    if e.mean is not None
                )
                _say(f"deals {deals}: LLR {value:+.2f}  ({shown})")
                if summary.aborted:
                    _say(f"{summary.aborted} matches aborted: run again to replay them")
                    break
                if verdict(value, settings) in (BETTER, NOT_BETTER) and len(rounds) > 1:
                    break
            nursery.cancel_scope.cancel()
    return total, stop.stopped, value, played, differences
