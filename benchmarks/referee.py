"""The referee's own cost per decision, with real bot processes and with in-memory fake bots.

    python3 benchmarks/referee.py [--matches 20] [--game ID] [--players N]

Prints, for real stdlib-Python random bots (subprocesses), for in-memory fakes and for an
"instant" transport (a bot that has its answer ready when the referee reads, so no scheduler pass
and no pipe: the referee's own work and nothing else): matches/s, decisions/s, the referee's
latency per decision (median, 99th percentile, max: from having a reply to having written the next
request, i.e. rules + view + encoding + the write), and the process's CPU time per decision.
"""

from __future__ import annotations

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
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.testing import FakeBot, connect_fake
from benchmarks import common

RANDOM_BOT = common.ROOT / "tests" / "bots" / "random_bot.py"


class RandomFake(FakeBot):
    async def on_request(self, request):
        legal = request["legal"]
        await self.send(
            {"type": "action", "id": request["id"], "index": request["id"] % len(legal)}
        )


async def run(game, players: int, matches: int, kind: str) -> tuple[float, float, int, list[float]]:
    control = TimeControl(decision_ms=5000)
    latencies: list[float] = []
    decisions = 0
    async with trio.open_nursery() as nursery:
        if kind == "instant":
            bots = [
                await BotProcess.connect(
                    BotSpec(f"i{i}", ("instant",)), common.InstantTransport(), time_control=control
                )
                for i in range(players)
            ]
        elif kind == "fake":
            bots = [await connect_fake(nursery, RandomFake(f"f{i}")) for i in range(players)]
        else:
            logs = Path(tempfile.mkdtemp(prefix="arena-bench-"))
            bots = [
                await BotProcess.start(
                    BotSpec(f"r{i}", (sys.executable, str(RANDOM_BOT), str(i))),
                    time_control=control,
                    log_dir=logs,
                )
                for i in range(players)
            ]
        start, cpu = time.perf_counter(), time.process_time()
        try:
            for seed in range(matches):
                result = await run_match(
                    game, bots, seed=seed, match_id=f"b{seed}", time_control=control
                )
                latencies.extend(result.referee_us)
                decisions += sum(len(times) for times in result.decision_ms)
        finally:
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            for bot in bots:
                await bot.close()
    return elapsed, cpu, decisions, latencies


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--game", default="alles-oder-nichts")
    parser.add_argument("--players", type=int, default=4)
    args = common.parse(parser, smoke={"matches": 2})
    game = find_game(args.game)
    load_before = common.load_note()
    rows = []
    for label, kind in (
        ("real Python bots", "process"),
        ("in-memory fakes", "fake"),
        ("instant transport", "instant"),
    ):
        elapsed, cpu, decisions, latencies = trio.run(run, game, args.players, args.matches, kind)
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        rows.append(
            (
                label,
                f"{args.matches / elapsed:.1f}",
                f"{decisions / elapsed:.0f}",
                f"{statistics.median(latencies):.1f}",
                f"{p99:.1f}",
                f"{latencies[-1]:.1f}",
                f"{cpu / decisions * 1e6:.1f}",
            )
        )
    print(
        f"{game.id}, {args.players} players, {args.matches} matches each; {load_before} at the "
        f"start, {common.load_note()} at the end; latency: from a reply to the next request written"
    )
    common.table(
        ["bots", "matches/s", "decisions/s", "latency p50 us", "p99 us", "max us", "CPU us/d"],
        rows,
    )


if __name__ == "__main__":
    main()
