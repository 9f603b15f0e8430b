"""A saved run the session does not have to its end (the app was killed mid-run): the Saved
run view offers to bring in the rest, and does, exactly once. Real parts: the CLI and the
agent as processes, the machine's PostgreSQL."""
import pytest
from PySide6.QtCore import Qt

from app.store.session import SessionFile
from tests.faults import (CLIProcess, assert_nothing_left, assert_stored_exactly_once,
                          pids_matching, wait_for_seq, wait_until)

pytestmark = pytest.mark.faults


def _killed_run(pg_db, out):
    cli = CLIProcess("run", "--target", pg_db, "--workload", "point-query", "--duration", "3",
                     "--set", "table-size=2000", "--out", str(out))
    rid = cli.run_id()
    wait_for_seq(rid, 5)
    cli.proc.kill()
    cli.finish()
    wait_until(lambda: not pids_matching(rf"workloads\.agent run --dir \S*{rid}"), 30, 0.2,
               "the agent finishing on the host")
    return rid


def test_open_run_offers_to_bring_in_the_rest(make_window, qtbot, tmp_path, pg_db):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    out = sessions / "killed.versus"
    rid = _killed_run(pg_db, out)
    with SessionFile(out) as s:
        stored = s.run(rid).events
    w = make_window()
    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() == 1
                    and w.session_tree.topLevelItem(0).childCount() == 1, timeout=10_000)
    item = w.session_tree.topLevelItem(0).child(0)
    assert "[running]" in item.text(0)
    with qtbot.waitSignal(w.session_loaded, timeout=10_000):
        qtbot.mouseClick(w.session_tree.viewport(), Qt.MouseButton.LeftButton,
                         pos=w.session_tree.visualItemRect(item).center())
    view = w.session_view
    assert view.attach_bar.isVisible() and view.attach_button.isVisible()
    assert f"{stored:,} event" in view.attach_label.text()
    w.grab().save(str(tmp_path / "attach-offer.png"))
    with qtbot.waitSignal(w.session_loaded, timeout=60_000):
        qtbot.mouseClick(view.attach_button, Qt.MouseButton.LeftButton)
    assert not view.attach_bar.isVisible()
    assert " ok" in view.header.text()
    evs = assert_stored_exactly_once(out, rid)
    assert evs[-1]["kind"] == "end"
    qtbot.waitUntil(lambda: "[ok]" in w.session_tree.topLevelItem(0).child(0).text(0),
                    timeout=10_000)
    qtbot.wait(100)                                  # let the layout close the bar's gap
    w.grab().save(str(tmp_path / "attach-done.png"))
    assert_nothing_left(rid)
