#!/usr/bin/env python3
"""Starts once, then never again: the first process (no MARKER file yet) creates MARKER, says
ready and crashes at its first request; every later start writes a reason to stderr and exits.

Usage: start_once_bot.py MARKER
"""

import json
import sys
from pathlib import Path


def main() -> None:
    marker = Path(sys.argv[1])
    if marker.exists():
        print("start_once_bot: error: already started once", file=sys.stderr, flush=True)
        sys.exit(3)
    marker.write_text("started")
    for line in sys.stdin:
        if json.loads(line).get("type") == "hello":
            sys.stdout.write(json.dumps({"type": "ready", "name": "start_once"}) + "\n")
            sys.stdout.flush()
        elif json.loads(line).get("type") == "request":
            sys.exit(1)


if __name__ == "__main__":
    main()
