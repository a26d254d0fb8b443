"""At its first request, allocates memory without end (10 MB at a time, touched so it is real).

A safety stop for the shared test machine: past 1.5 GB it stops allocating and just sleeps, so an
unenforced memory limit shows up as timeouts instead of taking the machine down."""

import time

from botlib import play

hoard = []


def choose(request, hello):
    while len(hoard) < 150:
        hoard.append(b"x" * (10 * 1024 * 1024))
    while True:
        time.sleep(60)


play(choose, "memory-hog")
