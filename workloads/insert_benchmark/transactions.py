"""The insert benchmark's steps: what each client does, and each step's figures.

Writes (l.i1, l.i2 and the background writers of the query steps) are transactions that
delete the oldest rows of the client's table and insert as many new ones, so the table size
stays constant: `BEGIN; DELETE <n oldest>` in one round trip (timed as "delete"), then
`INSERT <n rows>; COMMIT` in another (timed as "insert", so an insert's time includes its
commit, as the published harness's autocommit inserts do). The oldest rows are found from a
lower bound of the table's smallest key that each writer keeps (resynchronised with
MIN(transactionid) every 1000 transactions, every 100 on a shared table), as iibench.py
does. On a shared table PostgreSQL's writers pick their rows with SKIP LOCKED; InnoDB's wait
for each other. Deadlocks and serialization failures are rolled back and retried (counted).

The background writers hold their rate with a schedule that does not drift: transaction k
is due at start + k × rows / rate; a writer sleeps until its next slot, and one that fell
behind runs its late slots back to back, up to one second of them (slots older than that are
given up, so a stall cannot be hidden by a burst later).

Operations, as the published results count them: rows inserted for l.i0, l.i1 and l.i2
(latency per statement), queries for qr and qp; the background writes are timings beside
the queries.
"""
from __future__ import annotations

import math
import time
from functools import partial

from ..engine.api import DatabaseError, SqlFailed, SqlSession, SqlText
from ..events import bucket_of
from ..params import split_list
from . import load
from .load import COLUMNS, COUNTERS, DELETED, FETCHED, INSERTED, QUERIES, RETRIES

L_I1_BATCH, L_I2_BATCH = 50, 5
CATCH_UP_S = 1.0            # how far behind its schedule a background writer may catch up
SLA = 0.95                  # a query step's writers must reach 95 % of their rate
MAX_ATTEMPTS = 20
WRITE_STEPS = ("l.i1", "l.i2", "qr", "qp")


# --- the run -----------------------------------------------------------------------------
def run(agent) -> None:
    p = agent.params
    steps = split_list(p["steps"])
    tables = load.table_names(p)
    db = SqlSession(agent.target)
    try:
        if "l.i0" in steps:
            load.create_tables(db, tables)
        else:
            load.require_tables(db, tables, indexes="l.x" not in steps
                                and any(s in steps for s in WRITE_STEPS))
            if "l.x" in steps:
                done = [t for t, k in load.existing(db, tables).items() if k >= 3]
                if done:
                    raise DatabaseError(f"step l.x creates the secondary indexes, but "
                                        f"{', '.join(done)} has them already: include l.i0 "
                                        f"in steps to start from new tables")
    finally:
        db.close()
    if "l.i0" in steps:
        step_l_i0(agent, tables)
    if "l.x" in steps:
        step_l_x(agent, tables, loaded="l.i0" in steps)
    rows = p["write-rows"]
    if "l.i1" in steps:
        write_step(agent, "l.i1", tables, L_I1_BATCH, max(1, round(rows * 4 / 5)))
    if "l.i2" in steps:
        write_step(agent, "l.i2", tables, L_I2_BATCH, max(1, round(rows / 5)))
    for rate in split_list(p["rates"]):
        for kind in ("qr", "qp"):
            if kind in steps:
                query_step(agent, kind, int(rate), tables)


def _vu_tables(p: dict, n: int) -> list[dict]:
    return [{"vu": i + 1, "home": load.table_of(p, i)} for i in range(n)]


def step_l_i0(agent, tables: list[str]) -> dict:
    p = agent.params
    n = p["clients"]
    return agent.run_clients(
        "l.i0", load.load_vu, n, math.inf, ("insert",), counters=COUNTERS,
        work=("rows_inserted", p["load-rows"] * n, "rows"), vu_info=_vu_tables(p, n),
        summary_extra=lambda s: step_figures(agent, s, tables))


def step_l_x(agent, tables: list[str], loaded: bool) -> None:
    """Create the indexes; the step's rate is rows indexed per second, as published."""
    p = agent.params
    with agent.phase("l.x"):
        if loaded:
            rows = p["load-rows"] * p["clients"]
        else:
            db = SqlSession(agent.target)
            try:
                rows = sum(int(db.scalar(f"SELECT COUNT(*) FROM {t}") or 0) for t in tables)
            finally:
                db.close()
        t0 = time.monotonic()
        load.create_indexes(agent.target, tables)
        dur = max(time.monotonic() - t0, 1e-6)
        figures = step_figures(agent, {"phase": "l.x", "duration_s": dur}, tables)
        agent.load_summary("l.x", rows, dur, role="load", clients=len(tables), **figures)


def write_step(agent, name: str, tables: list[str], batch: int, rows: int) -> dict:
    """l.i1 / l.i2: each client inserts `rows` (deleting as many), `batch` per transaction,
    as fast as it can."""
    p = agent.params
    n = p["clients"]
    before = _keys_given(agent, tables)
    return agent.run_clients(
        name, partial(write_vu, batch=batch, rows=rows), n, math.inf, ("insert",),
        counters=COUNTERS, timings=("delete",), work=("rows_inserted", rows * n, "rows"),
        vu_info=_vu_tables(p, n),
        summary_extra=lambda s: step_figures(agent, s, tables, before))


def query_step(agent, kind: str, rate: int, tables: list[str]) -> dict:
    """qr<rate> / qp<rate>: `clients` query clients as fast as they can, and beside each a
    background writer at `rate` rows per second."""
    p = agent.params
    n = p["clients"]
    name = f"{kind}{rate}"
    before = _keys_given(agent, tables)
    info = ([{"vu": i + 1, "home": f"{load.table_of(p, i)}: "
                                   f"{'range' if kind == 'qr' else 'point'} queries"}
             for i in range(n)]
            + [{"vu": n + i + 1, "home": f"{load.table_of(p, i)}: writer, {rate} rows/s"}
               for i in range(n)])
    return agent.run_clients(
        name, partial(query_step_vu, kind=kind, rate=rate), 2 * n, p["query-seconds"],
        ("query",), counters=COUNTERS, timings=("insert", "delete"), vu_info=info,
        summary_extra=lambda s: step_figures(agent, s, tables, before, rate * n))


def _keys_given(agent, tables: list[str]) -> dict[str, int]:
    db = SqlSession(agent.target)
    try:
        return load.keys_given(db, tables)
    finally:
        db.close()


# --- a step's figures ----------------------------------------------------------------------
def step_figures(agent, summary: dict, tables: list[str], before: dict | None = None,
                 target: float | None = None) -> dict:
    """The published table's figures of one step (summary["ibench"]), the background
    writers' rate against their target (summary["background"]) and the missed-SLA flag."""
    dur = summary["duration_s"]
    c = summary.get("counters") or {}
    lat = summary.get("lat_ms") or {}
    timings = summary.get("timings") or {}
    queries = c.get("queries", 0)
    ib = {"inserts_per_s": round(c.get("rows_inserted", 0) / dur, 2)
          if summary["phase"] != "l.x" else None,
          "deletes_per_s": round(c.get("rows_deleted", 0) / dur, 2),
          "queries_per_s": round(queries / dur, 2),
          "rows_per_query": round(c.get("rows_fetched", 0) / queries, 2) if queries else None,
          "max_insert_ms": ((lat.get("insert") or timings.get("insert") or {}).get("max")),
          "max_query_ms": (lat.get("query") or {}).get("max"),
          "retries": c.get("retries", 0)}
    ib["rate_source"] = (
        "queries completed by the clients / step time" if target else
        "rows indexed / step time (rows in the tables)" if summary["phase"] == "l.x" else
        "rows inserted by the clients / step time")
    out: dict = {"ibench": ib}
    db = SqlSession(agent.target)
    try:
        ib["db_size_mb"], ib["db_size_source"] = load.db_size(db, tables)
        after = load.keys_given(db, tables) if before is not None else None
    finally:
        db.close()
    server_rows = sum(after[t] - before.get(t, 0) for t in tables) if after else None
    if server_rows is not None:
        ib["server_rows_inserted"] = server_rows
    if target:
        got = c.get("rows_inserted", 0) / dur
        pct = 100.0 * got / target
        out["background"] = {
            "target_per_s": target, "inserts_per_s": round(got, 2), "pct": round(pct, 1),
            "source": f"rows the background writers committed (client count) / step time; "
                      f"target {target:,.0f} rows/s",
            "server_inserts_per_s": round(server_rows / dur, 2)
            if server_rows is not None else None,
            "server_source": "keys the tables' sequence or AUTO_INCREMENT handed out "
                             "during the step (the server's count of rows inserted)"}
        if got < SLA * target:
            out["flags"] = [{"name": "missed SLA", "severity": "warn",
                             "detail": f"the background writers inserted {got:,.1f} rows/s, "
                                       f"{pct:.1f} % of the {target:,.0f} rows/s asked "
                                       f"(at least {SLA:.0%} is needed)"}]
    return out


# --- writes --------------------------------------------------------------------------------
class Writer:
    """Transactions that delete the `n` oldest rows of a table and insert `n` new ones."""

    def __init__(self, vu, table: str, insert_slot: int, delete_slot: int,
                 rows_are_ops: bool):
        self.vu, self.table = vu, table
        self.shared = bool(vu.params["shared-table"])
        self.sql = SqlText(vu.target)
        self.maker = load.RowMaker(vu.rng)
        self.ins, self.dele = vu.base(insert_slot), vu.base(delete_slot)
        self.rows_are_ops = rows_are_ops
        self.pg = vu.target.dialect == "postgres"
        self.hint = 0
        self.txns = 0
        self.resync_every = 100 if self.shared else 1000
        self.last_report = 0.0
        self.resync()

    def resync(self) -> None:
        rows, _ = self.sql.run(f"SELECT MIN(transactionid) FROM {self.table}")[0]
        self.hint = int(rows[0][0] or 0)

    def _delete_sql(self, n: int) -> str:
        t = self.table
        if self.pg:
            skip = " FOR UPDATE SKIP LOCKED" if self.shared else ""
            return (f"DELETE FROM {t} WHERE transactionid IN (SELECT transactionid FROM {t} "
                    f"WHERE transactionid >= {self.hint} ORDER BY transactionid LIMIT {n}{skip})")
        return (f"DELETE FROM {t} WHERE transactionid >= {self.hint} "
                f"ORDER BY transactionid LIMIT {n}")

    def txn(self, n: int) -> bool:
        """One transaction, retried on deadlocks; False when it failed otherwise. Raises
        SqlFailed when the connection is lost."""
        vu, arr = self.vu, self.vu.arr
        clock = time.perf_counter_ns
        if self.txns % self.resync_every == 0 and self.txns:
            self.resync()
        self.txns += 1
        values = self.maker.values(n)
        for _ in range(MAX_ATTEMPTS):
            try:
                t0 = clock()
                deleted = self.sql.run(f"BEGIN; {self._delete_sql(n)}")[1][1]
                while self.shared and 0 < deleted < n:       # others took some of them
                    more = self.sql.run(self._delete_sql(n - deleted))[0][1]
                    if not more:
                        break
                    deleted += more
                t1 = clock()
                self.sql.run(f"INSERT INTO {self.table} ({COLUMNS}) VALUES {values}; COMMIT")
                t2 = clock()
            except SqlFailed as exc:
                if exc.lost:
                    raise
                self.sql.rollback()
                if exc.retry:
                    vu.carr[vu.cbase + RETRIES] += 1
                    continue
                arr[self.ins + 1] += 1
                self._report(str(exc))
                return False
            arr[self.dele] += 1
            arr[self.dele + 2 + bucket_of((t1 - t0) // 1000)] += 1
            arr[self.ins] += n if self.rows_are_ops else 1
            arr[self.ins + 2 + bucket_of((t2 - t1) // 1000)] += 1
            vu.carr[vu.cbase + INSERTED] += n
            vu.carr[vu.cbase + DELETED] += deleted
            if not self.shared:
                self.hint += deleted          # still a lower bound of the smallest key
            return True
        arr[self.ins + 1] += 1
        self._report(f"gave up after {MAX_ATTEMPTS} deadlocks in a row")
        return False

    def _report(self, msg: str) -> None:
        now = time.monotonic()
        if now - self.last_report > 5.0:
            self.last_report = now
            self.vu.report_error(f"write to {self.table}: {msg}")

    def close(self) -> None:
        self.sql.close()


def write_vu(vu, batch: int, rows: int) -> None:
    """l.i1 / l.i2: `rows` inserted (and deleted) in transactions of `batch`, then wait."""
    w = Writer(vu, load.table_of(vu.params, vu.index), 0, vu.timing0, rows_are_ops=True)
    try:
        if not vu.wait_for_go():
            return
        left = rows
        try:
            while left > 0 and not vu.stop.value:
                n = min(batch, left)
                if w.txn(n):
                    left -= n
        except SqlFailed as exc:
            vu.connection_lost(str(exc))
            return
        while not vu.stop.value:            # the step ends when every client is done
            time.sleep(0.02)
    finally:
        w.close()


def background(vu, w: Writer, rate: int, batch: int) -> None:
    """Transactions of `batch` rows at `rate` rows per second, on a schedule that does not
    drift (see the module's notes)."""
    interval = batch / rate
    due = time.monotonic()
    stop = vu.stop
    while not stop.value:
        now = time.monotonic()
        if now < due:
            time.sleep(min(due - now, 0.05))
            continue
        if now - due > CATCH_UP_S:
            due = now - CATCH_UP_S            # slots further back are given up
        w.txn(batch)
        due += interval


# --- queries -------------------------------------------------------------------------------
def query_step_vu(vu, kind: str, rate: int) -> None:
    """The first `clients` virtual users query; the others are their background writers."""
    p = vu.params
    n = p["clients"]
    if vu.index >= n:
        table = load.table_of(p, vu.index - n)
        w = Writer(vu, table, vu.timing0, vu.timing0 + 1, rows_are_ops=False)
        try:
            if vu.wait_for_go():
                try:
                    background(vu, w, rate, max(1, min(p["rows-per-commit"], rate)))
                except SqlFailed as exc:
                    vu.connection_lost(f"{exc} (the background writer of {table})")
        finally:
            w.close()
        return
    _query_loop(vu, kind, load.table_of(p, vu.index))


def _range_queries(table: str, limit: int, mysql: bool):
    """The three range queries of iibench.py on the secondary indexes: (SQL prefix, the
    upper bound of its random start value)."""
    def force(ix: str) -> str:
        return f" FORCE INDEX ({table}_{ix})" if mysql else ""
    return [
        (f"SELECT productid, customerid, price FROM {table}{force('marketsegment')} WHERE "
         f"productid >= %d ORDER BY productid, customerid, price LIMIT {limit}",
         load.PRODUCTS),
        (f"SELECT cashregisterid, customerid, price FROM {table}{force('registersegment')} "
         f"WHERE cashregisterid > %d ORDER BY cashregisterid, customerid, price "
         f"LIMIT {limit}", load.CASHREGISTERS),
        (f"SELECT price, dateandtime, customerid FROM {table}{force('pdc')} WHERE "
         f"price >= %d ORDER BY price, dateandtime, customerid LIMIT {limit}",
         load.MAX_PRICE),
    ]


def _query_loop(vu, kind: str, table: str) -> None:
    p = vu.params
    limit = p["rows-per-query"]
    sql = SqlText(vu.target)
    rr = vu.rng.random
    ranges = _range_queries(table, limit, vu.target.dialect != "postgres")

    def bounds() -> tuple[int, int]:
        rows, _ = sql.run(f"SELECT MIN(transactionid), MAX(transactionid) FROM {table}")[0]
        return int(rows[0][0] or 0), int(rows[0][1] or 0)

    try:
        lo, hi = bounds()
        if not vu.wait_for_go():
            return
        arr, base = vu.arr, vu.base(0)
        carr, cb = vu.carr, vu.cbase
        stop = vu.stop
        clock = time.perf_counter_ns
        done, last_report = 0, 0.0
        while not stop.value:
            if kind == "qr":
                text, top = ranges[int(rr() * 3)]
                q = text % int(rr() * top)
            else:
                if done % 100 == 0 and done:
                    lo, hi = bounds()            # the writers move the key range along
                span = hi - lo + 1
                ids = ",".join(str(lo + int(rr() * span)) for _ in range(limit))
                q = f"SELECT transactionid, productid, data FROM {table} " \
                    f"WHERE transactionid IN ({ids})"
            t0 = clock()
            try:
                got = sql.run(q)[0][1]
            except SqlFailed as exc:
                arr[base + 1] += 1
                if exc.lost:
                    vu.connection_lost(str(exc))
                    return
                now = time.monotonic()
                if now - last_report > 5.0:
                    last_report = now
                    vu.report_error(f"query on {table}: {exc}")
                continue
            arr[base + 2 + bucket_of((clock() - t0) // 1000)] += 1
            arr[base] += 1
            carr[cb + QUERIES] += 1
            carr[cb + FETCHED] += got
            done += 1
    finally:
        sql.close()
