"""Per-query client CPU and QPS of the psycopg client paths for the point query.

One process, one connection, one client path at a time for N seconds each:
`SELECT c FROM sbtest1 WHERE id=<random>` on a sysbench-prepared table in a scratch
database (dropped at the end). Client CPU is getrusage(RUSAGE_THREAD) of the looping thread
(user/sys); server CPU is the backend serving the connection (/proc/<pg_backend_pid()>/stat).

    .venv/bin/python bench/pg_drivers.py --seconds 5 --rows 100000
"""
from __future__ import annotations

import argparse
import random
import resource
import statistics
import time

import psycopg
from psycopg import pq

import sys
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from _common import PG, Engine, _cpu_s, table  # noqa: E402

Q = "SELECT c FROM sbtest1 WHERE id = %s"


def v_cursor_unprepared(conn):
    cur = conn.cursor()
    def step(i):
        cur.execute(Q, (i,), prepare=False); cur.fetchone()
    return step


def v_cursor_default(conn):
    # psycopg's default: prepared automatically after prepare_threshold (5) executions
    cur = conn.cursor()
    def step(i):
        cur.execute(Q, (i,)); cur.fetchone()
    return step


def v_cursor_prepared(conn):
    cur = conn.cursor()
    def step(i):
        cur.execute(Q, (i,), prepare=True); cur.fetchone()
    return step


def v_workload(conn):
    # the workload's own client (workloads/engine/sql/clients.py PgClient) on this connection
    from workloads.engine.sql.clients import PgClient
    client = PgClient.__new__(PgClient)
    client._pq, client.conn, client.pg, client._n = pq, conn, conn.pgconn, 0
    run = client.prepare("SELECT c FROM sbtest1 WHERE id=?", "i")
    def step(i):
        run((i,))
    return step


def v_pq_exec_prepared_binary(conn):
    # int4 parameter and results in binary format, as sysbench's pgsql driver asks for results
    pg = conn.pgconn
    pg.prepare(b"qb", b"SELECT c FROM sbtest1 WHERE id = $1", [23])
    ok = pq.ExecStatus.TUPLES_OK
    ex = pg.exec_prepared
    pack = __import__("struct").Struct("!i").pack
    def step(i):
        if ex(b"qb", (pack(i),), (1,), 1).status != ok:
            raise RuntimeError("query failed")
    return step


def v_pq_exec_prepared(conn):
    # the point-query loop before the micro suite: text parameter, text results
    pg = conn.pgconn
    res = pg.prepare(b"q1", b"SELECT c FROM sbtest1 WHERE id = $1", [23])
    assert res.status == pq.ExecStatus.COMMAND_OK
    ok = pq.ExecStatus.TUPLES_OK
    ex = pg.exec_prepared
    def step(i):
        res = ex(b"q1", (b"%d" % i,))
        if res.status != ok:
            raise RuntimeError(res.error_message)
    return step


def v_pq_exec_prepared_value(conn):
    pg = conn.pgconn
    pg.prepare(b"q2", b"SELECT c FROM sbtest1 WHERE id = $1", [23])
    ex = pg.exec_prepared
    def step(i):
        ex(b"q2", (b"%d" % i,)).get_value(0, 0)
    return step


def v_pq_exec_params(conn):
    pg = conn.pgconn
    ok = pq.ExecStatus.TUPLES_OK
    ex = pg.exec_params
    q = b"SELECT c FROM sbtest1 WHERE id = $1"
    def step(i):
        if ex(q, (b"%d" % i,), [23]).status != ok:
            raise RuntimeError("query failed")
    return step


def v_pq_exec_simple(conn):
    pg = conn.pgconn
    ok = pq.ExecStatus.TUPLES_OK
    ex = pg.exec_
    q = b"SELECT c FROM sbtest1 WHERE id = %d"
    def step(i):
        if ex(q % i).status != ok:
            raise RuntimeError("query failed")
    return step


VARIANTS = [
    ("micro PgClient, binary results [workload]", v_workload),
    ("pq exec_prepared, binary param+results", v_pq_exec_prepared_binary),
    ("cursor.execute(prepare=False)", v_cursor_unprepared),
    ("cursor.execute (default, auto-prepare)", v_cursor_default),
    ("cursor.execute(prepare=True)", v_cursor_prepared),
    ("pq exec_prepared, text results", v_pq_exec_prepared),
    ("pq exec_prepared + get_value", v_pq_exec_prepared_value),
    ("pq exec_params (unprepared)", v_pq_exec_params),
    ("pq exec_ simple query (literal)", v_pq_exec_simple),
]


def _proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    return _cpu_s(data[data.rindex(")") + 2:].split(), children=False)


def measure(name, setup, db, rows, seconds):
    conn = psycopg.connect(dbname=db, autocommit=True, **PG)
    bpid = conn.info.backend_pid
    step = setup(conn)
    rr = random.Random(1).random
    for _ in range(2000):                              # warm-up
        step(int(rr() * rows) + 1)
    s0 = _proc_cpu(bpid)
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
    s1 = _proc_cpu(bpid)
    conn.close()
    u = (r1.ru_utime - r0.ru_utime) * 1e6 / n
    s = (r1.ru_stime - r0.ru_stime) * 1e6 / n
    return {"name": name, "qps": n / wall, "us_user": u, "us_sys": s, "us_total": u + s,
            "us_server": (s1 - s0) * 1e6 / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5, help="per client path (default 5)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds; the table shows the median (default 3)")
    ap.add_argument("--best", action="store_true",
                    help="show each path's lowest CPU per query over the rounds instead of the "
                         "median (other load on a shared machine only ever adds CPU time)")
    args = ap.parse_args()
    eng = Engine("pg")
    with eng.scratch_database("versus_drv") as db:
        eng.sysbench_prepare(db, args.rows)
        runs: dict[str, list[dict]] = {}
        for rnd in range(args.rounds):
            for name, setup in VARIANTS:
                r = measure(name, setup, db, args.rows, args.seconds)
                runs.setdefault(name, []).append(r)
                print(f"  round {rnd + 1} {name:40s} {r['qps']:8,.0f} QPS  client "
                      f"{r['us_total']:6.2f} µs/q  server {r['us_server']:6.2f} µs/q", flush=True)
        res = []
        for rs in runs.values():
            out = dict(rs[0])
            for k in ("qps", "us_user", "us_sys", "us_total", "us_server"):
                pick = (max if k == "qps" else min) if args.best else statistics.median
                out[k] = pick(r[k] for r in rs)
            res.append(out)
    base = next(r for r in res if "[workload]" in r["name"])
    print()
    print(f"PostgreSQL point query, 1 connection, {args.seconds:g} s per path, "
          f"{'best' if args.best else 'median'} of {args.rounds} interleaved rounds "
          f"(ratios: x / {base['name']})")
    print(table(["client path", "QPS", "user µs/q", "sys µs/q", "client µs/q", "server µs/q",
                 "QPS ratio", "client CPU ratio", "server CPU ratio"],
                [[r["name"], r["qps"], r["us_user"], r["us_sys"], r["us_total"], r["us_server"],
                  f"{r['qps'] / base['qps']:.3f}", f"{r['us_total'] / base['us_total']:.3f}",
                  f"{r['us_server'] / base['us_server']:.3f}"] for r in res]))
    cheapest = min(res, key=lambda r: r["us_total"])
    print(f"\ncheapest client path: {cheapest['name']} ({cheapest['us_total']:.2f} µs/q, "
          f"{cheapest['us_total'] / base['us_total']:.3f}x the workload's)")


if __name__ == "__main__":
    main()
