"""The zoo tournament: every hostile bot of tests/bots and two honest bots, through the real referee.

    python benchmarks/zoo.py [--tables 20] [--concurrency 2] [--seed 1] [--sandbox] [--output DIR]

Prints the matches played, the faults by kind and by bot, the wall time, the referee's peak
resident memory (this process's VmHWM, reset at the start where the kernel allows, else the peak
so far) and the bot processes left alive afterwards (must be 0), then any match that broke the
catalogue's expectations (tests/bots/zoo_catalogue.py). Exits 1 if anything is wrong.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "bots")]

import trio
from zoo_catalogue import (
    ZOO,
    leftover_processes,
    peak_rss_mb,
    run_zoo_tournament,
    start_measuring_rss,
    zoo_match_problems,
)


async def main(args: argparse.Namespace) -> int:
    mark = uuid.uuid4().hex
    baseline = start_measuring_rss()
    with tempfile.TemporaryDirectory(prefix="arena-zoo-") as scratch:
        output = Path(args.output) if args.output else Path(scratch)
        summary, matches, wall_s = await run_zoo_tournament(
            output,
            mark,
            tables=args.tables,
            concurrency=args.concurrency,
            seed=args.seed,
            sandbox="bwrap" if args.sandbox else None,
            include=tuple(bot.name for bot in ZOO if not bot.fails_to_start),  # else: preflight
        )
        await trio.sleep(0.5)  # let the last kills land before counting
        leftovers = leftover_processes(mark)
        peak = peak_rss_mb()
        problems = [
            problem
            for match in matches
            for problem in zoo_match_problems(match, sandboxed=args.sandbox)
        ]
    by_kind = Counter(f.kind for m in matches for f in m.faults)
    by_bot = Counter((f.bot, f.kind) for m in matches for f in m.faults)
    forfeits = Counter(m.bots[seat] for m in matches for seat in m.forfeited)
    decisions = sum(len(seat) for m in matches for seat in m.decision_ms)

    print(
        f"zoo tournament: {len(matches)} matches of alles-oder-nichts (3 players), "
        f"{summary.played} completed, {summary.aborted} aborted, concurrency {args.concurrency}"
        + (", every bot in the bwrap sandbox" if args.sandbox else "")
    )
    print(
        f"bot processes started: {summary.started_processes}; bot decisions answered or timed "
        f"out: {decisions}"
    )
    print(
        "faults by kind: "
        + (", ".join(f"{kind} {n}" for kind, n in sorted(by_kind.items())) or "none")
    )
    for (bot, kind), n in sorted(by_bot.items()):
        print(f"  {bot:<18} {kind:<10} {n:>3}   forfeited {forfeits[bot]} match(es)")
    print(f"wall time: {wall_s:.1f} s")
    print(f"referee peak RSS (VmHWM): {peak:.1f} MB (resident before the run: {baseline:.1f} MB)")
    print(f"leftover bot processes: {len(leftovers)}")
    for pid, command in leftovers:
        print(f"  pid {pid}: {command}")
    for problem in problems:
        print(f"PROBLEM {problem}")
    return 1 if problems or leftovers or summary.aborted else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20, help="tables of 3 (default 20)")
    parser.add_argument("--concurrency", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sandbox", action="store_true", help="run every bot in bwrap")
    parser.add_argument("--output", help="keep the results, records and bot logs in this folder")
    sys.exit(trio.run(main, parser.parse_args()))
