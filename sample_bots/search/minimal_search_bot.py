"""The shortest searching bot: random rollouts to the end of the deal on sampled worlds, within
a deadline (docs/writing-a-bot.md)."""

import random

from arena.kit import Deadline, search
from protocol.bot import run


def choose(request, match):
    if len(request.legal) == 1:
        return request.legal[0]
    rng = match.memory.setdefault("rng", random.Random(match.id))
    deadline = Deadline(0.3 * request.time_left_ms / 1000)  # think for 30% of the time allowed
    tally = search(request.view, request.legal, match.events, rng, deadline, match.options)
    return tally.best()  # the best mean over the worlds tried (legal[0] if none was finished)


run(choose, name="minimal-search")
