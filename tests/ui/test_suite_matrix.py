"""The Compare view's suite matrix: micro runs built with exactly known values give grouped
rows, relative QPS and a cost per operation with their colours; a click on a cell opens the
two runs' charts aligned on that test; exports carry one table per group."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.model.runset import BETTER, CLASS_COLOURS, SAME, WORSE, RunRef
from app.ui.compare.suite_matrix import CLASS_ROLE, PHASE_ROLE, StepChartsWindow
from tests.recorded import build_run

from .test_compare_view import LOAD_MS, open_view  # noqa: F401  (fixture)

PHASES = ("prepare", "point-query.pre", "update-index", "point-query", "read-only_range=10",
          "scan", "insert")


@pytest.fixture
def micro_runs(tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=1, idle=50, phases=PHASES,
                  workload="micro", version="PostgreSQL 15.8",
                  rates={"point-query.pre": 1000, "update-index": 200,
                         "read-only_range=10": 400, "scan": 10, "insert": 100})
    b = build_run(tmp_path / "b.versus", "rb", rate=1200, p95=1, idle=60, phases=PHASES,
                  workload="micro", version="PostgreSQL 18.1",
                  rates={"point-query.pre": 940, "update-index": 202,
                         "read-only_range=10": 300, "scan": 10.4, "insert": 100})
    return a, b


def _row(model, phase):
    for r in range(model.rowCount()):
        if model.index(r, 0).data(PHASE_ROLE) == phase:
            return r
    raise AssertionError(f"no row {phase!r}")


def test_grouped_relative_qps_and_a_cost_matrix(open_view, micro_runs):  # noqa: F811
    v = open_view([RunRef(str(p)) for p in micro_runs])
    page = v.suite_matrix
    assert page.applies()
    tabs = v.table_tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == [
        "Summary per phase", "Matrix", "Suite matrix", "Settings"]
    m = page.qps_model
    titles = [m.index(r, 0).data() for r in m.group_rows()]
    assert titles == ["Point queries", "Range queries without aggregation",
                      "Range queries with aggregation", "Writes"]
    assert page.qps_view.columnSpan(m.group_rows()[0], 0) == m.columnCount()
    pq = _row(m, "point-query")
    assert m.index(pq, 2).data() == "1.20" and m.index(pq, 2).data(CLASS_ROLE) == BETTER
    assert m.index(pq, 1).data() == "1.00" and m.index(pq, 1).data(CLASS_ROLE) == SAME
    bg = m.index(_row(m, "point-query.pre"), 2).data(Qt.ItemDataRole.BackgroundRole)
    assert bg.name() == CLASS_COLOURS[WORSE].lower()
    assert m.index(pq, 3).data() == "1,000"                     # the base run's own QPS
    # columns headed by the runs' labels, not "1" and "2"
    assert [m.headerData(c, Qt.Orientation.Horizontal) for c in range(1, 3)] == [
        "1: PostgreSQL 15.8", "2: PostgreSQL 18.1"]
    assert "QPS relative to run 1" in page.title.text()
    assert "from /proc on the benchmark host, sampled every second" in page.hint.text()
    # the second matrix: CPU per statement, lower is better (40 % busy at 1200/s is cheaper)
    page.set_cost("eff.cpu_us")
    c = page.cost_model
    cell = c.index(_row(c, "point-query"), 2)
    assert cell.data() == "0.67" and cell.data(CLASS_ROLE) == BETTER
    # another base run turns the sense around
    v.set_base(1)
    assert m.index(_row(m, "point-query"), 1).data() == "0.83"
    # exports: one table per group for each matrix (a slide each in the deck)
    tables = v.tables.all_tables(v.comp, v.base())
    assert [t.title.split(":")[0] for t in tables][:4] == titles
    assert len(tables) == 8


def test_a_click_opens_the_two_runs_aligned_on_the_test(open_view, micro_runs, qtbot):  # noqa: F811
    v = open_view([RunRef(str(p)) for p in micro_runs])
    v.set_base(0)
    page = v.suite_matrix
    m = page.qps_model
    idx = m.index(_row(m, "read-only_range=10"), 2)
    with qtbot.waitSignal(page.test_chosen) as sig:
        page.qps_view.clicked.emit(idx)
    assert sig.args == ["read-only_range=10", 1]
    w = next(x for x in v.findChildren(StepChartsWindow))
    qtbot.waitUntil(lambda: w.compare.comp is not None and
                    w.compare.comp.align_phase == "read-only_range=10", timeout=LOAD_MS)
    comp = w.compare.comp
    assert [r.label for r in comp.runs] == ["PostgreSQL 15.8", "PostgreSQL 18.1"]
    # both runs' test starts at 0 on the shared time axis
    for r in comp.runs:
        assert r.phase("read-only_range=10").t0 - r.offset == 0.0
    lo, hi = w.compare.plots[0][2].viewRange()[0]
    assert lo < 0 < 10 < hi < 30
    w.close()


def test_runs_of_other_workloads_say_the_page_does_not_apply(open_view, tmp_path):  # noqa: F811
    a = build_run(tmp_path / "p.versus", "rp", rate=1000, p95=1, idle=50)
    v = open_view([RunRef(str(a))])
    assert not v.suite_matrix.applies()
    assert v.table_tabs.indexOf(v.suite_matrix) == -1           # no tab for other workloads
    assert v.tables.all_tables(v.comp, v.base())         # the per-phase tables as before


def test_the_deck_has_a_slide_per_group_and_matrix(open_view, micro_runs, qtbot, tmp_path):  # noqa: F811
    from pptx import Presentation
    v = open_view([RunRef(str(p)) for p in micro_runs])
    out = tmp_path / "suite.pptx"
    v.suite_matrix.set_cost("eff.read_kb")
    with qtbot.waitSignal(v.export_finished, timeout=30_000):
        v.export_deck(out)
    titles = [sh.text_frame.text for s in Presentation(str(out)).slides for sh in s.shapes
              if sh.has_text_frame and sh.text_frame.text.startswith(
                  ("Point queries", "Range queries", "Writes"))]
    # one slide per group: relative QPS with the cost chosen on the page beside it
    assert titles == [f"{g}: QPS relative to run 1 (PostgreSQL 15.8), and KB read per op"
                      for g in ("Point queries", "Range queries without aggregation",
                                "Range queries with aggregation", "Writes")]


def test_the_deck_dialog_offers_the_slides_a_suite_needs(open_view, micro_runs):  # noqa: F811
    from app.analysis.deck import default_slides
    from app.ui.compare.export_dialog import DeckSlidesDialog
    v = open_view([RunRef(str(p)) for p in micro_runs])
    dlg = DeckSlidesDialog(default_slides(v.comp), v)
    assert dlg.slides() == ("matrix", "charts")            # no phase tables, no warm-ups
    dlg.boxes["tables"].setChecked(True)
    assert dlg.slides() == ("matrix", "charts", "tables")
