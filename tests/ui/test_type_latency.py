"""Latency per transaction type (issue 20, item 10): p50, p95 or p99 of each TPROC-C type,
chosen in the chart's menu (it was p95 only)."""
from app.model.series import SeriesStore
from app.ui.charts.dashboard import DashboardWidget
from tests.ui.stream import TPCC_TYPES, recorded_tpcc_run


def test_each_types_p50_p95_or_p99(qtbot):
    dash = DashboardWidget()
    qtbot.addWidget(dash)
    dash.resize(900, 700)
    dash.show()
    store = SeriesStore()
    store.ingest(recorded_tpcc_run(measure_s=10, rampup_s=3, vus=2))
    dash.set_store(store)
    dash.refresh(force=True)
    assert {f"latency.{t}.p95" for t in TPCC_TYPES} <= set(dash.curves)
    menu = dash.chart_menu("latency")
    choices = [a for a in menu.actions() if a.text().startswith("Each type's")]
    assert [a.text() for a in choices] == ["Each type's p50", "Each type's p95",
                                           "Each type's p99"]
    choices[2].trigger()
    assert {f"latency.{t}.p99" for t in TPCC_TYPES} <= set(dash.curves)
    assert not any(k.endswith(".p95") and k != "latency.p95" for k in dash.curves)
    assert "p99" in dash.plots["latency"].titleLabel.text
    curve = dash.curves[f"latency.{TPCC_TYPES[0]}.p99"]
    assert curve.yData is not None and len(curve.yData) > 0
