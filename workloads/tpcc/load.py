"""TPROC-C schema and parallel loader.

A marker table, `versus_tpcc`, records the warehouse count, partitioning and the load
state ('loading' until the last index and statistics are in, then 'complete'), so an
interrupted load is recognised (by `check` and by the next run, which rebuilds) and a
matching schema is reused. A schema built by HammerDB has no marker; it is accepted when
its tables and row counts match the parameters, with a warning when its counter columns are
too narrow for long use (HammerDB's PostgreSQL smallints).

Bulk path: each loader process (forked, like virtual users) takes the item table or one
warehouse at a time from a queue and streams tab-separated rows: COPY ... FROM STDIN on
PostgreSQL, LOAD DATA LOCAL INFILE on MySQL/MariaDB (multi-row INSERTs when the server
refuses local files). PostgreSQL's keys and indexes are built after the rows are in, in
parallel; InnoDB's primary keys exist from the start (rows arrive in key order) and its
secondary indexes are added after.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue as _queue
import random
import re
import signal
import time
from pathlib import Path

from ..engine.api import BulkLoader, DatabaseError, SqlSession, TargetInfo
from ..engine.api import die_with_parent

ITEMS = 100_000
DISTRICTS = 10
CUSTOMERS = 3_000            # per district
ORDERS = 3_000               # per district
NEW_ORDERS = 900             # the last 900 orders of each district
STOCK = ITEMS                # per warehouse
FIRST_UNDELIVERED = ORDERS - NEW_ORDERS + 1     # 2101
TABLES = ("warehouse", "district", "customer", "history", "new_order", "orders",
          "order_line", "item", "stock")
MARKER = "versus_tpcc"
SCHEMA_VERSION = "1"

# NURand constants (TPC-C 2.1.6): C for c_last at load, and at run time with
# |C_RUN - C_LOAD| in 65..119 and not 96 or 112; C for c_id and ol_i_id.
C_LAST_LOAD = 157
C_LAST_RUN = 223
C_ID = 259
C_OL_I_ID = 7911
SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
LAST_NAMES = tuple(SYLLABLES[n // 100] + SYLLABLES[(n // 10) % 10] + SYLLABLES[n % 10]
                   for n in range(1000))

_SCHEMA = Path(__file__).with_name("schema")
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def nurand(rr, a: int, x: int, y: int, c: int) -> int:
    """NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x."""
    return (((int(rr() * (a + 1)) | (x + int(rr() * (y - x + 1)))) + c) % (y - x + 1)) + x


# --- schema text ---------------------------------------------------------------------------
def schema_sections(dialect: str, partitions: int) -> dict[str, list[str]]:
    """The schema file's statements by section; {partition:COL} filled in."""
    text = (_SCHEMA / f"{dialect}.sql").read_text()
    out: dict[str, list[str]] = {}
    current = None
    buf: list[str] = []
    for line in text.splitlines():
        m = re.match(r"--\s*\[(\w+)\]\s*$", line)
        if m:
            current = m.group(1)
            out[current] = []
            continue
        if line.startswith("--") or current is None:
            continue
        buf.append(line)
        if line.rstrip().endswith(";"):
            out[current].append("\n".join(buf).strip().rstrip(";"))
            buf = []

    def part(m: re.Match) -> str:
        if not partitions:
            return ""
        if dialect == "postgres":
            return f"PARTITION BY HASH ({m.group(1)})"
        return f"PARTITION BY HASH ({m.group(1)}) PARTITIONS {partitions}"

    for k, stmts in out.items():
        out[k] = [re.sub(r"\{partition:(\w+)\}", part, s) for s in stmts]
    return out


def partition_count(warehouses: int) -> int:
    return max(2, min(warehouses, 64))


def _pg_partitions(stmt: str, partitions: int) -> list[str]:
    """CREATE TABLE t (...) PARTITION BY HASH (c) -> the table plus its n partitions."""
    m = re.match(r"CREATE TABLE (\w+) \(", stmt)
    if not partitions or "PARTITION BY HASH" not in stmt or not m:
        return [stmt]
    t = m.group(1)
    return [stmt] + [f"CREATE TABLE {t}_p{i} PARTITION OF {t} FOR VALUES WITH "
                     f"(MODULUS {partitions}, REMAINDER {i})" for i in range(partitions)]


# --- the state of the schema in the target database ----------------------------------------
def tables_present(db: SqlSession) -> list[str]:
    if db.dialect == "postgres":
        rows = db.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON "
                          "n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                          "AND c.relkind IN ('r', 'p')")
    else:
        rows = db.execute("SELECT table_name FROM information_schema.tables "
                          "WHERE table_schema = DATABASE()")
    names = {str(r[0]).lower() for r in rows}
    return [t for t in TABLES + (MARKER,) if t in names]


def read_marker(db: SqlSession) -> dict[str, str] | None:
    if MARKER not in tables_present(db):
        return None
    return {str(k): str(v) for k, v in db.execute(f"SELECT name, value FROM {MARKER}")}


def schema_state(db: SqlSession) -> dict:
    """What the database holds: {'tables': [...], 'marker': {...}|None, 'warehouses': n|None,
    'complete': bool, 'origin': 'versus'|'other'|None, 'problem': sentence|None}."""
    present = tables_present(db)
    marker = read_marker(db)
    data_tables = [t for t in present if t != MARKER]
    st = {"tables": data_tables, "marker": marker, "warehouses": None, "complete": False,
          "origin": None, "problem": None, "partition": None}
    if not data_tables and marker is None:
        return st
    if marker is not None:
        st["origin"] = "versus"
        st["warehouses"] = int(marker.get("warehouses", "0") or 0)
        st["partition"] = marker.get("partition") == "1"
        if marker.get("state") != "complete":
            st["problem"] = (f"an interrupted load of {st['warehouses']} warehouse(s): the "
                             f"schema is incomplete (state '{marker.get('state')}')")
            return st
    else:
        st["origin"] = "other"
    missing = [t for t in TABLES if t not in data_tables]
    if missing:
        st["problem"] = f"TPROC-C tables are missing: {', '.join(missing)}"
        return st
    w = int(db.scalar("SELECT COUNT(*) FROM warehouse") or 0)
    st["warehouses"] = w
    items = int(db.scalar("SELECT COUNT(*) FROM item") or 0)
    dists = int(db.scalar("SELECT COUNT(*) FROM district") or 0)
    if w == 0 or items != ITEMS or dists != DISTRICTS * w:
        st["problem"] = (f"the TPROC-C tables are incomplete ({w} warehouses, {dists} "
                         f"districts, {items} items)")
        return st
    if marker is None:
        # a schema from another tool (HammerDB): spot-check the last warehouse's rows
        probes = (("customer", f"c_w_id = {w} AND c_d_id = {DISTRICTS} AND c_id = {CUSTOMERS}"),
                  ("stock", f"s_w_id = {w} AND s_i_id = {ITEMS}"),
                  ("orders", f"o_w_id = {w} AND o_d_id = {DISTRICTS} AND o_id = 1"))
        for table, where in probes:
            if not db.scalar(f"SELECT COUNT(*) FROM {table} WHERE {where}"):
                st["problem"] = f"the TPROC-C tables are incomplete (no {table} row where {where})"
                return st
    st["complete"] = True
    return st


# Counters the transactions add to (TPC-C 2.4.2.2, 2.5.2.2, 2.7.4.2); HammerDB's own
# transactions never touch them, and its PostgreSQL schema makes them smallint.
COUNTERS = (("stock", "s_order_cnt"), ("stock", "s_remote_cnt"),
            ("customer", "c_payment_cnt"), ("customer", "c_delivery_cnt"))
_NARROW_MAX = {"tinyint": 127, "smallint": 32_767, "mediumint": 8_388_607}
# The commonest NURand(8191) item is in ~1.95 % of new orders (10 lines of p = 0.195 %).
_HOT_ITEM_SHARE = 0.0195


def narrow_counters(db: SqlSession) -> list[tuple[str, str, int]]:
    """(table.column, type, largest value) of the COUNTERS narrower than 32 bits here."""
    schema = "current_schema()" if db.dialect == "postgres" else "DATABASE()"
    rows = db.execute(f"SELECT table_name, column_name, data_type FROM "
                      f"information_schema.columns WHERE table_schema = {schema} "
                      f"AND table_name IN ('stock', 'customer')")
    types = {(str(t).lower(), str(c).lower()): str(d).lower() for t, c, d in rows}
    out = []
    for key in COUNTERS:
        top = _NARROW_MAX.get(types.get(key, ""))
        if top:
            out.append((".".join(key), types[key], top))
    return out


def narrow_counters_warning(narrow: list[tuple[str, str, int]]) -> str:
    cols = ", ".join(f"{c} ({t})" for c, t, _ in narrow)
    msg = (f"narrow counters in this schema: {cols}. Versus's transactions add to them "
           f"(HammerDB's do not), and one that takes a row past its type's maximum fails")
    top = next((top for c, _, top in narrow if c == "stock.s_order_cnt"), None)
    if top:
        msg += (f"; the busiest item's s_order_cnt reaches {top:,} after about "
                f"{top / _HOT_ITEM_SHARE / 1e6:.1f} million new orders in its warehouse, "
                f"counted over all runs on this schema")
    return msg + ". ALTER TABLE ... TYPE integer removes the limit."


def drop_all(db: SqlSession) -> None:
    for t in TABLES + (MARKER,):
        db.execute(f"DROP TABLE IF EXISTS {t}" + (" CASCADE" if db.dialect == "postgres" else ""))


def _set_marker(db: SqlSession, **values: str) -> None:
    for k, v in values.items():
        db.execute(f"DELETE FROM {MARKER} WHERE name = %s", (k,))
        db.execute(f"INSERT INTO {MARKER} (name, value) VALUES (%s, %s)", (k, str(v)))


# --- prepare: reuse, refuse, or (re)build --------------------------------------------------
def prepare(agent) -> dict:
    """Make the database hold a complete schema of `warehouses`; returns the schema state."""
    p = agent.params
    want_w, want_part = p["warehouses"], bool(p["partition"])
    db = SqlSession(agent.target)
    try:
        st = schema_state(db)
        reason = None
        if p["rebuild"]:
            reason = "rebuilding the schema as asked (rebuild=true)"
        elif not st["tables"] and st["marker"] is None:
            reason = f"loading {want_w} warehouse(s)"
        elif st["marker"] is not None and st["marker"].get("state") != "complete":
            reason = f"rebuilding: found {st['problem']}"
        elif st["problem"]:
            raise DatabaseError(
                f"the database {agent.target.database!r} holds {st['problem']}; set "
                f"rebuild=true to drop and reload it, or use another database")
        elif st["warehouses"] != want_w:
            raise DatabaseError(
                f"the database {agent.target.database!r} holds a TPROC-C schema of "
                f"{st['warehouses']} warehouse(s), not {want_w}: set warehouses="
                f"{st['warehouses']} to use it, or rebuild=true to drop it and load "
                f"{want_w}")
        elif st["origin"] == "versus" and st["partition"] != want_part:
            raise DatabaseError(
                f"the schema in {agent.target.database!r} was built with partition="
                f"{str(st['partition']).lower()}: set partition={str(st['partition']).lower()}"
                f" to use it, or rebuild=true to rebuild it")
        if reason is None:
            agent.log(f"reusing the TPROC-C schema of {want_w} warehouse(s)"
                      + (" (not built by Versus)" if st["origin"] == "other" else ""))
            if st["origin"] == "other":
                narrow = narrow_counters(db)
                if narrow:
                    agent.log(narrow_counters_warning(narrow), "warning")
            return st
        agent.log(reason)
    finally:
        db.close()
    load(agent)
    db = SqlSession(agent.target)
    try:
        return schema_state(db)
    finally:
        db.close()


def load(agent) -> None:
    p = agent.params
    target: TargetInfo = agent.target
    w_total = p["warehouses"]
    nproc = max(1, min(p["load-clients"], w_total + 1))
    partitions = partition_count(w_total) if p["partition"] else 0
    sections = schema_sections(target.dialect, partitions)
    with agent.phase("load"):
        t0 = time.monotonic()
        db = SqlSession(target)
        try:
            drop_all(db)
            db.execute(f"CREATE TABLE {MARKER} (name varchar(64) PRIMARY KEY, "
                       f"value varchar(200))")
            _set_marker(db, state="loading", warehouses=w_total, partition=int(bool(partitions)),
                        schema_version=SCHEMA_VERSION, started=time.strftime("%Y-%m-%d %H:%M:%S"))
            for stmt in sections["tables"]:
                for s in (_pg_partitions(stmt, partitions) if target.dialect == "postgres"
                          else [stmt]):
                    db.execute(s)
        finally:
            db.close()
        agent.progress("load", 0, w_total, unit="warehouses")
        tasks: list = ["item"] + list(range(1, w_total + 1))
        rows = _run_pool(agent, target, nproc, tasks, _load_task, w_total)
        t_data = time.monotonic() - t0
        agent.log(f"rows in after {t_data:.1f} s; building keys and indexes")
        # keys, then statistics; PostgreSQL analyzes table by table in parallel
        stats = [f"ANALYZE {t}" for t in TABLES] if target.dialect == "postgres" \
            else sections["analyze"]
        _run_pool(agent, target, max(nproc, 2), sections["keys"] + stats, _sql_task, None)
        db = SqlSession(target)
        try:
            _set_marker(db, state="complete", finished=time.strftime("%Y-%m-%d %H:%M:%S"))
        finally:
            db.close()
        dur = time.monotonic() - t0
        total = sum(rows.values())
        agent.progress("load", w_total, w_total, unit="warehouses")
        agent.load_summary("load", total, dur, rows=rows, warehouses=w_total,
                           load_clients=nproc, data_s=round(t_data, 3),
                           index_s=round(dur - t_data, 3),
                           method="COPY FROM STDIN" if target.dialect == "postgres"
                           else "LOAD DATA LOCAL INFILE")
        agent.log(f"loaded {w_total} warehouse(s), {total:,} rows in {dur:.1f} s "
                  f"({total / dur:,.0f} rows/s, {nproc} loader process(es))")


def _run_pool(agent, target: TargetInfo, nproc: int, tasks: list, fn, w_total) -> dict:
    """Run fn(target, task, out) for each task in `nproc` forked processes; the parent
    reports progress per finished warehouse and stops them when the run is stopped."""
    ctx = mp.get_context("fork")
    tq, out = ctx.Queue(), ctx.Queue()
    for t in tasks:
        tq.put(t)
    n = max(1, min(nproc, len(tasks)))
    for _ in range(n):
        tq.put(None)
    procs = [ctx.Process(target=_worker, args=(fn, target, tq, out, i, os.getpid()),
                         daemon=True, name=f"versus-load{i + 1}") for i in range(n)]
    for pr in procs:
        pr.start()
    rows: dict[str, int] = {}
    done_w = 0
    finished = 0
    try:
        while finished < n:
            try:
                msg = out.get(timeout=0.2)
            except _queue.Empty:
                agent.check_stop()
                if not any(pr.is_alive() for pr in procs) and out.empty():
                    raise DatabaseError("the loader processes ended unexpectedly")
                continue
            kind = msg[0]
            if kind == "rows":
                _, task, counts = msg
                for k, v in counts.items():
                    rows[k] = rows.get(k, 0) + v
                if isinstance(task, int) and w_total:
                    done_w += 1
                    agent.progress("load", done_w, w_total, unit="warehouses")
                elif task == "item":
                    agent.log("item table loaded (100,000 rows)")
            elif kind == "error":
                raise DatabaseError(msg[1])
            elif kind == "exit":
                finished += 1
            agent.check_stop()
    finally:
        for pr in procs:
            if pr.is_alive() and finished < n:
                pr.terminate()
        for pr in procs:
            pr.join(10)
    return rows


def _worker(fn, target: TargetInfo, tq, out, index: int, parent: int) -> None:
    # a loader ends on SIGTERM (the agent's handler came with the fork) and with its agent
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)
    conn = None
    try:
        conn = BulkLoader(target, relaxed=True)
        while True:
            task = tq.get()
            if task is None:
                break
            counts = fn(conn, task, random.Random(index * 1_000_003 + hash(str(task)) % 99991))
            out.put(("rows", task, counts or {}))
    except DatabaseError as exc:
        out.put(("error", str(exc)))
    except Exception as exc:  # the parent turns this into the run's error
        out.put(("error", f"loader {index + 1} failed: {_first_line(exc)}"))
    finally:
        if conn is not None:
            conn.close()
        out.put(("exit",))


def _first_line(exc: Exception) -> str:
    s = str(exc).strip()
    return s.splitlines()[0] if s else type(exc).__name__



def _sql_task(conn: BulkLoader, stmt: str, rng) -> dict:
    conn.execute(stmt)
    return {}


# --- row generation (TPC-C 4.3.3.1), tab-separated, shared by both engines -----------------
class _Gen:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.rr = rng.random
        n = 1 << 18
        self.pool = "".join(rng.choice(_ALNUM) for _ in range(n))
        self.digits = "".join(rng.choice("0123456789") for _ in range(n))
        self.np = n - 600
        self.now = time.strftime("%Y-%m-%d %H:%M:%S")

    def a(self, lo: int, hi: int) -> str:
        """A random alphanumeric string of lo..hi characters."""
        o = int(self.rr() * self.np)
        return self.pool[o:o + lo + int(self.rr() * (hi - lo + 1))]

    def n(self, k: int) -> str:
        o = int(self.rr() * self.np)
        return self.digits[o:o + k]

    def data(self, lo: int, hi: int) -> str:
        """i_data / s_data: 10 % hold ORIGINAL at a random position."""
        s = self.a(lo, hi)
        if self.rr() < 0.1:
            k = int(self.rr() * (len(s) - 8))
            s = s[:k] + "ORIGINAL" + s[k + 8:]
        return s

    def addr(self) -> str:
        return (f"{self.a(10, 20)}\t{self.a(10, 20)}\t{self.a(10, 20)}\t"
                f"{self.a(2, 2).upper()}\t{self.n(4)}11111")

    def tax(self) -> str:
        return "0.%04d" % int(self.rr() * 2001)


COLS = {
    "item": "i_id, i_im_id, i_name, i_price, i_data",
    "warehouse": "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd",
    "district": "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, "
                "d_tax, d_ytd, d_next_o_id",
    "stock": "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, "
             "s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, "
             "s_order_cnt, s_remote_cnt, s_data",
    "customer": "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, "
                "c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, "
                "c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data",
    "history": "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data",
    "orders": "o_id, o_c_id, o_d_id, o_w_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local",
    "new_order": "no_o_id, no_d_id, no_w_id",
    "order_line": "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "
                  "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info",
}


def _load_task(conn: BulkLoader, task, rng: random.Random) -> dict:
    g = _Gen(rng)
    if task == "item":
        return _load_items(conn, g)
    return _load_warehouse(conn, g, int(task))


def _chunks(rows, size: int = 20_000):
    """Encode an iterator of row strings into byte chunks of `size` rows."""
    buf = []
    for r in rows:
        buf.append(r)
        if len(buf) == size:
            yield "".join(buf).encode()
            buf = []
    if buf:
        yield "".join(buf).encode()


def _load_items(conn: BulkLoader, g: _Gen) -> dict:
    rr = g.rr
    conn.put_stream("item", COLS["item"], _chunks(
        f"{i}\t{1 + int(rr() * 10000)}\t{g.a(14, 24)}\t"
        f"{100 + int(rr() * 9901) / 100:.2f}\t{g.data(26, 50)}\n" for i in range(1, ITEMS + 1)))
    return {"item": ITEMS}


def _stock_rows(g: _Gen, w: int):
    rr = g.rr
    blocks = ["\t".join(g.a(24, 24) for _ in range(10)) for _ in range(4096)]
    datas = [g.data(26, 50) for _ in range(4096)]
    for i in range(1, STOCK + 1):
        yield (f"{i}\t{w}\t{10 + int(rr() * 91)}\t{blocks[int(rr() * 4096)]}\t0\t0\t0\t"
               f"{datas[int(rr() * 4096)]}\n")


def _customer_rows(g: _Gen, w: int):
    rr, now = g.rr, g.now
    for d in range(1, DISTRICTS + 1):
        for c in range(1, CUSTOMERS + 1):
            last = LAST_NAMES[c - 1] if c <= 1000 else LAST_NAMES[nurand(rr, 255, 0, 999,
                                                                          C_LAST_LOAD)]
            credit = "BC" if rr() < 0.1 else "GC"
            yield (f"{c}\t{d}\t{w}\t{g.a(8, 16)}\tOE\t{last}\t{g.addr()}\t{g.n(16)}\t"
                   f"{now}\t{credit}\t50000.00\t0.{int(rr() * 5001):04d}\t-10.00\t10.00\t"
                   f"1\t0\t{g.a(300, 500)}\n")


def _history_rows(g: _Gen, w: int):
    now = g.now
    for d in range(1, DISTRICTS + 1):
        for c in range(1, CUSTOMERS + 1):
            yield f"{c}\t{d}\t{w}\t{d}\t{w}\t{now}\t10.00\t{g.a(12, 24)}\n"


def _order_line_rows(g: _Gen, w: int, counts: list[list[int]]):
    rr, now = g.rr, g.now
    dists = [g.a(24, 24) for _ in range(4096)]
    for d in range(1, DISTRICTS + 1):
        cnts = counts[d - 1]
        head_d = f"\t{d}\t{w}\t"
        for o in range(1, FIRST_UNDELIVERED):
            pre = f"{o}{head_d}"
            for n in range(1, cnts[o - 1] + 1):
                yield (f"{pre}{n}\t{1 + int(rr() * ITEMS)}\t{w}\t{now}\t5\t0.00\t"
                       f"{dists[int(rr() * 4096)]}\n")
        for o in range(FIRST_UNDELIVERED, ORDERS + 1):
            pre = f"{o}{head_d}"
            for n in range(1, cnts[o - 1] + 1):
                yield (f"{pre}{n}\t{1 + int(rr() * ITEMS)}\t{w}\t\\N\t5\t"
                       f"{(1 + int(rr() * 999999)) / 100:.2f}\t{dists[int(rr() * 4096)]}\n")


def _load_warehouse(conn: BulkLoader, g: _Gen, w: int) -> dict:
    rr = g.rr
    now = g.now
    counts: dict[str, int] = {}
    conn.put("warehouse", COLS["warehouse"],
             f"{w}\t{g.a(6, 10)}\t{g.addr()}\t{g.tax()}\t300000.00\n".encode())
    conn.put_stream("stock", COLS["stock"], _chunks(_stock_rows(g, w)))
    conn.put("district", COLS["district"], "".join(
        f"{d}\t{w}\t{g.a(6, 10)}\t{g.addr()}\t{g.tax()}\t30000.00\t{ORDERS + 1}\n"
        for d in range(1, DISTRICTS + 1)).encode())
    conn.put_stream("customer", COLS["customer"], _chunks(_customer_rows(g, w), 10_000))
    conn.put_stream("history", COLS["history"], _chunks(_history_rows(g, w)))
    ol_counts = [[5 + int(rr() * 11) for _ in range(ORDERS)] for _ in range(DISTRICTS)]
    orders = []
    for d in range(1, DISTRICTS + 1):
        perm = list(range(1, CUSTOMERS + 1))
        g.rng.shuffle(perm)
        cnts = ol_counts[d - 1]
        for o in range(1, ORDERS + 1):
            carrier = str(1 + int(rr() * 10)) if o < FIRST_UNDELIVERED else "\\N"
            orders.append(f"{o}\t{perm[o - 1]}\t{d}\t{w}\t{now}\t{carrier}\t{cnts[o - 1]}\t1\n")
    conn.put_stream("orders", COLS["orders"], _chunks(orders))
    conn.put("new_order", COLS["new_order"], "".join(
        f"{o}\t{d}\t{w}\n" for d in range(1, DISTRICTS + 1)
        for o in range(FIRST_UNDELIVERED, ORDERS + 1)).encode())
    n_lines = sum(sum(c) for c in ol_counts)
    conn.put_stream("order_line", COLS["order_line"], _chunks(_order_line_rows(g, w, ol_counts)))
    counts.update(warehouse=1, stock=STOCK, district=DISTRICTS, customer=DISTRICTS * CUSTOMERS,
                  history=DISTRICTS * CUSTOMERS, orders=DISTRICTS * ORDERS,
                  new_order=DISTRICTS * NEW_ORDERS, order_line=n_lines)
    return counts
