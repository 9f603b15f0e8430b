"""Where the CPU went, read from recorded real agent output (tests/fixtures/streams): the
derivation of the new host/db fields, per-phase CPU by process group per operation, the
server's perf figures with "not available: <reason>", the client-limit sentence, the
perf-trace grid, the flame graph of a recorded profile, and the CLI's show and export."""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from app.analysis import cpu, flame
from app.analysis.compare import load_comparison
from app.analysis.results import new_store, result_text
from app.analysis.metrics import spec_of
from app.model import derive
from app.model.runset import RunRef
from tests.dbs import versus
from tests.recorded import load, session_of


def _comp(name, tmp_path):
    return load_comparison([RunRef(str(session_of(name, tmp_path)))])


def test_host_and_db_events_derive_groups_client_and_gauges():
    evs = load("tpcc-pg")
    host = next(e for e in evs if e["kind"] == "host" and e.get("client"))
    vals = derive.interval_values(host)
    for g, v in host["cpu_groups"].items():
        assert vals[f"cpu.group.{g}"] == pytest.approx(v["user"] + v["system"])
    assert vals["client.cores"] == host["client"]["driver_cores"]
    assert vals["client.limited"] == (1.0 if host["client"]["limited"] else 0.0)
    db = next(e for e in evs if e["kind"] == "db")
    dv = derive.interval_values(db)
    assert dv["db.numbackends"] == db["gauges"]["numbackends"]          # a level, not /s
    assert derive.kind_of("client.vu_wait") == "host"
    my = next(e for e in load("tpcc-mariadb") if e["kind"] == "db")
    assert derive.interval_values(my)["db.Threads_running"] == my["gauges"]["Threads_running"]


@pytest.mark.parametrize("name", ["tpcc-pg", "tpcc-mariadb", "point-query-pg"])
def test_phase_groups_add_up_and_divide_by_the_phases_operations(name, tmp_path):
    comp = _comp(name, tmp_path)
    run = comp.runs[0]
    phase = next(p.name for p in run.phases if p.name == "measure")
    groups = cpu.phase_groups(run, phase)
    assert "server.fg" in groups and "driver" in groups and "other" in groups
    busy = comp.phase_values(0, phase)
    total = sum(g["pct"] for g in groups.values())
    # the groups are the busy CPU of /proc/stat (every mode but idle and iowait: user,
    # system, irq, softirq, nice; these recordings have no steal), within 5 %
    host_busy = 100.0 - busy["cpu.idle"] - busy["cpu.iowait"]
    assert total == pytest.approx(host_busy, rel=0.05), (total, host_busy)
    ops = cpu.phase_ops(run, phase)
    fg = groups["server.fg"]
    assert fg["us_per_op"] == pytest.approx(fg["cpu_s"] * 1e6 / ops)
    # the agent's own per-phase totals (summary.cpu_groups, whole intervals inside the
    # phase) give the same rate of server CPU as the app's (every interval, by overlap)
    agent = run.summaries[phase].lookup("cpu_groups")
    assert agent["server"].startswith(("PostgreSQL postmaster", "MySQL/MariaDB server"))
    fg_s = agent["groups"]["server.fg"]["user_s"] + agent["groups"]["server.fg"]["system_s"]
    a, b = cpu.phase_interval(run, phase)
    span = agent["span"][1] - agent["span"][0]
    assert fg["cpu_s"] / (b - a) == pytest.approx(fg_s / span, rel=0.3)


def test_tables_give_groups_per_operation_and_perf_with_its_reason(tmp_path):
    comp = _comp("tpcc-pg", tmp_path)
    tables = {t.title: t for t in comp.tables()}
    groups = tables["measure — CPU by process group"]
    assert groups.rows[0][0] == "server foreground (connections)"
    assert [r[0] for r in groups.rows][-1] == "other processes"
    perf = tables["measure — the server's CPU per operation (perf)"]
    rows = {r[0]: r for r in perf.rows}
    assert float(rows["server CPU (task-clock)"][2].replace(",", "")) > 0
    reason = run_reason = comp.runs[0].summaries["measure"].perf.get("hardware_unavailable")
    if run_reason:                                   # this machine: no PMU
        assert rows["hardware counters"][2] == f"not available: {reason}"
        assert "IPC" not in rows                     # never a zero in its place
    else:
        assert float(rows["IPC"][2]) > 0


def test_the_client_limit_is_said_in_the_result_show_and_the_live_store(tmp_path):
    evs = load("point-query-pg-bound")
    comp = _comp("point-query-pg-bound", tmp_path)
    said = cpu.client_limit(comp.runs[0], "measure")
    assert said.startswith("The client limits throughput, not the server: ")
    summ = comp.runs[0].summaries["measure"]
    assert result_text(spec_of("point-query"), summ).endswith(said)
    store = new_store()
    store.ingest(evs)
    assert store.client_limit().startswith("The client limits throughput")
    assert store.names() and "client.limited" in store.names()
    t, v = store.arrays("client.limited")
    assert max(v) == 1.0
    normal = new_store()
    normal.ingest(load("point-query-pg"))
    assert normal.client_limit() is None
    assert cpu.client_limit(_comp("point-query-pg", tmp_path / "n").runs[0], "measure") is None


def test_perf_trace_grid_has_a_cell_per_query_type_and_rows(tmp_path):
    comp = _comp("perf-trace-pg", tmp_path)
    grids = cpu.trace_matrices(comp.runs[0])
    by_title = {g.title: g for g in grids}
    cpu_grid = by_title["server CPU (task-clock) (µs/op) by query type and rows per query"]
    assert cpu_grid.header == ["query", "1 rows", "10 rows"]
    assert [r[0] for r in cpu_grid.rows] == ["select", "update"]
    assert all(float(c.replace(",", "")) > 0 for r in cpu_grid.rows for c in r[1:])
    ipc = by_title["IPC (instr./cycle) by query type and rows per query"]
    hw = comp.runs[0].summaries["select/1"].perf.get("hardware_unavailable")
    if hw:
        assert all(c == "not available" for r in ipc.rows for c in r[1:])
        assert ipc.notes == [f"not available: {hw}"]
    assert grids[0] in comp.tables()[-len(grids):] or any(
        t.title == grids[0].title for t in comp.tables())


def test_flame_graph_of_a_recorded_profile_lays_out_and_exports_svg(tmp_path):
    prof = flame.profiles(load("point-query-pg-profile"))[0]
    frames, total = flame.layout(prof["stacks"])
    assert total == prof["samples"] > 0
    roots = [f for f in frames if f.depth == 0]
    assert sum(f.count for f in roots) == total
    assert math.isclose(sum(f.width for f in roots), 1.0)
    for f in frames:                          # every frame sits on its caller
        if f.depth:
            caller = next(c for c in frames if c.path == f.path.rsplit(";", 1)[0])
            assert caller.x - 1e-9 <= f.x and f.x + f.width <= caller.x + caller.width + 1e-9
    # zoom: the focused frame fills the width
    deep = max(frames, key=lambda f: (f.depth, f.count))
    zf, _ = flame.layout(prof["stacks"], focus=deep.path)
    assert any(f.path == deep.path and f.width == 1.0 for f in zf)
    doc = ET.fromstring(flame.svg(prof["stacks"], "profile", subtitle=flame.describe(prof)))
    assert doc.tag.endswith("svg")
    assert len(doc.findall(".//{http://www.w3.org/2000/svg}rect")) >= len(roots) + 1


def test_show_and_export_flamegraph_on_the_command_line(tmp_path, versus_home):
    path = session_of("point-query-pg-profile", tmp_path)
    r = versus("show", str(path))
    assert r.returncode == 0, r.stderr
    assert "CPU by process group (% of host): server foreground (connections)" in r.stdout
    assert "server (perf stat): server CPU (task-clock)" in r.stdout
    out = tmp_path / "flame.svg"
    r = versus("export", str(path), "--flamegraph", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "CPU of the server in measure" in text and re.search(r"server\.fg \(\d", text)
    r = versus("export", str(session_of("point-query-pg", tmp_path / "p")), "--flamegraph",
               str(tmp_path / "none.svg"))
    assert r.returncode == 2
    assert "has no CPU profile: record one with 'versus run … --profile SECONDS'" in r.stderr
    bound = session_of("point-query-pg-bound", tmp_path / "b")
    r = versus("show", str(bound))
    assert "The client limits throughput, not the server" in r.stdout
