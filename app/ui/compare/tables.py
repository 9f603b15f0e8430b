"""The Compare view's numbers: the values under the replay cursor, and the per-phase summary,
efficiency, matrix and settings tables with ratios to a base run coloured as a key says.

    tables = CompareTablesWidget(tasks, actions)
    tables.fill(comp, base)            # after loading, or when the base or phase changes
    tables.all_tables(comp, base)      # what the exports write
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QColor, QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFrame, QHBoxLayout, QHeaderView,
                               QLabel, QMenu, QScrollArea, QTableView, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from app.analysis.compare import CompareError, Comparison, fmt_row
from app.analysis.metrics import METRICS, TABLE_METRICS
from app.model.runset import CLASS_COLOURS, CLASS_TEXT, Table
from app.model.scale import fmt_clock
from app.store.export import table_csv, table_html, table_markdown

from app.ui.compare.suite_matrix import SuiteMatrixWidget
from app.ui.common.table_view import table_view
from app.ui.compare.settings_tab import SettingsDiffTableModel, SettingsPage
from app.ui.common.tasks import TaskRunner

CLASS_ROLE = Qt.ItemDataRole.UserRole + 1     # a ratio cell's class: better, worse, same, n/a
# The ratio colours as a key of three chips, not a sentence.
RATIO_KEY = "  ".join(
    f'<span style="background:{CLASS_COLOURS[c]};color:{CLASS_TEXT[c]}">&nbsp;{t}&nbsp;</span>'
    for c, t in (("better", "better"), ("worse", "worse"), ("same", "within ±5 %")))


def swatch(colour: str, size: int = 12) -> QIcon:
    pm = QPixmap(size, size)
    pm.fill(QColor(colour))
    return QIcon(pm)


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

    def wanted_height(self) -> int:
        """Room for the time label and every row, without a scroll bar."""
        t = self.table
        t.resizeRowsToContents()
        return (self.time_label.sizeHint().height() + self.layout().spacing()
                + t.horizontalHeader().sizeHint().height() + t.verticalHeader().length()
                + 2 * t.frameWidth() + 4)

    def show_time(self, t: float) -> None:
        self.t = t
        if self.comp is None:
            return
        align = self.comp.align_phase
        self.time_label.setText(f"{fmt_clock(t, tenths=True)}  "
                                + (f"since {align} started" if align else "since start"))
        self.current = self.comp.values_at(t, self.keys) if self.keys else []
        for i, k in enumerate(self.keys):
            for j, text in enumerate(fmt_row([row.get(k) for row in self.current])):
                item = self.table.item(i, j)
                if item is not None:
                    item.setText(text)
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
        if role == Qt.ItemDataRole.BackgroundRole and cls and cls != "n/a":
            return QColor(CLASS_COLOURS[cls])         # n/a has no colour (blank in any theme)
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


def fit_rows(v: QTableView) -> None:
    """As tall as its rows (and the header, and a horizontal scroll bar if it needs one):
    a table cut mid-row behind a scroll bar hides the number the user came for."""
    v.resizeColumnsToContents()
    rows = v.verticalHeader().length()
    h = v.horizontalHeader().sizeHint().height() + rows + 2 * v.frameWidth() + 2
    if v.horizontalHeader().length() > v.viewport().width() > 0:
        h += v.horizontalScrollBar().sizeHint().height()
    v.setFixedHeight(h if v.model().rowCount() else 0)
    v.setVisible(v.model().rowCount() > 0)


class CompareTablesWidget(QTabWidget):
    """Tabs: the summary per phase over the efficiency table (each as tall as its rows), the
    matrix of many runs, and the effective server settings."""

    changed = Signal()                  # the phase, matrix metric or rows were chosen

    def __init__(self, tasks: TaskRunner, actions: dict[str, QAction],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_table_tabs")
        self.setDocumentMode(True)
        self.actions = actions
        self.summary_model = RatioTableModel(self)
        self.efficiency_model = RatioTableModel(self)
        self.matrix_model = MatrixTableModel(self)
        self.summary_view = table_view("summary_table", self.summary_model)
        self.efficiency_view = table_view("efficiency_table", self.efficiency_model)
        self.matrix_view = table_view("matrix_table", self.matrix_model)
        summary_page = QWidget()
        sl = QVBoxLayout(summary_page)
        sl.setContentsMargins(0, 4, 0, 0)
        sl.setSpacing(4)
        row = QHBoxLayout()
        row.addWidget(QLabel("Phase"))
        self.phase_combo = QComboBox()
        self.phase_combo.setObjectName("phase_combo")
        row.addWidget(self.phase_combo)
        row.addStretch(1)
        self.ratio_key = QLabel(RATIO_KEY)
        self.ratio_key.setObjectName("ratio_key")
        self.ratio_key.setToolTip("Ratio = run ÷ base run. Where lower is better (latency, "
                                  "CPU, errors) a ratio below 0.95 is the better one")
        row.addWidget(self.ratio_key)
        sl.addLayout(row)
        sl.addWidget(self.summary_view)
        sl.addWidget(self.efficiency_view)
        self.notes_label = QLabel()
        self.notes_label.setObjectName("table_notes")
        self.notes_label.setProperty("role", "hint")
        self.notes_label.setWordWrap(True)
        sl.addWidget(self.notes_label)
        sl.addStretch(1)
        summary_scroll = QScrollArea()
        summary_scroll.setWidget(summary_page)
        summary_scroll.setWidgetResizable(True)
        summary_scroll.setFrameShape(QFrame.Shape.NoFrame)
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
        self.addTab(summary_scroll, "Summary per phase")
        self.addTab(matrix_page, "Matrix")
        # a suite's tests grouped, relative QPS beside a cost per operation (suite_matrix.py),
        # shown beside the Matrix tab for a suite only
        self.suite_matrix = SuiteMatrixWidget(self, icon=swatch)
        self.suite_matrix.hide()        # a page only while it is a tab: never drawn loose
        self._matrix_page = matrix_page
        # the effective server settings of the runs (read off-thread)
        self.settings_page = SettingsPage(tasks)
        self.settings_model: SettingsDiffTableModel = self.settings_page.model
        self.addTab(self.settings_page, "Settings")
        self.phase_combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.matrix_metric.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.matrix_by.currentIndexChanged.connect(lambda _i: self.changed.emit())
        for v in (self.summary_view, self.efficiency_view, self.matrix_view):
            v.customContextMenuRequested.connect(
                lambda pos, view=v: self._on_table_context_menu(view, pos))

    def fill_choices(self, comp: Comparison) -> None:
        """The phases and the matrix's metrics and rows this comparison offers (the choices
        made before are kept where they still exist)."""
        combos = (self.phase_combo, self.matrix_metric, self.matrix_by)
        for combo in combos:
            combo.blockSignals(True)
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
        for combo in combos:
            combo.blockSignals(False)

    @staticmethod
    def _run_columns(comp: Comparison, base: int) -> dict[int, int]:
        n = len(comp.runs)
        others = [i for i in range(n) if i != base]
        cols = {2 + i: i for i in range(n)}
        cols.update({2 + n + j: i for j, i in enumerate(others)})
        return cols

    def fill(self, comp: Comparison | None, base: int) -> None:
        phase = self.phase_combo.currentData()
        colours = [r.colour for r in comp.runs] if comp else []
        if comp is None or phase is None:
            self.summary_model.set_table(None)
            self.efficiency_model.set_table(None)
            return
        try:
            s = comp.summary_table(phase, base)
            e = comp.efficiency_table(phase, base)
        except CompareError as exc:
            self.summary_model.set_table(None)
            self.efficiency_model.set_table(None)
            self.notes_label.setText(str(exc))
            return
        cols = self._run_columns(comp, base)
        self.summary_model.set_table(s, cols, colours)
        self.efficiency_model.set_table(e if e.rows else None, cols, colours)
        for view in (self.summary_view, self.efficiency_view):
            fit_rows(view)
        # the ratio colours are the chips above the tables, not a sentence
        notes = [n for n in dict.fromkeys(s.notes + e.notes[:1]) if not n.startswith("ratios:")]
        self.notes_label.setText("\n".join(n[0].upper() + n[1:] for n in notes))
        self.fill_matrix(comp, base)

    def fill_matrix(self, comp: Comparison | None, base: int) -> None:
        self.suite_matrix.set_comparison(comp, base)
        self.suite_matrix.show_in(self, self.indexOf(self._matrix_page) + 1)
        key, by = self.matrix_metric.currentData(), self.matrix_by.currentData()
        if comp is None or key is None or by is None:
            self.matrix_model.set_table(None)
            return
        try:
            m = comp.matrix(key, base, by=by)
        except CompareError as exc:
            self.matrix_model.set_table(None)
            self.notes_label.setText(str(exc))
            return
        cols = {1 + i: i for i in range(len(comp.runs))} if by == "phase" else {}
        self.matrix_model.set_table(m, cols, [r.colour for r in comp.runs])

    def all_tables(self, comp: Comparison, base: int) -> list[Table]:
        """What the exports write: a suite's matrices (a slide per group); else every common
        phase's tables, the chosen phase's when it is not one of them, and the matrix shown."""
        if self.suite_matrix.applies():
            return self.suite_matrix.tables()
        tables = comp.tables(base)
        phase = self.phase_combo.currentData()
        if phase and phase not in (comp.common_phases() if len(comp) > 1 else []):
            tables += [t for t in (comp.summary_table(phase, base),
                                   comp.efficiency_table(phase, base)) if t.rows]
        m = self.matrix_model.table()
        if m is not None and m.rows:
            tables.append(m)
        return tables

    def _on_table_context_menu(self, view: QTableView, pos: QPoint) -> None:
        t = view.model().table()
        if t is None:
            return
        menu = QMenu(self)
        clip = QGuiApplication.clipboard()
        menu.addAction("Copy as Markdown", lambda: clip.setText(table_markdown(t)))
        menu.addAction("Copy as HTML", lambda: clip.setText(table_html(t)))
        menu.addAction("Copy as CSV", lambda: clip.setText(table_csv(t)))
        menu.addSeparator()
        for key in ("export_tables_md", "export_tables_html", "export_tables_csv"):
            menu.addAction(self.actions[key])
        menu.popup(view.viewport().mapToGlobal(pos))
