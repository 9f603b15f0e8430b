"""The suite matrix page of the Compare view: runs as columns, a suite's tests as rows grouped
as the workload declares them, relative QPS beside a second matrix of any per-operation cost,
and one click from a cell to the two runs' charts for that test.

Reads ``app.analysis.matrix``; knows no workload by name (a workload whose phases declare a
group gets this page).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel,
                               QSplitter, QTableView, QVBoxLayout, QWidget)

from app.analysis.compare import CompareError, Comparison, fmt_value
from app.analysis.matrix import SuiteMatrix, has_groups, metric_title, suite_matrix
from app.analysis.metrics import METRICS
from app.model.runset import CLASS_COLOURS, CLASS_TEXT, EFFICIENCY_KEYS, RunRef, Table

from app.ui.common.table_view import table_view

PHASE_ROLE = Qt.ItemDataRole.UserRole + 1
RUN_ROLE = Qt.ItemDataRole.UserRole + 2
CLASS_ROLE = Qt.ItemDataRole.UserRole + 3
_GROUP_BG = "#EEF2F6"


class SuiteMatrixModel(QAbstractTableModel):
    """Group title rows, then one row per test: its ratio per run and the base's value."""

    def __init__(self, parent: QObject | None = None,
                 icon: Callable[[str], Any] | None = None) -> None:
        super().__init__(parent)
        self._icon = icon                  # colour -> the run's swatch in the header
        self.matrix: SuiteMatrix | None = None
        self._lines: list[tuple[str, Any]] = []        # ("group", title) | ("row", MatrixRow)
        self._colours: list[str] = []

    def set_matrix(self, m: SuiteMatrix | None, colours: Sequence[str] = ()) -> None:
        self.beginResetModel()
        self.matrix, self._colours = m, list(colours)
        self._lines = []
        for group, rows in (m.groups() if m else []):
            self._lines.append(("group", group or "Tests"))
            self._lines += [("row", r) for r in rows]
        self.endResetModel()

    def group_rows(self) -> list[int]:
        return [i for i, (k, _) in enumerate(self._lines) if k == "group"]

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802 (Qt)
        return 0 if parent.isValid() else len(self._lines)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802
        return 0 if parent.isValid() or self.matrix is None else len(self.matrix.labels) + 2

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.matrix is None:
            return None
        kind, item = self._lines[index.row()]
        c, m = index.column(), self.matrix
        if kind == "group":
            if role == Qt.ItemDataRole.DisplayRole and c == 0:
                return item
            if role == Qt.ItemDataRole.FontRole:
                f = QFont()
                f.setBold(True)
                return f
            if role == Qt.ItemDataRole.BackgroundRole:
                return QColor(_GROUP_BG)
            return None
        run = c - 1 if 1 <= c <= len(m.labels) else None
        if role == PHASE_ROLE:
            return item.phase
        if role == RUN_ROLE:
            return run
        if role == Qt.ItemDataRole.DisplayRole:
            if c == 0:
                return item.phase
            if run is not None:
                return item.ratios[run].text()
            return fmt_value(item.values[m.base])
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int((Qt.AlignmentFlag.AlignLeft if c == 0 else Qt.AlignmentFlag.AlignRight)
                       | Qt.AlignmentFlag.AlignVCenter)
        cls = item.ratios[run].cls if run is not None else None
        if role == CLASS_ROLE:
            return cls
        if role == Qt.ItemDataRole.BackgroundRole and cls:
            return QColor(CLASS_COLOURS[cls])
        if role == Qt.ItemDataRole.ForegroundRole and cls:
            return QColor(CLASS_TEXT[cls])
        if role == Qt.ItemDataRole.ToolTipRole and run is not None:
            unit = f" {m.unit}" if m.unit else ""
            v, b = item.values[run], item.values[m.base]
            return (f"{m.labels[run]}: {fmt_value(v)}{unit}; base {m.labels[m.base]}: "
                    f"{fmt_value(b)}{unit} (ratio {item.ratios[run].text()})\n"
                    f"Click: the two runs' charts aligned on {item.phase}")
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,   # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.matrix is None or orientation != Qt.Orientation.Horizontal:
            return None
        m = self.matrix
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return m.header()[section]          # the runs by their labels, not "1", "2"
        if role == Qt.ItemDataRole.DecorationRole and 1 <= section <= len(m.labels) \
                and section - 1 < len(self._colours) and self._icon is not None:
            return self._icon(self._colours[section - 1])
        return None


class SuiteMatrixWidget(QWidget):
    """Relative QPS and a chosen cost per operation, tests grouped; a click on a run's cell
    asks for the two runs' charts in that test (``test_chosen``)."""

    test_chosen = Signal(str, int)              # phase, run index

    COST_KEYS = EFFICIENCY_KEYS

    def __init__(self, parent: QWidget | None = None,
                 icon: Callable[[str], Any] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("suite_matrix_page")
        self.comp: Comparison | None = None
        self.base = 0
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("suite_matrix_title")
        row.addWidget(self.title, 1)
        row.addWidget(QLabel("Second matrix"))
        self.cost_combo = QComboBox()
        self.cost_combo.setObjectName("suite_cost_metric")
        for k in self.COST_KEYS:
            self.cost_combo.addItem(METRICS[k].title, k)
        row.addWidget(self.cost_combo)
        lay.addLayout(row)
        self.qps_model = SuiteMatrixModel(self, icon)
        self.cost_model = SuiteMatrixModel(self, icon)
        self.qps_view = table_view("suite_qps_table", self.qps_model, cells=True, min_section=44)
        self.cost_view = table_view("suite_cost_table", self.cost_model, cells=True,
                                    min_section=44)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.qps_view)
        split.addWidget(self.cost_view)
        lay.addWidget(split, 1)
        self.hint = QLabel(
            "Each cell is the run's value over the base run's for that test: green ≥ 1.05 "
            "better, red ≤ 0.95 worse, grey between (for costs, lower is better). QPS: "
            "statements counted by the clients over the test's phase. Costs per operation: "
            "host totals from /proc on the benchmark host, sampled every second, over the "
            "phase, divided by its statements. Click a cell for the two runs' charts in that "
            "test.")
        self.hint.setObjectName("suite_matrix_hint")
        self.hint.setProperty("role", "hint")
        self.hint.setWordWrap(True)
        lay.addWidget(self.hint)
        self.cost_combo.currentIndexChanged.connect(lambda _i: self._fill_cost())
        for v in (self.qps_view, self.cost_view):
            v.clicked.connect(self._on_cell_clicked)

    # -------------------------------------------------------------------- state
    def applies(self) -> bool:
        return self.comp is not None and has_groups(self.comp)

    def set_comparison(self, comp: Comparison | None, base: int) -> None:
        self.comp, self.base = comp, base
        if not self.applies():
            self.qps_model.set_matrix(None)
            self.cost_model.set_matrix(None)
            self.title.setText("These runs are not of a suite whose tests its workload groups "
                               "(the micro workload is one).")
            return
        try:
            m = suite_matrix(comp, "throughput", base)
        except CompareError as exc:
            self.title.setText(str(exc))
            return
        self._show(self.qps_view, self.qps_model, m)
        self.title.setText(f"{metric_title(comp, 'throughput')} relative to run {base + 1} "
                           f"({comp.runs[base].label}), {len(m.rows)} tests")
        self._fill_cost()

    def show_in(self, tabs, index: int, title: str = "Suite matrix") -> None:
        """Be a tab of `tabs` at `index` while the runs are of a suite, no tab otherwise."""
        at = tabs.indexOf(self)
        if self.applies() and at < 0:
            tabs.insertTab(index, self, title)
        elif not self.applies() and at >= 0:
            tabs.removeTab(at)
        if tabs.indexOf(self) < 0:
            self.hide()                 # a removed page stays a child of the tabs: keep it out

    def cost_key(self) -> str:
        return self.cost_combo.currentData() or self.COST_KEYS[0]

    def set_cost(self, key: str) -> None:
        self.cost_combo.setCurrentIndex(max(0, self.cost_combo.findData(key)))

    def _fill_cost(self) -> None:
        if not self.applies():
            return
        try:
            m = suite_matrix(self.comp, self.cost_key(), self.base)
        except CompareError as exc:
            self.title.setText(str(exc))
            return
        self._show(self.cost_view, self.cost_model, m)

    def _show(self, view: QTableView, model: SuiteMatrixModel, m: SuiteMatrix) -> None:
        model.set_matrix(m, [r.colour for r in self.comp.runs])
        view.clearSpans()
        for r in model.group_rows():
            view.setSpan(r, 0, 1, model.columnCount())

    def tables(self) -> list[Table]:
        """What exports carry: both matrices, one table per group each."""
        out = []
        for model in (self.qps_model, self.cost_model):
            if model.matrix is not None:
                out += model.matrix.tables()
        return out

    # -------------------------------------------------------------------- clicks
    def _on_cell_clicked(self, index: QModelIndex) -> None:
        phase, run = index.data(PHASE_ROLE), index.data(RUN_ROLE)
        if phase and run is not None:
            self.test_chosen.emit(phase, run)


class StepChartsWindow(QWidget):
    """The charts of two runs (the base and another) aligned on the start of one test, in a
    Compare view of their own (``compare``, a CompareWidget)."""

    def __init__(self, compare, refs: Sequence[RunRef], phase: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("test_charts_window")
        self.phase = phase
        self.setWindowTitle(f"{phase}: run charts aligned on the test's start")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.compare = compare
        lay.addWidget(self.compare)
        self.compare.comparison_loaded.connect(self._on_compare_loaded)
        self.resize(1200, 800)
        self.compare.set_runs(list(refs))

    def _on_compare_loaded(self, comp: Comparison) -> None:
        self.compare.comparison_loaded.disconnect(self._on_compare_loaded)
        self.compare.set_align(self.phase)
        self.compare.set_phase(self.phase)
        spans = [r.phase(self.phase) for r in comp.runs]
        ends = [s.t1 - s.t0 for s in spans if s is not None and s.t1 is not None]
        if ends and self.compare.plots:
            self.compare.plots[0][2].setXRange(-1.0, max(ends) + 1.0, padding=0.01)
