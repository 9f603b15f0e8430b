"""The Sessions list: saved runs by file, several picked at once (Ctrl/Shift+click) and dragged
to the Compare tab, or session files dropped from a file manager.

    tree = SessionTreeWidget()
    refs = tree.selected_refs()            # [RunRef(file, run_id)] in the order shown
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QWidget

from app.model.runset import RunRef

MIME_RUNS = "application/x-versus-runs"
# an item's data: ("run", path, id) or ("file", path)
ROLE_DATA = Qt.ItemDataRole.UserRole
SESSION_SUFFIXES = (".versus", ".sqlite", ".db")


def ref_key(ref: RunRef) -> tuple[str, str | None]:
    """One run however its file is named (relative, absolute, through a link)."""
    return (str(Path(ref.file).resolve()), ref.run_id)


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
            if u.isLocalFile() and Path(u.toLocalFile()).suffix in SESSION_SUFFIXES]


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

    EMPTY_HINT = ("No saved runs yet.\nPress Run (Ctrl+R) to make one, or open a session "
                  "file (Ctrl+O).")

    def paintEvent(self, ev) -> None:                        # noqa: N802 (Qt name)
        super().paintEvent(ev)
        if self.topLevelItemCount() == 0:
            # an empty list says what to do instead of looking broken
            p = QPainter(self.viewport())
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            p.drawText(self.viewport().rect().adjusted(8, 8, -8, -8),
                       int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
                           | Qt.TextFlag.TextWordWrap), self.EMPTY_HINT)
            p.end()

    def mimeTypes(self) -> list[str]:
        return [MIME_RUNS, "text/uri-list"]

    def mimeData(self, items) -> QMimeData:
        return runs_mime(self.refs_of(list(items)))
