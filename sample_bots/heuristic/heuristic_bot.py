#!/usr/bin/env python3
"""A heuristic Trick Arena bot that plays all four games with a plan (see tactics/).

Built on the optional helper protocol/bot.py: the helper speaks the protocol, this file keeps each
match's events and hands every request to the tactics of its game.

Run it:   python3 heuristic_bot.py [SEED]      (or set BOT_SEED; the default seed is 0)
The seed only matters for the rare random choice (a game the bot does not know).
"""

import os
import random
import sys
from pathlib import Path

try:
    from protocol.bot import Bot, run
except ImportError:  # running from a checkout without installing: the repository root holds protocol/
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.bot import Bot, run

import tactics

SEED = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BOT_SEED", "0"))


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1"

    def on_match_start(self, match):
        match.memory["rng"] = random.Random(f"{SEED}:{match.id}:{match.seat}")

    def choose(self, request, match):
        rng = match.memory.setdefault("rng", random.Random(SEED))
        return tactics.choose(request.view, request.legal, match.events, rng)


if __name__ == "__main__":
    run(HeuristicBot())
