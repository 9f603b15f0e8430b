"""The saved-run view explains itself as `versus show` does (issue 14, item 5): the server's
version and, per phase, the server-counter cross-check next to the client count; and the
summary's odd-looking numbers are explained (item 8: 31 samples for a 30 s phase, CPU
columns that do not sum to 100 %)."""
import pytest

from app.store.session import SessionFile
from app.ui.saved.session_view import SUMMARY_COLUMNS, load_run
from tests.recorded import record_pg_sessions


@pytest.fixture
def real_run(tmp_path, versus_home):
    """A real 2 s point-query run against the machine's PostgreSQL."""
    return record_pg_sessions(tmp_path, versus_home, n=1, duration=2)[0]


def col(name):
    return SUMMARY_COLUMNS.index(name)


def test_saved_run_shows_server_version_and_counter_cross_check(real_run, qtbot):
    from app.ui.saved.session_view import SessionViewWidget
    with SessionFile(real_run, readonly=True) as s:
        run_id = s.runs()[0].id
        events = s.events(run_id)
    version = next(e["server_version"] for e in events if e.get("server_version"))
    summary = next(e for e in events if e["kind"] == "summary" and e["phase"] == "measure")
    view = SessionViewWidget()
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    view.show_run(load_run(real_run, run_id))
    assert version.startswith("PostgreSQL") and version in view.header.text()
    t = view.table
    row = [t.item(r, 0).text() for r in range(t.rowCount())].index("measure")
    srv = summary["server"]
    shown = t.item(row, col("Server")).text()
    assert shown.endswith("/s")
    assert float(shown[:-2].replace(",", "")) == pytest.approx(srv["rate"], abs=0.51)
    tip = t.item(row, col("Server")).toolTip()
    assert f"{srv['delta']:,}" in tip and srv["source"] in tip and srv["counter"] in tip
    assert srv["counter"] in view.notes.text() and view.notes.isVisible()
    # every number says where it comes from
    for c in range(t.columnCount()):
        assert t.horizontalHeaderItem(c).toolTip()
    # CPU: the named columns and "other" add up to 100 %
    cpu = [float(t.item(row, col(n)).text()) for n in ("CPU user %", "CPU sys %", "iowait %",
                                                        "other %", "idle %")]
    assert sum(cpu) == pytest.approx(100.0, abs=0.3)
    # samples: the partial intervals at the phase's ends are named
    samples = int(t.item(row, col("Samples")).text())
    assert f"{samples} intervals" in t.item(row, col("Samples")).toolTip()


@pytest.mark.faults
def test_saved_run_says_which_virtual_user_was_lost_when_and_why(pg_db, tmp_path, versus_home,
                                                                 qtbot):
    """A real run that lost one of its two virtual users (killed by PID) and went on."""
    from app.ui.saved.session_view import SessionViewWidget
    from tests.workloads.test_lost_clients import run_losing_a_client
    out = tmp_path / "lost.versus"
    r, rid = run_losing_a_client(pg_db, out)
    assert r.returncode == 0, r.stderr[-2000:]
    view = SessionViewWidget()
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    view.show_run(load_run(out, rid))
    text = view.result.text()
    assert view.result.isVisible()
    assert "measure: LOST CLIENTS" in text
    assert "1 of 2 virtual users lost: virtual user " in text and "(killed by SIGKILL)" in text
    assert "tolerated (tolerate-lost-clients=on): 1 of 2 ran to the end" in text


def test_saved_run_says_a_stopped_server_monitor(tmp_path, versus_home, qtbot):
    """A recorded real run whose summaries carry `missing` (the server-counter monitor's
    connection was terminated at 2.1 s): the result says from when and why."""
    from app.ui.saved.session_view import SessionViewWidget
    from tests.recorded import load
    evs = load("point-query-pg")
    lost = {"source": "server counters", "since": 2.1,
            "why": "terminating connection due to administrator command"}
    for e in evs:
        if e["kind"] in ("summary", "end") and e["t"] > 2.1:
            e["missing"] = [lost]
    path = tmp_path / "m.versus"
    with SessionFile(path, readonly=False) as s:
        s.add_run(evs[0]["run_id"], evs[0]["workload"], "recorded", "local", evs[0]["params"])
        s.append_events(evs[0]["run_id"], evs)
        s.finish_run(evs[0]["run_id"], "ok", "")
    view = SessionViewWidget()
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    view.show_run(load_run(path, evs[0]["run_id"]))
    text = view.result.text()
    assert view.result.isVisible()
    assert ("server counters stopped at 2.1 s (terminating connection due to administrator "
            "command): the server cross-check is missing") in text
