"""The Compare view's "Settings" tab: the effective server settings that differ between the
compared runs (each run's `setting` event, see app.analysis.settings_diff), one column per
run in its colour, the server version first.

    page = SettingsPage(tasks)
    page.load(comp)            # reads the runs' setting events off the GUI thread
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QTableView, QVBoxLayout, QWidget)

from app.analysis.settings_diff import (INSTANCE_SETTINGS, SettingDiff, diff_settings,
                                        report_from_events)
from app.store.session import SessionFile

from app.ui.common.tasks import TaskRunner

VERSION_ROW = "server version"
SAME_TEXT = "#57606a"
NO_SETTINGS = "recorded no settings (made before Versus recorded them)"


@dataclass
class RunColumn:
    label: str
    colour: str
    version: str | None
    has_settings: bool


@dataclass
class SettingsResult:
    runs: list[RunColumn]
    diffs: list[SettingDiff]          # values keyed by the run's column index
    compared: int                     # how many settings the runs with a report have
    equal: list[SettingDiff] = field(default_factory=list)   # the same in every report


def read_settings_diff(runs: Sequence[Any]) -> SettingsResult:
    """Blocking: each run's settings report from its session file, and their differences.
    ``runs`` are Comparison runs (RunData: ref, label, colour, server_version)."""
    reports = {}
    for i, r in enumerate(runs):
        with SessionFile(r.ref.file) as s:
            reports[i] = report_from_events(s.events(r.ref.run_id, kinds=["setting"]))
    cols = [RunColumn(str(r.label), str(r.colour), r.server_version, reports[i] is not None)
            for i, r in enumerate(runs)]
    have = [rep for rep in reports.values() if rep is not None]
    compared = len(set().union(*(rep.values for rep in have))) if have else 0
    diffs = diff_settings(reports)
    differ = {d.name for d in diffs}
    equal = []
    if have:
        for name in sorted(set().union(*(rep.values for rep in have)) - differ):
            if name.lower() in INSTANCE_SETTINGS and len(have) > 1:
                continue
            equal.append(SettingDiff(
                name, {i: rep.values.get(name) for i, rep in reports.items() if rep is not None},
                {i: rep.origins.get(name) for i, rep in reports.items() if rep is not None}))
    return SettingsResult(cols, diffs, compared, equal)


def _swatch(colour: str, size: int = 12) -> QIcon:
    pm = QPixmap(size, size)
    pm.fill(QColor(colour))
    return QIcon(pm)


class SettingsDiffTableModel(QAbstractTableModel):
    """Rows: the server version, then each setting that differs; columns: name, one per run."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._result: SettingsResult | None = None
        self._filter = ""
        self.show_equal = False
        # (name, values by run, origins by run, differs)
        self._rows: list[tuple[str, list[str | None], list[str | None], bool]] = []

    def set_result(self, result: SettingsResult | None) -> None:
        self.beginResetModel()
        self._result = result
        self._refilter()
        self.endResetModel()

    def result(self) -> SettingsResult | None:
        return self._result

    def set_filter(self, text: str) -> None:
        self.beginResetModel()
        self._filter = text.strip().lower()
        self._refilter()
        self.endResetModel()

    def set_show_equal(self, on: bool) -> None:
        self.beginResetModel()
        self.show_equal = bool(on)
        self._refilter()
        self.endResetModel()

    def _refilter(self) -> None:
        self._rows = []
        res = self._result
        if res is None:
            return
        n = len(res.runs)
        versions = [c.version for c in res.runs]
        self._rows.append((VERSION_ROW, versions, [None] * n,
                           len({v for v in versions if v}) > 1))
        # a filter finds a setting whether it differs or not (shared_buffers found nothing)
        rows = [(d, True) for d in res.diffs]
        if self.show_equal or self._filter:
            rows += [(d, False) for d in res.equal]
        for d, differs in sorted(rows, key=lambda x: (not x[1], x[0].name)):
            if self._filter and self._filter not in d.name.lower():
                continue
            self._rows.append((d.name, [d.values.get(i) for i in range(n)],
                               [d.origins.get(i) for i in range(n)], differs))

    def row_names(self) -> list[str]:
        return [r[0] for r in self._rows]

    def differs(self, row: int) -> bool:
        return self._rows[row][3]

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802 (Qt)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802
        return 0 if parent.isValid() or self._result is None else 1 + len(self._result.runs)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._result is None:
            return None
        name, values, origins, differs = self._rows[index.row()]
        c = index.column()
        if c == 0:
            if role == Qt.ItemDataRole.DisplayRole:
                return name
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"{name}: " + ("differs between the runs" if differs
                                      else "the same in every run")
            if role == Qt.ItemDataRole.FontRole and differs:
                f = QFont()
                f.setBold(True)
                return f
            if role == Qt.ItemDataRole.ForegroundRole and not differs:
                return QColor(SAME_TEXT)
            return None
        run = self._result.runs[c - 1]
        v = values[c - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            if v is None:
                return "—" if name == VERSION_ROW or run.has_settings else ""
            return v
        if role == Qt.ItemDataRole.ForegroundRole:
            # only a difference wears the runs' colours; equal values stay plain
            return QColor(SAME_TEXT) if v is None or not differs else QColor(run.colour)
        if role == Qt.ItemDataRole.ToolTipRole:
            if not run.has_settings and name != VERSION_ROW:
                return f"this run {NO_SETTINGS}"
            if v is None:
                return "the server has no such setting" if name != VERSION_ROW else None
            return f"{v} (source: {origins[c - 1]})" if origins[c - 1] else v
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,   # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self._result is None or orientation != Qt.Orientation.Horizontal:
            return None
        if section == 0:
            return "setting" if role == Qt.ItemDataRole.DisplayRole else None
        run = self._result.runs[section - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            return str(section)          # by its colour: the legend names the runs
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{section}. {run.label}"
        if role == Qt.ItemDataRole.DecorationRole:
            return _swatch(run.colour)
        return None


class SettingsPage(QWidget):
    """The tab: a filter box, the table and a note (all equal, runs without settings)."""

    loaded = Signal(object)          # SettingsResult
    failed = Signal(str)

    def __init__(self, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self._generation = 0
        self.model = SettingsDiffTableModel(self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Filter"))
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("settings_filter")
        self.filter_edit.setPlaceholderText("setting name contains…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.model.set_filter)
        row.addWidget(self.filter_edit, 1)
        self.equal_box = QCheckBox("Show equal settings")
        self.equal_box.setObjectName("settings_show_equal")
        self.equal_box.setToolTip("List the settings that are the same in every run too "
                                  "(a filter always finds them)")
        self.equal_box.toggled.connect(self.model.set_show_equal)
        row.addWidget(self.equal_box)
        lay.addLayout(row)
        self.view = QTableView()
        self.view.setObjectName("settings_table")
        self.view.setModel(self.model)
        self.view.verticalHeader().setVisible(False)
        # bounded columns that elide (a version string is 120 characters): the full value
        # is in the tooltip
        head = self.view.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        head.setMinimumSectionSize(48)
        head.setStretchLastSection(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.model.modelReset.connect(self._fit_columns)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setWordWrap(False)
        lay.addWidget(self.view, 1)
        self.note = QLabel()
        self.note.setObjectName("settings_note")
        self.note.setProperty("role", "hint")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)

    def _fit_columns(self) -> None:
        n = self.model.columnCount()
        if not n:
            return
        if not self.isVisible():
            return
        width = max(200, self.view.viewport().width())
        self.view.resizeColumnToContents(0)
        self.view.setColumnWidth(0, min(self.view.columnWidth(0), int(width * 0.4)))
        rest = max(80, (width - self.view.columnWidth(0)) // max(1, n - 1))
        for c in range(1, n):
            self.view.resizeColumnToContents(c)
            self.view.setColumnWidth(c, min(self.view.columnWidth(c), rest))

    def resizeEvent(self, ev) -> None:                      # noqa: N802 (Qt name)
        super().resizeEvent(ev)
        self._fit_columns()

    def showEvent(self, ev) -> None:                        # noqa: N802 (Qt name)
        super().showEvent(ev)
        self._fit_columns()          # a hidden tab has no width to fit the columns to

    def load(self, comp: Any) -> None:
        """Read the settings of the comparison's runs in the background."""
        self._generation += 1
        gen = self._generation
        runs = list(comp.runs) if comp is not None else []
        if not runs:
            self.model.set_result(None)
            self.note.setText("")
            return
        self.note.setText("Reading the runs' settings…")
        self.tasks.submit(lambda: read_settings_diff(runs),
                          lambda res: self._on_loaded(gen, res),
                          lambda exc: self._on_failed(gen, exc))

    def _on_loaded(self, gen: int, res: SettingsResult) -> None:
        if gen != self._generation:
            return
        self.model.set_result(res)
        self.note.setText(self.note_text(res))
        self.loaded.emit(res)

    def _on_failed(self, gen: int, exc: BaseException) -> None:
        if gen != self._generation:
            return
        msg = str(exc) or type(exc).__name__
        self.model.set_result(None)
        self.note.setText(f"Could not read the runs' settings: {msg}")
        self.failed.emit(msg)

    @staticmethod
    def note_text(res: SettingsResult) -> str:
        parts = [f"Run {i + 1} ({c.label}): this run {NO_SETTINGS}."
                 for i, c in enumerate(res.runs) if not c.has_settings]
        with_settings = sum(c.has_settings for c in res.runs)
        if with_settings >= 2 and not res.diffs:
            parts.insert(0, f"All {res.compared} recorded settings are equal in every run "
                            "(per-instance ones such as port and data directory left out).")
        elif with_settings >= 2:
            parts.insert(0, f"{len(res.diffs)} of {res.compared} settings differ "
                            "(per-instance ones such as port and data directory left out).")
        elif with_settings < 2 and len(res.runs) >= 2 and not parts:
            parts.append("Fewer than two runs recorded settings: nothing to compare.")
        return " ".join(parts)


__all__ = ["SettingsDiffTableModel", "SettingsPage", "SettingsResult", "read_settings_diff"]
