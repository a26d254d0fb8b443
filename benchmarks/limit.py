"""The referee against the physical floor, in one run: decisions/s over whole matches vs a bare
loop's round trips/s to an echo child, and the referee's CPU per decision.

    python3 benchmarks/limit.py [--seconds 1.5] [--repeat 5] [--game ID] [--record] [--no-python]

For each game (4 players) it plays whole matches with the C starter bot (sample_bots/c/
random_bot.c, compiled here) in every seat and counts decisions per second; in the same run, just
before each game, it measures the physical floor: a bare Python loop (write, poll, read; no trio,
no JSON) to a minimal C echo child (benchmarks.common.floor_round_trips), on the same core. A
decision is one round trip, so "of floor" (decisions/s over the floor's round trips/s) is the
share of the pipe's own speed the referee reaches, and "CPU x floor" its CPU per decision over
the floor loop's CPU per round trip. Each round also measures a C parent with the same child
("C <-> C": no Python on either side), printed above the table. Then the same with the Python
random bot (sample_bots/python/random_bot.py) against a minimal Python echo child.

The machine is shared and noisy, so the measurements are interleaved (floor, game, for each game
in turn, round after round), each ratio compares a game with the floor measured just before it,
and each figure is the median of ``--repeat`` rounds with the lowest and highest round in
brackets. "referee CPU" is the arena process's CPU time (user + system) per decision (the goal:
at most 30 us with C bots); "quick" is the share of replies read by the referee's quick read (one
poll, no trio scheduler pass; arena/referee/process.py). Everything runs on one core, as the arena
pins a match's referee and its bots (``--affinity off``: placed by the system). Bot processes are
started once per round and game, outside the timed part. ``--record`` also writes a compact gzip
record per match (to a temporary folder), as a tournament with ``records = true`` does.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.games import GAMES, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from benchmarks import common
from benchmarks.common import quick_reads_taken


async def referee_decisions(
    game_id: str, argv: list[str], seconds: float, first_seed: int, records: Path | None
) -> tuple[float, float, float]:
    """Decisions per second over whole matches (at least one) of ``game_id``, one bot per seat,
    the referee process's CPU time per decision in microseconds (user + system), and the share
    of decisions whose reply came by the quick read."""
    game = find_game(game_id)
    players = common.PLAYERS.get(game_id, game.player_counts[0])
    control = TimeControl(decision_ms=5000)
    logs = Path(tempfile.mkdtemp(prefix="arena-bench-logs-"))
    bots = [
        await BotProcess.start(
            BotSpec(f"b{i}", (*argv, str(i))), time_control=control, log_dir=logs
        )
        for i in range(players)
    ]
    decisions = 0
    quick = quick_reads_taken()
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
        return decisions / elapsed, cpu / decisions * 1e6, (quick_reads_taken() - quick) / decisions
    finally:
        for bot in bots:
            await bot.close()
        shutil.rmtree(logs, ignore_errors=True)


def measure(
    games: list[str], seconds: float, repeat: int, record: bool, python: bool
) -> tuple[dict[str, dict[str, list[float]]], list[float]]:
    """({"C" / "Python": {figure: [one per round]}}, C <-> C round trips/s per round): for each
    game "<game>" (decisions/s), "<game> cpu", "<game> quick", and "<game> floor" and "<game>
    floor cpu" (the floor measured just before it)."""
    figures: dict[str, dict[str, list[float]]] = {}
    c_to_c: list[float] = []
    with common.scratch() as folder:
        echo = common.build_c_echo(folder)
        ping = common.build_c_ping(folder)
        kinds = {"C": (echo, common.build_c_bot(folder))}
        if python:
            kinds["Python"] = (common.write_py_echo(folder), [sys.executable, str(common.PY_BOT)])
        records = folder / "records" if record else None
        for round_number in range(repeat):
            c_to_c.append(common.c_floor_round_trips(ping, echo, seconds))
            for kind, (echo_argv, bot_argv) in kinds.items():
                rows = figures.setdefault(kind, {})
                for game_id in games:
                    # Each game right after its own floor: the ratio compares neighbours in time.
                    floor, floor_cpu = common.floor_round_trips(echo_argv, seconds)
                    if records is not None:
                        shutil.rmtree(records, ignore_errors=True)
                        records.mkdir()
                    rate, cpu_us, quick = trio.run(
                        referee_decisions, game_id, bot_argv, seconds, 1000 * round_number, records
                    )
                    for name, value in (
                        ("", rate),
                        (" cpu", cpu_us),
                        (" quick", quick),
                        (" floor", floor),
                        (" floor cpu", floor_cpu),
                    ):
                        rows.setdefault(game_id + name, []).append(value)
            common.progress(f"round {round_number + 1}/{repeat} done")
    return figures, c_to_c


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--seconds", type=float, default=1.5, help="per measurement [1.5]")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds [5]")
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
    args = common.parse(parser, smoke={"seconds": 0.05, "repeat": 1})
    games = [find_game(g).id for g in args.game] if args.game else list(GAMES)
    load_before = common.load_note()
    with common.pinned_like_the_arena(args.affinity == "on"):
        figures, c_to_c = measure(games, args.seconds, args.repeat, args.record, not args.no_python)
    print(
        f"median (lowest-highest) of {args.repeat} interleaved rounds, {args.seconds:g} s each"
        f"{', with match records' if args.record else ''}; "
        + ("pinned to one core" if args.affinity == "on" else "not pinned")
        + f"; {load_before} at the start, {common.load_note()} at the end"
    )
    print(
        f"C <-> C (a C parent, the C echo child): {common.median_spread(c_to_c, 0)} round trips/s"
    )
    for kind, rows in figures.items():
        print(f"{kind} bots; floor: a bare Python loop to a minimal {kind} echo child")

        def ratios(game_id: str, name: str, over: str, rows=rows) -> list[float]:
            return [a / b for a, b in zip(rows[game_id + name], rows[game_id + over])]

        common.table(
            ["game", "floor/s", "decisions/s", "of floor", "referee CPU us/d", "floor CPU us/rt",
             "CPU x floor", "quick"],
            [
                (
                    game_id,
                    f"{common.median(rows[game_id + ' floor']):,.0f}",
                    f"{common.median(rows[game_id]):,.0f}",
                    common.median_spread(ratios(game_id, "", " floor"), 3),
                    common.median_spread(rows[game_id + " cpu"]),
                    f"{common.median(rows[game_id + ' floor cpu']):.2f}",
                    common.median_spread(ratios(game_id, " cpu", " floor cpu"), 1),
                    f"{common.median(rows[game_id + ' quick']):.0%}",
                )
                for game_id in games
            ],
        )  # fmt: skip


if __name__ == "__main__":
    main()
