"""Host and target dialogs: save to the catalog, test/check in a worker, errors as sentences."""
import socket

from PySide6.QtCore import Qt

from app.ui.dialogs.host import HostDialog
from app.ui.dialogs.target import TargetDialog


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_host_dialog_tests_in_a_worker_and_saves_to_the_catalog(make_window, qtbot):
    w = make_window()
    w.actions["add_host"].trigger()
    dlg = next(d for d in w._dialogs if isinstance(d, HostDialog))
    assert dlg.isVisible()
    qtbot.keyClicks(dlg.name_edit, "bench-1")
    qtbot.keyClicks(dlg.address_edit, "127.0.0.1")
    dlg.port_spin.setValue(closed_port())
    with qtbot.waitSignal(dlg.test_finished, timeout=30_000) as done:
        qtbot.mouseClick(dlg.test_button, Qt.MouseButton.LeftButton)
        assert not dlg.test_button.isEnabled()       # the GUI did not wait for the network
    assert done.args == [False]
    assert "Traceback" not in dlg.test_status.text() and dlg.test_status.text()
    with qtbot.waitSignal(dlg.host_saved, timeout=10_000):
        dlg.buttons.button(dlg.buttons.StandardButton.Save).click()
    assert w.catalog.host("bench-1").address == "127.0.0.1"
    assert w.selected_host() == "bench-1"
    assert "bench-1" in w.host_list.currentItem().text()


def test_target_dialog_checks_before_saving_and_saves_a_failing_one_only_on_request(
        make_window, qtbot):
    w = make_window()
    w.actions["add_target"].trigger()
    dlg = next(d for d in w._dialogs if isinstance(d, TargetDialog))
    qtbot.keyClicks(dlg.name_edit, "pg-missing")
    dlg.engine_combo.setCurrentIndex(dlg.engine_combo.findData("mysql"))
    assert dlg.port_spin.value() == 3306              # follows the engine's usual port
    dlg.port_spin.setValue(closed_port())
    qtbot.keyClicks(dlg.user_edit, "bench")
    with qtbot.waitSignal(dlg.check_finished, timeout=60_000) as done:
        qtbot.mouseClick(dlg.check_button, Qt.MouseButton.LeftButton)
    assert done.args == [False]
    assert dlg.check_status.text() and "Traceback" not in dlg.check_status.text()
    assert w.catalog.target("pg-missing") is None          # Check saves nothing
    # Save checks first: a target that does not answer is not saved …
    with qtbot.waitSignal(dlg.check_finished, timeout=60_000) as done:
        dlg.save_button.click()
    assert done.args == [False] and w.catalog.target("pg-missing") is None
    assert dlg.isVisible() and dlg.save_button.text() == "Save anyway"
    # the dialog grows with its message: no field crushed, no line of it cut (issue 20)
    qtbot.wait(50)
    for edit in (dlg.name_edit, dlg.address_edit, dlg.user_edit, dlg.database_edit):
        assert edit.height() >= edit.sizeHint().height(), edit.objectName()
    for label in (dlg.check_status, dlg.keyring_label):
        if label.text():
            assert label.height() >= label.heightForWidth(label.width()), label.text()
    assert "Nothing was saved" in dlg.check_status.text()
    # … unless the user insists
    with qtbot.waitSignal(dlg.target_saved, timeout=10_000):
        dlg.save_button.click()
    assert w.catalog.target("pg-missing").engine == "mysql"
    qtbot.waitUntil(lambda: w.selected_target() == "pg-missing", timeout=5_000)


def test_target_dialog_saves_a_target_that_answers(make_window, qtbot, pg_db):
    from urllib.parse import urlparse
    u = urlparse(pg_db)
    w = make_window()
    w.actions["add_target"].trigger()
    dlg = next(d for d in w._dialogs if isinstance(d, TargetDialog))
    qtbot.keyClicks(dlg.name_edit, "pg-here")
    dlg.port_spin.setValue(u.port)
    qtbot.keyClicks(dlg.user_edit, u.username)
    qtbot.keyClicks(dlg.database_edit, u.path.lstrip("/"))
    with qtbot.waitSignal(dlg.target_saved, timeout=120_000):
        dlg.save_button.click()
    assert "Connected: PostgreSQL" in dlg.check_status.text()
    assert w.catalog.target("pg-here").port == u.port
