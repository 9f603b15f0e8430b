"""Compare and Replay: runs from any sessions on linked charts, one clock, ratio tables.

    view = CompareWidget(tasks)
    view.set_runs([RunRef("a.versus", "20261121-…"), RunRef("b.versus")])   # loads off-thread
    view.clock.play()                                   # Space does the same

Data flow (docs: STYLE.md "Data flow for live charts"):

- The data is one ``Comparison`` (app.analysis.compare), loaded from the session files in a
  background task; the view never owns series, it reads ``comp.series(i, key)``.
- Replay has exactly one clock, ``ReplayClock`` (position, rate, loop). The scrubber, a drag
  of a chart's cursor, a click on a chart, the step buttons and the play timer all move it;
  every chart's cursor and the values panel follow its ``position_changed``.
- While the clock runs, the cursors are drawn over a frozen picture of the charts
  (``render.CursorOverlay``): moving line items would make Qt re-stroke every curve, and the
  y axes stay fixed (no auto-range) so the picture stays true. A zoom or resize re-freezes.
- Zoom and pan on the time axis are linked across every pane.
- A run still in progress is re-read from its session file every two seconds in a
  background task, so it can be watched next to a finished one.
- Every run keeps one colour (by the order it joined the comparison) in charts, values
  panel, tables, legends and exports.
"""
from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (QAbstractTableModel, QElapsedTimer, QEvent, QMimeData, QModelIndex,
                            QObject, QPoint, Qt, QTimer, QUrl, Signal, Slot)
from PySide6.QtGui import QAction, QColor, QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFileDialog,
                               QHBoxLayout, QHeaderView, QLabel, QMenu, QMessageBox, QSlider,
                               QSplitter, QStackedWidget, QTableView, QTableWidget,
                               QTableWidgetItem, QTabWidget, QToolButton, QTreeWidget,
                               QVBoxLayout, QWidget)

from app.analysis.compare import CompareError, Comparison, fmt_value, load_comparison, load_run
from app.model.runset import (CHARTS, CLASS_COLOURS, CLASS_TEXT, METRICS, RUN_COLOURS,
                              TABLE_METRICS, RunRef, Table, short_title)
from app.store.export import (ExportError, check_writable, series_csv, table_csv, table_html,
                              table_markdown, tables_text, to_json, write_bytes, write_deck)

from .actions import COMPARE_ACTIONS, build_actions
from .render import FORMATS, ElapsedSlideAxis, CursorOverlay, _nice_top, render_bytes
from .compare_settings import SettingsDiffTableModel, SettingsPage
from .tasks import TaskRunner

MIME_RUNS = "application/x-versus-runs"
# the sessions tree: ("run", path, id) or ("file", path)
ROLE_DATA = Qt.ItemDataRole.UserRole
CLASS_ROLE = Qt.ItemDataRole.UserRole + 1     # a ratio cell's class: better, worse, same, n/a
DEFAULT_CHARTS = ("throughput", "tpm", "latency", "cpu")
DECK_CHARTS = ("throughput", "tpm", "latency", "cpu", "context-switches", "disk-kb",
               "cpu-per-op")
RATES = (1, 2, 5, 10, 20, 50, 100)
FRAME_MS = 33                 # ~30 frames a second while playing
LIVE_MS = 2000                # a live run is re-read this often
SLIDER_STEPS_PER_S = 10
AXIS_WIDTH = 64               # same width everywhere, so linked panes line up to the pixel
_DASH = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine,
         "dot": Qt.PenStyle.DotLine, "dashdot": Qt.PenStyle.DashDotLine}
FINISHED = ("ok", "stopped", "failed")
_GLYPH = {"solid": "━━", "dash": "╍╍", "dot": "┈┈", "dashdot": "━·"}


def fmt_clock(t: float, tenths: bool = False) -> str:
    sign = "−" if t < 0 else ""
    t = abs(t)
    whole = int(t)
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    frac = f".{int((t - whole) * 10)}" if tenths else ""
    return f"{sign}{h}:{m:02d}:{s:02d}{frac}" if h else f"{sign}{m}:{s:02d}{frac}"


def swatch(colour: str, size: int = 12) -> QIcon:
    pm = QPixmap(size, size)
    pm.fill(QColor(colour))
    return QIcon(pm)


def ref_key(ref: RunRef) -> tuple[str, str | None]:
    return (str(Path(ref.file).resolve()), ref.run_id)


# --- drag and drop of runs ----------------------------------------------------------------
def runs_mime(refs: Sequence[RunRef]) -> QMimeData:
    mime = QMimeData()
    mime.setData(MIME_RUNS, json.dumps([[r.file, r.run_id] for r in refs]).encode())
    mime.setUrls([QUrl.fromLocalFile(f) for f in dict.fromkeys(r.file for r in refs)])
    return mime


def refs_from_mime(mime: QMimeData) -> list[RunRef]:
    """Runs dragged from the Sessions list, or session files dragged from a file manager."""
    if mime.hasFormat(MIME_RUNS):
        try:
            data = json.loads(bytes(mime.data(MIME_RUNS)).decode())
            return [RunRef(str(f), str(r) if r else None) for f, r in data]
        except (ValueError, TypeError):
            return []
    return [RunRef(u.toLocalFile()) for u in mime.urls()
            if u.isLocalFile() and Path(u.toLocalFile()).suffix in (".versus", ".sqlite", ".db")]


class SessionTreeWidget(QTreeWidget):
    """The Sessions list: several runs can be selected (Ctrl/Shift+click) and dragged."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)

    def refs_of(self, items) -> list[RunRef]:
        refs: list[RunRef] = []
        picked_files = {it.data(0, ROLE_DATA)[1] for it in items
                        if it.data(0, ROLE_DATA) and it.data(0, ROLE_DATA)[0] == "run"}
        for it in items:
            data = it.data(0, ROLE_DATA)
            if not data:
                continue
            if data[0] == "run":
                refs.append(RunRef(data[1], data[2]))
            elif data[0] == "file" and data[1] not in picked_files:
                # a whole file: its runs in the order the list shows them
                kids = [it.child(i).data(0, ROLE_DATA) for i in range(it.childCount())]
                refs += [RunRef(k[1], k[2]) for k in kids if k and k[0] == "run"]
        return list(dict.fromkeys(refs))

    def selected_refs(self) -> list[RunRef]:
        items = sorted(self.selectedItems(), key=lambda it: self.indexFromItem(it).row()
                       if it.parent() is None else
                       (self.indexOfTopLevelItem(it.parent()) * 10_000
                        + it.parent().indexOfChild(it)))
        return self.refs_of(items)

    def mimeTypes(self) -> list[str]:
        return [MIME_RUNS, "text/uri-list"]

    def mimeData(self, items) -> QMimeData:
        return runs_mime(self.refs_of(list(items)))


# --- the one clock ------------------------------------------------------------------------
class ReplayClock(QObject):
    """Replay time: a position on the aligned time axis, a rate, loop, playing or not."""

    position_changed = Signal(float)
    playing_changed = Signal(bool)
    rate_changed = Signal(float)
    loop_changed = Signal(bool)
    range_changed = Signal(float, float)

    def __init__(self, parent: QObject | None = None, frame_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self._pos = 0.0
        self._rate = 1.0
        self._loop = False
        self._lo, self._hi = 0.0, 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(frame_ms)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._wall = QElapsedTimer()

    # state
    @property
    def position(self) -> float:
        return self._pos

    @property
    def rate(self) -> float:
        return self._rate

    @property
    def loop(self) -> bool:
        return self._loop

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def range(self) -> tuple[float, float]:
        return self._lo, self._hi

    # changes
    def set_range(self, lo: float, hi: float) -> None:
        hi = max(hi, lo)
        if (lo, hi) != (self._lo, self._hi):
            self._lo, self._hi = lo, hi
            self.range_changed.emit(lo, hi)
        self.set_position(self._pos)

    def set_position(self, t: float) -> None:
        t = min(max(float(t), self._lo), self._hi)
        if t != self._pos:
            self._pos = t
            self.position_changed.emit(t)

    def set_rate(self, rate: float) -> None:
        rate = min(max(float(rate), 1.0), 100.0)
        if rate != self._rate:
            self._rate = rate
            self.rate_changed.emit(rate)

    def set_loop(self, loop: bool) -> None:
        if bool(loop) != self._loop:
            self._loop = bool(loop)
            self.loop_changed.emit(self._loop)

    def play(self) -> None:
        if self.playing or self._hi <= self._lo:
            return
        if self._pos >= self._hi:
            self.set_position(self._lo)
        self._wall.start()
        self._timer.start()
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self.playing:
            self._timer.stop()
            self.playing_changed.emit(False)

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def step(self, direction: int = 1) -> None:
        """One second of play at the current rate, forwards or back."""
        self.set_position(self._pos + direction * self._rate)

    def advance(self, wall_seconds: float) -> None:
        """What the timer does each frame: move on by wall time × rate; at the end, loop
        or stop there."""
        t = self._pos + wall_seconds * self._rate
        if t >= self._hi:
            if self._loop and self._hi > self._lo:
                t = self._lo + (t - self._hi) % (self._hi - self._lo)
            else:
                self.set_position(self._hi)
                self.pause()
                return
        self.set_position(t)

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.advance(self._wall.restart() / 1000.0)


# --- values under the cursor -------------------------------------------------------------
class ValuesPanel(QWidget):
    """Each run's value of each shown metric at the clock's position."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 0, 0, 0)
        lay.setSpacing(4)
        self.time_label = QLabel("–")
        self.time_label.setObjectName("values_time")
        self.time_label.setProperty("role", "section")
        lay.addWidget(self.time_label)
        self.table = QTableWidget(0, 0)
        self.table.setObjectName("values_table")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setMinimumSectionSize(44)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(False)
        lay.addWidget(self.table, 1)
        self.comp: Comparison | None = None
        self.keys: list[str] = []
        self.t: float | None = None
        self.current: list[dict[str, float | None]] = []
        self._sized = False

    def set_comparison(self, comp: Comparison, keys: Sequence[str]) -> None:
        self.comp = comp
        self.keys = [k for k in keys if comp.has_metric(k)]
        t = self.table
        self._sized = False
        t.clear()
        t.setRowCount(len(self.keys))
        t.setColumnCount(len(comp.runs))
        for j, r in enumerate(comp.runs):
            h = QTableWidgetItem(swatch(r.colour), f"{r.index + 1}")
            h.setToolTip(r.label)
            t.setHorizontalHeaderItem(j, h)
        for i, k in enumerate(self.keys):
            m = METRICS[k]
            unit = comp.metric_unit(k)
            head = QTableWidgetItem(f"{m.title} ({unit})" if unit else m.title)
            t.setVerticalHeaderItem(i, head)
            for j, r in enumerate(comp.runs):
                item = QTableWidgetItem("—")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setForeground(QColor(r.colour))
                t.setItem(i, j, item)
        if self.t is not None:
            self.show_time(self.t)

    def show_time(self, t: float) -> None:
        self.t = t
        if self.comp is None:
            return
        align = self.comp.align_phase
        self.time_label.setText(f"{fmt_clock(t, tenths=True)}  "
                                + (f"since {align} started" if align else "since start"))
        self.current = self.comp.values_at(t, self.keys) if self.keys else []
        for j, row in enumerate(self.current):
            for i, k in enumerate(self.keys):
                item = self.table.item(i, j)
                if item is not None:
                    item.setText(fmt_value(row.get(k)))
        if not self._sized:
            self.table.resizeColumnsToContents()
            self._sized = True

    def value(self, run: int, key: str) -> str:
        return self.table.item(self.keys.index(key), run).text()


# --- ratio tables ------------------------------------------------------------------------
class RatioTableModel(QAbstractTableModel):
    """A ``runset.Table`` with its ratio cells coloured: green better, red worse, grey the
    same, blank n/a (the sense inverted where lower is better is decided by the Table)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._t: Table | None = None
        self._run_of_col: dict[int, int] = {}
        self._colours: list[str] = []

    def set_table(self, table: Table | None, run_of_col: dict[int, int] | None = None,
                  colours: Sequence[str] = ()) -> None:
        self.beginResetModel()
        self._t = table
        self._run_of_col = dict(run_of_col or {})
        self._colours = list(colours)
        self.endResetModel()

    def table(self) -> Table | None:
        return self._t

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802 (Qt)
        return 0 if parent.isValid() or self._t is None else len(self._t.rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802
        return 0 if parent.isValid() or self._t is None else len(self._t.header)

    def cell_class(self, row: int, col: int) -> str | None:
        return self._t.classes[row][col] if self._t else None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._t is None:
            return None
        r, c = index.row(), index.column()
        cls = self._t.classes[r][c]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._t.rows[r][c]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            left = c == 0 or (c == 1 and self._t.header[1] == "unit")
            return int((Qt.AlignmentFlag.AlignLeft if left else Qt.AlignmentFlag.AlignRight)
                       | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and cls:
            return QColor(CLASS_COLOURS[cls])
        if role == Qt.ItemDataRole.ForegroundRole and cls:
            return QColor(CLASS_TEXT[cls])
        if role == CLASS_ROLE:
            return cls
        if role == Qt.ItemDataRole.ToolTipRole and cls:
            return {"better": "better than the base run", "worse": "worse than the base run",
                    "same": "within 5 % of the base run",
                    "n/a": "no ratio: the base or this run has no value (or the base is 0)"
                    }.get(cls)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,   # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self._t is None or orientation != Qt.Orientation.Horizontal:
            return None
        text = self._t.header[section]
        if role == Qt.ItemDataRole.DisplayRole:
            # "1: PostgreSQL 16.4" shows as "1" by its colour: the legend names the runs
            if section in self._run_of_col and ": " in text:
                return text.split(": ", 1)[0]
            return text
        if role == Qt.ItemDataRole.ToolTipRole:
            return text
        if role == Qt.ItemDataRole.DecorationRole and section in self._run_of_col:
            run = self._run_of_col[section]
            if 0 <= run < len(self._colours):
                return swatch(self._colours[run])
        return None


class MatrixTableModel(RatioTableModel):
    """Many runs at once: rows phases (or parameter values), columns runs, cells ratios."""


def _table_view(name: str, model: QAbstractTableModel) -> QTableView:
    v = QTableView()
    v.setObjectName(name)
    v.setModel(model)
    v.verticalHeader().setVisible(False)
    v.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    v.horizontalHeader().setMinimumSectionSize(48)
    v.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    v.setWordWrap(False)
    v.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    return v


# --- the view ----------------------------------------------------------------------------
class CompareWidget(QWidget):
    """Runs from any sessions: charts (overlay or side by side), replay, tables, exports."""

    comparison_loaded = Signal(object)          # Comparison
    load_failed = Signal(str)
    export_finished = Signal(str)               # path written
    export_failed = Signal(str)                 # the sentence shown
    live_refreshed = Signal(int)                # index of the run re-read

    def __init__(self, tasks: TaskRunner | None = None, parent: QWidget | None = None,
                 export_dir: Path | str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_view")
        self.tasks = tasks or TaskRunner(self)
        self.clock = ReplayClock(self)
        self.comp: Comparison | None = None
        self.refs: list[RunRef] = []
        self.mode = "overlay"
        self.export_dir = Path(export_dir or Path.home())
        self._colours: dict[tuple, str] = {}
        self._chart_choice: list[str] | None = None     # None: the default charts
        self.chart_names: list[str] = []
        self.plots: list[tuple[str, int | None, pg.PlotItem]] = []
        self.cursors: list[pg.InfiniteLine] = []
        self.curves: dict[tuple[str, int, str], pg.PlotDataItem] = {}
        self.overlay: CursorOverlay | None = None
        self._generation = 0
        self._live_busy: set[int] = set()
        self._menu_chart: str | None = None
        self._message_boxes: list[QMessageBox] = []

        self.actions = build_actions(self, COMPARE_ACTIONS)
        for act in self.actions.values():
            act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(act)
        self.actions["loop"].setCheckable(True)
        self._build()
        self._connect()
        self.setAcceptDrops(True)
        self._live_timer = QTimer(self)
        self._live_timer.setInterval(LIVE_MS)
        self._live_timer.timeout.connect(self._on_live_timer_timeout)
        self._refreeze_timer = QTimer(self)
        self._refreeze_timer.setSingleShot(True)
        self._refreeze_timer.setInterval(120)
        self._refreeze_timer.timeout.connect(self._on_refreeze_timer_timeout)
        self._set_enabled(False)

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.setSpacing(6)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack)
        self.placeholder = QLabel("Select runs in the Sessions list (Ctrl+click for several) "
                                  "and press Compare, or drop runs or session files here.")
        self.placeholder.setObjectName("compare_placeholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setProperty("role", "hint")
        self.stack.addWidget(self.placeholder)
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.stack.addWidget(page)

        # top bar: the runs in their colours, then the view's choices
        top = QHBoxLayout()
        top.setSpacing(10)
        self.runs_bar = QHBoxLayout()
        self.runs_bar.setSpacing(14)
        top.addLayout(self.runs_bar)
        top.addStretch(1)
        top.addWidget(QLabel("Align on"))
        self.align_combo = QComboBox()
        self.align_combo.setObjectName("align_combo")
        self.align_combo.setToolTip("Time zero of every run: its start, or the start of a "
                                    "phase all runs have")
        top.addWidget(self.align_combo)
        top.addWidget(QLabel("Base"))
        self.base_combo = QComboBox()
        self.base_combo.setObjectName("base_combo")
        self.base_combo.setToolTip("The run the ratios are taken to")
        top.addWidget(self.base_combo)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("mode_combo")
        self.mode_combo.addItem("Overlay", "overlay")
        self.mode_combo.addItem("Side by side", "side-by-side")
        self.mode_combo.setToolTip("Overlay: one chart per metric, one line per run. Side by "
                                   "side: one column per run, one row per metric")
        top.addWidget(self.mode_combo)
        self.charts_button = QToolButton()
        self.charts_button.setText("Charts")
        self.charts_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.charts_menu = QMenu(self.charts_button)
        self.charts_button.setMenu(self.charts_menu)
        top.addWidget(self.charts_button)
        self.export_button = QToolButton()
        self.export_button.setObjectName("export_button")
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_menu = QMenu(self.export_button)
        a = self.actions
        for key in ("export_chart", "copy_chart", None, "export_series_csv",
                    "export_series_json", None, "export_tables_md", "export_tables_html",
                    "export_tables_csv", None, "export_deck"):
            if key is None:
                self.export_menu.addSeparator()
            else:
                self.export_menu.addAction(a[key])
        self.export_button.setMenu(self.export_menu)
        top.addWidget(self.export_button)
        lay.addLayout(top)

        # charts with the values panel beside them, the replay bar under them
        self.chart_view = pg.GraphicsLayoutWidget()
        self.chart_view.setObjectName("compare_charts")
        self.chart_view.setBackground("w")
        self.chart_view.ci.setSpacing(4)
        self.chart_view.installEventFilter(self)
        self.values_panel = ValuesPanel()
        self.values_panel.setObjectName("values_panel")
        self.chart_split = QSplitter(Qt.Orientation.Horizontal)
        self.chart_split.addWidget(self.chart_view)
        self.chart_split.addWidget(self.values_panel)
        self.chart_split.setStretchFactor(0, 4)
        self.chart_split.setStretchFactor(1, 1)
        self.chart_split.setSizes([880, 330])
        upper = QWidget()
        ul = QVBoxLayout(upper)
        ul.setContentsMargins(0, 0, 0, 0)
        ul.setSpacing(4)
        ul.addWidget(self.chart_split, 1)
        ul.addLayout(self._build_replay_bar())

        # tables: summary and efficiency side by side; the matrix
        self.summary_model = RatioTableModel(self)
        self.efficiency_model = RatioTableModel(self)
        self.matrix_model = MatrixTableModel(self)
        self.summary_view = _table_view("summary_table", self.summary_model)
        self.efficiency_view = _table_view("efficiency_table", self.efficiency_model)
        self.matrix_view = _table_view("matrix_table", self.matrix_model)
        summary_page = QWidget()
        sl = QVBoxLayout(summary_page)
        sl.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Phase"))
        self.phase_combo = QComboBox()
        self.phase_combo.setObjectName("phase_combo")
        row.addWidget(self.phase_combo)
        row.addStretch(1)
        sl.addLayout(row)
        tsplit = QSplitter(Qt.Orientation.Horizontal)
        tsplit.addWidget(self.summary_view)
        tsplit.addWidget(self.efficiency_view)
        tsplit.setStretchFactor(0, 1)
        tsplit.setStretchFactor(1, 1)
        sl.addWidget(tsplit, 1)
        self.notes_label = QLabel()
        self.notes_label.setObjectName("table_notes")
        self.notes_label.setProperty("role", "hint")
        self.notes_label.setWordWrap(True)
        sl.addWidget(self.notes_label)
        matrix_page = QWidget()
        ml = QVBoxLayout(matrix_page)
        ml.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Metric"))
        self.matrix_metric = QComboBox()
        self.matrix_metric.setObjectName("matrix_metric")
        row.addWidget(self.matrix_metric)
        row.addWidget(QLabel("Rows"))
        self.matrix_by = QComboBox()
        self.matrix_by.setObjectName("matrix_by")
        row.addWidget(self.matrix_by)
        row.addStretch(1)
        ml.addLayout(row)
        ml.addWidget(self.matrix_view, 1)
        self.table_tabs = QTabWidget()
        self.table_tabs.setObjectName("compare_table_tabs")
        self.table_tabs.addTab(summary_page, "Summary per phase")
        self.table_tabs.addTab(matrix_page, "Matrix")
        # the effective server settings that differ between the runs (read off-thread)
        self.settings_page = SettingsPage(self.tasks)
        self.settings_model: SettingsDiffTableModel = self.settings_page.model
        self.table_tabs.addTab(self.settings_page, "Settings")

        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("compare_split")
        self.split.addWidget(upper)
        self.split.addWidget(self.table_tabs)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setSizes([560, 300])
        lay.addWidget(self.split, 1)

    def _build_replay_bar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.setSpacing(6)
        a = self.actions

        def button(action: QAction, name: str) -> QToolButton:
            b = QToolButton()
            b.setObjectName(name)
            b.setDefaultAction(action)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)      # Space is the clock's, not a button's
            b.setAutoRaise(True)
            bar.addWidget(b)
            return b

        button(a["step_back"], "step_back_button")
        self.play_button = button(a["play_pause"], "play_button")
        button(a["step_forward"], "step_forward_button")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("replay_slider")
        self.slider.setToolTip("Replay position (drag to scrub)")
        bar.addWidget(self.slider, 1)
        self.time_label = QLabel("0:00 / 0:00")
        self.time_label.setObjectName("replay_time")
        self.time_label.setMinimumWidth(130)
        bar.addWidget(self.time_label)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speed_combo")
        for r in RATES:
            self.speed_combo.addItem(f"{r}×", float(r))
        self.speed_combo.setToolTip("Replay speed")
        bar.addWidget(self.speed_combo)
        self.loop_box = QCheckBox("Loop")
        self.loop_box.setObjectName("loop_box")
        self.loop_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bar.addWidget(self.loop_box)
        return bar

    def _connect(self) -> None:
        a = self.actions
        a["play_pause"].triggered.connect(self.clock.toggle)
        a["step_back"].triggered.connect(lambda: self.clock.step(-1))
        a["step_forward"].triggered.connect(lambda: self.clock.step(1))
        a["loop"].toggled.connect(self.clock.set_loop)
        self.loop_box.toggled.connect(self.clock.set_loop)
        a["export_chart"].triggered.connect(self._on_export_chart_action_triggered)
        a["copy_chart"].triggered.connect(lambda: self.copy_chart(self._current_chart()))
        a["export_series_csv"].triggered.connect(lambda: self._ask_and_export("series", "csv"))
        a["export_series_json"].triggered.connect(lambda: self._ask_and_export("series", "json"))
        a["export_tables_md"].triggered.connect(lambda: self._ask_and_export("tables", "md"))
        a["export_tables_html"].triggered.connect(lambda: self._ask_and_export("tables", "html"))
        a["export_tables_csv"].triggered.connect(lambda: self._ask_and_export("tables", "csv"))
        a["export_deck"].triggered.connect(lambda: self._ask_and_export("deck", "pptx"))
        c = self.clock
        c.position_changed.connect(self._on_clock_position_changed)
        c.playing_changed.connect(self._on_clock_playing_changed)
        c.rate_changed.connect(self._on_clock_rate_changed)
        c.loop_changed.connect(self._on_clock_loop_changed)
        c.range_changed.connect(self._on_clock_range_changed)
        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.speed_combo.currentIndexChanged.connect(
            lambda _i: self.clock.set_rate(self.speed_combo.currentData()))
        self.mode_combo.currentIndexChanged.connect(
            lambda _i: self.set_mode(self.mode_combo.currentData()))
        self.align_combo.currentIndexChanged.connect(self._on_align_combo_changed)
        self.base_combo.currentIndexChanged.connect(lambda _i: self._fill_tables())
        self.phase_combo.currentIndexChanged.connect(lambda _i: self._fill_tables())
        self.matrix_metric.currentIndexChanged.connect(lambda _i: self._fill_matrix())
        self.matrix_by.currentIndexChanged.connect(lambda _i: self._fill_matrix())
        self.chart_view.scene().sigMouseClicked.connect(self._on_chart_scene_clicked)
        for v in (self.summary_view, self.efficiency_view, self.matrix_view):
            v.customContextMenuRequested.connect(
                lambda pos, view=v: self._on_table_context_menu(view, pos))

    def _set_enabled(self, on: bool) -> None:
        for key, act in self.actions.items():
            act.setEnabled(on)
        self.stack.setCurrentIndex(1 if on else 0)

    # ------------------------------------------------------------------ loading
    def set_runs(self, refs: Sequence[RunRef]) -> None:
        """Compare exactly these runs (a RunRef without run id: every run of that file)."""
        self.clock.pause()
        self._load(list(refs))

    def add_runs(self, refs: Sequence[RunRef]) -> None:
        """Add runs (dropped, or compared while a comparison is open); duplicates are left out."""
        have = {ref_key(r) for r in self.refs}
        new = [r for r in refs if ref_key(r) not in have]
        if new:
            self._load(self.refs + new)

    def remove_run(self, index: int) -> None:
        refs = [r for i, r in enumerate(self.refs) if i != index]
        if refs:
            self._load(refs)
        else:
            self.clear()

    def clear(self) -> None:
        self.clock.pause()
        self._live_timer.stop()
        self.comp, self.refs = None, []
        self.chart_view.clear()
        self.plots, self.cursors, self.curves = [], [], {}
        self._set_enabled(False)

    def _load(self, refs: list[RunRef]) -> None:
        self._generation += 1
        gen = self._generation
        align = self.comp.align_phase if self.comp is not None else None
        if self.comp is None:
            self.placeholder.setText("Loading the runs…")

        def job():
            comp = load_comparison(refs)
            if align and all(r.phase(align) for r in comp.runs):
                comp.align(align)
            comp.charts()           # computes the series here, off the GUI thread
            return comp

        self.tasks.submit(job, lambda comp: self._on_comparison_loaded(gen, comp),
                          lambda exc: self._on_comparison_failed(gen, exc))

    def _on_comparison_failed(self, gen: int, exc: BaseException) -> None:
        if gen != self._generation:
            return
        msg = str(exc) or type(exc).__name__
        if self.comp is None:
            self.placeholder.setText(f"Could not open the runs: {msg}")
        self._message(f"Could not open the runs: {msg}", "Compare")
        self.load_failed.emit(msg)

    def _on_comparison_loaded(self, gen: int, comp: Comparison) -> None:
        if gen != self._generation:
            return
        # one colour per run for as long as it is in the comparison; newcomers take the
        # first colour no run has
        kept: set[int] = set()
        used: set[str] = set()
        for r in comp.runs:
            col = self._colours.get(ref_key(r.ref))
            if col is not None and col not in used:
                r.colour = col
                used.add(col)
                kept.add(r.index)
        for r in comp.runs:
            if r.index not in kept:
                free = [c for c in RUN_COLOURS if c not in used] or list(RUN_COLOURS)
                r.colour = free[0]
                used.add(r.colour)
        self._colours = {ref_key(r.ref): r.colour for r in comp.runs}
        self.comp = comp
        self.refs = [r.ref for r in comp.runs]
        self._fill_runs_bar()
        self._fill_choices()
        self._rebuild_charts()
        self._fill_tables()
        self._fill_matrix()
        self.settings_page.load(comp)
        lo, hi = comp.time_range()
        self.clock.set_range(lo, hi)
        self.clock.set_position(min(max(0.0, lo), hi))
        self._on_clock_position_changed(self.clock.position)
        self._set_enabled(True)
        if self.live_runs():
            self._live_timer.start()
        else:
            self._live_timer.stop()
        self.comparison_loaded.emit(comp)

    def live_runs(self) -> list[int]:
        return [i for i, r in enumerate(self.comp.runs) if r.status not in FINISHED] \
            if self.comp else []

    def _fill_runs_bar(self) -> None:
        while self.runs_bar.count():
            w = self.runs_bar.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for i, r in enumerate(self.comp.runs):
            live = " (live)" if r.status not in FINISHED else ""
            lab = QLabel(f'<span style="color:{r.colour};font-size:14pt">■</span> '
                         f'{i + 1}. {escape(r.label)}{live}')
            lab.setObjectName(f"run_chip_{i}")
            lab.setToolTip(f"{r.ref.file}\nrun {r.ref.run_id}\n{r.workload} on {r.hostname}"
                           f" → {r.target}\n" + ", ".join(f"{k}={v}" for k, v in
                                                          r.params.items()))
            lab.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            lab.customContextMenuRequested.connect(
                lambda pos, i=i, lab=lab: self._on_run_chip_menu(i, lab.mapToGlobal(pos)))
            self.runs_bar.addWidget(lab)

    def _on_run_chip_menu(self, i: int, pos: QPoint) -> None:
        menu = QMenu(self)
        menu.addAction("Use as base run", lambda: self.base_combo.setCurrentIndex(i))
        menu.addAction("Remove from the comparison", lambda: self.remove_run(i))
        menu.popup(pos)

    def _fill_choices(self) -> None:
        comp = self.comp
        for combo in (self.align_combo, self.base_combo, self.phase_combo,
                      self.matrix_metric, self.matrix_by):
            combo.blockSignals(True)
        base = self.base_combo.currentIndex()
        self.align_combo.clear()
        self.align_combo.addItem("Run start", None)
        for ph in comp.common_phases():
            self.align_combo.addItem(f"Start of {ph}", ph)
        self.align_combo.setCurrentIndex(max(0, self.align_combo.findData(comp.align_phase)))
        self.base_combo.clear()
        for r in comp.runs:
            self.base_combo.addItem(swatch(r.colour), f"{r.index + 1}. {r.label}", r.index)
        self.base_combo.setCurrentIndex(base if 0 <= base < len(comp.runs) else 0)
        phase = self.phase_combo.currentData()
        self.phase_combo.clear()
        for ph in comp.phase_order():
            self.phase_combo.addItem(ph, ph)
        common = comp.common_phases()
        want = phase if phase in comp.phase_order() else (
            comp.align_phase or ("measure" if "measure" in common else
                                 (common or comp.phase_order() or [None])[-1]))
        self.phase_combo.setCurrentIndex(max(0, self.phase_combo.findData(want)))
        key = self.matrix_metric.currentData()
        self.matrix_metric.clear()
        for k in TABLE_METRICS:
            if comp.has_metric(k) or METRICS[k].per_phase == "efficiency":
                self.matrix_metric.addItem(METRICS[k].title, k)
        self.matrix_metric.setCurrentIndex(max(0, self.matrix_metric.findData(key)))
        by = self.matrix_by.currentData()
        self.matrix_by.clear()
        self.matrix_by.addItem("Phases", "phase")
        names = dict.fromkeys(k for r in comp.runs for k in r.params)
        for name in names:
            if len({str(r.params.get(name)) for r in comp.runs}) > 1:
                self.matrix_by.addItem(f"Values of {name}", f"param:{name}")
        self.matrix_by.setCurrentIndex(max(0, self.matrix_by.findData(by)))
        for combo in (self.align_combo, self.base_combo, self.phase_combo,
                      self.matrix_metric, self.matrix_by):
            combo.blockSignals(False)
        self.charts_menu.clear()
        shown = self._shown_charts()
        for name in comp.charts():
            act = self.charts_menu.addAction(CHARTS[name].title)
            act.setCheckable(True)
            act.setChecked(name in shown)
            act.toggled.connect(lambda on, n=name: self._on_chart_toggled(n, on))

    # ------------------------------------------------------------------ charts
    def _shown_charts(self) -> list[str]:
        have = self.comp.charts() if self.comp else []
        want = self._chart_choice if self._chart_choice is not None else [
            c for c in DEFAULT_CHARTS if c != "tpm" or "tpm" in have]
        return [c for c in have if c in want] or have[:1]

    def set_charts(self, names: Sequence[str]) -> None:
        self._chart_choice = list(names)
        self._rebuild_charts()

    def _on_chart_toggled(self, name: str, on: bool) -> None:
        shown = self._shown_charts()
        shown = [c for c in shown if c != name] + ([name] if on else [])
        order = list(CHARTS)
        self.set_charts(sorted(shown, key=order.index))

    def set_mode(self, mode: str) -> None:
        if mode not in ("overlay", "side-by-side"):
            raise ValueError(f"a compare mode is overlay or side-by-side, not {mode!r}")
        self.mode = mode
        self.mode_combo.blockSignals(True)
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))
        self.mode_combo.blockSignals(False)
        self._rebuild_charts()

    def _rebuild_charts(self) -> None:
        comp = self.comp
        if comp is None:
            return
        playing = self.clock.playing
        if self.overlay is not None:
            self.overlay.thaw()
        x_range = (self.plots[0][2].getViewBox().viewRange()[0] if self.plots else None)
        view = self.chart_view
        view.clear()
        self.plots, self.cursors, self.curves = [], [], {}
        self.chart_names = self._shown_charts()
        runs = list(range(len(comp.runs)))
        groups: list[int | None] = [None] if self.mode == "overlay" else runs
        first = None
        for row, name in enumerate(self.chart_names):
            ch = CHARTS[name]
            unit = ch.unit or comp.metric_unit(ch.metrics[0])
            row_first = None
            for col, run in enumerate(groups):
                plot = view.addPlot(row=row, col=col,
                                    axisItems={"bottom": ElapsedSlideAxis("bottom")})
                self._style_plot(plot, name, unit, run, top_row=(row == 0),
                                 bottom_row=(row == len(self.chart_names) - 1),
                                 first_col=(col == 0))
                members = runs if run is None else [run]
                for i in members:
                    self._draw_run(plot, name, i)
                self._draw_phase_marks(plot, members)
                cursor = pg.InfiniteLine(pos=self.clock.position, angle=90, movable=True,
                                         pen=pg.mkPen("#222222", width=1.5),
                                         hoverPen=pg.mkPen("#1f6feb", width=3))
                cursor.setZValue(50)
                cursor.sigDragged.connect(self._on_cursor_dragged)
                plot.addItem(cursor, ignoreBounds=True)
                if first is None:
                    first = plot
                else:
                    plot.setXLink(first)
                if row_first is None:
                    row_first = plot
                else:
                    plot.setYLink(row_first)
                self.plots.append((name, run, plot))
                self.cursors.append(cursor)
            self._set_y_range(name, row_first)
        lo, hi = comp.time_range()
        if first is not None:
            first.setXRange(*(x_range or (lo, hi)), padding=0 if x_range else 0.01)
            first.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        self.overlay = CursorOverlay(view, [p for _, _, p in self.plots])
        keys = [k for n in self.chart_names for k in CHARTS[n].metrics]
        self.values_panel.set_comparison(comp, keys)
        self._on_clock_position_changed(self.clock.position)
        if playing:
            self._freeze()

    def _style_plot(self, plot: pg.PlotItem, name: str, unit: str, run: int | None,
                    top_row: bool, bottom_row: bool, first_col: bool) -> None:
        ch = CHARTS[name]
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        left = plot.getAxis("left")
        left.setWidth(AXIS_WIDTH)
        left.enableAutoSIPrefix(False)
        left.tickStrings = _num_ticks
        plot.getAxis("bottom").setHeight(22 if not bottom_row else 40)
        if bottom_row:
            plot.setLabel("bottom", "elapsed (h:mm:ss)", color="#666666")
        title = f"{ch.title} ({unit})" if unit else ch.title
        if len(ch.metrics) > 1 and first_col:          # which line style is which metric
            title += "   " + "   ".join(
                f"{_GLYPH[METRICS[k].style]} {short_title(METRICS[k].title)}" for k in ch.metrics)
        if run is None:
            plot.setTitle(f'<span style="color:#24292f">{escape(title)}</span>', size="9pt")
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
        for k in metrics:
            t, v = self.comp.series(i, k)
            style = _DASH[METRICS[k].style] if len(metrics) > 1 else Qt.PenStyle.SolidLine
            curve = pg.PlotDataItem(_np(t), _np(v), pen=pg.mkPen(r.colour, width=1.6,
                                                                 style=style),
                                    connect="finite", name=f"{r.label} {METRICS[k].title}")
            plot.addItem(curve)
            self.curves[(name, i, k)] = curve

    def _draw_phase_marks(self, plot: pg.PlotItem, members: Sequence[int]) -> None:
        marks = self.comp.phase_marks(members)
        lo, hi = self.comp.time_range()
        gap = 0.06 * (hi - lo)
        labelled: list[float] = []
        # latest first: when phases crowd together, the later one keeps its label
        for x, n in sorted(marks, reverse=True):
            show = all(abs(x - lx) >= gap for lx in labelled)
            if show:
                labelled.append(x)
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen("#b0b0b0", width=1, style=Qt.PenStyle.DashLine),
                                   label=n if show else None,
                                   labelOpts={"position": 0.92, "color": "#8a8a8a",
                                              "anchors": [(0, 0.5), (0, 0.5)]})
            plot.addItem(line, ignoreBounds=True)

    def _set_y_range(self, name: str, plot: pg.PlotItem | None) -> None:
        """From zero to a round top over every run's data: fixed, so panning the time axis
        or replaying never makes the y axis jump (no auto-range)."""
        if plot is None:
            return
        ch = CHARTS[name]
        if ch.y_max:
            top = ch.y_max * 1.02
        else:
            peak = 0.0
            for i in range(len(self.comp.runs)):
                for k in ch.metrics:
                    v = _np(self.comp.series(i, k)[1])
                    v = v[np.isfinite(v)]
                    if len(v):
                        peak = max(peak, float(v.max()))
            top = _nice_top(peak)
        plot.enableAutoRange(axis="y", enable=False)
        plot.setYRange(0, top, padding=0.02)

    def cursor_positions(self) -> list[float]:
        """Where each chart's cursor is (the line items, and the overlay while playing)."""
        out = [c.value() for c in self.cursors]
        if self.overlay is not None and self.overlay.pixmap is not None:
            out += [self.overlay.t] * len(self.plots)
        return out

    def plot(self, chart: str, run: int | None = None) -> pg.PlotItem:
        for name, r, p in self.plots:
            if name == chart and (run is None or r == run):
                return p
        raise KeyError(f"no chart {chart!r}" + (f" for run {run + 1}" if run is not None else ""))

    # ------------------------------------------------------------------ clock → views
    @Slot(float)
    def _on_clock_position_changed(self, t: float) -> None:
        for c in self.cursors:
            c.setValue(t)
        if self.overlay is not None and self.overlay.pixmap is not None:
            self.overlay.set_time(t)
        self.values_panel.show_time(t)
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(t * SLIDER_STEPS_PER_S)))
        self.slider.blockSignals(False)
        lo, hi = self.clock.range()
        self.time_label.setText(f"{fmt_clock(t)} / {fmt_clock(hi)}")

    @Slot(bool)
    def _on_clock_playing_changed(self, playing: bool) -> None:
        a = self.actions["play_pause"]
        icon = "SP_MediaPause" if playing else "SP_MediaPlay"
        a.setIcon(self.style().standardIcon(getattr(self.style().StandardPixmap, icon)))
        a.setText("Pause" if playing else "Play")
        if playing:
            self._freeze()
        else:
            self._thaw()

    def _freeze(self) -> None:
        if self.overlay is None or not self.isVisible():
            return
        for c in self.cursors:
            c.hide()
        for _, _, p in self.plots:
            p.enableAutoRange(axis="y", enable=False)
        self.overlay.freeze()
        self.overlay.set_time(self.clock.position)

    def _thaw(self) -> None:
        if self.overlay is not None:
            self.overlay.thaw()
        for c in self.cursors:
            c.show()

    @Slot(float)
    def _on_clock_rate_changed(self, rate: float) -> None:
        i = self.speed_combo.findData(float(rate))
        self.speed_combo.blockSignals(True)
        if i < 0:
            self.speed_combo.addItem(f"{rate:g}×", float(rate))
            i = self.speed_combo.count() - 1
        self.speed_combo.setCurrentIndex(i)
        self.speed_combo.blockSignals(False)

    @Slot(bool)
    def _on_clock_loop_changed(self, loop: bool) -> None:
        for w in (self.loop_box, self.actions["loop"]):
            w.blockSignals(True)
            w.setChecked(loop)
            w.blockSignals(False)

    @Slot(float, float)
    def _on_clock_range_changed(self, lo: float, hi: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(int(math.floor(lo * SLIDER_STEPS_PER_S)),
                             int(math.ceil(hi * SLIDER_STEPS_PER_S)))
        self.slider.setPageStep(max(1, int((hi - lo) * SLIDER_STEPS_PER_S / 20)))
        self.slider.blockSignals(False)

    @Slot(int)
    def _on_slider_value_changed(self, value: int) -> None:
        self.clock.set_position(value / SLIDER_STEPS_PER_S)

    def _on_cursor_dragged(self, line: pg.InfiniteLine) -> None:
        self.clock.set_position(line.value())

    def _on_chart_scene_clicked(self, ev) -> None:
        pos = ev.scenePos()
        for name, run, plot in self.plots:
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(pos):
                if ev.button() == Qt.MouseButton.LeftButton:
                    self.clock.set_position(vb.mapSceneToView(pos).x())
                elif ev.button() == Qt.MouseButton.RightButton:
                    ev.accept()
                    sp = ev.screenPos()
                    self.chart_menu(name).popup(QPoint(int(sp.x()), int(sp.y())))
                return

    def _on_x_range_changed(self, *_a) -> None:
        if self.clock.playing:
            self._refreeze_timer.start()

    def _on_refreeze_timer_timeout(self) -> None:
        if self.clock.playing:
            self._freeze()

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:   # noqa: N802 (Qt name)
        if obj is self.chart_view and ev.type() == QEvent.Type.Resize and self.clock.playing:
            self._refreeze_timer.start()
        return super().eventFilter(obj, ev)

    def hideEvent(self, ev) -> None:                          # noqa: N802
        self.clock.pause()          # a hidden view does not play on in the background
        super().hideEvent(ev)

    # ------------------------------------------------------------------ alignment
    def set_align(self, phase: str | None) -> None:
        if self.comp is None:
            return
        try:
            self.comp.align(phase)
        except CompareError as exc:
            self._message(str(exc), "Cannot align")
            return
        self.align_combo.blockSignals(True)
        self.align_combo.setCurrentIndex(max(0, self.align_combo.findData(phase)))
        self.align_combo.blockSignals(False)
        lo, hi = self.comp.time_range()
        self.clock.set_range(lo, hi)
        self._rebuild_charts()
        if self.plots:
            self.plots[0][2].setXRange(lo, hi, padding=0.01)
        self.clock.set_position(min(max(0.0, lo), hi))
        self._on_clock_position_changed(self.clock.position)

    def _on_align_combo_changed(self, _i: int) -> None:
        self.set_align(self.align_combo.currentData())

    # ------------------------------------------------------------------ tables
    def base(self) -> int:
        b = self.base_combo.currentData()
        return int(b) if b is not None else 0

    def set_base(self, index: int) -> None:
        self.base_combo.setCurrentIndex(index)

    def set_phase(self, phase: str) -> None:
        self.phase_combo.setCurrentIndex(self.phase_combo.findData(phase))

    def _run_columns(self, table: Table) -> dict[int, int]:
        n = len(self.comp.runs)
        others = [i for i in range(n) if i != self.base()]
        cols = {2 + i: i for i in range(n)}
        cols.update({2 + n + j: i for j, i in enumerate(others)})
        return cols

    def _fill_tables(self) -> None:
        comp = self.comp
        phase = self.phase_combo.currentData()
        colours = [r.colour for r in comp.runs] if comp else []
        if comp is None or phase is None:
            self.summary_model.set_table(None)
            self.efficiency_model.set_table(None)
            return
        try:
            s = comp.summary_table(phase, self.base())
            e = comp.efficiency_table(phase, self.base())
        except CompareError as exc:
            self.summary_model.set_table(None)
            self.efficiency_model.set_table(None)
            self.notes_label.setText(str(exc))
            return
        self.summary_model.set_table(s, self._run_columns(s), colours)
        self.efficiency_model.set_table(e if e.rows else None, self._run_columns(e), colours)
        self.notes_label.setText("   ".join(dict.fromkeys(s.notes + e.notes[:1])))
        self._fill_matrix()

    def _fill_matrix(self) -> None:
        comp = self.comp
        key, by = self.matrix_metric.currentData(), self.matrix_by.currentData()
        if comp is None or key is None or by is None:
            self.matrix_model.set_table(None)
            return
        try:
            m = comp.matrix(key, self.base(), by=by)
        except CompareError as exc:
            self.matrix_model.set_table(None)
            self.notes_label.setText(str(exc))
            return
        cols = {1 + i: i for i in range(len(comp.runs))} if by == "phase" else {}
        self.matrix_model.set_table(m, cols, [r.colour for r in comp.runs])

    def _on_table_context_menu(self, view: QTableView, pos: QPoint) -> None:
        t = view.model().table()
        if t is None:
            return
        menu = QMenu(self)
        clip = QGuiApplication.clipboard()
        menu.addAction("Copy as Markdown", lambda: clip.setText(table_markdown(t)))
        menu.addAction("Copy as HTML", lambda: clip.setText(tableescape(t)))
        menu.addAction("Copy as CSV", lambda: clip.setText(table_csv(t)))
        menu.addSeparator()
        for key in ("export_tables_md", "export_tables_html", "export_tables_csv"):
            menu.addAction(self.actions[key])
        menu.popup(view.viewport().mapToGlobal(pos))

    # ------------------------------------------------------------------ live runs
    def _on_live_timer_timeout(self) -> None:
        if self.comp is None:
            return
        for i in self.live_runs():
            if i in self._live_busy:
                continue
            self._live_busy.add(i)
            r = self.comp.runs[i]
            gen = self._generation
            file, run_id, index = r.ref.file, r.ref.run_id, r.index

            def job(file=file, run_id=run_id, index=index):
                from app.store.session import SessionFile
                with SessionFile(file) as s:
                    return load_run(s, run_id, index, file)

            self.tasks.submit(job, lambda new, i=i, gen=gen: self._on_live_run_read(gen, i, new),
                              lambda exc, i=i: self._live_busy.discard(i))

    def _on_live_run_read(self, gen: int, i: int, new: Any) -> None:
        self._live_busy.discard(i)
        if gen != self._generation or self.comp is None or i >= len(self.comp.runs):
            return
        comp, old = self.comp, self.comp.runs[i]
        new.label, new.colour = old.label, old.colour
        span = new.phase(comp.align_phase) if comp.align_phase else None
        new.offset = span.t0 if span else old.offset
        comp.runs[i] = new
        for (name, run, k), curve in self.curves.items():
            if run == i:
                t, v = comp.series(i, k)
                curve.setData(_np(t), _np(v), connect="finite")
        for name in self.chart_names:
            rows = [p for n, _, p in self.plots if n == name]
            if rows:
                self._set_y_range(name, rows[0])
        lo, hi = comp.time_range()
        self.clock.set_range(lo, hi)
        self._fill_tables()
        self.values_panel.show_time(self.clock.position)
        self._on_clock_position_changed(self.clock.position)
        if new.status in FINISHED:
            self._fill_runs_bar()
            if not self.live_runs():
                self._live_timer.stop()
        if self.clock.playing:
            self._refreeze_timer.start()
        self.live_refreshed.emit(i)

    # ------------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, ev) -> None:                    # noqa: N802 (Qt name)
        if refs_from_mime(ev.mimeData()):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dragMoveEvent(self, ev) -> None:                     # noqa: N802
        self.dragEnterEvent(ev)

    def dropEvent(self, ev) -> None:                         # noqa: N802
        refs = refs_from_mime(ev.mimeData())
        if refs:
            ev.acceptProposedAction()
            if self.comp is None:
                self.set_runs(refs)
            else:
                self.add_runs(refs)

    # ------------------------------------------------------------------ exports
    def chart_menu(self, chart: str) -> QMenu:
        """The context menu of one chart."""
        self._menu_chart = chart
        title = CHARTS[chart].title
        menu = QMenu(self)
        menu.setObjectName("chart_menu")
        for fmt in FORMATS:
            menu.addAction(f"Export {title} as {fmt.upper()}…",
                           lambda f=fmt: self._ask_chart_path(chart, f))
        menu.addAction(f"Copy {title} to the clipboard", lambda: self.copy_chart(chart))
        menu.addSeparator()
        menu.addAction(self.actions["export_series_csv"])
        menu.addAction(self.actions["export_series_json"])
        menu.addAction(self.actions["export_deck"])
        menu.addSeparator()
        menu.addAction("Show all of the time axis", self.reset_zoom)
        return menu

    def reset_zoom(self) -> None:
        if self.comp is not None and self.plots:
            self.plots[0][2].setXRange(*self.comp.time_range(), padding=0.01)

    def _current_chart(self) -> str:
        return self._menu_chart if self._menu_chart in self.chart_names else (
            self.chart_names[0] if self.chart_names else "throughput")

    def _x_view(self) -> tuple[float, float] | None:
        return tuple(self.plots[0][2].getViewBox().viewRange()[0]) if self.plots else None

    def _on_export_chart_action_triggered(self) -> None:
        from .export_dialog import ChartExportDialog
        if self.comp is None:
            return
        dlg = ChartExportDialog(self.comp.charts(), self._current_chart(), self.mode,
                                self.export_dir, self)
        dlg.accepted.connect(lambda: self._on_chart_dialog_accepted(dlg))
        dlg.finished.connect(lambda _r: dlg.deleteLater())
        dlg.open()

    def _on_chart_dialog_accepted(self, dlg) -> None:
        req = dlg.request()
        self.export_chart(req.chart, req.path, req.fmt, req.size, req.scale, req.mode)

    def _ask_chart_path(self, chart: str, fmt: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, f"Export {CHARTS[chart].title}",
                                              str(self.export_dir / f"{chart}.{fmt}"),
                                              f"{fmt.upper()} (*.{fmt})")
        if path:
            self.export_chart(chart, path, fmt)

    def _ask_and_export(self, what: str, fmt: str) -> None:
        if self.comp is None:
            return
        names = {"series": "series", "tables": "tables", "deck": "comparison"}
        path, _ = QFileDialog.getSaveFileName(self, "Export", str(self.export_dir /
                                                                  f"{names[what]}.{fmt}"),
                                              f"{fmt.upper()} (*.{fmt})")
        if not path:
            return
        if what == "series":
            self.export_series(path, fmt)
        elif what == "tables":
            self.export_tables(path, {"md": "markdown"}.get(fmt, fmt))
        else:
            self.export_deck(path)

    def export_chart(self, chart: str, path: str | Path, fmt: str | None = None,
                     size: tuple[int, int] = (1920, 1080), scale: float = 1.0,
                     mode: str | None = None) -> None:
        """Render in the light slide theme (the time range in view) and write off-thread;
        ``export_finished`` or ``export_failed`` says how it went."""
        path = Path(path)
        fmt = (fmt or path.suffix.lstrip(".")).lower()
        try:
            if self.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            if fmt not in FORMATS:
                raise ExportError(f"a chart is saved as PNG, SVG or PDF, not {fmt or path.name!r}")
            check_writable(path)
            data = render_bytes(self.comp, chart, fmt, size, scale, mode=mode or self.mode,
                                time_range=self._x_view())
        except (ExportError, CompareError, KeyError, ValueError) as exc:
            self._export_failed(exc)
            return
        self._write(path, data)

    def copy_chart(self, chart: str, size: tuple[int, int] = (1920, 1080)) -> None:
        from .render import copy_to_clipboard
        if self.comp is not None:
            copy_to_clipboard(self.comp, chart, size, mode=self.mode, time_range=self._x_view())
            self.export_finished.emit("clipboard")

    def export_series(self, path: str | Path, fmt: str | None = None) -> None:
        path = Path(path)
        fmt = (fmt or path.suffix.lstrip(".")).lower()
        try:
            if self.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            check_writable(path)
            if fmt == "json":
                text = to_json(self.comp.series_json())
            elif fmt == "csv":
                text = series_csv(*self.comp.series_columns())
            else:
                raise ExportError(f"series are saved as CSV or JSON, not {fmt!r}")
        except (ExportError, ValueError) as exc:
            self._export_failed(exc)
            return
        self._write(path, text.encode("utf-8"))

    def export_tables(self, path: str | Path, fmt: str | None = None) -> None:
        path = Path(path)
        fmt = fmt or {".md": "markdown", ".markdown": "markdown", ".html": "html",
                      ".htm": "html", ".csv": "csv"}.get(path.suffix.lower(), "")
        try:
            if self.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            if fmt not in ("markdown", "html", "csv"):
                raise ExportError(f"tables are saved as Markdown, HTML or CSV, not "
                                  f"{path.suffix or path.name!r}")
            check_writable(path)
            text = tables_text(self._all_tables(), fmt)
        except (ExportError, CompareError) as exc:
            self._export_failed(exc)
            return
        self._write(path, text.encode("utf-8"))

    def _all_tables(self) -> list[Table]:
        comp = self.comp
        tables = comp.tables(self.base())
        phase = self.phase_combo.currentData()
        if phase and phase not in (comp.common_phases() if len(comp) > 1 else []):
            tables += [t for t in (comp.summary_table(phase, self.base()),
                                   comp.efficiency_table(phase, self.base())) if t.rows]
        m = self.matrix_model.table()
        if m is not None and m.rows:
            tables.append(m)
        return tables

    def export_deck(self, path: str | Path) -> None:
        """Title slide, one slide per chart (rendered here), one per table (written
        off-thread by python-pptx)."""
        path = Path(path)
        try:
            if self.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            check_writable(path)
            comp = self.comp
            names = [c for c in DECK_CHARTS if c in comp.charts()]
            charts = [(c, render_bytes(comp, c, "png", (1920, 1080), 1.0, mode=self.mode))
                      for c in names]
            tables = self._all_tables()
            sub = ((f"aligned on the start of {comp.align_phase}" if comp.align_phase
                    else "aligned on run start") + f"; ratios to run {self.base() + 1}")
            title, runs = comp.title(), comp.deck_runs()
        except (ExportError, CompareError) as exc:
            self._export_failed(exc)
            return
        self.tasks.submit(lambda: write_deck(path, title, sub, runs, charts, tables),
                          lambda p: self.export_finished.emit(str(p)), self._export_failed)

    def _write(self, path: Path, data: bytes) -> None:
        self.tasks.submit(lambda: write_bytes(path, data),
                          lambda p: self.export_finished.emit(str(p)), self._export_failed)

    def _export_failed(self, exc: BaseException) -> None:
        text = str(exc) or type(exc).__name__
        if isinstance(exc, KeyError) and exc.args:
            text = str(exc.args[0])
        sentence = f"Nothing was exported: {text[0].lower() + text[1:] if text else text}."
        sentence = sentence.replace("..", ".")
        self._message(sentence, "Export failed", "export_error_box")
        self.export_failed.emit(sentence)

    def _message(self, text: str, title: str, name: str = "compare_error_box") -> QMessageBox:
        """A non-blocking message box: replay and live refresh go on behind it."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok,
                          self)
        box.setObjectName(name)
        box.finished.connect(lambda _r: self._message_boxes.remove(box)
                             if box in self._message_boxes else None)
        self._message_boxes.append(box)
        box.open()
        return box


# --- helpers -------------------------------------------------------------------------------
def _np(a) -> np.ndarray:
    return np.frombuffer(a, dtype=np.float64) if len(a) else np.zeros(0)




def _num_ticks(values, scale, spacing):
    out = []
    for v in values:
        x = v * scale
        if abs(x) >= 10_000:
            out.append(f"{x / 1000:,.0f}k" if spacing >= 1000 else f"{x:,.0f}")
        elif spacing >= 1 or x == 0:
            out.append(f"{x:,.0f}")
        else:
            digits = max(0, min(4, -int(math.floor(math.log10(spacing)))))
            out.append(f"{x:,.{digits}f}")
    return out


__all__ = ["CompareWidget", "ReplayClock", "ValuesPanel", "RatioTableModel",
           "MatrixTableModel", "SessionTreeWidget", "refs_from_mime", "runs_mime"]
