"""Virtual users die with their agent, and a run with fewer live clients than asked says so.

Real agents, real virtual-user processes and the machine's PostgreSQL and MariaDB: the agent
or one virtual user is killed by PID, one VU's server connection is ended from the server
side (pg_terminate_backend, KILL CONNECTION), and the test checks what is left running on the
host and on the server, the run's status, exit code and sentences."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.dbs import query, versus
from tests.faults import (CLIProcess, assert_nothing_left, cmdline, pids_matching, run_dir,
                          wait_until)
from tests.workloads.agentrun import REPO, local_target
from workloads.registry import WORKLOADS

pytestmark = pytest.mark.faults


# --- processes ------------------------------------------------------------------------------
def _state(pid: int) -> tuple[int, str] | None:
    """(ppid, state letter) of a process; None when it is gone (a zombie is gone: it runs no
    code and holds no connection)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    return None if rest[0] in "ZX" else (int(rest[1]), rest[0])


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _state(int(name))
            if st is not None and st[0] == pid:
                out.append(int(name))
    return out


def _vus(agent: int, n: int) -> list[int]:
    """The agent's n virtual-user processes (forked: the agent's own command line; perf and
    other tools it starts have theirs)."""
    def found():
        own = cmdline(agent)
        vus = [p for p in _children(agent) if cmdline(p) == own]
        return vus if len(vus) == n else None
    return wait_until(found, 30, what=f"{n} virtual users of agent {agent}")


def _events(spool: Path) -> list[dict]:
    try:
        text = spool.read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _wait_measuring(spool: Path, phase: str, timeout: float = 120) -> None:
    """Until the spool holds a sample of `phase` with operations in it."""
    def measuring():
        return any(e["kind"] == "sample" and e.get("phase") == phase
                   and sum((e.get("ops") or {}).values()) > 0 for e in _events(spool))
    wait_until(measuring, timeout, 0.1, f"a sample of {phase}")


class AgentProcess:
    """`python -m workloads.agent run` as a real process the test can kill."""

    def __init__(self, tmp_path: Path, workload: str, params: dict, target: dict):
        self.dir = tmp_path / f"run-{uuid.uuid4().hex[:6]}"
        self.dir.mkdir()
        spec = {"run_id": uuid.uuid4().hex[:12], "workload": workload, "params": params,
                "target": target}
        (self.dir / "spec.json").write_text(json.dumps(spec))
        self.proc = subprocess.Popen([sys.executable, "-m", "workloads.agent", "run", "--dir",
                                      str(self.dir)], cwd=str(REPO), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.spool = self.dir / "events.jsonl"

    def events(self) -> list[dict]:
        return _events(self.spool)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for p in pids_matching(re.escape(str(self.dir))):
            os.kill(p, signal.SIGKILL)          # never leave a run behind, whatever failed


def _db(url: str) -> str:
    return url.rsplit("/", 1)[1]


def _server_sessions(url: str) -> int:
    """Connections to the test's database other than the one asking."""
    db = _db(url)
    if url.startswith("postgresql"):
        return query(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                          f"'{db}' AND pid <> pg_backend_pid()")[0][0]
    return query(url, "SELECT count(*) FROM information_schema.processlist WHERE db = "
                      f"'{db}' AND id <> connection_id()")[0][0]


def _server_statements(url: str) -> int:
    """Statements the server counted in the test's database (PostgreSQL) or in total."""
    if url.startswith("postgresql"):
        return query(url, "SELECT xact_commit + xact_rollback FROM pg_stat_database "
                          f"WHERE datname = '{_db(url)}'")[0][0]
    return int(query(url, "SHOW GLOBAL STATUS LIKE 'Com_select'")[0][1])


# per workload: parameters that keep a phase of virtual users going long, that phase, and its
# virtual users (the insert benchmark's query steps have a writer beside each client)
LONG = {"point-query": ({"duration": 120}, "measure", 2),
        "tpcc": ({"duration": 120}, "measure", 2),
        "transfers": ({"duration": 120}, "measure", 2),
        "insert-benchmark": ({"query-seconds": 120}, "qr100", 4)}


def _long_params(workload: str) -> dict:
    return {**WORKLOADS[workload].quick, **LONG[workload][0]}


# --- virtual users die with their agent ----------------------------------------------------
@pytest.mark.parametrize("workload,engine", [
    ("point-query", "postgres"), ("tpcc", "postgres"), ("point-query", "mariadb"),
    ("transfers", "postgres"), ("insert-benchmark", "mariadb")])
def test_agent_killed_takes_its_virtual_users_and_their_queries_with_it(
        request, tmp_path, workload, engine):
    url = request.getfixturevalue("pg_db" if engine == "postgres" else "mariadb_db")
    agent = AgentProcess(tmp_path, workload, _long_params(workload),
                         local_target(_db(url), engine))
    try:
        _wait_measuring(agent.spool, LONG[workload][1])
        n = LONG[workload][2]
        vus = _vus(agent.proc.pid, n)
        os.kill(agent.proc.pid, signal.SIGKILL)
        t0 = time.monotonic()
        agent.proc.wait()
        wait_until(lambda: all(_state(p) is None for p in vus), 10, 0.01,
                   "the virtual users ending with their agent")
        gone_s = time.monotonic() - t0
        wait_until(lambda: _server_sessions(url) == 0, 10, 0.01,
                   "the server's sessions of the run ending")
        # nor anything else it started (perf counting the server's processes, its files in
        # the run's folder)
        left = lambda: [cmdline(p) for p in pids_matching(re.escape(str(agent.dir)))]  # noqa: E731
        try:
            wait_until(lambda: not left(), 10, 0.05, "the run's other processes ending")
        except AssertionError:
            raise AssertionError(f"still running after the agent's SIGKILL: {left()}") from None
        print(f"{workload} on {engine}: {n} virtual users gone {gone_s:.3f} s and their "
              f"server sessions {time.monotonic() - t0:.3f} s after the agent's SIGKILL")
        if engine == "postgres":
            # nothing of the run queries the database any more (a statement is a transaction)
            before = _server_statements(url)
            time.sleep(1.5)      # past the stats reporting interval (1 s) of any backend
            assert _server_statements(url) - before <= 2       # this test's own reads
    finally:
        agent.close()


def test_sigterm_stops_a_virtual_user_and_the_run_fails_saying_which(pg_db, tmp_path):
    agent = AgentProcess(tmp_path, "point-query", _long_params("point-query"),
                         local_target(_db(pg_db), "postgres"))
    try:
        _wait_measuring(agent.spool, "measure")
        vus = _vus(agent.proc.pid, 2)
        os.kill(vus[1], signal.SIGTERM)
        t0 = time.monotonic()
        wait_until(lambda: _state(vus[1]) is None, 10, 0.01, "the VU ending on SIGTERM")
        print(f"a virtual user gone {time.monotonic() - t0:.3f} s after its SIGTERM")
        assert agent.proc.wait(60) == 1
        wait_until(lambda: all(_state(p) is None for p in vus), 10, 0.05, "the VUs ending")
        evs = agent.events()
        end = evs[-1]
        assert end["kind"] == "end" and end["status"] == "failed"
        assert re.search(r"1 of 2 virtual users of measure lost: virtual user \d at [\d.]+ s "
                         r"\(killed by SIGTERM\)", end["reason"]), end["reason"]
        summ = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
        assert summ["clients_asked"] == 2 and summ["clients_live"] == 1
        assert summ["clients_lost"][0]["why"] == "killed by SIGTERM"
        assert summ["flags"][0]["name"] == "lost clients"
        assert summ["flags"][0]["severity"] == "fail"
        assert any(e["kind"] == "log" and "was lost" in e["message"] for e in evs)
    finally:
        agent.close()


def test_tolerating_lost_clients_still_fails_a_phase_with_none_left(mariadb_db, tmp_path):
    agent = AgentProcess(tmp_path, "point-query",
                         {**_long_params("point-query"), "tolerate-lost-clients": "on"},
                         local_target(_db(mariadb_db), "mariadb"))
    try:
        _wait_measuring(agent.spool, "measure")
        for p in _vus(agent.proc.pid, 2):
            os.kill(p, signal.SIGKILL)
        assert agent.proc.wait(60) == 1
        end = agent.events()[-1]
        assert end["status"] == "failed"
        assert re.search(r"^every virtual user of measure was lost: virtual user \d at [\d.]+ s "
                         r"\(killed by SIGKILL\); virtual user \d", end["reason"]), end["reason"]
    finally:
        agent.close()


def test_sigterm_to_the_agent_stops_its_virtual_users_and_closes_the_run(pg_db, tmp_path):
    agent = AgentProcess(tmp_path, "tpcc", _long_params("tpcc"),
                         local_target(_db(pg_db), "postgres"))
    try:
        _wait_measuring(agent.spool, "measure")
        vus = _vus(agent.proc.pid, 2)
        agent.proc.send_signal(signal.SIGTERM)
        assert agent.proc.wait(60) == 0
        assert all(_state(p) is None for p in vus)
        evs = agent.events()
        assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "stopped"
        assert not [e for e in evs if e["kind"] == "log" and "was lost" in e["message"]]
        wait_until(lambda: _server_sessions(pg_db) == 0, 10, 0.05, "the sessions ending")
    finally:
        agent.close()


# --- a lost client is never silent: the CLI's exit code, the run's reason, show ------------
def _cli_run(url: str, out: Path, *sets: str) -> CLIProcess:
    return CLIProcess("run", "--target", url, "--workload", "point-query", "--duration", "30",
                      "--set", "table-size=2000", *[a for s in sets for a in ("--set", s)],
                      "--out", str(out), "--json")


def _agent_of(rid: str) -> int:
    pids = wait_until(lambda: pids_matching(rf"workloads\.agent (run|start) --dir \S*{rid}"),
                      30, what="the agent")
    return next(p for p in pids if _state(p) and _state(p)[0] not in pids)


def _vu_backend(url: str) -> int:
    """The server's id of one virtual user's connection (busy with the workload's query)."""
    db = _db(url)
    if url.startswith("postgresql"):
        sql = ("SELECT pid FROM pg_stat_activity WHERE datname = '" + db + "' AND query "
               "LIKE 'SELECT c FROM sbtest%' AND pid <> pg_backend_pid() LIMIT 1")
    else:
        sql = ("SELECT id FROM information_schema.processlist WHERE db = '" + db + "' AND "
               "info LIKE 'SELECT c FROM sbtest%' AND id <> connection_id() LIMIT 1")
    return wait_until(lambda: (query(url, sql) or [[None]])[0][0], 30, 0.02,
                      "a virtual user's connection")


def _fault(kind: str, url: str, rid: str) -> None:
    _wait_measuring(run_dir(rid) / "events.jsonl", "measure")
    if kind == "kill-vu":
        os.kill(_vus(_agent_of(rid), 2)[0], signal.SIGKILL)
    elif url.startswith("postgresql"):
        query(url, f"SELECT pg_terminate_backend({_vu_backend(url)})")
    else:
        query(url, f"KILL CONNECTION {_vu_backend(url)}")


WHY = {"kill-vu": r"killed by SIGKILL",
       "end-connection": r"lost the database connection: .*(terminat|Lost connection|server "
                         r"has gone away|connection)"}


@pytest.mark.parametrize("engine", ["postgres", "mariadb"])
@pytest.mark.parametrize("kind", ["kill-vu", "end-connection"])
def test_lost_client_fails_the_run_with_which_when_why(request, versus_home, tmp_path, engine,
                                                       kind):
    url = request.getfixturevalue("pg_db" if engine == "postgres" else "mariadb_db")
    out = tmp_path / "lost.versus"
    cli = _cli_run(url, out)
    rid = cli.run_id()
    _fault(kind, url, rid)
    r = cli.finish()
    assert r.returncode == 1, r.stderr[-2000:]
    run = json.loads(r.stdout)
    assert run["status"] == "failed"
    assert re.search(r"1 of 2 virtual users of measure lost: virtual user [12] at [\d.]+ s \("
                     + WHY[kind], run["reason"]), run["reason"]
    assert "tolerate-lost-clients=on goes on without them" in run["reason"]
    assert f"the run failed: {run['reason']}" in r.stderr
    measure = next(p for p in run["phases"] if p["name"] == "measure")
    assert measure["flags"][0]["name"] == "lost clients"
    shown = versus("show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"FAILED: lost clients — 1 of 2 virtual users lost: virtual user [12] at "
                     + r"[\d.]+ s \(" + WHY[kind], shown.stdout), shown.stdout
    assert_nothing_left(rid)


def run_losing_a_client(url: str, out: Path, kind: str = "kill-vu"
                        ) -> tuple[subprocess.CompletedProcess, str]:
    """A 6 s point-query run with tolerate-lost-clients=on that loses one virtual user
    (`kind`: kill-vu, end-connection) once it measures: the CLI's result and the run id."""
    cli = CLIProcess("run", "--target", url, "--workload", "point-query", "--duration", "6",
                     "--set", "table-size=2000", "--set", "tolerate-lost-clients=on",
                     "--out", str(out), "--json")
    rid = cli.run_id()
    _fault(kind, url, rid)
    return cli.finish(), rid


@pytest.mark.parametrize("engine,kind", [("postgres", "end-connection"),
                                         ("mariadb", "kill-vu")])
def test_tolerated_lost_client_runs_to_the_end_and_says_so(request, versus_home, tmp_path,
                                                           engine, kind):
    url = request.getfixturevalue("pg_db" if engine == "postgres" else "mariadb_db")
    out = tmp_path / "tolerated.versus"
    r, rid = run_losing_a_client(url, out, kind)
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads(r.stdout)
    assert run["status"] == "ok" and run["reason"] == ""
    measure = next(p for p in run["phases"] if p["name"] == "measure")
    assert measure["duration_s"] >= 5.5                 # it ran its planned time
    flag = measure["flags"][0]
    assert flag["name"] == "lost clients" and flag["severity"] == "warn"
    assert re.search(r"1 of 2 virtual users lost: virtual user [12] at [\d.]+ s \(" + WHY[kind],
                     flag["detail"]), flag["detail"]
    assert "tolerated (tolerate-lost-clients=on): 1 of 2 ran to the end" in flag["detail"]
    from app.store.session import SessionFile
    with SessionFile(out) as s:
        summ = next(e for e in s.events(rid, kinds=("summary",)) if e["phase"] == "measure")
        samples = [e for e in s.events(rid, kinds=("sample",)) if e["phase"] == "measure"]
    assert summ["clients_asked"] == 2 and summ["clients_live"] == 1
    assert len(summ["clients_lost"]) == 1
    assert measure["clients_asked"] == 2 and measure["clients_lost"] == summ["clients_lost"]
    assert samples[0]["clients"] == 2 and samples[-1]["clients"] == 1
    # the run's result line says so, as its log says which, when and why
    assert re.search(r"measure done: .* — LOST CLIENTS: 1 of 2 virtual users lost", r.stderr)
    assert re.search(r"virtual user [12] of measure was lost [\d.]+ s into the phase: "
                     + WHY[kind], r.stderr), r.stderr
    shown = versus("show", str(out))
    assert "flag: lost clients — 1 of 2 virtual users lost" in shown.stdout, shown.stdout
    assert_nothing_left(rid)


def test_agent_killed_while_loading_takes_its_loaders_with_it(pg_db, tmp_path):
    agent = AgentProcess(tmp_path, "tpcc", {**_long_params("tpcc"), "warehouses": 4},
                         local_target(_db(pg_db), "postgres"))
    try:
        wait_until(lambda: any(e["kind"] == "progress" and e.get("unit") == "warehouses"
                               for e in agent.events()), 120, 0.05, "the TPC-C load")
        loaders = _vus(agent.proc.pid, 2)           # load-clients=2, forked like VUs
        os.kill(agent.proc.pid, signal.SIGKILL)
        agent.proc.wait()
        wait_until(lambda: all(_state(p) is None for p in loaders), 10, 0.01,
                   "the loaders ending with their agent")
        wait_until(lambda: _server_sessions(pg_db) == 0, 10, 0.05, "the sessions ending")
    finally:
        agent.close()
