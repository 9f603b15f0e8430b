"""The Compare view's charts: one pane per chart (overlay) or per chart and run (side by side),
each run in its colour, linked time axes, one cursor per pane, a hover readout, and replay
drawn as if live.

    panes = ComparePanes()
    panes.build(comp, ["throughput", "latency", "cpu"], "overlay", position=0.0)
    panes.set_time(t)                 # the clock moved: every cursor follows
    panes.freeze(t) / panes.thaw()    # play starts / stops (lines grow up to the cursor)

The panes read the Comparison (``comp.series(i, key)``) and never own data; they move the
replay clock only through their signals.
"""
from __future__ import annotations

from html import escape
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal

from app.analysis.compare import Comparison
from app.analysis.deck import line_styles
from app.analysis.metrics import CHARTS, METRICS
from app.model.runset import short_title
from app.model.scale import (LABEL_POSITION, fit_labels, log_range, phase_labels, value_range,
                             with_label_band)

from app.ui.common import theme
from app.ui.charts.axes import ElapsedAxis, ValueAxis, outage_region
from app.ui.charts.crosshair import Crosshair
from app.ui.compare.replay import ReplayOverlay

AXIS_WIDTH = 64               # same width everywhere, so linked panes line up to the pixel
DENSE_POINTS = 2_000          # points beyond which a curve is drawn 1 px wide (see _draw_run)
_DASH = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine,
         "dot": Qt.PenStyle.DotLine, "dashdot": Qt.PenStyle.DashDotLine}
_GLYPH = {"solid": "━━", "dash": "╍╍", "dot": "┈┈", "dashdot": "━·"}


def np_of(a) -> np.ndarray:
    return np.frombuffer(a, dtype=np.float64) if len(a) else np.zeros(0)


class ComparePanes(QObject):
    position_picked = Signal(float)        # a cursor dragged, or a chart clicked, to there
    menu_requested = Signal(str, QPoint)   # a chart right-clicked (chart name, screen pos)
    view_changed = Signal()                # zoom, pan or resize: a frozen picture is stale

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view = pg.GraphicsLayoutWidget()
        self.view.setObjectName("compare_charts")
        self.view.setBackground(theme.colours()["chart_bg"])
        self.view.ci.setSpacing(4)
        self.view.installEventFilter(self)
        self.view.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self.comp: Comparison | None = None
        self.mode = "overlay"
        self.chart_names: list[str] = []
        self.plots: list[tuple[str, int | None, pg.PlotItem]] = []
        self.cursors: list[pg.InfiniteLine] = []
        self.curves: dict[tuple[str, int, str], pg.PlotDataItem] = {}
        self.log_charts: set[str] = set()             # charts on a log10 value axis
        self.overlay: ReplayOverlay | None = None
        self.crosshair = Crosshair(self.view, self.crosshair_groups, dark=theme.is_dark)
        theme.on_change(self._on_theme_changed)

    def _on_theme_changed(self, _name: str) -> None:
        if self.comp is not None:
            pos = self.cursors[0].value() if self.cursors else 0.0
            self.build(self.comp, self.chart_names, self.mode, pos)
        else:
            self.view.setBackground(theme.colours()["chart_bg"])

    # building
    def clear(self) -> None:
        if self.overlay is not None:
            self.overlay.thaw()
        self.view.clear()
        self.plots, self.cursors, self.curves = [], [], {}

    def build(self, comp: Comparison, names: Sequence[str], mode: str, position: float,
              keep_x: bool = True) -> None:
        """One pane per chart (and run, side by side), all on one time axis: the range in
        view kept (``keep_x``), else every run's whole time."""
        x_range = self.x_view() if keep_x else None
        self.clear()
        self.comp, self.mode, self.chart_names = comp, mode, list(names)
        runs = list(range(len(comp.runs)))
        groups: list[int | None] = [None] if mode == "overlay" else runs
        c = theme.colours()
        self.view.setBackground(c["chart_bg"])
        first = None
        for row, name in enumerate(self.chart_names):
            ch = CHARTS[name]
            unit = ch.unit or comp.metric_unit(ch.metrics[0])
            for col, run in enumerate(groups):
                plot = self.view.addPlot(row=row, col=col,
                                         axisItems={"bottom": ElapsedAxis("bottom"),
                                                    "left": ValueAxis("left")})
                plot.setLogMode(x=False, y=name in self.log_charts)
                self._style_plot(plot, name, unit, run, top_row=(row == 0),
                                 bottom_row=(row == len(self.chart_names) - 1),
                                 first_col=(col == 0))
                members = runs if run is None else [run]
                for i in members:
                    self._draw_run(plot, name, i)
                self._draw_phase_marks(plot, members)
                cursor = pg.InfiniteLine(pos=position, angle=90, movable=True,
                                         pen=pg.mkPen(c["chart_cursor"], width=1.5),
                                         hoverPen=pg.mkPen("#1f6feb", width=3))
                cursor.setZValue(50)
                cursor.sigDragged.connect(lambda line: self.position_picked.emit(line.value()))
                plot.addItem(cursor, ignoreBounds=True)
                if first is None:
                    first = plot
                else:
                    plot.setXLink(first)
                self.plots.append((name, run, plot))
                self.cursors.append(cursor)
            self.set_y_range(name)
        lo, hi = comp.time_range()
        if first is not None:
            first.setXRange(*(x_range or (lo, hi)), padding=0 if x_range else 0.01)
            first.getViewBox().sigXRangeChanged.connect(lambda *_a: self.view_changed.emit())
        self.overlay = ReplayOverlay(self.view, [p for _, _, p in self.plots], self.curves_on,
                                     colour=c["chart_cursor"])

    def _style_plot(self, plot: pg.PlotItem, name: str, unit: str, run: int | None,
                    top_row: bool, bottom_row: bool, first_col: bool) -> None:
        ch = CHARTS[name]
        plot.setMenuEnabled(False)
        plot.hideButtons()
        theme.style_plot(plot)
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.getAxis("left").setWidth(AXIS_WIDTH)
        # the y axis is fixed (it holds every run's data): the mouse zooms and pans time only
        plot.getViewBox().setMouseEnabled(x=True, y=False)
        plot.getAxis("bottom").setHeight(22 if not bottom_row else 40)
        if bottom_row:
            plot.setLabel("bottom", "elapsed (h:mm:ss)", color="#666666")
        title = f"{ch.title} ({unit})" if unit else ch.title
        if len(ch.metrics) > 1 and first_col:          # which line style is which metric
            styles = line_styles(ch.metrics)
            title += "   " + "   ".join(
                f"{_GLYPH[styles[k]]} {short_title(METRICS[k].title)}" for k in ch.metrics)
        if run is None:
            plot.setTitle(f'<span style="color:{theme.colours()["chart_title"]}">'
                          f'{escape(title)}</span>', size="9pt")
            return
        # side by side: narrow panes, so short titles (a title sets a pane's minimum width)
        r = self.comp.runs[run]
        head = f'<span style="color:{r.colour}"><b>{run + 1}. {escape(r.label)}</b></span>'
        if first_col:
            text = (head + " · " if top_row else "") + (
                f'<span style="color:#57606a">{escape(title)}</span>')
        else:
            text = head if top_row else f'<span style="color:#57606a">{escape(ch.title)}</span>'
        plot.setTitle(text, size="9pt")

    def _draw_run(self, plot: pg.PlotItem, name: str, i: int) -> None:
        r = self.comp.runs[i]
        metrics = CHARTS[name].metrics
        styles = line_styles(metrics)
        for k in metrics:
            t, v = self.comp.series(i, k)
            style = _DASH[styles[k]] if len(metrics) > 1 else Qt.PenStyle.SolidLine
            # a single point is a dot, not nothing
            dot = dict(symbol="o", symbolSize=6, symbolBrush=r.colour, symbolPen=None) \
                if len(t) == 1 else {}
            # a long run is drawn as min/max columns (peak downsampling): 1 px wide, as Qt
            # strokes a wider antialiased line of overlapping columns as one slow outline
            width = 1.6 if len(t) <= DENSE_POINTS else 1.0
            curve = pg.PlotDataItem(np_of(t), np_of(v), pen=pg.mkPen(r.colour, width=width,
                                                                     style=style),
                                    connect="finite", name=f"{r.label} {METRICS[k].title}",
                                    **dot)
            plot.addItem(curve)
            self.curves[(name, i, k)] = curve

    def _draw_phase_marks(self, plot: pg.PlotItem, members: Sequence[int]) -> None:
        lo, hi = self.comp.time_range()
        for a, b, _label in self.comp.outage_spans(members):
            plot.addItem(outage_region(a, b, theme.colours()["chart_outage"]), ignoreBounds=True)
        # close marks share one line and name both; late labels sit left of their line
        marks = fit_labels(phase_labels(self.comp.phase_marks(members), lo, hi), lo, hi,
                           glyphs=150 / (1 if self.mode == "overlay" else len(self.comp.runs)))
        for x, label, left, full in marks:
            # in the band above the data (set_y_range keeps it free), cut to its room
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen("#b0b0b0", width=1, style=Qt.PenStyle.DashLine),
                                   label=label,
                                   labelOpts={"position": LABEL_POSITION,
                                              "color": "#8a8a8a",
                                              "anchors": [(1, 0.5), (1, 0.5)] if left
                                              else [(0, 0.5), (0, 0.5)]})
            line.setToolTip(full)
            line.label.setToolTip(full)
            plot.addItem(line, ignoreBounds=True)

    def set_y_range(self, name: str) -> None:
        """One range for every pane of a chart, from zero to a round top over every run's
        data: fixed, so panning the time axis or replaying never makes the y axis jump, and
        set on each pane (a y-linked pane maps its range through pixel offsets, which hid
        data on panes of unequal height)."""
        ch = CHARTS[name]
        arrays = [np_of(self.comp.series(i, k)[1]) for i in range(len(self.comp.runs))
                  for k in ch.metrics]
        if name in self.log_charts:
            lo, hi = log_range(arrays)
        else:
            lo, hi, _step = value_range(arrays, from_zero=True, fixed_top=ch.y_max)
        lo, hi = with_label_band(lo, hi)
        for n, _run, plot in self.plots:
            if n == name:
                plot.enableAutoRange(axis="y", enable=False)
                plot.setYRange(lo, hi, padding=0)

    def update_run(self, i: int) -> None:
        """Run i was re-read (a live run): its lines and every range that holds them."""
        for (name, run, k), curve in self.curves.items():
            if run == i:
                t, v = self.comp.series(i, k)
                curve.setData(np_of(t), np_of(v), connect="finite")
        for name in self.chart_names:
            self.set_y_range(name)

    # reading
    def curves_on(self, plot: pg.PlotItem) -> list[pg.PlotDataItem]:
        names = {id(p): (n, r) for n, r, p in self.plots}
        name, run = names.get(id(plot), (None, None))
        return [c for (n, i, _k), c in self.curves.items()
                if n == name and (run is None or i == run)]

    def crosshair_groups(self) -> list:
        """Each pane with its lines, named by run number (and metric, when a chart has
        several), in the runs' colours."""
        out = []
        for name, run, plot in self.plots:
            metrics = CHARTS[name].metrics
            lines = []
            for (n, i, k), curve in self.curves.items():
                if n != name or (run is not None and i != run):
                    continue
                label = f"{i + 1}" + (f" {short_title(METRICS[k].title)}"
                                      if len(metrics) > 1 else "")
                lines.append((label, self.comp.runs[i].colour, curve))
            out.append((plot, lines))
        return out

    def plot(self, chart: str, run: int | None = None) -> pg.PlotItem:
        for name, r, p in self.plots:
            if name == chart and (run is None or r == run):
                return p
        raise KeyError(f"no chart {chart!r}" + (f" for run {run + 1}" if run is not None else ""))

    def x_view(self) -> tuple[float, float] | None:
        return tuple(self.plots[0][2].getViewBox().viewRange()[0]) if self.plots else None

    def set_x_view(self, lo: float, hi: float, padding: float = 0.01) -> None:
        if self.plots:
            self.plots[0][2].setXRange(lo, hi, padding=padding)

    def cursor_positions(self) -> list[float]:
        """Where each chart's cursor is (the line items, and the overlay while playing)."""
        out = [c.value() for c in self.cursors]
        if self.overlay is not None and self.overlay.frozen:
            out += [self.overlay.t] * len(self.plots)
        return out

    # the clock
    def set_time(self, t: float) -> None:
        for c in self.cursors:
            c.setValue(t)
        if self.overlay is not None and self.overlay.frozen:
            self.overlay.set_time(t)

    def freeze(self, t: float, grow: bool = True) -> None:
        """Play (``grow``): lines up to the cursor, growing as it moves; scrub: the whole
        lines as a still picture with the cursor moving over it."""
        if self.overlay is None:
            return
        for c in self.cursors:
            c.hide()
        self.crosshair.hide()
        for _, _, p in self.plots:
            p.enableAutoRange(axis="y", enable=False)
        self.overlay.freeze(grow)
        self.overlay.set_time(t)

    def thaw(self) -> None:
        """Pause: every line whole again, the cursors draggable."""
        if self.overlay is not None:
            self.overlay.thaw()
        for c in self.cursors:
            c.show()

    @property
    def frozen(self) -> bool:
        return self.overlay is not None and self.overlay.frozen

    # events
    def _on_scene_clicked(self, ev) -> None:
        pos = ev.scenePos()
        for name, _run, plot in self.plots:
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(pos):
                if ev.button() == Qt.MouseButton.LeftButton:
                    self.position_picked.emit(vb.mapSceneToView(pos).x())
                elif ev.button() == Qt.MouseButton.RightButton:
                    ev.accept()
                    sp = ev.screenPos()
                    self.menu_requested.emit(name, QPoint(int(sp.x()), int(sp.y())))
                return

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:   # noqa: N802 (Qt name)
        if obj is self.view and ev.type() == QEvent.Type.Resize:
            self.view_changed.emit()
        return super().eventFilter(obj, ev)
