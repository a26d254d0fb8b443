"""CPU per match added to the live standings fold, in schedule order and out of it, for source
trees side by side.

    python3 benchmarks/standings_fold.py [--tree PATH ...] [--rounds 5] [--matches 3000]
                                        [--spread 0,4,16] [--bots 6] [--instructions]

A running tournament folds each match into its standings as it is stored
(``StandingsFold.add``, through ``LiveStandings``); at concurrency > 1 matches finish out of
schedule order, and the ratings (folded in schedule order) are then rated again from the late
match's place. This times ``add`` alone, on ``--matches`` synthetic matches of four games (4 of
``--bots`` bots at a table, every deal in all four rotations, All Fours in teams, 13 decisions a
seat) as benchmarks/standings.py makes them, in the order a tournament of concurrency about
``spread`` stores them: each match a uniform draw of up to ``spread`` places from its own (0: in
schedule order). The first 1,500 matches fill the ratings' window (1,024 rated matches) before
the timed part starts, so the timed matches pay what a long tournament pays.

Each tree (default: this one) is a checkout of the arena, e.g. ``--tree /work/main`` for a
before/after; for each round, each tree in turn (the order alternates round by round, so drifting
load hits both alike) folds the same matches in a fresh Python process with ``PYTHONPATH`` at
the tree. Printed per tree and spread: the median and the range over the rounds of the CPU time
(time.process_time) per match added, in microseconds, and a digest of the final standings
(equal digests: the trees agree on every figure, the ratings bit for bit).

``--instructions`` counts instructions instead, load-free (valgrind's cachegrind, no cache
simulation; ~50x slower: use a few hundred matches and one round): each run twice, with and
without the timed matches (the same ones generated, the same warm-up), the difference divided
by the matches. It includes the final standings' small difference in cost.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

WARMUP = 1500  # matches folded before the timed part: the ratings' window full

CHILD = r"""
import hashlib, random, sys, time
from arena.tournament.standings import StandingsFold, standings_as_data
from arena.referee.results import FaultRecord
from arena.tournament.store import StoredMatch

matches, spread, nbots, warmup, skip = map(int, sys.argv[1:6])
rng = random.Random(matches * 1000 + nbots)
BOTS = [f"bot{i}" for i in range(nbots)]
GAMES = [("aon", "alles-oder-nichts"), ("vd", "vingt-down"), ("er", "eight-rounds"),
         ("af", "all-fours")]
times = [tuple(tuple(round(rng.lognormvariate(-1.5, 0.8), 2) for _ in range(13))
               for _ in range(4)) for _ in range(64)]
history = []
deal = 0
while len(history) < warmup + matches:
    for label, game_id in GAMES:
        for table in range(15):
            group = rng.sample(BOTS, 4)
            for rotation in range(4):
                bots = tuple(group[(k - rotation) % 4] for k in range(4))
                scores = tuple(rng.randint(0, 40) for _ in range(4))
                placings = tuple(1 + sorted(scores, reverse=True).index(s) for s in scores)
                faulty = rng.random() < 0.01
                history.append(StoredMatch(
                    match_id=f"{label}/t{table}/d{deal}/r{rotation}", game=label,
                    game_id=game_id, table=table, deal=deal, rotation=rotation, seed=deal,
                    players=4, options={}, bots=bots, scores=scores, placings=placings,
                    teams=(0, 1, 0, 1) if label == "af" else None,
                    forfeited=(1,) if faulty and rng.random() < 0.5 else (),
                    faults=(FaultRecord.read(1, bots[1], "timeout", 7, "late"),) if faulty else (),
                    decision_ms=times[rng.getrandbits(6)], duration_s=0.05,
                    referee={"p50_ms": 0.03, "p99_ms": 0.1, "max_ms": 0.5,
                             "load_per_core": 0.5}))
    deal += 1
history = history[: warmup + matches]
keyed = [(i + rng.uniform(0, spread), m) for i, m in enumerate(history)]
arrivals = [m for _, m in sorted(keyed, key=lambda pair: pair[0])]
fold = StandingsFold(BOTS, [label for label, _ in GAMES])
for match in arrivals[:warmup]:
    fold.add(match)
add = fold.add
timed = arrivals[warmup:] if not skip else []
start = time.process_time()
for match in timed:
    add(match)
cpu = time.process_time() - start
digest = hashlib.sha256(repr(standings_as_data(fold.standings())).encode()).hexdigest()[:12]
print(cpu / max(len(timed), 1) * 1e6, digest)
"""


def child(tree: Path, args: list[str], valgrind: bool = False) -> subprocess.CompletedProcess:
    counting = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    return subprocess.run(
        [*(counting if valgrind else []), sys.executable, "-c", CHILD, *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
        # no bytecode written: a run that compiled a changed module would count its compiling
        env={
            "PYTHONPATH": str(tree),
            "PATH": "/usr/bin:/bin",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )


def run(tree: Path, matches: int, spread: int, bots: int) -> tuple[float, str]:
    """(CPU us per match added, digest of the standings) in a fresh process on ``tree``."""
    out = child(tree, [str(v) for v in (matches, spread, bots, WARMUP, 0)])
    us, digest = out.stdout.split()
    return float(us), digest


def instructions(tree: Path, matches: int, spread: int, bots: int) -> tuple[float, str]:
    """(Instructions per match added, digest of the standings) on ``tree``, under cachegrind."""
    counts, digest = [], ""
    for skip in (0, 1):
        out = child(tree, [str(v) for v in (matches, spread, bots, WARMUP, skip)], True)
        found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
        assert found, out.stderr
        counts.append(int(found[1].replace(",", "")))
        digest = digest or out.stdout.split()[1]
    return (counts[0] - counts[1]) / matches, digest


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--tree", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--matches", type=int, default=3000, help="timed matches per run")
    parser.add_argument("--spread", default="0,4,16", help="out-of-order spreads (0: in order)")
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--instructions", action="store_true", help="count them (cachegrind)")
    args = common.parse(parser, smoke={"rounds": 1, "matches": 100, "spread": "0,4"})
    if args.instructions:
        common.require_tools(args.smoke, "valgrind")
    measure, unit = (instructions, "instr/match") if args.instructions else (run, "us/match")
    trees = [Path(t) for t in common.trees(args.tree)]
    spreads = [int(s) for s in args.spread.split(",")]
    load_before = common.load_note()
    figures: dict[tuple[Path, int], list[float]] = {(t, s): [] for t in trees for s in spreads}
    digests: dict[tuple[Path, int], set[str]] = {(t, s): set() for t in trees for s in spreads}
    for round_ in range(args.rounds):
        for spread in spreads:
            for tree in trees if round_ % 2 == 0 else trees[::-1]:
                us, digest = measure(tree, args.matches, spread, args.bots)
                figures[tree, spread].append(us)
                digests[tree, spread].add(digest)
        common.progress(f"round {round_ + 1}/{args.rounds} done")
    print(
        f"median (lowest-highest) of {args.rounds} rounds of {args.matches} matches, {args.bots} "
        f"bots; {load_before} at the start, {common.load_note()} at the end"
    )
    common.table(
        ["tree", "spread", unit, "standings digest"],
        [
            (
                str(tree)[-28:],
                spread,
                common.median_spread(figures[tree, spread]),
                " ".join(sorted(digests[tree, spread])),
            )
            for spread in spreads
            for tree in trees
        ],
    )


if __name__ == "__main__":
    main()
