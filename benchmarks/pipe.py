"""The limit: how many ~500-byte JSON-line round trips per second a trio parent gets through a pipe.

    python benchmarks/pipe.py [--seconds 2]

Children: a minimal C echo program (compiled here with cc) and a minimal Python one (readline,
json, print flush). The parent reads with ``wait_readable`` + ``os.read`` on the raw fd, writes
with trio's ``send_all`` and moves one reused CancelScope deadline per request (the limit the
referee is measured against). The "lean" variant writes with ``os.write`` on the raw fd (no
scheduler pass for a write that fits the pipe) and moves the deadline only every millisecond, as
the referee now does: the stricter limit. benchmarks/limit.py imports :func:`pipe_round_trips` to
measure the limit in the same run as the referee.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

C_ECHO = r"""
#include <stdio.h>
#include <string.h>
int main(void) {
    static char line[1 << 20];
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    while (fgets(line, sizeof line, stdin)) {
        fputs("{\"type\":\"action\",\"id\":1,\"index\":0}\n", stdout);
        fflush(stdout);
    }
    return 0;
}
"""

PY_ECHO = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    print(json.dumps({"type": "action", "id": message.get("id", 0), "index": 0}), flush=True)
"""

PAYLOAD = (
    b'{"type":"request","match_id":"m","id":1,"decision":"play","view":{"hand":'
    + b'["10H","QS","AD","7C","9D","KH"],"pad":"'
    + b"x" * 380
    + b'"},'
    + b'"legal":["10H","QS"],"time_left_ms":1000}\n'
)


def build_c_echo(folder: Path) -> list[str] | None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = folder / "echo.c"
    source.write_text(C_ECHO)
    binary = folder / "echo"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(source)], check=True)
    return [str(binary)]


async def pipe_round_trips(argv: list[str], seconds: float, lean: bool = False) -> float:
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
                    await process.stdin.send_all(PAYLOAD)
                else:
                    now = trio.current_time()
                    if scope.deadline < now + 5:
                        scope.deadline = now + 5.001
                    os.write(out_fd, PAYLOAD)  # a 500-byte write always fits the empty pipe
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


async def measure_all(seconds: float) -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        c_echo = build_c_echo(folder)
        script = folder / "echo.py"
        script.write_text(PY_ECHO)
        for lean in (False, True):
            suffix = ", lean writes" if lean else ""
            if c_echo is not None:
                figures["C echo child" + suffix] = await pipe_round_trips(c_echo, seconds, lean)
            figures["Python echo child" + suffix] = await pipe_round_trips(
                [sys.executable, str(script)], seconds, lean
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    figures = trio.run(measure_all, args.seconds)
    print(f"{'trio parent <-> child (~500-byte line)':<40} {'round trips/s':>14} {'us each':>8}")
    for name, rate in figures.items():
        print(f"{name:<40} {rate:>14,.0f} {1e6 / rate:>8.1f}")


if __name__ == "__main__":
    main()
