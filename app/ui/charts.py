"""Three linked charts read from a SeriesStore: throughput, latency, host CPU.

Views never own data: ``refresh()`` copies from the store only when its version moved, so a
burst of events costs one redraw however many arrived.

A run whose unit is NOPM (TPROC-C) gets its own first two charts: NOPM (the client's new
orders) next to TPM (the server's commits + rollbacks), and p95 latency per transaction type.
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


# TPROC-C (unit NOPM): the two rates HammerDB users read, each from where it is counted.
NOPM_CHARTS = {
    "throughput": {
        "title": "NOPM · client new orders; TPM · server commits+rollbacks",
        "unit": "per minute",
        "lines": [("nopm", "NOPM", BLUE), ("tpm.server", "TPM", ORANGE)],
    },
    "latency": {
        "title": "Latency p95 · by transaction type",
        "unit": "ms",
        "lines": [],            # one per transaction type, added as the types appear
    },
}
TYPE_COLOURS = (BLUE, ORANGE, GREEN, RED, PURPLE, SKY, GREY)


def type_lines(types: list[str]) -> list[tuple[str, str, str]]:
    return [(f"latency.{name}.p95", name, TYPE_COLOURS[i % len(TYPE_COLOURS)])
            for i, name in enumerate(types)]


def configure_pyqtgraph() -> None:
    pg.setConfigOptions(background="w", foreground="#333333", antialias=True)


class ElapsedAxis(pg.AxisItem):
    """Seconds since the run started shown as m:ss or h:mm:ss: runs last hours."""

    MINUS = "-"

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            if abs(v * scale - round(v * scale)) > 1e-6:
                out.append("")            # sub-second ticks of short runs: unlabelled
                continue
            s = int(round(v * scale))
            sign = self.MINUS if s < 0 else ""
            s = abs(s)
            h, rem = divmod(s, 3600)
            m, sec = divmod(rem, 60)
            out.append(f"{sign}{h}:{m:02d}:{sec:02d}" if h else f"{sign}{m}:{sec:02d}")
        return out


class CountAxis(pg.AxisItem):
    """Whole numbers with thousands separators (TPM reaches 1,000,000); fractions as usual."""

    def tickStrings(self, values, scale, spacing):
        if spacing * scale < 1:
            return super().tickStrings(values, scale, spacing)
        return [f"{v * scale:,.0f}" for v in values]


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
        self.charts: dict[str, dict] = {k: dict(c) for k, c in CHARTS.items()}
        self.mode = "default"           # "nopm" for TPROC-C: NOPM/TPM and latency by type
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
                                         axisItems={"bottom": ElapsedAxis("bottom"),
                                                    "left": CountAxis("left")})
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
        self.plots["cpu"].setLabel("bottom", "elapsed (h:mm:ss)")
        for key in ("throughput", "latency"):
            self.plots[key].getAxis("bottom").setStyle(showValues=False)

    def _set_chart(self, key: str, chart: dict) -> None:
        """(Re)build one plot's curves, title and unit from a chart description."""
        plot = self.plots[key]
        for series, _label, _colour in self.charts[key]["lines"]:
            curve = self.curves.pop(series, None)
            if curve is not None:
                plot.removeItem(curve)
        self.charts[key] = chart
        for series, label, colour in chart["lines"]:
            curve = plot.plot([], [], name=label, pen=pg.mkPen(colour, width=1.6))
            self.curves[series] = curve
        plot.setTitle(self._title_html(chart), size="10pt")
        plot.setLabel("left", chart["unit"])

    @staticmethod
    def _title_html(chart: dict) -> str:
        html = f'<span style="color:#222;font-weight:600">{chart["title"]}</span>'
        if len(chart["lines"]) > 1:          # the legend lives in the title, off the data
            html += "&nbsp;&nbsp;&nbsp;" + "&nbsp;&nbsp;".join(
                f'<span style="color:{c};font-weight:900">&#9473;&#9473;</span>'
                f'<span style="color:#444">&nbsp;{label}</span>'
                for _s, label, c in chart["lines"])
        return html

    def set_mode(self, mode: str) -> None:
        """"nopm": NOPM and TPM, latency per transaction type; "default": the point charts."""
        if mode == self.mode:
            return
        self.mode = mode
        for key in ("throughput", "latency"):
            self._set_chart(key, dict(NOPM_CHARTS[key] if mode == "nopm" else CHARTS[key]))
        self._drawn_version = -1

    def _sync_type_lines(self) -> None:
        lines = type_lines(self.store.types())
        if lines != self.charts["latency"]["lines"]:
            self._set_chart("latency", {**NOPM_CHARTS["latency"], "lines": lines})

    def set_store(self, store: SeriesStore) -> None:
        self.store = store
        self._drawn_version = -1
        self.refresh()

    def set_throughput_unit(self, unit: str) -> None:
        self.set_mode("nopm" if unit == "NOPM" else "default")
        if self.mode == "default":
            self.plots["throughput"].setLabel("left", unit or "ops/s")

    def refresh(self, force: bool = False) -> bool:
        """Redraw from the store if it changed; return whether anything was drawn."""
        version = self.store.version
        if version == self._drawn_version and not force:
            return False
        self._drawn_version = version
        state = self.store.state()
        if state.events:          # an empty store knows no unit yet: keep the workload's
            self.set_throughput_unit(state.throughput_unit)
        if self.mode == "nopm":
            self._sync_type_lines()
        peaks = {key: 0.0 for key in self.plots}
        owner = {series: key for key, chart in self.charts.items()
                 for series, _l, _c in chart["lines"]}
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
