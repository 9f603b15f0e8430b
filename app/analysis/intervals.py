"""Confidence intervals of compared figures: is a difference larger than the runs' noise?

No Qt. Compare, the suite matrix, ``versus compare --fail-below`` and every export read an
``Interval``: a ratio NEW / BASE (or one side's mean) with its 95 % interval and the method
that gave it, printed as "0.93 [0.91–0.95]".

Methods (``Interval.method``, said beside every figure):

- ``repeats``: two or more runs a side. Welch's t on the logarithms of the runs' values; the
  ratio is the ratio of geometric means, its interval exp() of the interval of the difference
  of mean logs (scipy.stats.ttest_ind, equal_var=False). Throughput and latency are
  multiplicative (a run is "7 % slower"), so logs make the ratio's interval symmetric in
  those terms. A percentile bootstrap is not used: with 3 repeats a side the resamples
  of 3 values take at most 10 distinct means, and its interval comes out too narrow.
- ``paired``: the same number of runs a side, run in interleaved rounds (A B A B …): one ratio
  per round, a one-sample t interval on their logs. Drift of the host between rounds falls on
  both sides of a round alike and leaves the ratios.
- ``batch means``: one run a side. The run's own per-interval series is cut into batches whose
  means are close to independent; Welch's t on the logs of the batch means. It says how
  steady the run was, not how another run would come out, and is marked as such.

    iv = ratio_interval(base=[25100, 24800, 25300], new=[23300, 23500, 23100])
    iv.text()                        # "0.93 [0.92–0.94]"
    iv.cls(lower_is_better=False)    # "worse": the whole interval is below 0.95
    verdict(iv, 0.95)                # Verdict("fail", …)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from app.model.runset import BETTER, NA, SAME, TOLERANCE, WORSE

LEVEL = 0.95
REPEATS, PAIRED, BATCH_MEANS = "repeats", "paired", "batch means"
DEFAULT_BATCHES = 10
MIN_BATCH = 10           # intervals a batch at least: shorter runs get fewer batches
MAX_MORE = 50            # "inconclusive: N more repeats" looks this far

METHOD_TEXT = {
    REPEATS: "95 % interval, Welch's t on log values of the repeats",
    PAIRED: "95 % interval, t on log ratios of interleaved rounds",
    BATCH_MEANS: "95 % interval from batch means of one run per side (the run's own "
                 "steadiness, not run-to-run noise)",
}


@dataclass(frozen=True)
class Interval:
    value: float                 # the ratio (or mean) the interval is around
    low: float
    high: float
    method: str                  # REPEATS | PAIRED | BATCH_MEANS
    n: tuple[int, int]           # what each side contributed: runs, rounds or batches
    level: float = LEVEL
    # what "more repeats" would do: the sides' standard deviations of log values
    sd: tuple[float, float] = (0.0, 0.0)

    def text(self, digits: int = 2) -> str:
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}–{self.high:.{digits}f}]"

    def excludes(self, x: float) -> bool:
        return x < self.low or x > self.high

    def cls(self, lower_is_better: bool, tolerance: float = TOLERANCE) -> str:
        """better / worse only when the whole interval lies outside the ±tolerance band,
        same ("within noise") otherwise."""
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return NA
        eps = 1e-9
        if self.low >= 1 + tolerance - eps:
            return WORSE if lower_is_better else BETTER
        if self.high <= 1 - tolerance + eps:
            return BETTER if lower_is_better else WORSE
        return SAME

    def describe(self) -> str:
        return METHOD_TEXT[self.method]

    def to_json(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high, "level": self.level,
                "method": self.method, "n": list(self.n)}


def _logs(values: Sequence[float]) -> np.ndarray | None:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if len(v) == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        return None
    return np.log(v)


def _welch(lb: np.ndarray, ln: np.ndarray, level: float, method: str) -> Interval | None:
    if len(lb) < 2 or len(ln) < 2:
        return None
    d = float(ln.mean() - lb.mean())
    sb, sn = float(lb.std(ddof=1)), float(ln.std(ddof=1))
    if sb == 0 and sn == 0:          # identical values on both sides: no spread to speak of
        lo = hi = d
    else:
        ci = stats.ttest_ind(ln, lb, equal_var=False).confidence_interval(level)
        lo, hi = float(ci.low), float(ci.high)
    return Interval(math.exp(d), math.exp(lo), math.exp(hi), method, (len(lb), len(ln)),
                    level, (sb, sn))


def ratio_interval(base: Sequence[float], new: Sequence[float], level: float = LEVEL
                   ) -> Interval | None:
    """NEW / BASE from repeated runs (two or more a side): ratio of geometric means with its
    Welch interval. None when a side has fewer than two positive values."""
    lb, ln = _logs(base), _logs(new)
    if lb is None or ln is None:
        return None
    return _welch(lb, ln, level, REPEATS)


def paired_interval(base: Sequence[float], new: Sequence[float], level: float = LEVEL
                    ) -> Interval | None:
    """NEW / BASE from rounds: base[i] and new[i] ran next to each other (A B A B …)."""
    if len(base) != len(new) or len(base) < 2:
        return None
    lb, ln = _logs(base), _logs(new)
    if lb is None or ln is None or len(lb) != len(ln):
        return None
    diff = ln - lb
    d = float(diff.mean())
    sd = float(diff.std(ddof=1))
    if sd == 0:
        lo = hi = d
    else:
        ci = stats.ttest_1samp(diff, 0.0).confidence_interval(level)
        lo, hi = float(ci.low), float(ci.high)
    return Interval(math.exp(d), math.exp(lo), math.exp(hi), PAIRED, (len(lb), len(ln)),
                    level, (sd / math.sqrt(2), sd / math.sqrt(2)))


def batch_means(series: Sequence[float], batches: int = DEFAULT_BATCHES) -> list[float]:
    """Means of consecutive equal batches of a per-interval series (a trailing remainder
    joins the last batch); fewer batches when the series is short, none under two."""
    v = [x for x in series if x is not None and x == x]
    k = min(batches, len(v) // MIN_BATCH)
    if k < 2:
        return []
    size = len(v) // k
    out = [sum(v[i * size:(i + 1) * size]) / size for i in range(k - 1)]
    rest = v[(k - 1) * size:]
    out.append(sum(rest) / len(rest))
    return out


def series_interval(base: Sequence[float], new: Sequence[float], level: float = LEVEL,
                    batches: int = DEFAULT_BATCHES) -> Interval | None:
    """NEW / BASE from one run a side: Welch's t on the logs of each run's batch means."""
    lb, ln = _logs(batch_means(base, batches)), _logs(batch_means(new, batches))
    if lb is None or ln is None:
        return None
    return _welch(lb, ln, level, BATCH_MEANS)


def mean_interval(values: Sequence[float], level: float = LEVEL) -> Interval | None:
    """One side's geometric mean with its t interval (two or more positive values)."""
    lv = _logs(values)
    if lv is None or len(lv) < 2:
        return None
    m, sd = float(lv.mean()), float(lv.std(ddof=1))
    if sd == 0:
        lo = hi = m
    else:
        ci = stats.ttest_1samp(lv, 0.0).confidence_interval(level)
        lo, hi = float(ci.low), float(ci.high)
    return Interval(math.exp(m), math.exp(lo), math.exp(hi), REPEATS, (len(lv), 0), level,
                    (sd, 0.0))


# --- the gate ---------------------------------------------------------------------------------
FAIL, PASS, INCONCLUSIVE = "fail", "pass", "inconclusive"


@dataclass(frozen=True)
class Verdict:
    outcome: str                 # FAIL | PASS | INCONCLUSIVE
    more: int | None = None      # inconclusive: repeats a side that would decide (None: > MAX_MORE
                                 # or not known: one run a side)

    def text(self) -> str:
        if self.outcome != INCONCLUSIVE:
            return self.outcome.upper()
        if self.more is None:
            return "inconclusive: the interval straddles the threshold"
        return (f"inconclusive: {self.more} more repeat{'s' if self.more != 1 else ''} "
                f"a side would decide")


def verdict(iv: Interval, threshold: float, lower_is_better: bool = False) -> Verdict:
    """FAIL when the whole interval is on the wrong side of the threshold (below it; above
    1/threshold where lower is better), PASS when the whole of it is on the right side,
    INCONCLUSIVE when it straddles the threshold, with how many more repeats a side would
    shrink the interval clear of it if the runs' spread stays what it is."""
    limit = 1 / threshold if lower_is_better else threshold
    bad_side = (iv.low > limit) if lower_is_better else (iv.high < limit)
    good_side = (iv.high <= limit) if lower_is_better else (iv.low >= limit)
    if bad_side:
        return Verdict(FAIL)
    if good_side:
        return Verdict(PASS)
    return Verdict(INCONCLUSIVE, more_repeats(iv, limit))


def more_repeats(iv: Interval, limit: float) -> int | None:
    """Runs to add to each side so the interval, at today's spread and today's ratio, no
    longer contains ``limit``; None for batch means (more runs, not more batches, decide)
    or when more than MAX_MORE would be needed."""
    if iv.method == BATCH_MEANS:
        return None
    gap = abs(math.log(iv.value) - math.log(limit))
    sb, sn = iv.sd
    nb, nn = iv.n
    for m in range(1, MAX_MORE + 1):
        if iv.method == PAIRED:
            n = nb + m
            se, df = math.hypot(sb, sn) / math.sqrt(n), n - 1
        else:
            vb, vn = sb * sb / (nb + m), sn * sn / (nn + m)
            se = math.sqrt(vb + vn)
            df = (vb + vn) ** 2 / ((vb * vb / (nb + m - 1) if vb else 0)
                                   + (vn * vn / (nn + m - 1) if vn else 0) or 1e-300)
        half = float(stats.t.ppf(0.5 + iv.level / 2, df)) * se
        if half < gap:
            return m
    return None
