"""One live series at bounded memory, whatever the run's length: the newest points at full
resolution, and the whole run as min/max buckets that widen as the run grows, so a 1-s stall
of hour 2 is still a dip on the chart at hour 10.

    tr = Track(recent=3_600, buckets=2_048)     # ~170 kB at most, from the first hour on
    tr.append(t, v)
    x, y = tr.window(t0, t1, points=1_200)      # at most ~2 × points, peaks kept
    mean, seconds = tr.mean(t0, t1)             # time-weighted, as the headline shows it

``recent=None`` keeps every point (a saved run, read whole from its file): no buckets then.
"""
from __future__ import annotations

import math

import numpy as np

RECENT = 3_600          # full-resolution points kept: the latest hour of 1-s samples
BUCKETS = 2_048         # min/max buckets over the whole run; pairs merge when they fill up
_FIRST = 256            # arrays start this small and double: a run has ~100 series


class Track:
    """(t, value) points in time order; see the module's docstring."""

    __slots__ = ("recent", "buckets", "count", "_t", "_v", "_n", "_bt0", "_bt1", "_bmin",
                 "_bmax", "_bsw", "_bw", "_nb", "_width", "_open", "_prev", "_last")

    def __init__(self, recent: int | None = RECENT, buckets: int = BUCKETS) -> None:
        if recent is not None and recent < 1:
            raise ValueError("a track needs room for at least one point")
        if buckets < 2 or buckets % 2:
            raise ValueError("buckets must be an even number, two or more")
        self.recent = recent
        self.buckets = buckets
        self.count = 0                  # points ever appended
        first = _FIRST if recent is None else min(_FIRST, recent + recent // 4 + 1)
        self._t = np.empty(first)
        self._v = np.empty(first)
        self._n = 0
        self._last: tuple[float, float] | None = None
        # buckets: first and last time, min, max, Σ value·weight and Σ weight (weight: the
        # seconds since the previous finite point), for the time-weighted mean
        self._bt0 = self._bt1 = self._bmin = self._bmax = self._bsw = self._bw = None
        self._nb = 0                    # closed buckets
        self._width = 1                 # points per bucket; doubles when the buckets fill
        self._open: list[float] | None = None   # the bucket being filled, same six fields + n
        self._prev: float | None = None         # time of the previous finite point
        if recent is not None:
            self._bt0, self._bt1, self._bmin, self._bmax, self._bsw, self._bw = (
                np.empty(min(_FIRST, buckets)) for _ in range(6))

    def __len__(self) -> int:
        return self.count

    # --- writing -------------------------------------------------------------------------
    def append(self, t: float, v: float) -> None:
        n = self._n
        if n == len(self._t):
            n = self._make_room()
        self._t[n] = t
        self._v[n] = v
        self._n = n + 1
        self.count += 1
        self._last = (t, v)
        if self.recent is not None:
            self._bucket(t, v)

    def _make_room(self) -> int:
        """Grow by doubling up to the recent window and a quarter more; once there, drop the
        oldest quarter in one move (amortised: a copy of the window every quarter of it)."""
        cap = len(self._t)
        limit = None if self.recent is None else self.recent + self.recent // 4 + 1
        if limit is None or cap < limit:
            new = cap * 2 if limit is None else min(cap * 2, limit)
            self._t = np.resize(self._t, new)
            self._v = np.resize(self._v, new)
            return self._n
        keep = self.recent
        self._t[:keep] = self._t[self._n - keep:self._n]
        self._v[:keep] = self._v[self._n - keep:self._n]
        self._n = keep
        return keep

    def _bucket(self, t: float, v: float) -> None:
        finite = v == v
        w = 0.0
        if finite:
            if self._prev is not None and t > self._prev:
                w = t - self._prev
            self._prev = t
        o = self._open
        if o is None:
            nan = math.nan
            self._open = [t, t, v if finite else nan, v if finite else nan,
                          v * w if finite else 0.0, w, 1]
        else:
            o[1] = t
            if finite:
                if not v >= o[2]:       # also when the bucket's min is still NaN
                    o[2] = v
                if not v <= o[3]:
                    o[3] = v
                o[4] += v * w
                o[5] += w
            o[6] += 1
        if self._open[6] >= self._width:
            self._close_bucket()

    def _close_bucket(self) -> None:
        o, i = self._open, self._nb
        if i == len(self._bt0):
            new = min(len(self._bt0) * 2, self.buckets)
            for name in ("_bt0", "_bt1", "_bmin", "_bmax", "_bsw", "_bw"):
                setattr(self, name, np.resize(getattr(self, name), new))
        self._bt0[i], self._bt1[i], self._bmin[i], self._bmax[i], self._bsw[i], self._bw[i] = \
            o[:6]
        self._nb = i + 1
        self._open = None
        if self._nb == self.buckets:        # full: pairs become one bucket twice as wide
            h = self.buckets // 2
            self._bt0[:h] = self._bt0[0::2]
            self._bt1[:h] = self._bt1[1::2]
            self._bmin[:h] = np.fmin(self._bmin[0::2], self._bmin[1::2])
            self._bmax[:h] = np.fmax(self._bmax[0::2], self._bmax[1::2])
            self._bsw[:h] = self._bsw[0::2] + self._bsw[1::2]
            self._bw[:h] = self._bw[0::2] + self._bw[1::2]
            self._nb = h
            self._width *= 2

    # --- reading -------------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (what ``recent`` and ``buckets`` bound)."""
        arrays = [self._t, self._v, self._bt0, self._bt1, self._bmin, self._bmax, self._bsw,
                  self._bw]
        return sum(a.nbytes for a in arrays if a is not None)

    @property
    def bucket_seconds(self) -> float:
        """The time one bucket covers (0 while every point is still at full resolution)."""
        if self.recent is None or self.count <= self._n:
            return 0.0
        b = self._buckets()
        return float(np.max(b[1] - b[0])) if len(b[0]) else 0.0

    def coarse(self, t0: float, t1: float, points: int) -> bool:
        """Whether part of [t0, t1] is only in buckets wider than one of ``points`` columns
        (the session file then has what a closer look needs)."""
        old, i = self._split()
        if old is None or (i < self._n and t0 >= self._t[i]):
            return False
        return self.bucket_seconds > (t1 - t0) / max(1, points)

    def full_since(self) -> float | None:
        """Time of the oldest point held at full resolution (None: no points)."""
        return float(self._t[0]) if self._n else None

    def last(self) -> tuple[float, float] | None:
        return self._last

    def _buckets(self) -> tuple[np.ndarray, ...]:
        """The closed buckets and the open one: t0, t1, min, max, Σv·w, Σw."""
        nb = self._nb
        cols = [a[:nb] for a in (self._bt0, self._bt1, self._bmin, self._bmax, self._bsw,
                                 self._bw)]
        if self._open is not None:
            cols = [np.append(c, x) for c, x in zip(cols, self._open[:6])]
        return tuple(cols)

    def _split(self) -> tuple[tuple[np.ndarray, ...] | None, int]:
        """The buckets that hold points older than the full-resolution window (None when it
        holds them all), and the index of its first point not inside those buckets."""
        if self.recent is None or self.count <= self._n:
            return None, 0
        b = self._buckets()
        k = int(np.searchsorted(b[0], self._t[0], side="left"))
        # the bucket that straddles the window's start is kept whole: the window starts
        # after it, so no point is drawn twice and none falls between the two
        k = max(k, 1)
        old = tuple(c[:k] for c in b)
        i = int(np.searchsorted(self._t[:self._n], old[1][-1], side="right"))
        return old, i

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The whole run in time order: the old part as (t0, min), (t1, max) pairs of its
        buckets, then every point of the full-resolution window (copies)."""
        old, i = self._split()
        t, v = self._t[i:self._n], self._v[i:self._n]
        if old is None:
            return t.copy(), v.copy()
        bt = np.column_stack((old[0], old[1])).ravel()
        bv = np.column_stack((old[2], old[3])).ravel()
        return np.concatenate((bt, t)), np.concatenate((bv, v))

    def window(self, t0: float, t1: float, points: int) -> tuple[np.ndarray, np.ndarray]:
        """The points that draw [t0, t1] (and one each side, so the line reaches the edges)
        at about ``points`` columns: where more fall in it, each column gives its min and
        max in time order of columns, so peaks and stalls stay. At most ~2 × points + 4."""
        points = max(1, int(points))
        old, i = self._split()
        parts_t, parts_v = [], []
        # the buckets only where the view starts before the full-resolution points; the
        # columns shared by time between the two parts
        if old is not None and (i >= self._n or t0 < self._t[i]):
            split = self._t[i] if i < self._n else t1
            share = (min(split, t1) - t0) / (t1 - t0) if t1 > t0 else 1.0
            old_points = max(1, int(points * share))
            points = max(1, points - old_points)
            bt0, bt1, bmin, bmax = old[:4]
            a = max(0, int(np.searchsorted(bt1, t0, side="left")) - 1)
            b = min(len(bt0), int(np.searchsorted(bt0, t1, side="right")) + 1)
            if b > a:
                x0, x1, lo, hi = _merge(bt0[a:b], bt1[a:b], bmin[a:b], bmax[a:b],
                                        old_points)
                parts_t.append(np.column_stack((x0, x1)).ravel())
                parts_v.append(np.column_stack((lo, hi)).ravel())
        # the full-resolution points where the view reaches past the buckets (or has none)
        if not parts_t or t1 > old[1][-1]:
            x, y = decimate(self._t[i:self._n], self._v[i:self._n], t0, t1, points)
            if len(x):
                parts_t.append(x)
                parts_v.append(y)
        if not parts_t:
            return np.zeros(0), np.zeros(0)
        if len(parts_t) == 1:
            return parts_t[0], parts_v[0]
        return np.concatenate(parts_t), np.concatenate(parts_v)

    def mean(self, t0: float, t1: float | None) -> tuple[float | None, float]:
        """Time-weighted mean of the values whose points fall in (t0, t1], and the seconds
        they cover; each value weighs the time since the previous finite point (or t0). The
        old part counts whole buckets: exact to within one bucket at each end."""
        hi = math.inf if t1 is None else t1
        sw = w = 0.0
        old, i = self._split()
        prev = t0
        if old is not None:
            bt0, bt1, _mn, _mx, bsw, bw = old
            inside = (bt1 > t0) & (bt0 <= hi)
            sw, w = float(bsw[inside].sum()), float(bw[inside].sum())
            if inside.any():
                prev = max(t0, float(bt1[inside][-1]))
        t, v = self._t[i:self._n], self._v[i:self._n]
        keep = (t > t0) & (t <= hi) & np.isfinite(v)
        x, y = t[keep], v[keep]
        if len(x):
            dw = np.diff(np.concatenate(([prev], x)))
            dw[dw <= 0] = 0.0
            sw += float((y * dw).sum())
            w += float(dw.sum())
        if w > 0:
            return sw / w, w
        if len(x):
            return float(y.mean()), 0.0
        return None, 0.0


def decimate(t: np.ndarray, v: np.ndarray, t0: float, t1: float, points: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """The points of (t, v) (in time order) that draw [t0, t1], with one each side, at
    about ``points`` columns: each column's min and max where more than two fall in it."""
    a = max(0, int(np.searchsorted(t, t0, side="left")) - 1)
    b = min(len(t), int(np.searchsorted(t, t1, side="right")) + 1)
    if b <= a:
        return np.zeros(0), np.zeros(0)
    st, sv = t[a:b], v[a:b]
    if len(st) <= 2 * points:
        return st.copy(), sv.copy()
    x0, x1, lo, hi = _merge(st, st, sv, sv, max(1, int(points)))
    return np.column_stack((x0, x1)).ravel(), np.column_stack((lo, hi)).ravel()


def _merge(t0: np.ndarray, t1: np.ndarray, lo: np.ndarray, hi: np.ndarray, points: int
           ) -> tuple[np.ndarray, ...]:
    """Spans (t0, t1, min, max) merged into at most ``points`` spans of equal counts."""
    n = len(t0)
    if n <= points:
        return t0, t1, lo, hi
    starts = np.linspace(0, n, points, endpoint=False).astype(np.intp)
    ends = np.append(starts[1:], n) - 1
    return t0[starts], t1[ends], np.fmin.reduceat(lo, starts), np.fmax.reduceat(hi, starts)
