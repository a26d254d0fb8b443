"""The pipe alone: ~500-byte JSON-line round trips per second between a parent and an echo child.

    python3 benchmarks/pipe.py [--seconds 2] [--affinity on|off]

Children: a minimal C echo program (compiled here with cc) and a minimal Python one (readline,
json, print flush). Parents, per child:

- ``floor``: a bare Python loop (os.write, one poll, os.read; no trio, no JSON): the physical
  floor every ratio of docs/performance.md is taken against (benchmarks.common.floor_round_trips);
- ``C <-> C`` (the C child only): a C parent doing the same, no Python on either side;
- ``trio``: a trio parent that writes with ``send_all`` and reads with ``wait_readable`` +
  ``os.read`` on the raw fd, moving one reused CancelScope deadline per request;
- ``trio, lean``: the same with ``os.write`` (no scheduler pass for a write that fits the pipe)
  and the deadline moved only every millisecond. The referee bypasses these trio paths (its quick
  read polls the bot's pipe itself: arena/referee/process.py), so they are not its limit.

By default everything runs on one core, as the arena pins a match (``--affinity off``: placed by
the system). benchmarks/limit.py measures the floor in the same run as the referee.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common


async def trio_round_trips(argv: list[str], seconds: float, lean: bool = False) -> float:
    """Round trips per second with one child, reading raw fds, one reused cancel scope."""
    process = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out_fd = process.stdin.fileno()
    in_fd = process.stdout.fileno()
    os.set_blocking(in_fd, False)
    count = 0
    try:
        with trio.CancelScope() as scope:
            start = time.perf_counter()
            end = start + seconds
            while True:
                if not lean:
                    scope.deadline = trio.current_time() + 5
                    await process.stdin.send_all(common.PAYLOAD)
                else:
                    now = trio.current_time()
                    if scope.deadline < now + 5:
                        scope.deadline = now + 5.001
                    os.write(out_fd, common.PAYLOAD)  # a 500-byte write always fits the empty pipe
                buffer = b""
                while not buffer.endswith(b"\n"):
                    await trio.lowlevel.wait_readable(in_fd)
                    buffer += os.read(in_fd, 65536)
                count += 1
                if count % 256 == 0 and time.perf_counter() >= end:
                    break
        return count / (time.perf_counter() - start)
    finally:
        await process.stdin.aclose()
        await process.wait()


def measure_all(seconds: float) -> list[tuple[str, str, float]]:
    """(parent, child, round trips/s) for every parent and child."""
    figures = []
    with common.scratch() as folder:
        c_echo = common.build_c_echo(folder)
        children = {"C echo": c_echo, "Python echo": common.write_py_echo(folder)}
        for child, echo in children.items():
            figures.append(
                ("floor (Python loop)", child, common.floor_round_trips(echo, seconds)[0])
            )
            if child == "C echo":
                ping = common.build_c_ping(folder)
                figures.append(("C <-> C", child, common.c_floor_round_trips(ping, echo, seconds)))
            for lean in (False, True):
                rate = trio.run(trio_round_trips, echo, seconds, lean)
                figures.append(("trio, lean" if lean else "trio", child, rate))
    return figures


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement [2]")
    parser.add_argument("--affinity", choices=("on", "off"), default="on")
    args = common.parse(parser, smoke={"seconds": 0.1})
    with common.pinned_like_the_arena(args.affinity == "on"):
        figures = measure_all(args.seconds)
    pinned = "pinned to one core" if args.affinity == "on" else "not pinned"
    print(f"~500-byte line round trips, {args.seconds:g} s each, {pinned}; {common.load_note()}")
    common.table(
        ["parent", "child", "round trips/s", "us each"],
        [(parent, child, f"{rate:,.0f}", f"{1e6 / rate:.2f}") for parent, child, rate in figures],
        left=2,
    )


if __name__ == "__main__":
    main()
