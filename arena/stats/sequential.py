"""The sequential verdict of ``arena compare`` on paired per-deal differences, and the always-valid
confidence interval printed with it (SPEC.md 10.10).

**What the data are.** Per game, d_1, d_2, ... : NEW's per-deal score minus OLD's with the same
cards against the same field (positive: NEW did better). Their shape is whatever the games make:
skewed, heavy-tailed, mostly zeros, or mostly small gains with a rare big loss (a forfeit costs
about 30 standard deviations of an ordinary deal).

**Why not a likelihood ratio test.** An SPRT (fishtest's normalized one, what this arena used
before, or a multinomial GSPRT) decides "better" after about ``3 / (e1 (effect - e1 / 2))``
deals. On data with a rare big loss the deals before the first loss look like a clean gain: 1% of
deals losing 30 sd leaves the other 99% looking 0.3 sd better, and a test that stops after ~70
deals stops before the loss shows half the time (measured: 50% false "better"). No test can see a
loss that has not happened; what it can do is ask for more deals before it believes a small
apparent gain. A class of hidden losses that fakes an apparent gain of z sd, while adding at most
V times the ordinary variance, strikes in a fraction z^2 / V of the deals, so it stays hidden for
n deals with probability about exp(-n z^2 / V): the evidence that rules it out grows with
n z^2 = t^2, the squared t-statistic. Hence the rule:

- **better** when the mean is at least ``FLOOR`` (5) standard errors above e0 sd (t >= 5, t the
  one-sample t-statistic of the differences), after at least ``MIN_DEALS`` deals; a big gain
  needs few deals (1 sd: ~16), a gain of 0.2 sd ~600. Equivalently, a generalized likelihood
  ratio test (Lai's sequential GLR) with threshold t^2 / 2 = 12.5; its false "better" rate on
  normal data is about 0.001 over all looks, and the benchmark (benchmarks/stats.py) measures it
  on the other shapes: at most alpha, and 1% of deals losing 30 sd about 8%. The bound is also
  never below the always-valid boundary at alpha / (2 games) (below), so a small alpha asks for
  more;
- **worse** symmetrically (t <= -5);
- **no change** when the always-valid (1 - beta) interval of the mean lies within +-e1 sd: a
  change of e1 sd or more either way is then ruled out (false "no change" at most beta); **not
  better** when it lies below +e1 sd: a gain of e1 sd is ruled out, a loss not yet;
- faults count on their own: a game in which NEW forfeited more of its matches than OLD did in
  the same deals and rotations is **worse** (a crash is never made good by good play elsewhere);
- a game whose differences have no spread decides nothing from the t-statistic: when every
  difference is exactly 0 it is **no change** once an improvement of e1 sd, which must differ
  from 0 in at least a fraction e1^2 / (1 + e1^2) of the deals (Cauchy-Schwarz), would have shown
  one with probability 1 - beta; before that, and with equal non-zero differences, it is not
  enough data.

**Looks.** After every 2 deals up to 32, then at 48, 64, 96, 128, 192, ... (each power of two
and the midway multiple of 3): fine looks where a big gain decides, few where a small apparent
gain could still be a hidden loss (more looks there would give chance more tries).

**The interval** printed at a sequential verdict is a confidence sequence (Robbins' normal
mixture, as in Howard et al. 2021 and, with the sample standard deviation, Waudby-Smith et al.'s
asymptotic confidence sequences): it holds at every look at once, so it holds at whatever look
the test stopped (measured coverage at the stop: >= 98% on normal data, >= 92% on the skewed
shapes). It is never narrower than the fixed-sample t-interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from arena.stats.moments import Moments
from arena.stats.tdist import t_ppf

FLOOR = 5.0  # standard errors a "better" (or "worse") needs at least
MIN_DEALS = 12  # per game, before the t-statistic may decide
MIXTURE_RHO = 10.0  # the normal mixture's precision, in deals: the sequence is tightest near here
FINE_LOOKS_UP_TO = 32  # looks every 2 deals up to here, then at 48, 64, 96, 128, ...


class Verdict(StrEnum):
    BETTER = "better"
    WORSE = "worse"
    NO_CHANGE = "no change"  # a change of e1 sd or more ruled out either way
    NOT_BETTER = "not better"  # a gain of e1 sd or more ruled out; a loss not yet
    UNDECIDED = "undecided"


FINAL = (Verdict.BETTER, Verdict.WORSE, Verdict.NO_CHANGE)  # a game's last word: it stops


@dataclass(frozen=True)
class TestSettings:
    """alpha: the false "better" rate to keep (over every look and game; see the module's
    docstring for how rare big losses are handled); beta: the false "no change" rate at a change
    of e1 sd; e0: "better" means better than e0 sd; e1: the smallest change in sd that matters."""

    __test__ = False  # (pytest: not a test class)

    alpha: float = 0.05
    beta: float = 0.05
    e0: float = 0.0
    e1: float = 0.2

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError(f"alpha and beta must be in (0, 0.5), got {self.alpha}, {self.beta}")
        if not 0 <= self.e0 < self.e1:
            raise ValueError(f"expected 0 <= e0 < e1 (in sd), got e0 = {self.e0}, e1 = {self.e1}")

    @property
    def confidence(self) -> float:
        """The level of the interval printed (and of "no change")."""
        return 1 - self.beta

    def identical_deals(self) -> int:
        """Deals with every difference exactly 0 after which "no change" is sure at 1 - beta."""
        rate = self.e1 * self.e1 / (1 + self.e1 * self.e1)
        return math.ceil(math.log(self.beta) / math.log1p(-rate))


def mixture_bound(n: int, alpha: float) -> float:
    """The two-sided always-valid boundary in standard errors: P(|mean - mu| >= bound * sd /
    sqrt(n) at any n) <= alpha for normal data of known sd (Robbins' normal mixture with
    precision MIXTURE_RHO, Ville's inequality)."""
    return math.sqrt(
        (1 + MIXTURE_RHO / n) * (math.log1p(n / MIXTURE_RHO) + 2 * math.log(1 / alpha))
    )


def looks(most: int) -> list[int]:
    """The deal counts at which a sequential comparison looks, ending at ``most``."""
    found = list(range(2, min(most, FINE_LOOKS_UP_TO) + 1, 2))
    step = FINE_LOOKS_UP_TO
    while step < most:
        step = step * 3 // 2 if step & (step - 1) == 0 else step * 4 // 3  # 32 48 64 96 128 ...
        found.append(min(step, most))
    if not found or found[-1] != most:
        found.append(most)
    return found


@dataclass(frozen=True)
class Judgement:
    """One game's verdict at one look, with what it rests on."""

    verdict: Verdict
    n: int  # deals
    mean: float | None
    sd: float | None
    t: float | None  # standard errors of the mean above e0 sd (None: no spread, or < 2 deals)
    bound: float  # |t| a "better" or "worse" needs now
    low: float | None  # the interval (always valid when sequential), None without a spread
    high: float | None
    confidence: float
    why: str  # one phrase: what decided it, or what is missing

    @property
    def final(self) -> bool:
        """Its last word: the game plays no more deals (``not better`` may still turn into
        ``no change`` or ``worse``)."""
        return self.verdict in FINAL


def judge(
    moments: Moments,
    settings: TestSettings,
    *,
    games: int = 1,
    sequential: bool = True,
    forfeits: tuple[int, int] = (0, 0),
) -> Judgement:
    """The verdict of one game's per-deal differences so far (``moments``). ``games`` is how
    many games share alpha; ``sequential``: the test looks again later (the interval is then the
    always-valid one; a single look gets the t-interval); ``forfeits``: (matches NEW forfeited
    where OLD did not, matches OLD forfeited where NEW did not), over the same deals."""
    n = moments.n
    mean = moments.mean()
    variance = moments.variance()
    sd = None if variance is None else math.sqrt(max(variance, 0.0))
    bound = max(FLOOR, mixture_bound(max(n, 1), settings.alpha / (2 * games)))
    level = settings.confidence

    def judged(
        verdict: Verdict, why: str, t: float | None = None, half: float | None = None
    ) -> Judgement:
        low = high = None
        if half is not None and mean is not None:
            low, high = mean - half, mean + half
        return Judgement(verdict, n, mean, sd, t, bound, low, high, level, why)

    new_only, old_only = forfeits
    if new_only > old_only:
        return judged(
            Verdict.WORSE,
            f"NEW forfeited {new_only} matches where OLD did not (OLD {old_only} where NEW did "
            "not)",
        )
    if mean is None or sd is None:
        return judged(Verdict.UNDECIDED, "not enough data: fewer than 2 deals")
    if sd == 0.0:
        if mean != 0.0:
            return judged(Verdict.UNDECIDED, "not enough data: every deal differed by the same")
        needed = settings.identical_deals()
        if n >= needed:
            return judged(Verdict.NO_CHANGE, f"every one of the {n} deals gave the same score")
        return judged(
            Verdict.UNDECIDED,
            f"not enough data: the same score in every deal so far (sure after {needed})",
        )
    root = math.sqrt(n)
    z = mean / sd
    t = (z - settings.e0) * root
    if sequential:
        half = max(mixture_bound(n, 1 - level), t_ppf((1 + level) / 2, n - 1)) * sd / root
    else:
        half = t_ppf((1 + level) / 2, n - 1) * sd / root
    if n < MIN_DEALS:
        return judged(Verdict.UNDECIDED, f"not enough data: fewer than {MIN_DEALS} deals", t, half)
    if t >= bound:
        return judged(Verdict.BETTER, f"t = {t:+.2f} >= {bound:.2f}", t, half)
    if (z + settings.e0) * root <= -bound:
        return judged(Verdict.WORSE, f"t = {t:+.2f} <= {-bound:.2f}", t, half)
    reach = settings.e1 * sd
    if mean + half < reach:
        if -reach < mean - half:
            return judged(
                Verdict.NO_CHANGE,
                f"the {level:.0%} interval lies within ±{settings.e1:g} sd (±{reach:.2f})",
                t,
                half,
            )
        return judged(
            Verdict.NOT_BETTER,
            f"the {level:.0%} interval lies below +{settings.e1:g} sd (+{reach:.2f})",
            t,
            half,
        )
    return judged(Verdict.UNDECIDED, f"t = {t:+.2f}, within ±{bound:.2f}", t, half)


class Overall(StrEnum):
    BETTER = "better"
    NOT_BETTER = "not better"
    INCONCLUSIVE = "inconclusive"  # not decided yet (at the most deals: the final word)


@dataclass(frozen=True)
class OverallVerdict:
    verdict: Overall
    text: str  # "better in alles-oder-nichts; no change in vingt-down", ...


def overall(judgements: Mapping[str, Judgement]) -> OverallVerdict:
    """The rule across games (SPEC 10.10): **better** when NEW is better in at least one game
    and every other game is better or no change; **not better** as soon as it is worse in a
    game, or when no game is better and every game rules out a gain of e1 sd (not better or no
    change); else inconclusive (more deals, or at the most deals the final word)."""

    def named(verdict: Verdict) -> list[str]:
        return [label for label, j in judgements.items() if j.verdict is verdict]

    found = {verdict: named(verdict) for verdict in Verdict}
    text = "; ".join(
        f"{verdict} in {', '.join(labels)}" for verdict, labels in found.items() if labels
    )
    better, worse = found[Verdict.BETTER], found[Verdict.WORSE]
    same, not_better = found[Verdict.NO_CHANGE], found[Verdict.NOT_BETTER]
    if worse:
        return OverallVerdict(Overall.NOT_BETTER, text)
    if better and len(better) + len(same) == len(judgements):
        return OverallVerdict(Overall.BETTER, text)
    if judgements and not better and len(same) + len(not_better) == len(judgements):
        return OverallVerdict(Overall.NOT_BETTER, text)
    return OverallVerdict(Overall.INCONCLUSIVE, text)
