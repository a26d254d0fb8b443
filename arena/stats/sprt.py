"""A sequential probability ratio test on paired per-deal differences (for ``arena compare``).

**Model.** In each game, the per-deal differences d_1, d_2, ... (NEW's per-deal value minus OLD's,
positive: NEW did better with the same cards against the same field) are independent
N(mu, sigma^2). The hypotheses are stated in units of sigma (a normalized effect, as fishtest's
normalized SPRT does, so one setting fits every game's score scale):

    H0: mu = e0 * sigma  ("not better", e0 = 0 by default)
    H1: mu = e1 * sigma  ("better", e1 = 0.2 by default)

With sigma known, the log-likelihood ratio of n differences with mean m is
``n (e1 - e0) (z - (e0 + e1) / 2)`` with ``z = m / sigma``. As in the generalized SPRT (GSPRT)
sigma is estimated from the differences so far; the plug-in is calibrated for small samples:
``z = Phi^-1(T_{n-1}(t)) / sqrt(n)``, with t the one-sample t-statistic ``m / (s / sqrt(n))``
(under H0 this z has exactly the normal distribution the known-sigma formula assumes, for
normal differences; for large n it is ``m / s``). Games are independent, so their
LLRs add. Wald's bounds: decide H1 ("NEW is better") when LLR >= log((1 - beta) / alpha), H0
("NEW is not better") when LLR <= log(beta / (1 - alpha)); alpha is the chance of calling NEW
better when it is not (mu = e0 sigma), beta the chance of missing an improvement of e1 sigma.
Wald's approximations ignore the overshoot of the last step, so the real error rates are at most
about alpha / (1 - beta) and beta / (1 - alpha). Below ``MIN_DEALS`` deals a game adds nothing
(its sample spread is too rough to plug in).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

from arena.stats.moments import Moments
from arena.stats.tdist import t_cdf

_NORMAL = NormalDist()

MIN_DEALS = 5  # per game, before its LLR counts

BETTER = "better"
NOT_BETTER = "not better"
UNDECIDED = "undecided"


@dataclass(frozen=True)
class SprtSettings:
    alpha: float = 0.05
    beta: float = 0.05
    e0: float = 0.0
    e1: float = 0.2

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError(f"alpha and beta must be in (0, 0.5), got {self.alpha}, {self.beta}")
        if not self.e1 > self.e0:
            raise ValueError(f"the effect under H1 must exceed H0's, got {self.e0}, {self.e1}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def expected_deals(self) -> tuple[float, float]:
        """Wald's approximate mean number of deals (one game) under H0 and under H1."""
        a, b = self.lower, self.upper
        drift = (self.e1 - self.e0) ** 2 / 2  # E[LLR per deal] under H1; minus that under H0
        under_h0 = ((1 - self.alpha) * a + self.alpha * b) / -drift
        under_h1 = (self.beta * a + (1 - self.beta) * b) / drift
        return under_h0, under_h1


def game_llr(n: int, mean: float | None, sd: float | None, settings: SprtSettings) -> float:
    """One game's LLR from n per-deal differences with this mean and sample sd."""
    if n < MIN_DEALS or mean is None or sd is None:
        return 0.0
    if sd == 0.0:
        if mean == 0.0:
            z = 0.0  # identical results every deal: no sign of any difference
        else:
            return math.copysign(math.inf, mean)
    else:
        # the t-statistic carried to the normal quantile of the same tail probability, so that
        # the plug-in spread of the first few deals does not inflate the LLR (heavy t tails)
        t = mean / sd * math.sqrt(n)
        p = min(max(t_cdf(t, n - 1), 1e-300), 1 - 1e-16)
        z = _NORMAL.inv_cdf(p) / math.sqrt(n)
    return n * (settings.e1 - settings.e0) * (z - (settings.e0 + settings.e1) / 2)


def llr(differences: Mapping[str, Moments], settings: SprtSettings) -> float:
    """The LLR summed over games (``differences``: game -> sums of its per-deal differences)."""
    total = 0.0
    for moments in differences.values():
        variance = moments.variance()
        sd = None if variance is None else math.sqrt(max(variance, 0.0))
        total += game_llr(moments.n, moments.mean(), sd, settings)
    return total


def verdict(value: float, settings: SprtSettings) -> str:
    if value >= settings.upper:
        return BETTER
    if value <= settings.lower:
        return NOT_BETTER
    return UNDECIDED
