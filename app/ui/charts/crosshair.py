"""A crosshair readout for any stack of time charts: hover a chart and a vertical line marks
that moment on every chart, and each chart lists its lines' values there.

    hair = Crosshair(graphics_layout_widget, lambda: [(plot, [(label, colour, curve), …])])

The values are the points the curves were given (the interval ending at or before the mouse),
so the readout says exactly what the chart draws; a point more than ``max_gap`` seconds
before the mouse is not "the value there" and reads as a dash.
"""
from __future__ import annotations

from html import escape
from typing import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt

from app.model.runset import fmt_value as fmt
from app.model.scale import fmt_clock

Lines = Sequence[tuple[str, str, pg.PlotDataItem]]        # (label, colour, curve)


def value_at(curve: pg.PlotDataItem, t: float, max_gap: float = 3.0) -> float | None:
    """The curve's value at the last point at or before t (original data, not log10)."""
    x, y = curve.xData, curve.yData
    if x is None or y is None or not len(x):
        return None
    i = int(np.searchsorted(x, t, side="right")) - 1
    if i < 0 or t - x[i] > max_gap:
        return None
    v = float(y[i])
    return v if np.isfinite(v) else None


class Crosshair:
    """Hover readout over the plots ``groups()`` names; follows the mouse at up to 60 Hz."""

    def __init__(self, view: pg.GraphicsLayoutWidget,
                 groups: Callable[[], list[tuple[pg.PlotItem, Lines]]],
                 max_gap: float = 3.0, dark: Callable[[], bool] = lambda: False,
                 fmt: Callable[[float | None], str] = fmt) -> None:
        self.view = view
        self.fmt = fmt                            # how a value reads (a chart's own unit)
        self.groups = groups
        self.max_gap = max_gap
        self.dark = dark
        self._items: dict[int, tuple[pg.InfiniteLine, pg.TextItem]] = {}
        self.t: float | None = None
        self.texts: dict[int, str] = {}           # plot id -> readout (tests read it)
        self._proxy = pg.SignalProxy(view.scene().sigMouseMoved, rateLimit=60,
                                     slot=lambda args: self.move_to(args[0]))
        self._leave = _LeaveFilter(self.hide)
        view.viewport().installEventFilter(self._leave)

    def _pair(self, plot: pg.PlotItem) -> tuple[pg.InfiniteLine, pg.TextItem]:
        pair = self._items.get(id(plot))
        if pair is None or pair[0].scene() is None:
            line = pg.InfiniteLine(angle=90, movable=False,
                                   pen=pg.mkPen("#8c959f", width=1, style=Qt.PenStyle.DotLine))
            line.setZValue(40)
            text = pg.TextItem(anchor=(0, 0))
            text.setZValue(41)
            plot.addItem(line, ignoreBounds=True)
            plot.addItem(text, ignoreBounds=True)
            pair = self._items[id(plot)] = (line, text)
        return pair

    def hide(self) -> None:
        self.t = None
        for line, text in self._items.values():
            line.hide()
            text.hide()

    def move_to(self, scene_pos) -> None:
        groups = self.groups()
        hovered = next((p for p, _ in groups
                        if p.getViewBox().sceneBoundingRect().contains(scene_pos)), None)
        if hovered is None:
            self.hide()
            return
        vb = hovered.getViewBox()
        t = vb.mapSceneToView(scene_pos).x()
        self.show_at(t, hovered=hovered)

    def show_at(self, t: float, hovered: pg.PlotItem | None = None) -> None:
        """Mark time t on every chart and write each chart's values there."""
        self.t = t
        live = {id(p) for p, _ in self.groups()}
        for key in [k for k in self._items if k not in live]:
            self._items.pop(key)
        self.texts = {}
        for plot, lines in self.groups():
            line, text = self._pair(plot)
            line.setValue(t)
            line.show()
            rows = [f'<span style="color:{c}">━</span>&nbsp;{escape(label)} '
                    f'<b>{self.fmt(value_at(curve, t, self.max_gap))}</b>'
                    for label, c, curve in lines]
            head = f"<b>{fmt_clock(t)}</b>" if plot is hovered or hovered is None else ""
            body = "<br>".join(([head] if head else []) + rows)
            dark = self.dark()          # read at each move: the theme may have changed
            text.border = pg.mkPen("#3a414b" if dark else "#c9ced4")
            text.fill = pg.mkBrush(37, 42, 49, 235) if dark else pg.mkBrush(255, 255, 255, 230)
            colour = "#e6edf3" if dark else "#24292f"
            text.setHtml(f'<div style="color:{colour}">{body}</div>')
            self.texts[id(plot)] = text.textItem.toPlainText()
            (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
            # keep the box inside the chart: right of the line, or left of it near the edge
            right = (t - x0) < 0.7 * (x1 - x0)
            text.setAnchor((0, 0) if right else (1, 0))
            text.setPos(t, y1)
            text.setVisible(bool(rows))

    def text_of(self, plot: pg.PlotItem) -> str:
        return self.texts.get(id(plot), "")


class _LeaveFilter(QObject):
    def __init__(self, on_leave: Callable[[], None]) -> None:
        super().__init__()
        self._on_leave = on_leave

    def eventFilter(self, obj, ev) -> bool:                  # noqa: N802 (Qt name)
        if ev.type() == QEvent.Type.Leave:
            self._on_leave()
        return False
