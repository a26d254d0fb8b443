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
import sys
import time
from dataclasses import replace
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.stats.sequential import TestSettings
from arena.tournament.compare import compare_schedule, run_compare, sent_name
from arena.tournament.config import config_from_table, select_games
from arena.tournament.store import ResultStore
from benchmarks import common

ROOT = common.ROOT
HEURISTIC = f"{sys.executable} {ROOT / 'sample_bots' / 'heuristic' / 'heuristic_bot.py'} 1"
RANDOM = f"{sys.executable} {common.PY_BOT}"


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
    parser = common.parser(__doc__)
    parser.add_argument("--game", default="aon")
    parser.add_argument("--deals", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--new", default=HEURISTIC)
    parser.add_argument("--old", default=f"{RANDOM} 2")
    args = common.parse(parser, smoke={"deals": 2, "repeat": 1})
    rows: dict[str, list[dict]] = {"pooled": [], "fresh": []}
    with common.scratch("arena-compare-cost-") as folder:
        for round_ in range(args.repeat):
            for mode in ("pooled", "fresh"):
                rows[mode].append(play(args, mode == "fresh", folder / f"{mode}-{round_}"))
                common.progress(f"round {round_ + 1} {mode}: {rows[mode][-1]['wall']:.1f} s")
    pooled, fresh = rows["pooled"], rows["fresh"]
    print(
        f"{args.game}, {args.deals} deals, concurrency {args.concurrency}, "
        f"{args.repeat} rounds side by side; {common.load_note()}"
    )
    common.table(
        ["processes", "matches", "ms a match", "CPU s", "bots started"],
        [
            (
                mode,
                found[0]["matches"],
                common.median_spread(1000 * f["wall"] / f["matches"] for f in found),
                common.median_spread(f["cpu"] for f in found),
                found[0]["started"],
            )
            for mode, found in (("pooled", pooled), ("fresh", fresh))
        ],
    )
    wall = common.median(f["wall"] / p["wall"] for f, p in zip(fresh, pooled))
    cpu = common.median(f["cpu"] / p["cpu"] for f, p in zip(fresh, pooled))
    print(f"fresh processes over pooled, medians of the rounds: wall {wall:.2f}x, CPU {cpu:.2f}x")


if __name__ == "__main__":
    main()
