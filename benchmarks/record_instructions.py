"""The record's own work, counted in instructions (the same on a loaded machine as on a quiet one).

    python benchmarks/record_instructions.py [--game ID] [--matches 12]

Runs, under valgrind's cachegrind (which counts the user-space instructions a process executes),
matches of the "instant" transport (benchmarks/referee.py: a bot with its answer ready, so no pipe
and no scheduler pass: the referee's own work) without a record and with the compact gzip record
tournaments write, for 2 and for 2 + ``--matches`` matches each, and prints per decision the
instructions of the referee alone and those the record adds (the start-up cancels out). The kernel's
work (creating and writing the file) is not counted: benchmarks/records.py prints that part.
Needs valgrind (apt-get install valgrind).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(game_id: str, matches: int, mode: str) -> None:
    """Play the matches (in the process valgrind watches) and print their decisions."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import trio
    from limit import PLAYERS
    from referee import InstantTransport

    from arena.games import find_game
    from arena.referee.bot_spec import BotSpec
    from arena.referee.clock import TimeControl
    from arena.referee.match import run_match
    from arena.referee.process import BotProcess

    game = find_game(game_id)
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-records-"))

    async def play() -> int:
        control = TimeControl(decision_ms=5000)
        seats = PLAYERS.get(game_id, game.player_counts[0])
        bots = [
            await BotProcess.connect(
                BotSpec(f"i{i}", ("instant",)), InstantTransport(), time_control=control
            )
            for i in range(seats)
        ]
        decisions = 0
        for seed in range(matches):
            path = None if mode == "off" else folder / f"{seed}.jsonl.gz"
            result = await run_match(
                game, bots, seed=seed, match_id=f"m{seed}", time_control=control, record_path=path
            )
            decisions += sum(len(times) for times in result.decision_ms)
        return decisions

    print("decisions", trio.run(play))
    shutil.rmtree(folder, ignore_errors=True)


def count(game_id: str, matches: int, mode: str) -> tuple[int, int]:
    """(instructions, decisions) of one process playing ``matches`` matches."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            os.path.realpath(sys.executable),
            __file__,
            "--child",
            game_id,
            str(matches),
            mode,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    refs = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    decisions = re.search(r"^decisions (\d+)$", done.stdout, re.M)
    if refs is None or decisions is None:
        raise SystemExit(f"valgrind said:\n{done.stderr[-2000:]}")
    return int(refs.group(1).replace(",", "")), int(decisions.group(1))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", help="one game (repeatable); default: all")
    parser.add_argument("--matches", type=int, default=12)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("record_instructions.py needs valgrind (apt-get install valgrind)")
    sys.path.insert(0, str(ROOT))
    from arena.games import GAMES, find_game

    games = [find_game(g).id for g in args.game] if args.game else list(GAMES)
    print(f"instructions per decision, {args.matches} matches (the instant transport)")
    for game_id in games:
        per = {}
        for mode in ("off", "gzip"):
            small, large = count(game_id, 2, mode), count(game_id, 2 + args.matches, mode)
            per[mode] = (large[0] - small[0], large[1] - small[1])
        off = per["off"][0] / per["off"][1]
        extra = per["gzip"][0] / per["gzip"][1] - off
        print(
            f"  {game_id:<18} referee {off:9.0f}  record {extra:7.0f}  "
            f"(x{(off + extra) / off:.3f}; {extra * per['gzip'][1] / args.matches / 1000:.0f}k"
            " per match)"
        )


if __name__ == "__main__":
    main()
