"""Two (or more) checkouts side by side: the demo's throughput and first stored match per tree.

    python3 benchmarks/tournament_trees.py --tree OLD_CHECKOUT --tree NEW_CHECKOUT
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

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common


def run(tree: Path, deals: int, levels: str) -> dict[int, tuple[float, ...]]:
    """{concurrency: (matches/s, arena CPU ms/match, bots CPU ms/match, first stored s)}, from
    the tree's own benchmarks/tournament.py (its table, or the lines of a tree before it)."""
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
        if m := OLD_LINE.search(line):
            level, rate, arena, bots, first = m.groups()
        elif m := TABLE_ROW.match(line):
            level, rate, arena, bots, first = m.group(1, 2, 3, 4, 5)
        else:
            continue
        figures[int(level)] = (
            float(rate),
            float(arena) / matches * 1e3,
            float(bots) / matches * 1e3,
            float(first),
        )
    return figures


# benchmarks/tournament.py's rows: its table (level, concurrency, ... matches/s ... first
# stored), and the lines of trees before the table.
TABLE_ROW = re.compile(
    r"(\d+)\s+\d+\s+\d+\s+\w+\s+\w+\s+([\d.]+) \([\d.-]+\)\s+\S+\s+\S+\s+\S+\s+"
    r"\d+ \(\d+\)\s+([\d.]+) \([\d.]+\)\s+([\d.]+)\s+\S+\s+([\d.]+)$"
)
OLD_LINE = re.compile(
    r"concurrency (\d+) .*?([\d.]+) matches/s.*arena +([\d.]+) s.*bots +([\d.]+) s"
    r".*after ([\d.]+) s"
)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--tree", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--deals", type=int, default=64)
    parser.add_argument("--concurrency", default="1,2")
    parser.add_argument("--levels-apart", action="store_true")
    args = common.parse(parser, smoke={"rounds": 1, "deals": 1, "tree": None})
    common.require_tools(args.smoke, "node")  # the demo's JavaScript bot
    trees = [Path(tree) for tree in common.trees(args.tree)]
    levels = [int(c) for c in args.concurrency.split(",")]
    got: dict[tuple[Path, int], list[tuple[float, ...]]] = {
        (t, c): [] for t in trees for c in levels
    }
    loads = [os.getloadavg()[0]]
    for round_number in range(args.rounds):
        order = trees if round_number % 2 == 0 else trees[::-1]
        for tree in order:
            groups = [[c] for c in levels] if args.levels_apart else [levels]
            for group in groups:
                for c, figures in run(tree, args.deals, ",".join(map(str, group))).items():
                    got[(tree, c)].append(figures)
                loads.append(os.getloadavg()[0])
        common.progress(f"round {round_number + 1}/{args.rounds} done")
    print(
        f"demo, {args.deals} deals at most per table, {args.rounds} rounds, medians; load "
        f"average (1 min) during the run: {min(loads):.1f}-{max(loads):.1f}"
    )
    rows = []
    for (tree, c), runs in got.items():

        def median(i: int, runs: list[tuple[float, ...]] = runs) -> float:
            return statistics.median(r[i] for r in runs)

        first, last = got[(tree, levels[0])], got[(tree, levels[-1])]
        ratios = [b[0] / a[0] for a, b in zip(first, last)]
        rows.append(
            (
                str(tree)[-30:],
                c,
                f"{median(0):.2f}",
                f"{median(1):.2f}",
                f"{median(2):.2f}",
                f"{median(3):.2f}",
                common.spread((r[3] for r in runs), 2),
                common.median_spread(ratios, 2) if c == levels[-1] else None,
            )
        )
    common.table(
        ["tree", "concurrency", "matches/s", "arena CPU ms/match", "bots CPU ms/match",
         "1st stored s", "(rounds)", f"speedup over {levels[0]}"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
