"""Exact running sums of per-deal values, and the t-interval of their mean.

A per-deal value is a ratio of integers (a mean of integer scores or placings over a bot's seats
of one deal), so :class:`Moments` keeps its count, sum and sum of squares exactly, as integer
numerators per denominator. Adding the same values in any order, or merging partial sums, gives
bit-for-bit the same statistics: a fold extended as matches arrive equals a full refold.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from arena.stats.tdist import t_cdf, t_ppf

CONFIDENCE = 0.95


@dataclass
class Moments:
    """Count, sum and sum of squares of exact rational values ``numerator / denominator``."""

    n: int = 0
    # denominator -> [sum of numerators, sum of squared numerators]
    sums: dict[int, list[int]] = field(default_factory=dict)

    def add(self, numerator: int, denominator: int = 1) -> None:
        if denominator <= 0:
            raise ValueError(f"denominator must be > 0, got {denominator}")
        g = math.gcd(numerator, denominator)
        numerator, denominator = numerator // g, denominator // g
        entry = self.sums.setdefault(denominator, [0, 0])
        entry[0] += numerator
        entry[1] += numerator * numerator
        self.n += 1

    def add_fraction(self, value: Fraction) -> None:
        self.add(value.numerator, value.denominator)

    def merge(self, other: Moments) -> None:
        self.n += other.n
        for denominator, (s, ss) in other.sums.items():
            entry = self.sums.setdefault(denominator, [0, 0])
            entry[0] += s
            entry[1] += ss

    def copy(self) -> Moments:
        return Moments(self.n, {d: list(v) for d, v in self.sums.items()})

    def total(self) -> Fraction:
        return sum((Fraction(s, d) for d, (s, _) in self.sums.items()), Fraction(0))

    def total_squares(self) -> Fraction:
        return sum((Fraction(ss, d * d) for d, (_, ss) in self.sums.items()), Fraction(0))

    def _scaled(self) -> tuple[int, int, int]:
        """(L, S, Q): the sum is S / L and the sum of squares Q / L², L the denominators' lcm.
        Integers only: the same values as :meth:`total` and :meth:`total_squares`, without a
        Fraction per denominator (the standings ask for thousands of these)."""
        common = math.lcm(*self.sums)
        total = squares = 0
        for denominator, (s, ss) in self.sums.items():
            scale = common // denominator
            total += s * scale
            squares += ss * scale * scale
        return common, total, squares

    def mean(self) -> float | None:
        if not self.n:
            return None
        common, total, _ = self._scaled()
        return total / (common * self.n)  # int / int is correctly rounded, as float(Fraction)

    def variance(self) -> float | None:
        """The sample variance (n - 1 in the denominator), exact until the final division."""
        if self.n < 2:
            return None
        common, total, squares = self._scaled()
        n = self.n
        # (Q/L² - (S/L)²/n) / (n - 1), over one denominator
        return (n * squares - total * total) / (common * common * n * (n - 1))

    def to_data(self) -> dict:
        """Plain JSON-ready data (integers may be large: JSON has no limit, Python reads them)."""
        return {"n": self.n, "sums": {str(d): v for d, v in sorted(self.sums.items())}}

    @classmethod
    def from_data(cls, data: Mapping) -> Moments:
        return cls(
            int(data["n"]), {int(d): [int(v[0]), int(v[1])] for d, v in data["sums"].items()}
        )


@dataclass(frozen=True)
class Estimate:
    """The mean of per-deal values with its t-interval, and P(true mean > 0).

    ``low``, ``high`` and ``p_positive`` are None below two deals and with zero spread: a few
    equal values are not enough data, never certainty."""

    n: int
    mean: float | None
    sd: float | None
    low: float | None
    high: float | None
    p_positive: float | None
    confidence: float = CONFIDENCE

    @property
    def half_width(self) -> float | None:
        return None if self.high is None or self.mean is None else self.high - self.mean

    @property
    def p_two_sided(self) -> float | None:
        """The two-sided p-value of "the true mean is 0" (the t-test of the same statistic):
        for a direction the data chose (None when ``p_positive`` is)."""
        if self.p_positive is None or self.mean is None or self.sd is None:
            return None
        t = abs(self.mean) / (self.sd / math.sqrt(self.n))
        return min(1.0, 2 * t_cdf(-t, self.n - 1))  # (from the tail: 1 - P loses digits)

    def to_data(self) -> dict:
        return {
            "n": self.n,
            "mean": self.mean,
            "sd": self.sd,
            "low": self.low,
            "high": self.high,
            "p_positive": self.p_positive,
        }


def estimate(moments: Moments, confidence: float = CONFIDENCE) -> Estimate:
    """The t-interval of the mean: mean ± t_{n-1}((1 + c) / 2) · sd / sqrt(n), with n the deals.

    ``p_positive`` = T_{n-1}(mean / (sd / sqrt(n))): under a flat prior on normal per-deal values
    with unknown spread, the posterior probability that the true mean is above zero (the same
    t-statistic as the interval, so P >= c exactly when the one-sided c-interval excludes 0)."""
    n = moments.n
    mean = moments.mean()
    variance = moments.variance()
    if mean is None or variance is None:
        return Estimate(n, mean, None, None, None, None, confidence)
    sd = math.sqrt(max(variance, 0.0))
    se = sd / math.sqrt(n)
    if se == 0.0:  # every value the same: not enough data to say how sure
        return Estimate(n, mean, sd, None, None, None, confidence)
    half = t_ppf((1 + confidence) / 2, n - 1) * se
    return Estimate(n, mean, sd, mean - half, mean + half, t_cdf(mean / se, n - 1), confidence)


def estimate_values(values: Iterable[float | Fraction], confidence: float = CONFIDENCE) -> Estimate:
    """:func:`estimate` of plain values (floats are taken exactly as they are stored)."""
    moments = Moments()
    for value in values:
        moments.add_fraction(Fraction(value))
    return estimate(moments, confidence)


def holm(p_values: Sequence[float | None], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected with a family-wise error of at
    most ``alpha`` (None: untestable, never rejected, and not counted in the family)."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    rejected = [False] * len(p_values)
    for rank, (p, i) in enumerate(tested):
        if p > alpha / (len(tested) - rank):
            break
        rejected[i] = True
    return rejected
