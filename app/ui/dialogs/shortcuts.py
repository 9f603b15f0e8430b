"""Help ▸ Keyboard Shortcuts: every declared shortcut and chart gesture in one table."""
from __future__ import annotations

from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from app.ui.common.actions import shortcut_rows


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.setObjectName("shortcuts_dialog")
        rows = shortcut_rows()
        self.table = QTableWidget(len(rows), 3)
        self.table.setObjectName("shortcuts_table")
        self.table.setHorizontalHeaderLabels(["Where", "What", "Keys or mouse"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setStretchLastSection(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(780, min(760, 90 + 30 * len(rows)))
