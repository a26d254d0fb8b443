"""The referee against the limit, in one run: decisions/s over full matches vs raw pipe round trips/s.

    python benchmarks/limit.py [--seconds 1.5] [--repeat 5] [--game ID] [--record] [--no-python]

For each game (its default player count: 4 everywhere) it plays full matches with the C starter bot
(sample_bots/c/random_bot.c, compiled here) in every seat and counts decisions per second; in the
same run it measures the raw limit, a trio parent <-> the minimal C echo child of
benchmarks/pipe.py. The ratio referee/limit is the figure to watch (issue 22's goal: >= 0.6 with C
bots, and the referee's CPU per decision at most 30 us in every game). Then the same with the Python random bot
(sample_bots/python/random_bot.py) against the Python echo child. The ratio to pipe.py's stricter
"lean" limit (raw writes, as the referee now does them) is printed beside it.

The machine is shared and noisy, so the measurements are interleaved (limit, lean limit, game,
for each game in turn, round after round), each ratio compares a game with the limits measured just
before it, and each figure is the median of ``--repeat`` rounds. "referee CPU" is the arena
process's CPU time (user + system) per decision: less sensitive to the neighbours than the rates;
"quick" is the share of replies read by the referee's quick read (one poll, no trio scheduler
pass; arena/referee/process.py). The load average is printed: above the core count, every rate
and CPU figure is inflated by the neighbours.
By default everything runs on one core, as the arena pins a match's referee and its bots
(arena.referee.cores; ``--affinity off`` lets the system place them).
Bot processes are started once per round and game, outside the timed part. ``--record`` also writes a match record per match
(to a temporary folder), as a tournament with ``records = true`` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pipe import PY_ECHO, build_c_echo, pipe_round_trips

from arena.games import GAMES, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.cores import pinned, spread_cores
from arena.referee.match import run_match
from arena.referee.process import BotProcess, _QuickRead

C_BOT_SOURCE = ROOT / "sample_bots" / "c" / "random_bot.c"
PY_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"
PLAYERS = {"alles-oder-nichts": 4, "vingt-down": 4, "eight-rounds": 4, "all-fours": 4}


def build_c_bot(folder: Path) -> list[str]:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("benchmarks/limit.py needs a C compiler (cc) for the C starter bot")
    binary = folder / "random_bot"
    subprocess.run([compiler, "-O2", "-std=c11", "-o", str(binary), str(C_BOT_SOURCE)], check=True)
    return [str(binary)]


async def referee_decisions(
    game_id: str, argv: list[str], seconds: float, first_seed: int, records: Path | None
) -> tuple[float, float, float]:
    """Decisions per second over whole matches (at least one) of ``game_id``, one bot per seat,
    the referee process's CPU time per decision in microseconds (user + system), and the share
    of decisions whose reply came by the quick read."""
    game = find_game(game_id)
    players = PLAYERS.get(game_id, game.player_counts[0])
    control = TimeControl(decision_ms=5000)
    logs = Path(tempfile.mkdtemp(prefix="arena-bench-logs-"))
    bots = [
        await BotProcess.start(
            BotSpec(f"b{i}", (*argv, str(i))), time_control=control, log_dir=logs
        )
        for i in range(players)
    ]
    decisions = 0
    quick = _QuickRead.taken
    try:
        start, cpu = time.perf_counter(), time.process_time()
        seed = first_seed
        while True:
            record = records / f"{game_id}-{seed}.jsonl.gz" if records is not None else None
            result = await run_match(
                game, bots, seed=seed, match_id=f"m{seed}", time_control=control, record_path=record
            )
            decisions += sum(len(times) for times in result.decision_ms)
            seed += 1
            if time.perf_counter() - start >= seconds:
                break
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        return decisions / elapsed, cpu / decisions * 1e6, (_QuickRead.taken - quick) / decisions
    finally:
        for bot in bots:
            await bot.close()
        shutil.rmtree(logs, ignore_errors=True)


async def measure(
    games: list[str], seconds: float, repeat: int, record: bool, python: bool
) -> dict[str, dict[str, list[float]]]:
    """{"C" / "Python": {figure: [one per round]}}: for each game "<game>" (decisions/s),
    "<game> limit" and "<game> lean" (round trips/s, measured just before it) and "<game> cpu"."""
    figures: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # bots may run as another user (SPEC 7): they must reach the program
        echo = build_c_echo(folder)
        if echo is None:
            raise SystemExit("benchmarks/limit.py needs a C compiler (cc) for the echo child")
        (folder / "echo.py").write_text(PY_ECHO)
        kinds = {"C": (echo, build_c_bot(folder))}
        if python:
            kinds["Python"] = (
                [sys.executable, str(folder / "echo.py")],
                [sys.executable, str(PY_BOT)],
            )
        records = folder / "records" if record else None
        for round_number in range(repeat):
            for kind, (echo_argv, bot_argv) in kinds.items():
                rows = figures.setdefault(kind, {})
                for game_id in games:
                    # Each game right after its own limit: the ratio compares neighbours in time.
                    limit = await pipe_round_trips(echo_argv, seconds)
                    lean = await pipe_round_trips(echo_argv, seconds, True)
                    if records is not None:
                        shutil.rmtree(records, ignore_errors=True)
                        records.mkdir()
                    rate, cpu_us, quick = await referee_decisions(
                        game_id, bot_argv, seconds, 1000 * round_number, records
                    )
                    for name, value in (
                        ("", rate),
                        (" limit", limit),
                        (" lean", lean),
                        (" cpu", cpu_us),
                        (" quick", quick),
                    ):
                        rows.setdefault(game_id + name, []).append(value)
            print(f"  round {round_number + 1}/{repeat} done", file=sys.stderr)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="per measurement")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--game", action="append", help="one game (repeatable); default: all")
    parser.add_argument(
        "--record", action="store_true", help="write a match record per match (compact, gzip)"
    )
    parser.add_argument("--no-python", action="store_true", help="only the C bot and C echo")
    parser.add_argument(
        "--affinity",
        choices=("on", "off"),
        default="on",
        help="run everything (referee, bots, echo children) on one core, as the arena pins a "
        "match (on), or let the system place it (off) [on]",
    )
    args = parser.parse_args()
    games = [find_game(g).id for g in args.game] if args.game else list(GAMES)
    cores = spread_cores([1])[0] if args.affinity == "on" else None
    with pinned(cores):
        figures = trio.run(
            measure, games, args.seconds, args.repeat, args.record, not args.no_python
        )
    print(
        f"median of {args.repeat} interleaved rounds, {args.seconds:g} s each"
        f"{', with match records' if args.record else ''}; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        + (f"pinned to core {min(cores)}" if cores is not None else "not pinned")
    )
    for kind, rows in figures.items():
        print(
            f"{kind} bots (limit: trio <-> a minimal {kind} echo child; goals with C bots: "
            "ratio >= 0.6, referee CPU <= 30 us per decision)"
        )
        print(
            f"  {'game':<18} {'limit/s':>8} {'lean/s':>8} {'decisions/s':>12} {'ratio':>6} "
            f"{'lean':>5} {'referee CPU':>12} {'quick':>6}"
        )
        for game_id in games:
            # The ratio per round (each game against the limit measured just before), then the
            # median of those: the noise of a shared machine mostly cancels out.
            ratios = [r / lim for r, lim in zip(rows[game_id], rows[game_id + " limit"])]
            leans = [r / lim for r, lim in zip(rows[game_id], rows[game_id + " lean"])]
            median = {
                name: statistics.median(rows[game_id + name])
                for name in ("", " limit", " lean", " cpu", " quick")
            }
            print(
                f"  {game_id:<18} {median[' limit']:>8,.0f} {median[' lean']:>8,.0f} "
                f"{median['']:>12,.0f} {statistics.median(ratios):>6.2f} "
                f"{statistics.median(leans):>5.2f} {median[' cpu']:>7.1f} us/d "
                f"{median[' quick']:>6.0%}"
            )


if __name__ == "__main__":
    main()
