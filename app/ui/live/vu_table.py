"""The virtual-user table: state, home (what the workload calls it), transactions and errors
of each user.

``VirtualUserTableModel`` reads ``SeriesStore.virtual_users()`` (a small snapshot the store
replaces with every sample) when ``refresh()`` is called from the window's coalescing timer;
it never holds more than the current rows.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.model.series import SeriesStore, VirtualUser
from workloads.registry import WORKLOADS

COLUMNS = ("VU", "State", "Home", "Transactions", "Errors")
TIPS = ("Virtual user number",
        "running, ended (its process finished), waiting (its phase ended, the next one "
        "goes on) or starting (no sample yet)",
        "Where this user's operations start from",
        "Transactions completed since the current phase started",
        "Failed transactions since the current phase started")
STATE_COLOURS = {"ended": "#6a737d", "waiting": "#6a737d", "starting": "#9a6700"}
ERROR_COLOUR = "#b00020"
NUMERIC = (0, 3, 4)


class VirtualUserTableModel(QAbstractTableModel):
    """Rows of ``VirtualUser``; ``refresh()`` copies the store's snapshot if it changed."""

    def __init__(self, store: SeriesStore, parent: Any = None) -> None:
        super().__init__(parent)
        self.store = store
        self._rows: list[VirtualUser] = []
        self._version = -1

    def set_store(self, store: SeriesStore) -> None:
        self.store = store
        self._version = -1
        self.refresh()

    def refresh(self) -> bool:
        """Re-read the store if it moved; return whether the rows changed."""
        version = self.store.version
        if version == self._version:
            return False
        self._version = version
        rows = self.store.virtual_users()
        if rows == self._rows:
            return False
        if len(rows) != len(self._rows):
            self.beginResetModel()
            self._rows = rows
            self.endResetModel()
        else:
            changed = [i for i, (a, b) in enumerate(zip(rows, self._rows)) if a != b]
            self._rows = rows
            self.dataChanged.emit(self.index(changed[0], 0),
                                  self.index(changed[-1], len(COLUMNS) - 1))
        return True

    def phase(self) -> str | None:
        return self._rows[0].phase if self._rows else None

    def has_homes(self) -> bool:
        return any(r.home for r in self._rows)

    # --- QAbstractTableModel ---------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        home = self._home()
        if role == Qt.ItemDataRole.DisplayRole:
            return home[0] if section == 2 else COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return home[1] if section == 2 else TIPS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section in NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _home(self) -> tuple[str, str]:
        spec = WORKLOADS.get(self.store.state().workload or "")
        return spec.vu_home if spec else (COLUMNS[2], TIPS[2])

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r, col = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(r.vu), r.state, r.home or "–", _count(r.transactions),
                    _count(r.errors))[col]
        if role == Qt.ItemDataRole.ToolTipRole and r.phase:
            return f"Virtual user {r.vu}, {r.state}, in the {r.phase} phase " \
                   f"(counts since the phase started)"
        if role == Qt.ItemDataRole.UserRole:          # raw values, for tests and sorting
            return (r.vu, r.state, r.home, r.transactions, r.errors)[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == 1 and r.state in STATE_COLOURS:
                return QColor(STATE_COLOURS[r.state])
            if col == 4 and r.errors:
                return QColor(ERROR_COLOUR)
        return None


def _count(n: int | None) -> str:
    return "–" if n is None else f"{n:,}"


class VirtualUserTableView(QTableView):
    """A compact read-only view of a ``VirtualUserTableModel``."""

    def __init__(self, model: VirtualUserTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(
            self.fontMetrics().height() + 6)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        head = self.horizontalHeader()
        # Every column as wide as its header and values, never cut.
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setStretchLastSection(False)
        head.setHighlightSections(False)
        model.modelReset.connect(self._on_model_reset)

    def _on_model_reset(self) -> None:
        # Workloads whose users have no home do not get an empty column.
        model = self.model()
        self.setColumnHidden(2, model.rowCount() > 0 and not model.has_homes())

    def minimumSizeHint(self) -> QSize:                      # noqa: N802 (Qt name)
        """As wide as its columns (a splitter then never cuts the Errors column off at
        1366 px), as high as the header and a row."""
        hint = super().minimumSizeHint()
        width = (self.horizontalHeader().length() + 2 * self.frameWidth()
                 + self.verticalScrollBar().sizeHint().width())
        return QSize(max(hint.width(), width), hint.height())
