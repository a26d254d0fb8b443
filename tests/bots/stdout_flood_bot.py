"""At its first request, writes one endless line to stdout (no newline ever) until the pipe closes."""

import sys

from botlib import play

CHUNK = b"x" * 65536


def choose(request, hello):
    try:
        while True:
            sys.stdout.buffer.write(CHUNK)
    except (BrokenPipeError, OSError):
        sys.exit(0)


play(choose, "stdout-flood")
