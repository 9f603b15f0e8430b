"""Axes that hold every plotted value (issue 14, item 1: side-by-side exports and deck slides
dropped the 1-client line off a 9,000–27,000 axis and every p50/p95 line off 1.3–3.5 ms),
at most eight round ticks, and phase labels that are neither clipped nor shared."""
import numpy as np
import pytest

from app.analysis.compare import load_comparison
from app.model.runset import CHARTS, RunRef
from tests.recorded import build_run


@pytest.fixture
def uneven(tmp_path, qapp):
    """A slow and a fast run: 9,000 vs 27,000 QPS, p95 1.3 vs 3.5 ms (p50 = p95/2)."""
    a = build_run(tmp_path / "a.versus", "ra", rate=9000, p95=1.3, idle=70,
                  phases=("rampup", "measure"))
    b = build_run(tmp_path / "b.versus", "rb", rate=27000, p95=3.5, idle=10,
                  phases=("rampup", "measure"), version="PostgreSQL 17.2")
    return load_comparison([RunRef(str(a)), RunRef(str(b))], align="measure")


def plotted(plot):
    """Every (x, y) the plot was given, from its curves."""
    xs, ys = [], []
    for item in plot.listDataItems():
        x, y = item.getOriginalDataset()
        if x is not None and len(x):
            xs.append(np.asarray(x))
            ys.append(np.asarray(y))
    return np.concatenate(xs), np.concatenate(ys)


def assert_holds_data(plot, from_zero=True):
    (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
    x, y = plotted(plot)
    y = y[np.isfinite(y)]
    assert x0 <= x.min() and x.max() <= x1, (x0, x1, x.min(), x.max())
    assert y0 <= y.min() and y.max() <= y1, (y0, y1, y.min(), y.max())
    if from_zero:
        assert y0 <= 0


@pytest.mark.parametrize("mode", ["overlay", "side-by-side"])
@pytest.mark.parametrize("chart", ["throughput", "latency", "cpu"])
def test_exported_chart_axes_hold_every_run_and_start_at_zero(uneven, mode, chart):
    from app.ui.charts.render import ChartScene
    sc = ChartScene(uneven, chart, (1920, 1080), mode=mode)
    try:
        assert len(sc.plots) == (1 if mode == "overlay" else 2)
        for p in sc.plots:
            assert_holds_data(p)
        # linked panes share one range
        assert len({tuple(np.round(p.getViewBox().viewRange()[1], 9)) for p in sc.plots}) == 1
    finally:
        sc.close()


def test_slide_axes_have_at_most_eight_ticks_and_slide_sized_text(uneven):
    from app.ui.charts.render import ChartScene
    for chart in ("throughput", "latency", "cpu"):
        sc = ChartScene(uneven, chart, (1920, 1080))
        try:
            p = sc.plots[0]
            for side in ("left", "bottom"):
                ax = p.getAxis(side)
                ticks = ax.major_ticks()
                assert 2 <= len(ticks) <= 8, (chart, side, ticks)
                assert 18 <= ax.style["tickFont"].pixelSize() <= 24
        finally:
            sc.close()


def test_log_scale_latency_holds_p50_to_p99_in_whole_decades(uneven):
    from app.ui.charts.render import ChartScene
    sc = ChartScene(uneven, "latency", (1920, 1080), log_y=True)
    try:
        p = sc.plots[0]
        (_, _), (y0, y1) = p.getViewBox().viewRange()
        _, y = plotted(p)                       # original values, in ms
        assert y0 <= np.log10(y.min()) and np.log10(y.max()) <= y1
        assert p.getAxis("left").logMode
        assert "log scale" in sc.subtitle.text
    finally:
        sc.close()


def test_compare_view_side_by_side_panes_hold_every_run(uneven, qtbot, tmp_path):
    from app.ui.compare.view import CompareWidget
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    with qtbot.waitSignal(v.comparison_loaded, timeout=15_000):
        v.set_runs([r.ref for r in uneven.runs])
    for mode in ("side-by-side", "overlay"):
        v.set_mode(mode)
        qtbot.wait(50)
        for name, _run, plot in v.plots:
            if CHARTS[name].metrics[0].startswith("eff."):
                continue
            assert_holds_data(plot)
    v.tasks.wait(5000)


def test_log_scale_on_request_in_the_live_and_compare_charts(uneven, qtbot, tmp_path):
    from app.model.series import SeriesStore
    from app.ui.charts.dashboard import DashboardWidget
    from app.ui.compare.view import CompareWidget
    from tests.ui.stream import recorded_run
    dash = DashboardWidget()
    qtbot.addWidget(dash)
    dash.resize(900, 700)
    dash.show()
    store = SeriesStore()
    store.ingest(recorded_run(measure_s=10))
    dash.set_store(store)
    menu = dash.chart_menu("latency")
    act = next(a for a in menu.actions() if a.text() == "Logarithmic scale")
    act.setChecked(True)
    plot = dash.plots["latency"]
    assert plot.getAxis("left").logMode
    _, y = plotted(plot)
    (_, _), (y0, y1) = plot.getViewBox().viewRange()
    assert y0 <= np.log10(y.min()) and np.log10(y.max()) <= y1

    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    with qtbot.waitSignal(v.comparison_loaded, timeout=15_000):
        v.set_runs([r.ref for r in uneven.runs])
    v.set_log_scale("latency", True)
    p = v.plot("latency")
    assert p.getAxis("left").logMode
    _, y = plotted(p)
    (_, _), (y0, y1) = p.getViewBox().viewRange()
    assert y0 <= np.log10(y.min()) and np.log10(y.max()) <= y1
    with qtbot.waitSignal(v.export_finished, timeout=15_000):
        v.export_chart("latency", tmp_path / "lat.svg")
    assert "log scale" in (tmp_path / "lat.svg").read_text()
    v.tasks.wait(5000)
