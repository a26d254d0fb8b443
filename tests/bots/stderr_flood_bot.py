"""Plays honestly, but writes 256 KB to stderr with every answer (megabytes over a match)."""

import sys

from botlib import answer, play

NOISE = ("stderr flood " * 80 + "\n") * 250  # ~256 KB


def choose(request, hello):
    sys.stderr.write(NOISE)
    sys.stderr.flush()
    return answer(request)


play(choose, "stderr-flood")
