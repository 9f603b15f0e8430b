"""Opening a saved run whose session file has one damaged event row (issue 15, item 6): the
run opens with every other event, the header names the skipped row in a sentence, and the
file's other run opens as before; no error box, no traceback."""
import sqlite3

from PySide6.QtCore import Qt

from app.store.session import SessionFile
from tests.recorded import load


def _file_with_two_runs(path):
    ids = []
    with SessionFile(path, readonly=False) as s:
        for name in ("point-query-pg", "tpcc-pg"):
            evs = load(name)
            hello = evs[0]
            s.add_run(hello["run_id"], hello["workload"], "recorded", "local", hello["params"])
            s.append_events(hello["run_id"], evs)
            s.finish_run(hello["run_id"], evs[-1].get("status", "?"))
            ids.append(hello["run_id"])
    return ids


def _open(w, qtbot, run_id):
    top = w.session_tree.topLevelItem(0)
    item = next(top.child(i) for i in range(top.childCount())
                if run_id in top.child(i).toolTip(0))
    with qtbot.waitSignal(w.session_loaded, timeout=20_000):
        qtbot.mouseClick(w.session_tree.viewport(), Qt.MouseButton.LeftButton,
                         pos=w.session_tree.visualItemRect(item).center())
    return w.session_view


def test_a_damaged_row_is_named_and_the_run_opens(make_window, qtbot, tmp_path):
    (tmp_path / "sessions").mkdir(exist_ok=True)
    path = tmp_path / "sessions" / "two.versus"
    ra, rb = _file_with_two_runs(path)
    db = sqlite3.connect(path)
    seq = db.execute("SELECT seq FROM events WHERE run_id = ? AND kind = 'phase' ORDER BY seq "
                     "LIMIT 1 OFFSET 2", (ra,)).fetchone()[0]
    db.execute("UPDATE events SET body = '{\"v\":1, broken' WHERE run_id = ? AND seq = ?",
               (ra, seq))
    sample = db.execute("SELECT seq FROM events WHERE run_id = ? AND kind = 'sample' "
                        "ORDER BY seq LIMIT 1 OFFSET 2", (ra,)).fetchone()[0]
    db.execute("UPDATE events SET body = json_set(body, '$.ops', 'many') WHERE run_id = ? "
               "AND seq = ?", (ra, sample))
    db.commit()
    db.close()
    errors = []
    w = make_window()
    w.show_error = lambda *a: errors.append(a)
    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() == 1
                    and w.session_tree.topLevelItem(0).childCount() == 2, timeout=10_000)
    view = _open(w, qtbot, ra)
    header = view.header.text()
    assert f"run {ra}, event {seq} (phase) was skipped: its body is not JSON" in header
    assert f"event {sample} (sample) was skipped: its &#x27;ops&#x27; is not an object" in header
    names = [view.table.item(r, 0).text() for r in range(view.table.rowCount())]
    assert "measure" in names
    assert view.loaded.events_count == len(load("point-query-pg")) - 2
    view = _open(w, qtbot, rb)
    assert "skipped" not in view.header.text() and view.table.rowCount() > 0
    assert not errors


def test_compare_names_the_damaged_rows_once_and_shows_both_runs(qtbot, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    from app.model.runset import RunRef
    from app.ui.charts.dashboard import configure_pyqtgraph
    from app.ui.compare.view import CompareWidget
    path = tmp_path / "two.versus"
    ra, rb = _file_with_two_runs(path)
    db = sqlite3.connect(path)
    seq = db.execute("SELECT seq FROM events WHERE run_id = ? AND kind = 'host' ORDER BY seq "
                     "LIMIT 1 OFFSET 3", (ra,)).fetchone()[0]
    db.execute("UPDATE events SET body = json_set(body, '$.cpu', 'busy') WHERE run_id = ? "
               "AND seq = ?", (ra, seq))
    db.execute("DELETE FROM derived WHERE run_id = ?", (ra,))
    db.execute("DELETE FROM derived_state WHERE run_id = ?", (ra,))
    db.commit()
    db.close()
    configure_pyqtgraph()
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    with qtbot.waitSignal(v.comparison_loaded, timeout=20_000):
        v.set_runs([RunRef(str(path), ra), RunRef(str(path), rb)])
    assert len(v.comp.runs) == 2
    boxes = [b for b in v.findChildren(QMessageBox) if b.objectName() == "compare_damaged_box"]
    assert len(boxes) == 1
    assert f"run {ra}, event {seq} (host) was skipped: its 'cpu' is not an object" \
        in boxes[0].text()
    boxes[0].accept()
    with qtbot.waitSignal(v.comparison_loaded, timeout=20_000):     # loaded again: told once
        v.set_runs([RunRef(str(path), ra), RunRef(str(path), rb)])
    assert not [b for b in v.findChildren(QMessageBox)
                if b.objectName() == "compare_damaged_box" and b.isVisible()]
    v.tasks.wait(10_000)
