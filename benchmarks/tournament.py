"""Tournament throughput: matches/s per concurrency, bot processes started, CPU shares, the fold.

    python3 benchmarks/tournament.py [--deals 2] [--games all] [--concurrency 1,2] [--repeat 3]
                                    [--bots c,c,python,python] [--records] [--workers N]
    python3 benchmarks/tournament.py --demo [--deals N] [--concurrency 1,2] [--repeat 1]

Plays a quick tournament across the chosen games (default: all four) between the random starter
bots (``c``: sample_bots/c/random_bot.c, compiled here; ``python``: sample_bots/python/random_bot.py),
real processes, pooled, once per concurrency and interleaved over ``--repeat`` rounds. ``--demo``
plays tournaments/demo.toml instead (its bots: heuristic, Python, JavaScript; ``--deals`` shortens
it). Each concurrency runs with as many worker processes as ``arena tournament`` would use
(one per core, at most the concurrency; ``--workers N`` sets it, and a level ``2w1`` in
``--concurrency 1,2w1,2`` means concurrency 2 with 1 worker process; a trailing ``u``, as in
``1u,2u``, plays that level without affinity, every process placed by the system, where the
levels without it run as shipped: each process pinned with its bots to a core of its own; a
trailing ``r``, as in ``1,1r,2,2r``, plays that level with match records written, the compact gzip
records of ``records = true``, and one without it as ``--records`` says: records on and off side
by side, over the same deals). For each concurrency it prints
the median matches/s and decisions/s, the speedup over the first concurrency, the workers, the bot
processes started against the pool size (the most processes of each bot that can be in matches at
once), and the CPU seconds of the arena (getrusage RUSAGE_SELF of this process: store, standings,
and with one process the referee and pool; plus the workers' own CPU time, which they report)
against those of the bots (RUSAGE_CHILDREN less the workers', counted once they are closed).
Each ``r`` level is then set against the same level without records: the median (and spread)
of the rounds' ratios of matches/s, also counted from the first match stored (leaving out the
start-up, ~0.1-0.25 s of a ~4 s run), of the arena's CPU per match, and the extra CPU time per
match in this process's collections of the young generations (all of the referee's with one
process: a record that leaves reference cycles shows here). Then it folds the stored matches into standings and
prints the cost of adding one match and of one snapshot (what the live view pays once a second),
and when the first match was stored. The machine is shared: compare figures from one run, never
across runs.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import resource
import statistics
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.tournament.config import TournamentConfig, load_config, quick_config
from arena.tournament.runner import Progress, run_tournament
from arena.tournament.schedule import build_schedule
from arena.tournament.standings import StandingsFold
from arena.tournament.store import ResultStore
from benchmarks import common


@dataclasses.dataclass
class Run:
    matches_per_s: float
    decisions_per_s: float
    started: int
    pool_size: int
    workers: int
    arena_cpu_s: float
    parent_cpu_s: float  # this process alone (with workers: store, schedule, dispatch)
    bots_cpu_s: float
    matches: list
    first_stored_s: float  # from the start of run_tournament to the first match stored
    steady_per_s: float  # matches/s from the first match stored to the last (no start-up)
    collector_s: float  # this process's CPU time in young collections (CollectorClock)


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def pool_size(schedule, concurrency: int) -> int:
    """The processes a pool needs at most: per bot, its most seats in one match, times the matches
    at once."""
    per_bot: dict[str, int] = {}
    for match in schedule:
        for name in set(match.seats):
            per_bot[name] = max(per_bot.get(name, 0), match.seats.count(name))
    return sum(per_bot.values()) * concurrency


class CollectorClock:
    """The CPU time this process spends in collections of the young generations (0 and 1), while
    installed: where a match's garbage is found. The full collections (~20 ms each here, one in
    100-200 matches, whatever the records) would swamp it in a run of a few hundred matches."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._began = 0.0

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self.note)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self.note)

    def note(self, phase: str, info: dict) -> None:
        if info["generation"] == 2:
            return
        if phase == "start":
            self._began = time.thread_time()
        else:
            self.spent += time.thread_time() - self._began


def play(config: TournamentConfig, concurrency: int, folder: Path) -> Run:
    config = dataclasses.replace(
        config, concurrency=concurrency, output=folder, results=folder / "results.sqlite"
    )
    workers = config.worker_count()
    schedule = build_schedule(config.seed, [b.name for b in config.bots], config.games)
    store = ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
        restart=True,
    )
    try:
        arena_before, bots_before = (
            cpu_seconds(resource.RUSAGE_SELF),
            cpu_seconds(resource.RUSAGE_CHILDREN),
        )
        start = time.perf_counter()
        stored_at: list[float] = []
        with CollectorClock() as collector:
            summary = trio.run(
                functools.partial(
                    run_tournament,
                    config,
                    schedule,
                    store,
                    Progress(total=0),
                    workers=workers,
                    on_stored=lambda _match: stored_at.append(time.perf_counter()),
                )
            )
        elapsed = time.perf_counter() - start
        parent_cpu = cpu_seconds(resource.RUSAGE_SELF) - arena_before
        arena_cpu = parent_cpu + summary.workers_cpu_s
        bots_cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - bots_before - summary.workers_cpu_s
        matches = store.matches()
    finally:
        store.close()
    decisions = sum(len(seat) for m in matches for seat in m.decision_ms)
    return Run(
        summary.played / elapsed,
        decisions / elapsed,
        summary.started_processes,
        pool_size(schedule, concurrency),
        workers,
        arena_cpu,
        parent_cpu,
        bots_cpu,
        matches,
        stored_at[0] - start if stored_at else float("nan"),
        (len(stored_at) - 1) / (stored_at[-1] - stored_at[0]) if len(stored_at) > 1 else 0.0,
        collector.spent,
    )


def split_level(level: str) -> tuple[str, str, str]:
    """A --concurrency level's (concurrency, worker processes or "", trailing flags u and r):
    "2w1ur" -> ("2", "1", "ur")."""
    bare = level.rstrip("ur")
    concurrency, _, workers = bare.partition("w")
    return concurrency, workers, level[len(bare) :]


def records_cost(level: str, on: list[Run], off: list[Run]) -> tuple[str, ...]:
    """The records' cost at one level: each round's matches/s with records over those of the same
    round without (the runs next to each other), their median and spread, from the start and from
    the first match stored; the arena's CPU per match, with over without; and the extra CPU time
    per match in this process's young collections."""

    def ratios(rate: str) -> str:
        return common.median_spread(
            (getattr(r, rate) / getattr(o, rate) for r, o in zip(on, off)), 3
        )

    cpu = [
        (r.arena_cpu_s / len(r.matches)) / (o.arena_cpu_s / len(o.matches)) for r, o in zip(on, off)
    ]
    collector = [
        (r.collector_s / len(r.matches) - o.collector_s / len(o.matches)) * 1e6
        for r, o in zip(on, off)
    ]
    return (
        level,
        ratios("matches_per_s"),
        ratios("steady_per_s"),
        f"{statistics.median(cpu):.3f}",
        f"{statistics.median(collector):+.0f}",
    )


def quick(bot_kinds: list[str], games: str, deals: int, folder: Path) -> TournamentConfig:
    """A quick tournament of the random starter bots; each bot in its own folder (the C bot's,
    or the checkout for the Python one): a sealed bot sees no other (SPEC.md 7)."""
    commands = {"python": (f"{sys.executable} {common.PY_BOT}", common.ROOT)}
    if "c" in bot_kinds:
        argv, home = common.c_bot_home(folder)
        commands["c"] = (" ".join(argv), home)
    bots = [f"{kind}{i}={commands[kind][0]} {i}" for i, kind in enumerate(bot_kinds)]
    config = quick_config(
        bots, games=games, deals=deals, seed=common.SEED, results=str(folder / "unused.sqlite")
    )
    homes = tuple(
        dataclasses.replace(bot, cwd=str(commands[kind][1]))
        for bot, kind in zip(config.bots, bot_kinds, strict=True)
    )
    return dataclasses.replace(config, bots=homes, records=False)


def demo(deals: int | None) -> TournamentConfig:
    config = load_config(common.ROOT / "tournaments" / "demo.toml")
    bots = tuple(dataclasses.replace(b, cwd=str(common.ROOT)) for b in config.bots)
    games = config.games
    if deals is not None:
        games = tuple(dataclasses.replace(g, deals=min(g.deals, deals)) for g in games)
    return dataclasses.replace(config, bots=bots, games=games, seed=common.SEED, public_seed=True)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--demo", action="store_true", help="play tournaments/demo.toml")
    parser.add_argument("--deals", type=int, default=None, help="deals per table (quick: 2)")
    parser.add_argument("--games", default="all")
    parser.add_argument("--bots", default="c,c,python,python", help="kinds: c, python")
    parser.add_argument(
        "--concurrency",
        default="1,2",
        help="levels to compare; 2w1 = concurrency 2 in 1 process; a trailing u (2u, 2w1u) runs "
        "it without affinity (the system places every process; default: pinned as shipped), a "
        "trailing r (1r, 2ur) with match records written",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--records", action="store_true", help="write match records (quick)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes [one per core, at most the concurrency]",
    )
    parser.add_argument(
        "--folder",
        default=".",
        help="where the runs' files go (records, results, logs, the C bot), in a temporary folder "
        "made there [the current folder, as `arena tournament` writes its results/ there; in "
        "/tmp on this VM each new file cost 10-25x as much: records.py's note at MODES]",
    )
    args = common.parse(parser, smoke={"deals": 1, "repeat": 1})
    levels = args.concurrency.split(",")
    runs: dict[str, list[Run]] = {level: [] for level in levels}
    if args.demo:
        common.require_tools(args.smoke, "node")  # the demo's JavaScript bot
    load_before = common.load_note()
    with common.scratch(where=args.folder) as folder:
        if args.demo:
            config = demo(args.deals)
        else:
            config = quick(args.bots.split(","), args.games, args.deals or 2, folder)
            config = dataclasses.replace(config, records=args.records)
        for round_number in range(args.repeat):
            for level in levels:
                concurrency, workers, flags = split_level(level)
                run_config = dataclasses.replace(
                    config,
                    workers=int(workers or 0) or args.workers,
                    affinity="u" not in flags,
                    records=config.records or "r" in flags,
                )
                runs[level].append(
                    play(run_config, int(concurrency), folder / f"{round_number}-{level}")
                )
            common.progress(f"round {round_number + 1}/{args.repeat} done")
    matches = runs[levels[0]][-1].matches
    bots = ", ".join(b.name for b in config.bots)
    print(
        f"{config.name}: {len(matches)} matches per run ({', '.join(g.label for g in config.games)}),"
        f" bots {bots}; median (lowest-highest) of {args.repeat}; {load_before} at the start, "
        f"{common.load_note()} at the end"
    )
    base = statistics.median(r.matches_per_s for r in runs[levels[0]])
    rows = []
    for level in levels:
        rate = statistics.median(r.matches_per_s for r in runs[level])
        arena = statistics.median(r.arena_cpu_s for r in runs[level])
        parent = statistics.median(r.parent_cpu_s for r in runs[level])
        bots_cpu = statistics.median(r.bots_cpu_s for r in runs[level])
        share = arena / (arena + bots_cpu) if arena + bots_cpu else 0.0
        last = runs[level][-1]
        concurrency, _, flags = split_level(level)
        rows.append(
            (
                level,
                concurrency,
                last.workers,
                "no" if "u" in flags else "yes",
                "yes" if "r" in flags or config.records else "no",
                common.median_spread((r.matches_per_s for r in runs[level]), 2),
                f"{rate / base:.2f}x",
                f"{statistics.median(r.steady_per_s for r in runs[level]):.2f}",
                f"{statistics.median(r.decisions_per_s for r in runs[level]):.0f}",
                f"{last.started} ({last.pool_size})",
                f"{arena:.2f} ({parent:.2f})",
                f"{bots_cpu:.2f}",
                f"{share:.0%}",
                f"{statistics.median(r.first_stored_s for r in runs[level]):.2f}",
            )
        )
    common.table(
        ["level", "concurrency", "processes", "pinned", "records", "matches/s", "speedup",
         "after 1st stored", "decisions/s", "bots started (pool)", "arena CPU s (this)",
         "bots CPU s", "arena share", "1st stored s"],
        rows,
    )  # fmt: skip
    paired = [
        records_cost(level, runs[level], runs[level.replace("r", "")])
        for level in levels
        if "r" in level and level.replace("r", "") in runs
    ]
    if paired:
        print("records: with over without, the rounds' ratios")
        common.table(
            ["level", "matches/s", "after 1st stored", "arena CPU/match", "young gc us/match"],
            paired,
        )
    copies = max(1, 2000 // max(1, len(matches)))
    last_deal = max(m.deal for m in matches) + 1
    many = [  # distinct matches (later deals), in schedule order as a tournament stores them
        dataclasses.replace(m, deal=m.deal + k * last_deal, match_id=f"{m.match_id}#{k}")
        for k in range(copies)
        for m in matches
    ]
    fold = StandingsFold((), [g.label for g in config.games])
    many.sort(key=fold.order)
    start = time.perf_counter()
    for match in many:
        fold.add(match)
    added = time.perf_counter() - start
    start = time.perf_counter()
    fold.standings()
    snapshot = time.perf_counter() - start
    print(
        f"standings fold over {len(many)} matches: {added / len(many) * 1e6:.0f} us to add one, "
        f"{snapshot * 1000:.1f} ms per snapshot"
    )


if __name__ == "__main__":
    main()
