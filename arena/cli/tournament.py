"""``arena tournament``: parse, call, print (``arena standings`` is arena/cli/standings.py)."""

from __future__ import annotations

import importlib.util
import shlex
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import click
import trio
from rich.console import Console

from arena.cli.common import (
    STOP_SIGNALS,
    InputError,
    StopOnSignal,
    counted,
    kept_note,
    width_option,
)
from arena.cli.serve import DEFAULT_PORT, check_web_extra, organiser_secret, say_url
from arena.cli.standings import print_latency, stop_confidence
from arena.games import GameError, find_game
from arena.referee.confine import missing_line
from arena.referee.cores import spread_cores
from arena.render.terminal import (
    LogOptions,
    gauntlet_tables,
    output_console,
    show_progress,
    standings_tables,
)
from arena.tournament.config import (
    LOCAL_CLUSTER,
    ConfigError,
    TournamentConfig,
    check_cluster_address,
    check_cluster_tls,
    load_config,
    quick_config,
    with_gauntlet,
)
from arena.tournament.executors.dask_cluster import INSTALL_LINE
from arena.tournament.latency import LATENCY_NOTE, latency_report
from arena.tournament.runner import (
    PreflightError,
    Progress,
    RunSummary,
    StopReport,
    TournamentError,
    refresh_current,
    run_in_rounds,
    run_tournament,
    stored_count,
    unwrapped,
)
from arena.tournament.schedule import Schedule, build_schedule
from arena.tournament.sealing import has_ended, open_sealed, reveal
from arena.tournament.standings import (
    LiveStandings,
)
from arena.tournament.store import OutputLock, ResultStore, StoreError
from arena.tournament.workers import slots_per_worker
from arena.web.access import SECRET_ENV
from arena.web.child import WebSettings, WebStartError, serve_elsewhere

EXIT_INTERRUPTED = 130
EXIT_GIVEN_UP = 1  # the run ended, but some bot was given up (its matches forfeited)
EXIT_ALL_ABORTED = 1  # every match the run played was aborted: nothing was played


@click.command("tournament")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--bot",
    "bots",
    multiple=True,
    metavar="NAME=CMD",
    help="A bot for a quick tournament without a file (give two or more).",
)
@click.option(
    "--games",
    metavar="all|ID,...",
    help="Quick form: the games (default all). With FILE: play only these of its games "
    "now (ids, aliases or labels); the rest stay for a later run.",
)
@click.option("--deals", type=click.IntRange(min=1), help="Quick form: deals per table [2].")
@click.option(
    "--players",
    "players",
    multiple=True,
    metavar="GAME=N",
    help="Quick form: seats per table of a game (e.g. aon=3) [the game's default].",
)
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="GAME.KEY=VALUE",
    help="Quick form: a game option (e.g. vingt-down.max_deals=20); `arena games` lists them.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=2**63 - 1),
    help="Quick form: the tournament seed, public to anyone who knows it [a secret one, "
    "revealed when the tournament ends].",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    help="Matches at once [the file's, else the number of cores].",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    help="Processes playing the matches [the file's, else one per core, at most --concurrency].",
)
@click.option(
    "--affinity/--no-affinity",
    default=None,
    help="Run each process that plays, with its bots, on a core of its own [the file's "
    "affinity, else on] (SPEC.md 10.4).",
)
@click.option(
    "--cluster",
    metavar="tls://HOST:PORT|local:N",
    help="Play on the workers of this Dask scheduler (local:N: a Dask cluster of N workers "
    "here) [the file's cluster, else none].",
)
@click.option(
    "--cluster-tls",
    metavar="CA,CERT,KEY",
    help="A tls:// scheduler's security files: the CA, this client's certificate and its key "
    "(PEM) [the file's cluster.tls_*, else Dask's configuration] (SPEC.md 10.8).",
)
@click.option(
    "--results",
    "results_path",
    type=click.Path(dir_okay=False),
    help="The results file [the file's results, else results/quick-<hash>/...].",
)
@click.option(
    "--restart",
    is_flag=True,
    help="Start the results file afresh, its matches, records and logs set aside first in "
    "OUTPUT/set-aside/TIME/ (still readable by standings and serve).",
)
@click.option(
    "--replay",
    metavar="suspect|ID,...",
    help="Play these stored matches again, keeping every other: `suspect`, the strained ones "
    "with a timeout (the latency warning's), or match ids; the file as it was is copied to "
    "OUTPUT/set-aside/TIME/ first.",
)
@click.option(
    "--until-confident",
    is_flag=True,
    help="Play deals in rounds until every game's ranking is separated (the file's stop rule, "
    "else confidence 0.95, min_deals 8, max_deals 1024; quick form: --deals caps it).",
)
@click.option(
    "--web",
    "web_port",
    type=click.IntRange(0, 65535),
    is_flag=False,
    flag_value=DEFAULT_PORT,
    default=None,
    metavar="[PORT]",
    help=f"Serve live web pages of the tournament on 127.0.0.1:PORT [{DEFAULT_PORT}] while it runs "
    f"(from a process of its own; the organiser's token is ${SECRET_ENV}, else made and printed).",
)
@click.option(
    "--gauntlet",
    "gauntlet",
    multiple=True,
    metavar="NAME",
    help="Play only the tables where this bot sits (repeat for more), with the same deals "
    "and rotations as the round robin (SPEC.md 10.2).",
)
@click.option(
    "--report-every",
    type=click.IntRange(min=1),
    metavar="N",
    help="Print the standings every N finished matches (as a plain log, also on a terminal).",
)
@click.option(
    "--quiet",
    is_flag=True,
    help="Less output: no line per finished match and no progress lines (faults, the "
    "standings and the summary still).",
)
@width_option
def tournament_command(
    file: str | None,
    bots: tuple[str, ...],
    games: str | None,
    deals: int | None,
    players: tuple[str, ...],
    options: tuple[str, ...],
    seed: int | None,
    concurrency: int | None,
    workers: int | None,
    affinity: bool | None,
    cluster: str | None,
    cluster_tls: str | None,
    results_path: str | None,
    restart: bool,
    replay: str | None,
    until_confident: bool,
    web_port: int | None,
    gauntlet: tuple[str, ...],
    report_every: int | None,
    quiet: bool,
    width: int | None,
) -> None:
    """Run a tournament: FILE (a tournament TOML file), or a quick one from --bot NAME=CMD ...

    Running the same command again resumes: finished matches are kept, cut ones replayed.
    """
    config = _config(
        file, bots, games, deals, seed, concurrency, results_path, until_confident, players, options
    )
    if web_port is not None:  # before any match: a missing extra, a bad secret
        check_web_extra()
    web_secret = organiser_secret() if web_port is not None else None
    if workers is not None:
        config = replace(config, workers=workers)
    if gauntlet:
        try:
            config = with_gauntlet(config, gauntlet)
        except ConfigError as exc:
            raise InputError(str(exc)) from None
    if affinity is not None:
        config = replace(config, affinity=affinity)
    address, files = checked_cluster(
        cluster or config.cluster, cluster_tls, given=cluster is not None
    )
    config = replace(config, cluster=address, cluster_tls=files or config.cluster_tls)
    # (a mistake in --games: before any file is touched)
    chosen = _only_games(config, games) if file is not None and games is not None else None
    try:
        output_lock = OutputLock.take(config.output, config.results, restart=restart)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    try:
        store, sealed = open_sealed(config, restart=restart)
    except StoreError as exc:
        output_lock.release()
        raise InputError(str(exc)) from None
    config = sealed.config
    assert config.seed is not None  # (settled by open_sealed)
    full = build_schedule(config.seed, [b.name for b in config.bots], config.games, config.seating)
    schedule = full
    if chosen is not None and chosen != {g.label for g in config.games}:
        schedule = full.only(chosen)
    try:
        output_lock.claim()
        kept, older = refresh_current(config, full, store)
        if replay is not None:
            sealed.notes.append(_replay(config, store, replay))
            kept, older = refresh_current(config, full, store)
            config = replace(config, revealed=False)  # (the same deals and bots: SPEC 10.4)
        to_play = len(schedule) - stored_count(schedule, store.completed_ids())
    except (StoreError, InputError) as exc:
        store.close()
        output_lock.release()
        raise InputError(str(exc)) from None
    console = output_console(width)
    for note in sealed.notes:
        say(console, note)
    say(
        console,
        f"tournament {config.name!r}: {counted(len(config.bots), 'bot')}, "
        f"{counted(len(config.games), 'game')}, {'up to ' if config.stop else ''}"
        f"{counted(len(schedule), 'match')}, "
        f"{_where(config)}; "
        f"results in {config.results}",
    )
    missing = missing_line(config.bots) if to_play else None  # said once, at start
    if missing:
        say(console, missing)
    say(
        console,
        f"kept {kept} stored matches, {to_play} to play"
        + (f"; {older} stored matches of an earlier definition are not counted" if older else ""),
    )
    try:
        live = LiveStandings(
            store,
            [b.name for b in config.bots],
            [g.label for g in config.games],
            seating=config.seating,
            confidence=stop_confidence(config),
            margin_ms=config.time_control.margin_ms,
        )
        with unwrapped(WebStartError):
            summary, interrupted, report = trio.run(
                _run,
                config,
                schedule,
                full,
                store,
                live,
                console,
                LogOptions(quiet=quiet, report_every=report_every or 0),
                web_port,
                web_secret,
            )
        live.persist()
        final = live.standings()
        latency = live.latency()  # folded with the standings: no second reading of the matches
        store.save_note(LATENCY_NOTE, latency.warning)  # in the results, for `arena standings`
        revealed = None
        if not interrupted and has_ended(full, store, summary.aborted, report):
            revealed = reveal(store, sealed)
    except PreflightError as exc:
        raise InputError(f"{exc}\n{kept_note(store)}") from None
    except TournamentError as exc:  # (its message says what is kept)
        raise click.ClickException(str(exc)) from None
    except WebStartError as exc:
        raise InputError(f"--web {web_port}: {exc}") from None
    finally:
        store.close()
        output_lock.release()
    console.print(standings_tables(final, console.width, with_pairs=True))
    if config.gauntlet:
        console.print(gauntlet_tables(final, config.gauntlet, console.width))
    print_latency(console, latency, _same_arguments())
    if interrupted:
        say(
            console,
            f"stopped: {summary.played} matches played in this run are stored; run the "
            "same command again to resume",
        )
        sys.exit(EXIT_INTERRUPTED)
    if report is not None:
        say(console, report.reason)
    aborted = (
        f"{summary.aborted} aborted (run again to replay them)" if summary.aborted else "0 aborted"
    )
    say(
        console,
        f"done: {summary.played} played, {summary.skipped} already stored, {aborted}; "
        f"{summary.started_processes} bot processes started",
    )
    for line in _cluster_lines(summary):
        say(console, line)
    if revealed is not None:
        say(console, revealed)
    if summary.aborted and not summary.played:
        say(
            console,
            f"every match of this run was aborted ({summary.aborted}): nothing was played; "
            "see the reasons above, and run the same command again to replay them",
        )
        sys.exit(EXIT_ALL_ABORTED)
    if summary.given_up:
        reasons = "; ".join(f"{name}: {why}" for name, why in sorted(summary.given_up.items()))
        say(
            console,
            f"given up: {counted(len(summary.given_up), 'bot')} stopped starting during the run and "
            f"forfeited their remaining matches ({reasons})",
        )
        sys.exit(EXIT_GIVEN_UP)


def say(console: Console, line: str) -> None:
    """One line as it is: whole on a pipe (a log), wrapped at spaces on a terminal (which would
    otherwise break it mid-word)."""
    console.print(line, highlight=False, markup=False, soft_wrap=not console.is_terminal)


def _same_arguments() -> str:
    """This command's arguments as given, less --restart and --replay (for the command that
    replays the suspect matches)."""
    args, kept = sys.argv[1:], []
    if args[:1] == ["tournament"]:
        args = args[1:]
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--replay":
            skip = True
        elif arg != "--restart" and not arg.startswith("--replay="):
            kept.append(arg)
    return shlex.join(kept)


def _replay(config: TournamentConfig, store: ResultStore, which: str) -> str:
    """Delete the stored matches ``which`` names (``suspect``, or match ids), after copying
    the file as it was aside, so that this run plays them again; the line that says so."""
    if which.strip() == "suspect":
        ids = list(latency_report(store.matches(), config.time_control.margin_ms).suspect)
        if not ids:
            return "--replay suspect: no stored match is suspect (SPEC 10.6); nothing to replay"
    else:
        ids = list(dict.fromkeys(p.strip() for p in which.split(",") if p.strip()))
        stored = store.completed_ids()
        unknown = [i for i in ids if i not in stored]
        if unknown or not ids:
            raise InputError(
                f"--replay: found {unknown[0] if unknown else which!r}; expected `suspect` or "
                f"ids of completed matches of this tournament (e.g. {min(stored, default='aon/t0/d0/r0')})"
            )
    aside = store.set_aside(config.output, move_output=False)
    assert aside is not None  # (it holds the matches to replay)
    count = store.forget(ids)
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    return (
        f"--replay: playing {count} stored matches again ({shown}); every other is kept, and "
        f"the file as it was, their old results included, is in {aside.results}"
    )


def _processes(workers: int) -> str:
    if workers == 1:
        return "1 process"
    others = workers - 1  # the arena process plays the first share itself (SPEC 10.4)
    return f"{workers} processes (this one and {others} worker process{'es' if others > 1 else ''})"


def _where(config: TournamentConfig) -> str:
    if config.cluster is None:
        where = f"{config.concurrency} at once in {_processes(config.worker_count())}"
        shares = slots_per_worker(config.concurrency, config.worker_count())
        if config.affinity and any(cores is not None for cores in spread_cores(shares)):
            return f"{where}, pinned with their bots (a core per match at once)"
        return where
    per_worker = config.matches_per_worker
    at_once = f"{per_worker} at once per worker" if per_worker else "one per worker thread at once"
    return f"on the Dask cluster {config.cluster}, {at_once}"


def checked_cluster(
    cluster: str | None, cluster_tls: str | None, *, given: bool = True
) -> tuple[str | None, tuple[str, str, str] | None]:
    """``--cluster`` (``given``: from the command line, else the file's, checked already) and
    ``--cluster-tls`` checked: the address and the TLS files (None when not given); warns on
    stderr of a remote scheduler reached without TLS. InputError, one line, on a mistake."""
    files = None
    try:
        if cluster is not None and given:
            cluster = check_cluster_address(cluster, where="--cluster")
        if cluster_tls is not None:
            files = check_cluster_tls(tuple(cluster_tls.split(",")), where="--cluster-tls")
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    if files is not None and not (cluster or "").startswith("tls://"):
        raise InputError("--cluster-tls: expected with a tls://HOST:PORT cluster")
    if cluster is not None and importlib.util.find_spec("distributed") is None:
        raise InputError(INSTALL_LINE)
    if cluster is not None and not LOCAL_CLUSTER.match(cluster):
        if not cluster.startswith("tls://"):
            click.echo(
                f"warning: the Dask scheduler {cluster} is reached without TLS: anyone "
                "who can connect to it runs code on every worker; use tls:// (SPEC.md 10.8)",
                err=True,
            )
    return cluster, files


def _cluster_lines(summary: RunSummary) -> list[str]:
    """Per cluster worker: its matches, its bots' median decision time; then Dask's share."""
    lines = []
    matches = sum(r.matches for r in summary.cluster_workers.values())
    for address, report in sorted(summary.cluster_workers.items()):
        median = (
            f"median decision {statistics.median(report.decision_ms):.1f} ms"
            if report.decision_ms
            else "no decisions"
        )
        referee = ""
        if report.referee_p50_ms:
            referee = (
                f", referee latency median {statistics.median(report.referee_p50_ms):.2f} ms, "
                f"worst p99 {report.referee_p99_ms} ms, max {report.referee_max_ms} ms, "
                f"load per core up to {report.max_load_per_core}"
            )
        lines.append(
            f"  worker {address}: {report.matches} matches, {report.decisions} decisions, "
            f"{median}{referee}, {report.started} bot processes started"
            + (f"; its bots' stderr there in {report.log_dir}/" if report.log_dir else "")
        )
    if matches:
        lines.append(
            f"  cluster: {summary.cluster_startup_s:.1f} s to connect and ship the bots; Dask's "
            f"own time {1000 * summary.cluster_overhead_s / matches:.2f} ms per match"
        )
    for address in summary.cluster_lost:
        lines.append(f"  worker {address} lost during the run")
    if summary.cluster_lost or summary.cluster_rescheduled:
        lines.append(
            f"  cluster: {counted(summary.cluster_rescheduled, 'match')} of lost workers "
            "rescheduled, played again on other workers (none stored twice)"
        )
    return lines


def _config(
    file: str | None,
    bots: tuple[str, ...],
    games: str | None,
    deals: int | None,
    seed: int | None,
    concurrency: int | None,
    results_path: str | None,
    until_confident: bool = False,
    players: tuple[str, ...] = (),
    options: tuple[str, ...] = (),
) -> TournamentConfig:
    try:
        if file is None:
            if len(bots) < 2:
                raise InputError(
                    "give a tournament FILE, or two or more --bot NAME=CMD "
                    "(e.g. arena tournament tournaments/demo.toml)"
                )
            return quick_config(
                bots,
                games=games or "all",
                deals=deals if until_confident else deals or 2,
                seed=seed,
                concurrency=concurrency,
                results=results_path,
                until_confident=until_confident,
                players=players,
                options=options,
            )
        for flag, value in (
            ("--bot", bots or None),
            ("--deals", deals),
            ("--seed", seed),
            ("--players", players or None),
            ("--option", options or None),
        ):
            if value is not None:
                raise InputError(
                    f"{flag} is for a quick tournament without FILE; set it in {file} instead"
                )
        config = load_config(file, until_confident=until_confident)
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    if concurrency is not None:
        config = replace(config, concurrency=concurrency)
    if results_path is not None:
        config = replace(config, results=Path(results_path))
    return config


def _only_games(config: TournamentConfig, games: str) -> set[str]:
    """The labels of the file's games that --games names."""
    if games.strip().lower() == "all":
        return {g.label for g in config.games}
    chosen: set[str] = set()
    labels = {g.label: g for g in config.games}
    for part in (p.strip() for p in games.split(",")):
        if part in labels:
            chosen.add(part)
            continue
        try:
            game_id = find_game(part).id
        except GameError:
            game_id = None
        matching = {g.label for g in config.games if g.game_id == game_id}
        if not matching:
            raise InputError(
                f"--games: found {part!r}; expected a game of {config.source} "
                f"({', '.join(labels)}) or all"
            )
        chosen |= matching
    return chosen


async def _run(
    config: TournamentConfig,
    schedule: Schedule,
    full: Schedule,
    store: ResultStore,
    live: LiveStandings,
    console: Console,
    log: LogOptions,
    web_port: int | None = None,
    web_secret: tuple[str, bool] | None = None,
) -> tuple[RunSummary, bool, StopReport | None]:
    """The runner and the display side by side (and, given a ``web_port``, the web pages from
    a process of their own); SIGINT, SIGTERM and SIGHUP stop it cleanly. With a stop rule the
    deals are played in rounds (the report says why it stopped)."""
    progress = Progress(total=len(schedule))
    on_stored = live.add

    stop = StopOnSignal()
    summary = RunSummary()
    report: StopReport | None = None
    with (
        trio.open_signal_receiver(*STOP_SIGNALS) as signals,
        unwrapped(TournamentError),
    ):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop.watch, signals, nursery.cancel_scope)
            if web_port is not None and web_secret is not None:
                web = WebSettings(
                    results=str(config.results),
                    records_dir=str(config.records_dir) if config.records else None,
                    confidence=stop_confidence(config),
                    host="127.0.0.1",
                    port=web_port,
                    secret=web_secret[0],
                )

                def say_gone(line: str) -> None:
                    say(console, line)

                url, _pid = await nursery.start(serve_elsewhere, web, say_gone)
                say_url(url, *web_secret, with_tournament=True)
            nursery.start_soon(show_progress, progress, live.standings, console, log)
            workers = config.worker_count()
            if config.stop is not None:
                report = await run_in_rounds(
                    config,
                    schedule,
                    store,
                    progress,
                    config.stop,
                    workers=workers,
                    cluster=config.cluster,
                    on_stored=on_stored,
                    summary=summary,
                    definition_matches=full,
                )
            else:
                await run_tournament(
                    config,
                    schedule,
                    store,
                    progress,
                    workers=workers,
                    cluster=config.cluster,
                    on_stored=on_stored,
                    summary=summary,
                    definition_matches=full,
                )
            nursery.cancel_scope.cancel()
    return summary, stop.stopped, report
