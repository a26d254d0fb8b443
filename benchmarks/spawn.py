"""What starting a bot costs, sealed or not, and what it costs the matches playing meanwhile.

    python3 benchmarks/spawn.py [--starts 30] [--matches 3] [--seconds 4] [--rounds 3]

1. **Start cost** (SPEC.md section 7's seal): the C starter bot (sample_bots/c, compiled here)
   started and closed ``--starts`` times, unsealed (``sandbox = "none"``), sealed by default
   (as root: namespaces the arena makes; else bubblewrap) and in bubblewrap. Per start: the
   wall time to its ``ready`` (median), and the CPU the arena process spent (user + system).
   A start happens once per bot process, not per decision.
2. **What a start costs the others**: ``--matches`` matches of C bots at once in this one
   process (as a tournament's process with that many at once plays them), for ``--seconds``,
   once alone and once while another task starts and closes a bot again and again (what a bot
   that forfeits or crashes in every match causes: a fresh process per match). Printed: the
   referee's latency per decision (its own time between a reply and the next request: the
   worst, and the 99.9th percentile) and the honest bots' worst decision time (what the clock
   charges them), with the load average. Median of ``--rounds`` interleaved rounds.

Run as root, bots run as users of their own (``@own``) unless ``ARENA_BOT_USER`` says otherwise
(this script, unlike the others, leaves it unset: switching users is part of a start); the machine
is shared: compare the two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.confine import machine_seal
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from benchmarks import common

CONTROL = TimeControl(decision_ms=1000, startup_ms=20000)
AON = find_game("alles-oder-nichts")


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


async def start_cost(spec: BotSpec, starts: int, logs: Path) -> tuple[float, float]:
    """(median ms to ready, mean arena CPU ms per start) over ``starts`` starts and closes."""
    walls = []
    cpu = 0.0
    for _ in range(starts):
        began, cpu_began = time.perf_counter(), own_cpu()
        bot = await BotProcess.start(spec, time_control=CONTROL, log_dir=logs)
        walls.append(time.perf_counter() - began)
        cpu += own_cpu() - cpu_began
        await bot.close()
    return statistics.median(walls) * 1000, cpu / starts * 1000


async def play_for(seconds: float, spec: BotSpec, logs: Path, index: int, found: dict) -> None:
    """Matches of C bots, one after the other, for ``seconds``: the referee's latencies and the
    bots' decision times go into ``found``."""
    bots = [
        await BotProcess.start(
            BotSpec(f"m{index}s{seat}", spec.argv, cwd=spec.cwd, sandbox=spec.sandbox),
            time_control=CONTROL,
            log_dir=logs,
        )
        for seat in range(4)
    ]
    try:
        end, seed = time.perf_counter() + seconds, index * 1000
        while time.perf_counter() < end:
            seed += 1
            result = await run_match(
                AON, bots, seed=seed, match_id=f"m{seed}", time_control=CONTROL
            )
            found["referee_us"].extend(result.referee_us)
            found["decision_ms"].extend(ms for seat in result.decision_ms for ms in seat)
            found["faults"] += len(result.faults)
    finally:
        for bot in bots:
            await bot.close()


async def churn(spec: BotSpec, logs: Path, stop: trio.Event, counted: list[int]) -> None:
    """Start and close a bot again and again until ``stop``."""
    while not stop.is_set():
        bot = await BotProcess.start(spec, time_control=CONTROL, log_dir=logs)
        await bot.close()
        counted[0] += 1


async def stall(spec: BotSpec, matches: int, seconds: float, with_churn: bool) -> dict:
    found: dict = {"referee_us": [], "decision_ms": [], "faults": 0}
    counted = [0]
    with tempfile.TemporaryDirectory(prefix="arena-spawn-") as scratch:
        logs = Path(scratch)
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            if with_churn:
                nursery.start_soon(
                    churn, BotSpec("churn", spec.argv, cwd=spec.cwd), logs, stop, counted
                )
            async with trio.open_nursery() as players:
                for index in range(matches):
                    players.start_soon(play_for, seconds, spec, logs, index, found)
            stop.set()
    latencies = sorted(found["referee_us"])
    return {
        "referee_max_ms": latencies[-1] / 1000,
        "referee_p999_ms": latencies[int(len(latencies) * 0.999)] / 1000,
        "decision_max_ms": max(found["decision_ms"]),
        "decisions": len(latencies),
        "starts": counted[0],
        "faults": found["faults"],
    }


async def main(args: argparse.Namespace) -> None:
    machine = machine_seal()
    print(
        f"default seal here: {machine.method or 'none'}"
        + (f" ({machine.why_not})" if machine.why_not else "")
        + f"; bubblewrap: {machine.bwrap_problem or 'works'}; "
        f"bots as {os.environ.get('ARENA_BOT_USER') or ('@own' if os.geteuid() == 0 else 'you')}"
    )
    load_before = common.load_note()
    starts = []
    with common.scratch(prefix="arena-spawn-bot-") as folder:
        binary = common.build_c_bot(folder)[0]
        with tempfile.TemporaryDirectory(prefix="arena-spawn-logs-") as logs:
            for label, sandbox in (("unsealed", "none"), ("sealed", None), ("bwrap", "bwrap")):
                if sandbox == "bwrap" and machine.bwrap_problem:
                    continue
                spec = BotSpec("c", (binary,), cwd=str(folder), sandbox=sandbox)
                rounds = [
                    await start_cost(spec, args.starts, Path(logs)) for _ in range(args.rounds)
                ]
                starts.append(
                    (
                        label,
                        common.median_spread((r[0] for r in rounds), 2),
                        common.median_spread((r[1] for r in rounds), 2),
                    )
                )
        spec = BotSpec("c", (binary,), cwd=str(folder))
        results: dict[bool, list[dict]] = {False: [], True: []}
        for number in range(args.rounds):
            for with_churn in (False, True):
                results[with_churn].append(
                    await stall(spec, args.matches, args.seconds, with_churn)
                )
            common.progress(f"round {number + 1}/{args.rounds} done")
    print(f"{load_before} at the start, {common.load_note()} at the end")
    print(f"1. start cost, {args.starts} starts a round: median (lowest-highest) of {args.rounds}")
    common.table(["seal", "ms to ready", "arena CPU ms per start"], starts)
    print(
        f"2. {args.matches} matches at once for {args.seconds:g} s, without / with bots "
        f"started and closed alongside: median (lowest-highest) of {args.rounds} rounds"
    )
    common.table(
        ["figure", "alone", "with starts alongside"],
        [
            (
                key,
                common.median_spread((r[key] for r in results[False]), 2),
                common.median_spread((r[key] for r in results[True]), 2),
            )
            for key in ("referee_max_ms", "referee_p999_ms", "decision_max_ms", "faults", "starts")
        ],
    )


if __name__ == "__main__":
    parser = common.parser(__doc__)
    parser.add_argument("--starts", type=int, default=30)
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = common.parse(
        parser,
        smoke={"starts": 2, "matches": 2, "seconds": 0.2, "rounds": 1},
        trusted_bots=False,  # switching to a bot's own user is part of what a start costs
    )
    trio.run(main, arguments)
