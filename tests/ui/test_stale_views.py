"""Nothing of one run shows under another's titles (issue 14, item 2): after a workload
switch the live charts, phase marks, axis ranges and virtual-user table start empty, a second
run shows only its own series, and a saved run that is loading hides the one shown before."""
from PySide6.QtCore import Qt

from .stream import ReplayController, recorded_run, recorded_tpcc_run
from .test_main_window import points


def by_workload(created=None):
    """Replays the recorded stream of whichever workload the run asks for."""
    def factory(request, catalog=None, on_events=None, on_status=None):
        events = (recorded_tpcc_run(measure_s=8, rampup_s=3, vus=3) if request.workload == "tpcc"
                  else recorded_run(measure_s=12, prepare_s=2, clients=4))
        return ReplayController(request, catalog, on_events, on_status, events=events,
                                batch=20)
    return factory


def choose(w, name):
    w.workload_combo.setCurrentIndex(w.workload_combo.findData(name))


def run(w, qtbot):
    with qtbot.waitSignal(w.run_ended, timeout=30_000) as ended:
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    assert ended.args[0].status == "ok"


def drawn(dash):
    """{series: n points} of every curve that shows something."""
    return {k: len(points(c)[0]) for k, c in dash.curves.items() if len(points(c)[0])}


def marks(dash):
    return [line.value() for line in dash._markers["throughput"]]


def assert_empty(w):
    dash = w.dashboard
    assert drawn(dash) == {}
    assert all(not lines for lines in dash._markers.values())
    for key, plot in dash.plots.items():
        (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
        assert x0 >= -0.5 and x1 <= 12            # the run clock from zero, not the last run
        assert y1 <= (105 if key == "cpu" else 1.1)
    assert w.vu_model.rowCount() == 0


def assert_only_own_series(w):
    dash, store = w.dashboard, w.store
    shown = drawn(dash)
    assert shown and set(shown) <= set(store.names())
    for k, n in shown.items():
        x, y = points(dash.curves[k])
        t, v = store.snapshot(k)
        assert list(x) == t and list(y) == v, k
    starts = sorted(t0 for _n, t0, _e in store.phases())
    assert marks(dash) and set(marks(dash)) <= set(starts)


def test_a_second_run_after_a_workload_switch_shows_only_its_own_series(make_window, qtbot):
    w = make_window(controller_factory=by_workload())
    run(w, qtbot)                                        # point-query
    assert "throughput" in drawn(w.dashboard) and w.vu_model.rowCount() == 4
    choose(w, "tpcc")
    assert_empty(w)
    run(w, qtbot)
    assert_only_own_series(w)
    assert "server.tpm" in drawn(w.dashboard) and w.vu_model.rowCount() == 3
    assert not w.vu_view.isColumnHidden(2)                # home warehouses
    choose(w, "point-query")
    assert_empty(w)
    run(w, qtbot)
    assert_only_own_series(w)
    assert not any(k.startswith(("server.tpm", "latency.new-order")) for k in drawn(w.dashboard))
    assert w.vu_model.rowCount() == 4 and w.vu_view.isColumnHidden(2)
    # y ranges fit this run: throughput ~21,000 QPS, not TPROC-C's NOPM scale
    y = points(w.dashboard.curves["throughput"])[1]
    top = w.dashboard.plots["throughput"].getViewBox().viewRange()[1][1]
    assert y.max() <= top <= 2 * y.max()


def test_live_time_axis_starts_at_zero_and_an_empty_chart_says_it_waits(make_window, qtbot):
    w = make_window()
    dash = w.dashboard
    for key, plot in dash.plots.items():
        assert dash._waiting[key].isVisible()
        assert plot.getViewBox().viewRange()[0][0] >= -0.5
    # values are not labelled on an empty throughput axis (no 0.0002 steps)
    assert not dash.plots["throughput"].getAxis("left").style["showValues"]


def test_one_sample_is_drawn_as_a_dot(make_window, qtbot):
    from app.model.series import SeriesStore
    w = make_window()
    store = SeriesStore()
    store.ingest([ev for ev in recorded_run(measure_s=1, prepare_s=1)
                  if ev["kind"] in ("hello", "phase", "sample", "host")])
    w.dashboard.set_store(store)
    curve = w.dashboard.curves["throughput"]
    assert len(points(curve)[0]) == 1 and curve.opts["symbol"] == "o"
    assert not w.dashboard._waiting["throughput"].isVisible()


def test_a_loading_saved_run_hides_the_one_shown_before(make_window, qtbot):
    w = make_window(controller_factory=by_workload())
    run(w, qtbot)
    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() > 0
                    and w.session_tree.topLevelItem(0).childCount() > 0, timeout=10_000)
    item = w.session_tree.topLevelItem(0).child(0)
    with qtbot.waitSignal(w.session_loaded, timeout=15_000):
        w._on_session_tree_activated(item)
    view = w.session_view
    assert drawn(view.dashboard) and view.table.rowCount() >= 1
    view.show_loading("other.versus", "r2")
    assert drawn(view.dashboard) == {} and view.table.rowCount() == 0
    assert not view.result.isVisible() and view.vu_model.rowCount() == 0
    assert "Loading run r2" in view.header.text()
