"""File → Import Logs: the logs become runs of a new session in the sessions list; a file
that is not a log is named in one error sentence, and the good ones are imported."""
from PySide6.QtWidgets import QMessageBox

from app.store.session import SessionFile
from tests.workloads.test_tool_logs import FIX, PEER


def test_import_logs_into_a_new_session(make_window, qtbot, tmp_path):
    w = make_window()
    assert w.actions["import_logs"].shortcut().toString() == "Ctrl+I"
    junk = tmp_path / "notes.txt"
    junk.write_text("not a log\n")
    logs = [PEER / "hammerdb-pg15-vu2-w4-storedprocs-r1.log",
            PEER / "hdbtcount-pg15-vu2-w4-storedprocs-r1.log",
            FIX / "sysbench-1.0.20-pg-point_select-interval1.log", junk]
    out = w.import_log_files(logs)
    qtbot.waitUntil(lambda: out.exists() and w.session_tree.topLevelItemCount() >= 1,
                    timeout=20_000)
    qtbot.waitUntil(lambda: any(b.isVisible() for b in w.findChildren(QMessageBox, "error_box")),
                    timeout=10_000)
    box = next(b for b in w.findChildren(QMessageBox, "error_box") if b.isVisible())
    assert f"{junk} line 1: is not a log Versus can import" in box.text()
    with SessionFile(out) as s:
        assert sorted(r.workload for r in s.runs()) == ["hammerdb", "sysbench"]
    top = w.session_tree.topLevelItem(0)
    qtbot.waitUntil(lambda: w.session_tree.topLevelItem(0).childCount() == 2, timeout=10_000)
    assert "51,303" in w.log_view.toPlainText()
    w.grab().save(str(tmp_path / "import.png"))
    import os
    if os.environ.get("VERSUS_SHOT"):
        w.grab().save(os.environ["VERSUS_SHOT"])
    box.close()
    assert top is not None
