"""Where the CPU goes, drawn: a stacked area of the host's CPU by process group, and a
chooser that charts any per-interval counter a run recorded (server counters, gauges, wait
events, process groups, the client's load) without putting every one on screen.

Both read a ``SeriesSource``: a run's label, colour and named series — a live SeriesStore,
a saved run's store, or one run of a Comparison — so live, saved and Compare views draw the
same thing from the same numbers (app.model.derive names).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QSplitter, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from app.analysis.cpu import PREFIX, group_sort_key, group_title

from app.ui.common import theme
from app.ui.charts.axes import ElapsedAxis, ValueAxis
from app.ui.charts.dashboard import configure_pyqtgraph
from app.ui.charts.crosshair import Crosshair

# server work in blues/greens (foreground darkest), the driver purple, the rest greys
GROUP_COLOURS = {
    "server.fg": "#0072B2", "server.bg.autovacuum": "#E69F00",
    "server.bg.checkpointer": "#D55E00", "server.bg.bgwriter": "#CC79A7",
    "server.bg.walwriter": "#009E73", "server.bg.purge": "#E69F00",
    "server.bg.page_cleaner": "#D55E00", "server.bg.log_writer": "#009E73",
    "server.bg.innodb_pool": "#CC79A7", "server.bg.other": "#56B4E9",
    "driver": "#6A3D9A", "monitor": "#333333", "other": "#C8C8C8",
}
EXTRA_COLOURS = ("#8C564B", "#17BECF", "#BCBD22", "#7F7F7F")
LINE_STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine,
               Qt.PenStyle.DashDotLine)


@dataclass
class SeriesSource:
    """One run's named series, however they are held, and its phases' starts."""
    label: str
    colour: str
    names: Callable[[], Sequence[str]]
    arrays: Callable[[str], tuple[Sequence[float], Sequence[float]]]
    phases: Callable[[], Sequence[tuple[str, float]]] = lambda: ()


def store_source(store, label: str = "this run", colour: str = "#0072B2") -> SeriesSource:
    """A SeriesStore (live or saved) as a source."""
    return SeriesSource(label, colour, store.names, store.arrays,
                        lambda: [(n, t0) for n, t0, _t1 in store.phases()])


def comparison_source(comp, i: int) -> SeriesSource:
    """Run i of a Comparison as a source (aligned times)."""
    r = comp.runs[i]

    def names() -> list[str]:
        return list(dict.fromkeys(n for t in (r.sample, r.hosts, r.db) for n in t.names()))

    return SeriesSource(f"{r.index + 1}: {r.label}", r.colour, names,
                        lambda name: comp.series(i, name),
                        lambda: [(p.name, p.t0 - r.offset) for p in r.phases])


def fmt_share(v: float | None) -> str:
    """A group's share in the readout: % of host CPU, as the axis, one decimal for all."""
    return "—" if v is None or v != v else f"{v:.1f} %"


def group_colour(group: str, k: int = 0) -> str:
    return GROUP_COLOURS.get(group, EXTRA_COLOURS[k % len(EXTRA_COLOURS)])


def stack(series: dict[str, tuple[Sequence[float], Sequence[float]]]
          ) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """Common times and the running sum per group (bottom first). A group missing from an
    interval (no CPU in it) counts 0 there."""
    arrays = {g: (np.asarray(t, dtype=float), np.asarray(v, dtype=float))
              for g, (t, v) in series.items() if len(t)}
    if not arrays:
        return np.array([]), []
    times = np.unique(np.concatenate([t for t, _v in arrays.values()]))
    total = np.zeros(len(times))
    out = []
    for name in sorted(arrays, key=group_sort_key):
        t, v = arrays[name]
        col = np.zeros(len(times))
        col[np.searchsorted(times, t)] = np.nan_to_num(v)
        total = total + col
        out.append((name, total.copy()))
    return times, out


def _plot(title_unit: str) -> pg.PlotWidget:
    configure_pyqtgraph()
    w = pg.PlotWidget(axisItems={"bottom": ElapsedAxis("bottom"), "left": ValueAxis("left")})
    p = w.getPlotItem()
    p.setLabel("left", title_unit)
    for side in ("left", "bottom"):
        p.getAxis(side).enableAutoSIPrefix(False)
    p.getAxis("left").setWidth(84)
    p.showGrid(x=True, y=True, alpha=0.15)
    p.setMenuEnabled(False)
    p.getViewBox().setMouseEnabled(x=True, y=False)
    return w


class CpuGroupsWidget(QWidget):
    """Stacked areas of the host's CPU by process group for one run, 0–100 % of all cores;
    a line above a band says the client limited throughput when it did."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.banner = QLabel()
        self.banner.setObjectName("client_limit_banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background:#FFF4CE;color:#6B4E00;padding:4px 8px;"
                                  "border:1px solid #E8D28A;border-radius:3px")
        self.banner.setVisible(False)
        lay.addWidget(self.banner)
        self.legend = QLabel()
        self.legend.setObjectName("cpu_groups_legend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.legend)
        self.view = _plot("% of host CPU")
        self.view.setObjectName("cpu_groups_plot")
        self.plot = self.view.getPlotItem()
        self.plot.setYRange(0, 100, padding=0.02)
        lay.addWidget(self.view, 1)
        self.note = QLabel()
        self.note.setObjectName("cpu_groups_note")
        self.note.setProperty("role", "hint")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        self._items: list = []
        self.groups: list[str] = []
        self.times, self.layers = np.array([]), []      # the running sums drawn
        self.source: SeriesSource | None = None
        # the readout gives each group's own share (top group first, as the legend), not the
        # running sums the bands are drawn from
        self._own: list[tuple[str, str, pg.PlotDataItem]] = []
        self.crosshair = Crosshair(self.view, lambda: [(self.plot, self._own)],
                                   dark=theme.is_dark, fmt=fmt_share)

    def set_source(self, source: SeriesSource | None, title: str = "") -> None:
        self.source = source
        self._title = title
        self.refresh()

    def set_client_limit(self, sentence: str | None) -> None:
        self.banner.setText(sentence or "")
        self.banner.setVisible(bool(sentence))

    def refresh(self) -> None:
        for item in self._items:
            self.plot.removeItem(item)
        self._items = []
        src = self.source
        names = [n for n in (src.names() if src else ()) if n.startswith(PREFIX)]
        series = {n[len(PREFIX):]: src.arrays(n) for n in names} if src else {}
        times, layers = stack(series)
        self.groups = [g for g, _ in layers]
        self.times, self.layers = times, layers
        below = None
        own = []
        for k, (group, top) in enumerate(layers):
            colour = group_colour(group, k)
            share = np.asarray(top, dtype=float) - (
                np.asarray(layers[k - 1][1], dtype=float) if k else 0.0)
            own.append((group_title(group), colour, pg.PlotDataItem(times, share)))
            curve = pg.PlotDataItem(times, top, pen=pg.mkPen(colour, width=0.8))
            self.plot.addItem(curve)
            self._items.append(curve)
            base = below if below is not None else pg.PlotDataItem(times, np.zeros(len(times)))
            fill = pg.FillBetweenItem(base, curve, brush=pg.mkBrush(colour + "b4"))
            self.plot.addItem(fill)
            self._items.append(fill)
            below = curve
        self._own = own[::-1]
        # 0–100 % of the host, or up to the stack's top where the groups add up to more
        # (each measured apart from the host's own count): a chart hides no data
        top = float(np.nanmax(layers[-1][1])) if layers and len(times) else 0.0
        self.plot.setYRange(0, max(100.0, top), padding=0.02)
        for name, t0 in (src.phases() if src else ()):
            line = pg.InfiniteLine(pos=t0, angle=90, movable=False,
                                   pen=pg.mkPen("#7a7a7a", width=1, style=Qt.PenStyle.DashLine),
                                   label=f" {name}",
                                   labelOpts={"position": 0.95, "color": "#444444",
                                              "anchors": [(0, 0.5), (0, 0.5)],
                                              "fill": pg.mkBrush(255, 255, 255, 210)})
            self.plot.addItem(line, ignoreBounds=True)
            self._items.append(line)
        head = self._title or "Host CPU by process group · /proc"
        self.legend.setText(
            f'<b>{head}</b>&nbsp;&nbsp;&nbsp;' + "&nbsp;&nbsp; ".join(
                f'<span style="color:{group_colour(g, k)}">&#9632;</span>&nbsp;'
                f'{group_title(g)}' for k, g in enumerate(reversed(self.groups))))
        over = ("" if top <= 100.5 else
                f"The groups add up to {top:.1f} % of the host at their highest: each is "
                f"read from its processes' /proc/PID/stat, apart from the host's /proc/stat, "
                f"and a process that ended is credited its unseen CPU in the interval it was "
                f"reaped, so one interval's groups can sum past 100 %.")
        self.note.setText(over if layers else
                          "No CPU by process group in this run (recorded before Versus "
                          "split the host's CPU, or no host samples yet).")


class CounterChooserWidget(QWidget):
    """A searchable, checkable list of every per-interval series the runs recorded, grouped
    by where it comes from, and one chart of the checked ones (a line per run and series)."""

    chosen_changed = Signal(list)

    CATEGORIES = (("db.wait.", "Wait events (sessions, sampled)"),
                  ("db.", "Server counters (/s) and gauges"),
                  (PREFIX, "CPU by process group (% of host)"),
                  ("client.", "Client load"),
                  ("counter.", "Workload counters (/s)"),
                  ("ops.", "Operations per type (/s)"),
                  ("latency.", "Latency (ms)"),
                  ("", "Host and client"))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.filter = QLineEdit()
        self.filter.setObjectName("counter_filter")
        self.filter.setPlaceholderText("Filter counters (e.g. Innodb_rows, wal, wait)")
        self.filter.setClearButtonEnabled(True)
        ll.addWidget(self.filter)
        self.tree = QTreeWidget()
        self.tree.setObjectName("counter_tree")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        ll.addWidget(self.tree, 1)
        self.view = _plot("")
        self.view.setObjectName("counter_plot")
        self.plot = self.view.getPlotItem()
        self.hint = QLabel("Check counters on the left to chart them.")
        self.hint.setProperty("role", "hint")
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.view, 1)
        rl.addWidget(self.hint)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setSizes([260, 780])
        lay.addWidget(split)
        self.sources: list[SeriesSource] = []
        self.chosen: list[str] = []
        self._known: list[str] = []
        self._curves: list = []
        self._lines: list[tuple[str, str, pg.PlotDataItem]] = []     # for the readout
        self.crosshair = Crosshair(self.view, lambda: [(self.plot, self._lines)],
                                   dark=theme.is_dark)
        self.filter.textChanged.connect(self._on_filter_text_changed)
        self.tree.itemChanged.connect(self._on_tree_item_changed)

    # --- data ------------------------------------------------------------------------
    def set_sources(self, sources: Sequence[SeriesSource]) -> None:
        self.sources = list(sources)
        self.refresh()

    def names(self) -> list[str]:
        return sorted({n for s in self.sources for n in s.names()})

    def refresh(self) -> None:
        """Take new series names into the list and redraw the chosen ones."""
        names = self.names()
        if names != self._known:
            self._known = names
            self._fill_tree()
        self._draw()

    def set_chosen(self, names: Sequence[str]) -> None:
        self.chosen = [n for n in names]
        self._fill_tree()
        self._draw()
        self.chosen_changed.emit(list(self.chosen))

    # --- the list ----------------------------------------------------------------------
    def _category(self, name: str) -> str:
        return next(title for prefix, title in self.CATEGORIES if name.startswith(prefix))

    def _fill_tree(self) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        text = self.filter.text().strip().lower()
        heads: dict[str, QTreeWidgetItem] = {}
        for _p, title in self.CATEGORIES:
            heads[title] = QTreeWidgetItem([title])
        for name in self._known:
            if text and text not in name.lower():
                continue
            item = QTreeWidgetItem([self._label(name)])
            item.setData(0, Qt.ItemDataRole.UserRole, name)
            item.setToolTip(0, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Checked if name in self.chosen
                               else Qt.CheckState.Unchecked)
            heads[self._category(name)].addChild(item)
        for _p, title in self.CATEGORIES:
            head = heads[title]
            if head.childCount():
                head.setText(0, f"{title} ({head.childCount()})")
                head.setFlags(head.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
                self.tree.addTopLevelItem(head)
                head.setExpanded(bool(text) or any(
                    head.child(i).checkState(0) == Qt.CheckState.Checked
                    for i in range(head.childCount())))
        self.tree.blockSignals(False)

    CLIENT = {"client.cores": "driver: cores used",
              "client.vu_wait": "virtual users waiting for a CPU (%)",
              "client.server_wait": "server connections waiting for a CPU (%)",
              "client.limited": "client limited throughput (1 = yes)"}

    @classmethod
    def _label(cls, name: str) -> str:
        if name.startswith(PREFIX):
            return group_title(name[len(PREFIX):])
        if name in cls.CLIENT:
            return cls.CLIENT[name]
        for prefix in ("db.wait.", "db.", "client.", "counter.", "ops."):
            if name.startswith(prefix):
                return name[len(prefix):]
        return name

    def _on_filter_text_changed(self, _text: str) -> None:
        self._fill_tree()

    def _on_tree_item_changed(self, item: QTreeWidgetItem, _col: int) -> None:
        name = item.data(0, Qt.ItemDataRole.UserRole)
        if not name:
            return
        on = item.checkState(0) == Qt.CheckState.Checked
        if on and name not in self.chosen:
            self.chosen.append(name)
        elif not on and name in self.chosen:
            self.chosen.remove(name)
        self._draw()
        self.chosen_changed.emit(list(self.chosen))

    # --- the chart ---------------------------------------------------------------------
    def _draw(self) -> None:
        for c in self._curves:
            self.plot.removeItem(c)
        self._curves = []
        self._lines = []
        legend = []
        several = len(self.sources) > 1
        for k, name in enumerate(self.chosen):
            style = LINE_STYLES[k % len(LINE_STYLES)]
            for j, src in enumerate(self.sources):
                t, v = src.arrays(name)
                if not len(t):
                    continue
                colour = src.colour if several else EXTRA_COLOURS[k % len(EXTRA_COLOURS)] \
                    if k else src.colour
                curve = self.plot.plot(np.asarray(t, dtype=float), np.asarray(v, dtype=float),
                                       pen=pg.mkPen(colour, width=1.5, style=style))
                self._curves.append(curve)
                self._lines.append((self._label(name) + (f" · {src.label}" if several else ""),
                                    colour, curve))
                if j == 0 or not several:
                    dash = {0: "━━", 1: "╍╍", 2: "┅┅", 3: "━╍"}[k % 4]
                    legend.append(f'<span style="color:{colour if not several else "#444"}">'
                                  f'{dash}</span>&nbsp;{self._label(name)}')
        runs = ("&nbsp;&nbsp;".join(f'<span style="color:{s.colour};font-weight:900">'
                                    f'&#9632;</span>&nbsp;{s.label}' for s in self.sources)
                if several else "")
        self.plot.setTitle("&nbsp;&nbsp;&nbsp;".join(legend)
                           + (f"<br>{runs}" if runs and legend else ""), size="9pt")
        self.hint.setVisible(not self.chosen)
        if self._curves:
            self.plot.enableAutoRange(axis="y", enable=True)
