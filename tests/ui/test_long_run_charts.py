"""The live charts of a 10-hour run: a 1-s stall still drawn at full zoom-out, redraws that
hand the curves as many points at hour 10 as at hour 1, hidden charts left alone."""
import numpy as np
import pytest

from app.analysis.results import new_store
from app.ui.charts.dashboard import DashboardWidget

HOUR = 3_600
STALL = 3 * HOUR + 1_234         # the stalled second


def samples(first, last):
    """1-s samples of a steady 12,000 QPS, with nothing done in second STALL."""
    for i in range(first, last + 1):
        rate = 0.0 if i == STALL else 12_000.0
        yield {"v": 1, "seq": i, "t": float(i), "kind": "sample", "phase": "measure",
               "interval": [i - 1.0, float(i)], "rate": rate, "unit": "QPS", "clients": 2,
               "ops": {"point": int(rate)}, "errors": {},
               "lat_ms": {"all": {"p50": 0.2, "p95": 0.5, "p99": 0.9, "max": 3.0}}}


@pytest.fixture
def dash(qtbot):
    store = new_store()
    w = DashboardWidget(store)
    qtbot.addWidget(w)
    w.resize(1366, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def given(curve):
    return (curve.xData if curve.xData is not None else np.zeros(0),
            curve.yData if curve.yData is not None else np.zeros(0))


def test_a_one_second_stall_stays_drawn_at_full_zoom_out_of_ten_hours(dash):
    dash.store.ingest(samples(1, 10 * HOUR))
    assert dash.refresh()
    curve = dash.curves["throughput"]
    x, y = curve.getData()              # what is drawn: clipped to the view, downsampled
    assert len(x) < 10 * HOUR
    assert y.min() == 0.0 and y.max() == 12_000.0
    at = x[y == 0.0]
    assert np.all(np.abs(at - STALL) < 60)        # where it happened, nowhere else
    lo, hi = dash.plots["cpu"].getViewBox().viewRange()[0]
    assert lo <= 0.0 and hi >= 10 * HOUR          # the whole run is on screen


def test_a_redraw_hands_the_curves_as_many_points_at_hour_ten_as_at_hour_one(dash):
    dash.store.ingest(samples(1, HOUR))
    dash.refresh()
    at_one = len(given(dash.curves["throughput"])[0])
    dash.store.ingest(samples(HOUR + 1, 10 * HOUR))
    dash.refresh()
    at_ten = len(given(dash.curves["throughput"])[0])
    columns = dash._columns()
    assert at_one <= 2 * columns + 4 and at_ten <= 2 * columns + 4
    assert at_ten <= at_one * 1.2


def test_zooming_into_the_stall_reads_it_again_at_full_resolution(dash, qtbot):
    dash.store.ingest(samples(1, 10 * HOUR))
    dash.refresh()
    dash._follow = False
    # the last minutes: every second is there
    dash.plots["cpu"].setXRange(10 * HOUR - 300, 10 * HOUR, padding=0)
    qtbot.waitUntil(lambda: given(dash.curves["throughput"])[0].min() > 9 * HOUR,
                    timeout=5_000)
    x, _y = given(dash.curves["throughput"])
    inside = x[(x >= 10 * HOUR - 300) & (x <= 10 * HOUR)]
    assert np.array_equal(inside, np.arange(10 * HOUR - 300, 10 * HOUR + 1, dtype=float))
    # hour 3, older than the full-resolution window: the stall is still drawn at 0
    dash.plots["cpu"].setXRange(STALL - 1_800, STALL + 1_800, padding=0)
    qtbot.waitUntil(lambda: given(dash.curves["throughput"])[0].max() < 5 * HOUR,
                    timeout=5_000)
    x, y = given(dash.curves["throughput"])
    assert y.min() == 0.0 and np.all(np.abs(x[y == 0.0] - STALL) < 60)


def test_a_hidden_dashboard_draws_nothing_until_shown(dash, qtbot):
    dash.store.ingest(samples(1, 60))
    dash.refresh()
    dash.hide()
    dash.store.ingest(samples(61, 120))
    assert not dash.refresh()
    assert given(dash.curves["throughput"])[0].max() == 60.0
    dash.show()
    qtbot.waitUntil(lambda: given(dash.curves["throughput"])[0].max() == 120.0,
                    timeout=5_000)


def test_a_zoom_into_a_part_older_than_the_store_keeps_reads_the_session_file(qtbot, tmp_path):
    from app.store.session import SessionFile, series_between
    path = tmp_path / "long.versus"
    evs = list(samples(1, 2 * HOUR))
    with SessionFile(path, readonly=False) as sf:
        sf.add_run("r1", "point-query", "t", "local", {})
        sf.append_events("r1", evs)
    store = new_store(recent=600, buckets=64)     # 2 h: all but 10 min in wide buckets
    store.ingest(evs)
    w = DashboardWidget(store)
    qtbot.addWidget(w)
    w.resize(1366, 700)
    w.show()
    qtbot.waitExposed(w)
    w.refresh()
    lo, hi = 3_000.0, 3_300.0
    # without the file, the store's buckets (about 2 minutes each) are all there is
    w._follow = False
    w.plots["cpu"].setXRange(lo, hi, padding=0)
    w.refresh(force=True)
    x, _y = given(w.curves["throughput"])
    assert len(x[(x >= lo) & (x <= hi)]) < 20
    w.detail = lambda names, t0, t1: series_between(path, "r1", names, t0, t1)
    w.refresh(force=True)
    qtbot.waitUntil(lambda: len(given(w.curves["throughput"])[0]) > 300, timeout=10_000)
    x, y = given(w.curves["throughput"])
    inside = (x >= lo) & (x <= hi)
    assert np.array_equal(x[inside], np.arange(lo, hi + 1))
    assert np.all(y[inside] == 12_000.0)
