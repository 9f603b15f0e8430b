"""Prepare sbtest1..N as sysbench does: reuse tables that match, else create and bulk-load.

Rows as sysbench's oltp_common.lua makes them: id 1..table-size, k uniform in 1..table-size
(sysbench 1.1's default distribution), c ten and pad five groups of 11 random digits joined
by '-'. Bulk path: COPY for PostgreSQL, multi-row INSERTs in large transactions for
MySQL/MariaDB; the secondary index on k is built after the rows are in, and PostgreSQL's
SERIAL sequence is moved past the loaded ids so inserts get new ones, as after sysbench's
own prepare.
"""
from __future__ import annotations

import random
import time
from pathlib import Path

from ..engine.api import SqlSession
from .values import Strings

BATCH = 5000
_SCHEMA = Path(__file__).with_name("schema")


def schema_statements(dialect: str, n: int) -> tuple[str, str]:
    text = (_SCHEMA / f"{dialect}.sql").read_text()
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("-- "))
    create, index = (part.strip().rstrip(";") for part in body.split("--\n"))
    return create.format(n=n), index.format(n=n)


def table_matches(db: SqlSession, n: int, size: int) -> bool:
    name = f"sbtest{n}"
    if db.dialect == "postgres":
        exists = db.scalar("SELECT to_regclass(%s) IS NOT NULL", (name,))
    else:
        exists = db.scalar("SELECT COUNT(*) FROM information_schema.tables "
                           "WHERE table_schema = DATABASE() AND table_name = %s", (name,))
    if not exists:
        return False
    row = db.execute(f"SELECT COUNT(*), MIN(id), MAX(id) FROM {name}")[0]
    return tuple(int(x or 0) for x in row) == (size, 1 if size else 0, size)


def prepare(agent) -> None:
    p = agent.params
    tables, size = p["tables"], p["table-size"]
    db = SqlSession(agent.target)
    try:
        todo = [n for n in range(1, tables + 1)
                if p.get("rebuild") or not table_matches(db, n, size)]
        if not todo:
            agent.log(f"reusing {tables} table(s) of {size} rows")
            agent.progress("prepare", tables * size, tables * size)
            return
        agent.log(f"loading {len(todo)} table(s) of {size} rows")
        t0 = time.monotonic()
        total = len(todo) * size
        done = 0
        rng = random.Random(12345)
        strings = Strings(rng)
        for n in todo:
            create, index = schema_statements(db.dialect, n)
            db.execute(f"DROP TABLE IF EXISTS sbtest{n}")
            db.execute(create)
            loader = _copy_pg if db.dialect == "postgres" else _insert_mysql
            for rows in loader(db, n, size, rng, strings):
                done += rows
                agent.progress("prepare", done, total)
                agent.check_stop()
            db.execute(index)
            if db.dialect == "postgres":
                db.execute(f"SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), "
                           f"{max(size, 1)}, {'true' if size else 'false'})")
                db.execute(f"ANALYZE sbtest{n}")
            else:
                db.execute(f"ANALYZE TABLE sbtest{n}")
        agent.load_summary("prepare", total, time.monotonic() - t0, tables=len(todo),
                           method="COPY FROM STDIN" if db.dialect == "postgres"
                           else "multi-row INSERT")
    finally:
        db.close()


def _rows(strings: Strings, rng: random.Random, start: int, end: int, size: int):
    rr, c, pad = rng.random, strings.c, strings.pad
    for i in range(start, end + 1):
        yield i, int(rr() * size) + 1, c(), pad()


def _copy_pg(db: SqlSession, n: int, size: int, rng, strings):
    conn = db.conn
    with conn.transaction():
        with conn.cursor() as cur:
            with cur.copy(f"COPY sbtest{n} (id, k, c, pad) FROM STDIN") as copy:
                for start in range(1, size + 1, BATCH):
                    end = min(size, start + BATCH - 1)
                    buf = "".join(f"{i}\t{k}\t{c}\t{pad}\n"
                                  for i, k, c, pad in _rows(strings, rng, start, end, size))
                    copy.write(buf.encode())
                    yield end - start + 1


def _insert_mysql(db: SqlSession, n: int, size: int, rng, strings):
    conn = db.conn
    per_stmt = 1000
    cur = conn.cursor()
    try:
        for start in range(1, size + 1, BATCH):
            end = min(size, start + BATCH - 1)
            cur.execute("BEGIN")
            for s in range(start, end + 1, per_stmt):
                e = min(end, s + per_stmt - 1)
                values = ",".join(f"({i},{k},'{c}','{pad}')"
                                  for i, k, c, pad in _rows(strings, rng, s, e, size))
                cur.execute(f"INSERT INTO sbtest{n} (id, k, c, pad) VALUES {values}")
            cur.execute("COMMIT")
            yield end - start + 1
    finally:
        cur.close()
