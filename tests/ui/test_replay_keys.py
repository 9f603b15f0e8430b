"""Replay keys where a presenter expects them (issue 20, item 8): Space, "," and "." act
whenever Compare is the visible view, wherever the focus is (the Sessions tree, the usual
way in), a text field keeps its own keys, and another view keeps them too."""
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from app.model.runset import RunRef
from tests.recorded import build_run


def test_space_comma_and_period_work_from_the_sessions_tree(make_window, qtbot, tmp_path):
    runs = [build_run(tmp_path / f"{n}.versus", n, rate=900, p95=1, idle=50, seconds=20)
            for n in ("ra", "rb")]
    w = make_window()
    view = w.show_compare([RunRef(str(p)) for p in runs])
    qtbot.waitUntil(lambda: view.comp is not None and len(view.comp.runs) == 2,
                    timeout=20_000)
    clock = view.clock
    clock.set_position(5.0)
    tree = w.session_tree
    tree.setFocus()
    qtbot.waitUntil(tree.hasFocus)
    qtbot.keyClick(tree, Qt.Key.Key_Period)
    assert clock.position > 5.0
    after_step = clock.position
    qtbot.keyClick(tree, Qt.Key.Key_Comma)
    assert clock.position < after_step
    qtbot.keyClick(tree, Qt.Key.Key_Space)
    assert clock.playing
    qtbot.keyClick(tree, Qt.Key.Key_Space)
    assert not clock.playing
    # a text field keeps its keys
    view.tables.setCurrentWidget(view.tables.settings_page)
    edit = view.findChild(QLineEdit, "settings_filter")
    assert edit is not None and edit.isVisible()
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus)
    at = clock.position
    qtbot.keyClicks(edit, ". ,")
    assert edit.text().endswith(". ,"), edit.text()
    assert clock.position == at and not clock.playing
    # another view: the keys are not Compare's
    w.tabs.setCurrentWidget(w.session_view)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Period)
    assert clock.position == at

