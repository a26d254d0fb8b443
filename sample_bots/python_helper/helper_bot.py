#!/usr/bin/env python3
"""A random bot written with the optional helper protocol/bot.py (compare ../python/random_bot.py,
which speaks the bare protocol). The helper does the handshake and the match lifecycle; you write
one function from a request to an action.

Run it:   python3 helper_bot.py [SEED]      (or set BOT_SEED; the default seed is 0)
It needs `protocol/` (and msgspec) importable: from a checkout of the arena it finds it by itself.
"""

import os
import random
import sys
from pathlib import Path

try:
    from protocol.bot import run
except (
    ImportError
):  # not installed: find the arena checkout this bot sits in, which holds protocol/
    for folder in Path(__file__).resolve().parents:
        if (folder / "protocol" / "bot.py").is_file():
            sys.path.insert(0, str(folder))
            break
    else:
        sys.exit(
            f"{Path(__file__).name}: cannot import protocol/ (the arena's bot helper): install the "
            "arena (pip install -e PATH_TO_ARENA) or copy its protocol/ folder beside this bot"
        )
    from protocol.bot import run

SEED = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BOT_SEED", "0"))


def choose(request, match):
    """Any legal action, at random; seeded per match so each match replays exactly."""
    rng = match.memory.setdefault("rng", random.Random(f"{SEED}:{match.id}:{match.seat}"))
    return rng.randrange(len(request.legal))  # an index into request.legal


if __name__ == "__main__":
    run(choose, name="helper-random", version="1")
