"""Prepare sbtest<N>: reuse tables that match, else create and bulk-load them.

Bulk path: COPY for PostgreSQL, multi-row INSERTs in large transactions for MySQL/MariaDB.
The secondary index on k is built after the rows are in, as sysbench's --create-secondary
does for speed.
"""
from __future__ import annotations

import random
from pathlib import Path

from ..db import SqlSession

BATCH = 5000
_SCHEMA = Path(__file__).with_name("schema")


def schema_statements(dialect: str, n: int) -> tuple[str, str]:
    text = (_SCHEMA / f"{dialect}.sql").read_text()
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("-- "))
    create, index = (part.strip().rstrip(";") for part in body.split("--\n"))
    return create.format(n=n), index.format(n=n)


def _rand_group(rng: random.Random, groups: int) -> str:
    # sysbench's c/pad pattern: groups of 11 digits separated by '-'
    return "-".join("%011d" % rng.randrange(10**11) for _ in range(groups))


def _row_pool(rng: random.Random, size: int = 4096) -> tuple[list[str], list[str]]:
    return ([_rand_group(rng, 10) for _ in range(size)], [_rand_group(rng, 5) for _ in range(size)])


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
        total = len(todo) * size
        done = 0
        rng = random.Random(12345)
        cs, pads = _row_pool(rng)
        for n in todo:
            create, index = schema_statements(db.dialect, n)
            db.execute(f"DROP TABLE IF EXISTS sbtest{n}")
            db.execute(create)
            loader = _copy_pg if db.dialect == "postgres" else _insert_mysql
            for rows in loader(db, n, size, rng, cs, pads):
                done += rows
                agent.progress("prepare", done, total)
                agent.check_stop()
            db.execute(index)
            db.execute(f"ANALYZE TABLE sbtest{n}" if db.dialect == "mysql" else f"ANALYZE sbtest{n}")
    finally:
        db.close()


def _copy_pg(db: SqlSession, n: int, size: int, rng, cs, pads):
    conn = db.conn
    pool = len(cs)
    rr = rng.random
    with conn.transaction():
        with conn.cursor() as cur:
            with cur.copy(f"COPY sbtest{n} (id, k, c, pad) FROM STDIN") as copy:
                for start in range(1, size + 1, BATCH):
                    end = min(size, start + BATCH - 1)
                    buf = "".join(f"{i}\t{int(rr() * size) + 1}\t{cs[int(rr() * pool)]}\t"
                                  f"{pads[int(rr() * pool)]}\n" for i in range(start, end + 1))
                    copy.write(buf.encode())
                    yield end - start + 1


def _insert_mysql(db: SqlSession, n: int, size: int, rng, cs, pads):
    conn = db.conn
    pool = len(cs)
    rr = rng.random
    per_stmt = 1000
    cur = conn.cursor()
    try:
        for start in range(1, size + 1, BATCH):
            end = min(size, start + BATCH - 1)
            cur.execute("BEGIN")
            for s in range(start, end + 1, per_stmt):
                e = min(end, s + per_stmt - 1)
                values = ",".join(f"({i},{int(rr() * size) + 1},'{cs[int(rr() * pool)]}',"
                                  f"'{pads[int(rr() * pool)]}')" for i in range(s, e + 1))
                cur.execute(f"INSERT INTO sbtest{n} (id, k, c, pad) VALUES {values}")
            cur.execute("COMMIT")
            yield end - start + 1
    finally:
        cur.close()
