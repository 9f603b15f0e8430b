"""The run panel's parameter form fits its panel at the default window size (issue 14,
item 3: the TPROC-C form clipped its spin boxes, and a Tab scrolled it sideways so labels
read "ehouses" for the rest of the session)."""
import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QLabel

from workloads.registry import WORKLOADS


def fully_inside(widget, viewport) -> bool:
    r = QRect(widget.mapTo(viewport, widget.rect().topLeft()), widget.size())
    return viewport.rect().left() <= r.left() and r.right() <= viewport.rect().right()


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_every_field_and_label_is_fully_visible_at_the_default_size(make_window, qtbot,
                                                                    workload):
    w = make_window()
    w.resize(1400, 900)                      # the size a first start gets
    w.workload_combo.setCurrentIndex(w.workload_combo.findData(workload))
    qtbot.wait(50)
    scroll = w.form_scroll
    viewport = scroll.viewport()
    fields = [w.form.widget(p.name) for p in w.form.spec.params]
    labels = [x for x in w.form.findChildren(QLabel) if x.isVisibleTo(w.form)]
    assert fields and labels

    def check():
        assert scroll.horizontalScrollBar().value() == 0
        for x in fields + labels:
            assert fully_inside(x, viewport), (workload, x.objectName() or x.text())
            # no label is cut short: it has the room its text needs (or wraps)
            if isinstance(x, QLabel) and not x.wordWrap():
                assert x.width() >= x.sizeHint().width(), x.text()
    check()
    # Tab through every field: nothing scrolls sideways
    fields[0].setFocus()
    for _ in range(len(fields) + 2):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        check()
