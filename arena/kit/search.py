"""A search that keeps time: sample worlds, try every action in each, stop at the deadline.

    from arena.kit import Deadline, search

    deadline = Deadline(0.3 * request.time_left_ms / 1000)   # wall clock, as the referee's
    tally = search(request.view, request.legal, match.events, rng, deadline, match.options)
    tally.best()                                             # the action to play

Each world is played on only to the end of its current deal (:func:`play_out_deal`): a deal is a
few dozen moves, where the rest of a match can be hundreds (a Vingt-down match has about 350
decisions, so a world of its 26 exchange actions rolled out to the end of the match costs 26 x
350 moves). The clock is read before every move of every rollout, and a world the deadline cuts
off is dropped (not every action was tried in it: keeping it would favour the actions tried
first), so a search ends at most one move, or one sampling of a world, after its deadline.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games.core import GameState

from .clone import clone_world
from .worlds import Events, sample_world


class OutOfTime(Exception):
    """The deadline passed in the middle of a rollout."""


class Deadline:
    """A moment ``seconds`` from now on ``clock`` (wall-clock time by default: the referee
    measures a decision in wall-clock time, SPEC.md section 5)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.at = clock() + seconds

    def passed(self) -> bool:
        return self.clock() >= self.at

    def left(self) -> float:
        """Seconds to go (negative once passed)."""
        return self.at - self.clock()


def random_move(world: GameState, rng: random.Random) -> str:
    """A legal action of the seat to move, uniformly at random: the default rollout policy."""
    legal = world.legal_actions()
    return legal[rng.randrange(len(legal))]


Policy = Callable[[GameState, random.Random], str]


def play_out_deal(
    world: GameState,
    rng: random.Random,
    *,
    first: str | None = None,
    policy: Policy = random_move,
    deadline: Deadline | None = None,
) -> list[int]:
    """Play ``world`` on to the end of its current deal (or of the match, when that comes first)
    and return every seat's total then (its team's in a team game). ``first``: an action applied
    before the rollout (the one being evaluated: it may end the deal itself). ``policy(world,
    rng)`` picks every other move. With a ``deadline`` the clock is read before each move, and
    OutOfTime raised once it has passed; ``world`` is then left in the middle of the deal."""
    seen = len(world.events)
    deal_ends = world.DEAL_ENDS  # event type -> its field of running totals (GameState)
    if first is not None:
        world.apply(first)
    while True:
        for event in world.events[seen:]:
            key = deal_ends.get(event.data.get("type", ""))
            if key is not None:
                return _per_seat(world, event.data[key])
        if world.is_over:
            return list(world.result().scores)
        if deadline is not None and deadline.passed():
            raise OutOfTime
        seen = len(world.events)
        world.apply(policy(world, rng))


def _per_seat(world: GameState, totals: list[int]) -> list[int]:
    if len(totals) == world.players:
        return list(totals)
    teams = world.SPEC.teams(world.players) or ()
    return [totals[team] for team in teams]


Rollout = Callable[[GameState, str, random.Random, Deadline], Sequence[float]]
Value = Callable[[Sequence[float], int, GameState], float]


def rollout_randomly(
    world: GameState, action: str, rng: random.Random, deadline: Deadline
) -> list[int]:
    """The default rollout of :func:`search`: ``action``, then random play to the deal's end."""
    return play_out_deal(world, rng, first=action, deadline=deadline)


def own_total(totals: Sequence[float], seat: int, world: GameState) -> float:
    """The default value of :func:`search`: the seat's total at the end of the deal, negated in a
    game where a low score wins (Vingt-down)."""
    return totals[seat] if world.HIGHER_IS_BETTER else -totals[seat]


@dataclass
class Tally:
    """What a search found: each action's value in every world it completed, in the same order
    for every action (``values[a][i]`` and ``values[b][i]`` come from the same world and luck)."""

    actions: list[str]
    values: dict[str, list[float]] = field(default_factory=dict)

    @property
    def worlds(self) -> int:
        return len(self.values[self.actions[0]]) if self.values else 0

    def mean(self, action: str) -> float:
        values = self.values[action]
        return sum(values) / len(values) if values else 0.0

    def best(self) -> str:
        """The action with the highest mean value (the first on a tie, and the first action when
        no world was completed)."""
        if self.worlds == 0:
            return self.actions[0]
        return max(self.actions, key=self.mean)


def search(
    view: dict[str, Any],
    legal: Sequence[str],
    events: Events,
    rng: random.Random,
    deadline: Deadline,
    options: dict[str, Any] | None = None,
    *,
    rollout: Rollout = rollout_randomly,
    value: Value = own_total,
    max_worlds: int | None = None,
) -> Tally:
    """Until ``deadline`` (or ``max_worlds``): sample a world (:func:`sample_world`) and, on a
    copy of it per action, play the action and roll out (``rollout(copy, action, rng,
    deadline)``, every seat's total at the end: random play to the end of the deal by default),
    each action with the same rollout seed, so that they are compared on equal luck; score each
    action's totals with ``value(totals, seat, world)``. A world the deadline cuts off is left
    out. Returns the :class:`Tally` (``tally.best()``)."""
    actions = list(legal)
    tally = Tally(actions, {action: [] for action in actions})
    seat = view["seat"]
    while not deadline.passed() and (max_worlds is None or tally.worlds < max_worlds):
        world = sample_world(view, events, rng, options)
        seed = rng.getrandbits(63)
        values = []
        try:
            for action in actions:
                copy = clone_world(world)
                totals = rollout(copy, action, random.Random(seed), deadline)
                values.append(value(totals, seat, world))
        except OutOfTime:
            break
        for action, found in zip(actions, values):
            tally.values[action].append(found)
    return tally
