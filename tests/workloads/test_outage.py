"""Outages measured: a private PostgreSQL and a private MariaDB killed with SIGKILL and
started again while a run goes on. With reconnect=on the run ends ok, the outage is an event
with its figures and samples go on after it; with reconnect=off the run fails with a
sentence. The shared servers on 5432/3306 are never touched."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.faults import wait_until
from tests.workloads.agentrun import PG15, REPO
from workloads.engine.servers import pgserver
from workloads.engine.servers.managed import ManagedServer, inspect

pytestmark = pytest.mark.faults

MARIADB_CNF = "[mysqld]\ninnodb_buffer_pool_size = 64M\n"


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    data = f.read()
            except OSError:
                continue
            if int(data[data.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(name))
    return out


def kill_and_restart(srv: ManagedServer, down_s: float = 1.0) -> None:
    """SIGKILL the server's main process, wait until it and its children are gone, leave it
    down ``down_s`` seconds, start it again on the same port and wait until it answers."""
    p = srv.proc
    kids = _children(p.pid)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(10)
    # PostgreSQL's backends notice their postmaster died and exit; a new one cannot start
    # while they still hold the old shared memory
    wait_until(lambda: not any(os.path.exists(f"/proc/{k}") for k in kids), 20,
               what="the killed server's processes to exit")
    time.sleep(down_s)
    srv.proc, _ = pgserver.launch(srv._argv(srv.port), srv.log_path, srv.workdir, srv._ids)
    assert srv._wait_ready(time.monotonic() + 60) == "ready", srv.log_path


@pytest.fixture
def private_pg(service_workdir):
    srv = ManagedServer(inspect(PG15), os.path.join(service_workdir, "pg"),
                        "shared_buffers = 32MB\n", service_workdir)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def private_mariadb(service_workdir):
    srv = ManagedServer(inspect("/usr"), os.path.join(service_workdir, "my"), MARIADB_CNF,
                        service_workdir)
    srv.start()
    yield srv
    srv.stop()


class AgentRun:
    """The agent as a real process on a private server; its spooled events."""

    def __init__(self, tmp_path: Path, workload: str, params: dict, srv: ManagedServer):
        self.dir = tmp_path / f"run-{uuid.uuid4().hex[:6]}"
        self.dir.mkdir()
        t = srv.target()
        spec = {"run_id": uuid.uuid4().hex[:12], "workload": workload, "params": params,
                "target": {"engine": t.engine, "address": t.address, "port": t.port,
                           "user": t.user, "database": t.database}}
        (self.dir / "spec.json").write_text(json.dumps(spec))
        self.proc = subprocess.Popen([sys.executable, "-m", "workloads.agent", "run", "--dir",
                                      str(self.dir)], cwd=str(REPO),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def events(self) -> list[dict]:
        path = self.dir / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(ln) for ln in path.read_text().splitlines() if ln.endswith("}")]

    def samples(self, phase: str) -> list[dict]:
        return [e for e in self.events() if e["kind"] == "sample" and e["phase"] == phase]

    def finish(self, timeout: float = 120) -> list[dict]:
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return self.events()


def _fault_mid_run(tmp_path, srv, workload: str, params: dict, phase: str,
                   before_s: int = 4) -> list[dict]:
    run = AgentRun(tmp_path, workload, params, srv)
    try:
        wait_until(lambda: len(run.samples(phase)) >= before_s or run.proc.poll() is not None,
                   90, what=f"{before_s} samples of {phase}")
        assert run.proc.poll() is None, run.proc.stderr.read().decode()[-2000:]
        kill_and_restart(srv)
    except BaseException:
        run.proc.kill()
        raise
    return run.finish()


def _check_outage(evs: list[dict], phase: str) -> dict:
    end = evs[-1]
    assert end["kind"] == "end" and end["status"] == "ok", [e for e in evs
                                                            if e["kind"] in ("error", "end")]
    starts = [e for e in evs if e["kind"] == "outage" and e["state"] == "start"]
    ends = [e for e in evs if e["kind"] == "outage" and e["state"] == "end"]
    assert len(starts) == 1 and len(ends) == 1, [e for e in evs if e["kind"] == "outage"]
    o = ends[0]
    assert o["phase"] == phase and o["id"] == starts[0]["id"] == 1
    assert o["first_error_t"] <= o["last_error_t"] <= o["reconnected_t"]
    assert o["reconnect_s"] > 0
    assert o["vus_affected"] and set(o["reconnect_s_by_vu"]) == {str(v) for v in
                                                                  o["vus_affected"]}
    assert all(v is not None and v > 0 for v in o["reconnect_s_by_vu"].values()), o
    assert o["errors"] and all(n > 0 for n in o["errors"].values()), o
    assert o["pre_fault_rate"] and o["pre_fault_rate"] > 0
    if o["recovery"] == "reached":
        assert o["recovery_s"] >= o["reconnect_s"] - 1.0 and o["recovered_t"] > o["first_error_t"]
    else:
        assert o["recovery"].startswith("not reached") and o["recovery_s"] is None
    # the work went on after the outage, and the summary lists it
    after = [e for e in evs if e["kind"] == "sample" and e["phase"] == phase
             and e["interval"][0] >= o["reconnected_t"]]
    assert len(after) >= 2 and sum(sum(e["ops"].values()) for e in after) > 0
    summ = next(e for e in evs if e["kind"] == "summary" and e["phase"] == phase)
    assert summ["outages"] == [{k: v for k, v in o.items()
                                if k not in ("v", "seq", "t", "kind", "state")}]
    return o


def _check_monitor_back(evs: list[dict], o: dict, phase: str) -> None:
    """The server counters connect again after a restart: `db` events go on, and the phase
    that had the outage has no server count (the restarted server counts from zero)."""
    assert [e for e in evs if e["kind"] == "db" and e["interval"][0] >= o["reconnected_t"]]
    said = [e["message"] for e in evs if e["kind"] == "log"]
    assert any(m.startswith("server counters: connected again") for m in said), said
    summ = next(e for e in evs if e["kind"] == "summary" and e["phase"] == phase)
    assert "server" not in summ or "delta" not in summ["server"], summ.get("server")
    # the restarted server's new processes are found: its CPU counts under server again
    # (not under other) once the monitor is back
    hosts = [e for e in evs if e["kind"] == "host"
             and e["interval"][0] >= o["reconnected_t"] + 2.0]
    fg = [sum((e["cpu_groups"].get("server.fg") or {}).values()) for e in hosts]
    assert len(fg) >= 2 and all(f > 0 for f in fg[:-1]), (fg, hosts[:1])
    back = [e for e in evs if e["kind"] == "log"
            and e["message"].startswith("CPU by process group: the server restarted")]
    assert len(back) == 1, said


def test_point_query_survives_a_postgres_restart_with_reconnect(tmp_path, private_pg):
    evs = _fault_mid_run(tmp_path, private_pg, "point-query",
                         {"table-size": 2000, "clients": 2, "duration": 18, "reconnect": True},
                         "measure")
    o = _check_outage(evs, "measure")
    _check_monitor_back(evs, o, "measure")
    print("postgres point-query outage:", json.dumps(o))
    if os.environ.get("VERSUS_RECORD_STREAMS"):       # the golden stream every reader reads
        (REPO / "tests" / "fixtures" / "streams" / "point-query-pg-outage.jsonl").write_text(
            "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in evs))


def test_an_outage_across_a_phase_end_waits_for_the_server_before_the_next_phase(
        tmp_path, private_pg):
    """The server goes down near the warm-up's end and is still down when measure begins:
    measure's virtual users wait for it to accept connections, then the phase runs its whole
    time (before, they failed at connect and the run failed)."""
    run = AgentRun(tmp_path, "point-query", {"table-size": 2000, "clients": 2, "warmup": 5,
                                             "duration": 6, "reconnect": True}, private_pg)
    try:
        wait_until(lambda: len(run.samples("warmup")) >= 4 or run.proc.poll() is not None,
                   90, what="4 samples of warmup")
        assert run.proc.poll() is None, run.proc.stderr.read().decode()[-2000:]
        kill_and_restart(private_pg, down_s=3.0)
    except BaseException:
        run.proc.kill()
        raise
    evs = run.finish()
    end = evs[-1]
    assert end["kind"] == "end" and end["status"] == "ok", [
        e for e in evs if e["kind"] in ("error", "end", "log")][-6:]
    ends = [e for e in evs if e["kind"] == "outage" and e["state"] == "end"]
    assert [o["phase"] for o in ends] == ["warmup"], ends
    said = [e["message"] for e in evs if e["kind"] == "log"]
    assert any(m.startswith("measure: the virtual users connected after ") for m in said), said
    measure = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
    assert measure["ops_total"] > 0 and measure["duration_s"] >= 5.5, measure
    assert not measure.get("outages"), measure.get("outages")


def test_tpcc_survives_a_postgres_restart_with_reconnect(tmp_path, private_pg):
    evs = _fault_mid_run(tmp_path, private_pg, "tpcc",
                         {"warehouses": 1, "vus": 2, "rampup": 0, "duration": 16,
                          "reconnect": True}, "measure")
    o = _check_outage(evs, "measure")
    print("postgres tpcc outage:", json.dumps(o))


def test_point_query_survives_a_mariadb_restart_with_reconnect(tmp_path, private_mariadb):
    evs = _fault_mid_run(tmp_path, private_mariadb, "point-query",
                         {"table-size": 2000, "clients": 2, "duration": 14, "reconnect": True},
                         "measure")
    o = _check_outage(evs, "measure")
    _check_monitor_back(evs, o, "measure")
    print("mariadb point-query outage:", json.dumps(o))


@pytest.mark.parametrize("engine", ["postgres", "mariadb"])
def test_without_reconnect_a_restart_fails_the_run_with_a_sentence(tmp_path, engine, request):
    srv = request.getfixturevalue("private_pg" if engine == "postgres" else "private_mariadb")
    evs = _fault_mid_run(tmp_path, srv, "point-query",
                         {"table-size": 2000, "clients": 2, "duration": 10}, "measure")
    end = evs[-1]
    assert end["kind"] == "end" and end["status"] == "failed", end
    assert not [e for e in evs if e["kind"] == "outage"]
    errors = [e["message"] for e in evs if e["kind"] == "error"]
    assert any(m.startswith("lost the database connection") for m in errors), errors
    assert "Traceback" not in " ".join(errors) and end["reason"], end


# (workload, parameters, the phase to cut, text in the virtual users' statements only)
TERMINATED = [
    ("transfers", {"users": 50, "accounts-per-user": 2, "clients": 2, "duration": 8},
     "measure", "tf_"),
    ("micro", {"tests": "update-index", "table-size": 2000, "write-seconds": 8, "warmup": 0},
     "update-index", "sbtest"),
    ("insert-benchmark", {"clients": 2, "load-rows": 2000, "query-seconds": 8, "rates": "100",
                          "rows-per-commit": 5, "steps": "l.i0,l.x,qr"},
     "qr100", "price"),
    ("perf-trace", {"queries": "select", "rows": "10", "seconds": 8, "table-size": 2000,
                    "clients": 2},
     "select/10", "sbtest1"),
]


@pytest.mark.parametrize("workload,params,phase,marker", TERMINATED,
                         ids=[c[0] for c in TERMINATED])
def test_terminated_backends_are_an_outage_with_reconnect(tmp_path, private_pg, workload,
                                                          params, phase, marker):
    """pg_terminate_backend on the virtual users' connections: with reconnect=on each one
    reconnects at once; an outage, not a lost client."""
    from workloads.engine.sql.db import SqlSession
    run = AgentRun(tmp_path, workload, {**params, "reconnect": True}, private_pg)
    try:
        wait_until(lambda: len(run.samples(phase)) >= 3 or run.proc.poll() is not None,
                   90, what=f"3 samples of {phase}")
        db = SqlSession(private_pg.target())
        try:
            n = db.scalar("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                          "WHERE pid <> pg_backend_pid() AND position(%s in query) > 0",
                          (marker,))
        finally:
            db.close()
        assert n >= 2
    except BaseException:
        run.proc.kill()
        raise
    evs = run.finish()
    o = _check_outage(evs, phase)
    # the backend's last words, or only the closed socket when the client was sending
    assert set(o["errors"]) <= {"admin shutdown", "connection lost"}, o["errors"]
    assert len(o["vus_affected"]) == n
    summ = next(e for e in evs if e["kind"] == "summary" and e["phase"] == phase)
    # a transaction cut off in the middle rolled back (transfers: the money is all there)
    assert not [f for f in summ.get("flags") or () if f.get("severity") == "fail"]
    print(f"postgres {workload} terminated backends:", json.dumps(o))


@pytest.mark.parametrize("message,cls", [
    ("lost the database connection: FATAL:  terminating connection due to administrator "
     "command", "admin shutdown"),
    ("lost the database connection: server closed the connection unexpectedly",
     "connection lost"),
    ('cannot connect to postgres postgres@127.0.0.1:1/versus: connection failed: connection '
     'to server at "127.0.0.1", port 1 failed: Connection refused', "connection refused"),
    ("connection failed: FATAL:  the database system is starting up",
     "server starting or stopping"),
    ("lost the database connection: (2013, 'Lost connection to MySQL server during query')",
     "connection lost"),
    # MariaDB's ER_CONNECTION_KILLED (KILL while the server could still tell the client)
    ("lost the database connection: (1927, 'Connection was killed')", "admin shutdown"),
    ("(2003, \"Can't connect to MySQL server on '127.0.0.1' ([Errno 111])\")",
     "connection refused"),
    ("connection to server at \"10.0.0.9\", port 5432 failed: timeout expired", "timeout"),
    ("something else entirely", "other"),
])
def test_errors_are_put_in_classes_by_what_the_servers_and_drivers_say(message, cls):
    from workloads.engine.measure.outage import classify
    assert classify(message) == cls


def test_an_error_number_inside_a_port_is_not_a_class():
    from workloads.engine.measure.outage import classify
    assert classify('connection to server at "127.0.0.1", port 32003 failed: no route') == \
        "other"
    assert classify("2006: MySQL server has gone away") == "connection lost"
    assert classify("(1053, 'Server shutdown in progress')") == "admin shutdown"


def test_a_terminated_postgres_backend_is_an_admin_shutdown(pg_db):
    """pg_terminate_backend on an idle virtual user's connection: libpq's failed result says
    only "server closed the connection"; the server's FATAL (57P01) is the connection's
    message, and the outage class comes from it."""
    from workloads.engine.measure.outage import classify
    from workloads.engine.sql.clients import PgClient, StatementFailed
    from workloads.engine.sql.db import TargetInfo
    from tests.dbs import query
    client = PgClient(TargetInfo("postgres", "127.0.0.1", 5432, "postgres",
                                 pg_db.rsplit("/", 1)[1]))
    run = client.prepare("SELECT ?", "i")
    run((1,))
    query(pg_db, f"SELECT pg_terminate_backend({client.pg.backend_pid}, 10000)")  # gone
    with pytest.raises(StatementFailed) as failed:
        run((1,))
    assert failed.value.lost
    assert classify(str(failed.value)) == "admin shutdown", str(failed.value)
