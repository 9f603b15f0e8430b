"""point-query: one transaction type, SELECT c FROM sbtest<N> WHERE id=? (uniform ids).

The hot loops use each driver's cheapest path, measured in bench/point_query.py:
PostgreSQL through libpq's blocking PQexecPrepared (psycopg.pq), which avoids psycopg's
poll-based waiting; MySQL through mysqlclient's low-level query/store_result.
"""
from __future__ import annotations

import time

from ..events import bucket_of
from ..db import DatabaseError, connect_mysql_raw, connect_pg, mysql_driver
from . import load

TYPES = ("point-query",)


def id_picker(distribution: str, size: int, rng):
    """A function returning ids in 1..size; `special` follows sysbench 1.0's sb_rand_special
    with its defaults (rand-spec-pct=1, rand-spec-res=75, rand-spec-iter=12)."""
    rr = rng.random
    if distribution == "uniform":
        return lambda: int(rr() * size) + 1
    t = size - 1
    hot = max(1, t * 1 // 100)
    hot_base = t // 2 - t * 1 // 200

    def special() -> int:
        res = int(rr() * 4 * t) if t else 0        # range widened by 100 / (100 - 75)
        if res < t:
            return 1 + int(sum(rr() for _ in range(12)) * t / 12)
        return 1 + hot_base + res % hot
    return special


def run(agent) -> None:
    p = agent.params
    with agent.phase("prepare"):
        load.prepare(agent)
    if p["warmup"] > 0:
        agent.run_clients("warmup", vu_main, p["clients"], p["warmup"], TYPES)
    agent.run_clients("measure", vu_main, p["clients"], p["duration"], TYPES)


def vu_main(vu) -> None:
    if vu.target.dialect == "postgres":
        _vu_pg(vu)
    elif mysql_driver() == "mysqlclient":
        _vu_mysqlclient(vu)
    else:
        _vu_pymysql(vu)


def _vu_pg(vu) -> None:
    from psycopg import pq
    conn = connect_pg(vu.target)
    pg = conn.pgconn
    tables, size = vu.params["tables"], vu.params["table-size"]
    names = []
    for n in range(1, tables + 1):
        name = f"q{n}".encode()
        res = pg.prepare(name, f"SELECT c FROM sbtest{n} WHERE id = $1".encode(), [23])
        if res.status != pq.ExecStatus.COMMAND_OK:
            raise DatabaseError(f"cannot prepare the point query on sbtest{n}: "
                                f"{(res.error_message or b'').decode(errors='replace').strip()}")
        names.append(name)
    if not vu.wait_for_go():
        conn.close()
        return
    arr, base = vu.arr, vu.base(0)
    hb = base + 2
    stop = vu.stop
    rr = vu.rng.random
    pick = id_picker(vu.params.get("distribution", "uniform"), size, vu.rng)
    clock = time.perf_counter_ns
    ok = pq.ExecStatus.TUPLES_OK
    exec_prepared = pg.exec_prepared
    while not stop.value:
        name = names[int(rr() * tables)] if tables > 1 else names[0]
        arg = (b"%d" % pick(),)
        t0 = clock()
        res = exec_prepared(name, arg)
        us = (clock() - t0) // 1000
        if res.status == ok:
            arr[hb + bucket_of(us)] += 1
            arr[base] += 1
        else:
            arr[base + 1] += 1
            if pg.status != pq.ConnStatus.OK:
                vu.report_error("lost the database connection: "
                                + (pg.error_message or b"").decode(errors="replace").strip())
                break
    conn.close()


def _vu_mysqlclient(vu) -> None:
    import MySQLdb
    conn = connect_mysql_raw(vu.target)
    tables, size = vu.params["tables"], vu.params["table-size"]
    stmts = [b"SELECT c FROM sbtest%d WHERE id=" % n for n in range(1, tables + 1)]
    if not vu.wait_for_go():
        conn.close()
        return
    arr, base = vu.arr, vu.base(0)
    hb = base + 2
    stop = vu.stop
    rr = vu.rng.random
    clock = time.perf_counter_ns
    # discard_result reads the row off the wire and frees it in C (bench/mysql_drivers.py:
    # 0.8x the client CPU of store_result().fetch_row())
    query, store, discard = conn.query, conn.store_result, conn.discard_result
    pick = id_picker(vu.params.get("distribution", "uniform"), size, vu.rng)
    while not stop.value:
        sql = (stmts[int(rr() * tables)] if tables > 1 else stmts[0]) + b"%d" % pick()
        t0 = clock()
        try:
            query(sql)
            discard()
        except MySQLdb.OperationalError as exc:
            arr[base + 1] += 1
            vu.report_error(f"lost the database connection: {exc}")
            break
        except MySQLdb.Error:
            arr[base + 1] += 1
            continue
        arr[hb + bucket_of((clock() - t0) // 1000)] += 1
        arr[base] += 1
    else:
        query(b"SHOW SESSION STATUS LIKE 'Com_select'")
        vu.report_server_count(int(store().fetch_row()[0][1]))
    conn.close()


def _vu_pymysql(vu) -> None:
    import pymysql
    conn = connect_mysql_raw(vu.target)
    tables, size = vu.params["tables"], vu.params["table-size"]
    stmts = [f"SELECT c FROM sbtest{n} WHERE id=" for n in range(1, tables + 1)]
    if not vu.wait_for_go():
        conn.close()
        return
    arr, base = vu.arr, vu.base(0)
    hb = base + 2
    stop = vu.stop
    rr = vu.rng.random
    clock = time.perf_counter_ns
    cur = conn.cursor()
    pick = id_picker(vu.params.get("distribution", "uniform"), size, vu.rng)
    while not stop.value:
        sql = (stmts[int(rr() * tables)] if tables > 1 else stmts[0]) + str(pick())
        t0 = clock()
        try:
            cur.execute(sql)
            cur.fetchone()
        except pymysql.OperationalError as exc:
            arr[base + 1] += 1
            vu.report_error(f"lost the database connection: {exc}")
            break
        except pymysql.Error:
            arr[base + 1] += 1
            continue
        arr[hb + bucket_of((clock() - t0) // 1000)] += 1
        arr[base] += 1
    else:
        cur.execute("SHOW SESSION STATUS LIKE 'Com_select'")
        vu.report_server_count(int(cur.fetchone()[1]))
    conn.close()
