"""perf-trace steps: one statement type and range size per step, on sbtest1."""
from __future__ import annotations

import functools
import time

from ..engine.api import MYSQL_LOST, DatabaseError, connect_mysql_raw, connect_pg, mysql_driver
from ..events import bucket_of
from ..sbtest import load
from . import cells, phase_name

SQL = {
    "select": "SELECT c FROM sbtest1 WHERE id BETWEEN {a} AND {b}",
    "aggregate": "SELECT sum(k) FROM sbtest1 WHERE id BETWEEN {a} AND {b}",
    "update": "UPDATE sbtest1 SET k = k + 1 WHERE id BETWEEN {a} AND {b}",
}


class _Prepare:
    """The point-query loader's view of this run: one table of table-size rows."""

    def __init__(self, agent):
        self._agent = agent
        self.params = {"tables": 1, "table-size": agent.params["table-size"],
                       "rebuild": agent.params["rebuild"]}

    def __getattr__(self, name):
        return getattr(self._agent, name)


def run(agent) -> None:
    p = agent.params
    todo = cells(p)                   # resolved by the spec: checked before the start
    with agent.phase("prepare"):
        load.prepare(_Prepare(agent))
    for kind, rows in todo:
        agent.run_clients(phase_name(kind, rows), functools.partial(vu_main, kind, rows),
                          p["clients"], p["seconds"], (kind,))


def vu_main(kind: str, rows: int, vu) -> None:
    if vu.target.dialect == "postgres":
        _vu_pg(kind, rows, vu)
    else:
        _vu_mysql(kind, rows, vu)


def _loop(vu, rows: int, execute) -> None:
    """Run `execute(first_id)` until told to stop, counting each call and its latency."""
    span = vu.params["table-size"] - rows + 1
    arr, base = vu.arr, vu.base(0)
    hb = base + 2
    stop, rr, clock = vu.stop, vu.rng.random, time.perf_counter_ns
    while not stop.value:
        first = int(rr() * span) + 1
        t0 = clock()
        if execute(first):
            arr[hb + bucket_of((clock() - t0) // 1000)] += 1
            arr[base] += 1
        else:
            arr[base + 1] += 1


def _vu_pg(kind: str, rows: int, vu) -> None:
    from psycopg import pq
    conn = connect_pg(vu.target)
    pg = conn.pgconn
    sql = SQL[kind].format(a="$1", b="$2")
    res = pg.prepare(b"q", sql.encode(), [23, 23])
    if res.status != pq.ExecStatus.COMMAND_OK:
        raise DatabaseError(f"cannot prepare {sql}: "
                            f"{(res.error_message or b'').decode(errors='replace').strip()}")
    if not vu.wait_for_go():
        conn.close()
        return
    good = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)
    exec_prepared = pg.exec_prepared

    def execute(first: int) -> bool:
        res = exec_prepared(b"q", (b"%d" % first, b"%d" % (first + rows - 1)))
        if res.status in good:
            return True
        if pg.status != pq.ConnStatus.OK:
            vu.connection_lost((pg.error_message or b"").decode(errors="replace").strip())
        return False

    try:
        _loop(vu, rows, execute)
    finally:
        conn.close()


def _vu_mysql(kind: str, rows: int, vu) -> None:
    conn = connect_mysql_raw(vu.target)
    sql = SQL[kind]
    if not vu.wait_for_go():
        conn.close()
        return
    if mysql_driver() == "mysqlclient":
        import MySQLdb
        query, discard, errors = conn.query, conn.discard_result, MySQLdb.Error

        def run_one(text: str) -> None:
            query(text.encode())
            discard()
    else:
        import pymysql
        cur, errors = conn.cursor(), pymysql.Error

        def run_one(text: str) -> None:
            cur.execute(text)
            cur.fetchall()

    def execute(first: int) -> bool:
        try:
            run_one(sql.format(a=first, b=first + rows - 1))
            return True
        except errors as exc:
            if exc.args and exc.args[0] in MYSQL_LOST:
                vu.connection_lost(str(exc))
            return False

    try:
        _loop(vu, rows, execute)
    finally:
        conn.close()
