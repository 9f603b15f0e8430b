"""Every reader over recorded real agent output (tests/fixtures/streams, recorded by
tests/fixtures/record_streams.py): the event format, the live store, the session file's
derived series, show, compare in every format and the table exports. A change to the event
format that breaks a reader fails here."""
from __future__ import annotations

import json
import math

import pytest

from app.analysis.compare import load_comparison
from app.analysis.results import new_store
from app.analysis.summary import summarize_run
from app.model.phase import PhaseSummary
from app.model.runset import RunRef
from app.store.export import tables_text, to_json
from app.store.session import SessionFile
from workloads import events as ev_format
from tests.recorded import STREAMS, load, session_of
from workloads.registry import get as get_workload

NAMES = sorted(p.stem for p in STREAMS.glob("*.jsonl"))
KEYS = ("throughput", "latency.p95", "cpu.user", "server.tpm", "errors")


def test_the_recorded_streams_are_there():
    assert {"point-query-pg", "point-query-mariadb", "tpcc-pg", "tpcc-mariadb",
            "point-query-pg-stopped", "point-query-pg-failed"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_stream_parses_and_has_exactly_the_declared_phases(name):
    evs = load(name)
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    assert all(e["kind"] in ev_format.KINDS for e in evs)
    hello = evs[0]
    spec = get_workload(hello["workload"])
    started = [e for e in evs if e["kind"] == "phase" and e["state"] == "start"]
    declared = {p.name: p for p in spec.planned_phases(hello["params"])}
    for e in started:
        assert e["name"] in declared, e["name"]
        assert e["role"] == declared[e["name"]].role
    end = evs[-1]
    assert end["kind"] == "end"
    if end["status"] == "ok":
        names = [e["name"] for e in started]
        assert names == [n for n in declared if n in names]       # declared order
        # the measured phase ran (a suite's steps, when it has none)
        assert [p for p in declared if declared[p].role in ("measured", "step")][0] in names


@pytest.mark.parametrize("name", NAMES)
def test_live_store_and_reopened_session_give_the_same_points(name, tmp_path):
    evs = load(name)
    live = new_store()
    for i in range(0, len(evs), 5):         # batches, as the follower delivers them
        live.ingest(evs[i:i + 5])
    comp = load_comparison([RunRef(str(session_of(name, tmp_path)))])
    for key in KEYS:
        t, v = live.snapshot(key)
        ct, cv = comp.series(0, key)
        assert list(ct) == pytest.approx(t) and list(cv) == pytest.approx(v), key
    assert live.snapshot("throughput")[0], "a run with samples has a throughput series"
    assert live.state().status == evs[-1]["status"]


@pytest.mark.parametrize("name", NAMES)
def test_show_summary_reads_every_phase(name, tmp_path):
    path = session_of(name, tmp_path)
    with SessionFile(path) as s:
        summ = summarize_run(s, s.runs()[0].id)
    evs = load(name)
    assert summ["status"] == evs[-1]["status"]
    phases = {p["name"]: p for p in summ["phases"]}
    spec = get_workload(evs[0]["workload"])
    declared = {p.name: p for p in spec.planned_phases(evs[0]["params"])}
    for p in summ["phases"]:
        if p["role"] == "load" and p["throughput_mean"] is not None:
            # rows/s, or the unit the load declares (the insert benchmark's l.i0: inserts/s)
            assert p["throughput_unit"] == (declared[p["name"]].unit or "rows/s")
        if p["role"] == "measured" and p["throughput_mean"] is not None:
            assert p["throughput_unit"] == spec.throughput_unit
            assert p["throughput_mean"] > 0 and p["latency_ms"]["p95"] > 0
            assert p["cpu"]["user"] is not None
    if evs[-1]["status"] == "failed":
        assert summ["errors"] and summ["reason"]
    if name.startswith("tpcc") and evs[-1]["status"] == "ok":
        m = phases["measure"]
        keys = {r["key"]: r for r in m["results"]}
        assert keys["nopm"]["value"] == m["result"]["nopm"] > 0
        assert keys["tpm"]["value"] == m["result"]["tpm"] > keys["nopm"]["value"]
        assert "SUM(d_next_o_id)" in keys["nopm"]["source"]
        assert ("pg_stat_database" if "pg" in name else "Com_commit") in keys["tpm"]["source"]
        assert f"{m['result']['tpm']:,} TPM" in m["result_text"]


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("tpcc")])
def test_compare_carries_tpm_nopm_and_their_sources_in_every_format(name, tmp_path):
    a = session_of(name, tmp_path / "a") if (tmp_path / "a").mkdir() is None else None
    b = session_of(name, tmp_path / "b") if (tmp_path / "b").mkdir() is None else None
    comp = load_comparison([RunRef(str(a)), RunRef(str(b))])
    res = next(e for e in load(name) if e["kind"] == "summary" and e["phase"] == "measure")
    tables = comp.tables(0, ["load", "measure"])
    md = tables_text(tables, "markdown")
    tpm_rows = [line for line in md.splitlines() if line.startswith("| TPM |")]
    assert len(tpm_rows) == 1 and f"{res['result']['tpm']:,}" in tpm_rows[0]
    assert any(line.startswith("| NOPM |") for line in md.splitlines())
    assert "TPM: " in md and "NOPM: change in SUM(d_next_o_id)" in md
    # the load phase's throughput is rows/s, the measured phase's NOPM
    load_rows = [r for r in tables[0].rows if r[0] == "Throughput"]
    assert load_rows and load_rows[0][1] == "rows/s"
    measure = next(t for t in tables if t.title.startswith("measure"))
    assert next(r for r in measure.rows if r[0] == "Throughput")[1] == "NOPM"
    data = json.loads(to_json(comp.to_json(0, ["load", "measure"])))
    tpm = data["phases"]["measure"]["tpm"]
    assert tpm["values"] == [res["result"]["tpm"]] * 2 and tpm["sources"][0]
    assert data["phases"]["load"]["throughput"]["unit"] == "rows/s"
    csv = tables_text(tables, "csv")
    assert "TPM" in csv and "rows/s" in csv


@pytest.mark.parametrize("name", NAMES)
def test_compare_and_table_exports_work_on_every_stream(name, tmp_path):
    comp = load_comparison([RunRef(str(session_of(name, tmp_path)))])
    for fmt in ("markdown", "html", "csv"):
        assert tables_text(comp.tables(0), fmt)
    seconds, cols = comp.series_columns()
    assert seconds and cols
    assert all(not (isinstance(x, float) and math.isnan(x))
               for _, col in cols for x in col if x is not None)
    json.loads(to_json(comp.series_json()))


def test_a_suites_step_table_and_missed_sla_in_show_compare_and_exports(tmp_path):
    """The insert benchmark's stream: one row per step in show and the exports, the step
    asked for an impossible background rate flagged everywhere, the others not."""
    from app.analysis.results import result_text
    evs = load("insert-benchmark-pg")
    path = session_of("insert-benchmark-pg", tmp_path)
    with SessionFile(path) as s:
        summ = summarize_run(s, s.runs()[0].id)
    steps = [p.name for p in get_workload("insert-benchmark").planned_phases(evs[0]["params"])]
    rows = summ["step_table"]["rows"]
    assert [r["phase"] for r in rows] == steps
    flagged = {r["phase"] for r in rows if r["flags"]}
    assert flagged == {"qr1000000", "qp1000000"}
    for r in rows:
        assert r["values"]["ib-rate"] > 0 and r["values"]["ib-db-size"] > 0, r
        if r["phase"].startswith("q"):
            assert r["values"]["ib-qps"] > 0 and r["values"]["ib-rpq"] > 0
            assert r["values"]["latency.p99"] > 0 and r["values"]["eff.cpu_us"] > 0
    phases = {p["name"]: p for p in summ["phases"]}
    assert phases["qr1000000"]["flags"][0]["name"] == "missed SLA"
    assert "flags" not in phases["qr100"]
    summary = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "qr1000000")
    assert "MISSED SLA" in result_text(get_workload("insert-benchmark"), PhaseSummary.of(summary))
    comp = load_comparison([RunRef(str(path))])
    tables = comp.tables(0)
    assert "per step" in tables[0].title and len(tables[0].rows) == len(steps)
    for fmt in ("markdown", "html", "csv"):
        assert "missed SLA" in tables_text(tables, fmt)
    data = json.loads(to_json(comp.to_json(0)))
    assert [r["phase"] for r in data["steps"]["1"]["rows"]] == steps
    assert data["flags"]["qr1000000"][0][0]["name"] == "missed SLA"


def test_timings_are_series_of_their_own_apart_from_the_operations():
    """Transfers' round trips: latency and count series per round trip; the operations (and
    their latency over all types) are transfers and rejections only."""
    from app.model.derive import interval_values
    evs = load("transfers-mariadb")
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    busy = [e for e in samples if e["counters"]["transfers"]]
    assert busy
    for e in busy:
        v = interval_values(e)
        per_s = sum(e["ops"].values()) / (e["interval"][1] - e["interval"][0])
        assert v["ops"] == pytest.approx(per_s) and set(e["ops"]) == {"transfer", "rejection"}
        for rt in ("rt1-token", "rt2-lock", "rt3-move", "rt4-commit"):
            assert v[f"latency.{rt}.p99"] > 0 and v[f"timing.{rt}"] > 0
    m = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
    assert m["ops_total"] == m["counters"]["transfers"] + m["counters"]["rejections"]
    assert m["timings"]["rt1-token"]["n"] >= m["ops_total"]
    assert m["check"]["ok"] and m["result"]["money_violations"] == 0


def test_a_summary_without_its_duration_does_not_claim_zero_seconds():
    """A summary that lost its duration_s (a damaged or foreign stream) says so; it printed
    "over 0.0 s"."""
    from app.analysis.results import result_text
    summary = next(e for e in load("tpcc-pg") if e["kind"] == "summary"
                   and e["phase"] == "measure")
    text = result_text(get_workload("tpcc"),
                       PhaseSummary.of({k: v for k, v in summary.items() if k != "duration_s"}))
    assert "over 0.0 s" not in text and "over a period the summary does not give" in text
    assert f"over {summary['duration_s']:,.1f} s" in result_text(get_workload("tpcc"),
                                                               PhaseSummary.of(summary))
