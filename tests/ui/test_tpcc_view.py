"""TPROC-C in the GUI: NOPM next to server TPM, latency per transaction type, the
virtual-user table, and a parameter form grouped as HammerDB users think."""
import pytest
from PySide6.QtCore import Qt

from tests.dbs import pg_db, versus  # noqa: F401 - pg_db is a fixture

from .stream import TPCC_TYPES, recorded_tpcc_run
from .test_main_window import open_boxes, points, replay_factory


def choose_tpcc(w):
    w.workload_combo.setCurrentIndex(w.workload_combo.findData("tpcc"))
    assert w.form.spec.name == "tpcc"


def vu_rows(model):
    return [[model.data(model.index(r, c), Qt.ItemDataRole.UserRole)
             for c in range(model.columnCount())] for r in range(model.rowCount())]


def watch_vu_table(model):
    """Every state of the table the window drew: [(phase, rows)]."""
    seen = []
    model.dataChanged.connect(lambda *_: seen.append((model.phase(), vu_rows(model))))
    model.modelReset.connect(lambda: seen.append((model.phase(), vu_rows(model))))
    return seen


def intervals_with(events, name):
    """Samples in which transaction type `name` has a latency (it ran in that interval)."""
    return sum(1 for e in events if e["kind"] == "sample"
               and isinstance((e.get("lat_ms") or {}).get(name), dict)
               and e["lat_ms"][name].get("p95") is not None)


def assert_tpcc_charts(dash, n_samples, events):
    title = dash.plots["throughput"].titleLabel.text
    assert "NOPM · client new orders; TPM · server commits+rollbacks" in title
    assert dash.workload == "tpcc" and "latency.p95" not in dash.curves
    nx, ny = points(dash.curves["throughput"])          # the client's NOPM per interval
    tx, ty = points(dash.curves["server.tpm"])
    assert len(nx) == n_samples and len(tx) >= n_samples - 2
    # TPM counts every transaction type, NOPM only new orders: about 2.2x apart while the
    # virtual users run (the server's counters are charted during the load too).
    running = ty[(tx > nx[0] + 0.5) & (tx < nx[-1] - 0.5)]
    assert len(running) >= 2
    assert 1.3 < float(running.mean()) / float(ny.mean()) < 5
    assert "by transaction type" in dash.plots["latency"].titleLabel.text
    for name in TPCC_TYPES:
        assert name in dash.plots["latency"].titleLabel.text       # the legend
        x, y = points(dash.curves[f"latency.{name}.p95"])
        # a point for every interval in which the type ran: under load a rare type
        # (4 % of the mix) can miss several intervals of a short run
        ran = intervals_with(events, name)
        assert len(x) == ran and ran >= 1 and float(y.max()) > 0
    assert len(points(dash.curves["cpu.user"])[0]) >= n_samples - 2


def test_form_groups_parameters_schema_load_driver_run_with_hammerdb_defaults(make_window,
                                                                            qtbot):
    w = make_window()
    assert list(w.form.headings) == ["schema", "run"]            # point-query: two groups
    assert w.form.headings["schema"].text() == "Schema"
    choose_tpcc(w)
    heads = w.form.headings
    assert [h.text() for h in heads.values()] == ["Schema", "Load", "Driver options", "Run"]
    # the point-query form is gone at once, not when its widgets are deleted later
    from PySide6.QtWidgets import QLabel
    shown = {x.text() for x in w.form.findChildren(QLabel) if x.isVisibleTo(w.form)}
    assert "Table size" not in shown and "Distribution" not in shown
    assert {"Warehouses", "Virtual users", "Keying and thinking times"} <= shown

    def y_of(name):
        widget = w.form.widget(name)
        return widget.mapTo(w.form, widget.rect().topLeft()).y()

    def in_order():
        ys = [h.mapTo(w.form, h.rect().topLeft()).y() for h in heads.values()]
        # Each heading above its own parameters, top to bottom in that order.
        return ys[0] < y_of("warehouses") < y_of("partition") < ys[1] < y_of("load-clients") \
            < ys[2] < y_of("vus") < y_of("keying-thinking") < ys[3] < y_of("rampup") \
            < y_of("duration")

    qtbot.waitUntil(in_order, timeout=5_000)       # (once the new form is laid out)
    v = w.form.values()
    assert v["rampup"] == 120 and v["duration"] == 300            # HammerDB's 2 and 5 minutes
    assert v["keying-thinking"] is False and v["partition"] is False
    # The dashboard shows what a TPROC-C run will draw before it starts.
    assert w.dashboard.workload == "tpcc" and "server.tpm" in w.dashboard.curves


def test_recorded_tproc_c_stream_draws_nopm_tpm_latency_by_type_and_virtual_users(
        make_window, qtbot):
    events = recorded_tpcc_run(measure_s=20, rampup_s=5, vus=2)
    w = make_window(controller_factory=replay_factory(events, batch=4, delay=0.05))
    choose_tpcc(w)
    seen = watch_vu_table(w.vu_model)
    with qtbot.waitSignal(w.run_ended, timeout=30_000) as ended:
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    assert ended.args[0].status == "ok" and not open_boxes(w, "error_box")

    assert_tpcc_charts(w.dashboard, n_samples=25, events=events)
    assert w.dashboard.plots["throughput"].getAxis("left").labelText == "per minute"
    # TPM from the server counters: (commits + rollbacks - the monitor's poll) x 60.
    db = [e for e in events if e["kind"] == "db"]
    c = db[3]["counters"]
    assert points(w.dashboard.curves["server.tpm"])[1][3] == pytest.approx(
        (c["xact_commit"] + c["xact_rollback"] - 1) * 60.0)

    # The virtual-user table: two users, home warehouse 1, transactions rising in a phase.
    assert w.vu_model.rowCount() == 2 and w.vu_view.isVisible()
    rows = vu_rows(w.vu_model)
    assert [r[0] for r in rows] == [1, 2] and [r[2] for r in rows] == ["1", "1"]
    assert all(r[1] == "ended" and r[3] > 0 and r[4] == 0 for r in rows)
    # Drawn on the redraw timer while it ran: the counts of each phase only go up.
    # (a loaded machine may draw the short rampup only once it is over: then it has no rows)
    for phase in ("rampup", "measure"):
        counts = [r[0][3] for p, r in seen if p == phase and r and r[0][3] is not None]
        assert counts == sorted(counts), (phase, counts)
    assert counts, "the measured phase was drawn while it ran"
    # 20 s of measure: rising while it ran (a loaded machine may redraw it only twice)
    assert len(set(counts)) >= 2 and counts[-1] == rows[0][3]
    assert not w.vu_view.isColumnHidden(2)
    header = w.vu_model.headerData(2, Qt.Orientation.Horizontal)
    assert header == "Home warehouse"
    assert w.vu_model.data(w.vu_model.index(0, 1)) == "ended"
    assert "measure phase" in w.vu_model.data(w.vu_model.index(0, 1), Qt.ItemDataRole.ToolTipRole)


def test_point_query_dashboard_is_unchanged_and_hides_the_home_column(make_window, qtbot):
    from .stream import recorded_run
    w = make_window(controller_factory=replay_factory(recorded_run(measure_s=10), batch=20))
    with qtbot.waitSignal(w.run_ended, timeout=30_000):
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    assert w.dashboard.workload == "point-query"
    assert "server.tpm" not in w.dashboard.curves
    assert len(points(w.dashboard.curves["throughput"])[0]) == 10
    assert "QPS (clients' count)" in w.dashboard.plots["throughput"].titleLabel.text
    # This recorded point-query carries no per-user totals: its clients, without numbers.
    rows = vu_rows(w.vu_model)
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    assert all(r[1] == "ended" and r[3] is None for r in rows)
    assert w.vu_model.data(w.vu_model.index(0, 3)) == "–"
    assert w.vu_view.isColumnHidden(2)          # no home warehouses: no empty column


@pytest.mark.timeout(300)
def test_real_tproc_c_session_from_postgresql_drives_the_window_and_reopens(
        make_window, qtbot, pg_db, tmp_path):  # noqa: F811
    """A real TPROC-C run (CLI, the machine's PostgreSQL, 1 warehouse) recorded to a session;
    its events go through the worker path, then the saved run opens from the Sessions list."""
    from app.store.session import SessionFile
    out = tmp_path / "real.versus"
    r = versus("run", "--target", pg_db, "--workload", "tpcc", "--set", "warehouses=1",
               "--set", "load-clients=2", "--set", "vus=2", "--set", "rampup=1",
               "--duration", "4", "--out", str(out), timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    sf = SessionFile(out, readonly=True)
    events = sf.events(sf.runs()[-1].id)
    sf.close()
    n = sum(1 for e in events if e["kind"] == "sample")
    w = make_window(controller_factory=replay_factory(events, batch=3, delay=0.02))
    choose_tpcc(w)
    with qtbot.waitSignal(w.run_ended, timeout=60_000):
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    assert_tpcc_charts(w.dashboard, n_samples=n, events=events)
    rows = vu_rows(w.vu_model)
    assert len(rows) == 2 and all(r[2] == "1" and r[3] > 0 for r in rows)

    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() >= 1
                    and w.session_tree.topLevelItem(0).childCount() == 1, timeout=10_000)
    item = w.session_tree.topLevelItem(0).child(0)
    with qtbot.waitSignal(w.session_loaded, timeout=20_000):
        qtbot.mouseClick(w.session_tree.viewport(), Qt.MouseButton.LeftButton,
                         pos=w.session_tree.visualItemRect(item).center())
    view = w.session_view
    assert_tpcc_charts(view.dashboard, n_samples=n, events=events)
    # The measured result as HammerDB defines it, with its sources and the cross-checks
    res = next(e["result"] for e in events if e["kind"] == "summary" and e.get("result"))
    text = view.result.text()
    assert view.result.isVisible()
    assert f"measure: {res['nopm']:,} NOPM · {res['tpm']:,} TPM" in text
    assert "SUM(d_next_o_id)" in text and "pg_stat_database" in text
    assert f"client {res['client']['nopm']:,} NOPM" in text
    # ... and in the run log when the run ended
    log = w.log_view.toPlainText()
    assert f"Result of measure: {res['nopm']:,} NOPM" in log
    assert view.bottom_tabs.isTabVisible(1) and view.bottom_tabs.tabText(1) == "Virtual users (2)"
    assert vu_rows(view.vu_model) == rows
    view.bottom_tabs.setCurrentIndex(1)
    assert view.vu_view.isVisible()
