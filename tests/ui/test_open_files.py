"""Session files handed to `versus` (a file manager's "open with", issue 20 item 6): one file
of one run opens in the Saved run view, several in Compare; the desktop file registers the
session file type; `versus --version` answers."""
from app import __version__
from tests.dbs import versus
from tests.recorded import build_run


def test_one_file_opens_the_saved_run_several_open_compare(make_window, qtbot, tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=900, p95=1, idle=50)
    b = build_run(tmp_path / "b.versus", "rb", rate=1200, p95=1, idle=50)
    w = make_window()
    with qtbot.waitSignal(w.session_loaded, timeout=20_000) as loaded:
        w.open_files([a])
    assert loaded.args == ["ra"] and w.tabs.currentWidget() is w.session_view
    w.open_files([a, b])
    view = w.compare_widget
    assert view is not None
    qtbot.waitUntil(lambda: view.comp is not None and len(view.comp.runs) == 2, timeout=20_000)
    assert w.tabs.currentWidget() is view
    assert [r.ref.run_id for r in view.comp.runs] == ["ra", "rb"]


def test_the_desktop_file_registers_session_files_and_version_answers():
    from pathlib import Path
    res = Path(__file__).resolve().parents[2] / "resources"
    desktop = (res / "versus.desktop").read_text()
    assert "MimeType=application/x-versus-session;" in desktop
    assert "Exec=versus %F" in desktop
    mime = (res / "versus-mime.xml").read_text()
    assert 'type="application/x-versus-session"' in mime and '"*.versus"' in mime
    r = versus("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"versus {__version__}", r.stderr
