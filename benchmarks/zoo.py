"""The zoo tournament: every hostile bot of tests/bots and two honest bots, through the real referee.

    python3 benchmarks/zoo.py [--tables 20] [--concurrency 2] [--seed 1] [--sandbox] [--output DIR]
                              [--bots NAME,...]

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

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

sys.path.insert(0, str(common.ROOT / "tests" / "bots"))
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
            include=tuple(args.bots),
        )
        await trio.sleep(0.5)  # let the last kills land before counting
        leftovers = leftover_processes(mark)
        peak = peak_rss_mb()
        problems = [
            problem
            for match in matches
            for problem in zoo_match_problems(match, sandboxed=args.sandbox)
        ]
    by_bot = Counter((f.bot, f.kind) for m in matches for f in m.faults)
    forfeits = Counter(m.bots[seat] for m in matches for seat in m.forfeited)
    decisions = sum(len(seat) for m in matches for seat in m.decision_ms)

    print(
        f"zoo tournament: {len(matches)} matches of alles-oder-nichts (3 players), "
        f"{summary.played} completed, {summary.aborted} aborted, concurrency {args.concurrency}"
        + (", every bot in the bwrap sandbox" if args.sandbox else "")
        + f"; {common.load_note()}"
    )
    common.table(
        ["bot", "fault kind", "faults", "matches forfeited"],
        [(bot, kind, n, forfeits[bot]) for (bot, kind), n in sorted(by_bot.items())],
        left=2,
    )
    common.table(
        ["bot processes started", "decisions", "wall s", "referee peak RSS MB",
         "RSS before MB", "bot processes left"],
        [(summary.started_processes, decisions, f"{wall_s:.1f}", f"{peak:.1f}",
          f"{baseline:.1f}", len(leftovers))],
    )  # fmt: skip
    for pid, command in leftovers:
        print(f"  pid {pid}: {command}")
    for problem in problems:
        print(f"PROBLEM {problem}")
    return 1 if problems or leftovers or summary.aborted else 0


if __name__ == "__main__":
    parser = common.parser(__doc__)
    parser.add_argument("--tables", type=int, default=20, help="tables of 3 (default 20)")
    parser.add_argument("--concurrency", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sandbox", action="store_true", help="run every bot in bwrap")
    parser.add_argument("--output", help="keep the results, records and bot logs in this folder")
    starting = [bot.name for bot in ZOO if not bot.fails_to_start]  # the others: preflight's
    parser.add_argument(
        "--bots",
        type=lambda text: text.split(","),
        default=starting,
        help="the zoo bots that play, comma-separated [all that start]",
    )
    arguments = common.parse(
        parser, smoke={"tables": 3, "output": None, "bots": ["crash", "garbage", "stale-flood"]}
    )
    unknown = set(arguments.bots) - set(starting)
    if unknown:
        parser.error(
            f"--bots: no zoo bot {', '.join(sorted(unknown))} (one of {', '.join(starting)})"
        )
    if arguments.sandbox:
        common.require_tools(arguments.smoke, "bwrap")
    sys.exit(trio.run(main, arguments))
