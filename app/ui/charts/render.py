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
from app.analysis.deck import footer_text, line_styles
from app.analysis.metrics import CHARTS, METRICS, chart as chart_def
from app.model.runset import Chart, short_title
from app.store.export import ExportError, check_writable, write_bytes

from app.model.scale import (LABEL_POSITION, fit_labels, log_range, phase_labels, value_range,
                             with_label_band)

from app.ui.charts.axes import ElapsedAxis, ValueAxis, outage_region

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


def _font(px: float, bold: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(max(6, int(round(px))))
    f.setBold(bold)
    return f


# Text sizes in px at 1920×1080 (scaled with the chart): readable from the back of a room.
TITLE_PX, SUBTITLE_PX, LEGEND_PX, TICK_PX, LABEL_PX, MARK_PX, FOOTER_PX = (
    32, 20, 22, 18, 20, 18, 18)


class ChartScene:
    """One chart of a comparison laid out in a GraphicsLayoutWidget of a fixed size.

    ``mode``: ``overlay`` (every run in one plot) or ``side-by-side`` (one plot per run,
    one shared range that holds every run's data). ``log_y``: a log10 value axis (latency
    percentiles that differ by an order of magnitude). ``footer``: a line of small print
    under the chart (``True``: the runs' configuration and the numbers' source). Kept simple
    on purpose: bench/replay_fps.py and the tests build it too.
    """

    def __init__(self, comp: Comparison, chart: str | Chart, size: tuple[int, int] = (1920, 1080),
                 mode: str = "overlay", title: str | None = None,
                 runs: Sequence[int] | None = None, time_range: tuple[float, float] | None = None,
                 log_y: bool = False, footer: str | bool | None = None):
        ensure_app()
        self.comp = comp
        self.chart = chart_def(chart) if isinstance(chart, str) else chart
        self.size = size
        self.mode = mode
        self.log_y = log_y
        self.run_ids = list(runs) if runs is not None else list(range(len(comp.runs)))
        w, h = size
        self.u = min(w / 1920.0, h / 1080.0)      # type scale: 1 at 1920×1080
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
        if log_y:
            sub += " · log scale"
        # Title, subtitle and legend are rows of their own: they can never overlap the plot.
        self.title = lay.addLabel(f'<span style="color:{TEXT}">{escape(main)}</span>', row=0, col=0,
                                  colspan=ncols, size=f"{TITLE_PX * u:.0f}px", bold=True)
        self.subtitle = lay.addLabel(f'<span style="color:{MUTED}">{escape(sub)}</span>', row=1,
                                     col=0, colspan=ncols, size=f"{SUBTITLE_PX * u:.0f}px")
        self.legend_entries: list[tuple[str, str, str]] = []       # (colour, style, name)
        self.legend = lay.addLabel("", row=2, col=0, colspan=ncols, size=f"{LEGEND_PX * u:.0f}px")
        self.plots: list[pg.PlotItem] = []
        self.curves: dict[tuple[int, str], pg.PlotDataItem] = {}
        self.cursors: list[pg.InfiniteLine] = []
        groups = [self.run_ids] if mode == "overlay" else [[i] for i in self.run_ids]
        for col, members in enumerate(groups):
            plot = lay.addPlot(row=3, col=col, axisItems={
                "bottom": ElapsedAxis("bottom", px_per_tick=130 * u),
                "left": ValueAxis("left")})
            self._style_plot(plot, unit, first=(col == 0))
            if mode != "overlay":
                r = comp.runs[members[0]]
                plot.setTitle(f'<span style="color:{r.colour}">{escape(r.label)}</span>',
                              size=f"{LEGEND_PX * u:.0f}px")
            if log_y:
                plot.setLogMode(x=False, y=True)
            for i in members:
                self._draw_run(plot, i, legend=True)
            self.plots.append(plot)
            self._draw_phase_marks(plot, members, panes=len(groups))
        self.legend.setText(self._legend_html(), size=f"{LEGEND_PX * u:.0f}px")
        lay.layout.setRowStretchFactor(3, 10)
        self.footer = None
        if footer:
            text = footer_text(comp, self.chart) if footer is True else str(footer)
            # wrap first, then set the text: the label sizes itself from its text
            self.footer = lay.addLabel("", row=4, col=0, colspan=ncols)
            self.footer.item.setTextWidth(w - 80 * u)
            self.footer.setText(f'<span style="color:{MUTED}">{escape(text)}</span>',
                                size=f"{FOOTER_PX * u:.0f}px")
        # Not shown, so no resize event lays the scene out: give it its size directly, and
        # only then set the ranges (each pane its own, explicitly: a linked view maps its
        # range through pixel offsets, which dropped data off panes of unequal height).
        self.widget.setSceneRect(QRectF(0, 0, w, h))
        self.widget.ci.setGeometry(QRectF(0, 0, w, h))
        self.widget.ci.layout.activate()
        QGuiApplication.processEvents()
        self.x_range = time_range or self._x_range()
        self.y_range = self._y_range()
        for p in self.plots:
            p.setXRange(*self.x_range, padding=0.01)
            lo, hi = self.y_range
            # a sliver below so the bottom tick's label is drawn; the phase names' band on top
            p.setYRange(lo - (hi - lo) * 0.025, with_label_band(lo, hi)[1], padding=0)
        QGuiApplication.processEvents()

    # building
    _GLYPH = {"solid": "━━━", "dash": "╺━╸╺━╸", "dot": "┅┅┅", "dashdot": "━╸·╺━"}

    def _legend_html(self) -> str:
        """Entries in run order; a chart with several metrics starts a line per run."""
        per_line = len(self.chart.metrics) if len(self.chart.metrics) > 1 else 4
        parts, lines = [], []
        for colour, style, name in self.legend_entries:
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
            ax.setPen(pg.mkPen("#888888", width=max(1.0, 1.2 * u)))
            ax.setTextPen(pg.mkPen(TEXT))
            ax.setStyle(tickFont=_font(TICK_PX * u), tickTextOffset=int(8 * u),
                        tickLength=int(-8 * u), hideOverlappingLabels=False)
        plot.setLabel("bottom", "elapsed (h:mm:ss)" if first or self.mode == "overlay" else "",
                      color=MUTED, **{"font-size": f"{LABEL_PX * u:.0f}px"})
        left = self.chart.title if not unit else f"{self.chart.title.split(' · ')[0]} ({unit})"
        plot.setLabel("left", left if first else "", color=MUTED,
                      **{"font-size": f"{LABEL_PX * u:.0f}px"})
        plot.getAxis("left").setWidth(int(130 * u))
        plot.getAxis("bottom").setHeight(int(70 * u))
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")

    def _draw_run(self, plot: pg.PlotItem, i: int, legend: bool) -> None:
        r = self.comp.runs[i]
        many = len(self.chart.metrics) > 1
        width = max(1.5, 3.0 * self.u)
        styles = line_styles(self.chart.metrics)
        for k in self.chart.metrics:
            t, v = self.comp.series(i, k)
            m = METRICS[k]
            pen = pg.mkPen(r.colour, width=width, style=_DASH[styles[k]] if many else
                           Qt.PenStyle.SolidLine)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            x = np.frombuffer(t, dtype=np.float64) if len(t) else np.zeros(0)
            y = np.frombuffer(v, dtype=np.float64) if len(v) else np.zeros(0)
            # a single point is a dot, not nothing
            sym = dict(symbol="o", symbolSize=8 * self.u, symbolBrush=r.colour,
                       symbolPen=None) if len(x) == 1 else {}
            curve = pg.PlotDataItem(x, y, pen=pen, connect="finite", **sym)
            plot.addItem(curve)
            self.curves[(i, k)] = curve
            if legend:
                name = r.label if not many else f"{r.label} · {short_title(m.title)}"
                self.legend_entries.append((r.colour, styles[k] if many else "solid",
                                            escape(name)))

    def _draw_phase_marks(self, plot: pg.PlotItem, members: Sequence[int],
                          panes: int = 1) -> None:
        u = self.u
        lo, hi = self._x_range()
        for a, b, _label in self.comp.outage_spans(members):
            plot.addItem(outage_region(a, b), ignoreBounds=True)
        for x, label, right, full in fit_labels(phase_labels(self.comp.phase_marks(members),
                                                             lo, hi), lo, hi,
                                                glyphs=120 / panes):
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen("#9a9a9a", width=max(1.0, 1.5 * u),
                                                style=Qt.PenStyle.DashLine),
                                   label=(f"{label} " if right else f" {label}") if label
                                   else None,
                                   labelOpts={"position": LABEL_POSITION,
                                              "color": MUTED,
                                              "anchors": [(1, 0.5), (1, 0.5)] if right
                                              else [(0, 0.5), (0, 0.5)],
                                              "fill": pg.mkBrush(255, 255, 255, 220)})
            if label:
                line.label.setFont(_font(MARK_PX * u))
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

    def _y_range(self) -> tuple[float, float]:
        """One range for every pane that holds every plotted value: from zero, up to a round
        top (the chart's fixed top, CPU 100 %, unless data exceeds it); whole decades on a
        log axis."""
        arrays = [np.frombuffer(self.comp.series(i, k)[1], dtype=np.float64)
                  for i in self.run_ids for k in self.chart.metrics
                  if len(self.comp.series(i, k)[1])]
        if self.log_y:
            return log_range(arrays)
        lo, hi, _step = value_range(arrays, from_zero=True, fixed_top=self.chart.y_max)
        return lo, hi

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


__all__ = ["ChartScene", "render_image", "render_png_bytes", "render_bytes",
           "render_to_file", "copy_to_clipboard", "available_charts", "parse_size", "ensure_app", "FORMATS",
           "SIZES", "CHARTS"]
