"""The Compare view: known ratios and colours, one replay clock driving every cursor and the
values panel, linked zoom, overlay and side by side, alignment, exports and their failures,
a live run watched next to a finished one, and the hooks in the main window."""
import json

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QDropEvent, QImage
from PySide6.QtWidgets import QMessageBox

from app.model.runset import (BETTER, CLASS_COLOURS, NA, SAME, WORSE, RunRef, run_colour)
from app.store.session import SessionFile
from tests.recorded import build_run, record_pg_sessions

from app.ui.compare.view import (CLASS_ROLE, CompareWidget, ReplayClock, refs_from_mime,
                                 runs_mime)

LOAD_MS = 15_000


@pytest.fixture
def sessions(tmp_path):
    """Two runs with exactly known values: 10 s of rampup then 10 s of measure each."""
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50,
                  phases=("rampup", "measure"))
    b = build_run(tmp_path / "b.versus", "rb", rate=1100, p95=2.2, idle=60,
                  phases=("rampup", "measure"), version="PostgreSQL 17.2")
    return a, b


@pytest.fixture
def open_view(qtbot, tmp_path):
    made = []

    def make(refs, size=(1300, 850)):
        from app.ui.charts.dashboard import configure_pyqtgraph
        configure_pyqtgraph()
        v = CompareWidget(export_dir=tmp_path)
        qtbot.addWidget(v)
        v.resize(*size)
        v.show()
        qtbot.waitExposed(v, timeout=5_000)
        with qtbot.waitSignal(v.comparison_loaded, timeout=LOAD_MS):
            v.set_runs(refs)
        made.append(v)
        return v

    yield make
    for v in made:
        v.clock.pause()
        v.tasks.wait(10_000)


def cell(model, row_name, col):
    for r in range(model.rowCount()):
        if model.index(r, 0).data() == row_name:
            return model.index(r, col if col >= 0 else model.columnCount() + col)
    raise AssertionError(f"no row {row_name!r}")


def pen_colour(curve) -> str:
    return curve.opts["pen"].color().name().lower()


# --- tables and colours ------------------------------------------------------------------
def test_ratios_and_colours_match_known_values(open_view, sessions):
    v = open_view([RunRef(str(p)) for p in sessions])
    assert v.phase_combo.currentData() == "measure"
    s = v.summary_model
    thr = cell(s, "Throughput", -1)
    assert [cell(s, "Throughput", c).data() for c in (2, 3)] == ["1,000", "1,100"]
    assert thr.data() == "1.10" and thr.data(CLASS_ROLE) == BETTER
    assert thr.data(Qt.ItemDataRole.BackgroundRole).name() == CLASS_COLOURS[BETTER].lower()
    p95 = cell(s, "Latency p95", -1)               # lower is better: 1.10 is worse, red
    assert p95.data() == "1.10" and p95.data(CLASS_ROLE) == WORSE
    assert p95.data(Qt.ItemDataRole.BackgroundRole).name() == CLASS_COLOURS[WORSE].lower()
    cpu = cell(v.efficiency_model, "CPU per op", -1)   # 0.4×4×10e6/11000 over 2000 µs
    assert cpu.data() == "0.73" and cpu.data(CLASS_ROLE) == BETTER
    assert cell(v.efficiency_model, "CPU per op", 2).data() == "2,000"
    # every run keeps its colour in the charts, the values panel and the table headers
    for i in range(2):
        assert pen_colour(v.curves[("throughput", i, "throughput")]) == run_colour(i).lower()
        assert v.values_panel.table.item(0, i).foreground().color().name() == \
            run_colour(i).lower()
        icon = s.headerData(2 + i, Qt.Orientation.Horizontal, Qt.ItemDataRole.DecorationRole)
        assert icon.pixmap(12, 12).toImage().pixelColor(6, 6).name() == run_colour(i).lower()
    # the other run as base: the sense of the ratio flips
    v.set_base(1)
    thr = cell(v.summary_model, "Throughput", -1)
    assert thr.data() == "0.91" and thr.data(CLASS_ROLE) == WORSE
    # the matrix: phases × runs, ratios to the base, the base itself 1.00 and grey
    v.set_base(0)
    m = v.matrix_model
    meas = cell(m, "measure", 2)
    assert meas.data() == "1.10" and meas.data(CLASS_ROLE) == BETTER
    assert cell(m, "measure", 1).data() == "1.00" and cell(m, "measure", 1).data(CLASS_ROLE) == SAME


def test_zero_throughput_base_gives_na_without_colour(open_view, tmp_path, sessions):
    z = build_run(tmp_path / "z.versus", "rz", rate=0, p95=0, idle=99,
                  phases=("rampup", "measure"), version="MariaDB 11.4.3")
    v = open_view([RunRef(str(z)), RunRef(str(sessions[0]))])
    thr = cell(v.summary_model, "Throughput", -1)
    assert thr.data() == "n/a" and thr.data(CLASS_ROLE) == NA
    assert thr.data(Qt.ItemDataRole.BackgroundRole) is None       # no colour, in any theme
    assert "zero throughput" in v.notes_label.text()


# --- the one clock --------------------------------------------------------------------------
def test_clock_plays_loops_and_stops_at_the_end(qtbot):
    c = ReplayClock()
    c.set_range(-10.0, 10.0)
    c.set_position(0.0)
    c.set_rate(500)                         # clamped to 100×
    assert c.rate == 100
    c.set_rate(2)
    c.advance(1.5)
    assert c.position == pytest.approx(3.0)
    c.step(1)
    assert c.position == pytest.approx(5.0)
    c.step(-1)
    assert c.position == pytest.approx(3.0)
    c.play()
    assert c.playing
    c.advance(10)                           # past the end, no loop: stop at the end
    assert c.position == 10.0 and not c.playing
    c.set_loop(True)
    c.play()                                # from the end: starts again at the beginning
    assert c.position == -10.0
    c.advance(11)                           # 22 s of run time: wraps to −10 + 2
    assert c.position == pytest.approx(-8.0) and c.playing
    c.pause()


def test_play_pause_speed_scrub_move_every_cursor_and_the_values(open_view, sessions, qtbot):
    v = open_view([RunRef(str(p)) for p in sessions])
    v.set_align("measure")
    v.set_mode("side-by-side")
    assert len(v.cursors) == 6
    mismatches = []

    def check(t):
        pos = v.cursor_positions()
        if not pos or any(abs(p - t) > 1e-9 for p in pos) or v.values_panel.t != t:
            mismatches.append((t, pos, v.values_panel.t))
    v.clock.position_changed.connect(check)

    # scrub with the slider
    v.slider.setValue(-55)
    assert v.clock.position == pytest.approx(-5.5)
    assert v.values_panel.value(0, "throughput") == "1,000"
    assert v.values_panel.value(1, "throughput") == "1,100"
    assert "since measure started" in v.values_panel.time_label.text()
    # drag one chart's cursor: the clock moves, and with it every other cursor
    line = v.cursors[3]
    line.setValue(2.5)
    line.sigDragged.emit(line)
    assert v.clock.position == pytest.approx(2.5)
    assert all(p == pytest.approx(2.5) for p in v.cursor_positions())
    # speed from the combo, play and pause with Space
    v.speed_combo.setCurrentIndex(v.speed_combo.findData(5.0))
    assert v.clock.rate == 5
    v.activateWindow()
    v.setFocus()
    qtbot.keyClick(v, Qt.Key.Key_Space)
    assert v.clock.playing
    assert v.overlay.pixmap is not None            # cursors drawn over the frozen charts
    assert all(not p.getViewBox().state["autoRange"][1] for _, _, p in v.plots)
    qtbot.waitUntil(lambda: v.clock.position > 4.0, timeout=5_000)
    qtbot.keyClick(v, Qt.Key.Key_Space)
    assert not v.clock.playing and v.overlay.pixmap is None
    at = v.clock.position
    assert 4.0 < at < 10.0
    assert all(c.isVisible() for c in v.cursors)
    # step one second of play at 5×
    v.actions["step_forward"].trigger()
    assert v.clock.position == pytest.approx(min(10.0, at + 5))
    assert not mismatches, mismatches[:3]
    assert v.slider.value() == round(v.clock.position * 10)


def test_zoom_is_linked_across_every_pane(open_view, sessions, qtbot):
    v = open_view([RunRef(str(p)) for p in sessions])
    for mode in ("overlay", "side-by-side"):
        v.set_mode(mode)
        qtbot.wait(50)
        v.plot("latency", None if mode == "overlay" else 1).setXRange(2.0, 6.0, padding=0)
        for _, _, p in v.plots:
            lo, hi = p.getViewBox().viewRange()[0]
            assert (lo, hi) == (pytest.approx(2.0, abs=1e-6), pytest.approx(6.0, abs=1e-6))


def test_overlay_and_side_by_side_switch(open_view, sessions):
    v = open_view([RunRef(str(p)) for p in sessions])
    assert v.mode == "overlay" and v.chart_names == ["throughput", "latency", "cpu"]
    assert [(n, r) for n, r, _ in v.plots] == [("throughput", None), ("latency", None),
                                              ("cpu", None)]
    overlay = v.plot("throughput")
    assert {pen_colour(c) for c in overlay.listDataItems()} == {run_colour(0).lower(),
                                                                run_colour(1).lower()}
    v.mode_combo.setCurrentIndex(v.mode_combo.findData("side-by-side"))
    assert v.mode == "side-by-side" and len(v.plots) == 6
    for i in range(2):
        items = v.plot("latency", i).listDataItems()
        assert len(items) == 3 and {pen_colour(c) for c in items} == {run_colour(i).lower()}
    v.set_mode("overlay")
    assert len(v.plots) == 3


def test_align_on_measure(open_view, sessions):
    v = open_view([RunRef(str(p)) for p in sessions])
    assert v.clock.range() == (pytest.approx(0.0), pytest.approx(20.0))
    assert v.curves[("throughput", 0, "throughput")].xData[0] == pytest.approx(1.0)
    v.align_combo.setCurrentIndex(v.align_combo.findData("measure"))
    assert v.comp.align_phase == "measure"
    assert v.clock.range() == (pytest.approx(-10.0), pytest.approx(10.0))
    for i in range(2):          # the first sample ends 1 s into rampup, 10 s before measure
        assert v.curves[("throughput", i, "throughput")].xData[0] == pytest.approx(-9.0)
    v.clock.set_position(0.5)
    assert v.values_panel.value(0, "throughput") == "1,000"


# --- exports ------------------------------------------------------------------------------
def test_export_png_of_the_asked_size_and_other_formats(open_view, sessions, tmp_path, qtbot):
    v = open_view([RunRef(str(p)) for p in sessions])
    for size, scale, want in (((1920, 1080), 1.0, (1920, 1080)),
                              ((1280, 720), 2.0, (2560, 1440)),
                              ((800, 450), 1.0, (800, 450))):
        out = tmp_path / f"t{want[0]}.png"
        with qtbot.waitSignal(v.export_finished, timeout=20_000) as done:
            v.export_chart("throughput", out, size=size, scale=scale)
        assert done.args == [str(out)]
        img = QImage(str(out))
        assert (img.width(), img.height()) == want
    for name, call in (("c.svg", lambda p: v.export_chart("latency", p)),
                       ("c.pdf", lambda p: v.export_chart("cpu", p)),
                       ("s.csv", v.export_series), ("s.json", v.export_series),
                       ("t.md", v.export_tables), ("t.html", v.export_tables),
                       ("t.csv", v.export_tables), ("deck.pptx", v.export_deck)):
        with qtbot.waitSignal(v.export_finished, timeout=60_000):
            call(tmp_path / name)
        assert (tmp_path / name).stat().st_size > 100
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "c.pdf").read_bytes().startswith(b"%PDF")
    assert "t_s,1: PostgreSQL 16.4 Throughput" in (tmp_path / "s.csv").read_text()
    assert len(json.loads((tmp_path / "s.json").read_text())["runs"]) == 2
    md = (tmp_path / "t.md").read_text()
    assert "| Throughput | QPS | 1,000 | 1,100 | 1.10 ▲ |" in md
    assert "#C8E6C9" in (tmp_path / "t.html").read_text()
    from pptx import Presentation
    assert len(Presentation(str(tmp_path / "deck.pptx")).slides) >= 1 + 3 + 2


def test_unwritable_export_is_a_sentence_and_leaves_sessions_alone(open_view, sessions,
                                                                   tmp_path, qtbot):
    before = [p.read_bytes() for p in sessions]
    v = open_view([RunRef(str(p)) for p in sessions])
    for bad in (tmp_path / "no-such-folder" / "t.png", tmp_path):
        with qtbot.waitSignal(v.export_failed, timeout=10_000) as failed:
            v.export_chart("throughput", bad, fmt="png", size=(1280, 720))
        sentence = failed.args[0]
        assert sentence.startswith("Nothing was exported: cannot write")
        assert "Traceback" not in sentence
        boxes = [b for b in v.findChildren(QMessageBox, "export_error_box") if b.isVisible()]
        assert boxes and boxes[-1].text() == sentence
        for b in boxes:
            b.accept()
    with qtbot.waitSignal(v.export_failed, timeout=10_000):
        v.export_tables(tmp_path / "nope" / "t.md")
    with qtbot.waitSignal(v.export_failed, timeout=10_000):
        v.export_deck(tmp_path / "nope" / "d.pptx")
    assert [p.read_bytes() for p in sessions] == before
    assert not list((tmp_path).glob("*.tmp")) and not (tmp_path / "no-such-folder").exists()


# --- drag and drop, live runs, the main window -----------------------------------------------
def test_dropping_runs_adds_them_with_new_colours(open_view, sessions, tmp_path, qtbot):
    v = open_view([RunRef(str(sessions[0]))])
    c = build_run(tmp_path / "c.versus", "rc", rate=900, p95=2.0, idle=50,
                  phases=("rampup", "measure"), version="PostgreSQL 15.8")
    mime = runs_mime([RunRef(str(sessions[1]), "rb"), RunRef(str(c), "rc"),
                      RunRef(str(sessions[0]), "ra")])          # already there: left out
    assert len(refs_from_mime(mime)) == 3
    ev = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime,
                    Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(v.comparison_loaded, timeout=LOAD_MS):
        v.dropEvent(ev)
    assert [r.label for r in v.comp.runs] == ["PostgreSQL 16.4", "PostgreSQL 17.2",
                                              "PostgreSQL 15.8"]
    assert [r.colour for r in v.comp.runs] == [run_colour(0), run_colour(1), run_colour(2)]
    # the first run leaves: the others keep their colours
    with qtbot.waitSignal(v.comparison_loaded, timeout=LOAD_MS):
        v.remove_run(0)
    assert [r.colour for r in v.comp.runs] == [run_colour(1), run_colour(2)]
    assert pen_colour(v.curves[("throughput", 0, "throughput")]) == run_colour(1).lower()


def test_a_live_run_is_watched_next_to_a_finished_one(open_view, sessions, tmp_path, qtbot):
    # a run still in progress: the events of a finished run, cut half way, status running
    full = build_run(tmp_path / "full.versus", "rl", rate=800, p95=3.0, idle=30,
                     phases=("rampup", "measure"))
    with SessionFile(full) as s:
        events = s.events("rl")
    live = tmp_path / "live.versus"
    with SessionFile(live, readonly=False) as s:
        s.add_run("rl", "point-query", "postgresql://x", "local", {"clients": 2})
        s.append_events("rl", events[:len(events) // 2])
    v = open_view([RunRef(str(sessions[0])), RunRef(str(live))])
    assert v.live_runs() == [1]
    curve = v.curves[("throughput", 1, "throughput")]
    n0 = len(curve.xData)
    assert 0 < n0 < 20
    v._live_timer.setInterval(100)
    with SessionFile(live, readonly=False) as s:
        s.append_events("rl", events[len(events) // 2:])
        s.finish_run("rl", "ok")
    qtbot.waitUntil(lambda: len(v.curves[("throughput", 1, "throughput")].xData) == 20,
                    timeout=10_000)
    qtbot.waitUntil(lambda: not v.live_runs(), timeout=10_000)
    assert not v._live_timer.isActive()
    assert v.clock.range()[1] == pytest.approx(20.0)
    assert cell(v.summary_model, "Throughput", 3).data() == "800"     # as "1,000" beside it


def test_compare_action_in_the_main_window(make_window, qtbot, tmp_path):
    sessions_dir = tmp_path / "sessions"
    sessions_dir.mkdir(exist_ok=True)
    build_run(sessions_dir / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    build_run(sessions_dir / "b.versus", "rb", rate=1300, p95=1.5, idle=40,
              version="PostgreSQL 17.2")
    w = make_window()
    tree = w.session_tree
    qtbot.waitUntil(lambda: tree.topLevelItemCount() == 2, timeout=10_000)
    assert not w.actions["compare"].isEnabled()
    runs = [tree.topLevelItem(i).child(0) for i in range(2)]
    for it in runs:
        it.setSelected(True)
    assert w.actions["compare"].isEnabled()
    assert len(tree.selected_refs()) == 2
    # the tree drags what is selected as runs
    assert len(refs_from_mime(tree.mimeData(runs))) == 2
    w.actions["compare"].trigger()
    view = w.compare_widget
    assert w.tabs.currentWidget() is view
    qtbot.waitUntil(lambda: view.comp is not None, timeout=LOAD_MS)
    assert {r.ref.run_id for r in view.comp.runs} == {"ra", "rb"}
    assert w.tabs.tabText(w.tabs.indexOf(view)) == "Compare"
    # replay and exports are in the menu bar too
    from PySide6.QtWidgets import QMenu
    menu = next(m for m in w.menuBar().findChildren(QMenu) if m.title() == "&Compare")
    assert view.actions["play_pause"] in menu.actions()
    assert view.actions["export_deck"] in menu.actions()


def test_sessions_recorded_by_the_suite(open_view, tmp_path, versus_home):
    paths = record_pg_sessions(tmp_path, versus_home, n=2, duration=2)
    v = open_view([RunRef(str(p)) for p in paths])
    comp = v.comp
    assert len(comp) == 2 and v.phase_combo.currentData() in comp.phase_order()
    phase = v.phase_combo.currentData()
    a, b = (comp.phase_values(i, phase)["throughput"] for i in range(2))
    thr = cell(v.summary_model, "Throughput", -1)
    assert thr.data() == f"{b / a:.2f}"
    want = BETTER if b / a >= 1.05 - 1e-9 else WORSE if b / a <= 0.95 + 1e-9 else SAME
    assert thr.data(CLASS_ROLE) == want
    assert QColor(thr.data(Qt.ItemDataRole.BackgroundRole)).name() == \
        CLASS_COLOURS[want].lower()
    assert v.values_panel.keys and v.cursors


def test_chart_menu_and_export_dialog(open_view, sessions, tmp_path, qtbot):
    v = open_view([RunRef(str(p)) for p in sessions])
    texts = [a.text() for a in v.chart_menu("latency").actions()]
    assert "Export Latency as PNG…" in texts and "Export Latency as SVG…" in texts
    assert "Export Latency as PDF…" in texts and "Copy Latency to the clipboard" in texts
    from app.ui.compare.export_dialog import ChartExportDialog
    dlg = ChartExportDialog(v.comp.charts(), "latency", "side-by-side", tmp_path, v)
    qtbot.addWidget(dlg)
    dlg.size_combo.setCurrentIndex(dlg.size_combo.findData(None))       # custom
    dlg.width_spin.setValue(1000)
    dlg.height_spin.setValue(500)
    dlg.scale_combo.setCurrentIndex(dlg.scale_combo.findData(2.0))
    req = dlg.request()
    assert (req.chart, req.fmt, req.size, req.scale, req.mode) == (
        "latency", "png", (1000, 500), 2.0, "side-by-side")
    assert req.path == tmp_path / "latency.png"
    with qtbot.waitSignal(v.export_finished, timeout=20_000):
        v._on_chart_dialog_accepted(dlg)
    img = QImage(str(req.path))
    assert (img.width(), img.height()) == (2000, 1000)
    v.copy_chart("throughput", (640, 360))
    from PySide6.QtGui import QGuiApplication
    assert QGuiApplication.clipboard().image().width() == 640
