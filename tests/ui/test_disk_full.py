"""The disk holding the GUI's sessions fills up mid-run (a real 400 KB tmpfs): the window
says so in a dialog, not only in the log, and tells the user what to do; what was stored
stays, the run goes on on the host. Real parts: the agent as a process, the machine's
PostgreSQL."""
import pytest
from PySide6.QtCore import Qt

from app.store.session import SessionFile
from tests.faults import assert_nothing_left, small_tmpfs

from .test_main_window import open_boxes

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]


@pytest.fixture
def small_sessions(tmp_path):
    with small_tmpfs(tmp_path / "sessions") as mnt:
        yield mnt


def test_a_full_disk_mid_run_is_a_dialog_that_says_what_to_do(make_window, qtbot, tmp_path,
                                                              pg_db, small_sessions):
    from app.remote.runner import resolve_target
    from app.store.catalog import Catalog
    t = resolve_target(pg_db)
    t.name = "pg-here"
    Catalog(tmp_path / "config").save_target(t)
    w = make_window()
    w._select_by_name(w.target_list, "pg-here", "")
    assert w.selected_target() == "pg-here"
    for name, value in (("duration", 12), ("table-size", 2000)):
        w.form.widget(name).setValue(value)
    with qtbot.waitSignal(w.run_ended, timeout=120_000) as ended:
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    outcome = ended.args[0]
    assert outcome.status == "running", outcome
    boxes = open_boxes(w, "error_box")
    assert len(boxes) == 1, [b.text() for b in boxes]
    text = boxes[0].text()
    assert boxes[0].windowTitle() == "The run goes on, but is no longer saved here"
    assert f"The disk holding {outcome.session_path} is full" in text
    assert f"run 'versus attach {outcome.session_path}' to bring in the rest" in text
    assert "Traceback" not in text and "Traceback" not in w.log_view.toPlainText()
    assert w.run_button.isEnabled()
    assert w.phase_label.text() == "Goes on on the host, not saved here"
    w.grab().save(str(tmp_path / "disk-full.png"))
    boxes[0].grab().save(str(tmp_path / "disk-full-box.png"))
    # what was stored before the disk filled is there, in order, and the run's row is open
    with SessionFile(outcome.session_path) as s:
        seqs = [e["seq"] for e in s.events(outcome.run_id)]
        assert s.run(outcome.run_id).status == "running"
    assert seqs and seqs == list(range(1, len(seqs) + 1))
    assert_nothing_left(outcome.run_id, timeout=60)         # the 12 s run ends on the host
