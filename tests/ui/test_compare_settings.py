"""The Compare view's Settings tab: the effective settings that differ between runs (from each
run's `setting` event, shaped as workloads/engine/servers/settings.py emits it), the server version first,
one column per run in its colour, a filter, and a note for runs without settings."""
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.model.runset import RunRef
from app.store.session import SessionFile
from tests.recorded import build_run

from app.ui.compare.settings_tab import VERSION_ROW, SettingsDiffTableModel
from app.ui.compare.view import CompareWidget

LOAD_MS = 15_000

COMMON = {
    "max_connections": {"setting": "100", "unit": None, "source": "configuration file"},
    "port": {"setting": "5432", "unit": None, "source": "command line"},
    "fsync": {"setting": "on", "unit": None, "source": "default"},
    "work_mem": {"setting": "4096", "unit": "kB", "source": "default"},
}


def pg_settings(**changes) -> dict:
    out = {k: dict(v) for k, v in COMMON.items()}
    for name, rec in changes.items():
        out[name] = {**out.get(name, {"unit": None, "source": "configuration file"}), **rec}
    return out


def add_settings(path: Path, run_id: str, settings: dict) -> None:
    """The agent's second `setting` event: emit_settings(em, db) -> source, settings."""
    with SessionFile(path, readonly=False) as s:
        s.append_events(run_id, [{"v": 1, "seq": 10_000, "t": 0.0, "kind": "setting",
                                  "source": "pg_settings", "settings": settings}])


@pytest.fixture
def view(qtbot, tmp_path):
    made = []

    def make(refs, size=(1300, 850)):
        from app.ui.charts.dashboard import configure_pyqtgraph
        configure_pyqtgraph()
        v = CompareWidget(export_dir=tmp_path)
        qtbot.addWidget(v)
        v.resize(*size)
        v.show()
        qtbot.waitExposed(v, timeout=5_000)
        with qtbot.waitSignal(v.settings_page.loaded, timeout=LOAD_MS):
            v.set_runs(refs)
        made.append(v)
        return v

    yield make
    for v in made:
        v.clock.pause()
        v.tasks.wait(10_000)


def rows(model: SettingsDiffTableModel) -> dict[str, list[str]]:
    return {model.index(r, 0).data(): [model.index(r, c).data()
                                       for c in range(1, model.columnCount())]
            for r in range(model.rowCount())}


def test_settings_tab_shows_exactly_the_differences(view, tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    b = build_run(tmp_path / "b.versus", "rb", rate=1100, p95=2.2, idle=60,
                  version="PostgreSQL 17.2")
    add_settings(a, "ra", pg_settings())
    add_settings(b, "rb", pg_settings(shared_buffers={"setting": "16384", "unit": "8kB"},
                                      work_mem={"setting": "65536"},
                                      port={"setting": "5433"}))   # per-instance: left out
    # a has no shared_buffers at all: shown as "—"
    v = view([RunRef(str(a), "ra"), RunRef(str(b), "rb")])
    tabs = v.table_tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == \
        ["Summary per phase", "Matrix", "Settings"]
    m = v.settings_model
    assert m.columnCount() == 3
    assert m.row_names() == [VERSION_ROW, "shared_buffers", "work_mem"]
    got = rows(m)
    assert got[VERSION_ROW] == ["PostgreSQL 16.4", "PostgreSQL 17.2"]
    assert got["shared_buffers"] == ["—", "128MB"]
    assert got["work_mem"] == ["4MB", "64MB"]
    # each run's column in its colour, header swatch and tooltip naming the run
    colours = [r.colour.lower() for r in v.comp.runs]
    for c in (1, 2):
        assert m.index(2, c).data(Qt.ItemDataRole.ForegroundRole).name() == colours[c - 1]
        assert m.headerData(c, Qt.Orientation.Horizontal) == str(c)
        assert v.comp.runs[c - 1].label in m.headerData(c, Qt.Orientation.Horizontal,
                                                          Qt.ItemDataRole.ToolTipRole)
    assert "default" in m.index(2, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert "2 of 5 settings differ" in v.settings_page.note.text()
    # the filter narrows the settings, never the version row
    v.settings_page.filter_edit.setText("WORK")
    assert m.row_names() == [VERSION_ROW, "work_mem"]
    v.settings_page.filter_edit.setText("")
    assert m.rowCount() == 3

    tabs.setCurrentWidget(v.settings_page)
    v.split.setSizes([300, 500])
    out = Path(os.environ.get("VERSUS_SHOT_DIR", tmp_path)) / "compare_settings_tab.png"
    assert v.grab().save(str(out))
    assert out.stat().st_size > 0


def test_settings_tab_notes_equal_settings_and_runs_without_them(view, tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    b = build_run(tmp_path / "b.versus", "rb", rate=1000, p95=2.0, idle=50)
    c = build_run(tmp_path / "c.versus", "rc", rate=1000, p95=2.0, idle=50)   # an older run
    add_settings(a, "ra", pg_settings())
    add_settings(b, "rb", pg_settings(port={"setting": "5433"}))
    v = view([RunRef(str(p)) for p in (a, b, c)])
    m = v.settings_model
    assert m.row_names() == [VERSION_ROW]
    assert rows(m)[VERSION_ROW] == ["PostgreSQL 16.4"] * 3
    note = v.settings_page.note.text()
    assert "All 4 recorded settings are equal" in note
    assert "Run 3" in note and "this run recorded no settings (made before Versus recorded them)" \
        in note
