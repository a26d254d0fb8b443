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
