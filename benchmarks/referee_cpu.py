"""The arena process's CPU per decision (user and system apart), C bots, for source trees side by side.

    python3 benchmarks/referee_cpu.py [--tree PATH ...] [--rounds 4] [--seconds 1] [--game ID]

Each tree (default: this one) is a checkout of the arena, e.g. ``git worktree add --detach
/tmp/old <commit>`` for a before/after. For each round, each tree in turn (the order alternates
round by round, so drifting load hits both alike) runs in a fresh Python process with
``PYTHONPATH`` at the tree: full matches of each game with the C starter bot in 4 seats
(sample_bots/c/random_bot.c, compiled here; records off, or with ``--record`` each match
appended compact and gzipped to a records file as a tournament writes them; bots started
outside the timed part;
pinned with its bots to one core as the arena runs them, ``--affinity on``, or not, ``off``, or
each tree both ways interleaved, ``both``),
and reports ``resource.getrusage`` of that process per decision: user, system, their sum (the
figure issue 22 asks at most 30 us of), the share of replies taken by the quick read, and the
voluntary / involuntary context switches per decision (a poll that slept / the bot preempting
the referee). Printed: the median over the rounds (the sum with its lowest and highest round),
with the load average. On a loaded machine every figure is inflated; compare trees, not absolute
values.

    python3 benchmarks/referee_cpu.py --instructions [--tree PATH ...] [--matches 2,22]

counts instead, under valgrind (cachegrind, no cache simulation), the instructions the arena
process runs per decision: each tree and game plays the two match counts given, and the
difference of the instructions over the difference of the decisions leaves start-up, imports and
the warm-up match out. Instruction counts do not depend on the machine's load (the bots' work is
not counted; the bytecode is compiled first and the hash seed fixed, so runs repeat within ~2%).
(A referee that moved the match's deadline at every decision, as older trees did, pays ~13k
instructions per decision more under valgrind, where each decision takes over a millisecond, than
in a real run.)
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

FIELDS = ("user", "sys", "quick", "vcs", "ivcs", "decisions")


async def child_game(
    game_id: str, bot: str, seconds: float, first_seed: int, matches: int = 0
) -> dict[str, float]:
    """One game's figures in this process (the arena of the tree measured: common.use_tree):
    matches for ``seconds``, or exactly ``matches`` of them when that is given."""
    from arena.games import find_game
    from arena.referee.bot_spec import BotSpec
    from arena.referee.clock import TimeControl
    from arena.referee.match import run_match
    from arena.referee.process import BotProcess
    from arena.referee.record import RecordFile
    from benchmarks.common import quick_reads_taken

    game = find_game(game_id)
    control = TimeControl(decision_ms=5000)
    logs = Path(tempfile.mkdtemp(prefix="arena-cpu-logs-"))
    records = RecordFile(logs / "run.jsonl.gz") if os.environ.get("ARENA_BENCH_RECORD") else None
    bots = [
        await BotProcess.start(BotSpec(f"b{i}", (bot, str(i))), time_control=control, log_dir=logs)
        for i in range(4)
    ]
    try:
        await run_match(game, bots, seed=first_seed - 1, match_id="warm", time_control=control)
        decisions, quick, seed = 0, quick_reads_taken(), first_seed
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        while (
            seed - first_seed < matches
            if matches
            else decisions == 0 or time.perf_counter() - start < seconds
        ):
            result = await run_match(
                game,
                bots,
                seed=seed,
                match_id=f"m{seed}",
                time_control=control,
                record_path=records,
            )
            decisions += sum(len(times) for times in result.decision_ms)
            seed += 1
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        for process in bots:
            await process.close()
        if records is not None:
            records.close()
        shutil.rmtree(logs, ignore_errors=True)
    return {
        "user": (after.ru_utime - before.ru_utime) / decisions * 1e6,
        "sys": (after.ru_stime - before.ru_stime) / decisions * 1e6,
        "quick": (quick_reads_taken() - quick) / decisions,
        "vcs": (after.ru_nvcsw - before.ru_nvcsw) / decisions,
        "ivcs": (after.ru_nivcsw - before.ru_nivcsw) / decisions,
        "decisions": decisions,
    }


def child(bot: str, seconds: float, seed: int, games: list[str], matches: int = 0) -> None:
    common.use_tree()
    import trio

    async def main() -> None:
        for game_id in games:
            figures = await child_game(game_id, bot, seconds, seed, matches)
            print(game_id, *(f"{figures[name]:.4f}" for name in FIELDS), flush=True)

    with common.pinned_like_the_arena(os.environ.get("ARENA_BENCH_AFFINITY") == "on"):
        trio.run(main)


def instructions(trees: list[str], games: list[str], matches: str, record: bool = False) -> None:
    """Instructions per decision of the arena process, per tree and game (valgrind)."""
    try:
        few, many = sorted(int(n) for n in matches.split(","))
    except ValueError:
        raise SystemExit(f"--matches {matches!r}: expected two match counts, e.g. 2,22") from None
    if few == many or few < 1:
        raise SystemExit(f"--matches {matches!r}: expected two different counts of at least 1")
    rows = []
    with common.scratch() as folder:
        bot = common.build_c_bot(folder)[0]
        for tree in trees:
            for package in ("arena", "protocol"):  # no compiling inside the counted runs
                subprocess.run([sys.executable, "-m", "compileall", "-q", f"{tree}/{package}"])
            for game_id in games:
                counts = []
                for n in (few, many):
                    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
                    command += ["--cachegrind-out-file=/dev/null", sys.executable, __file__]
                    command += ["--child", bot, "0", "1", "--child-matches", str(n)]
                    command += ["--game", game_id]
                    env = common.tree_env(tree, PYTHONHASHSEED="0")
                    if record:
                        env["ARENA_BENCH_RECORD"] = "on"
                    done = subprocess.run(command, env=env, capture_output=True, text=True)
                    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
                    if done.returncode or found is None or not done.stdout.split():
                        raise SystemExit(f"{tree}: the count failed:\n{done.stderr[-2000:]}")
                    decisions = float(done.stdout.split()[-1])
                    counts.append((int(found[1].replace(",", "")), decisions))
                (refs_few, dec_few), (refs_many, dec_many) = counts
                per_decision = (refs_many - refs_few) / (dec_many - dec_few)
                rows.append((game_id, tree[-30:], f"{per_decision / 1000:.1f}k"))
                common.progress(f"{game_id} {tree}: {rows[-1][-1]}")
    print(
        f"instructions per decision, valgrind, {many} minus {few} matches, C bots in 4 seats, "
        f"records {'on' if record else 'off'}"
    )
    common.table(["game", "tree", "instructions/decision"], rows, left=2)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--tree", action="append", help="a source tree (repeatable); default: this")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=1.0, help="per game, tree and round")
    parser.add_argument("--game", action="append", help="one game (repeatable); default: all")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind instead"
    )
    parser.add_argument(
        "--matches", default="2,22", help="with --instructions: the two match counts [2,22]"
    )
    parser.add_argument(
        "--affinity",
        choices=("on", "off", "both"),
        default="on",
        help="pin the referee and its bots to one core as the arena does (on), let the system "
        "place them (off), or measure each tree both ways, interleaved [on]",
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("BOT", "SECONDS", "SEED"), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--record", action="store_true", help="record each match as a tournament does [off]"
    )
    parser.add_argument("--child-matches", type=int, default=0, help=argparse.SUPPRESS)
    args = common.parse(parser, smoke={"rounds": 1, "seconds": 0.1, "matches": "1,2"})
    games = args.game or list(common.GAME_IDS)
    if args.child:
        seconds, seed = float(args.child[1]), int(args.child[2])
        child(args.child[0], seconds, seed, games, args.child_matches)
        return
    trees = common.trees(args.tree)
    if args.instructions:
        common.require_tools(args.smoke, "valgrind")
        instructions(trees, games[:1] if args.smoke else games, args.matches, args.record)
        return
    modes = ["on", "off"] if args.affinity == "both" else [args.affinity]
    runs = [(tree, mode) for tree in trees for mode in modes]
    rows: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    load_before = common.load_note()
    with common.scratch() as folder:
        bot = common.build_c_bot(folder)[0]
        for number in range(args.rounds):
            for tree, mode in runs if number % 2 == 0 else runs[::-1]:
                command = [sys.executable, __file__, "--child", bot, str(args.seconds)]
                command += [str(1000 * number + 1)] + [a for g in games for a in ("--game", g)]
                record = {"ARENA_BENCH_RECORD": "on"} if args.record else {}
                for line in common.child_lines(command, tree, ARENA_BENCH_AFFINITY=mode, **record):
                    game_id, *values = line.split()
                    rows.setdefault((tree, mode, game_id), []).append(
                        dict(zip(FIELDS, map(float, values), strict=True))
                    )
            common.progress(f"round {number + 1}/{args.rounds} done")
    print(
        f"median (lowest-highest) of {args.rounds} alternating rounds, {args.seconds:g} s per "
        f"game, records {'on' if args.record else 'off'}; {load_before} at the start, {common.load_note()} at the end"
    )

    def cells(measured: list[dict[str, float]]) -> tuple[str, ...]:
        median = {name: common.median(run[name] for run in measured) for name in FIELDS}
        sums = [run["user"] + run["sys"] for run in measured]
        return (
            f"{median['user']:.1f}",
            f"{median['sys']:.1f}",
            common.median_spread(sums),
            f"{median['quick']:.0%}",
            f"{median['vcs']:.2f}",
            f"{median['ivcs']:.2f}",
        )

    common.table(
        ["game", "tree", "pinned", "user us/d", "sys us/d", "u+s us/d", "quick", "vcs/d", "ivcs/d"],
        [
            (game_id, tree[-30:], mode, *cells(rows[(tree, mode, game_id)]))
            for game_id in games
            for tree, mode in runs
        ],
        left=2,
    )


if __name__ == "__main__":
    main()
