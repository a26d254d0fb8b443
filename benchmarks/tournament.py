"""Tournament throughput: matches per second at several concurrencies, and the standings fold.

    python benchmarks/tournament.py [--deals 6] [--game alles-oder-nichts] [--concurrency 1,2,4]

Plays a quick tournament of three tests/bots/random_bot.py processes (real processes, pooled)
once per concurrency, interleaved over --repeat rounds, and prints matches/s (median), the bot
processes started and the decisions per second. Then folds the stored matches into standings and
prints the cost of adding one match (what a running tournament pays per match) and of one
snapshot (what the live view pays once a second). The machine is shared: compare figures from
one run, never across runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.store import ResultStore  # noqa: E402
from arena.tournament.config import quick_config  # noqa: E402
from arena.tournament.runner import Progress, run_tournament  # noqa: E402
from arena.tournament.schedule import build_schedule  # noqa: E402
from arena.tournament.standings import StandingsFold  # noqa: E402


def play(game: str, deals: int, concurrency: int, folder: Path) -> tuple[float, int, int, list]:
    bot = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'random_bot.py'}"
    config = quick_config([f"r{i}={bot} {i}" for i in range(3)], games=game, deals=deals,
                          concurrency=concurrency, results=str(folder / "r.sqlite"))
    schedule = build_schedule(config.seed, [b.name for b in config.bots], config.games)
    store = ResultStore.open_for_run(config.results, name=config.name,
                                     fingerprint=config.fingerprint(),
                                     definition=config.definition(), restart=True)
    try:
        start = time.perf_counter()
        summary = trio.run(run_tournament, config, schedule, store, Progress(total=0))
        elapsed = time.perf_counter() - start
        matches = store.matches()
    finally:
        store.close()
    decisions = sum(len(seat) for m in matches for seat in m.decision_ms)
    return summary.played / elapsed, summary.started_processes, round(decisions / elapsed), matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=6)
    parser.add_argument("--game", default="alles-oder-nichts")
    parser.add_argument("--concurrency", default="1,2,4")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    rates: dict[int, list[float]] = {c: [] for c in levels}
    started: dict[int, int] = {}
    per_s: dict[int, list[int]] = {c: [] for c in levels}
    matches: list = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for level in levels:
                rate, processes, decisions, matches = play(args.game, args.deals, level,
                                                           Path(tmp) / str(level))
                rates[level].append(rate)
                started[level] = processes
                per_s[level].append(decisions)
    print(f"{args.game}, 3 random bots, {len(matches)} matches per run, median of {args.repeat}")
    for level in levels:
        print(f"  concurrency {level}: {statistics.median(rates[level]):6.1f} matches/s, "
              f"{statistics.median(per_s[level]):7.0f} decisions/s, "
              f"{started[level]} bot processes started")
    many = matches * max(1, 2000 // max(1, len(matches)))
    fold = StandingsFold()
    start = time.perf_counter()
    for match in many:
        fold.add(match)
    added = time.perf_counter() - start
    start = time.perf_counter()
    fold.standings()
    snapshot = time.perf_counter() - start
    print(f"standings fold over {len(many)} matches: {added / len(many) * 1e6:.0f} us to add one, "
          f"{snapshot * 1000:.1f} ms per snapshot")


if __name__ == "__main__":
    main()
