"""Names and strings from shared session files are shown as text, never as markup."""
from app.store.session import SessionFile
from app.ui.saved.session_view import SessionViewWidget, load_run

HOSTILE = "<img src=x onerror=alert(1)><b>bold</b>\"'; DROP TABLE runs;--"


def test_saved_run_header_escapes_hostile_names(qtbot, tmp_path):
    path = tmp_path / "hostile.versus"
    with SessionFile(path, readonly=False) as s:
        s.add_run("r1", "point-query", HOSTILE, HOSTILE, {"clients": HOSTILE})
        s.append_events("r1", [{"v": 1, "seq": 1, "t": 0.0, "kind": "phase", "name": "measure",
                                "state": "start"},
                               {"v": 1, "seq": 2, "t": 1.0, "kind": "end", "status": "ok",
                                "reason": ""}])
    view = SessionViewWidget()
    qtbot.addWidget(view)
    view.show_run(load_run(path, "r1"))
    text = view.header.text()
    assert "&lt;img src=x" in text and "<img" not in text
    assert "<b>bold</b>" not in text
    # the file itself is intact: the hostile string is data, not SQL
    with SessionFile(path) as s:
        assert s.run("r1").target == HOSTILE
