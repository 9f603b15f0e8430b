"""A real local run driven from the run panel with mouse and keyboard, then reopened.

Runs the agent against the embedded PostgreSQL on this computer: no fakes.
"""
import pytest
from PySide6.QtCore import Qt

from .test_main_window import open_boxes, points

pytestmark = pytest.mark.timeout(240)


def type_into(qtbot, spin, text):
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)


def test_live_run_from_the_run_panel_then_reopen_the_session(make_window, qtbot):
    w = make_window()
    assert w.selected_host() == "local" and w.selected_target() == "embedded-postgres"
    type_into(qtbot, w.form.widget("duration"), "60")
    type_into(qtbot, w.form.widget("table-size"), "1000")
    assert w.form.values()["duration"] == 60 and w.form.values()["table-size"] == 1000

    qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    assert w.is_running() and w.stop_button.isEnabled()
    # Live samples reach the charts (starting the embedded server can take a while).
    qtbot.waitUntil(lambda: len(points(w.dashboard.curves["throughput"])[0]) >= 3,
                    timeout=150_000)
    assert float(points(w.dashboard.curves["throughput"])[1].max()) > 0
    qtbot.waitUntil(lambda: len(points(w.dashboard.curves["cpu.user"])[0]) >= 1,
                    timeout=10_000)
    assert w.phase_label.text().startswith("Measure")
    assert "left" in w.time_label.text()

    with qtbot.waitSignal(w.run_ended, timeout=60_000) as ended:
        qtbot.mouseClick(w.stop_button, Qt.MouseButton.LeftButton)
    outcome = ended.args[0]
    assert getattr(outcome, "status", None) == "stopped", outcome
    assert not open_boxes(w, "error_box")
    assert "Run ended: stopped" in w.log_view.toPlainText()
    assert w.run_button.isEnabled()
    live_points = len(points(w.dashboard.curves["throughput"])[0])

    # The session written during the run appears in the Sessions list; open it.
    def run_item():
        for i in range(w.session_tree.topLevelItemCount()):
            top = w.session_tree.topLevelItem(i)
            for j in range(top.childCount()):
                data = top.child(j).data(0, Qt.ItemDataRole.UserRole)
                if data and data[2] == outcome.run_id and "[stopped]" in top.child(j).text(0):
                    return top.child(j)
        return None

    qtbot.waitUntil(lambda: run_item() is not None, timeout=15_000)
    item = run_item()
    w.session_tree.scrollToItem(item)
    with qtbot.waitSignal(w.session_loaded, timeout=30_000):
        qtbot.mouseClick(w.session_tree.viewport(), Qt.MouseButton.LeftButton,
                         pos=w.session_tree.visualItemRect(item).center())
    view = w.session_view
    assert w.tabs.currentWidget() is view
    assert len(points(view.dashboard.curves["throughput"])[0]) == live_points
    assert len(points(view.dashboard.curves["latency.p95"])[0]) >= 3
    table = view.table
    phases = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    assert "measure" in phases
    row = phases["measure"]
    assert "QPS" in table.item(row, 3).text()
    assert table.item(row, 5).text() not in ("", "–")
