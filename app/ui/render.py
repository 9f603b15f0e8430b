"""Charts of a comparison drawn headless for export: PNG, SVG, PDF, clipboard.

A light slide theme: white background, a title and a subtitle, axis labels with units, a
legend with the run names in their colours, time as h:mm:ss since the alignment point, and
a y axis that starts at zero. Layout happens at the logical size (1920×1080 by default, so
text is sized for a slide); ``scale`` multiplies the pixels, not the layout (HiDPI).

    img = render_image(comp, "throughput", size=(1920, 1080), scale=1.0)     # QImage
    render_to_file(comp, "latency", "lat.svg")                               # by suffix
    png = render_png_bytes(comp, "cpu", size=(1280, 720))

Chart names come from ``app.model.runset.CHARTS`` (the GUI's names too). Needs a
QApplication (``ensure_app()`` makes one, offscreen when there is no display).
"""
from __future__ import annotations

import math
import os
from html import escape
from pathlib import Path
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import (QColor, QFont, QGuiApplication, QImage, QPageLayout, QPageSize,
                           QPainter, QPdfWriter)

from app.analysis.compare import Comparison
from app.model.runset import CHARTS, METRICS, Chart, chart as chart_def, short_title
from app.store.export import ExportError, check_writable, write_bytes

from .charts import ElapsedAxis

FORMATS = ("png", "svg", "pdf")
SIZES = {"1920x1080": (1920, 1080), "1280x720": (1280, 720), "3840x2160": (3840, 2160)}
_DASH = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine,
         "dot": Qt.PenStyle.DotLine, "dashdot": Qt.PenStyle.DashDotLine}
TEXT = "#222222"
MUTED = "#666666"
GRID_ALPHA = 0.18


def ensure_app():
    """The running QApplication, or a new offscreen one (rendering needs no display)."""
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication([])
    return app


def parse_size(text: str) -> tuple[int, int]:
    """``1920x1080`` (or ``1920×1080``) into (1920, 1080); ValueError with a sentence."""
    w, sep, h = text.lower().replace("×", "x").partition("x")
    try:
        size = (int(w), int(h))
    except ValueError:
        size = (0, 0)
    if not sep or not (16 <= size[0] <= 16384 and 16 <= size[1] <= 16384):
        raise ValueError(f"a size is WIDTHxHEIGHT in pixels between 16 and 16384, "
                         f"such as 1920x1080, not {text!r}")
    return size


class ElapsedSlideAxis(ElapsedAxis):
    """The run clock for slides: a typographic minus before the alignment point, and
    ticks at round clock values."""

    MINUS = "−"

    def tickSpacing(self, minVal, maxVal, size):
        # ticks at round clock values: 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1 h …
        span = maxVal - minVal
        if span <= 0:
            return super().tickSpacing(minVal, maxVal, size)
        steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
                 21600, 43200, 86400]
        target = span / max(2.0, size / 160.0)
        major = next((s for s in steps if s >= target), steps[-1])
        minor = next((s for s in reversed(steps) if s <= major / 4), major / 5)
        return [(major, 0), (minor, 0)]


def _font(px: float, bold: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(max(6, int(round(px))))
    f.setBold(bold)
    return f


class ChartScene:
    """One chart of a comparison laid out in a GraphicsLayoutWidget of a fixed size.

    ``mode``: ``overlay`` (every run in one plot) or ``side-by-side`` (one plot per run,
    same axes). Kept simple on purpose: bench/replay_fps.py and the tests build it too.
    """

    def __init__(self, comp: Comparison, chart: str | Chart, size: tuple[int, int] = (1920, 1080),
                 mode: str = "overlay", title: str | None = None,
                 runs: Sequence[int] | None = None, time_range: tuple[float, float] | None = None):
        ensure_app()
        self.comp = comp
        self.chart = chart_def(chart) if isinstance(chart, str) else chart
        self.size = size
        self.mode = mode
        self.run_ids = list(runs) if runs is not None else list(range(len(comp.runs)))
        w, h = size
        self.u = min(w / 1920.0, h / 1080.0) * 1.0      # type scale: 1 at 1920×1080
        u = self.u
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground("w")
        self.widget.resize(w, h)
        self.widget.setFixedSize(w, h)
        self.widget.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.widget.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.widget.setFrameShape(self.widget.Shape.NoFrame)
        lay = self.widget.ci
        lay.setContentsMargins(28 * u, 18 * u, 40 * u, 16 * u)
        lay.setSpacing(6 * u)
        ncols = 1 if mode == "overlay" else max(1, len(self.run_ids))

        unit = comp.metric_unit(self.chart.metrics[0]) if not self.chart.unit else self.chart.unit
        self.unit = unit
        align = comp.align_phase
        main = title or self.chart.title
        sub = (f"{unit} · " if unit else "") + (
            f"time since the start of phase {align}" if align else "time since each run started")
        self.title = lay.addLabel(f'<span style="color:{TEXT}">{escape(main)}</span>', row=0, col=0,
                                  colspan=ncols, size=f"{34 * u:.0f}px", bold=True)
        self.subtitle = lay.addLabel(f'<span style="color:{MUTED}">{escape(sub)}</span>', row=1,
                                     col=0, colspan=ncols, size=f"{20 * u:.0f}px")
        # The legend is a row of text under the subtitle: centred, compact, off the data.
        self.legend_entries: list[tuple[str, str, str]] = []       # (colour, style, name)
        self.legend = lay.addLabel("", row=2, col=0, colspan=ncols, size=f"{22 * u:.0f}px")
        self.plots: list[pg.PlotItem] = []
        self.curves: dict[tuple[int, str], pg.PlotDataItem] = {}
        self.cursors: list[pg.InfiniteLine] = []
        groups = [self.run_ids] if mode == "overlay" else [[i] for i in self.run_ids]
        y_peak = 0.0
        for col, members in enumerate(groups):
            plot = lay.addPlot(row=3, col=col, axisItems={"bottom": ElapsedSlideAxis("bottom")})
            self._style_plot(plot, unit, first=(col == 0))
            if mode != "overlay":
                r = comp.runs[members[0]]
                plot.setTitle(f'<span style="color:{r.colour}">{escape(r.label)}</span>',
                              size=f"{22 * u:.0f}px")
            for i in members:
                y_peak = max(y_peak, self._draw_run(plot, i, legend=True))
            if self.plots:
                plot.setXLink(self.plots[0])
                plot.setYLink(self.plots[0])
            self.plots.append(plot)
            self._draw_phase_marks(plot, members)
        self.legend.setText(self._legendescape(), size=f"{22 * u:.0f}px")
        lay.layout.setRowStretchFactor(3, 10)
        top = self.chart.y_max * 1.02 if self.chart.y_max else _nice_top(y_peak)
        lo, hi = time_range or self._x_range()
        for p in self.plots:
            # a sliver below zero so the "0" tick label has room to be drawn
            p.setYRange(-top * 0.018, top, padding=0)
            p.setXRange(lo, hi, padding=0.01)
        # Not shown, so no resize event lays the scene out: give it its size directly.
        self.widget.setSceneRect(QRectF(0, 0, w, h))
        self.widget.ci.setGeometry(QRectF(0, 0, w, h))
        self.widget.ci.layout.activate()
        QGuiApplication.processEvents()

    # building
    _GLYPH = {"solid": "━━━", "dash": "╺━╸╺━╸", "dot": "┅┅┅", "dashdot": "━╸·╺━"}

    def _legendescape(self) -> str:
        """Entries in run order; a chart with several metrics starts a line per run."""
        per_line = len(self.chart.metrics) if len(self.chart.metrics) > 1 else 4
        parts, lines = [], []
        for n, (colour, style, name) in enumerate(self.legend_entries):
            parts.append(f'<span style="color:{colour};font-weight:900">'
                         f'{self._GLYPH.get(style, "━━━")}</span>'
                         f'<span style="color:{TEXT}">&nbsp;{name}</span>')
            if len(parts) == per_line:
                lines.append("&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;".join(parts))
                parts = []
        if parts:
            lines.append("&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;".join(parts))
        return "<br>".join(lines)

    def _style_plot(self, plot: pg.PlotItem, unit: str, first: bool) -> None:
        u = self.u
        plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        for side in ("left", "bottom"):
            ax = plot.getAxis(side)
            ax.enableAutoSIPrefix(False)
            ax.setPen(pg.mkPen("#888888", width=max(1.0, 1.2 * u)))
            ax.setTextPen(pg.mkPen(TEXT))
            ax.setStyle(tickFont=_font(18 * u), tickTextOffset=int(8 * u),
                        tickLength=int(-8 * u), hideOverlappingLabels=False)
        plot.setLabel("bottom", "elapsed (h:mm:ss)" if first or self.mode == "overlay" else "",
                      color=MUTED, **{"font-size": f"{20 * u:.0f}px"})
        left = self.chart.title if not unit else f"{self.chart.title.split(' · ')[0]} ({unit})"
        plot.setLabel("left", left if first else "", color=MUTED,
                      **{"font-size": f"{20 * u:.0f}px"})
        plot.getAxis("left").setWidth(int(120 * u))
        plot.getAxis("bottom").setHeight(int(70 * u))
        plot.getAxis("left").setStyle(tickFont=_font(18 * u))
        plot.getAxis("left").tickStrings = _num_ticks
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")

    def _draw_run(self, plot: pg.PlotItem, i: int, legend: bool) -> float:
        r = self.comp.runs[i]
        peak = 0.0
        many = len(self.chart.metrics) > 1
        width = max(1.5, 3.0 * self.u)
        for k in self.chart.metrics:
            t, v = self.comp.series(i, k)
            m = METRICS[k]
            pen = pg.mkPen(r.colour, width=width, style=_DASH[m.style] if many else
                           Qt.PenStyle.SolidLine)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            x = np.frombuffer(t, dtype=np.float64) if len(t) else np.zeros(0)
            y = np.frombuffer(v, dtype=np.float64) if len(v) else np.zeros(0)
            curve = pg.PlotDataItem(x, y, pen=pen, connect="finite")
            plot.addItem(curve)
            self.curves[(i, k)] = curve
            if len(y):
                finite = y[np.isfinite(y)]
                if len(finite):
                    peak = max(peak, float(finite.max()))
            if legend:
                name = r.label if not many else f"{r.label} · {short_title(m.title)}"
                self.legend_entries.append((r.colour, m.style if many else "solid", escape(name)))
        return peak

    def _draw_phase_marks(self, plot: pg.PlotItem, members: Sequence[int]) -> None:
        marks = self.comp.phase_marks(members)
        u = self.u
        lo, hi = self._x_range()
        gap = 0.05 * (hi - lo)
        labelled: list[float] = []
        # latest first: when phases crowd together, the later (measured) one keeps its label
        for j, (x, name) in enumerate(sorted(marks, reverse=True)):
            show = all(abs(x - lx) >= gap for lx in labelled)
            if show:
                labelled.append(x)
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen("#9a9a9a", width=max(1.0, 1.5 * u),
                                                style=Qt.PenStyle.DashLine),
                                   label=f" {name}" if show else None,
                                   labelOpts={"position": 0.96 if len(labelled) % 2 else 0.91,
                                              "color": MUTED, "anchors": [(0, 0.5), (0, 0.5)],
                                              "fill": pg.mkBrush(255, 255, 255, 220)})
            if show:
                line.label.setFont(_font(17 * u))
            plot.addItem(line, ignoreBounds=True)

    def _x_range(self) -> tuple[float, float]:
        lo, hi = math.inf, -math.inf
        for i in self.run_ids:
            for k in self.chart.metrics:
                t, _ = self.comp.series(i, k)
                if len(t):
                    lo, hi = min(lo, t[0]), max(hi, t[-1])
            r = self.comp.runs[i]
            for p in r.phases:
                lo = min(lo, p.t0 - r.offset)
        if lo > hi:
            return 0.0, 1.0
        return lo, hi if hi > lo else lo + 1.0

    # replay support
    def set_cursor(self, t: float | None) -> None:
        """A vertical cursor at aligned time t on every plot (None hides it)."""
        if not self.cursors:
            for p in self.plots:
                line = pg.InfiniteLine(angle=90, movable=False,
                                       pen=pg.mkPen("#333333", width=max(1.0, 1.5 * self.u)))
                p.addItem(line, ignoreBounds=True)
                self.cursors.append(line)
        for c in self.cursors:
            c.setVisible(t is not None)
            if t is not None:
                c.setValue(t)

    # output
    def image(self, scale: float = 1.0) -> QImage:
        w, h = self.size
        img = QImage(int(round(w * scale)), int(round(h * scale)), QImage.Format.Format_ARGB32)
        img.fill(QColor("white"))
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self._paint(p, QRectF(0, 0, img.width(), img.height()))
        p.end()
        # 96 dpi × scale, so a HiDPI image states its density
        dpm = int(round(96 / 0.0254 * scale))
        img.setDotsPerMeterX(dpm)
        img.setDotsPerMeterY(dpm)
        return img

    def _paint(self, painter: QPainter, target: QRectF) -> None:
        w, h = self.size
        self.widget.scene().render(painter, target, QRectF(0, 0, w, h),
                                   Qt.AspectRatioMode.IgnoreAspectRatio)

    def svg_bytes(self) -> bytes:
        from PySide6.QtSvg import QSvgGenerator
        w, h = self.size
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        gen = QSvgGenerator()
        gen.setOutputDevice(buf)
        gen.setSize(QSize(w, h))
        gen.setViewBox(QRectF(0, 0, w, h))
        gen.setResolution(96)
        gen.setTitle(self.chart.title)
        gen.setDescription(f"Versus chart {self.chart.name}: "
                           + ", ".join(self.comp.runs[i].label for i in self.run_ids))
        p = QPainter(gen)
        p.fillRect(QRectF(0, 0, w, h), QColor("white"))
        self._paint(p, QRectF(0, 0, w, h))
        p.end()
        buf.close()
        return bytes(buf.data())

    def pdf_bytes(self) -> bytes:
        w, h = self.size
        ba = QByteArray()
        buf = QBuffer(ba)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        pdf = QPdfWriter(buf)
        pdf.setTitle(self.chart.title)
        pdf.setCreator("Versus")
        pdf.setResolution(96)
        # one page exactly the chart's size at 96 dpi (1920×1080 → 20×11.25 in)
        pdf.setPageLayout(QPageLayout(QPageSize(QSizeF(w * 72 / 96, h * 72 / 96),
                                                QPageSize.Unit.Point, "chart",
                                                QPageSize.SizeMatchPolicy.ExactMatch),
                                      QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
        p = QPainter(pdf)
        page = pdf.pageLayout().paintRectPixels(pdf.resolution())
        self._paint(p, QRectF(page))
        p.end()
        buf.close()
        return bytes(ba.data())

    def png_bytes(self, scale: float = 1.0) -> bytes:
        img = self.image(scale)
        ba = QByteArray()
        buf = QBuffer(ba)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        if not img.save(buf, "PNG"):
            raise ExportError("the chart could not be encoded as PNG")
        buf.close()
        return bytes(ba.data())

    def close(self) -> None:
        self.widget.close()
        self.widget.deleteLater()


class CursorOverlay:
    """Replay cursors drawn over a frozen picture of the charts.

    Stroking thousands of points per curve costs tens of milliseconds per chart, and Qt
    repaints every curve under a moving cursor line (item caching does not help: pyqtgraph
    curves hang Qt's DeviceCoordinateCache). So while the clock runs, the charts are grabbed
    once to a pixmap and a plain widget on top blits it and draws one line per plot at the
    clock's time: a frame costs a blit. ``freeze()`` again after a zoom, pan, resize or new
    data (a live run: at most once a second). bench/replay_fps.py measures both ways.
    """

    def __init__(self, view: pg.GraphicsView, plots: Sequence[pg.PlotItem],
                 colour: str = "#222222", width: float = 1.5):
        from PySide6.QtWidgets import QWidget

        overlay_self = self

        class _Widget(QWidget):
            def paintEvent(self, _ev):                       # noqa: N802 (Qt name)
                overlay_self._paint(self)

        self.view = view
        self.plots = list(plots)
        self.pen = pg.mkPen(colour, width=width)
        self.widget = _Widget(view)
        self.widget.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        # it paints every pixel: Qt must not repaint the charts underneath first
        self.widget.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.widget.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.widget.hide()
        self.pixmap = None
        self.painted = 0                       # frames painted (the benchmark checks it)
        self.t: float | None = None
        self._spans: list[tuple[float, float, float, float]] = []   # per plot: x0,x1,top,bottom
        self._ranges: list[tuple[float, float]] = []

    def freeze(self) -> None:
        """Grab the charts as they are now and show the overlay on top of them."""
        self.widget.hide()
        self.pixmap = self.view.grab()
        self.widget.setGeometry(0, 0, self.view.width(), self.view.height())
        self._spans, self._ranges = [], []
        for p in self.plots:
            vb = p.getViewBox()
            rect = vb.mapRectToScene(vb.boundingRect())
            tl = self.view.mapFromScene(rect.topLeft())
            br = self.view.mapFromScene(rect.bottomRight())
            self._spans.append((tl.x(), br.x(), tl.y(), br.y()))
            self._ranges.append(tuple(vb.viewRange()[0]))
        self.widget.show()
        self.widget.raise_()

    def thaw(self) -> None:
        self.widget.hide()
        self.pixmap = None

    def set_time(self, t: float | None) -> None:
        self.t = t
        self.widget.update()

    def _paint(self, w) -> None:
        if self.pixmap is None:
            return
        self.painted += 1
        p = QPainter(w)
        p.drawPixmap(0, 0, self.pixmap)
        if self.t is not None:
            p.setPen(self.pen)
            for (x0, x1, top, bottom), (v0, v1) in zip(self._spans, self._ranges):
                if v1 > v0 and v0 <= self.t <= v1:
                    x = x0 + (self.t - v0) / (v1 - v0) * (x1 - x0)
                    p.drawLine(int(round(x)), int(top), int(round(x)), int(bottom))
        p.end()


# --- one-call helpers ------------------------------------------------------------------
def render_image(comp: Comparison, chart: str, size: tuple[int, int] = (1920, 1080),
                 scale: float = 1.0, **kw) -> QImage:
    sc = ChartScene(comp, chart, size, **kw)
    try:
        return sc.image(scale)
    finally:
        sc.close()


def render_png_bytes(comp: Comparison, chart: str, size: tuple[int, int] = (1920, 1080),
                     scale: float = 1.0, **kw) -> bytes:
    sc = ChartScene(comp, chart, size, **kw)
    try:
        return sc.png_bytes(scale)
    finally:
        sc.close()


def render_bytes(comp: Comparison, chart: str, fmt: str, size: tuple[int, int] = (1920, 1080),
                 scale: float = 1.0, **kw) -> bytes:
    if fmt not in FORMATS:
        raise ExportError(f"unknown chart format {fmt!r}; use one of {', '.join(FORMATS)}")
    sc = ChartScene(comp, chart, size, **kw)
    try:
        if fmt == "png":
            return sc.png_bytes(scale)
        if fmt == "svg":
            return sc.svg_bytes()
        return sc.pdf_bytes()
    finally:
        sc.close()


def render_to_file(comp: Comparison, chart: str, path: str | Path, fmt: str | None = None,
                   size: tuple[int, int] = (1920, 1080), scale: float = 1.0, **kw) -> Path:
    """Render and write; the format comes from ``fmt`` or the file's suffix."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    check_writable(path)
    return write_bytes(path, render_bytes(comp, chart, fmt, size, scale, **kw))


def copy_to_clipboard(comp: Comparison, chart: str, size: tuple[int, int] = (1920, 1080),
                      scale: float = 1.0, **kw) -> QImage:
    img = render_image(comp, chart, size, scale, **kw)
    QGuiApplication.clipboard().setImage(img)
    return img


def available_charts(comp: Comparison) -> list[str]:
    """Chart names with data in this comparison (for menus); every name in CHARTS is valid."""
    return comp.charts()


# --- small helpers ---------------------------------------------------------------------


def _nice_top(peak: float) -> float:
    if not peak or peak <= 0 or peak != peak:
        return 1.0
    peak *= 1.08
    mag = 10 ** math.floor(math.log10(peak))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10):
        if m * mag >= peak:
            return m * mag
    return 10 * mag


def _num_ticks(values, scale, spacing):
    out = []
    for v in values:
        x = v * scale
        if spacing >= 1 or x == 0:
            out.append(f"{x:,.0f}")
        else:
            digits = max(0, min(4, -int(math.floor(math.log10(spacing)))))
            out.append(f"{x:,.{digits}f}")
    return out


__all__ = ["ChartScene", "CursorOverlay", "render_image", "render_png_bytes", "render_bytes",
           "render_to_file", "copy_to_clipboard", "available_charts", "parse_size", "ensure_app", "FORMATS",
           "SIZES", "CHARTS"]
