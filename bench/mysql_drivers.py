"""Per-query client CPU and QPS of the MySQL/MariaDB client paths for the point query.

The workload's own clients (workloads/engine/sql/clients.py) are measured as they run in a
virtual user: MariaDB Connector/C through ctypes and MariaDB Connector/Python, each with a
server-side prepared statement executed over the binary protocol (what sysbench does),
mysqlclient and PyMySQL sending text; beside them
the connector's public API (which re-prepares a statement on every execute unless told
otherwise) and other raw paths.

One process, one connection, one client path at a time for N seconds each:
`SELECT c FROM sbtest1 WHERE id=<random>` on a sysbench-prepared table in a scratch
database (dropped at the end). Client CPU is getrusage(RUSAGE_THREAD) of the looping thread
(user/sys); server CPU is the mariadbd thread serving the connection (/proc task stat, its
TID from information_schema.PROCESSLIST). Also: connect time per driver.

    .venv/bin/python bench/mysql_drivers.py --seconds 5 --rows 100000
"""
from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time

import MySQLdb
import pymysql
from MySQLdb import _mysql

sys.path.insert(1, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from _common import MY, Engine, _cpu_s, table

SQL = "SELECT c FROM sbtest1 WHERE id="


def _pymysql(db, **extra):
    return pymysql.connect(host=MY["host"], port=MY["port"], user=MY["user"],
                           password=MY["password"], database=db, autocommit=True, **extra)


def _mysqldb(db):
    c = MySQLdb.connect(host=MY["host"], port=MY["port"], user=MY["user"],
                        password=MY["password"], database=db)
    c.autocommit(True)
    return c


def _raw(db):
    c = _mysql.connect(host=MY["host"], port=MY["port"], user=MY["user"],
                       password=MY["password"], database=db)
    c.autocommit(True)
    return c


# Each variant: (name, connect(db) -> conn, setup(conn) -> step(id) callable)
def v_pymysql_concat(conn):
    cur = conn.cursor()
    def step(i):
        cur.execute(SQL + str(i)); cur.fetchone()
    return step


def v_pymysql_params(conn):
    cur = conn.cursor()
    q = "SELECT c FROM sbtest1 WHERE id=%s"
    def step(i):
        cur.execute(q, (i,)); cur.fetchone()
    return step


def v_pymysql_sql_ps(conn):
    cur = conn.cursor()
    cur.execute("PREPARE pq FROM 'SELECT c FROM sbtest1 WHERE id=?'")
    def step(i):
        cur.execute("EXECUTE pq USING " + str(i)); cur.fetchone()
    return step


def v_mysqldb_cursor(conn):
    cur = conn.cursor()
    q = SQL.encode()
    def step(i):
        cur.execute(q + b"%d" % i); cur.fetchone()
    return step


def v_raw_store(conn):
    # the point-query loop before the micro suite: query, store_result, fetch_row
    q = SQL.encode()
    query, store = conn.query, conn.store_result
    def step(i):
        query(q + b"%d" % i); store().fetch_row()
    return step


def v_raw_format(conn):
    q = (SQL + "%d").encode()
    query, store = conn.query, conn.store_result
    def step(i):
        query(q % i); store().fetch_row()
    return step


def v_raw_use_result(conn):
    q = (SQL + "%d").encode()
    query, use = conn.query, conn.use_result
    def step(i):
        query(q % i); r = use(); r.fetch_row(); r.fetch_row()   # 2nd read hits the EOF
    return step


def v_raw_sql_ps(conn):
    # MariaDB (>= 10.2) accepts literals in EXECUTE ... USING: one round trip, the server
    # parses the short EXECUTE text and runs the prepared SELECT
    conn.query(b"PREPARE pq FROM 'SELECT c FROM sbtest1 WHERE id=?'")
    q = b"EXECUTE pq USING %d"
    query, store = conn.query, conn.store_result
    def step(i):
        query(q % i); store().fetch_row()
    return step


def v_raw_discard(conn):
    # reads the row off the wire and frees it without building Python objects, which is
    # what sysbench's oltp_point_select does with the result set
    q = (SQL + "%d").encode()
    query, discard = conn.query, conn.discard_result
    def step(i):
        query(q % i); discard()
    return step


def v_raw_vu_loop(conn):
    # the workload's whole per-query loop body: two rng draws, two clock reads, the
    # histogram bucket and two shared-memory counter updates around query/store/fetch
    import multiprocessing as mp
    from workloads.events import N_BUCKETS, bucket_of
    arr = mp.get_context("fork").RawArray("Q", 2 + N_BUCKETS)
    q = SQL.encode()
    query, store = conn.query, conn.store_result
    clock = time.perf_counter_ns
    base, hb = 0, 2
    def step(i):
        sql = q + b"%d" % i
        t0 = clock()
        try:
            query(sql)
            store().fetch_row()
        except MySQLdb.OperationalError:
            raise
        arr[hb + bucket_of((clock() - t0) // 1000)] += 1
        arr[base] += 1
    return step


def _target(db):
    from workloads.engine.sql.db import TargetInfo
    return TargetInfo("mariadb", MY["host"], MY["port"], MY["user"], db, MY["password"])


def _client(kind):
    """A workload client (workloads/engine/sql/clients.py) and its prepared point query."""
    from workloads.engine.sql import clients

    def connect(db):
        return clients.connect(_target(db), kind)

    def setup(client):
        run = client.prepare("SELECT c FROM sbtest1 WHERE id=?", "i")
        def step(i):
            run((i,))
        return step
    return connect, setup


def _mdb(db):
    import mariadb
    return mariadb.connect(host=MY["host"], port=MY["port"], user=MY["user"],
                           password=MY["password"], database=db, autocommit=True)


def v_mdb_text(conn):
    cur = conn.cursor()
    def step(i):
        cur.execute("SELECT c FROM sbtest1 WHERE id=?", (i,)); cur.fetchone()
    return step


def v_mdb_binary_reprepared(conn):
    # the connector's documented path: each execute() prepares, executes and closes
    cur = conn.cursor(prepared=True, binary=True)
    def step(i):
        cur.execute("SELECT c FROM sbtest1 WHERE id=?", (i,)); cur.fetchone()
    return step


def v_mdb_binary_public(conn):
    # public execute() of a statement kept prepared (the connector's _reprepare flag cleared)
    cur = conn.cursor(prepared=True, binary=True)
    cur.execute("SELECT c FROM sbtest1 WHERE id=?", (1,)); cur.fetchall()
    cur._reprepare = False
    def step(i):
        cur.execute("SELECT c FROM sbtest1 WHERE id=?", (i,)); cur.fetchone()
    return step


VARIANTS = [
    ("libmariadb (ctypes) binary PS [workload]", *_client("libmariadb")),
    ("MariaDB C/Py binary PS [workload]", *_client("mariadb")),
    ("mysqlclient text [workload]", *_client("mysqlclient")),
    ("PyMySQL text [workload]", *_client("pymysql")),
    ("MariaDB C/Py execute(), text", _mdb, v_mdb_text),
    ("MariaDB C/Py execute(), binary re-prepared", _mdb, v_mdb_binary_reprepared),
    ("MariaDB C/Py execute(), binary prepared once", _mdb, v_mdb_binary_public),
    ("PyMySQL cursor, str concat (ssl off)", lambda db: _pymysql(db, ssl_disabled=True),
     v_pymysql_concat),
    ("PyMySQL cursor, %s params (ssl off)", lambda db: _pymysql(db, ssl_disabled=True),
     v_pymysql_params),
    ("PyMySQL EXECUTE ... USING (SQL PS)", lambda db: _pymysql(db, ssl_disabled=True),
     v_pymysql_sql_ps),
    ("mysqlclient cursor (MySQLdb)", _mysqldb, v_mysqldb_cursor),
    ("_mysql query/store/fetch", _raw, v_raw_store),
    ("_mysql, one %-format bytes", _raw, v_raw_format),
    ("_mysql query/use_result", _raw, v_raw_use_result),
    ("_mysql query/discard_result", _raw, v_raw_discard),
    ("_mysql workload loop + counters", _raw, v_raw_vu_loop),
    ("_mysql EXECUTE ... USING (SQL PS)", _raw, v_raw_sql_ps),
]


def _query1(conn, sql: str):
    conn = getattr(conn, "conn", conn)            # a workload client: its connection
    if hasattr(conn, "rows"):                     # workloads.engine.sql.libmariadb
        return conn.rows(sql)[0][0]
    if isinstance(conn, _mysql.connection):
        conn.query(sql.encode())
        return conn.store_result().fetch_row()[0][0]
    cur = conn.cursor()
    cur.execute(sql)
    return cur.fetchone()[0]


def _thread_cpu(server_pid: int, tid: int) -> float:
    with open(f"/proc/{server_pid}/task/{tid}/stat") as f:
        data = f.read()
    return _cpu_s(data[data.rindex(")") + 2:].split(), children=False)


def measure(name, connect, setup, db, rows, seconds, server_pid):
    conn = connect(db)
    tid = int(_query1(conn, "SELECT TID FROM information_schema.PROCESSLIST "
                            "WHERE ID = CONNECTION_ID()"))
    step = setup(conn)
    rng = random.Random(1)
    rr = rng.random
    for _ in range(2000):                              # warm-up
        step(int(rr() * rows) + 1)
    s0 = _thread_cpu(server_pid, tid)
    r0 = resource.getrusage(resource.RUSAGE_THREAD)
    t0 = time.perf_counter()
    end = t0 + seconds
    n = 0
    clock = time.perf_counter
    while True:
        for _ in range(500):
            step(int(rr() * rows) + 1)
        n += 500
        if clock() >= end:
            break
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    s1 = _thread_cpu(server_pid, tid)
    conn.close()
    u = (r1.ru_utime - r0.ru_utime) * 1e6 / n
    s = (r1.ru_stime - r0.ru_stime) * 1e6 / n
    return {"name": name, "qps": n / wall, "us_user": u, "us_sys": s, "us_total": u + s,
            "us_server": (s1 - s0) * 1e6 / n, "n": n}


CONNECTS = [
    ("PyMySQL default", lambda db: _pymysql(db)),
    ("PyMySQL ssl_disabled=True", lambda db: _pymysql(db, ssl_disabled=True)),
    ("mysqlclient MySQLdb.connect", _mysqldb),
    ("mysqlclient _mysql.connect", _raw),
    ("MariaDB Connector/Python", _mdb),
    ("libmariadb (ctypes)", lambda db: _client("libmariadb")[0](db)),
]


def measure_connect(name, connect, db, count):
    connect(db).close()
    r0 = resource.getrusage(resource.RUSAGE_THREAD)
    t0 = time.perf_counter()
    for _ in range(count):
        connect(db).close()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return [name, wall * 1e3 / count, cpu * 1e3 / count]


def median_run(rs: list[dict]) -> dict:
    """Field-wise median over rounds."""
    out = dict(rs[0])
    for k in ("qps", "us_user", "us_sys", "us_total", "us_server"):
        out[k] = statistics.median(r[k] for r in rs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5, help="per client path (default 5)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds; the table shows the median (default 3)")
    ap.add_argument("--connects", type=int, default=300, help="connections per driver")
    args = ap.parse_args()
    eng = Engine("mariadb")
    spid = eng.server_pid()
    with eng.scratch_database("versus_drv") as db:
        eng.sysbench_prepare(db, args.rows)
        runs: dict[str, list[dict]] = {}
        for rnd in range(args.rounds):
            for name, connect, setup in VARIANTS:
                r = measure(name, connect, setup, db, args.rows, args.seconds, spid)
                runs.setdefault(name, []).append(r)
                print(f"  round {rnd + 1} {name:38s} {r['qps']:8,.0f} QPS  client "
                      f"{r['us_total']:6.2f} µs/q  server {r['us_server']:6.2f} µs/q", flush=True)
        res = [median_run(rs) for rs in runs.values()]
        conns = [measure_connect(n, c, db, args.connects) for n, c in CONNECTS]
    base = next(r for r in res if "[workload]" in r["name"])
    print()
    print(f"MariaDB point query, 1 connection, {args.seconds:g} s per path, median of "
          f"{args.rounds} interleaved rounds (ratios: x / {base['name']}, the workload's "
          f"default client)")
    print(table(["client path", "QPS", "user µs/q", "sys µs/q", "client µs/q", "server µs/q",
                 "QPS ratio", "client CPU ratio", "server CPU ratio"],
                [[r["name"], r["qps"], r["us_user"], r["us_sys"], r["us_total"], r["us_server"],
                  f"{r['qps'] / base['qps']:.3f}", f"{r['us_total'] / base['us_total']:.3f}",
                  f"{r['us_server'] / base['us_server']:.3f}"] for r in res]))
    cheapest = min(res, key=lambda r: r["us_total"])
    print(f"\ncheapest client path: {cheapest['name']} ({cheapest['us_total']:.2f} µs/q, "
          f"{cheapest['us_total'] / base['us_total']:.3f}x the workload's); "
          f"cheapest server-side: {min(res, key=lambda r: r['us_server'])['name']}")
    print()
    print(f"Connect + close, {args.connects} times each")
    print(table(["driver", "wall ms/connect", "client CPU ms/connect"], conns))


if __name__ == "__main__":
    main()
