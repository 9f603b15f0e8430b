"""Scales every chart shares, on screen, on slides and in decks: value ranges that hold all
the data, at most a handful of round ticks, time as elapsed clock values, phase marks that
neither crowd nor get clipped. Plain arithmetic; value extents with numpy (a redraw's arrays
hold thousands of points: a Python loop over them cost more than drawing them).

    lo, hi, step = value_range([y1, y2], from_zero=True)     # 0 … a round top, ≤ 8 ticks
    step = clock_step(span_s, max_ticks=8)                    # 1, 2, 5, 10, 15, 30 s, 1 min …
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

MAX_TICKS = 8                   # labels per axis: more is unreadable on a projector
_MANTISSAS = (1.0, 2.0, 2.5, 5.0, 10.0)
CLOCK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
               43200, 86400)


def nice_step(span: float, max_ticks: int = MAX_TICKS) -> float:
    """The smallest 1-2-2.5-5 × 10^k step that divides ``span`` into at most
    ``max_ticks - 1`` intervals."""
    if not span > 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, max_ticks - 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in _MANTISSAS:
        if m * mag >= raw * (1 - 1e-9):
            return m * mag
    return 10.0 * mag


def finite_extent(arrays: Iterable[Sequence[float]]) -> tuple[float, float] | None:
    """(min, max) over the finite values of every array; None when there are none."""
    lo, hi = math.inf, -math.inf
    for a in arrays:
        x = np.asarray(a, dtype=np.float64)
        x = x[np.isfinite(x)]
        if x.size:
            lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
    return None if lo > hi else (lo, hi)


def value_range(arrays: Iterable[Sequence[float]], from_zero: bool = True,
                max_ticks: int = MAX_TICKS, fixed_top: float | None = None,
                headroom: float = 0.04) -> tuple[float, float, float]:
    """(lo, hi, step) of a value axis that holds every finite value of ``arrays``: from zero
    (a throughput axis from 18,000 exaggerates) unless ``from_zero`` is False, up to a round
    top a little above the peak, in at most ``max_ticks`` labelled steps. ``fixed_top`` (CPU
    100 %) is kept unless the data goes above it."""
    ext = finite_extent(arrays)
    if ext is None:
        top = fixed_top or 1.0
        return 0.0, top, nice_step(top, max_ticks)
    lo, hi = ext
    if fixed_top is not None and hi <= fixed_top and (lo >= 0 or not from_zero):
        lo = 0.0 if from_zero else lo
        return lo, fixed_top, nice_step(fixed_top - lo, max_ticks)
    if from_zero:
        lo, hi = min(0.0, lo), max(0.0, hi)
    if hi <= lo:                         # one value (or all equal): a band around it
        hi = lo + (abs(lo) or 1.0)
    hi += (hi - lo) * headroom
    step = nice_step(hi - lo, max_ticks)
    while True:
        a, b = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
        if (b - a) / step <= max_ticks - 1 + 1e-9:
            return a, b, step
        step = nice_step(step * 1.0001, 2)       # the next round step up


def log_range(arrays: Iterable[Sequence[float]]) -> tuple[float, float]:
    """(lo, hi) in log10 units over the positive values, widened to whole decades."""
    lo, hi = math.inf, -math.inf
    for arr in arrays:
        x = np.asarray(arr, dtype=np.float64)
        x = x[np.isfinite(x) & (x > 0)]
        if x.size:
            lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
    if lo > hi:
        return -1.0, 1.0
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return float(a), float(b if b > a else a + 1)


def clock_step(span: float, max_ticks: int = MAX_TICKS) -> float:
    """The smallest round clock step that divides ``span`` seconds into at most
    ``max_ticks - 1`` intervals."""
    target = span / max(1, max_ticks - 1)
    return float(next((s for s in CLOCK_STEPS if s >= target), CLOCK_STEPS[-1]))


def fmt_tick(x: float, step: float) -> str:
    """A tick label with as many decimals as the step needs and thousands separators."""
    if x == 0:
        return "0"
    if step >= 1 and abs(x - round(x)) < 1e-9 * max(1.0, abs(x)):
        return f"{x:,.0f}"
    digits = max(0, min(6, -int(math.floor(math.log10(step * (1 + 1e-9))))))
    if step * 10 ** digits % 1 > 1e-6:          # 2.5, 0.25 …
        digits += 1
    return f"{x:,.{digits}f}"


def fmt_clock(t: float, minus: str = "−", tenths: bool = False) -> str:
    """Elapsed seconds as m:ss or h:mm:ss (``tenths``: one decimal)."""
    sign = minus if t < -1e-9 else ""
    t = abs(t)
    whole = int(t + (0 if tenths else 0.5))
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    frac = f".{int((t - int(t)) * 10)}" if tenths else ""
    return f"{sign}{h}:{m:02d}:{s:02d}{frac}" if h else f"{sign}{m}:{s:02d}{frac}"


def phase_labels(marks: Sequence[tuple[float, str]], lo: float, hi: float,
                 min_gap: float = 0.06) -> list[tuple[float, str, bool]]:
    """Phase start marks as (x, label, label_left_of_line): marks closer than ``min_gap`` of
    the span become one line at the later start, named after both ("prepare · measure"),
    so no label is shared by two lines; a label near the right edge goes left of its line
    so the plot edge does not clip it. Marks outside [lo, hi] are dropped."""
    span = max(hi - lo, 1e-9)
    gap = min_gap * span
    out: list[tuple[float, list[str]]] = []
    for x, name in sorted(marks):
        if not lo - 1e-9 <= x <= hi + 1e-9:
            continue
        if out and x - out[-1][0] < gap:
            names = out[-1][1]
            out[-1] = (x, names + [name] if name not in names else names)
        else:
            out.append((x, [name]))
    return [(x, " · ".join(names), (x - lo) / span > 0.85) for x, names in out]


# Phase names sit in a band above the data, never over a curve: the value axis is raised by
# LABEL_BAND of the chart's height and the names are centred in that band.
LABEL_BAND = 0.14
LABEL_POSITION = 1 - LABEL_BAND / 2


def with_label_band(lo: float, hi: float) -> tuple[float, float]:
    """The value range ``lo``..``hi`` with room on top for the phase names' band."""
    return lo, hi + (hi - lo) * LABEL_BAND / (1 - LABEL_BAND)


def fit_labels(labels: Sequence[tuple[float, str, bool]], lo: float, hi: float,
               glyphs: float = 150.0) -> list[tuple[float, str, bool, str]]:
    """phase_labels' marks as (x, shown, left, full): a name longer than the room to the
    next mark (``glyphs`` characters fit across lo..hi) is cut there with "…" (the full name
    is for its tooltip), so short phases neither overlap nor print as "p"."""
    span = max(hi - lo, 1e-9)
    out = []
    for n, (x, label, left) in enumerate(labels):
        if left:
            prev = labels[n - 1] if n else None
            room = (x - (prev[0] if prev else lo)) / span * glyphs
            if prev is not None and not prev[2]:
                room /= 2              # the previous name runs right into the same gap
        else:
            nxt = labels[n + 1] if n + 1 < len(labels) else None
            room = ((nxt[0] if nxt else hi) - x) / span * glyphs
            if nxt is not None and nxt[2]:
                room /= 2              # the next name runs left into the same gap
        room = int(room) - 2           # a gap between neighbours
        shown = label if len(label) <= room else (label[:room - 1] + "…") if room >= 3 else "…"
        out.append((x, shown, left, label))
    return out
