"""The insert benchmark's tables, rows and its first two steps.

l.i0: each client streams its rows in primary-key order into its table on the engine's bulk
path (workloads.engine.sql.db.BulkLoader: COPY on PostgreSQL, LOAD DATA LOCAL INFILE on MySQL/MariaDB,
multi-row INSERTs where the server refuses local files), `load-batch` rows per statement,
each statement its own transaction. No session setting is relaxed: the load's speed is a
result of the benchmark. l.x: the three secondary indexes, one table per thread, then
statistics (ANALYZE), as the published harness's create-index step.

Rows follow iibench.py: a cash register in [0, 1000), a product in [0, 10000), a customer in
[0, 100000), a price in [0, 500), a timestamp of the batch, and a data column of 10 to 20
characters, half of it random (base64), the rest 'a'.
"""
from __future__ import annotations

import base64
import threading
import time
from pathlib import Path

from ..engine.api import BulkLoader, DatabaseError, SqlSession, TargetInfo
from ..events import bucket_of

COLUMNS = "dateandtime, cashregisterid, customerid, productid, price, data"
CASHREGISTERS, PRODUCTS, CUSTOMERS, MAX_PRICE = 1000, 10_000, 100_000, 500
DATA_MIN, DATA_MAX, DATA_RANDOM = 10, 20, 0.5
COUNTERS = ("rows_inserted", "rows_deleted", "queries", "rows_fetched", "retries")
INSERTED, DELETED, QUERIES, FETCHED, RETRIES = range(5)
_SCHEMA = Path(__file__).with_name("schema")


def table_names(p: dict) -> list[str]:
    return ["pi1"] if p["shared-table"] else [f"pi{i + 1}" for i in range(p["clients"])]


def table_of(p: dict, client: int) -> str:
    names = table_names(p)
    return names[client % len(names)]


def schema_statements(dialect: str, table: str) -> tuple[str, list[str]]:
    """(CREATE TABLE, [index DDL]) for one table."""
    text = (_SCHEMA / f"{dialect}.sql").read_text()
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("-- "))
    create, index = (part.strip() for part in body.split("--\n"))
    return (create.rstrip(";").format(t=table),
            [s.strip().format(t=table) for s in index.split(";") if s.strip()])


class RowMaker:
    """Rows as iibench.py makes them, as tab-separated text or as SQL VALUES."""

    def __init__(self, rng):
        self.rr = rng.random
        self.buf = base64.b64encode(rng.randbytes(1 << 16)).decode()

    def _fields(self, n: int):
        rr, buf = self.rr, self.buf
        span = len(buf) - DATA_MAX
        for _ in range(n):
            dl = DATA_MIN + int(rr() * (DATA_MAX - DATA_MIN + 1))
            rl = int(dl * 0.75 * DATA_RANDOM)         # as iibench: base64's 4/3 counted
            off = int(rr() * span)
            yield (int(rr() * CASHREGISTERS), int(rr() * CUSTOMERS), int(rr() * PRODUCTS),
                   int(rr() * MAX_PRICE), "a" * (dl - rl) + buf[off:off + rl])

    def tsv(self, n: int) -> bytes:
        ts = time.strftime("%Y-%m-%d %H:%M:%S")
        return "".join(f"{ts}\t{c}\t{cu}\t{pr}\t{p}\t{d}\n"
                       for c, cu, pr, p, d in self._fields(n)).encode()

    def values(self, n: int) -> str:
        ts = time.strftime("%Y-%m-%d %H:%M:%S")
        return ",".join(f"('{ts}',{c},{cu},{pr},{p},'{d}')" for c, cu, pr, p, d in self._fields(n))


# --- state of the tables -------------------------------------------------------------------
def create_tables(db: SqlSession, tables: list[str]) -> None:
    for t in tables:
        create, _ = schema_statements(db.dialect, t)
        db.execute(f"DROP TABLE IF EXISTS {t}")
        db.execute(create)


def existing(db: SqlSession, tables: list[str]) -> dict[str, int]:
    """Table name → number of secondary indexes, for the tables that exist."""
    names = ",".join(f"'{t}'" for t in tables)
    if db.dialect == "postgres":
        rows = db.execute(
            "SELECT c.relname, (SELECT COUNT(*) FROM pg_index i WHERE i.indrelid = c.oid "
            "AND NOT i.indisprimary) FROM pg_class c WHERE c.relkind = 'r' AND "
            f"c.relnamespace = current_schema()::regnamespace AND c.relname IN ({names})")
    else:
        rows = db.execute(
            "SELECT t.table_name, (SELECT COUNT(DISTINCT s.index_name) FROM "
            "information_schema.statistics s WHERE s.table_schema = t.table_schema AND "
            "s.table_name = t.table_name AND s.index_name <> 'PRIMARY') FROM "
            "information_schema.tables t WHERE t.table_schema = DATABASE() AND "
            f"t.table_name IN ({names})")
    return {str(n if isinstance(n, str) else n.decode()): int(k) for n, k in rows}


def require_tables(db: SqlSession, tables: list[str], indexes: bool) -> None:
    """A clear sentence when the steps asked for need tables an earlier run should have
    built."""
    have = existing(db, tables)
    missing = [t for t in tables if t not in have]
    if missing:
        raise DatabaseError(
            f"the insert benchmark's table(s) {', '.join(missing)} do not exist in "
            f"{db.target.database!r}: run the steps l.i0 and l.x first (with the same "
            f"clients and shared-table), or include them in steps")
    bare = [t for t in tables if have[t] < 3]
    if indexes and bare:
        raise DatabaseError(
            f"table(s) {', '.join(bare)} have no secondary indexes yet: include step l.x "
            f"in steps (it creates them)")


def keys_given(db: SqlSession, tables: list[str]) -> dict[str, int]:
    """Keys each table's sequence (PostgreSQL) or AUTO_INCREMENT (InnoDB) has handed out:
    the server's own count of rows inserted, rolled-back attempts included."""
    if db.dialect == "postgres":
        return {t: int(db.scalar(
            "SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence(%s, "
            "'transactionid')::regclass), 0)", (t,)) or 0) for t in tables}
    names = ",".join(f"'{t}'" for t in tables)
    rows = db.execute("SELECT table_name, AUTO_INCREMENT - 1 FROM information_schema.tables "
                      f"WHERE table_schema = DATABASE() AND table_name IN ({names})")
    got = {str(n): int(k or 0) for n, k in rows}
    return {t: got.get(t, 0) for t in tables}


def db_size(db: SqlSession, tables: list[str]) -> tuple[float | None, str]:
    """Size on disk of the tables with their indexes, in MB, and where it comes from."""
    names = ",".join(f"'{t}'" for t in tables)
    if db.dialect == "postgres":
        n = db.scalar("SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c WHERE "
                      "c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace "
                      f"AND c.relname IN ({names})")
        return (round(int(n or 0) / 1e6, 3),
                "pg_total_relation_size of the tables (heap, indexes, TOAST, free space map)")
    db_name = db.target.database
    spaces = ",".join(f"'{db_name}/{t}'" for t in tables)
    for view in ("INNODB_SYS_TABLESPACES", "INNODB_TABLESPACES"):
        try:
            n = db.scalar(f"SELECT SUM(FILE_SIZE) FROM information_schema.{view} "
                          f"WHERE NAME IN ({spaces})")
        except Exception:          # the other server family's view
            continue
        if n:
            return (round(int(n) / 1e6, 3),
                    f"FILE_SIZE of the tables' tablespace files "
                    f"(information_schema.{view})")
    n = db.scalar("SELECT SUM(data_length + index_length + data_free) FROM "
                  f"information_schema.tables WHERE table_schema = DATABASE() AND "
                  f"table_name IN ({names})")
    return (round(int(n or 0) / 1e6, 3) if n is not None else None,
            "information_schema.tables data + index length + free (InnoDB's estimate)")


# --- l.i0 ----------------------------------------------------------------------------------
def load_vu(vu) -> None:
    """One client's l.i0: its rows in key order, `load-batch` per bulk statement; each
    statement counts its rows as operations and its time as one latency."""
    p = vu.params
    table = table_of(p, vu.index)
    loader = BulkLoader(vu.target)
    maker = RowMaker(vu.rng)
    try:
        if not vu.wait_for_go():
            return
        arr, base = vu.arr, vu.base(0)
        carr, cb = vu.carr, vu.cbase
        clock = time.perf_counter_ns
        left, batch = p["load-rows"], p["load-batch"]
        while left > 0 and not vu.stop.value:
            n = min(batch, left)
            data = maker.tsv(n)
            t0 = clock()
            try:
                loader.put(table, COLUMNS, data)
            except Exception as exc:
                arr[base + 1] += 1
                raise DatabaseError(f"l.i0 into {table} failed: "
                                    f"{str(exc).strip().splitlines()[0]}") from None
            arr[base + 2 + bucket_of((clock() - t0) // 1000)] += 1
            arr[base] += n
            carr[cb + INSERTED] += n
            left -= n
        while not vu.stop.value:            # the phase ends when every client is done
            time.sleep(0.02)
    finally:
        loader.close()


# --- l.x -----------------------------------------------------------------------------------
def create_indexes(target: TargetInfo, tables: list[str]) -> None:
    """The three secondary indexes on each table (a thread per table), then statistics."""
    errors: list[str] = []

    def work(t: str) -> None:
        db = SqlSession(target)
        try:
            for ddl in schema_statements(db.dialect, t)[1]:
                db.execute(ddl)
            db.execute(f"ANALYZE TABLE {t}" if db.dialect == "mysql" else f"ANALYZE {t}")
        except Exception as exc:
            errors.append(f"creating the indexes of {t} failed: "
                          f"{str(exc).strip().splitlines()[0]}")
        finally:
            db.close()

    threads = [threading.Thread(target=work, args=(t,), name=f"l.x-{t}") for t in tables]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise DatabaseError(errors[0])
