"""Three linked charts read from a SeriesStore: throughput, latency, host CPU.

Views never own data: ``refresh()`` reads from the store only when its version moved, so a
burst of events costs one redraw however many arrived. A redraw reads only the time window
on screen (and as much again either side, so a pan shows lines at once) at about two points
per pixel column, each column's min and max where more fall in it: its cost is the same at
minute 1 and hour 10, and a 1-s stall stays visible zoomed out. Hidden charts are not drawn;
they catch up when shown.

The first chart is the workload's own when its spec declares charts (TPROC-C: NOPM from
the client next to TPM from the server), else client-counted throughput in its unit; a run
with two or more transaction types shows p95 latency per type.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QMenu, QVBoxLayout, QWidget

from app.model.scale import (LABEL_POSITION, fit_labels, log_range, phase_labels, value_range,
                             with_label_band)
from app.model.series import SeriesStore
from app.model.track import decimate
from workloads.params import WorkloadSpec
from workloads.registry import WORKLOADS

from app.ui.charts.axes import ElapsedAxis, ValueAxis, outage_region
from app.ui.common import theme
from app.ui.charts.crosshair import Crosshair
from app.ui.common.tasks import TaskRunner

# Colour-blind-safe palette (Okabe–Ito), readable on white.
BLUE, ORANGE, GREEN, RED, PURPLE, GREY, SKY = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#8C8C8C", "#56B4E9")

CHARTS = {
    "throughput": {
        "title": "QPS (clients' count)",
        "unit": "QPS",
        "lines": [("throughput", "throughput", BLUE)],
    },
    "latency": {
        "title": "Latency · all operations",
        "unit": "ms",
        "lines": [("latency.p50", "p50", GREEN), ("latency.p95", "p95", ORANGE),
                  ("latency.p99", "p99", RED)],
    },
    "cpu": {
        "title": "Host CPU · /proc",
        "unit": "%",
        "lines": [("cpu.user", "user", BLUE), ("cpu.system", "system", RED),
                  ("cpu.iowait", "iowait", PURPLE), ("cpu.idle", "idle", GREY)],
    },
}


TYPE_LATENCY = {"title": "Latency p95 · by transaction type", "unit": "ms", "lines": []}
TYPE_COLOURS = (BLUE, ORANGE, GREEN, RED, PURPLE, SKY, GREY)


def workload_chart(spec: WorkloadSpec | None, unit: str = "") -> dict:
    """The first chart of a run: the workload's declared one, else throughput in its unit."""
    if spec is not None and spec.charts:
        c = spec.charts[0]
        labels = c.labels or c.series
        return {"title": c.title, "unit": c.unit,
                "lines": [(s, lab, TYPE_COLOURS[i % len(TYPE_COLOURS)])
                          for i, (s, lab) in enumerate(zip(c.series, labels))]}
    unit = unit or (spec.throughput_unit if spec else "") or "ops/s"
    # what is counted and by whom, in words a newcomer reads: "TPS (clients' count)"
    return {**CHARTS["throughput"], "title": f"{unit} (clients' count)", "unit": unit}


def type_lines(types: list[str], q: str = "p95") -> list[tuple[str, str, str]]:
    return [(f"latency.{name}.{q}", name, TYPE_COLOURS[i % len(TYPE_COLOURS)])
            for i, name in enumerate(types)]


TYPE_QUANTILES = ("p50", "p95", "p99")
LINE_WIDTH = 1.6
# a curve with more points than this share of the plot's pixel columns is drawn 1 px wide:
# Qt strokes an antialiased wider line as one outline, and a dense curve's min/max columns
# overlap so much that 11 curves of 2,500 points took 8 s to paint (1 px: 45 ms)
DENSE = 0.25
MARGIN = 0.5             # of the view's span read either side of it when not following
REREAD_MS = 40           # a zoom or pan re-reads the store this long after it settles


def configure_pyqtgraph() -> None:
    c = theme.colours()
    pg.setConfigOptions(background=c["chart_bg"], foreground=c["chart_fg"], antialias=True)


class DashboardWidget(QWidget):
    """The live (or replayed) dashboard. ``curves[series_name]`` is the PlotDataItem."""

    def __init__(self, store: SeriesStore | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        configure_pyqtgraph()
        self.store = store or SeriesStore()
        self._drawn_version = -1
        self._phase_marks: tuple | None = None
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.plots: dict[str, pg.PlotItem] = {}
        self.charts: dict[str, dict] = {k: dict(c) for k, c in CHARTS.items()}
        self.workload: str | None = None      # whose charts are shown
        self.type_quantile = "p95"            # per transaction type: the latency drawn
        self._markers: dict[str, list[pg.InfiniteLine]] = {}
        self._regions: dict[str, list[pg.LinearRegionItem]] = {}     # outages
        self._waiting: dict[str, pg.TextItem] = {}
        self._follow = True             # the time axis follows the run until the user zooms
        self._read: tuple[float, float, int] | None = None    # window and columns last read
        self._stale = False             # data arrived while hidden
        self._reread = QTimer(self)
        self._reread.setSingleShot(True)
        self._reread.setInterval(REREAD_MS)
        self._reread.timeout.connect(lambda: self.refresh(force=True))
        # detail(names, t0, t1) -> {name: (t, v)}: the run's points from its session file,
        # for a zoom into a part older than the store keeps at full resolution
        self.detail: Callable[[list[str], float, float], dict] | None = None
        self._detail: tuple | None = None        # (t0, t1, points, {name: (x, y)})
        self._detail_asked: tuple | None = None
        self.tasks = TaskRunner(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.colours()["chart_bg"])
        self.graphics.ci.setSpacing(4)
        self.graphics.ci.setContentsMargins(4, 4, 12, 4)
        layout.addWidget(self.graphics)

        first: pg.PlotItem | None = None
        for row, (key, chart) in enumerate(CHARTS.items()):
            plot = self.graphics.addPlot(row=row, col=0,
                                         axisItems={"bottom": ElapsedAxis("bottom"),
                                                    "left": ValueAxis("left")})
            plot.setLabel("left", chart["unit"])
            for side in ("left", "bottom"):
                # "ms (x0.001)" or "kQPS" would confuse: keep the unit the user expects.
                plot.getAxis(side).enableAutoSIPrefix(False)
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMenuEnabled(False)
            plot.getAxis("left").setWidth(84)    # aligned axes make linked charts readable
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            plot.getViewBox().setMouseEnabled(x=True, y=False)
            plot.getViewBox().sigRangeChangedManually.connect(self._on_range_changed_manually)
            waiting = pg.TextItem("waiting for the first sample",
                                  color=theme.colours()["placeholder"],
                                  anchor=(0.5, 0.5))
            waiting.setParentItem(plot.getViewBox())
            self._waiting[key] = waiting
            plot.getViewBox().sigResized.connect(
                lambda vb, t=waiting: t.setPos(vb.width() / 2, vb.height() / 2))
            self.plots[key] = plot
            self._set_chart(key, chart)
            # y starts at zero: a benchmark chart whose axis starts at 18,000 exaggerates.
            plot.enableAutoRange(axis="y", enable=False)
            plot.setYRange(0, 100 if key == "cpu" else 1, padding=0.02)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)          # zoom on time is linked across panes
            self._markers[key] = []
            self._regions[key] = []
        self.plots["cpu"].setLabel("bottom", "elapsed (h:mm:ss)")
        self.plots["cpu"].getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        for key in ("throughput", "latency"):
            self.plots[key].getAxis("bottom").setStyle(showValues=False)
        self.log_y: set[str] = set()         # charts drawn on a log10 value axis
        self.graphics.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self.crosshair = Crosshair(self.graphics, self._crosshair_groups, dark=theme.is_dark)
        theme.on_change(self._on_theme_changed)

    def _on_theme_changed(self, _name: str) -> None:
        """Background, axes, titles and marks in the new theme's colours."""
        c = theme.colours()
        self.graphics.setBackground(c["chart_bg"])
        for key, plot in self.plots.items():
            theme.style_plot(plot)
            self._set_title(key)
            plot.setLabel("left", self.charts[key]["unit"])
        self.plots["cpu"].setLabel("bottom", "elapsed (h:mm:ss)")
        for t in self._waiting.values():
            t.setColor(c["placeholder"])
        self._phase_marks = None
        self.refresh(force=True)

    def _crosshair_groups(self) -> list:
        return [(plot, [(label, colour, self.curves[s])
                        for s, label, colour in self.charts[key]["lines"] if s in self.curves])
                for key, plot in self.plots.items()]

    def plot_at(self, scene_pos) -> str | None:
        for key, plot in self.plots.items():
            if plot.getViewBox().sceneBoundingRect().contains(scene_pos):
                return key
        return None

    def _on_scene_clicked(self, ev) -> None:
        if ev.button() != Qt.MouseButton.RightButton:
            return
        key = self.plot_at(ev.scenePos())
        if key is None:
            return
        ev.accept()
        sp = ev.screenPos()
        self.chart_menu(key).popup(QPoint(int(sp.x()), int(sp.y())))

    def chart_menu(self, key: str) -> QMenu:
        """The right-click menu of one chart: log scale (p50 and p99 an order of magnitude
        apart crush each other on a linear axis) and the whole time axis."""
        menu = QMenu(self)
        menu.setObjectName("chart_menu")
        act = menu.addAction("Logarithmic scale")
        act.setCheckable(True)
        act.setChecked(key in self.log_y)
        act.toggled.connect(lambda on: self.set_log_y(key, on))
        menu.addAction("Follow the run (whole time axis)", self.clear_view)
        if key == "latency" and self.store.types():
            menu.addSeparator()
            for q in TYPE_QUANTILES:             # per transaction type: which percentile
                a = menu.addAction(f"Each type's {q}")
                a.setCheckable(True)
                a.setChecked(q == self.type_quantile)
                a.triggered.connect(lambda _on, q=q: self.set_type_quantile(q))
        return menu

    def set_type_quantile(self, q: str) -> None:
        """The percentile the per-transaction-type latency chart draws (p50, p95, p99)."""
        self.type_quantile = q
        self._sync_latency_lines()
        self.refresh(force=True)

    def set_log_y(self, key: str, on: bool) -> None:
        (self.log_y.add if on else self.log_y.discard)(key)
        self.plots[key].setLogMode(x=False, y=on)
        self.refresh(force=True)

    def _set_chart(self, key: str, chart: dict) -> None:
        """(Re)build one plot's curves, title and unit from a chart description."""
        plot = self.plots[key]
        for series, _label, _colour in self.charts[key]["lines"]:
            curve = self.curves.pop(series, None)
            if curve is not None:
                plot.removeItem(curve)
        self.charts[key] = chart
        for series, label, colour in chart["lines"]:
            curve = plot.plot([], [], name=label, pen=pg.mkPen(colour, width=LINE_WIDTH))
            self.curves[series] = curve
        self._set_title(key)
        plot.setLabel("left", chart["unit"])

    def set_placeholder(self, text: str) -> None:
        """What an empty chart says: "waiting for the first sample" live, "loading…" while a
        saved run is read."""
        for item in self._waiting.values():
            item.setText(text)

    def _wraps(self, chart: dict) -> bool:
        """Whether a chart's title and legend need two lines at this width (one line of
        about 7 px a glyph at 10 pt, beside the value axis)."""
        glyphs = len(chart["title"]) + sum(len(label) + 5 for _s, label, _c in chart["lines"])
        return len(chart["lines"]) > 1 and glyphs * 7.2 > self.width() - 90

    def _set_title(self, key: str) -> None:
        """The title row: the legend on a second line where one line would be cut (the
        latency legend lost "stock-level" at 1366 px)."""
        plot, chart = self.plots[key], self.charts[key]
        wrap = self._wraps(chart)
        plot.setTitle(self._title_html(chart, wrap), size="10pt")
        if wrap:
            plot.titleLabel.setMaximumHeight(46)
            plot.layout.setRowFixedHeight(0, 46)

    def resizeEvent(self, ev) -> None:                        # noqa: N802 (Qt name)
        super().resizeEvent(ev)
        for key in getattr(self, "plots", {}):
            if key in getattr(self, "charts", {}):
                self._set_title(key)

    @staticmethod
    def _title_html(chart: dict, wrap: bool = False) -> str:
        html = (f'<span style="color:{theme.colours()["chart_title"]};font-weight:600">'
                f'{chart["title"]}</span>')
        if len(chart["lines"]) > 1:          # the legend lives in the title, off the data
            html += ("<br>" if wrap else "&nbsp;&nbsp;&nbsp;") + "&nbsp;&nbsp;".join(
                f'<span style="color:{c};font-weight:900">&#9473;&#9473;</span>'
                f'<span style="color:{theme.colours()["chart_fg"]}">&nbsp;{label}</span>'
                for _s, label, c in chart["lines"])
        return html

    def set_workload(self, spec: WorkloadSpec | None, unit: str = "") -> None:
        """Show this workload's first chart (a spec of None: throughput in ``unit``)."""
        chart = workload_chart(spec, unit)
        if chart != self.charts["throughput"]:
            self._set_chart("throughput", chart)
            self._drawn_version = -1
        self.workload = spec.name if spec else None

    def _sync_latency_lines(self) -> None:
        """One percentile per transaction type (p95 unless another is chosen) when the run
        has several types, else p50/p95/p99."""
        types = self.store.types()
        q = self.type_quantile
        chart = ({**TYPE_LATENCY, "title": f"Latency {q} · by transaction type",
                  "lines": type_lines(types, q)} if types else dict(CHARTS["latency"]))
        if chart != self.charts["latency"]:
            self._set_chart("latency", chart)

    def set_store(self, store: SeriesStore) -> None:
        """Show ``store`` and nothing else: every line, phase mark and range of the previous
        store goes (a new run, another workload chosen, another saved run opening)."""
        self.store = store
        self._drawn_version = -1
        self.detail = None
        self._detail = self._detail_asked = None
        for curve in self.curves.values():
            curve.setData([], [])
        self._phase_marks = None
        self.clear_view()
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> bool:
        """Redraw from the store if it changed; return whether anything was drawn."""
        if not force and not self.isVisible():
            self._stale = True          # drawn when shown (showEvent)
            return False
        version = self.store.version
        if version == self._drawn_version and not force:
            return False
        self._drawn_version = version
        self._stale = False
        state = self.store.state()
        if state.events:          # an empty store knows no workload yet: keep the chosen one
            self.set_workload(WORKLOADS.get(state.workload or ""), state.throughput_unit)
        self._sync_latency_lines()
        if self._follow:
            # the run clock from zero to now: no negative time, no empty stretch before it
            self.plots["cpu"].setXRange(0.0, max(state.last_t, 10.0), padding=0.01)
        lo, hi = self.plots["cpu"].getViewBox().viewRange()[0]
        margin = 0.0 if self._follow else (hi - lo) * MARGIN
        a, b = lo - margin, hi + margin
        columns = self._columns()
        points = max(1, int(columns * (b - a) / max(hi - lo, 1e-9)))
        self._read = (a, b, columns)
        drawn: dict[str, list[np.ndarray]] = {key: [] for key in self.plots}
        owner = {series: key for key, chart in self.charts.items()
                 for series, _l, _c in chart["lines"]}
        detail = self._detail_for(a, b, points)
        for series, curve in self.curves.items():
            if detail is not None and series in detail:
                x, y = detail[series]
            else:
                x, y = self.store.window(series, a, b, points)
            # one sample is a dot: a line through one point draws nothing
            curve.setSymbol("o" if len(x) == 1 else None)
            width = 1.0 if len(x) > DENSE * columns else LINE_WIDTH
            if curve.opts["pen"].widthF() != width:
                pen = pg.mkPen(curve.opts["pen"])
                pen.setWidthF(width)
                curve.setPen(pen)
            curve.setData(x, y)
            if len(y):
                seen = y[(x >= lo) & (x <= hi)]      # the range holds what is on screen
                drawn[owner[series]].append(seen if len(seen) else y)
        for key, plot in self.plots.items():
            if key in self.log_y:
                lo_y, hi_y = log_range(drawn[key])
            else:
                lo_y, hi_y, _ = value_range(drawn[key],
                                            fixed_top=100.0 if key == "cpu" else None)
            if key == "throughput" and drawn[key]:      # the phase names' band on top
                lo_y, hi_y = with_label_band(lo_y, hi_y)
            plot.setYRange(lo_y, hi_y, padding=0.02)
            self._waiting[key].setVisible(not drawn[key])
            plot.getAxis("left").setStyle(showValues=bool(drawn[key]) or key == "cpu")
        self._draw_phase_marks()
        return True

    def _detail_for(self, a: float, b: float, points: int) -> dict | None:
        """The session file's points of this view when the store has it only coarser than
        the screen (asked off the GUI thread; the view is drawn again when they come)."""
        if self.detail is None or self._follow:
            return None
        key = (a, b, points)
        if self._detail is not None and self._detail[:3] == key:
            return self._detail[3]
        names = list(self.curves)
        if not any(self.store.coarse(n, a, b, points) for n in names):
            return None
        if self._detail_asked != key:
            self._detail_asked = key
            read = self.detail
            self.tasks.submit(lambda: read(names, a, b),
                              on_done=lambda got, key=key: self._on_detail_read(key, got),
                              on_error=lambda _exc: None)    # the store's buckets stay drawn
        return None

    def _on_detail_read(self, key: tuple, got: dict) -> None:
        if self._detail_asked != key:
            return                          # the view moved on meanwhile
        a, b, points = key
        self._detail = (a, b, points, {
            name: decimate(np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64),
                           a, b, points)
            for name, (t, v) in got.items() if len(t)})
        self.refresh(force=True)

    def _columns(self) -> int:
        """Pixel columns of the plots (points to read per view: two per column, min/max)."""
        width = self.plots["cpu"].getViewBox().width()
        return max(200, int(width if width > 1 else 1000))

    def _on_x_range_changed(self, _vb, rng) -> None:
        """A zoom or pan outside what was read (or at another resolution) reads again."""
        if self._read is None or self._follow:
            return
        a, b, columns = self._read
        lo, hi = rng
        span_read = (b - a) / (1 + 2 * MARGIN)
        if lo < a or hi > b or not 0.5 <= (hi - lo) / max(span_read, 1e-9) <= 2.0 \
                or columns != self._columns():
            self._reread.start()

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        if self._stale:
            self.refresh(force=True)

    def _on_range_changed_manually(self, *_a) -> None:
        self._follow = False              # the user zoomed or panned: stop following
        self._on_x_range_changed(None, self.plots["cpu"].getViewBox().viewRange()[0])

    def _draw_phase_marks(self) -> None:
        lo, hi = self.plots["cpu"].getViewBox().viewRange()[0]
        outages = self.store.outages()
        # an outage (reconnect=on) is marked at its first error like a phase start, and the
        # time its users were down is shaded
        marks = [(t0, name) for name, t0, _ in self.store.phases()] + \
            [(o.t0, o.label) for o in outages]
        labels = fit_labels(phase_labels(marks, lo, hi), lo, hi)
        last_t = self.store.state().last_t
        spans = [(o.t0, o.down_until(last_t)) for o in outages]
        c = theme.colours()
        # rebuilt only when what is drawn changes (not each time the followed axis grows;
        # an open outage's stretch every tenth of a second)
        key = (labels, [(a, round(b, 1)) for a, b in spans])
        if key == self._phase_marks:
            return
        self._phase_marks = key
        for chart, plot in self.plots.items():
            for line in self._markers[chart]:
                plot.removeItem(line)
            self._markers[chart] = []
            for region in self._regions[chart]:
                plot.removeItem(region)
            self._regions[chart] = []
            for a, b in spans:
                region = outage_region(a, b, c["chart_outage"])
                plot.addItem(region, ignoreBounds=True)
                self._regions[chart].append(region)
            for t0, label, left, full in labels:
                # names in the band above the data, cut to their room (full name on hover)
                line = pg.InfiniteLine(
                    pos=t0, angle=90, movable=False,
                    pen=pg.mkPen(c["chart_mark"], width=1, style=Qt.PenStyle.DashLine),
                    label=(f"{label} " if left else f" {label}") if chart == "throughput"
                    else None,
                    labelOpts={"position": LABEL_POSITION,
                               "color": c["chart_mark_text"],
                               "anchors": [(1, 0.5), (1, 0.5)] if left
                               else [(0, 0.5), (0, 0.5)]})
                line.setToolTip(full)
                if chart == "throughput":
                    line.label.setToolTip(full)
                plot.addItem(line, ignoreBounds=True)
                self._markers[chart].append(line)

    def clear_view(self) -> None:
        """Undo any zoom or pan: the time axis follows the run from zero again."""
        self._follow = True
        self.plots["cpu"].setXRange(0.0, max(self.store.state().last_t, 10.0), padding=0.01)
        self._reread.start()              # the whole run again, at its resolution
