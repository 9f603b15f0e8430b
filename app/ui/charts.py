"""Three linked charts read from a SeriesStore: throughput, latency, host CPU.

Views never own data: ``refresh()`` copies from the store only when its version moved, so a
burst of events costs one redraw however many arrived.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.model.series import SeriesStore

# Colour-blind-safe palette (Okabe–Ito), readable on white.
BLUE, ORANGE, GREEN, RED, PURPLE, GREY, SKY = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#8C8C8C", "#56B4E9")

CHARTS = {
    "throughput": {
        "title": "Throughput · client count",
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


def configure_pyqtgraph() -> None:
    pg.setConfigOptions(background="w", foreground="#333333", antialias=True)


class ElapsedAxis(pg.AxisItem):
    """Seconds since the run started shown as m:ss or h:mm:ss: runs last hours."""

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            s = int(round(v * scale))
            sign = "-" if s < 0 else ""
            s = abs(s)
            h, rem = divmod(s, 3600)
            m, sec = divmod(rem, 60)
            out.append(f"{sign}{h}:{m:02d}:{sec:02d}" if h else f"{sign}{m}:{sec:02d}")
        return out


class DashboardWidget(QWidget):
    """The live (or replayed) dashboard. ``curves[series_name]`` is the PlotDataItem."""

    def __init__(self, store: SeriesStore | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        configure_pyqtgraph()
        self.store = store or SeriesStore()
        self._drawn_version = -1
        self._phase_marks: list[tuple[str, float]] = []
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.plots: dict[str, pg.PlotItem] = {}
        self._markers: dict[str, list[pg.InfiniteLine]] = {}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.setSpacing(4)
        self.graphics.ci.setContentsMargins(4, 4, 12, 4)
        layout.addWidget(self.graphics)

        first: pg.PlotItem | None = None
        for row, (key, chart) in enumerate(CHARTS.items()):
            plot = self.graphics.addPlot(row=row, col=0,
                                         axisItems={"bottom": ElapsedAxis("bottom")})
            plot.setTitle(self._title_html(chart), size="10pt")
            plot.setLabel("left", chart["unit"])
            for side in ("left", "bottom"):
                # "ms (x0.001)" or "kQPS" would confuse: keep the unit the user expects.
                plot.getAxis(side).enableAutoSIPrefix(False)
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMenuEnabled(False)
            plot.getAxis("left").setWidth(64)    # aligned axes make linked charts readable
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            plot.getViewBox().setMouseEnabled(x=True, y=False)
            for series, label, colour in chart["lines"]:
                curve = plot.plot([], [], name=label, pen=pg.mkPen(colour, width=1.6))
                self.curves[series] = curve
            # y starts at zero: a benchmark chart whose axis starts at 18,000 exaggerates.
            plot.enableAutoRange(axis="y", enable=False)
            plot.setYRange(0, 100 if key == "cpu" else 1, padding=0.02)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)          # zoom on time is linked across panes
            self.plots[key] = plot
            self._markers[key] = []
        self.plots["cpu"].setLabel("bottom", "elapsed (h:mm:ss)")
        for key in ("throughput", "latency"):
            self.plots[key].getAxis("bottom").setStyle(showValues=False)

    @staticmethod
    def _title_html(chart: dict) -> str:
        html = f'<span style="color:#222;font-weight:600">{chart["title"]}</span>'
        if len(chart["lines"]) > 1:          # the legend lives in the title, off the data
            html += "&nbsp;&nbsp;&nbsp;" + "&nbsp;&nbsp;".join(
                f'<span style="color:{c};font-weight:900">&#9473;&#9473;</span>'
                f'<span style="color:#444">&nbsp;{label}</span>'
                for _s, label, c in chart["lines"])
        return html

    def set_store(self, store: SeriesStore) -> None:
        self.store = store
        self._drawn_version = -1
        self.refresh()

    def set_throughput_unit(self, unit: str) -> None:
        self.plots["throughput"].setLabel("left", unit or "ops/s")

    def refresh(self, force: bool = False) -> bool:
        """Redraw from the store if it changed; return whether anything was drawn."""
        version = self.store.version
        if version == self._drawn_version and not force:
            return False
        self._drawn_version = version
        peaks = {key: 0.0 for key in self.plots}
        owner = {series: key for key, chart in CHARTS.items() for series, _l, _c in chart["lines"]}
        for series, curve in self.curves.items():
            t, v = self.store.arrays(series)
            if len(t):
                y = np.frombuffer(v, dtype=np.float64)
                curve.setData(np.frombuffer(t, dtype=np.float64), y)
                peaks[owner[series]] = max(peaks[owner[series]], float(np.nanmax(y)))
            else:
                curve.setData([], [])
        for key in ("throughput", "latency"):
            self.plots[key].setYRange(0, max(peaks[key] * 1.08, 1e-3), padding=0)
        self.set_throughput_unit(self.store.state().throughput_unit)
        self._draw_phase_marks()
        return True

    def _draw_phase_marks(self) -> None:
        marks = [(name, t0) for name, t0, _ in self.store.phases()]
        if marks == self._phase_marks:
            return
        self._phase_marks = marks
        for key, plot in self.plots.items():
            for line in self._markers[key]:
                plot.removeItem(line)
            self._markers[key] = []
            for i, (name, t0) in enumerate(marks):
                # Alternate label heights: a short phase must not print over the next one.
                line = pg.InfiniteLine(
                    pos=t0, angle=90, movable=False,
                    pen=pg.mkPen("#9a9a9a", width=1, style=Qt.PenStyle.DashLine),
                    label=f" {name}" if key == "throughput" else None,
                    labelOpts={"position": 0.93 if i % 2 == 0 else 0.80, "color": "#555555",
                               "anchors": [(0, 0.5), (0, 0.5)],
                               "fill": pg.mkBrush(255, 255, 255, 210)})
                plot.addItem(line, ignoreBounds=True)
                self._markers[key].append(line)

    def clear_view(self) -> None:
        """Undo any zoom or pan so a new run starts fully in view."""
        for plot in self.plots.values():
            plot.enableAutoRange(axis="x", enable=True)
