"""perf on the server's processes (workloads/engine/measure/perf.py): on this machine (a VM without a PMU)
the hardware counters are "not available" with the reason, never zeros; software events and
the CPU profile work; without perf the run says how to install it. perf-trace fills its
query type × rows grid."""
from __future__ import annotations

import os
import re
import threading
import time

import pytest

from tests.faults import cmdline, pids_matching
from tests.workloads.agentrun import local_target, run_agent
from workloads.engine.measure.perf import INSTALL, fold, parse_stat

# perf counts the shared server's processes: other tests' queries beside it would count too
pytestmark = pytest.mark.serial

NO_PMU = not any(os.path.exists(f"/sys/bus/event_source/devices/{d}")
                 for d in ("cpu", "cpu_core", "cpu_atom"))
SERVER_ROOTS = ("server.fg", "server.bg.")


def test_perf_stat_output_parses_unsupported_as_none_and_not_counted_as_zero():
    text = ("# started on Sun Nov 22 21:17:16 2026\n\n"
            "56.55,msec,task-clock,56547920,100.00,0.056,CPUs utilized\n"
            "1750,,context-switches,56547920,100.00,30.947,K/sec\n"
            "<not counted>,,page-faults,0,100.00,,\n"
            "<not supported>,,instructions,0,100.00,,\n")
    assert parse_stat(text) == {"task-clock": 56.55, "context-switches": 1750.0,
                                "page-faults": 0.0, "instructions": None}


def test_perf_script_stacks_fold_root_first_under_the_threads_group():
    script = ("mariadbd 11743 \n"
              "\tffffffff817ab604 recently_deleted\n"
              "\t          ef2605 my_create\n"
              "\t          88da83 create_internal_tmp_table\n\n"
              "mariadbd 11743 \n"
              "\tffffffff817ab604 recently_deleted\n"
              "\t          ef2605 my_create\n"
              "\t          88da83 create_internal_tmp_table\n\n"
              "mariadbd 99 \n\t          f8090 __libc_open64 (inlined)\n")
    got = fold(script, label=lambda tid, comm: "server.fg" if tid == 11743 else comm)
    assert got == {"server.fg;create_internal_tmp_table;my_create;recently_deleted": 2,
                   "mariadbd;__libc_open64": 1}


def _measure(evs, phase="measure"):
    return next(e for e in evs if e["kind"] == "summary" and e["phase"] == phase)


def test_software_events_and_a_profile_of_the_server_with_hardware_said_unavailable(
        tmp_path, pg_db):
    evs = run_agent(tmp_path, "point-query", {"table-size": 2000, "clients": 2, "duration": 4},
                    local_target(pg_db.rsplit("/", 1)[1], "postgres"),
                    extra={"perf": {"stat": True, "profile_s": 2}})
    assert evs[-1]["status"] == "ok", evs[-3:]
    perf = _measure(evs)["perf"]
    assert perf["software"]["task_clock_ms"] > 0 and perf["software"]["context_switches"] > 0
    assert perf["per_op"]["task_clock_us"] > 0
    assert perf["source"].startswith("perf stat -e task-clock,context-switches,")
    if NO_PMU:
        assert "hardware" not in perf               # never zeros
        assert perf["hardware_unavailable"] == (
            "this host has no hardware performance counters (no CPU PMU under "
            "/sys/bus/event_source/devices: a virtual machine without PMU passthrough)")
        said = [e["message"] for e in evs if e["kind"] == "log"
                and e["message"].startswith("perf counters: ")]
        assert said == ["perf counters: software events of the server's processes; hardware "
                        "counters not available: " + perf["hardware_unavailable"]]
    else:
        assert perf["hardware"]["ipc"] > 0
    prof = next(e for e in evs if e["kind"] == "profile")
    assert prof["phase"] == "measure" and prof["samples"] > 0
    assert prof["event"] == ("cpu-clock" if NO_PMU else "cycles")
    assert sum(c for _, c in prof["stacks"]) == prof["samples"]
    assert any(s.startswith(SERVER_ROOTS) for s, _ in prof["stacks"]), prof["stacks"][:5]


def test_without_perf_the_run_says_how_to_install_it(tmp_path, pg_db):
    empty = tmp_path / "bin"
    empty.mkdir()
    evs = run_agent(tmp_path, "point-query", {"table-size": 2000, "clients": 1, "duration": 2},
                    local_target(pg_db.rsplit("/", 1)[1], "postgres"), env={"PATH": str(empty)},
                    extra={"perf": {"stat": True}})
    assert evs[-1]["status"] == "ok", evs[-3:]
    assert _measure(evs)["perf"] == {"unavailable": INSTALL}
    assert f"perf counters: not available: {INSTALL}" in [
        e["message"] for e in evs if e["kind"] == "log"]


def test_perf_stat_is_off_unless_asked_for_and_the_run_says_so(tmp_path, pg_db):
    """Counting every context switch of the server costs throughput (bench/micro.py
    --perf-cost: 8-10 % at 30,000 point queries per second), so a run counts only when asked.
    perf keeps its files in the run's folder, so its command line names tmp_path."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(run_agent(
        tmp_path, "point-query", {"table-size": 2000, "clients": 2, "duration": 3},
        local_target(pg_db.rsplit("/", 1)[1], "postgres"))))
    t.start()
    seen = set()
    while t.is_alive():
        seen.update(c for c in map(cmdline, pids_matching(re.escape(str(tmp_path))))
                    if "perf" in c.split(" ", 1)[0])
        time.sleep(0.1)
    evs = out[0]
    assert evs[-1]["status"] == "ok", evs[-3:]
    assert "perf" not in _measure(evs) and not seen, seen
    assert ("perf counters: off (counting each context switch of the server costs throughput);"
            " turn them on with --perf or Server perf counters in the run panel") in [
        e["message"] for e in evs if e["kind"] == "log"]


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_perf_trace_fills_its_grid_of_query_types_and_rows(request, db, tmp_path):
    url = request.getfixturevalue(db)
    engine = "postgres" if db == "pg_db" else "mariadb"
    evs = run_agent(tmp_path, "perf-trace", {"queries": "select,update", "rows": "1,10",
                                             "seconds": 1, "table-size": 2000},
                    local_target(url.rsplit("/", 1)[1], engine))
    assert evs[-1]["status"] == "ok", evs[-3:]
    starts = [e["name"] for e in evs if e["kind"] == "phase" and e["state"] == "start"]
    assert starts == ["prepare", "select/1", "select/10", "update/1", "update/10"]
    for name in starts[1:]:
        s = _measure(evs, name)
        assert s["ops_total"] > 0 and s["perf"]["per_op"]["task_clock_us"] > 0, s
        assert ("hardware_unavailable" in s["perf"]) == NO_PMU
    roles = {e["name"]: e.get("role") for e in evs if e["kind"] == "phase"
             and e["state"] == "start"}
    assert roles["prepare"] == "load" and roles["update/10"] == "step"


def test_perf_trace_refuses_unknown_query_types_with_a_sentence(tmp_path, pg_db):
    evs = run_agent(tmp_path, "perf-trace", {"queries": "select,delete", "seconds": 1,
                                             "table-size": 100},
                    local_target(pg_db.rsplit("/", 1)[1], "postgres"))
    assert evs[-1]["status"] == "failed"
    assert "queries takes some of select, aggregate, update" in evs[-1]["reason"]


def test_perf_stat_on_processes_that_all_end_says_so():
    """perf stat -p exits 0 by itself when every process it counts has ended (a server
    restarted mid-phase): the phase's perf says that, not "no reason given"."""
    import subprocess
    import time

    from workloads.engine.measure.perf import PerfStat, probe
    proc = subprocess.Popen(["sleep", "1"])
    caps = probe([proc.pid])
    if not caps.perf:
        pytest.skip(f"perf cannot count here: {caps.reason}")
    stat = PerfStat(caps, lambda: [proc.pid])
    stat.start()
    proc.wait()
    time.sleep(0.5)
    out = stat.stop()
    assert out["unavailable"] == ("perf stat ended early: every server process it counted "
                                  "ended (the server stopped or restarted in this phase)"), out
