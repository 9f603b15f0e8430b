"""The per-phase derivation (app.model.phase): spans, summaries, and that it is the only reader
of summary events in the app."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.model.phase import PhaseSpan, PhaseSummary, phase_spans, summaries
from workloads import events as ev_format

APP = Path(__file__).resolve().parents[2] / "app"
# keys only a summary body has (lat_ms, rate, unit, driver_cpu … are in other events too)
SUMMARY_ONLY = {"ops_total", "errors_total", "clients_lost", "clients_asked", "hist"}


def _summary_reads(path: Path) -> list[str]:
    """Where a module picks summary events by kind or reads a summary-only key."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        consts: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            consts = [node.left, *node.comparators]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            consts = list(node.elts)
        if any(isinstance(c, ast.Constant) and c.value == "summary" for c in consts):
            found.append(f"{path.name}:{node.lineno} picks summary events")
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
        if key in SUMMARY_ONLY:
            found.append(f"{path.name}:{node.lineno} reads {key!r}")
    return found


def test_summary_events_are_read_in_one_module():
    readers = {str(p.relative_to(APP)): _summary_reads(p) for p in sorted(APP.rglob("*.py"))}
    assert readers.pop("model/phase.py"), "the check no longer sees the one reader"
    assert {k: v for k, v in readers.items() if v} == {}


def _summary(**body):
    return PhaseSummary.of({"kind": "summary", "t": 70.0, "phase": "measure", **body})


def test_a_summary_by_name_and_by_path():
    s = _summary(rate=1234, unit="QPS", duration_s=60, ops_total=74040, errors_total=6,
                 lat_ms={"all": {"p50": 1.5, "p95": 4.0, "p99": 9.0, "max": 30}},
                 counters={"queries": 120000}, result={"qps": 1234.0},
                 interval=[10.0, 70.0], server={"counter": "xact_commit", "delta": 9})
    assert (s.phase, s.rate, s.unit, s.duration_s, s.ops_total) == ("measure", 1234, "QPS", 60,
                                                                    74040)
    assert s.error_rate == pytest.approx(0.1)
    assert s.latency == {"p50": 1.5, "p95": 4.0, "p99": 9.0, "max": 30.0}
    assert s.latency_max == 30
    assert s.interval == (10.0, 70.0)
    assert s.value("counters.queries/s") == pytest.approx(2000.0)
    assert s.value("result.qps") == 1234.0 and s.lookup("server.counter") == "xact_commit"
    assert s.ops() == 74040 and s.ops("counters.queries") == 120000
    assert s.stated() and s.check is None and s.clients_lost == []


def test_latency_from_the_merged_histograms_where_the_summary_has_them():
    a = [[ev_format.bucket_of(us), 1] for us in (100, 200, 300)]      # as the agent sends
    b = [[ev_format.bucket_of(50_000), 1]]
    s = _summary(lat_ms={"all": {"p99": 0.3}}, hist={"read": a, "write": b})
    merged: dict[int, int] = {}
    for h in (a, b):
        ev_format.merge_sparse(merged, h)
    assert s.latency["p99"] == pytest.approx(ev_format.percentiles(merged)["p99"])
    assert s.latency["p99"] > 10                  # the write's 50 ms, not the stated 0.3


def test_what_is_not_a_summary_and_what_a_summary_lacks():
    assert PhaseSummary.of({"kind": "sample", "phase": "measure"}) is None
    assert PhaseSummary.of({"kind": "summary"}) is None          # no phase named
    s = _summary(duration_s=3.5, source="sysbench prepare", rate="fast", interval=[5, 5])
    assert not s.stated() and s.rate is None and s.interval is None
    assert s.latency == {} and s.error_rate is None and s.value("result.tps") is None


def test_spans_and_the_last_summary_of_each_phase():
    evs = [{"kind": "phase", "state": "start", "name": "load", "t": 0.0},
           {"kind": "phase", "state": "end", "name": "load", "t": 5.0},
           {"kind": "summary", "phase": "load", "t": 5.0, "duration_s": 5},
           {"kind": "phase", "state": "start", "name": "measure", "t": 5.0, "role": "measured"},
           {"kind": "summary", "phase": "measure", "t": 9.0, "rate": 1},
           {"kind": "summary", "phase": "measure", "t": 10.0, "rate": 2}]
    assert phase_spans(evs) == [PhaseSpan("load", 0.0, 5.0, None),
                                PhaseSpan("measure", 5.0, None, "measured")]
    got = summaries(evs)
    assert list(got) == ["load", "measure"] and got["measure"].rate == 2
