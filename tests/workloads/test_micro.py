"""The micro suite end to end on the machine's PostgreSQL and MariaDB: the CLI and the agent
as real processes, the real servers, sysbench 1.0 (Debian's) for table compatibility."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from app.store.session import SessionFile
from tests.dbs import MY, PG, unique, versus
from workloads.engine.sql.db import have_mariadb_connector, mysql_driver
from workloads.engine.sql import libmariadb
from workloads.sbtest import suite

ROOT = Path(__file__).resolve().parents[2]
SYSBENCH = "/usr/bin/sysbench"
TABLES, SIZE = 2, 1000


def _start(url: str, out: Path, *sets: str) -> subprocess.Popen:
    args = [sys.executable, "-m", "app.main", "run", "--target", url, "--workload", "micro",
            "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    return subprocess.Popen(args, cwd=str(ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def _events(path) -> list[dict]:
    with SessionFile(path) as s:
        return s.events(s.runs()[-1].id)


def _db(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _scalar(url: str, sql: str):
    if url.startswith("postgresql"):
        import psycopg
        with psycopg.connect(**PG, dbname=_db(url), autocommit=True) as c:
            return c.execute(sql).fetchone()[0]
    import pymysql
    c = pymysql.connect(**MY, database=_db(url), autocommit=True)
    try:
        cur = c.cursor()
        cur.execute(sql)
        return cur.fetchone()[0]
    finally:
        c.close()


def _rows(url: str) -> int:
    return sum(int(_scalar(url, f"SELECT COUNT(*) FROM sbtest{n}")) for n in range(1, TABLES + 1))


def test_bad_parameters_are_refused_before_anything_runs(versus_home, tmp_path, pg_db):
    for sets, said in ((["tests=point-query,points-everywhere"],
                        "unknown test 'points-everywhere'"),
                       (["tables=0"], "tables must be at least 1"),
                       (["tests="], "tests is empty"),
                       (["distribution=gaussian"], "distribution must be one of")):
        out = tmp_path / "refused.versus"
        args = ["run", "--target", pg_db, "--workload", "micro", "--out", str(out)]
        for s in sets:
            args += ["--set", s]
        r = versus(*args)
        assert r.returncode == 2, (sets, r.stdout, r.stderr)
        assert said in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not out.exists()
    assert _scalar(pg_db, "SELECT to_regclass('sbtest1') IS NULL")      # nothing was created


def test_every_test_for_two_seconds_on_both_engines(versus_home, tmp_path, pg_db, mariadb_db):
    """Each test's statements per second match the server's own count within 2 % (MariaDB:
    Com_* of the clients' sessions; PostgreSQL: its transaction counters, one per statement
    outside BEGIN … COMMIT, and its tuple counters for the rows written); the writes leave
    the row count the clients' own counts predict. The clients run the compiled loop
    (fastloop.c) wherever it has the test."""
    _run_and_check(tmp_path, (pg_db, mariadb_db), "all", "auto")


# every kind of step the compiled loop has, through the Python loop
PYTHON_LOOP_TESTS = ("point-query,random-points_range=10,hot-points,range-covered-si,"
                     "read-only-count,read-write_range=10,update-one,update-inlist,"
                     "update-zipf,delete,insert,scan")


def test_the_python_loop_runs_the_same_statements(versus_home, tmp_path, pg_db, mariadb_db):
    """client-loop=python (a host without a C compiler): the same statements and counts."""
    _run_and_check(tmp_path, (pg_db, mariadb_db), PYTHON_LOOP_TESTS, "python")


def _run_and_check(tmp_path, urls, tests: str, loop: str) -> None:
    sets = ("read-seconds=2", "write-seconds=2", "warmup=0", "clients=2", "pre-reads=false",
            f"tables={TABLES}", f"table-size={SIZE}", f"tests={tests}", f"client-loop={loop}")
    runs = {url: (tmp_path / f"{i}.versus") for i, url in enumerate(urls)}
    procs = {url: _start(url, out, *sets) for url, out in runs.items()}
    for url, p in procs.items():
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stdout[-3000:] + stderr
    steps = suite.steps({"tests": tests, "pre-reads": False})
    expected = ["prepare"] + [s.phase for s in steps]
    if tests == "all":
        assert len(expected) == 1 + len(suite.TESTS) == 33
    for url, out in runs.items():
        pg = url.startswith("postgresql")
        evs = _events(out)
        phases = [e["name"] for e in evs if e["kind"] == "phase" and e["state"] == "start"]
        assert phases == expected, phases
        summaries = {e["phase"]: e for e in evs if e["kind"] == "summary"}
        deleted = inserted = 0
        for step in steps:
            t, s = step.test, summaries[step.phase]
            c, check = s["counters"], s["server_check"]
            stmts, txns, errors = c["statements"], s["ops_total"], s["errors_total"]
            where = (url, t.name, s["server"].get("source"), check)
            assert txns > 0 and stmts > 0, where
            assert s["rate"] == pytest.approx(stmts / s["duration_s"], rel=1e-3), where
            if not errors:
                assert stmts == txns * t.per_event, where
            if pg:
                # a failed transaction (sysbench ignores duplicate keys) is a rollback
                assert check["transactions"] == pytest.approx(txns + errors, rel=0.02), where
                if not t.txn:
                    assert check["statements"] == pytest.approx(stmts, rel=0.02), where
                tup = s["server"]["counters"]
                if t.family in ("update-index", "update-nonindex", "update-one",
                                "update-zipf"):
                    assert tup["tup_updated"] == stmts, where       # every id exists
                if t.family == "delete":
                    assert tup["tup_deleted"] == c["rows_deleted"] > 0, where
                if t.family == "insert":
                    assert tup["tup_inserted"] == c["rows_inserted"] == stmts, where
            else:
                # failed statements and their rollbacks count on both sides
                assert check["source"].startswith("SHOW SESSION STATUS"), where
                assert check["statements"] == pytest.approx(stmts, rel=0.02), where
            if t.family == "scan":
                assert s["scan"]["rows"] == txns * SIZE
            if t.family in ("write-only", "read-write") and not errors:
                assert c["rows_deleted"] == c["rows_inserted"] == txns, where
            if not t.writes:
                assert c["rows_deleted"] == c["rows_inserted"] == 0
            assert s["sql_client"]["driver"] == ("postgres" if pg else "libmariadb"
                                             if libmariadb.load() else "mariadb"
                                             if have_mariadb_connector() else mysql_driver())
            # the test machine has a C compiler (packaging/bootstrap.sh installs gcc)
            compiled = loop == "auto" and t.family != "scan"
            assert s["sql_client"]["loop"].startswith(
                "compiled" if compiled else "Python event loop"), where
            deleted += c["rows_deleted"]
            inserted += c["rows_inserted"]
        assert _rows(url) == TABLES * SIZE - deleted + inserted, url
        bad = [e["message"] for e in evs if e["kind"] == "error"
               and not e["message"].startswith("ignored as sysbench does")]
        assert not bad, bad


def _sysbench(url: str, *args: str) -> subprocess.CompletedProcess:
    if url.startswith("postgresql"):
        conn = ["--db-driver=pgsql", f"--pgsql-host={PG['host']}", f"--pgsql-port={PG['port']}",
                f"--pgsql-user={PG['user']}", f"--pgsql-db={_db(url)}"]
    else:
        conn = ["--db-driver=mysql", f"--mysql-host={MY['host']}", f"--mysql-port={MY['port']}",
                f"--mysql-user={MY['user']}", f"--mysql-db={_db(url)}"]
    r = subprocess.run([SYSBENCH, *args[:1], *conn, *args[1:]], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    return r


def _ddl(url: str) -> list:
    if url.startswith("postgresql"):
        import psycopg
        with psycopg.connect(**PG, dbname=_db(url), autocommit=True) as c:
            cols = c.execute("SELECT column_name, data_type, character_maximum_length, "
                             "is_nullable, column_default FROM information_schema.columns "
                             "WHERE table_name = 'sbtest1' ORDER BY ordinal_position").fetchall()
            idx = c.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'sbtest1' "
                            "ORDER BY indexname").fetchall()
            return cols + idx
    import pymysql
    c = pymysql.connect(**MY, database=_db(url), autocommit=True)
    try:
        cur = c.cursor()
        cur.execute("SHOW CREATE TABLE sbtest1")
        text = cur.fetchone()[1]
    finally:
        c.close()
    return [re.sub(r" AUTO_INCREMENT=\d+", "", text)]


@pytest.fixture
def second_dbs():
    """A second database on each engine, for the tables sysbench prepares itself."""
    import psycopg
    import pymysql
    name = unique("versus_sb")
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    m = pymysql.connect(**MY, autocommit=True)
    m.cursor().execute(f"CREATE DATABASE `{name}`")
    m.close()
    yield {"pg": f"postgresql://postgres@127.0.0.1:5432/{name}",
           "mariadb": f"mysql://root@127.0.0.1:3306/{name}"}
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    m = pymysql.connect(**MY, autocommit=True)
    m.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")
    m.close()


def test_tables_are_sysbench_tables_both_ways(versus_home, tmp_path, pg_db, mariadb_db,
                                              second_dbs):
    """Versus reuses a sysbench-prepared table as it is, and sysbench runs on Versus's: the
    same columns, defaults, keys and index, and ids the server assigns after the loaded
    ones."""
    for key, ours in (("pg", pg_db), ("mariadb", mariadb_db)):
        theirs = second_dbs[key]
        _sysbench(theirs, "oltp_point_select", "--tables=1", "--table-size=500", "prepare")
        out = tmp_path / f"{key}.versus"
        r = versus("run", "--target", theirs, "--workload", "micro", "--out", str(out),
                   "--set", "tests=point-query,insert", "--set", "table-size=500",
                   "--set", "read-seconds=1", "--set", "write-seconds=1", "--set", "warmup=0")
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr
        evs = _events(out)
        assert any(e["kind"] == "log" and e["message"].startswith("reusing 1 table")
                   for e in evs), [e.get("message") for e in evs if e["kind"] == "log"]
        added = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "insert")
        n = added["counters"]["rows_inserted"]
        assert n > 0 and _rows_of(theirs) == 500 + n
        assert int(_scalar(theirs, "SELECT MAX(id) FROM sbtest1")) >= 500 + n

        r = versus("run", "--target", ours, "--workload", "micro", "--out", str(out),
                   "--set", "tests=point-query", "--set", "table-size=500",
                   "--set", "read-seconds=1", "--set", "warmup=0")
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr
        assert _ddl(ours) == _ddl(theirs)
        _sysbench(ours, "oltp_insert", "--tables=1", "--table-size=500", "--time=1", "run")
        _sysbench(ours, "oltp_read_write", "--tables=1", "--table-size=500", "--time=1", "run")
        assert int(_scalar(ours, "SELECT COUNT(*) FROM sbtest1")) > 500


def _rows_of(url: str) -> int:
    return int(_scalar(url, "SELECT COUNT(*) FROM sbtest1"))


@pytest.mark.parametrize("driver", ["mariadb", "mysqlclient", "pymysql"])
def test_the_other_mysql_clients_run_the_same_statements(driver, versus_home, tmp_path,
                                                        mariadb_db):
    """Hosts without MariaDB Connector/C use MariaDB Connector/Python (the same binary
    protocol), else send text: the same statements, counted the same by the server."""
    pytest.importorskip({"mariadb": "mariadb", "mysqlclient": "MySQLdb",
                         "pymysql": "pymysql"}[driver])
    out = tmp_path / f"{driver}.versus"
    r = versus("run", "--target", mariadb_db, "--workload", "micro", "--out", str(out),
               "--set", "tests=point-query,read-only_range=10,update-inlist,write-only",
               "--set", "table-size=1000", "--set", "read-seconds=1", "--set",
               "write-seconds=1", "--set", "warmup=0", "--set", f"mysql-driver={driver}")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    summaries = [e for e in _events(out) if e["kind"] == "summary" and "sql_client" in e]
    assert len(summaries) == 6
    for s in summaries:
        assert s["sql_client"]["driver"] == driver
        assert s["counters"]["statements"] > 0
        assert s["server_check"]["statements"] == s["counters"]["statements"], s["phase"]


@pytest.mark.parametrize("engine", ["pg", "mariadb"])
def test_failed_statements_in_the_compiled_loop_are_told_counted_and_rolled_back(
        engine, request, versus_home, tmp_path):
    """write-only on 10 rows with 4 clients: deadlocks and duplicate keys, which the
    compiled loop hands back to Python to tell (once per kind), count as failed events and
    roll back; the server's count still matches the clients' (failed statements and
    rollbacks included)."""
    url = request.getfixturevalue("pg_db" if engine == "pg" else "mariadb_db")
    if engine == "pg":
        # this database only: deadlocks found in 20 ms, not 1 s, so that a few seconds
        # hold hundreds of events and no client is still waiting on a lock at the end
        import psycopg
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
            c.execute(f'ALTER DATABASE "{_db(url)}" SET deadlock_timeout = \'20ms\'')
    out = tmp_path / "w.versus"
    r = versus("run", "--target", url, "--workload", "micro", "--out", str(out),
               "--set", "tests=write-only", "--set", "table-size=10", "--set", "clients=4",
               "--set", "write-seconds=3", "--set", "warmup=0", "--set", "client-loop=compiled")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    evs = _events(out)
    s = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "write-only")
    assert s["sql_client"]["loop"].startswith("compiled")
    errors = [e["message"] for e in evs if e["kind"] == "error"]
    assert s["errors_total"] > 0 and errors, s["errors_total"]
    assert all(m.startswith("ignored as sysbench does: ") for m in errors), errors
    assert any(w in m.lower() for m in errors for w in ("deadlock", "duplicate")), errors
    stmts, txns = s["counters"]["statements"], s["ops_total"]
    assert txns + s["errors_total"] >= 100
    # a good event is BEGIN, 4 writes, COMMIT; a failed one adds what it sent and ROLLBACK
    assert txns * 6 + s["errors_total"] * 2 <= stmts <= (txns + s["errors_total"]) * 6
    check = s["server_check"]
    if engine == "pg":
        assert check["transactions"] == pytest.approx(txns + s["errors_total"], rel=0.02)
    else:
        assert check["statements"] == pytest.approx(stmts, rel=0.02)


def test_a_mistyped_test_name_gets_a_did_you_mean():
    from workloads.sbtest.suite import select
    from workloads.params import ParamError
    with pytest.raises(ParamError) as e:
        select("point-qurey,scan,nonsense-xyz")
    said = str(e.value)
    assert "'point-qurey' (did you mean 'point-query'?)" in said, said
    assert "'nonsense-xyz'; tests are" in said, said          # nothing near: no guess
