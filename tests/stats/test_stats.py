"""arena.stats: the t distribution, exact sums, per-deal values and intervals (compare's test and
the error rates of every verdict: test_verdicts.py).

The simulations run on synthetic results (no processes) with fixed seeds; each asserts a rate
within three standard errors of what the method promises, so a broken method fails them."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import pytest

from arena.stats.deals import DealTally, Rotation, deal_values
from arena.stats.moments import Moments, estimate, estimate_values
from arena.stats.tdist import t_cdf, t_ppf

# scipy.stats.t.ppf(0.975, df) and t.cdf(t, df), to 10 digits (copied once, so no scipy needed)
T_QUANTILES = {1: 12.7062047362, 2: 4.3026527297, 5: 2.5705818356, 30: 2.0422724563}


@pytest.mark.parametrize("df,quantile", sorted(T_QUANTILES.items()))
def test_t_quantiles_match_tables(df, quantile):
    assert t_ppf(0.975, df) == pytest.approx(quantile, abs=1e-8)
    assert t_cdf(quantile, df) == pytest.approx(0.975, abs=1e-10)
    assert t_ppf(0.025, df) == pytest.approx(-quantile, abs=1e-8)


def test_t_against_scipy_when_installed():
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 7.5, 40, 1000):
        for t in (-25.0, -2.0, -0.1, 0.0, 0.7, 3.3, 60.0):
            assert t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), abs=1e-10)
        for p in (1e-5, 0.05, 0.5, 0.9, 0.999):
            assert t_ppf(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-8, abs=1e-9)


def test_moments_are_exact_and_order_free():
    values = [
        Fraction(random.Random(s).randrange(-50, 50), random.Random(s).choice((1, 3, 4, 12)))
        for s in range(200)
    ]
    forward, backward, halves = Moments(), Moments(), Moments()
    for v in values:
        forward.add_fraction(v)
    for v in reversed(values):
        backward.add_fraction(v)
    first, second = Moments(), Moments()
    for v in values[:77]:
        first.add_fraction(v)
    for v in values[77:]:
        second.add_fraction(v)
    halves.merge(first)
    halves.merge(second)
    assert forward.total() == backward.total() == halves.total() == sum(values)
    assert forward.variance() == backward.variance() == halves.variance()
    mean = sum(values) / len(values)
    exact_variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    assert forward.variance() == float(exact_variance)
    assert Moments.from_data(forward.to_data()) == forward


def test_moments_mean_and_variance_are_the_exact_value_rounded_once():
    """Over one common denominator in integers: the float nearest the exact rational, as a
    Fraction computation gives it, for any denominators and sizes of numerators."""
    rng = random.Random(7)
    for _ in range(3000):
        values = [
            Fraction(rng.randint(-(10 ** rng.randint(1, 25)), 10**20), rng.randint(1, 10**6))
            for _ in range(rng.randint(1, 12))
        ]
        moments = Moments()
        for v in values:
            moments.add_fraction(v)
        n = len(values)
        mean = sum(values) / n
        assert moments.mean() == float(mean)
        if n > 1:
            assert moments.variance() == float(sum((v - mean) ** 2 for v in values) / (n - 1))
        else:
            assert moments.variance() is None


def test_estimate_interval_and_probability():
    est = estimate_values([1, 2, 3, 4, 5])
    half = t_ppf(0.975, 4) * math.sqrt(2.5) / math.sqrt(5)
    assert (
        est.mean == 3 and est.low == pytest.approx(3 - half) and est.high == pytest.approx(3 + half)
    )
    assert est.p_positive == pytest.approx(t_cdf(3 / math.sqrt(0.5), 4))
    assert estimate_values([2]).low is None and estimate_values([2]).p_positive is None
    # equal values: not enough data (never P = 1 from two equal deals)
    for xs in ([2, 2], [0, 0], [-1, -1, -1]):
        e = estimate_values(xs)
        assert e.p_positive is None and e.low is None and e.p_two_sided is None
    # P >= c exactly when the one-sided c-interval is above 0; the two-sided p-value is the tail
    for xs in ([0.1, 0.5, -0.2, 0.4], [1, -1, 2, 3, -0.5, 0.3]):
        e = estimate_values(xs)
        lower_one_sided = e.mean - t_ppf(0.95, e.n - 1) * e.sd / math.sqrt(e.n)
        assert (e.p_positive >= 0.95) == (lower_one_sided > 0)
        assert e.p_two_sided == pytest.approx(2 * min(e.p_positive, 1 - e.p_positive))
    far = estimate_values([100 + (i % 2) for i in range(30)])  # P rounds to 1; the tail does not
    assert far.p_positive == 1.0 and 0 < far.p_two_sided < 1e-30


def test_deal_values_by_hand():
    # three rotations of one deal; seat k's cards are the same in each
    rotations = [
        Rotation(tuple("abc"), (10, 4, 1), (1, 2, 3)),
        Rotation(tuple("cab"), (6, 8, 1), (2, 1, 3)),
        Rotation(tuple("bca"), (9, 2, 4), (1, 3, 2)),
    ]
    values = deal_values(rotations)
    seat_means = [Fraction(25, 3), Fraction(14, 3), Fraction(2)]
    a_deltas = [10 - seat_means[0], 8 - seat_means[1], 4 - seat_means[2]]
    assert Fraction(*values.dup["a"]) == sum(a_deltas) / 3
    assert Fraction(*values.score["a"]) == Fraction(22, 3)
    assert Fraction(*values.placing["b"]) == Fraction(1 + 2 + 3, 3)
    # pair (a, b): a's dup minus b's, and b's placing minus a's
    assert Fraction(*values.pair_score[("a", "b")]) == Fraction(*values.dup["a"]) - Fraction(
        *values.dup["b"]
    )
    assert Fraction(*values.pair_placing[("a", "c")]) == Fraction(8, 3) - Fraction(4, 3)
    # a low-score game flips the dup sign, not the placings
    flipped = deal_values(rotations, sign=-1)
    assert Fraction(*flipped.dup["a"]) == -Fraction(*values.dup["a"])
    assert flipped.pair_placing == values.pair_placing


def test_partners_are_not_compared():
    rotations = [
        Rotation(tuple("abcd"), (7, 3, 7, 3), (1, 2, 1, 2), teams=(0, 1, 0, 1)),
        Rotation(tuple("dabc"), (2, 8, 2, 8), (2, 1, 2, 1), teams=(0, 1, 0, 1)),
    ]
    values = deal_values(rotations)
    assert set(values.pair_placing) == {("a", "b"), ("a", "d"), ("b", "c"), ("c", "d")}


def test_tally_folds_open_and_complete_deals_alike():
    rng = random.Random(5)
    matches = []
    for deal in range(6):
        for r in range(3):
            bots = tuple("abc"[(k - r) % 3] for k in range(3))
            scores = tuple(rng.randrange(10) for _ in range(3))
            placings = tuple(1 + sorted(scores, reverse=True).index(s) for s in scores)
            matches.append((deal, r, Rotation(bots, scores, placings)))
    in_order, shuffled = DealTally(), DealTally()
    for deal, r, m in matches:
        in_order.add(("g", 0, deal), r, m, scopes=("g",), expected=3)
    rng.shuffle(matches)
    half = len(matches) // 2
    for deal, r, m in matches[:half]:
        shuffled.add(("g", 0, deal), r, m, scopes=("g",), expected=3)
    partial = shuffled.bots("g")  # some deals open: folded on demand, not for good
    assert partial and all(m.score.n <= 6 for m in partial.values())
    for deal, r, m in matches[half:]:
        shuffled.add(("g", 0, deal), r, m, scopes=("g",), expected=3)
    assert in_order.bots("g") == shuffled.bots("g")
    assert in_order.pairs("g") == shuffled.pairs("g")
    assert in_order.bots("g")["a"].dup.n == 6
    # the whole state survives JSON, open deals included (a fold kept between runs)
    partial = DealTally()
    for deal, r, m in matches[:half]:
        partial.add(("g", 0, deal), r, m, scopes=("g",), expected=3)
    restored = DealTally.from_data(json.loads(json.dumps(partial.to_data())))
    for deal, r, m in matches[half:]:
        restored.add(("g", 0, deal), r, m, scopes=("g",), expected=3)
    assert restored.bots("g") == in_order.bots("g") and restored.pairs("g") == in_order.pairs("g")


# -- simulations ------------------------------------------------------------------------------


def test_intervals_cover_the_true_mean_on_synthetic_duplicate_data():
    """Three bots at one table, every deal in three rotations; each seat's cards carry a luck
    shared by the rotations (the correlation the by-deal interval must respect)."""
    skill = {"a": 1.0, "b": 0.0, "c": -1.0}
    true_dup = {bot: s - sum(skill.values()) / 3 for bot, s in skill.items()}
    true_pair = true_dup["a"] - true_dup["b"]
    rng = random.Random(11)
    covered = {"a": 0, "pair": 0}
    runs = 400
    for _ in range(runs):
        tally = DealTally()
        for deal in range(20):
            luck = [rng.gauss(0, 6) for _ in range(3)]
            for r in range(3):
                bots = tuple("abc"[(k - r) % 3] for k in range(3))
                scores = tuple(
                    round(10 * (luck[k] + skill[bots[k]] + rng.gauss(0, 3))) for k in range(3)
                )
                placings = tuple(1 + sorted(scores, reverse=True).index(s) for s in scores)
                tally.add(deal, r, Rotation(bots, scores, placings), scopes=("g",), expected=3)
        bot = estimate(tally.bots("g")["a"].dup)
        pair = estimate(tally.pairs("g")[("a", "b")].score)
        covered["a"] += bot.low <= 10 * true_dup["a"] <= bot.high
        covered["pair"] += pair.low <= 10 * true_pair <= pair.high
    tolerance = 3 * math.sqrt(0.05 * 0.95 / runs)  # 0.033
    for name, hits in covered.items():
        assert abs(hits / runs - 0.95) <= tolerance, (name, hits / runs)
