"""The main window: defaults, a recorded stream through the worker path, saved runs, errors."""
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.remote.errors import UnknownHostKey
from app.remote.runner import RunOutcome

from .stream import ReplayController, recorded_run


def replay_factory(events, batch=7, delay=0.0, created=None):
    def factory(request, catalog=None, on_events=None, on_status=None):
        c = ReplayController(request, catalog, on_events, on_status, events=events,
                             batch=batch, delay=delay)
        if created is not None:
            created.append(c)
        return c
    return factory


def points(curve):
    """What the PlotDataItem was given (getData() would be clipped to the visible range)."""
    return curve.xData if curve.xData is not None else [], \
        curve.yData if curve.yData is not None else []


def open_boxes(window, name):
    return [b for b in window.findChildren(QMessageBox, name) if b.isVisible()]


def test_defaults_this_computer_and_embedded_postgres_with_point_query(make_window):
    w = make_window()
    assert w.host_list.currentItem().text() == "This computer"
    assert w.target_list.currentItem().text() == "Embedded PostgreSQL"
    assert w.selected_host() == "local" and w.selected_target() == "embedded-postgres"
    assert w.workload_name() == "point-query"
    assert w.form.widget("duration").value() == 60
    assert w.run_button.isEnabled() and not w.stop_button.isEnabled()
    assert w.actions["run"].shortcut().toString() == "Ctrl+R"
    assert w.actions["stop"].shortcut().toString() == "Ctrl+."
    # Charts say what they show and in which unit.
    assert "QPS (clients' count)" in w.dashboard.plots["throughput"].titleLabel.text
    assert w.dashboard.plots["throughput"].getAxis("left").labelText == "QPS"
    assert w.dashboard.plots["latency"].getAxis("left").labelText == "ms"
    assert w.dashboard.plots["cpu"].getAxis("left").labelText == "%"
    assert w.log_view.maximumBlockCount() > 0


def test_recorded_stream_fills_the_charts_through_the_worker_path(make_window, qtbot):
    events = recorded_run(measure_s=60)
    w = make_window(controller_factory=replay_factory(events, batch=5, delay=0.002))
    redraws = []
    original = w.dashboard.refresh
    w.dashboard.refresh = lambda *a, **k: redraws.append(1) or original(*a, **k)

    with qtbot.waitSignal(w.run_ended, timeout=30_000) as ended:
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
        assert not w.run_button.isEnabled() and w.stop_button.isEnabled()
    outcome = ended.args[0]
    assert isinstance(outcome, RunOutcome) and outcome.status == "ok"

    x, y = points(w.dashboard.curves["throughput"])
    assert len(x) == 60 and 15_000 < float(y.mean()) < 28_000
    assert x[0] == pytest.approx(events[0]["t"] + 5.05, abs=0.1)    # interval end of 1st sample
    for name in ("latency.p50", "latency.p95", "latency.p99"):
        assert len(points(w.dashboard.curves[name])[0]) == 60
    for name in ("cpu.user", "cpu.system", "cpu.iowait", "cpu.idle"):
        assert len(points(w.dashboard.curves[name])[0]) == 64   # prepare + measure
    # The x axes are linked: zooming one zooms all.
    assert w.dashboard.plots["cpu"].getViewBox().linkedView(0) is \
        w.dashboard.plots["throughput"].getViewBox()
    # Coalesced: far fewer redraws than batches delivered.
    batches = len(events) // 5
    assert 0 < len(redraws) < batches
    log = w.log_view.toPlainText()
    assert "Phase measure started" in log and "Run ended: ok" in log
    assert w.phase_label.text() == "Finished" and w.progress.value() == 1000
    assert w.run_button.isEnabled() and not w.stop_button.isEnabled()
    assert not open_boxes(w, "error_box")


def test_progress_shows_phase_elapsed_and_remaining(make_window, qtbot):
    events = recorded_run(measure_s=60)
    # Stop feeding half way through the measure phase to look at the progress bar.
    cut = next(i for i, e in enumerate(events) if e["kind"] == "sample"
               and e["interval"][1] > 34) + 1
    w = make_window(controller_factory=replay_factory(events[:cut], batch=50))
    with qtbot.waitSignal(w.run_ended, timeout=30_000):
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    # Read the live state the clock timer would show, as if the run were still going.
    w._run_params = {"duration": 60, "warmup": 0}
    w._request = replace(w._request, params=w._run_params)
    w._run_t0_wall = __import__("time").monotonic() - 40
    w._worker = object()                  # progress is only drawn while a run is going
    try:
        w._update_progress()
    finally:
        w._worker = None
    assert w.phase_label.text().startswith("Measure · 0:30 of 1:00")
    assert 450 <= w.progress.value() <= 550
    assert "about 0:30 left" in w.time_label.text()


def test_stop_button_stops_without_blocking(make_window, qtbot):
    events = recorded_run(measure_s=3000)
    created = []
    w = make_window(controller_factory=replay_factory(events, batch=3, delay=0.01,
                                                      created=created))
    qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.store.count("throughput") > 5, timeout=20_000)
    with qtbot.waitSignal(w.run_ended, timeout=20_000) as ended:
        qtbot.mouseClick(w.stop_button, Qt.MouseButton.LeftButton)
        assert w.state_label.text() == "Stopping…"
    assert ended.args[0].status == "stopped"
    assert w.phase_label.text() == "Stopped"
    assert w.store.count("throughput") < 3000


def test_failure_becomes_a_sentence_not_a_traceback(make_window, qtbot):
    from app.remote.errors import Unreachable

    class Failing:
        def __init__(self, *a, **k):
            pass

        def run(self):
            raise Unreachable("bench-1:22 did not answer within 10 s; check the address "
                              "and that sshd runs")

        def stop(self):
            pass

    w = make_window(controller_factory=Failing)
    with qtbot.waitSignal(w.run_ended, timeout=10_000):
        w.actions["run"].trigger()
    boxes = open_boxes(w, "error_box")
    assert len(boxes) == 1
    assert boxes[0].text().startswith("bench-1:22 did not answer")
    assert "Traceback" not in boxes[0].text() and "Traceback" not in w.log_view.toPlainText()
    assert "bench-1:22 did not answer" in w.statusBar().currentMessage()
    boxes[0].accept()
    assert w.run_button.isEnabled()


def test_unknown_host_key_is_shown_and_accepting_retries_with_it(make_window, qtbot):
    requests = []
    events = recorded_run(measure_s=5)

    def factory(request, catalog=None, on_events=None, on_status=None):
        requests.append(request)

        class C(ReplayController):
            def run(self):
                if request.accept_host_key is None:
                    raise UnknownHostKey("bench-1", 22, "ssh-ed25519", "SHA256:abcDEF123")
                return super().run()
        return C(request, catalog, on_events, on_status, events=events)

    w = make_window(controller_factory=factory)
    with qtbot.waitSignal(w.run_ended, timeout=10_000):
        w.actions["run"].trigger()
    qtbot.waitUntil(lambda: bool(open_boxes(w, "host_key_box")), timeout=5_000)
    box = open_boxes(w, "host_key_box")[0]
    assert "SHA256:abcDEF123" in box.informativeText()
    accept = next(b for b in box.buttons() if b.text() == "Accept and connect")
    with qtbot.waitSignal(w.run_ended, timeout=10_000) as ended:
        qtbot.mouseClick(accept, Qt.MouseButton.LeftButton)
    assert ended.args[0].status == "ok"
    assert [r.accept_host_key for r in requests] == [None, "SHA256:abcDEF123"]


def test_bad_parameter_is_refused_before_running(make_window, qtbot):
    started = []
    w = make_window(controller_factory=lambda *a, **k: started.append(1))
    w.form.widget("duration").setValue(0)        # clamped to the minimum by the widget
    assert w.form.values()["duration"] == 1
    w.form.set_spec(replace(w.form.spec, params=tuple(
        replace(p, min=10) if p.name == "duration" else p for p in w.form.spec.params)))
    w.form.widget("duration").setMinimum(1)
    w.form.widget("duration").setValue(2)
    from workloads.registry import get
    # The registry's spec (min 1) accepts 2; a value the workload refuses is reported.
    w.form.widget("clients").setMaximum(5000)
    w.form.widget("clients").setValue(5000)
    w.actions["run"].trigger()
    boxes = open_boxes(w, "error_box")
    assert boxes and "clients must be at most 1024" in boxes[0].text()
    assert not started and not w.is_running()
    assert get("point-query").param("clients").max == 1024


def test_saved_run_opens_with_charts_and_summary(make_window, qtbot):
    events = recorded_run(measure_s=30)
    w = make_window(controller_factory=replay_factory(events, batch=20))
    with qtbot.waitSignal(w.run_ended, timeout=30_000):
        qtbot.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() == 1
                    and w.session_tree.topLevelItem(0).childCount() == 1, timeout=10_000)
    run_item = w.session_tree.topLevelItem(0).child(0)
    assert "point-query" in run_item.text(0) and "[ok]" in run_item.text(0)
    rect = w.session_tree.visualItemRect(run_item)
    with qtbot.waitSignal(w.session_loaded, timeout=10_000):
        qtbot.mouseClick(w.session_tree.viewport(), Qt.MouseButton.LeftButton,
                         pos=rect.center())
    view = w.session_view
    assert w.tabs.currentWidget() is view
    assert len(points(view.dashboard.curves["throughput"])[0]) == 30
    assert len(points(view.dashboard.curves["latency.p99"])[0]) == 30
    table = view.table
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert "measure" in names
    row = names.index("measure")
    assert "QPS" in table.item(row, 3).text()
    from app.ui.saved.session_view import SUMMARY_COLUMNS
    p50 = table.item(row, SUMMARY_COLUMNS.index("p50 ms")).text()
    assert p50 not in ("", "–")                                # p50 from the histograms
    assert "20250101-120000-abc123" in view.header.text()


def test_corrupt_session_file_is_listed_not_fatal(make_window, qtbot, tmp_path):
    (tmp_path / "sessions").mkdir(exist_ok=True)
    (tmp_path / "sessions" / "broken.versus").write_bytes(b"not sqlite at all" * 100)
    w = make_window()
    qtbot.waitUntil(lambda: w.session_tree.topLevelItemCount() == 1, timeout=10_000)
    item = w.session_tree.topLevelItem(0)
    assert "unreadable" in item.text(0)
    assert "not a Versus session" in item.toolTip(0)
