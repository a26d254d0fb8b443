"""Referee and record check at the timeout edge, on a busy machine: how many records of matches
whose bots answer right at their time limit `arena replay --check` refuses (the goal: none).

    python3 benchmarks/timeout_edge.py [--matches 300] [--hogs 4] [--decision-ms 100]
                                       [--margin-ms 50] [--seed 1]

Each match is Alles oder Nichts for three in-memory fake bots (arena.referee.testing) on the wall
clock, in this process, recorded to a plain record: seat 0 answers each request after a delay
drawn around its deadline (``time_left_ms`` + margin: just before it, just after it, well after
it, so that its answer comes stale while its next request waits, or at once), seats 1 and 2 at
once. Meanwhile ``--hogs`` busy processes (default: two per core) fill the cores, so the referee
is descheduled at any point of a decision, also between taking a request's time and writing it.
Every record is then checked (arena.referee.record.replay_record, what ``arena replay --check``
runs); a refusal is a disagreement between the referee and the checker. Printed: the matches,
the timeouts and stale lines their records hold, the early timeouts (called before the request's
own time was up, by the referee's own measure: its result's ``decision_ms``; only some of them
show in the record, when the bot's answer is read as stale before that time), the disagreements
(and the first few messages), and the load.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

GAME = "alles-oder-nichts"
SHOWN = 5  # disagreement messages printed


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes that only burn CPU (ended by stop_hogs)."""
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]


def stop_hogs(hogs: list[subprocess.Popen[bytes]]) -> None:
    for hog in hogs:
        hog.kill()
    for hog in hogs:
        hog.wait()


@dataclass
class Counts:
    matches: int = 0
    timeouts: int = 0
    early: int = 0  # timeouts called before the request's own time was up
    stale: int = 0
    refused: int = 0
    messages: list[str] = field(default_factory=list)  # the first SHOWN refusals


def play_all(args: argparse.Namespace, folder: Path) -> Counts:
    """Play and check the matches."""
    import trio

    from arena.games import find_game
    from arena.games.cards import Rng
    from arena.referee.clock import TimeControl
    from arena.referee.match import run_match
    from arena.referee.record import ReplayError, read_record, replay_record
    from arena.referee.testing import FakeBot, connect_fake

    control = TimeControl(decision_ms=args.decision_ms, margin_ms=args.margin_ms)
    game = find_game(GAME)

    class EdgeBot(FakeBot):
        """Answers each request after a delay drawn around its deadline."""

        def __init__(self, rng: Rng) -> None:
            super().__init__("edge")
            self.rng = rng

        async def on_request(self, request: dict) -> None:
            deadline_ms = request["time_left_ms"] + control.margin_ms
            kind = self.rng.below(4)
            if kind == 0:  # just before the deadline
                delay_ms = deadline_ms - self.rng.below(2000) / 1000
            elif kind == 1:  # just after it
                delay_ms = deadline_ms + self.rng.below(2000) / 1000
            elif kind == 2:  # well after: read while a later request waits (stale)
                delay_ms = deadline_ms + 1 + self.rng.below(30_000) / 1000
            else:
                delay_ms = 0
            await trio.sleep(max(0.0, delay_ms) / 1000)
            await self.send({"type": "action", "id": request["id"], "index": 0})

    counts = Counts()

    async def one(number: int) -> None:
        path = folder / f"m{number}.jsonl"
        edge = EdgeBot(Rng(args.seed * 1_000_003 + number))
        bots = [edge, FakeBot("quick1"), FakeBot("quick2")]
        async with trio.open_nursery() as nursery:
            procs = [await connect_fake(nursery, bot, time_control=control) for bot in bots]
            try:
                result = await run_match(
                    game,
                    procs,
                    seed=number,
                    match_id=f"m{number}",
                    time_control=control,
                    max_faults=10_000,
                    record_path=path,
                )
            finally:
                for proc in procs:
                    await proc.close()
        entries = read_record(path)
        first_id: dict[int, int] = {}
        for entry in entries:
            if entry["type"] == "request":
                first_id.setdefault(entry["seat"], entry["id"])
            elif entry["type"] == "fault" and entry["kind"] == "timeout":
                counts.timeouts += 1
                # The referee's own time for it (its result's decision_ms): a timeout called
                # before the request's time was up cut the bot short.
                seat = entry["seat"]
                waited_ms = result.decision_ms[seat][entry["id"] - first_id[seat]]
                if waited_ms < control.decision_ms + control.margin_ms:
                    counts.early += 1
        counts.stale += sum(1 for e in entries if e["type"] == "reply" and e["verdict"] == "stale")
        try:
            replay_record(path)
        except ReplayError as error:
            counts.refused += 1
            if len(counts.messages) < SHOWN:
                counts.messages.append(str(error))
        else:
            path.unlink()  # (a refused record is kept for a look)
        counts.matches += 1

    async def main() -> None:
        for number in range(args.matches):
            await one(number)
            if number % 50 == 49:
                common.progress(f"{number + 1} matches, {counts.refused} refused")

    trio.run(main)
    return counts


def main() -> None:
    found = common.parser(__doc__)
    found.add_argument("--matches", type=int, default=300, help="matches to play and check")
    found.add_argument(
        "--hogs", type=int, default=2 * (os.cpu_count() or 1), help="busy processes meanwhile"
    )
    found.add_argument("--decision-ms", type=int, default=100, help="decision_ms of the matches")
    found.add_argument("--margin-ms", type=int, default=50, help="margin_ms of the matches")
    found.add_argument("--seed", type=int, default=1, help="seeds the edge bot's delays")
    found.add_argument("--keep", help="a folder to keep the refused records in (default: none)")
    args = common.parse(found, {"matches": 2, "hogs": 1, "decision_ms": 10, "margin_ms": 2})
    hogs = start_hogs(args.hogs)
    began = time.perf_counter()
    try:
        if args.keep:
            folder = Path(args.keep)
            folder.mkdir(parents=True, exist_ok=True)
            counts = play_all(args, folder)
        else:
            with tempfile.TemporaryDirectory(prefix="arena-edge-") as tmp:
                counts = play_all(args, Path(tmp))
        load = common.load_note()
    finally:
        stop_hogs(hogs)
    seconds = time.perf_counter() - began
    common.table(
        (
            "time control",
            "hogs",
            "matches",
            "timeouts",
            "early timeouts",
            "stale lines",
            "disagreements",
            "s",
        ),
        [
            (
                f"{args.decision_ms}+{args.margin_ms} ms",
                args.hogs,
                counts.matches,
                counts.timeouts,
                counts.early,
                counts.stale,
                counts.refused,
                f"{seconds:.0f}",
            )
        ],
    )
    for message in counts.messages:
        print(f"refused: {message}")
    print(load)


if __name__ == "__main__":
    main()
