"""What exact pairing costs ``arena compare``: a fresh process per seat and match (SPEC 10.10)
against pooled processes (each bot's processes reused across matches, as tournaments do).

    python3 benchmarks/compare_cost.py [--game aon] [--deals 8] [--repeat 3] [--new CMD] ...

The same comparison (NEW = the heuristic sample bot, OLD and a field of three = the Python random
bot, by default) with a fixed number of deals, played both ways in turn, each into a fresh
results file: wall time, CPU time (the arena's and its bots'), matches and bot processes
started. Prints each round and the medians. The machine is shared: trust the ratios of rounds
played side by side, not the absolute times.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import trio

from arena.stats.sequential import TestSettings
from arena.tournament.compare import compare_schedule, run_compare, sent_name
from arena.tournament.config import config_from_table, select_games
from arena.tournament.store import ResultStore

HEURISTIC = f"{sys.executable} {ROOT / 'sample_bots' / 'heuristic' / 'heuristic_bot.py'} 1"
RANDOM = f"{sys.executable} {ROOT / 'sample_bots' / 'python' / 'random_bot.py'}"


def cpu_s() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def play(args: argparse.Namespace, fresh: bool, folder: Path) -> dict:
    bots = [
        {"name": "new", "cmd": args.new, "cwd": str(ROOT)},
        {"name": "old", "cmd": args.old, "cwd": str(ROOT)},
        *({"name": f"f{i}", "cmd": f"{RANDOM} {i + 10}", "cwd": str(ROOT)} for i in range(3)),
    ]
    table = {
        "name": "compare",
        "seed": 1,
        "deals": args.deals,
        "concurrency": args.concurrency,
        "bots": bots,
        "games": select_games(args.game, source="--game"),
        "records": False,
        "output": str(folder),
    }
    config = config_from_table(table, source="benchmark", default_name="compare")
    shared = sent_name(b.name for b in config.bots)
    config = replace(
        config,
        bots=tuple(replace(b, sent_name=shared) if i < 2 else b for i, b in enumerate(config.bots)),
        fresh_processes=fresh,
        results=folder / "results.sqlite",
    )
    plan = compare_schedule(config.seed, "new", "old", ["f0", "f1", "f2"], config.games)
    store = ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
    )
    began, cpu = time.monotonic(), cpu_s()
    try:
        report = trio.run(run_compare, config, plan, store, TestSettings(), [args.deals])
    finally:
        store.close()
    return {
        "wall": time.monotonic() - began,
        "cpu": cpu_s() - cpu,
        "matches": len(plan.matches),
        "started": report.summary.started_processes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="aon")
    parser.add_argument("--deals", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--new", default=HEURISTIC)
    parser.add_argument("--old", default=f"{RANDOM} 2")
    args = parser.parse_args()
    rows: dict[str, list[dict]] = {"pooled": [], "fresh": []}
    with tempfile.TemporaryDirectory(prefix="arena-compare-cost-") as tmp:
        for round_ in range(args.repeat):
            for mode in ("pooled", "fresh"):
                found = play(args, mode == "fresh", Path(tmp) / f"{mode}-{round_}")
                rows[mode].append(found)
                print(
                    f"round {round_ + 1} {mode:6}: {found['matches']} matches in "
                    f"{found['wall']:.1f} s wall, {found['cpu']:.1f} s CPU "
                    f"({1000 * found['wall'] / found['matches']:.0f} ms a match), "
                    f"{found['started']} bot processes started"
                )
    pooled, fresh = rows["pooled"], rows["fresh"]
    wall = statistics.median(f["wall"] / p["wall"] for f, p in zip(fresh, pooled))
    cpu = statistics.median(f["cpu"] / p["cpu"] for f, p in zip(fresh, pooled))
    print(
        f"{args.game}, {args.deals} deals, concurrency {args.concurrency}: fresh processes over "
        f"pooled, median of {args.repeat} rounds: wall {wall:.2f}x, CPU {cpu:.2f}x"
    )


if __name__ == "__main__":
    main()
