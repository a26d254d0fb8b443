"""Answers every request a little too late: ``time_left_ms + margin_ms + LATE_MS`` after it
arrives (the first argument, in milliseconds, may be a fraction). It sleeps until 2 ms before
that moment and busy-waits the rest, for precision."""

import sys
import time

from botlib import answer, play

late_s = float(sys.argv[1]) / 1000


def choose(request, hello):
    arrived = time.perf_counter()
    margin_ms = hello["limits"].get("margin_ms", 0)
    due = arrived + (request["time_left_ms"] + margin_ms) / 1000 + late_s
    if due - time.perf_counter() > 0.002:
        time.sleep(due - time.perf_counter() - 0.002)
    while time.perf_counter() < due:
        pass
    return answer(request)


play(choose, "just-late")
