"""What a flood of stale replies costs the referee: its CPU per stale line, and the wall time of a
flooded decision, for source trees side by side.

    python benchmarks/stale.py [--tree PATH ...] [--rounds 3] [--matches 2] [--record MODE ...]
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
Needs ``ARENA_BOT_USER=@arena`` (or another user) when run as root. On a loaded machine every
figure is inflated; compare trees, not absolute values.

Figures (2 vCPUs, 3 rounds x 2 matches, affinity off), main 98666e2 -> one decode per stale
line and lines split a read at a time -> and no decode for a line like the one before: us per
stale line, none/full/compact, flood 3.41/2.92/2.72 -> 1.46/1.57/1.18 -> 0.35/0.43/0.44 (load
3.6-1.8); varied-flood 4.39/3.44/3.61 -> 1.55/1.70/1.61 -> 1.50/1.44/1.53 (load 1.8-1.1, where
the bot's own writing, ~100 ms a decision, sets the wall time).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from referee_cpu import child_lines, pinned_like_the_arena

BOTS = ROOT / "tests" / "bots"
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
        "ms_flood": statistics.median(flooded),
        "max_ms": max(flooded),
        "decisions": len(flooded),
    }


def child(modes: list[str], flood: str, matches: int, seed: int) -> None:
    import trio

    async def main() -> None:
        for mode in modes:
            figures = await child_mode(mode, flood, matches, seed)
            print(mode, *(f"{figures[name]:.4f}" for name in FIELDS), flush=True)

    on = os.environ.get("ARENA_BENCH_AFFINITY") == "on"
    with pinned_like_the_arena() if on else contextlib.nullcontext():
        trio.run(main)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", help="a source tree (repeatable); default: this")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--matches", type=int, default=2, help="per tree, mode and round")
    parser.add_argument("--record", action="append", choices=MODES, help="default: all three")
    parser.add_argument("--flood", choices=("flood", "varied-flood"), default="flood")
    parser.add_argument("--affinity", choices=("on", "off"), default="off")
    parser.add_argument("--child", nargs=2, metavar=("MATCHES", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    modes = args.record or list(MODES)
    if args.child:
        child(modes, args.flood, int(args.child[0]), int(args.child[1]))
        return
    trees = [str(Path(tree).resolve()) for tree in (args.tree or [str(ROOT)])]
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    for number in range(args.rounds):
        for tree in trees if number % 2 == 0 else trees[::-1]:
            command = [sys.executable, __file__, "--child", str(args.matches)]
            command += [str(1000 * number + 1), *(a for m in modes for a in ("--record", m))]
            command += ["--flood", args.flood]
            for line in child_lines(command, tree, args.affinity):
                mode, *values = line.split()
                rows.setdefault((tree, mode), []).append(
                    dict(zip(FIELDS, map(float, values), strict=True))
                )
        print(f"  round {number + 1}/{args.rounds} done", file=sys.stderr)
    load = os.getloadavg()[0]
    print(
        f"median of {args.rounds} alternating rounds, {args.matches} matches each, "
        f"{STALE_PER_DECISION} stale lines ({args.flood}) per flooded decision, "
        f"affinity {args.affinity}; "
        f"load average {load:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"  {'tree':30} {'record':>7} {'us/stale':>9} {'ms/flood':>9} {'max ms':>8} {'decisions':>9}"
    )
    for tree in trees:
        for mode in modes:
            measured = rows[(tree, mode)]
            median = {name: statistics.median(run[name] for run in measured) for name in FIELDS}
            print(
                f"  {tree[-30:]:30} {mode:>7} {median['us_stale']:9.3f} {median['ms_flood']:9.1f} "
                f"{max(run['max_ms'] for run in measured):8.1f} {median['decisions']:9.0f}"
            )


if __name__ == "__main__":
    main()
