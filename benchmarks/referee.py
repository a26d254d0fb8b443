"""The referee's own cost per decision, with real bot processes and with in-memory fake bots.

    python benchmarks/referee.py [--matches 20] [--game ID] [--players N]

Prints, for real stdlib-Python random bots (subprocesses) and for in-memory fakes: matches/s,
decisions/s, and the referee's latency per decision (median, 99th percentile, max: from having a
reply to having written the next request, i.e. rules + view + encoding + the write).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.bot_process import BotProcess  # noqa: E402
from arena.bots import BotSpec  # noqa: E402
from arena.clock import TimeControl  # noqa: E402
from arena.games import find_game  # noqa: E402
from arena.referee import run_match  # noqa: E402
from arena.testing import FakeBot, connect_fake  # noqa: E402

RANDOM_BOT = Path(__file__).resolve().parent.parent / "tests" / "bots" / "random_bot.py"


class RandomFake(FakeBot):
    async def on_request(self, request):
        legal = request["legal"]
        await self.send({"type": "action", "id": request["id"], "index": request["id"] % len(legal)})


async def run(game, players: int, matches: int, fake: bool) -> tuple[float, int, list[float]]:
    control = TimeControl(decision_ms=5000)
    latencies: list[float] = []
    decisions = 0
    async with trio.open_nursery() as nursery:
        if fake:
            bots = [await connect_fake(nursery, RandomFake(f"f{i}")) for i in range(players)]
        else:
            logs = Path(tempfile.mkdtemp(prefix="arena-bench-"))
            bots = [await BotProcess.start(BotSpec(f"r{i}", (sys.executable, str(RANDOM_BOT), str(i))),
                                           time_control=control, log_dir=logs)
                    for i in range(players)]
        start = time.perf_counter()
        try:
            for seed in range(matches):
                result = await run_match(game, bots, seed=seed, match_id=f"b{seed}",
                                         time_control=control)
                latencies.extend(result.referee_us)
                decisions += sum(len(times) for times in result.decision_ms)
        finally:
            elapsed = time.perf_counter() - start
            for bot in bots:
                await bot.close()
    return elapsed, decisions, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--game", default="alles-oder-nichts")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    game = find_game(args.game)
    print(f"{game.id}, {args.players} players, {args.matches} matches each")
    for label, fake in (("real Python bots", False), ("in-memory fakes ", True)):
        elapsed, decisions, latencies = trio.run(run, game, args.players, args.matches, fake)
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(f"{label}: {args.matches / elapsed:7.1f} matches/s, {decisions / elapsed:8.0f} "
              f"decisions/s; referee latency per decision: median "
              f"{statistics.median(latencies):6.1f} us, p99 {p99:7.1f} us, max {latencies[-1]:7.1f} us")


if __name__ == "__main__":
    main()
