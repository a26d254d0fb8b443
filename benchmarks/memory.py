"""The arena's memory: peak RSS with 1, 8 and 32 matches at once, and its growth over 2,000 matches.

    python3 benchmarks/memory.py [--at-once 1,8,32] [--matches 2000] [--records]

Everything runs through the tournament runner (pool, referee, store) with the C starter bot
(sample_bots/c/random_bot.c, compiled here: a C bot costs the machine almost nothing) in four-player
tables of all four games. Each "at once" figure comes from a fresh Python process (the peak RSS,
VmHWM, only ever grows), which plays at least 4 x N matches with N at once. The growth run
plays ``--matches`` matches, 8 at once, in one process and prints the RSS (VmRSS from /proc) every
10 % of the way: a flat line means nothing is kept per match (the results live in SQLite).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.tournament.config import quick_config
from arena.tournament.runner import Progress, run_tournament
from arena.tournament.schedule import build_schedule
from arena.tournament.store import ResultStore
from benchmarks import common

MATCHES_PER_DEAL = 24  # four bots, all four games: 8 tables-rotations + 12 for All Fours


def status_mb(field: str) -> float:
    """A size from /proc/self/status in MB: VmRSS (now) or VmHWM (the peak, as ru_maxrss)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb() -> float:
    return status_mb("VmRSS")


def peak_rss_mb() -> float:
    return status_mb("VmHWM")


def play(matches: int, at_once: int, records: bool, folder: Path) -> list[tuple[int, float]]:
    """Play about ``matches`` matches, ``at_once`` at a time; RSS samples (matches done, MB)."""
    argv, home = common.c_bot_home(folder)
    bot = " ".join(argv)
    deals = max(1, math.ceil(matches / MATCHES_PER_DEAL))
    config = quick_config(
        [f"c{i}={bot} {i}" for i in range(4)],
        games="all",
        deals=deals,
        seed=common.SEED,
        concurrency=at_once,
        results=str(folder / "results.sqlite"),
    )
    bots = tuple(dataclasses.replace(b, cwd=str(home)) for b in config.bots)
    config = dataclasses.replace(config, bots=bots, records=records)
    schedule = build_schedule(config.seed, [b.name for b in config.bots], config.games)
    store = ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
        restart=True,
    )
    samples = [(0, rss_mb())]
    step = max(1, len(schedule) // 10)
    done = 0

    def on_stored(_match) -> None:
        nonlocal done
        done += 1
        if done % step == 0:
            samples.append((done, rss_mb()))

    try:
        trio.run(
            lambda: run_tournament(config, schedule, store, Progress(total=0), on_stored=on_stored)
        )
    finally:
        store.close()
    return samples


def worker(at_once: int, matches: int, records: bool) -> None:
    with common.scratch() as folder:
        samples = play(matches, at_once, records, folder)
    print(json.dumps({"peak_mb": peak_rss_mb(), "samples": samples}))


def run_worker(at_once: int, matches: int, records: bool) -> dict:
    argv = [sys.executable, __file__, "--worker", str(at_once), "--matches", str(matches)]
    done = subprocess.run(
        argv + (["--records"] if records else []), check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument(
        "--at-once", default="1,8,32", help="matches at once, each in a fresh process"
    )
    parser.add_argument("--matches", type=int, default=2000, help="matches of the growth run")
    parser.add_argument("--records", action="store_true", help="also write match records")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = common.parse(parser, smoke={"at_once": "1", "matches": 24})
    if args.worker is not None:
        worker(args.worker, args.matches, args.records)
        return
    load_before = common.load_note()
    rows = []
    for at_once in [int(n) for n in args.at_once.split(",")]:
        matches = max(4 * at_once, 48)
        report = run_worker(at_once, matches, args.records)
        rows.append((f"{at_once} at once", matches, f"{report['peak_mb']:.1f}", None, None))
    growth = run_worker(8, args.matches, args.records)
    samples = growth["samples"]
    first = samples[1][1] if len(samples) > 1 else samples[0][1]
    rows.append(
        (
            "8 at once, growth",
            samples[-1][0],
            f"{growth['peak_mb']:.1f}",
            f"{first:.1f}",
            f"{samples[-1][1] - first:+.1f}",
        )
    )
    print(
        "the arena process (referee, pool, store), C random bots in 4 seats, all four games, a "
        f"fresh process each{', with records' if args.records else ''}; {load_before} at the "
        f"start, {common.load_note()} at the end"
    )
    common.table(
        ["run", "matches", "peak RSS MB", "RSS after 10% MB", "growth to the end MB"], rows
    )
    print("RSS over the growth run (matches done: MB): " + ", ".join(
        f"{done}: {mb:.1f}" for done, mb in samples
    ))  # fmt: skip


if __name__ == "__main__":
    main()
