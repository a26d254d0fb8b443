"""Two (or more) checkouts side by side: the demo's throughput and first stored match per tree.

    python benchmarks/tournament_trees.py --tree OLD_CHECKOUT --tree NEW_CHECKOUT
                                          [--rounds 2] [--deals 64] [--concurrency 1,2]

On a shared machine figures from different runs cannot be compared, so this runs each tree's own
``benchmarks/tournament.py --demo --deals D --concurrency C --repeat 1`` (PYTHONPATH set to that
tree) once per round, the trees' order alternating from round to round, and prints per tree and
concurrency the medians of matches/s, the arena's and the bots' CPU milliseconds per match, the
first match stored after the start, and each round's speedup of the last concurrency over the
first; then the load average seen. ``--levels-apart`` runs each concurrency in its own process
(the first stored match of each then starts from the same cold state).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

LINE = re.compile(
    r"concurrency (\d+) .*?([\d.]+) matches/s.*arena +([\d.]+) s.*bots +([\d.]+) s"
    r".*after ([\d.]+) s"
)


def run(tree: Path, deals: int, levels: str) -> dict[int, tuple[float, ...]]:
    """{concurrency: (matches/s, arena CPU ms/match, bots CPU ms/match, first stored s)}."""
    out = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / "tournament.py"), "--demo"]
        + ["--deals", str(deals), "--concurrency", levels, "--repeat", "1"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
    ).stdout
    found = re.search(r"(\d+) matches per run", out)
    assert found, out
    matches = int(found.group(1))
    figures = {}
    for line in out.splitlines():
        if m := LINE.search(line):
            rate, arena, bots, first = map(float, m.groups()[1:])
            figures[int(m.group(1))] = (rate, arena / matches * 1e3, bots / matches * 1e3, first)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--deals", type=int, default=64)
    parser.add_argument("--concurrency", default="1,2")
    parser.add_argument("--levels-apart", action="store_true")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    got: dict[tuple[Path, int], list[tuple[float, ...]]] = {
        (t, c): [] for t in args.tree for c in levels
    }
    loads = [os.getloadavg()[0]]
    for round_number in range(args.rounds):
        order = args.tree if round_number % 2 == 0 else args.tree[::-1]
        for tree in order:
            groups = [[c] for c in levels] if args.levels_apart else [levels]
            for group in groups:
                for c, figures in run(tree, args.deals, ",".join(map(str, group))).items():
                    got[(tree, c)].append(figures)
                loads.append(os.getloadavg()[0])
        print(f"  round {round_number + 1}/{args.rounds} done", file=sys.stderr)
    print(f"demo, {args.deals} deals at most per table, {args.rounds} rounds, medians:")
    for (tree, c), runs in got.items():

        def median(i: int, runs: list[tuple[float, ...]] = runs) -> float:
            return statistics.median(r[i] for r in runs)

        print(
            f"  {tree}  concurrency {c}: {median(0):6.2f} matches/s, arena CPU "
            f"{median(1):5.2f} ms/match, bots {median(2):5.2f} ms/match, first match stored "
            f"after {median(3):.2f} s  (each round: {[r[3] for r in runs]} s)"
        )
    for tree in args.tree:
        first, last = got[(tree, levels[0])], got[(tree, levels[-1])]
        ratios = [b[0] / a[0] for a, b in zip(first, last)]
        print(
            f"  {tree}: concurrency {levels[-1]} over {levels[0]} each round "
            f"{[round(r, 2) for r in ratios]}, median {statistics.median(ratios):.2f}x"
        )
    print(f"load average (1 min) during the run: {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
