"""The headline strip and the crosshair (issue 14, item 4): the workload's declared result
metrics current and as a phase mean while a run goes, the declared result once its phase has
a summary, p95/p99, errors and the client's CPU share, each saying where it comes from; and a
hover readout on every chart that reads exactly the plotted points."""
import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.analysis.results import new_store
from app.model.track import Track
from app.ui.charts.headline import figures
from workloads.registry import get

from .stream import recorded_run, recorded_tpcc_run
from .test_main_window import points, replay_factory


def by_key(figs):
    return {f.key: f for f in figs}


def test_while_running_the_headline_is_the_last_interval_and_the_phase_mean():
    events = recorded_run(measure_s=30, prepare_s=2)
    cut = next(i for i, e in enumerate(events) if e["kind"] == "sample"
               and e["interval"][1] > 20)
    store = new_store()
    store.ingest(events[:cut + 1])
    f = by_key(figures(store))
    samples = [e for e in events[:cut + 1] if e["kind"] == "sample"]
    assert f["qps"].title == "QPS" and f["qps"].unit == "QPS"
    assert f["qps"].value == f"{samples[-1]['rate']:,.0f}"
    t0 = next(e["t"] for e in events if e["kind"] == "phase" and e["name"] == "measure")
    ts = np.array([s["interval"][1] for s in samples])
    w = np.diff(np.concatenate(([t0], ts)))
    mean = float((np.array([s["rate"] for s in samples]) * w).sum() / w.sum())
    assert f"mean {mean:,.0f}" in f["qps"].detail
    assert "client count" in f["qps"].source and "last interval" in f["qps"].source
    lat = samples[-1]["lat_ms"]["all"]
    assert f["latency"].value.startswith(f"{lat['p95']:.3g}")
    assert f["client-cpu"].unit == "% of host" and "8 cores" in f["client-cpu"].source


def test_after_the_phase_the_declared_result_and_its_source():
    events = recorded_tpcc_run(measure_s=10, rampup_s=3, vus=2)
    store = new_store()
    store.ingest(events)
    f = by_key(figures(store))
    result = next(e for e in events if e["kind"] == "summary" and e["phase"] == "measure")
    assert [k for k in f][:2] == ["nopm", "tpm"]          # headline first, from the spec
    assert f["nopm"].value == f"{result['result']['nopm']:,}"
    assert f["tpm"].value == f"{result['result']['tpm']:,}"
    assert "result of measure" in f["nopm"].detail
    assert f["errors"].value == "0" and "phase summary" in f["errors"].source
    assert get("tpcc").headline.key == "nopm"


def test_phase_mean_is_time_weighted():
    track = Track()
    for t, v in ((1.0, 10.0), (2.0, 20.0), (2.5, 40.0)):
        track.append(t, v)
    mean, covered = track.mean(0.5, None)
    assert covered == pytest.approx(2.0)
    assert mean == pytest.approx((10 * 0.5 + 20 * 1.0 + 40 * 0.5) / 2.0)


def test_live_and_saved_views_show_the_strip(make_window, qtbot):
    w = make_window(controller_factory=replay_factory(recorded_run(measure_s=12), batch=20))
    assert not w.headline.isVisible()                    # nothing to say before a run
    with qtbot.waitSignal(w.run_ended, timeout=30_000):
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    strip = w.headline
    assert strip.isVisible() and list(strip.tiles)[:1] == ["qps"]
    summary = next(s for s in w.store.summaries() if s.get("phase") == "measure")
    assert strip.text("qps") == f"{summary['rate']:,.0f}"
    assert strip.tiles["qps"].toolTip()
    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() > 0
                    and w.session_tree.topLevelItem(0).childCount() > 0, timeout=10_000)
    with qtbot.waitSignal(w.session_loaded, timeout=15_000):
        w._on_session_tree_activated(w.session_tree.topLevelItem(0).child(0))
    saved = w.session_view.headline
    assert saved.isVisible() and saved.text("qps") == strip.text("qps")
    # another workload chosen: the live strip goes with the charts
    w.workload_combo.setCurrentIndex(w.workload_combo.findData("tpcc"))
    assert not strip.isVisible()
    assert strip.tiles == {} and strip.layout().count() == 1     # no tile left behind


def test_crosshair_reads_the_plotted_points_on_every_chart(make_window, qtbot):
    w = make_window(controller_factory=replay_factory(recorded_run(measure_s=12), batch=20))
    with qtbot.waitSignal(w.run_ended, timeout=30_000):
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    dash = w.dashboard
    x, y = points(dash.curves["throughput"])
    t = float(x[5]) + 0.3                     # inside the interval that ends at x[6]
    vb = dash.plots["throughput"].getViewBox()
    scene = vb.mapViewToScene(pg_point(t, float(y[5])))
    dash.crosshair.move_to(scene)
    assert dash.crosshair.t == pytest.approx(t, abs=0.05)
    text = dash.crosshair.text_of(dash.plots["throughput"])
    assert f"{y[5]:,.0f}" in text                # the point at or before the mouse
    for key, plot in dash.plots.items():         # every chart marks the moment
        assert dash.crosshair.text_of(plot)
        line, _ = dash.crosshair._items[id(plot)]
        assert line.isVisible() and line.value() == pytest.approx(t, abs=0.05)
    dash.crosshair.hide()
    assert not any(line.isVisible() for line, _ in dash.crosshair._items.values())


def test_crosshair_in_the_compare_view(tmp_path, qtbot):
    from app.model.runset import RunRef
    from app.ui.compare.view import CompareWidget
    from tests.recorded import build_run
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    b = build_run(tmp_path / "b.versus", "rb", rate=1300, p95=1.5, idle=40)
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    with qtbot.waitSignal(v.comparison_loaded, timeout=15_000):
        v.set_runs([RunRef(str(a)), RunRef(str(b))])
    v.crosshair.show_at(5.5)
    text = v.crosshair.text_of(v.plot("throughput"))
    assert "1 1,000" in text and "2 1,300" in text
    assert "p95" in v.crosshair.text_of(v.plot("latency"))
    v.tasks.wait(5000)


def pg_point(x, y):
    from PySide6.QtCore import QPointF
    return QPointF(x, y)
