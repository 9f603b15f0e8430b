"""Suite matrices and the regression gate on runs built with exactly known values."""
from __future__ import annotations

import math

import pytest

from app.analysis.compare import load_comparison
from app.analysis.matrix import gate, has_groups, load_sides, step_rows, suite_matrix
from app.model.runset import BETTER, NA, SAME, WORSE, RunRef
from app.store.export import tables_text
from tests.dbs import versus
from tests.recorded import build_run

PHASES = ("prepare", "point-query.pre", "update-index", "point-query", "read-only_range=10",
          "scan", "insert")


def _micro(path, rid, rates, idle=50.0, version="PostgreSQL 15.8"):
    return build_run(path, rid, rate=1000, p95=1, idle=idle, phases=PHASES,
                     workload="micro", rates=rates, version=version)


@pytest.fixture
def two(tmp_path):
    a = _micro(tmp_path / "a.versus", "ra", {"point-query": 1000, "point-query.pre": 1000,
                                              "update-index": 200, "read-only_range=10": 400,
                                              "scan": 10, "insert": 100})
    b = _micro(tmp_path / "b.versus", "rb", {"point-query": 1200, "point-query.pre": 940,
                                              "update-index": 202, "read-only_range=10": 300,
                                              "scan": 10.4, "insert": 100}, idle=60,
               version="PostgreSQL 18.1")
    return a, b


def test_rows_are_the_steps_grouped_as_the_workload_declares(two):
    comp = load_comparison([RunRef(str(p)) for p in two])
    assert has_groups(comp)
    rows = step_rows(comp)
    assert [g for _, g in rows] == ["Point queries", "Point queries",
                                    "Range queries without aggregation",
                                    "Range queries with aggregation", "Writes", "Writes"]
    # a test's reads before the writes sit beside its reads after them; no load, no warm-up
    assert [p for p, _ in rows] == ["point-query.pre", "point-query", "scan",
                                    "read-only_range=10", "insert", "update-index"]


def test_relative_qps_and_colours(two):
    comp = load_comparison([RunRef(str(p)) for p in two])
    m = suite_matrix(comp, "throughput", base=0)
    assert m.title.startswith("QPS relative to run 1")
    got = {r.phase: (r.ratios[1].text(), r.ratios[1].cls, r.ratios[0].cls) for r in m.rows}
    assert got == {"point-query": ("1.20", BETTER, SAME), "point-query.pre": ("0.94", WORSE, SAME),
                   "update-index": ("1.01", SAME, SAME), "read-only_range=10": ("0.75", WORSE, SAME),
                   "scan": ("1.04", SAME, SAME), "insert": ("1.00", SAME, SAME)}
    tables = m.tables()
    assert [t.title.split(":")[0] for t in tables] == [
        "Point queries", "Range queries without aggregation", "Range queries with aggregation",
        "Writes"]
    assert tables[0].rows[0] == ["point-query.pre", "1.00", "0.94", "1,000"]
    assert tables[0].header[-1] == "1: PostgreSQL 15.8 (QPS)"
    md = tables_text(tables, "markdown")
    assert "| point-query | 1.00 | 1.20 ▲ | 1,000 |" in md
    html = tables_text(tables, "html")
    assert html.count('class="worse"') == 2 and html.count('class="better"') == 1
    # the other run as base turns the sense around
    m1 = suite_matrix(comp, "throughput", base=1)
    assert m1.row("point-query").ratios[0].text() == "0.83"
    assert m1.row("point-query").ratios[0].cls == WORSE


def test_an_efficiency_matrix_where_lower_is_better(two):
    comp = load_comparison([RunRef(str(p)) for p in two])
    m = suite_matrix(comp, "eff.cpu_us", base=0)
    # CPU busy 50 % × 4 cores vs 40 % × 4 cores; ops per second 1000 vs 1200 in point-query
    r = m.row("point-query")
    assert r.values[0] == pytest.approx(2000.0) and r.values[1] == pytest.approx(1333.33, rel=1e-3)
    assert r.ratios[1].text() == "0.67" and r.ratios[1].cls == BETTER
    assert "from /proc on the benchmark host, sampled every second" in m.notes[0]
    assert suite_matrix(comp, "eff.reads", base=0).row("insert").values[0] == \
        pytest.approx(10.0 / 100)


def test_a_run_without_a_test_is_na(two, tmp_path):
    c = build_run(tmp_path / "c.versus", "rc", rate=500, p95=1, idle=50,
                  phases=("prepare", "point-query"), workload="micro")
    comp = load_comparison([RunRef(str(two[0])), RunRef(str(c))])
    m = suite_matrix(comp, "throughput", base=0)
    assert m.row("insert").ratios[1].cls == NA and m.row("point-query").ratios[1].text() == "0.50"


def test_gate_with_repeated_runs_tells_noise_from_a_regression(tmp_path):
    # base: three runs at 1000 ± 10; new: point-query 900 (clearly lower), update-index 0.93
    # on average but within the base's own ±10 % noise, insert the same
    base = tmp_path / "base.versus"
    new = tmp_path / "new.versus"
    for i, (pq, ui) in enumerate(((1000, 1000), (1010, 1100), (990, 900))):
        _micro(base, f"b{i}", {"point-query": pq, "update-index": ui})
    for i, (pq, ui) in enumerate(((900, 950), (905, 920), (895, 910))):
        _micro(new, f"n{i}", {"point-query": pq, "update-index": ui}, version="PostgreSQL 18.1")
    comp, sides = load_sides([RunRef(str(base)), RunRef(str(new))])
    assert sides == [[0, 1, 2], [3, 4, 5]]
    g = gate(comp, sides, 0.95)
    assert [r.phase for r in g.failed] == ["point-query"]
    pq = g.failed[0]
    assert pq.interval.method == "repeats" and pq.interval.high < 0.95
    assert pq.ratio == pytest.approx(math.exp(
        sum(map(math.log, (900, 905, 895))) / 3 - sum(map(math.log, (1000, 1010, 990))) / 3))
    assert pq.beyond_spread is True
    unsure = {r.phase: r for r in g.inconclusive}
    assert set(unsure) == {"update-index"}
    assert unsure["update-index"].interval.low < 0.95 < unsure["update-index"].interval.high
    assert g.outcome == "fail"
    text = g.text()
    assert "FAIL: 1 of 6 tests below the threshold" in text
    assert "INCONCLUSIVE: 1 of 6 tests straddle the threshold" in text
    assert "more repeat" in text or "straddles" in text
    assert "Welch's t on log values" in text
    assert gate(comp, sides, 0.85).failed == []
    assert gate(comp, sides, 0.85).outcome != "fail"


def test_compare_cli_prints_the_matrix_and_gates(two, tmp_path, versus_home):
    a, b = two
    r = versus("compare", str(a), str(b), "--matrix", "throughput,eff.cpu_us")
    assert r.returncode == 0, r.stderr
    assert "**Point queries: QPS relative to run 1 (PostgreSQL 15.8)**" in r.stdout
    assert "**Writes: CPU per op relative to run 1" in r.stdout
    assert "| point-query | 1.00 | 1.20 ▲ | 1,000 |" in r.stdout
    assert "Latency p95" not in r.stdout              # a suite: its matrices, not 2 × 7 tables
    r = versus("compare", str(a), str(b), "--fail-below", "0.95")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL: 2 of 6 tests below the threshold" in r.stdout
    assert "point-query.pre" in r.stdout and "read-only_range=10" in r.stdout
    r = versus("compare", str(a), str(b), "--fail-below", "0.7")
    assert r.returncode == 0 and "PASS: all 6 tests" in r.stdout
    r = versus("compare", str(a), str(b), "--fail-below", "95")
    assert r.returncode == 2 and "between 0 and 1" in r.stderr
    r = versus("compare", str(a), "--fail-below", "0.95")
    assert r.returncode == 2 and "two sides" in r.stderr
    out = tmp_path / "m.csv"
    r = versus("compare", str(a), str(b), "--matrix", "--csv", "--out", str(out))
    assert r.returncode == 0 and "point-query,1.00,1.20,\"1,000\"" in out.read_text()


def test_a_suites_title_slide_sums_up_every_step_not_the_last_one(two):
    from app.analysis.deck import key_results
    comp = load_comparison([RunRef(str(p)) for p in two])
    (line,) = key_results(comp, 0)
    # ratios 1.2, 0.94, 1.01, 0.75, 1.04, 1.0 over the six steps (prepare is a load)
    g = math.exp(sum(map(math.log, (1.2, 0.94, 1.01, 0.75, 1.04, 1.0))) / 6)
    assert f"{g:.2f}× run 1" in line and "over 6 steps" in line
    assert "1 faster, 2 slower" in line
    assert "insert" not in line              # not the last step's figure
