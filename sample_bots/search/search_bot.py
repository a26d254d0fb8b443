#!/usr/bin/env python3
"""A searching Trick Arena bot: determinized Monte Carlo on worlds sampled by arena.kit.

For each decision it samples worlds consistent with what its seat knows, tries every legal action
in each followed by a quick rollout to the end of the deal, and plays the best on average (see
search.py). It plays all four games, every player count and option.

Needs the arena package: ``pip install -e PATH_TO_ARENA`` (or PYTHONPATH), for ``arena.kit``,
``arena.games`` and the bot helper ``protocol/``; run from a checkout it finds them itself.

Run it:   python3 search_bot.py [SEED] [--fraction F]
Time: it thinks for F (default 0.35) of the request's ``time_left_ms``, less a safety margin of
40 ms for the pipes and its own start-up of each decision; the kit's search stops within one move
of that deadline. A decision with one legal action is answered at once. Each decision costs about
that much CPU time too, so give it ``cpu_seconds`` to match in a long tournament (SPEC.md
section 7).
"""

import os
import random
import sys
from pathlib import Path

try:
    from arena.kit import Deadline, search  # noqa: F401  (checks the kit is there, as new as this)
    from protocol.bot import Bot, run
except ImportError:  # not installed: find the arena checkout this bot sits in
    for folder in Path(__file__).resolve().parents:
        if (folder / "arena" / "kit").is_dir() and (folder / "protocol" / "bot.py").is_file():
            sys.path.insert(0, str(folder))
            for module in [m for m in sys.modules if m == "arena" or m.startswith("arena.")]:
                del sys.modules[module]  # an installed arena without the kit: use this checkout
            break
    else:
        sys.exit(
            f"{Path(__file__).name}: cannot import arena.kit and protocol/: install the arena "
            "(pip install -e PATH_TO_ARENA) or put its checkout on PYTHONPATH"
        )
    from protocol.bot import Bot, run

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search

HEURISTIC = Path(__file__).resolve().parents[1] / "heuristic"  # the heuristic bot's tactics
if (HEURISTIC / "tactics").is_dir():
    sys.path.insert(0, str(HEURISTIC))
    import tactics
else:
    tactics = None  # this folder copied alone: no prior, the search decides everything

SAFETY_MS = 40


def _arguments(argv):
    seed, fraction = int(os.environ.get("BOT_SEED", "0")), 0.35
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--fraction" and args:
            fraction = float(args.pop(0))
        else:
            seed = int(arg)
    if not 0 < fraction <= 0.9:
        sys.exit(f"--fraction {fraction}: expected a number in (0, 0.9]")
    return seed, fraction


SEED, FRACTION = _arguments(sys.argv[1:])


class SearchBot(Bot):
    name = "search"
    version = "1"

    def on_match_start(self, match):
        match.memory["rng"] = random.Random(f"{SEED}:{match.id}:{match.seat}")

    def choose(self, request, match):
        rng = match.memory.setdefault("rng", random.Random(SEED))
        budget_ms = request.time_left_ms * FRACTION - SAFETY_MS
        if budget_ms <= 0:
            return rng.choice(request.legal)
        prior = None
        if tactics is not None and request.view.get("game") in search.PRIOR_GAMES:
            prior = tactics.choose(request.view, list(request.legal), match.events, rng)
        return search.choose(
            request.view,
            request.legal,
            match.events,
            match.options,
            budget_ms / 1000,
            rng,
            prior=prior,
        )


if __name__ == "__main__":
    run(SearchBot())
