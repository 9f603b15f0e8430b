"""The saved suite view (issue 20, item 4): it leads with the run's tests table (one row a
test), not a scrolled paragraph per test, and its charts keep a readable height; while a
saved run loads its charts say so (item 10)."""
from tests.recorded import build_run

PHASES = ("prepare", "point-query.warmup", "point-query", "scan.warmup", "scan",
          "update-index.warmup", "update-index")


def test_a_saved_suite_leads_with_its_tests_table(make_window, qtbot, tmp_path):
    run = build_run(tmp_path / "suite.versus", "rs", rate=1000, p95=1, idle=50, phases=PHASES,
                    workload="micro", version="PostgreSQL 15.8",
                    rates={"point-query": 21000, "scan": 35, "update-index": 5200})
    w = make_window()
    w.resize(1366, 768)
    v = w.session_view
    with qtbot.waitSignal(w.session_loaded, timeout=20_000):
        w.open_files([run])
        # while it loads, the charts say so (not "waiting for the first sample")
        said = {t.toPlainText() for t in v.dashboard._waiting.values()}
        assert said == {"loading the saved run…"}, said
    qtbot.wait(50)
    assert v.split.widget(0) is v.bottom_tabs                     # the tests table first
    assert v.bottom_tabs.currentWidget() is v.steps_table
    tests = [v.steps_table.item(r, 0).text() for r in range(v.steps_table.rowCount())]
    assert tests == ["prepare", "point-query", "scan", "update-index"]     # no warm-ups
    assert not v.result_scroll.isVisible()                    # no paragraph per test
    assert v.view_tabs.height() >= 480                        # charts a reader can read
