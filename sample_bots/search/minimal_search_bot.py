"""The shortest searching bot: random rollouts on sampled worlds (docs/writing-a-bot.md)."""

import random
import time

from arena.kit import clone_world, sample_world
from protocol.bot import run


def rollout(world, rng):
    """Random play to the end of the match: every seat's final score."""
    while not world.is_over:
        legal = world.legal_actions()
        world.apply(legal[rng.randrange(len(legal))])
    return world.result().scores


def choose(request, match):
    legal, view = request.legal, request.view
    if len(legal) == 1:
        return legal[0]
    rng = match.memory.setdefault("rng", random.Random(match.id))
    sign = -1 if view["game"] == "vingt-down" else 1  # there a low score wins
    deadline = time.monotonic() + 0.3 * request.time_left_ms / 1000
    totals = dict.fromkeys(legal, 0)
    while time.monotonic() < deadline:
        world = sample_world(view, match.events, rng, match.options)
        seed = rng.getrandbits(63)  # one world and one luck for every action: a fair comparison
        for action in legal:
            copy = clone_world(world)  # much cheaper than sampling the same world again
            copy.apply(action)
            totals[action] += sign * rollout(copy, random.Random(seed))[match.seat]
    return max(legal, key=totals.__getitem__)


run(choose, name="minimal-search")
