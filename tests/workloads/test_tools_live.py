"""sysbench, pgbench and HammerDB run by Versus on this computer (the CLI, the agent and the
tool as real processes, the machine's PostgreSQL and MariaDB): the same kinds of events as a
native run, samples from the tool's own interval lines, and summaries whose figures equal
the tool's own report (which reaches the run log verbatim, read here with a regex)."""
from __future__ import annotations

import os
import re
import shutil
import secrets

import pytest

from app.store.session import SessionFile
from tests.dbs import MY, versus
from workloads.hammerdb.run import kit_home

NATIVE_KINDS = {"hello", "setting", "phase", "sample", "host", "db", "summary", "end"}
KIT = "/work/shared/peer-tools/hammerdb/hdb"


def _run(url, workload, out, *sets, timeout=300):
    args = ["run", "--target", url, "--workload", workload, "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    return versus(*args, timeout=timeout)


def _events(path):
    with SessionFile(path) as s:
        (rec,) = s.runs()
        return rec, s.events(rec.id)


def _logs(evs, source):
    return "\n".join(e["message"] for e in evs if e["kind"] == "log" and e.get("source") == source)


def _check_like_native(evs, phases):
    kinds = {e["kind"] for e in evs}
    assert NATIVE_KINDS <= kinds, NATIVE_KINDS - kinds
    started = [e["name"] for e in evs if e["kind"] == "phase" and e["state"] == "start"]
    assert started == phases
    for e in evs:
        if e["kind"] == "sample":
            assert e["phase"] in phases and e["interval"][1] > e["interval"][0]
            assert isinstance(e["rate"], (int, float)) and e["unit"] and e["source"]
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok"
    hosts = [e for e in evs if e["kind"] == "host"]
    assert sum(h["driver_cpu"]["user_s"] + h["driver_cpu"]["system_s"] for h in hosts) > 0


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_sysbench_run_reports_what_sysbench_said(request, db, versus_home, tmp_path):
    if not shutil.which("sysbench"):
        pytest.skip("sysbench is not installed (Debian: apt-get install sysbench)")
    url = request.getfixturevalue(db)
    out = tmp_path / "sb.versus"
    r = _run(url, "sysbench", out, "test=oltp_read_write", "table-size=5000", "time=4",
             "warmup=1", "threads=2")
    assert r.returncode == 0, r.stdout + r.stderr
    rec, evs = _events(out)
    _check_like_native(evs, ["load", "warmup", "measure"])
    report = _logs(evs, "sysbench").split("SQL statistics:")[-1]
    qps = float(re.search(r"queries:\s+\d+\s+\(([\d.]+) per sec", report).group(1))
    tps = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", report).group(1))
    summ = [e for e in evs if e["kind"] == "summary" and e["phase"] == "measure"][-1]
    assert summ["rate"] == summ["result"]["qps"] == qps and summ["result"]["tps"] == tps
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    assert len(samples) >= 3 and all(s["source"].startswith("sysbench") for s in samples)
    # the server saw the same work (its own counters, beside the tool)
    assert summ["server"]["delta"] > 0 and summ["driver_cpu"]["user_s"] > 0


def test_sysbench_password_goes_in_a_private_file(mariadb_db, versus_home, tmp_path):
    if not shutil.which("sysbench"):
        pytest.skip("sysbench is not installed")
    import pymysql
    user, pw = f"vs_{secrets.token_hex(3)}", f"pw-{secrets.token_hex(6)}"
    db = mariadb_db.rsplit("/", 1)[1]
    c = pymysql.connect(**MY, autocommit=True)
    cur = c.cursor()
    cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{pw}'")
    cur.execute(f"CREATE USER '{user}'@'localhost' IDENTIFIED BY '{pw}'")
    cur.execute(f"GRANT ALL ON `{db}`.* TO '{user}'@'%'")
    cur.execute(f"GRANT ALL ON `{db}`.* TO '{user}'@'localhost'")
    try:
        out = tmp_path / "pw.versus"
        r = versus("run", "--target", f"mysql://{user}@127.0.0.1:3306/{db}", "--workload",
                   "sysbench", "--set", "table-size=1000", "--set", "time=2", "--out", str(out),
                   env={"VERSUS_DB_PASSWORD": pw})
        assert r.returncode == 0, r.stdout + r.stderr
        assert pw not in r.stdout + r.stderr
        assert pw.encode() not in out.read_bytes()
        _, evs = _events(out)
        started = [e["message"] for e in evs if e["kind"] == "log"
                   and e["message"].startswith("started sysbench")]
        assert started and all("--config-file=" in m for m in started)
    finally:
        cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        cur.execute(f"DROP USER IF EXISTS '{user}'@'localhost'")
        c.close()


def test_pgbench_run_reports_what_pgbench_said(pg_db, versus_home, tmp_path):
    if not shutil.which("pgbench"):
        pytest.skip("pgbench is not installed (Debian: apt-get install postgresql-client)")
    out = tmp_path / "pgb.versus"
    r = _run(pg_db, "pgbench", out, "scale=1", "time=4", "clients=2", "jobs=2")
    assert r.returncode == 0, r.stdout + r.stderr
    _, evs = _events(out)
    _check_like_native(evs, ["load", "measure"])
    report = _logs(evs, "pgbench")
    tps = float(re.search(r"^tps = ([\d.]+) \(without", report, re.M).group(1))
    n = int(re.search(r"actually processed: (\d+)", report).group(1))
    summ = [e for e in evs if e["kind"] == "summary" and e["phase"] == "measure"][-1]
    assert summ["rate"] == summ["result"]["tps"] == tps and summ["ops_total"] == n
    load = [e for e in evs if e["kind"] == "summary" and e["phase"] == "load"][-1]
    assert load["ops_total"] == 100_000
    samples = [e for e in evs if e["kind"] == "sample"]
    assert len(samples) >= 3 and samples[0]["source"] == "pgbench --progress line"
    # the server's own count of transactions agrees with pgbench's (vacuum and the
    # monitor's polls aside)
    assert abs(summ["server"]["delta"] - n) <= 0.05 * n + 20


def test_pgbench_refuses_mariadb(mariadb_db, versus_home, tmp_path):
    r = _run(mariadb_db, "pgbench", tmp_path / "x.versus", "time=2")
    assert r.returncode == 2          # refused from the spec's dialects, nothing started
    assert "workload pgbench does not support mysql" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_tool_is_a_sentence_before_the_run_starts(pg_db, versus_home, tmp_path):
    out = tmp_path / "missing.versus"
    r = _run(pg_db, "hammerdb", out, "cli=/nonexistent/hdb", "duration=60")
    assert r.returncode == 2                    # bad input: nothing started, nothing recorded
    assert re.search(r"hdb is not installed on \S+; install HammerDB's CLI kit", r.stderr)
    assert not out.exists()


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_sysbench_says_its_own_fatal_lines_when_it_fails(request, db, versus_home, tmp_path):
    """A script sysbench finds (so the probe lets it by) whose prepare fails: the run's
    reason is sysbench's FATAL line from its output, not "see the run log"."""
    if not shutil.which("sysbench"):
        pytest.skip("sysbench is not installed (Debian: apt-get install sysbench)")
    script = tmp_path / "bad.lua"
    script.write_text('function cleanup() end\nfunction prepare() error("no tables here") end\n'
                      'function event() end\n')
    out = tmp_path / "sb.versus"
    r = _run(request.getfixturevalue(db), "sysbench", out, f"test={script}")
    assert r.returncode == 1
    rec, _ = _events(out)
    assert rec.status == "failed"
    assert "sysbench exited with status 1: FATAL: `prepare' function failed" in rec.reason
    assert "no tables here" in rec.reason


@pytest.mark.skipif(not (os.access(KIT, os.X_OK) and
                         os.path.exists(os.path.join(kit_home(), ".installed"))),
                    reason="HammerDB's CLI kit is not installed (run "
                           "../shared/peer-tools/hammerdb/install.sh)")
@pytest.mark.parametrize("db,engine", [("pg_db", "PostgreSQL"), ("mariadb_db", "MariaDB")])
def test_hammerdb_run_reports_its_test_result(request, db, engine, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "hdb.versus"
    schema = f"vs_hdb_{secrets.token_hex(3)}"      # a database of its own, dropped below
    try:
        r = _run(url, "hammerdb", out, "warehouses=1", "rampup=0", "duration=60",
                 f"cli={KIT}", f"schema={schema}", timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr
        _, evs = _events(out)
        _check_like_native(evs, ["load", "measure"])
        line = _logs(evs, "hammerdb")
        m = re.search(rf"TEST RESULT : System achieved (\d+) NOPM from (-?\d+) {engine} TPM",
                      line)
        assert m, line[-2000:]
        summ = [e for e in evs if e["kind"] == "summary" and e["phase"] == "measure"][-1]
        assert (summ["result"]["nopm"], summ["result"]["tpm"]) == (int(m.group(1)),
                                                                   int(m.group(2)))
        samples = [e for e in evs if e["kind"] == "sample"]
        assert len(samples) >= 4 and all(s["unit"] == "TPM" for s in samples)
    finally:
        if engine == "PostgreSQL":
            import psycopg
            with psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres",
                                 autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{schema}" WITH (FORCE)')
        else:
            import pymysql
            c = pymysql.connect(**MY, autocommit=True)
            c.cursor().execute(f"DROP DATABASE IF EXISTS `{schema}`")
            c.close()


def test_pgbench_password_goes_in_a_private_file(service_workdir, versus_home, tmp_path):
    """A private PostgreSQL that asks for a password (scram) over TCP: pgbench logs in with
    the password from its 0600 PGPASSFILE (':' and '\\' in it escaped), and the password is
    on no command line, in no environment and in no output."""
    if not shutil.which("pgbench"):
        pytest.skip("pgbench is not installed (Debian: apt-get install postgresql-client)")
    import psycopg
    import psycopg.sql
    from tests.workloads.agentrun import PG15
    from workloads.engine.servers.managed import ManagedServer, inspect
    srv = ManagedServer(inspect(PG15), os.path.join(service_workdir, "pgpw"),
                        "shared_buffers = 32MB\n", service_workdir)
    srv.start()
    try:
        user, pw = f"vs_{secrets.token_hex(3)}", f"p:w\\{secrets.token_hex(6)}"
        with psycopg.connect(host="127.0.0.1", port=srv.port, user="postgres",
                             dbname="postgres", autocommit=True) as c:
            c.execute(psycopg.sql.SQL("CREATE USER {} PASSWORD {}").format(
                psycopg.sql.Identifier(user), psycopg.sql.Literal(pw)))
            c.execute(f"CREATE DATABASE {user} OWNER {user}")
            hba = os.path.join(srv.datadir, "pg_hba.conf")
            with open(hba, "w") as f:
                f.write("local all all trust\nhost all postgres 127.0.0.1/32 trust\n"
                        "host all all 127.0.0.1/32 scram-sha-256\n")
            c.execute("SELECT pg_reload_conf()")
        url = f"postgresql://{user}@127.0.0.1:{srv.port}/{user}"
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(host="127.0.0.1", port=srv.port, user=user, dbname=user).close()
        out = tmp_path / "pw.versus"
        r = versus("run", "--target", url, "--workload", "pgbench", "--set", "scale=1",
                   "--set", "time=2", "--out", str(out), env={"VERSUS_DB_PASSWORD": pw})
        assert r.returncode == 0, r.stdout + r.stderr
        assert pw not in r.stdout + r.stderr and pw.encode() not in out.read_bytes()
        _, evs = _events(out)
        summ = [e for e in evs if e["kind"] == "summary" and e["phase"] == "measure"][-1]
        assert summ["ops_total"] > 0
        started = [e["message"] for e in evs if e["kind"] == "log"
                   and e["message"].startswith("started pgbench")]
        assert len(started) == 2 and all(f"-U {user}" in m for m in started)
    finally:
        srv.stop()
