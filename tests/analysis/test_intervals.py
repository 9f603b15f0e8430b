"""Confidence intervals: coverage on synthetic series with a known mean, classes, the gate."""
from __future__ import annotations

import math

import numpy as np
import pytest

from app.analysis import intervals as iv
from app.model.runset import BETTER, SAME, WORSE

DRAWS = 200


def _coverage(draw) -> int:
    rng = np.random.default_rng(20261128)
    return sum(draw(rng) for _ in range(DRAWS))


def test_repeats_interval_covers_the_true_ratio():
    # Three repeats a side, 6 % run-to-run noise (as a 10-s round on these machines), a true
    # ratio of 0.93 between the sides' means.
    true = 0.93

    def draw(rng):
        base = 25000 * np.exp(rng.normal(0, 0.06, 3))
        new = 25000 * true * np.exp(rng.normal(0, 0.06, 3))
        r = iv.ratio_interval(base, new)
        return r.low <= true <= r.high
    assert _coverage(draw) >= 0.93 * DRAWS


def test_paired_interval_covers_the_true_ratio_under_drift():
    # Rounds A B: the host drifts by up to ±20 % from round to round, alike for both sides.
    true = 1.8

    def draw(rng):
        drift = np.exp(rng.normal(0, 0.2, 4))
        base = 1000 * drift * np.exp(rng.normal(0, 0.03, 4))
        new = 1000 * true * drift * np.exp(rng.normal(0, 0.03, 4))
        r = iv.paired_interval(base, new)
        return r.low <= true <= r.high
    assert _coverage(draw) >= 0.93 * DRAWS


def test_batch_means_interval_covers_the_true_ratio():
    # One run a side: 60 one-second samples with autocorrelated noise (AR(1), 0.5).
    true = 1.1

    def series(rng, level):
        e, out = 0.0, []
        for z in rng.normal(0, 0.05, 60):
            e = 0.5 * e + z
            out.append(level * (1 + e))
        return out

    def draw(rng):
        r = iv.series_interval(series(rng, 5000), series(rng, 5000 * true))
        assert r.method == iv.BATCH_MEANS
        return r.low <= true <= r.high
    assert _coverage(draw) >= 0.93 * DRAWS


def test_mean_interval_covers_the_true_mean():
    def draw(rng):
        r = iv.mean_interval(100 * np.exp(rng.normal(0, 0.1, 3)))
        return r.low <= 100 <= r.high
    assert _coverage(draw) >= 0.93 * DRAWS


def test_text_and_classes():
    r = iv.Interval(0.93, 0.91, 0.949, iv.REPEATS, (3, 3))
    assert r.text() == "0.93 [0.91–0.95]"
    assert r.cls(lower_is_better=False) == WORSE
    assert r.cls(lower_is_better=True) == BETTER
    wide = iv.Interval(0.93, 0.85, 1.01, iv.REPEATS, (3, 3))
    assert wide.cls(lower_is_better=False) == SAME      # within noise: straddles the band
    assert iv.Interval(1.8, 1.6, 2.0, iv.PAIRED, (3, 3)).cls(False) == BETTER


def test_a_side_of_one_run_gives_no_repeats_interval():
    assert iv.ratio_interval([100], [90, 91]) is None
    assert iv.paired_interval([100, 101], [90]) is None
    assert iv.series_interval([1] * 19, [1] * 30) is None     # too short for 2 batches


def test_batch_means():
    assert iv.batch_means(list(range(1, 21)), batches=2) == [5.5, 15.5]
    # a remainder joins the last batch; at least MIN_BATCH samples a batch
    assert iv.batch_means([1.0] * 25, batches=10) == [1.0, 1.0]


def test_gate_verdicts():
    below = iv.ratio_interval([100, 101, 99], [90, 91, 89])
    assert iv.verdict(below, 0.95).outcome == iv.FAIL
    above = iv.ratio_interval([100, 101, 99], [99, 100, 101])
    assert iv.verdict(above, 0.90).outcome == iv.PASS
    straddle = iv.ratio_interval([100, 106, 94], [90, 96, 84])
    v = iv.verdict(straddle, 0.95)
    assert v.outcome == iv.INCONCLUSIVE
    assert v.more is not None and v.more >= 1
    assert f"{v.more} more repeat" in v.text()
    # the same spread with that many more runs a side does decide
    n = 3 + v.more
    rng = np.random.default_rng(1)
    sb, sn = straddle.sd
    base = np.exp(rng.normal(0, 1, n))
    new = np.exp(rng.normal(0, 1, n))
    # runs with exactly today's mean log and spread, more of them
    def shaped(x, mean, sd):
        lx = np.log(x)
        return np.exp((lx - lx.mean()) / lx.std(ddof=1) * sd + mean)
    later = iv.ratio_interval(shaped(base, math.log(100), sb),
                              shaped(new, math.log(100 * straddle.value), sn))
    assert iv.verdict(later, 0.95).outcome != iv.INCONCLUSIVE
    # lower is better: a latency ratio is judged against 1 / threshold
    slower = iv.ratio_interval([10, 10.1, 9.9], [11.5, 11.6, 11.4])
    assert iv.verdict(slower, 0.95, lower_is_better=True).outcome == iv.FAIL


def test_identical_runs_give_a_point_interval():
    r = iv.ratio_interval([100, 100], [100, 100])
    assert (r.low, r.value, r.high) == (1.0, 1.0, 1.0)
    assert r.cls(False) == SAME


@pytest.mark.parametrize("bad", [[0, 1], [-1, 2], [float("nan"), 1]])
def test_values_that_have_no_log(bad):
    assert iv.ratio_interval(bad, [1, 2]) is None
