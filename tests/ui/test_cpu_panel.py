"""'CPU & counters' in the live, saved and Compare views, with real widgets (pytest-qt,
offscreen) over recorded real agent output (tests/fixtures/streams)."""
from __future__ import annotations

from app.analysis.results import new_store
from app.model.runset import RunRef
from app.analysis.cpu import group_title
from app.ui.cpu.charts import CounterChooserWidget, store_source
from app.ui.cpu.panel import CpuPanelWidget
from app.ui.saved.session_view import SessionViewWidget, load_run
from tests.recorded import load, session_of

LOAD_MS = 20_000


def _panel(qtbot, name):
    store = new_store()
    store.ingest(load(name))
    panel = CpuPanelWidget()
    qtbot.addWidget(panel)
    panel.resize(1100, 700)
    panel.show()
    panel.set_store(store, name)
    return panel, store


def test_stacked_cpu_shows_the_runs_process_groups_in_order(qtbot):
    panel, store = _panel(qtbot, "tpcc-pg")
    groups = panel.groups.groups
    assert groups[0] == "server.fg" and groups[-1] == "other" and "driver" in groups
    # the top of the stack is every group's share together: the host's busy CPU
    _name, top = panel.groups.layers[-1]
    idle = store.arrays("cpu.idle")[1]
    assert len(top) == len(idle)
    diffs = sorted(abs(t - (100 - i)) for t, i in zip(top, idle))
    assert diffs[len(diffs) // 2] < 5, diffs          # the median interval: within 5 points
    # the axis holds the whole stack, also where the groups add up to more than 100 %
    # (this recording: 113.6 % in one interval)
    view = panel.groups.plot.viewRange()
    assert view[1][1] >= max(top), (max(top), view)
    # … and says why a stack of the host's CPU passes 100 % (issue 20, item 10)
    note = panel.groups.note.text()
    assert f"add up to {max(top):.1f} %" in note and "/proc/stat" in note, note
    assert "server foreground (connections)" in panel.groups.legend.text()
    assert not panel.groups.banner.isVisible()


def test_chooser_lists_counters_by_source_and_charts_the_checked_ones(qtbot):
    panel, store = _panel(qtbot, "tpcc-mariadb")
    chooser = panel.chooser
    heads = [chooser.tree.topLevelItem(i).text(0)
             for i in range(chooser.tree.topLevelItemCount())]
    assert any(h.startswith("Server counters (/s) and gauges") for h in heads)
    assert any(h.startswith("CPU by process group") for h in heads)
    assert not chooser._curves and chooser.hint.isVisibleTo(chooser)
    chooser.set_chosen(["db.Com_commit", "db.Threads_running"])
    assert len(chooser._curves) == 2
    chooser.filter.setText("buffer_pool_read")
    shown = [chooser.tree.topLevelItem(i).child(j).data(0, 256)
             for i in range(chooser.tree.topLevelItemCount())
             for j in range(chooser.tree.topLevelItem(i).childCount())]
    assert shown and all("buffer_pool_read" in n.lower() for n in shown)


def test_chooser_overlays_several_runs_in_their_colours(qtbot):
    a, b = new_store(), new_store()
    a.ingest(load("point-query-pg"))
    b.ingest(load("point-query-mariadb"))
    chooser = CounterChooserWidget()
    qtbot.addWidget(chooser)
    chooser.set_sources([store_source(a, "pg", "#0072B2"), store_source(b, "mariadb", "#D55E00")])
    chooser.set_chosen(["cpu.group.server.fg"])
    pens = {c.opts["pen"].color().name() for c in chooser._curves}
    assert pens == {"#0072b2", "#d55e00"}


def test_live_view_says_when_the_client_limits_and_not_otherwise(make_window, qtbot):
    w = make_window()
    w.store.ingest(load("point-query-pg-bound"))
    w._on_redraw_timer_timeout()
    w.live_tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: w.cpu_panel.groups.banner.isVisible(), timeout=5_000)
    text = w.cpu_panel.groups.banner.text()
    assert text.startswith("The client limits throughput, not the server: ")
    assert not w.live_tabs.tabIcon(1).isNull()
    assert "The client limits throughput" in w.log_view.toPlainText()
    # a normal run: no sentence, no mark
    from app.analysis.results import new_store as fresh
    w.store = fresh()
    w.dashboard.set_store(w.store)
    w.cpu_panel.set_store(w.store)
    w.store.ingest(load("point-query-pg"))
    w._on_redraw_timer_timeout()
    assert not w.cpu_panel.groups.banner.isVisible()
    assert w.live_tabs.tabIcon(1).isNull()


def test_saved_run_shows_tables_per_operation_and_the_flame_graph(qtbot, tmp_path):
    path = session_of("point-query-pg-profile", tmp_path)
    loaded = load_run(path, load("point-query-pg-profile")[0]["run_id"])
    view = SessionViewWidget()
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    view.show_run(loaded)
    panel = view.cpu_panel
    view.view_tabs.setCurrentWidget(panel)
    assert panel.tables.combo.currentText() == "measure — CPU by process group"
    titles = [panel.tables.combo.itemText(i) for i in range(panel.tables.combo.count())]
    assert "measure — the server's CPU per operation (perf)" in titles
    assert panel.tables.model.rowCount() >= 3
    flame = panel.flame
    assert flame.phase_combo.currentText() == "measure"
    assert flame.canvas.frames and flame.canvas.total == flame.current()["samples"]
    out = tmp_path / "f.svg"
    root = flame.canvas.frames[0]
    flame.canvas.set_focus(root.path)
    flame.export_svg(out)
    text = out.read_text()
    assert text.startswith("<svg") and "CPU of the server in measure" in text


def test_compare_has_cpu_groups_tables_counters_and_profiles(make_window, qtbot, tmp_path):
    w = make_window()
    refs = [RunRef(str(session_of("tpcc-pg", tmp_path / "a"))),
            RunRef(str(session_of("tpcc-mariadb", tmp_path / "b")))]
    cw = w.show_compare(refs)
    qtbot.waitUntil(lambda: cw.comp is not None and cw.cpu_page.comp is not None,
                    timeout=LOAD_MS)
    page = cw.cpu_page
    assert page.phase_combo.currentText() == "measure"
    t = page.tables.model.table()
    assert t.title == "measure — CPU by process group"
    assert t.header[-1] == "µs/op 2 / 1"
    assert page.stacks_layout.count() == 2
    assert len(page.chooser.sources) == 2
    cw.base_combo.setCurrentIndex(1)
    assert page.tables.model.table().header[-1] == "µs/op 1 / 2"


def test_cpu_and_counter_charts_have_the_crosshair_readout(qtbot):
    # issue 14: a readout on every chart; the stacked chart reads each group's own share
    panel, store = _panel(qtbot, "tpcc-pg")
    g = panel.groups
    t = float(g.times[len(g.times) // 2])
    g.crosshair.show_at(t)
    text = g.crosshair.text_of(g.plot)
    from app.ui.cpu.charts import fmt_share
    i = len(g.times) // 2
    fg = float(g.layers[0][1][i])                                   # the bottom band
    second = float(g.layers[1][1][i]) - fg                          # its own share, not a sum
    # "━ server foreground (connections) 36.0 %": one line per group under the time
    rows = {}
    for line in text.splitlines()[1:]:
        label, number, unit = line.removeprefix("━ ").rsplit(" ", 2)
        rows[label] = f"{number} {unit}"
    assert rows["server foreground (connections)"] == fmt_share(fg), rows
    assert rows[group_title(g.groups[1])] == fmt_share(second), rows
    chooser = panel.chooser
    chooser.set_chosen(["db.xact_commit"])
    x, y = chooser._curves[0].getData()
    chooser.crosshair.show_at(float(x[2]) + 0.1)
    assert "xact_commit" in chooser.crosshair.text_of(chooser.plot)
