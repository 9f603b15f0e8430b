"""One read-only table view for the comparison, suite matrix and CPU tables."""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView


def table_view(name: str, model: QAbstractTableModel, cells: bool = False,
               min_section: int = 48) -> QTableView:
    """Rows are selected whole unless `cells` (a matrix whose cells are clicked one by one)."""
    v = QTableView()
    v.setObjectName(name)
    v.setModel(model)
    v.verticalHeader().setVisible(False)
    v.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    v.horizontalHeader().setMinimumSectionSize(min_section)
    v.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    if cells:
        v.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        v.setMouseTracking(True)
    else:
        v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        v.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    v.setWordWrap(False)
    return v
