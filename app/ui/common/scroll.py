"""A view whose content scrolls when the window is smaller than the content needs, instead
of raising the window's minimum size (a 1366x768 laptop screen holds every view)."""
from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QFrame, QScrollArea, QVBoxLayout, QWidget


def scrolled_layout(view: QWidget, layout_class: type[QBoxLayout]) -> QBoxLayout:
    """Give ``view`` a scroll area filling it and return a ``layout_class`` layout on the
    scroll area's content, for the view to fill as it would fill its own."""
    outer = QVBoxLayout(view)
    outer.setContentsMargins(0, 0, 0, 0)
    area = QScrollArea(view)
    area.setObjectName(f"{view.objectName() or type(view).__name__}_scroll")
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    content = QWidget()
    area.setWidget(content)
    outer.addWidget(area)
    return layout_class(content)
