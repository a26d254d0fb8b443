"""What a flood of stale replies costs the referee: its CPU per stale line, and the wall time of a
flooded decision, for source trees side by side.

    python3 benchmarks/stale.py [--tree PATH ...] [--rounds 3] [--matches 2] [--record MODE ...]
                               [--flood flood|varied-flood] [--affinity on|off]

A stale reply is an action message for an earlier request id: the referee skips it (records the
first few of each request) and reads on (arena/referee/match.py, read_reply). Seat 0 of Alles oder
Nichts is tests/bots/wrong_id_bot.py in its ``flood`` mode, which writes 20,000 stale lines (about
1 MB, all alike) before each right answer, or with ``--flood varied-flood`` 20,000 that differ
(each id one less than the line before); seats 1 and 2 are the honest first-legal bot. Each tree (default:
this one) is a checkout of the arena, e.g. ``git archive main | tar -x -C /tmp/base`` for a
before/after; for each round, each tree in turn (the order alternates round by round, so drifting
load hits both alike) plays ``--matches`` matches per record mode in a fresh Python process with
``PYTHONPATH`` at the tree, the bots started and a warm-up match played outside the timed part. Record modes: ``none``,
``full`` (a plain .jsonl record: the quick reply is not tried on it) and ``compact`` (the .jsonl.gz
record tournaments write: the quick reply is tried on every line).

Printed per tree and mode, the median over the rounds of:
  us/stale   the arena process's CPU (time.process_time: the bots are other processes) over the
             flood matches, divided by the stale lines read (20,000 per decision of seat 0). The
             honest seats' decisions are in it too, a few ms per match against the flood's
             hundreds: under 1%;
  ms/flood   the median wall time of a flooded decision: what the seat's clock measured from the
             request to its right answer (the bot's writing and the referee's skipping, which
             overlap on two cores and take turns on one);
  max ms     the slowest flooded decision of the round;
with the load average. Pinned (``--affinity on``): the referee and its bots on one core, as
``arena match`` and tournaments run them; ``off`` (default): placed by the system, as the zoo
tests (tests/untrusted/test_zoo.py) run them, whose 700 ms per decision the flood must fit in.
On a loaded machine every figure is inflated; compare trees, not absolute values.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

BOTS = common.ROOT / "tests" / "bots"
GAME = "alles-oder-nichts"
STALE_PER_DECISION = 20_000  # wrong_id_bot.py flood's copies
MODES = ("none", "full", "compact")
FIELDS = ("us_stale", "ms_flood", "max_ms", "decisions")


async def child_mode(mode: str, flood: str, matches: int, first_seed: int) -> dict[str, float]:
    """One record mode's figures in this process (run with PYTHONPATH at the tree measured)."""
    from arena.games import find_game
    from arena.referee.bot_spec import BotSpec
    from arena.referee.clock import TimeControl
    from arena.referee.match import run_match
    from arena.referee.process import BotProcess

    game = find_game(GAME)
    control = TimeControl(
        decision_ms=10_000, margin_ms=1000
    )  # a slow tree is measured, not faulted
    scripts = [("wrong_id_bot.py", flood), ("first_legal_bot.py",), ("first_legal_bot.py",)]
    with tempfile.TemporaryDirectory(prefix="arena-stale-") as scratch:
        folder = Path(scratch)
        folder.chmod(0o755)
        bots = [
            await BotProcess.start(
                BotSpec(f"b{i}", (sys.executable, str(BOTS / script[0]), *script[1:]), str(BOTS)),
                time_control=control,
                log_dir=folder,
            )
            for i, script in enumerate(scripts)
        ]
        suffix = {"none": None, "full": ".jsonl", "compact": ".jsonl.gz"}[mode]
        flooded: list[float] = []
        try:
            # A warm-up match, untimed: the first one pays for what a process does once.
            await run_match(game, bots, seed=0, match_id="warm", time_control=control)
            cpu = 0.0
            for n in range(matches):
                seed = first_seed + n
                record = None if suffix is None else folder / f"m{seed}{suffix}"
                before = time.process_time()
                result = await run_match(
                    game,
                    bots,
                    seed=seed,
                    match_id=f"m{seed}",
                    time_control=control,
                    record_path=record,
                )
                cpu += time.process_time() - before
                if result.faults:
                    raise SystemExit(f"unexpected faults: {result.faults}")
                flooded += result.decision_ms[0]
        finally:
            for bot in bots:
                await bot.close()
    return {
        "us_stale": cpu / (len(flooded) * STALE_PER_DECISION) * 1e6,
        "ms_flood": common.median(flooded),
        "max_ms": max(flooded),
        "decisions": len(flooded),
    }


def child(modes: list[str], flood: str, matches: int, seed: int) -> None:
    common.use_tree()
    import trio

    async def main() -> None:
        for mode in modes:
            figures = await child_mode(mode, flood, matches, seed)
            print(mode, *(f"{figures[name]:.4f}" for name in FIELDS), flush=True)

    with common.pinned_like_the_arena(os.environ.get("ARENA_BENCH_AFFINITY") == "on"):
        trio.run(main)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--tree", action="append", help="a source tree (repeatable); default: this")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--matches", type=int, default=2, help="per tree, mode and round")
    parser.add_argument("--record", action="append", choices=MODES, help="default: all three")
    parser.add_argument("--flood", choices=("flood", "varied-flood"), default="flood")
    parser.add_argument("--affinity", choices=("on", "off"), default="off")
    parser.add_argument("--child", nargs=2, metavar=("MATCHES", "SEED"), help=argparse.SUPPRESS)
    args = common.parse(parser, smoke={"rounds": 1, "matches": 1, "record": ["compact"]})
    modes = args.record or list(MODES)
    if args.child:
        child(modes, args.flood, int(args.child[0]), int(args.child[1]))
        return
    trees = common.trees(args.tree)
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    load_before = common.load_note()
    for number in range(args.rounds):
        for tree in trees if number % 2 == 0 else trees[::-1]:
            command = [sys.executable, __file__, "--child", str(args.matches)]
            command += [str(1000 * number + 1), *(a for m in modes for a in ("--record", m))]
            command += ["--flood", args.flood]
            for line in common.child_lines(command, tree, ARENA_BENCH_AFFINITY=args.affinity):
                mode, *values = line.split()
                rows.setdefault((tree, mode), []).append(
                    dict(zip(FIELDS, map(float, values), strict=True))
                )
        common.progress(f"round {number + 1}/{args.rounds} done")
    print(
        f"median (lowest-highest) of {args.rounds} alternating rounds, {args.matches} matches "
        f"each, {STALE_PER_DECISION} stale lines ({args.flood}) per flooded decision, affinity "
        f"{args.affinity}; {load_before} at the start, {common.load_note()} at the end"
    )

    def cells(measured: list[dict[str, float]]) -> tuple[str, ...]:
        return (
            common.median_spread((run["us_stale"] for run in measured), 3),
            common.median_spread(run["ms_flood"] for run in measured),
            f"{max(run['max_ms'] for run in measured):.1f}",
            f"{common.median(run['decisions'] for run in measured):.0f}",
        )

    common.table(
        ["tree", "record", "us/stale", "ms/flood", "max ms", "decisions"],
        [(tree[-30:], mode, *cells(rows[(tree, mode)])) for tree in trees for mode in modes],
        left=2,
    )


if __name__ == "__main__":
    main()
