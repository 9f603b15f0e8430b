"""Axes every chart shares, on screen and on slides: at most a handful of round tick labels
(app.model.scale does the arithmetic), time as elapsed clock values, labels at the ends kept.

    plot = layout.addPlot(axisItems={"left": ValueAxis("left"), "bottom": ElapsedAxis("bottom")})

A chart that silently drops data is the worst defect a benchmark tool can have, so ranges are
computed (app.model.scale.value_range) from every plotted array, never left to a linked
view's pixel mapping.
"""
from __future__ import annotations

import math

import pyqtgraph as pg

from app.model.scale import MAX_TICKS, clock_step, fmt_clock, fmt_tick, nice_step


class _EndLabels:
    """With a grid, pyqtgraph drops a label that pokes past the axis ends (the 0 at the
    bottom, the last clock tick): let labels overflow by half a line."""

    def boundingRect(self):                                # noqa: N802 (Qt name)
        r = super().boundingRect()
        font = self.style.get("tickFont")
        m = (font.pixelSize() if font is not None and font.pixelSize() > 0 else 13) * 0.75
        if self.orientation in ("left", "right"):
            return r.adjusted(0, -m, 0, m)
        return r.adjusted(-3 * m, 0, 3 * m, 0)


class ValueAxis(_EndLabels, pg.AxisItem):
    """A value axis with at most ``max_ticks`` round labels, thousands separators, no SI
    prefix ("ms (x0.001)" confuses), and readable decades in log mode."""

    def __init__(self, orientation: str = "left", max_ticks: int = MAX_TICKS, **kw) -> None:
        super().__init__(orientation, **kw)
        self.max_ticks = max_ticks
        self.enableAutoSIPrefix(False)

    def tickSpacing(self, minVal, maxVal, size):          # noqa: N802 (pyqtgraph name)
        if self.logMode:
            return super().tickSpacing(minVal, maxVal, size)
        span = maxVal - minVal
        if not span > 0:
            return []
        # fewer labels on a short axis: one per ~45 px at most
        n = max(2, min(self.max_ticks, int(size / 45) + 1))
        # one level: pyqtgraph labels every level that fits, which made 19 labels
        return [(nice_step(span, n), 0)]

    def tickValues(self, minVal, maxVal, size):           # noqa: N802
        if self.logMode:
            # whole decades, with 2 and 5 inside them when that stays within max_ticks
            lo, hi = math.floor(minVal), math.ceil(maxVal)
            inside = [d + math.log10(m) for d in range(lo, hi + 1) for m in (1, 2, 5)]
            inside = [v for v in inside if minVal - 1e-9 <= v <= maxVal + 1e-9]
            if len(inside) <= self.max_ticks:
                return [(1.0, inside)]
            return [(1.0, [float(d) for d in range(lo, hi + 1)
                           if minVal - 1e-9 <= d <= maxVal + 1e-9])]
        return super().tickValues(minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):        # noqa: N802
        if self.logMode:
            return [fmt_tick(10 ** v, 10 ** math.floor(v + 1e-9)) for v in values]
        return [fmt_tick(v * scale, spacing * scale) for v in values]

    def major_ticks(self) -> list[float]:
        """The labelled values as drawn now (tests and slide checks read them)."""
        lo, hi = self.range
        size = self.width() if self.orientation in ("left", "right") else self.height()
        length = self.height() if self.orientation in ("left", "right") else self.width()
        levels = self.tickValues(lo, hi, length or size or 400)
        return list(levels[0][1]) if levels else []


class ElapsedAxis(_EndLabels, pg.AxisItem):
    """Seconds since the run (or the alignment phase) started, as m:ss or h:mm:ss, at round
    clock values (1, 2, 5, 10, 15, 30 s, 1, 2, 5 … min, 1 h …), at most ``max_ticks``."""

    MINUS = "−"

    def __init__(self, orientation: str = "bottom", max_ticks: int = MAX_TICKS,
                 px_per_tick: float = 100, **kw) -> None:
        super().__init__(orientation, **kw)
        self.max_ticks = max_ticks
        self.px_per_tick = px_per_tick
        self.enableAutoSIPrefix(False)

    def tickSpacing(self, minVal, maxVal, size):          # noqa: N802
        span = maxVal - minVal
        if not span > 0:
            return []
        n = max(2, min(self.max_ticks, int(size / self.px_per_tick) + 1))
        return [(clock_step(span, n), 0)]

    def tickStrings(self, values, scale, spacing):        # noqa: N802
        return [fmt_clock(v * scale, self.MINUS) for v in values]

    def major_ticks(self) -> list[float]:
        lo, hi = self.range
        levels = self.tickValues(lo, hi, self.width() or 600)
        return list(levels[0][1]) if levels else []




def outage_region(x0: float, x1: float, rgba: tuple = (207, 34, 46, 40)) -> pg.LinearRegionItem:
    """The shaded stretch of an outage (first error to reconnect; Comparison.outage_spans,
    SeriesStore.outages): behind the lines, not movable, outside the autorange."""
    region = pg.LinearRegionItem(values=(x0, max(x1, x0)), orientation="vertical",
                                 movable=False, brush=pg.mkBrush(*rgba),
                                 pen=pg.mkPen(None))
    region.setZValue(-20)
    for line in region.lines:
        line.setPen(pg.mkPen(None))
    return region
