"""League matchmaking against uniform round robin: deal-sets until a known field is ranked right.

    python3 benchmarks/league_matchmaking.py [--seeds 40] [--dealsets 300]

A seeded simulation (arena/league/simulation.py): versions of known strengths, each deal-set's
results drawn from them (shared seat luck across the rotations, noise per match), rated as the
ladder rates them. For each field and policy: the mean and median deal-sets until the ranking by
rating is right and stays right to the end, and in how many seeds it was right by then.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.league.simulation import POLICIES, simulate
from benchmarks import common

FIELDS = {
    "6 versions, evenly spaced": [0.0, 0.6, 1.2, 1.8, 2.4, 3.0],
    "8 versions, close pairs": [0.0, 0.5, 1.0, 1.5, 2.5, 3.0, 4.0, 4.5],
}


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--dealsets", type=int, default=300)
    parser.add_argument("--players", type=int, default=3)
    args = common.parse(parser, smoke={"seeds": 2, "dealsets": 40})
    rows = []
    for name, strengths in FIELDS.items():
        for policy in POLICIES:
            needed = [
                simulate(
                    strengths,
                    players=args.players,
                    dealsets=args.dealsets,
                    policy=policy,
                    seed=seed,
                )
                for seed in range(args.seeds)
            ]
            right = sum(n <= args.dealsets for n in needed)
            rows.append(
                [
                    name,
                    policy,
                    f"{statistics.mean(needed):.1f}",
                    f"{statistics.median(needed):.1f}",
                    f"{right}/{args.seeds}",
                ]
            )
    print(
        f"deal-sets of {args.players} seats until the ranking is right for good "
        f"({args.dealsets} deal-sets; not right by then counts {args.dealsets + 1})"
    )
    common.table(["field", "policy", "mean", "median", "right at the end"], rows, left=2)


if __name__ == "__main__":
    main()
