"""Compare with room to read (issue 14, item 6): charts get the height, the summary table
shows every row, the values panel has numbers as soon as runs open, one number of decimals
a row, the ratio colours as a key, and a Settings tab that colours only differences, keeps
long values inside their column and finds equal settings too."""
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from app.model.runset import RunRef
from tests.recorded import build_run

from .test_compare_settings import add_settings, pg_settings

LOAD_MS = 15_000


def open_compare(make_window, qtbot, tmp_path, version_b="PostgreSQL 16.4", settings=True):
    sessions = tmp_path / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    a = build_run(sessions / "a.versus", "ra", rate=1000, p95=2.0, idle=50,
                  phases=("rampup", "measure"))
    b = build_run(sessions / "b.versus", "rb", rate=970.4, p95=2.2, idle=60,
                  phases=("rampup", "measure"), version=version_b)
    if settings:
        add_settings(a, "ra", pg_settings())
        add_settings(b, "rb", pg_settings(work_mem={"setting": "65536"}))
    w = make_window()
    w.resize(1600, 1000)
    view = w.show_compare([])
    with qtbot.waitSignal(view.settings_page.loaded, timeout=LOAD_MS):
        view.set_runs([RunRef(str(a), "ra"), RunRef(str(b), "rb")])
    qtbot.wait(100)
    return w, view


def test_charts_get_the_height_and_tables_show_every_row(make_window, qtbot, tmp_path):
    w, v = open_compare(make_window, qtbot, tmp_path)
    assert len(v.chart_names) >= 3
    for _name, _run, plot in v.plots:
        assert plot.getViewBox().height() >= 150, plot.getViewBox().height()
    for table in (v.summary_view, v.efficiency_view):
        model = table.model()
        assert model.rowCount() >= 2
        # every row inside the view: nothing behind a vertical scroll bar
        assert table.verticalScrollBar().maximum() == 0
        last = table.visualRect(model.index(model.rowCount() - 1, 0))
        assert last.bottom() <= table.viewport().height()
    w.tasks.wait(5000)


def test_values_show_numbers_at_once_with_one_number_of_decimals(make_window, qtbot, tmp_path):
    w, v = open_compare(make_window, qtbot, tmp_path)
    assert not v.clock.playing
    vals = [v.values_panel.value(i, "throughput") for i in range(2)]
    assert vals == ["1,000", "970"]                     # not dashes until Play; not "970.4"
    s = v.summary_model
    row = next(r for r in range(s.rowCount()) if s.index(r, 0).data() == "Latency p95")
    texts = [s.index(row, c).data() for c in (2, 3)]
    assert [len(t.split(".")[1]) for t in texts] == [2, 2]     # 2.00 and 2.20, alike
    w.tasks.wait(5000)


def test_ratio_colours_are_a_key_not_a_sentence(make_window, qtbot, tmp_path):
    w, v = open_compare(make_window, qtbot, tmp_path)
    assert "better" in v.ratio_key.text() and "worse" in v.ratio_key.text()
    assert "green ≥ 1.05" not in v.notes_label.text()
    w.tasks.wait(5000)


def test_settings_colour_only_differences_and_find_equal_ones(make_window, qtbot, tmp_path):
    long = ("PostgreSQL 16.4 (Debian 16.4-1.pgdg120+2) on x86_64-pc-linux-gnu, compiled by "
            "gcc (Debian 12.2.0-14) 12.2.0, 64-bit")
    w, v = open_compare(make_window, qtbot, tmp_path)
    v.table_tabs.setCurrentWidget(v.settings_page)
    qtbot.wait(50)
    m = v.settings_model
    names = m.row_names()
    assert names[0] == "server version" and not m.differs(0)      # 16.4 in both runs
    plain = QColor("#57606a").name()
    for c in (1, 2):
        assert m.index(0, c).data(Qt.ItemDataRole.ForegroundRole).name() == plain
    wm = names.index("work_mem")
    assert m.differs(wm)
    assert m.index(wm, 2).data(Qt.ItemDataRole.ForegroundRole).name() == \
        v.comp.runs[1].colour.lower()
    # a filter finds a setting that is the same in every run
    v.settings_page.filter_edit.setText("max_conn")
    assert m.row_names() == ["server version", "max_connections"]
    assert not m.differs(1)
    assert m.index(1, 1).data(Qt.ItemDataRole.ForegroundRole).name() == plain
    v.settings_page.filter_edit.setText("")
    v.settings_page.equal_box.setChecked(True)
    assert {"fsync", "max_connections", "work_mem"} <= set(m.row_names())
    w.tasks.wait(5000)

    # a long value stays inside its column (elided, whole in the tooltip)
    w2, v2 = open_compare(make_window, qtbot, tmp_path / "long", version_b=long)
    v2.table_tabs.setCurrentWidget(v2.settings_page)
    qtbot.wait(50)
    view = v2.settings_page.view
    total = sum(view.columnWidth(c) for c in range(v2.settings_model.columnCount()))
    assert total <= view.viewport().width() + 2
    assert long in v2.settings_model.index(0, 2).data(Qt.ItemDataRole.ToolTipRole)
    w2.tasks.wait(5000)


def test_deck_from_the_view_has_native_charts_and_the_chosen_footer(make_window, qtbot,
                                                                    tmp_path):
    from pptx import Presentation
    w, v = open_compare(make_window, qtbot, tmp_path)
    v.actions["export_footer"].setChecked(True)
    v.set_log_scale("latency", True)
    with qtbot.waitSignal(v.export_finished, timeout=30_000):
        v.export_deck(tmp_path / "d.pptx")
    prs = Presentation(str(tmp_path / "d.pptx"))
    charts = [sh.chart for s in prs.slides for sh in s.shapes if sh.has_chart]
    assert len(charts) >= 3
    assert not any(sh.shape_type == 13 for s in prs.slides for sh in s.shapes)   # pictures
    small = [sh.text_frame.text for s in list(prs.slides)[1:2] for sh in s.shapes
             if sh.has_text_frame]
    assert any("PostgreSQL 16.4 on h1" in t for t in small)
    assert w.settings.get("export/footer") is True            # remembered for next time
    w.tasks.wait(5000)


def test_the_suite_matrix_is_not_drawn_over_the_tables_for_runs_of_no_suite(make_window,
                                                                           qtbot, tmp_path):
    # (seen: the page, a child of the tab widget but no tab of it, was painted loose over the
    # phase tables)
    w, v = open_compare(make_window, qtbot, tmp_path, settings=False)
    page = v.tables.suite_matrix
    assert not page.applies() and v.tables.indexOf(page) < 0
    assert not page.isVisible()
    w.tasks.wait(5000)
