#!/usr/bin/env python3
"""A stdlib-only random bot: answers every request with a random legal action, by value.

Usage: random_bot.py [SEED [DIR]]. Without a seed it seeds itself from the name the referee gives
it in hello, so copies of it in one match play differently. While the file DIR/hold exists it holds
every request unanswered, so a test can stop a tournament mid-run however fast the machine is.
Reads one JSON message per line from stdin (SPEC.md section 4).
"""

import json
import random
import sys
import time
from pathlib import Path


def main() -> None:
    rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    seeded = len(sys.argv) > 1
    hold = Path(sys.argv[2], "hold") if len(sys.argv) > 2 else None
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            if not seeded:
                rng.seed(message["name"])
            reply = {"type": "ready", "name": "random_bot", "version": "1"}
        elif kind == "request":
            while hold is not None and hold.exists():
                time.sleep(0.01)
            reply = {"type": "action", "id": message["id"], "action": rng.choice(message["legal"])}
        elif kind == "fault":
            print(f"fault: {message['message']}", file=sys.stderr, flush=True)
            continue
        elif kind == "bye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
