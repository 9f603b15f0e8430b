"""The profile editor: highlighting, diff, render, save as, a malformed file, and a check
against the machine's PostgreSQL 15."""
import pytest

from app.store import paths


@pytest.fixture
def make_editor(qtbot, tmp_path, versus_home):
    from app.store.catalog import Catalog
    from app.ui.profiles.editor import ProfileEditorDialog
    made = []

    def make():
        d = ProfileEditorDialog(Catalog(tmp_path / "config"))
        qtbot.addWidget(d)
        d.show()
        qtbot.waitUntil(lambda: bool(d.entries), timeout=10_000)
        made.append(d)
        return d

    yield make
    for d in made:
        d.tasks.wait(30_000)


def formats_on(dialog, line: int) -> dict[str, tuple[int, int]]:
    """Which highlighter format covers which (start, length) on a line of the editor."""
    block = dialog.editor.document().findBlockByNumber(line)
    out = {}
    for r in block.layout().formats():
        for name, f in dialog.highlighter.formats.items():
            if f == r.format:
                out[name] = (r.start, r.length)
    return out


def test_highlights_comments_names_values_and_expressions(make_editor):
    d = make_editor()
    d.editor.setPlainText("# a comment\nshared_buffers = {{ ram_mb * 0.25 | int }}MB\n"
                          "work_mem = 16MB  # inline\n")
    line1 = formats_on(d, 1)
    assert line1["name"] == (0, len("shared_buffers"))
    assert line1["expr"] == (17, len("{{ ram_mb * 0.25 | int }}"))
    assert "value" in line1
    assert list(formats_on(d, 0)) == ["comment"]
    line2 = formats_on(d, 2)
    assert line2["value"] == (11, 4) and line2["comment"][0] == 17


def test_diff_shows_the_changed_lines(make_editor, qtbot):
    d = make_editor()
    assert d.select("postgres/bench")
    d.set_diff("postgres/bench", "postgres/bench-nofsync", unified=True)
    text = d.diff_unified.toPlainText()
    changed = [l for l in text.splitlines() if l[:1] in "+-" and l[:3] not in ("+++", "---")]
    assert changed and any("fsync" in l for l in changed)
    assert all(l[1:].strip() for l in changed)
    # edits in the editor show up against the saved profile, side by side
    d.editor.setPlainText(d.editor.toPlainText().replace("work_mem = 16MB", "work_mem = 64MB"))
    d.set_diff("postgres/bench", "(this editor)")
    html = d.diff_side.toHtml()
    assert "work_mem = 16MB" in html and "work_mem = 64MB" in html and "#ffebe9" in html


def test_render_for_a_host(make_editor):
    d = make_editor()
    d.select("postgres/bench")
    d.tabs.setCurrentIndex(1)
    d.ram_spin.setValue(8192)
    d.clients_spin.setValue(200)
    text = d.preview.toPlainText()
    assert "shared_buffers = 2048MB" in text and "max_connections = 220" in text


def test_save_as_writes_under_versus_home(make_editor, qtbot, versus_home):
    d = make_editor()
    d.select("postgres/bench")
    d.editor.setPlainText(d.editor.toPlainText() + "jit = off\n")
    with qtbot.waitSignal(d.profile_saved, timeout=10_000) as saved:
        d.save_as("mine")
    path = saved.args[0]
    assert path == str(versus_home / "profiles" / "postgres" / "mine.toml") or \
        path == str(paths.config_dir() / "profiles" / "postgres" / "mine.toml")
    assert str(versus_home) in path
    from app.store.profiles import read_profile
    p = read_profile(path)
    assert p.name == "mine" and p.config.endswith("jit = off\n")
    qtbot.waitUntil(lambda: d.current is not None and d.current.path == path, timeout=10_000)
    assert "(yours)" in d.tree.currentItem().text(0)


def test_a_malformed_profile_is_a_sentence(qtbot, tmp_path, versus_home, make_editor):
    bad = paths.config_dir() / "profiles" / "postgres" / "broken.toml"
    bad.parent.mkdir(parents=True)
    bad.write_text("name = 'broken'\nengine = 'postgres'\nconfig = '''\n"
                   "shared_buffers = {{ ram_mb * }}MB\n'''\n")
    d = make_editor()
    assert d.select(str(bad))
    qtbot.waitUntil(lambda: "not a valid expression" in d.message.text(), timeout=10_000)
    assert "Traceback" not in d.message.text() and d.message.isVisible()
    assert "shared_buffers" in d.editor.toPlainText()        # loaded to be fixed
    # not TOML at all
    d.editor.setPlainText("ok = 1\n")
    d.versions_edit.setText(">=banana")
    qtbot.waitUntil(lambda: "version constraint" in d.message.text(), timeout=5000)
    d.save_as("x")
    assert "version constraint" in d.message.text()


def test_check_against_postgresql_15_marks_unknown_names_and_rejected_values(make_editor,
                                                                             qtbot):
    d = make_editor()
    d.select("postgres/bench")
    d.editor.setPlainText("# typo and a bad unit\nshared_bufers = 128MB\nwork_mem = 16XB\n"
                          "wal_level = minimall\nrandom_page_cost = 1.1\n")
    with qtbot.waitSignal(d.check_finished, timeout=60_000) as done:
        d.start_check("postgresql://postgres@127.0.0.1:5432/postgres")
    result = done.args[0]
    assert {(p.line, p.kind) for p in result.problems} == {
        (2, "unknown"), (3, "rejected"), (4, "rejected")}
    assert d.problem_lines() == [2, 3, 4]
    texts = [d.problem_list.item(i).text() for i in range(d.problem_list.count())]
    assert any("shared_buffers?" in t for t in texts)          # did you mean …
    assert d.problem_list.isVisible() and "3 of 4 settings" in d.message.text()


def test_the_profiles_action_opens_the_editor_from_the_main_window(make_window, qtbot):
    from app.ui.profiles.editor import ProfileEditorDialog
    w = make_window()
    menu_texts = [a.text() for m in w.menuBar().actions() for a in m.menu().actions()]
    assert "Server &Profiles…" in menu_texts
    w.actions["profiles"].trigger()
    dlg = w.findChild(ProfileEditorDialog)
    assert dlg is not None and dlg.isVisible()
    qtbot.waitUntil(lambda: bool(dlg.entries), timeout=10_000)
    dlg.reject()
