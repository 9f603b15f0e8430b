"""Server counters per interval (workloads/engine/measure/counters.py) on real servers: the views that exist
are read, the monitor's own transactions are left out of the counts, and the db events carry
them; a phase's server count on PostgreSQL is its clients' count, exactly."""
from __future__ import annotations

import os
import threading
import time

import pytest

from tests.workloads.agentrun import local_target, run_agent
from workloads.engine.measure.counters import ServerCounters, delta
from workloads.engine.sql.db import (SqlSession, TargetInfo, connect_pg, pg_ended_backends,
                          pg_report_stats)
from workloads.engine.servers.managed import ManagedServer, inspect


def _pg_target(url: str) -> TargetInfo:
    return TargetInfo("postgres", "127.0.0.1", 5432, "postgres", url.rsplit("/", 1)[1])


def test_postgres_monitor_transactions_are_counted_exactly_between_marks(pg_db):
    """In a database nobody else uses, xact_commit between two marks moves by exactly the
    monitor's own statements: its polls, other statements on its connection (as finding the
    server's processes makes), and psycopg's automatic preparing of a statement run often,
    which would be a transaction nothing counted."""
    counters = ServerCounters(_pg_target(pg_db))
    try:
        assert {"pg_stat_database", "pg_stat_bgwriter", "pg_stat_wal"} <= set(counters.sources)
        assert "pg_stat_io" in counters.absent          # PostgreSQL 15
        assert counters.can_flush
        first = counters.mark()
        own0 = counters.own_at_read
        for i in range(8):          # more than psycopg's prepare threshold (5)
            counters.read()
            counters.session.scalar("SELECT pg_backend_pid()")
            if i == 3:
                time.sleep(1.1)     # a backend reports on its own at most once a second
        last = counters.mark()
        d = delta(last, first)
        # the first mark's read, 8 reads and 8 other statements, the last mark's report
        assert d["xact_commit"] == counters.own_at_read - own0 == 1 + 8 * 2 + 1, d
        assert d["xact_rollback"] == 0
        # this database's counters (the server-wide views move with other users' work)
        moved = {k: v for k, v in d.items() if v and "." not in k and k not in
                 ("xact_commit", "session_time", "active_time", "tup_returned",
                  "tup_fetched", "blks_hit")}
        assert not moved, moved
    finally:
        counters.close()


def test_postgres_a_connections_setup_is_reported_before_a_mark_and_its_end_awaited(pg_db):
    """What a connection did before a phase (connecting, preparing: transactions that touch
    no table) is in the database's count once pg_report_stats returns, so a phase's marks
    hold only the phase's work; after the connection closed and its backend ended, the
    count is complete."""
    target = _pg_target(pg_db)
    counters = ServerCounters(target)
    try:
        for work in (0, 3):
            conn = connect_pg(target)
            conn.pgconn.prepare(b"q", b"SELECT 1")
            conn.execute("SET application_name = 'versus-test'")
            pid = conn.info.backend_pid
            assert pid in pg_report_stats()     # (and the monitor's, of this process too)
            before = counters.mark()
            own0 = counters.own_at_read
            for _ in range(work):
                conn.pgconn.exec_prepared(b"q", [])
            conn.close()
            ended = pg_ended_backends()
            assert pid in ended
            while counters.session.scalar("SELECT count(*) FROM pg_stat_activity "
                                          "WHERE pid = ANY(%s)", (ended,)):
                time.sleep(0.01)
            d = delta(counters.mark(), before)
            assert d["xact_commit"] - (counters.own_at_read - own0) == work, d
    finally:
        counters.close()


def test_postgres_counters_move_with_work_and_wait_events_are_sampled(pg_db):
    target = _pg_target(pg_db)
    counters = ServerCounters(target)
    db = SqlSession(target)
    try:
        before = counters.read()
        db.execute("CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 5000) g")
        db.execute("SELECT count(*) FROM t")
        time.sleep(1.1)
        db.execute("SELECT 1")      # a backend reports at a transaction's end, once a second
        other = SqlSession(target)
        sleeper = threading.Thread(target=other.execute, args=("SELECT pg_sleep(2)",))
        sleeper.start()
        time.sleep(0.5)
        d = delta(counters.read(), before)
        assert counters.gauges.get("wait.Timeout.PgSleep") == 1, counters.gauges
        assert d["tup_inserted"] >= 5000 and d["wal.wal_bytes"] > 0, d
        sleeper.join()
        other.close()
    finally:
        db.close()
        counters.close()


def test_postgres_server_count_of_every_phase_is_the_clients_count(tmp_path, pg_db):
    """point-query, a warm-up then the measured phase, on PostgreSQL: each phase's server
    count (xact_commit + xact_rollback of the database, minus the monitor's own transactions)
    is the number of queries its clients completed. Exactly: the virtual users' connecting
    and preparing, the loader's connections, the monitor's polls and its other statements
    (finding the server's processes) are not the phase's. (The machine's server runs without
    autovacuum, whose worker would add its own transactions if it visited the database.)"""
    evs = run_agent(tmp_path, "point-query", {"table-size": 2000, "clients": 3, "warmup": 2,
                                              "duration": 3},
                    local_target(pg_db.rsplit("/", 1)[1], "postgres"))
    assert evs[-1]["status"] == "ok", evs[-3:]
    sums = {e["phase"]: e for e in evs if e["kind"] == "summary" and "server" in e}
    assert set(sums) == {"warmup", "measure"}
    for name, s in sums.items():
        srv = s["server"]
        assert s["errors_total"] == 0 and s["ops_total"] > 1000, s
        assert srv["own_polls"] >= 3          # a poll a second, and the edges' own
        assert srv["delta"] == srv["delta_raw"] - srv["own_polls"]
        assert srv["delta"] == s["ops_total"], (name, srv["delta_raw"], srv["own_polls"],
                                                s["ops_total"])


@pytest.fixture
def private_mariadb(service_workdir):
    d = service_workdir
    srv = ManagedServer(inspect("/usr"), os.path.join(d, "srv"),
                        "[mysqld]\ninnodb_buffer_pool_size = 64M\n", d)
    target = srv.start()
    yield target
    srv.stop()


def test_mariadb_polls_are_not_in_the_counts_but_other_connections_are(private_mariadb):
    counters = ServerCounters(private_mariadb)
    db = SqlSession(private_mariadb)
    try:
        assert counters.sources == ["SHOW GLOBAL STATUS", "information_schema.INNODB_METRICS"]
        first = counters.read()
        for _ in range(5):
            counters.read()
        quiet = delta(counters.read(), first)
        own = {k: v for k, v in quiet.items()
               if v and k.startswith(("Com_", "Questions", "Handler_", "Select_", "Rows_",
                                      "Created_tmp_"))}
        assert not own, own
        # bytes sent: the status values' lengths vary from poll to poll by a few bytes
        assert all(abs(quiet[k]) < 64 * 6 for k in ("Bytes_sent", "Bytes_received")), quiet
        assert counters.gauges["Threads_connected"] >= 2
        for _ in range(10):
            db.execute("SELECT 1")
        busy = delta(counters.read(), first)
        assert busy["Com_select"] == 10 and busy["Questions"] == 10, busy
    finally:
        db.close()
        counters.close()


def test_db_events_carry_moved_counters_gauges_and_their_sources(tmp_path, mariadb_db, pg_db):
    for engine, url in (("postgres", pg_db), ("mariadb", mariadb_db)):
        evs = run_agent(tmp_path, "point-query", {"table-size": 2000, "clients": 2,
                                                  "duration": 3},
                        local_target(url.rsplit("/", 1)[1], engine))
        assert evs[-1]["status"] == "ok", evs[-3:]
        dbs = [e for e in evs if e["kind"] == "db"]
        assert len(dbs) >= 3
        said = [e["message"] for e in evs if e["kind"] == "log"
                and e["message"].startswith("server counters: ")]
        assert len(said) == 1
        if engine == "postgres":
            assert said[0] == ("server counters: pg_stat_database, pg_stat_activity (wait "
                               "events), pg_stat_bgwriter, pg_stat_wal (pg_stat_checkpointer, "
                               "pg_stat_io: not in this server)")
            assert all(e["own_xacts"] >= 1 and "numbackends" in e["gauges"] for e in dbs)
            assert max(e["counters"]["tup_fetched"] for e in dbs) > 0
        else:
            assert all("Threads_running" in e["gauges"] for e in dbs)
            assert max(e["counters"].get("Com_select", 0) for e in dbs) > 0
        for e in dbs:      # zero deltas are left out, the transaction counters stay
            assert all(v != 0 or k in ("xact_commit", "xact_rollback", "Com_commit",
                                       "Com_rollback") for k, v in e["counters"].items())


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_a_monitor_that_stops_is_said_in_the_result_and_show(request, db, versus_home, tmp_path):
    """The monitor's connection is terminated mid-run (no reconnect): the run ends ok, and the
    result, the run's end and `show` say the server cross-check is missing, from when and why."""
    import json
    from tests.dbs import query, versus
    from tests.faults import CLIProcess
    url = request.getfixturevalue(db)
    name = url.rsplit("/", 1)[1]
    out = tmp_path / "m.versus"
    cli = CLIProcess("run", "--target", url, "--workload", "point-query", "--duration", "6",
                     "--set", "table-size=2000", "--set", "clients=1", "--out", str(out))
    cli.wait_for(r"measure +\d")                 # a measured sample: the monitor is polling
    if url.startswith("postgresql"):             # its connection is the run's oldest
        query(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
                   f"'{name}' AND pid <> pg_backend_pid() ORDER BY backend_start LIMIT 1")
    else:
        (mid,) = query(url, "SELECT min(ID) FROM information_schema.PROCESSLIST WHERE DB = "
                            f"'{name}' AND ID <> CONNECTION_ID()")[0]
        query(url, f"KILL {int(mid)}")
    r = cli.finish()
    assert r.returncode == 0, r.stderr[-2000:]
    said = [x for x in r.stdout.splitlines() if "server counters stopped at" in x]
    assert said and all("the server cross-check is missing" in x for x in said), r.stdout
    assert any("measure done:" in x for x in said), said
    shown = versus("show", str(out))
    assert "server counters stopped at" in shown.stdout, shown.stdout
    (run,) = json.loads(versus("show", "--json", str(out)).stdout)["runs"]
    (miss,) = next(p for p in run["phases"] if p["name"] == "measure")["missing"]
    assert miss["source"] == "server counters" and miss["since"] > 0 and miss["why"]
