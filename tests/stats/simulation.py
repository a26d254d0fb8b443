"""Simulated results for the statistics of the verdicts: the shapes real per-deal differences
take, and runs of the arena's own rules on them. Shared by tests/stats/test_verdicts.py (small,
seeded) and benchmarks/stats.py (full, with Monte Carlo standard errors).

Every shape has mean 0 and standard deviation 1, so an effect of 0.2 adds 0.2 sd. The rare-loss
shapes are an ordinary deal (normal, sd 1 before the loss is mixed in) that now and then loses
L of those sd, shifted so that the mean stays 0: most deals look like a gain of p L.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.stats.moments import Moments
from arena.tournament.standings import OVERALL, Standings, StandingsFold
from arena.tournament.store import StoredMatch

Shape = Callable[[random.Random], float]
SCALE = 1000  # values are kept to 1/1000 sd, as exact integers (the arena's sums are exact)


def _rare_loss(rate: float, loss: float) -> Shape:
    spread = math.sqrt(1 + loss * loss * rate * (1 - rate))

    def draw(rng: random.Random) -> float:
        lost = loss if rng.random() < rate else 0.0
        return (rng.gauss(0.0, 1.0) - lost + rate * loss) / spread

    return draw


def _student_t3(rng: random.Random) -> float:
    chi2 = rng.gammavariate(1.5, 2.0)  # chi-squared with 3 degrees of freedom
    return rng.gauss(0.0, 1.0) / math.sqrt(chi2 / 3) / math.sqrt(3)  # t(3) has variance 3


SHAPES: dict[str, Shape] = {
    "normal": lambda rng: rng.gauss(0.0, 1.0),
    "student t(3)": _student_t3,
    "exponential, skew +2": lambda rng: rng.expovariate(1.0) - 1.0,
    "exponential, skew -2": lambda rng: 1.0 - rng.expovariate(1.0),
    "sparse (80% zeros)": lambda rng: 0.0 if rng.random() < 0.8 else rng.gauss(0.0, math.sqrt(5)),
    "5% lose 3.4 sd": _rare_loss(0.05, 3.4),
    "2% lose 10 sd": _rare_loss(0.02, 10.0),
    "1% lose 30 sd": _rare_loss(0.01, 30.0),
}
# the false "better" rate each shape may reach, in units of alpha (SPEC 10.10)
ALLOWED = {name: 2.0 if name == "1% lose 30 sd" else 1.0 for name in SHAPES}


@dataclass(frozen=True)
class Decision:
    verdict: str  # "better", "worse", "no change" or "undecided"
    low: float | None  # the interval printed with it
    high: float | None


Decide = Callable[[Moments], Decision]


@dataclass(frozen=True)
class Run:
    verdict: str
    deals: int
    covered: bool | None  # the interval held the true mean (None: no interval)


def compare_run(
    shape: Shape, effect: float, rng: random.Random, looks: Sequence[int], decide: Decide
) -> Run:
    """One comparison of one game: deals drawn from ``shape`` + ``effect``, judged by
    ``decide`` at each of ``looks`` until it decides (or the last look)."""
    total = squares = n = 0
    decision = Decision("undecided", None, None)
    for look in looks:
        while n < look:
            value = round((shape(rng) + effect) * SCALE)
            total += value
            squares += value * value
            n += 1
        decision = decide(Moments(n, {SCALE: [total, squares]}))
        if decision.verdict != "undecided":
            break
    covered = None
    if decision.low is not None and decision.high is not None:
        covered = decision.low <= effect <= decision.high
    return Run(decision.verdict, n, covered)


@dataclass(frozen=True)
class Rate:
    hits: int
    runs: int

    @property
    def value(self) -> float:
        return self.hits / self.runs if self.runs else math.nan

    @property
    def error(self) -> float:
        """The Monte Carlo standard error of the rate."""
        p = self.value
        return math.sqrt(max(p * (1 - p), 1 / self.runs) / self.runs) if self.runs else math.nan

    def __str__(self) -> str:
        return f"{100 * self.value:5.1f}% ± {100 * self.error:.1f}"


@dataclass(frozen=True)
class Summary:
    """Runs of one shape and effect: how often each verdict came, the deals, the coverage."""

    runs: Sequence[Run]

    def rate(self, verdict: str) -> Rate:
        return Rate(sum(r.verdict == verdict for r in self.runs), len(self.runs))

    @property
    def mean_deals(self) -> float:
        return sum(r.deals for r in self.runs) / len(self.runs)

    @property
    def coverage(self) -> Rate:
        judged = [r for r in self.runs if r.covered is not None]
        return Rate(sum(bool(r.covered) for r in judged), len(judged))


def compare_runs(
    shape: Shape, effect: float, runs: int, seed: int, looks: Sequence[int], decide: Decide
) -> Summary:
    rng = random.Random(seed)
    return Summary([compare_run(shape, effect, rng, looks, decide) for _ in range(runs)])


# -- rankings: synthetic duplicate tournaments for the standings' separation ----------------------

GAME = ("g", "alles-oder-nichts")  # a label and a game where a high score wins


def deal_matches(
    skills: dict[str, float], deal: int, rng: random.Random, *, luck: float = 6.0
) -> list[StoredMatch]:
    """One deal of one table of every bot of ``skills`` (as many seats), in every rotation:
    each seat's cards carry a luck shared by the rotations, each bot its skill, each match some
    noise; scores in tenths, placings from them."""
    bots = list(skills)
    players = len(bots)
    cards = [rng.gauss(0.0, luck) for _ in range(players)]
    matches = []
    for rotation in range(players):
        seats = tuple(bots[(k - rotation) % players] for k in range(players))
        scores = tuple(
            round(10 * (cards[k] + skills[seats[k]] + rng.gauss(0.0, 3.0))) for k in range(players)
        )
        placings = tuple(1 + sum(other > mine for other in scores) for mine in scores)
        matches.append(
            StoredMatch(
                match_id=f"{GAME[0]}/t0/d{deal}/r{rotation}",
                game=GAME[0],
                game_id=GAME[1],
                table=0,
                deal=deal,
                rotation=rotation,
                seed=deal,
                players=players,
                options={},
                bots=seats,
                scores=scores,
                placings=placings,
                teams=None,
                forfeited=(),
                faults=(),
                decision_ms=tuple(() for _ in seats),
            )
        )
    return matches


Settled = Callable[[Standings, int], bool]  # the standings at a look, and the number of looks


def stop_run(
    skills: dict[str, float], rng: random.Random, rounds: Sequence[int], settled: Settled
) -> int | None:
    """The stopping rule (SPEC 10.9) on one table of the bots of ``skills``: the deals after
    which ``settled`` first called the table settled, None when it never did."""
    fold = StandingsFold(list(skills), [GAME[0]])
    deal = 0
    for look in rounds:
        while deal < look:
            for match in deal_matches(skills, deal, rng):
                fold.add(match)
            deal += 1
        if settled(fold.standings(), len(rounds)):
            return look
    return None


def separated_tables(skills: dict[str, float], rng: random.Random, deals: int) -> tuple[bool, bool]:
    """The standings of ``deals`` deals of one table: whether the game's table, and the overall
    one, mark some pair of neighbours as separated."""
    fold = StandingsFold(list(skills), [GAME[0]])
    for deal in range(deals):
        for match in deal_matches(skills, deal, rng):
            fold.add(match)
    standings = fold.standings()
    return tuple(len(set(standings.shared_ranks(scope))) > 1 for scope in (GAME[0], OVERALL))
