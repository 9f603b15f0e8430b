"""The small things that add up (issue 14, item 10)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QToolButton

from app.model.runset import RunRef
from tests.recorded import build_run


def test_disabled_toolbar_items_look_disabled(make_window):
    w = make_window()
    stop = next(b for b in w.toolbar.findChildren(QToolButton)
                if b.defaultAction() is w.actions["stop"])
    assert not stop.isEnabled()
    pal = stop.palette()
    off = pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    on = pal.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText)
    assert off.lightness() - on.lightness() > 60


def test_about_names_the_version_and_where_things_are(make_window):
    from app import __version__
    w = make_window()
    text = w.about_text()
    assert f"Versus {__version__}" in text and "<a href=\"file://" in text
    assert str(w.sessions_dir) in text


def test_empty_sessions_list_says_what_to_do(make_window, qtbot):
    w = make_window()
    qtbot.waitUntil(lambda: not w.tasks.busy() if hasattr(w.tasks, "busy") else True,
                    timeout=5000)
    tree = w.session_tree
    assert tree.topLevelItemCount() == 0 and "Ctrl+R" in tree.EMPTY_HINT
    img = tree.viewport().grab().toImage()
    dark = sum(1 for x in range(0, img.width(), 2) for y in range(0, min(60, img.height()), 2)
               if img.pixelColor(x, y).lightness() < 200)
    assert dark > 20                         # the hint is drawn


def test_ctrl_e_in_the_settings_filter_exports_the_chart(qtbot, tmp_path):
    from app.ui.compare.view import CompareWidget
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.show()
    v.activateWindow()
    with qtbot.waitSignal(v.comparison_loaded, timeout=15_000):
        v.set_runs([RunRef(str(a))])
    v.table_tabs.setCurrentWidget(v.settings_page)
    edit = v.settings_page.filter_edit
    edit.setFocus()
    fired = []
    v.actions["export_chart"].triggered.connect(lambda *_: fired.append(1))
    qtbot.keyClick(edit, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert fired
    v.tasks.wait(5000)


def test_export_dialog_remembers_folder_format_and_layout(make_window, qtbot, tmp_path):
    from app.ui.compare.export_dialog import ChartExportDialog
    sessions = tmp_path / "sessions"
    sessions.mkdir(exist_ok=True)
    out = tmp_path / "slides"
    out.mkdir()
    a = build_run(sessions / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    w = make_window()
    v = w.show_compare([RunRef(str(a))])
    qtbot.waitUntil(lambda: v.comp is not None, timeout=15_000)
    v.actions["export_chart"].trigger()
    dlg = v.findChild(ChartExportDialog)
    dlg.format_combo.setCurrentIndex(dlg.format_combo.findData("svg"))
    dlg.mode_combo.setCurrentIndex(dlg.mode_combo.findData("side-by-side"))
    dlg.path_edit.setText(str(out / "t.svg"))
    with qtbot.waitSignal(v.export_finished, timeout=20_000):
        dlg.accept()
    qtbot.waitUntil(lambda: v.findChild(ChartExportDialog) is None, timeout=5000)
    v.actions["export_chart"].trigger()
    again = v.findChild(ChartExportDialog)
    assert again.format_combo.currentData() == "svg"
    assert again.mode_combo.currentData() == "side-by-side"
    assert Path(again.path_edit.text()).parent == out
    again.reject()
    w.tasks.wait(5000)


def test_target_dialog_refuses_a_plaintext_keyring(make_window, qtbot, monkeypatch, tmp_path):
    """Issue 15, item 8: a keyrings.alt plain-text file is not offered as the keyring; the
    dialog says why and what to do, and its password field is off (keyrings.alt is installed
    for this test into its own folder when the environment lacks it)."""
    from tests.keyring_backend import keyrings_alt_folder
    folder = keyrings_alt_folder(tmp_path / "alt")
    if folder is not None:
        monkeypatch.syspath_prepend(str(folder))
    import keyring
    from keyrings.alt.file import PlaintextKeyring
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    before = keyring.get_keyring()
    keyring.set_keyring(PlaintextKeyring())
    try:
        from app.ui.dialogs.target import TargetDialog
        w = make_window()
        w.actions["add_target"].trigger()
        dlg = next(d for d in w._dialogs if isinstance(d, TargetDialog))
        qtbot.waitUntil(lambda: bool(dlg.keyring_label.text()), timeout=10_000)
        text = dlg.keyring_label.text()
        assert "not in a system keyring, so Versus stores no password there" in text
        assert "uninstall keyrings.alt" in text and not dlg.password_edit.isEnabled()
        dlg.reject()
    finally:
        keyring.set_keyring(before)
    assert not (tmp_path / "data").exists()


def test_versus_home_keeps_agent_runs_plans_and_embedded_out_of_home(versus_home,
                                                                    monkeypatch):
    from app.remote import embedded
    from app.remote.agentctl import agent_root
    from app.remote.transport import LocalTransport
    root = Path(agent_root(LocalTransport()))
    assert root == versus_home.resolve() / "host"
    from workloads.engine.servers import pgserver
    monkeypatch.setattr(pgserver, "is_root", lambda: False)
    assert embedded.default_base_dir() == versus_home / "data"
    # the agent's managed servers follow the folder the app gives it
    env = {**os.environ, "VERSUS_ROOT": str(root), "PYTHONPATH": str(Path.cwd())}
    code = ("import workloads.engine.servers.managed as m, workloads.engine.servers.pgserver as p; p.is_root = lambda: False; "
            "print(m.default_workroot())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(root / "managed")


@pytest.mark.pg
def test_a_local_run_under_versus_home_leaves_home_alone(versus_home, pg_db, tmp_path):
    from app.store.session import SessionFile
    from tests.dbs import versus
    r = versus("run", "--target", pg_db, "--workload", "point-query", "--duration", "1",
               "--set", "table-size=1000", "--out", str(tmp_path / "r.versus"))
    assert r.returncode == 0, r.stdout + r.stderr
    with SessionFile(tmp_path / "r.versus") as s:
        run_id = s.runs()[0].id
    assert (versus_home / "host" / "runs" / run_id / "events.jsonl").exists()
    # (other people's runs may come and go in ~/.versus on a shared machine: not this one)
    assert not (Path.home() / ".versus" / "runs" / run_id).exists()


def test_server_perf_counters_are_off_unless_the_box_is_ticked(make_window, qtbot):
    """perf stat costs the server throughput, so a run from the panel asks for it only when
    the user ticks Server perf counters (the recorded stream stands in for the host)."""
    from .stream import recorded_run
    from .test_main_window import replay_factory
    created: list = []
    w = make_window(controller_factory=replay_factory(recorded_run(measure_s=2), batch=50,
                                                      created=created))
    assert not w.perf_check.isChecked() and "costs throughput" in w.perf_check.toolTip()
    for ticked in (False, True):
        w.perf_check.setChecked(ticked)
        with qtbot.waitSignal(w.run_ended, timeout=30_000):
            qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
        perf = created[-1].request.perf
        assert perf.get("stat") is (True if ticked else None), perf
    # the choice is remembered for the next window
    again = make_window()
    assert again.perf_check.isChecked()


def test_f1_lists_every_declared_shortcut(make_window, qtbot):
    from PySide6.QtGui import QKeySequence
    from app.ui.common.actions import ACTIONS
    w = make_window()
    assert w.actions["shortcuts"].shortcut().toString() == "F1"
    w.actions["shortcuts"].trigger()

    def shown():
        return next((d for d in w._dialogs if d.objectName() == "shortcuts_dialog"
                     and d.isVisible()), None)
    qtbot.waitUntil(lambda: shown() is not None)
    table = shown().table
    keys = {table.item(r, 2).text() for r in range(table.rowCount())}
    declared = {QKeySequence(a.shortcut).toString(QKeySequence.SequenceFormat.NativeText)
                for a in ACTIONS if a.shortcut}
    assert len(declared) > 5 and declared <= keys, declared - keys
    shown().reject()
