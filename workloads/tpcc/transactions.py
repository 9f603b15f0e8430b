"""TPROC-C transactions: input generation, the mix, and two implementations per dialect.

`stored-procedures=on` calls one server-side routine per transaction (procedures/*.sql);
`off` sends the same statements from the client (PG_SQL, MY_SQL below), in explicit
transactions, so both modes leave the same effects and count the same server commits.

Hot paths: PostgreSQL through libpq's pipeline mode with prepared statements (psycopg.pq):
every batch of statements that does not need an earlier answer goes out in one round trip
(BEGIN with the first statements, the last statements with COMMIT). MySQL/MariaDB through
mysqlclient's low-level connection with multi-statements, values inlined as literals
(all are numbers or generated names), so a client-side transaction costs one or two
round trips.

Deadlocks and serialization failures are rolled back and retried (counted in `retries`
and `rollbacks`); other errors are counted per type and reported.
"""
from __future__ import annotations

import math
import time

from ..db import DatabaseError, SqlSession, connect_pg, mysql_driver
from ..events import bucket_of
from . import load
from .load import (C_ID, C_LAST_RUN, C_OL_I_ID, DISTRICTS, ITEMS, LAST_NAMES, CUSTOMERS,
                   nurand)

TYPES = ("new-order", "payment", "order-status", "delivery", "stock-level")
WEIGHTS = (45, 43, 4, 4, 4)                      # the standard mix, declared once
COUNTERS = ("new_orders", "commits", "rollbacks", "retries")
NEW_ORDERS, COMMITS, ROLLBACKS, RETRIES = range(4)
NO, PAY, OS, DLV, SL = range(5)
# TPC-C 5.2.5.7 keying times and 5.2.5.4 mean think times, seconds, by type
KEYING = (18.0, 3.0, 2.0, 2.0, 2.0)
THINK = (12.0, 12.0, 10.0, 5.0, 5.0)
MAX_ATTEMPTS = 20
BATCH = 64                      # transactions whose inputs are drawn ahead at a time
_LOG_99 = math.log(0.99)
COMMIT, ROLLBACK = "commit", "rollback"


class Retry(Exception):
    """A deadlock or serialization failure: the attempt was rolled back; try again."""


class TxnError(Exception):
    """Any other failure of one transaction (rolled back)."""


# --- the run ---------------------------------------------------------------------------------
def run(agent) -> None:
    p = agent.params
    load.prepare(agent)
    if p["stored-procedures"]:
        install_procedures(agent)
    vus = p["vus"]
    info = vu_info(vus, p["warehouses"], p["use-all-warehouses"])
    if p["rampup"] > 0:
        agent.run_clients("rampup", vu_main, vus, p["rampup"], TYPES, counters=COUNTERS,
                          rate=nopm_rate, vu_info=info)
    before = {"d_next_o_id": sum_next_o_id(agent.target)}

    def result(summary: dict) -> dict:
        after = sum_next_o_id(agent.target)
        return {"result": measure_result(summary, before["d_next_o_id"], after,
                                         agent.target.dialect, p)}

    agent.run_clients("measure", vu_main, vus, p["duration"], TYPES, counters=COUNTERS,
                      rate=nopm_rate, summary_extra=result, vu_info=info)
    if p["check-after"]:
        from . import check
        check.run_phase(agent)


def nopm_rate(ops: dict, counters: dict, seconds: float) -> float:
    """The sample's rate in NOPM: committed new orders per minute."""
    return counters.get("new_orders", 0) * 60.0 / seconds if seconds > 0 else 0.0


def sum_next_o_id(target) -> int:
    db = SqlSession(target)
    try:
        return int(db.scalar("SELECT SUM(d_next_o_id) FROM district") or 0)
    finally:
        db.close()


def measure_result(summary: dict, before: int, after: int, dialect: str, p: dict) -> dict:
    """NOPM and TPM as HammerDB defines them, next to the client's own counts."""
    dur = summary["duration_s"]
    minutes = dur / 60.0
    c = summary.get("counters", {})
    srv = summary.get("server") or {}
    # TPM as HammerDB counts it is server-wide; the virtual users' own sessions (MySQL)
    # are the cross-check that other clients of a shared server cannot disturb
    own = srv if "server_wide" in srv else None
    if own is not None:
        srv = srv["server_wide"]
    new_orders = after - before
    out = {
        "nopm": round(new_orders / minutes) if minutes else None,
        "nopm_source": "change in SUM(d_next_o_id) over district during the measured period",
        "new_orders": new_orders,
        "d_next_o_id_sum": [before, after],
        "tpm": round(srv["delta"] / minutes) if srv and minutes else None,
        "tpm_source": ("pg_stat_database xact_commit + xact_rollback (minus the monitor's own "
                       "polls)" if dialect == "postgres" else
                       "SHOW GLOBAL STATUS Com_commit + Com_rollback (server-wide)"),
        "server_transactions": srv.get("delta"),
        "session_transactions": own.get("delta") if own else None,
        "client": {"new_orders": c.get("new_orders"), "commits": c.get("commits"),
                   "rollbacks": c.get("rollbacks"), "retries": c.get("retries"),
                   "transactions": sum(summary.get("ops", {}).values()),
                   "nopm": round(c.get("new_orders", 0) / minutes) if minutes else None,
                   "tpm": round((c.get("commits", 0) + c.get("rollbacks", 0)) / minutes)
                   if minutes else None},
        "duration_s": dur,
        "vus": p["vus"], "warehouses": p["warehouses"],
        "stored_procedures": p["stored-procedures"],
        "use_all_warehouses": p["use-all-warehouses"],
    }
    cpu = summary.get("driver_cpu") or {}
    tx = out["client"]["transactions"]
    if tx and cpu:
        out["client_cpu_us_per_txn"] = round((cpu["user_s"] + cpu["system_s"]) * 1e6 / tx, 1)
    return out


# --- server-side routines ------------------------------------------------------------------
PROC_VERSION = 1
PROC_NAMES = ("vs_neword", "vs_payment", "vs_ostat", "vs_delivery", "vs_slev")


def install_procedures(agent) -> None:
    """Create the vs_* routines unless this version is there; a clear sentence when the
    user may not create them."""
    from pathlib import Path
    target = agent.target
    text = (Path(__file__).with_name("procedures") / f"{target.dialect}.sql").read_text()
    db = SqlSession(target)
    try:
        if _procedures_current(db):
            agent.log("reusing the TPROC-C stored procedures (vs_*)")
            return
        try:
            if db.dialect == "postgres":
                db.execute(text)
            else:
                for stmt in _split_mysql(text):
                    db.execute(stmt)
        except Exception as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            low = msg.lower()
            what = "PL/pgSQL functions" if db.dialect == "postgres" else "stored procedures"
            if "denied" in low or "permission" in low or "1044" in low or "1142" in low \
                    or "1370" in low:
                grant = ("GRANT CREATE ON SCHEMA public TO " + (target.user or "the user")
                         if db.dialect == "postgres" else
                         f"GRANT CREATE ROUTINE, ALTER ROUTINE, EXECUTE ON "
                         f"`{target.database}`.* TO '{target.user}'@'...'")
                raise DatabaseError(
                    f"cannot create the TPROC-C {what} in {target.database!r}: user "
                    f"{target.user!r} may not ({msg}). Run with stored-procedures=false, or "
                    f"have an administrator {grant} (or create them once as a user who "
                    f"may)") from None
            raise DatabaseError(f"cannot create the TPROC-C {what}: {msg}") from None
        agent.log("created the TPROC-C stored procedures (vs_*)")
    finally:
        db.close()


def _split_mysql(text: str) -> list[str]:
    stmts, buf = [], []
    for line in text.splitlines():
        if line.strip() == "//":
            s = "\n".join(buf).strip()
            if s:
                stmts.append(s)
            buf = []
        elif not line.startswith("--"):
            buf.append(line)
    return stmts


def _procedures_current(db: SqlSession) -> bool:
    try:
        if db.dialect == "postgres":
            n = db.scalar("SELECT COUNT(*) FROM pg_proc p JOIN pg_namespace n ON "
                          "n.oid = p.pronamespace WHERE n.nspname = current_schema() "
                          "AND p.proname = ANY(%s)", (list(PROC_NAMES),))
        else:
            n = db.scalar("SELECT COUNT(*) FROM information_schema.routines WHERE "
                          "routine_schema = DATABASE() AND routine_name IN (%s)"
                          % ",".join(f"'{x}'" for x in PROC_NAMES))
        if int(n or 0) != len(PROC_NAMES):
            return False
        return int(db.scalar("SELECT vs_tpcc_version()") or 0) == PROC_VERSION
    except Exception:
        if db.dialect == "postgres":
            db.conn.rollback() if not db.conn.autocommit else None
        return False


# --- input generation (TPC-C 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) ------------------------------
def home_warehouses(index: int, nvu: int, warehouses: int, all_warehouses: bool) -> list[int]:
    if all_warehouses and warehouses > nvu:
        return [w for w in range(1, warehouses + 1) if (w - 1) % nvu == index]
    return [index % warehouses + 1]


def vu_info(nvu: int, warehouses: int, all_warehouses: bool) -> list[dict]:
    """What the virtual-user table shows: each user's home warehouse(s)."""
    out = []
    for i in range(nvu):
        homes = home_warehouses(i, nvu, warehouses, all_warehouses)
        out.append({"vu": i + 1, "home": ",".join(map(str, homes[:8]))
                    + ("…" if len(homes) > 8 else "")})
    return out


class Inputs:
    def __init__(self, rng, index: int, nvu: int, warehouses: int, all_warehouses: bool):
        self.rng = rng
        self.rr = rng.random
        self.bits = rng.getrandbits
        self.W = warehouses
        self.homes = home_warehouses(index, nvu, warehouses, all_warehouses)
        # the cumulative mix
        acc, self.cum = 0, []
        for wt in WEIGHTS:
            acc += wt
            self.cum.append(acc)
        self.total = acc

    def pick_type(self) -> int:
        x = self.rr() * self.total
        for i, c in enumerate(self.cum):
            if x < c:
                return i
        return len(self.cum) - 1

    def home(self) -> int:
        h = self.homes
        return h[0] if len(h) == 1 else h[int(self.rr() * len(h))]

    def other_w(self, w: int) -> int:
        o = 1 + int(self.rr() * (self.W - 1))
        return o + 1 if o >= w else o

    def new_order(self):
        """(w, d, c, items, supply warehouses, quantities, all_local); items distinct and in
        ascending order, so every order locks its stock rows in one global order."""
        rr, bits = self.rr, self.bits
        w = self.home()
        d = 1 + int(rr() * DISTRICTS)
        c = ((bits(10) | (1 + int(rr() * CUSTOMERS))) + C_ID) % CUSTOMERS + 1
        cnt = 5 + int(rr() * 11)
        n = cnt - 1 if rr() < 0.01 else cnt               # 1 %: the last item is unused
        # NURand(8191, 1, ITEMS), inlined; drawn again while two lines share an item
        seen = {((bits(13) | (1 + int(rr() * ITEMS))) + C_OL_I_ID) % ITEMS + 1
                for _ in range(n)}
        while len(seen) < n:
            seen.add(((bits(13) | (1 + int(rr() * ITEMS))) + C_OL_I_ID) % ITEMS + 1)
        items = sorted(seen)
        if n < cnt:
            items.append(ITEMS + 1)
        qty = [1 + int(rr() * 10) for _ in range(cnt)]
        supply = [w] * cnt
        all_local = 1
        if self.W > 1:
            # 1 % remote lines, a Bernoulli process: jump from one remote line to the next
            k = int(math.log(1.0 - rr()) / _LOG_99)
            while k < cnt:
                supply[k] = self.other_w(w)
                all_local = 0
                k += 1 + int(math.log(1.0 - rr()) / _LOG_99)
        return w, d, c, items, supply, qty, all_local

    def customer(self, w: int, d: int):
        """(c_w_id, c_d_id) for Payment: 85 % home, 15 % a remote warehouse."""
        rr = self.rr
        if self.W > 1 and rr() >= 0.85:
            return self.other_w(w), 1 + int(rr() * DISTRICTS)
        return w, d

    def by_name(self):
        """(c_id, c_last): 60 % by last name (c_id 0), else by id (c_last '')."""
        rr = self.rr
        if rr() < 0.6:
            return 0, LAST_NAMES[nurand(rr, 255, 0, 999, C_LAST_RUN)]
        return nurand(rr, 1023, 1, CUSTOMERS, C_ID), ""

    def amount(self) -> str:
        return "%d.%02d" % divmod(100 + int(self.rr() * 499901), 100)


# --- the virtual user ----------------------------------------------------------------------
def vu_main(vu) -> None:
    p = vu.params
    inp = Inputs(vu.rng, vu.index, p["vus"], p["warehouses"], p["use-all-warehouses"])
    sp = p["stored-procedures"]
    if vu.target.dialect == "postgres":
        tx = PgTxns(vu.target, sp)
    else:
        tx = MyTxns(vu.target, sp)
    try:
        _loop(vu, inp, tx, p["keying-thinking"])
        n = tx.session_transactions()
        if n is not None:
            vu.report_server_count(n)
    finally:
        tx.close()


def _loop(vu, inp: Inputs, tx, keying: bool) -> None:
    if not vu.wait_for_go():
        return
    arr, carr, cb = vu.arr, vu.carr, vu.cbase
    bases = [vu.base(t) for t in range(len(TYPES))]
    stop = vu.stop
    rr = inp.rr
    clock = time.perf_counter_ns
    gen = (inp.new_order, _pay_input(inp), _os_input(inp), _dlv_input(inp), _sl_input(inp))
    pick, plan = inp.pick_type, tx.plan

    def batch():
        # Inputs are drawn and encoded ahead, BATCH at a time: that code then runs with warm
        # caches instead of after every wake-up from the server's answer.
        out = []
        for _ in range(BATCH):
            t = pick()
            out.append((t,) + plan(t, gen[t]()))
        out.reverse()
        return out

    queue: list = []
    last_report = 0.0
    while not stop.value:
        if not queue:
            queue = batch()
        t, fn, args = queue.pop()
        if keying and _sleep(vu, KEYING[t]):
            break
        b = bases[t]
        t0 = clock()
        attempts = 0
        while True:
            try:
                outcome = fn(*args)
            except Retry:
                attempts += 1
                carr[cb + RETRIES] += 1
                carr[cb + ROLLBACKS] += 1
                if attempts < MAX_ATTEMPTS and not stop.value:
                    continue
                outcome = None
                arr[b + 1] += 1
                break
            except TxnError as exc:
                outcome = None
                carr[cb + ROLLBACKS] += 1
                arr[b + 1] += 1
                now = time.monotonic()
                if now - last_report > 5.0:
                    last_report = now
                    vu.report_error(f"{TYPES[t]}: {exc.args[0] if exc.args else exc}")
                if not tx.alive():
                    vu.report_error("lost the database connection")
                    return
                break
            break
        if outcome is None:
            continue
        arr[b + 2 + bucket_of((clock() - t0) // 1000)] += 1
        arr[b] += 1
        if outcome is COMMIT:
            carr[cb + COMMITS] += 1
            if t == NO:
                carr[cb + NEW_ORDERS] += 1
        else:
            carr[cb + ROLLBACKS] += 1
        if keying and _sleep(vu, min(-math.log(1.0 - rr()) * THINK[t], 10 * THINK[t])):
            break


def _pay_input(inp: Inputs):
    rr = inp.rr

    def gen():
        w = inp.home()
        d = 1 + int(rr() * DISTRICTS)
        cw, cd = inp.customer(w, d)
        c, last = inp.by_name()
        return w, d, cw, cd, c, last, inp.amount()
    return gen


def _os_input(inp: Inputs):
    rr = inp.rr

    def gen():
        c, last = inp.by_name()
        return inp.home(), 1 + int(rr() * DISTRICTS), c, last
    return gen


def _dlv_input(inp: Inputs):
    rr = inp.rr
    return lambda: (inp.home(), 1 + int(rr() * 10))


def _sl_input(inp: Inputs):
    rr = inp.rr
    return lambda: (inp.home(), 1 + int(rr() * DISTRICTS), 10 + int(rr() * 11))


def _sleep(vu, seconds: float) -> bool:
    """Sleep unless told to stop; True when stopped."""
    end = time.monotonic() + seconds
    while not vu.stop.value:
        left = end - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(0.1, left))
    return True


def _arr(values) -> bytes:
    return ("{%s}" % ",".join(map(str, values))).encode()


# --- PostgreSQL ------------------------------------------------------------------------------
_DIST = ("CASE {d} WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 "
         "WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 "
         "WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 "
         "ELSE s_dist_10 END")

PG_SQL = {
    "begin": "BEGIN",
    "commit": "COMMIT",
    "rollback": "ROLLBACK",
    # New-Order
    "no_district": "UPDATE district SET d_next_o_id = d_next_o_id + 1 "
                   "WHERE d_w_id = $1 AND d_id = $2 RETURNING d_next_o_id - 1, d_tax",
    "no_customer": "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse "
                   "WHERE w_id = $1 AND c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
    "no_items": "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id = ANY ($1::int[])",
    "no_lines": "WITH v AS (SELECT * FROM unnest($4::int[], $5::int[], $6::int[]) "
                "WITH ORDINALITY AS v(i, sw, q, n)), "
                "s AS (UPDATE stock SET s_quantity = CASE WHEN s_quantity - v.q >= 10 "
                "THEN s_quantity - v.q ELSE s_quantity - v.q + 91 END, "
                "s_ytd = s_ytd + v.q, s_order_cnt = s_order_cnt + 1, "
                "s_remote_cnt = s_remote_cnt + CASE WHEN v.sw <> $3::int THEN 1 ELSE 0 END "
                "FROM v WHERE s_i_id = v.i AND s_w_id = v.sw "
                "RETURNING s_i_id, s_w_id, s_quantity, " + _DIST.format(d="$2::int") +
                " AS di) "
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, "
                "ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) "
                "SELECT $1::int, $2::int, $3::int, v.n, v.i, v.sw, NULL, v.q, v.q * i.i_price, s.di "
                "FROM v JOIN item i ON i.i_id = v.i "
                "JOIN s ON s.s_i_id = v.i AND s.s_w_id = v.sw "
                "RETURNING ol_number, ol_i_id, ol_amount",
    "no_order": "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, "
                "o_ol_cnt, o_all_local) VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)",
    "no_new_order": "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)",
    # Payment
    "pay_warehouse": "UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 "
                     "RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
    "pay_district": "UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2 "
                    "RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
    "pay_by_name": "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 "
                   "AND c_last = $3 ORDER BY c_first",
    "pay_customer": "UPDATE customer SET c_balance = c_balance - $4::numeric, "
                    "c_ytd_payment = c_ytd_payment + $4::numeric, "
                    "c_payment_cnt = c_payment_cnt + 1, "
                    "c_data = CASE WHEN c_credit = 'BC' THEN substr(c_id || ' ' || c_d_id "
                    "|| ' ' || c_w_id || ' ' || $5::int || ' ' || $6::int || ' ' || "
                    "$4::numeric || ' | ' || c_data, 1, 500) ELSE c_data END "
                    "WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 "
                    "RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, "
                    "c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, "
                    "c_balance",
    "pay_history": "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, "
                   "h_amount, h_data) SELECT $1::int, $2::int, $3::int, $4::int, $5::int, now(), "
                   "$6::numeric, "
                   "w_name || '    ' || d_name FROM warehouse, district "
                   "WHERE w_id = $5 AND d_w_id = $5 AND d_id = $4",
    # Order-Status
    "os_by_name": "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer "
                  "WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first",
    "os_customer": "SELECT c_balance, c_first, c_middle, c_last FROM customer "
                   "WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
    "os_order": "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = $1 "
                "AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1",
    "os_lines": "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d "
                "FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = "
                "(SELECT max(o_id) FROM orders WHERE o_w_id = $1 AND o_d_id = $2 "
                "AND o_c_id = $3)",
    # Delivery: the ten districts in one statement
    "delivery": "WITH del AS (DELETE FROM new_order n USING (SELECT d, (SELECT min(no_o_id) "
                "FROM new_order WHERE no_w_id = $1 AND no_d_id = d) AS o "
                "FROM generate_series(1, 10) AS d) m WHERE n.no_w_id = $1 "
                "AND n.no_d_id = m.d AND n.no_o_id = m.o RETURNING n.no_d_id AS d, "
                "n.no_o_id AS o), "
                "o AS (UPDATE orders SET o_carrier_id = $2 FROM del WHERE o_w_id = $1 "
                "AND o_d_id = del.d AND o_id = del.o RETURNING o_d_id, o_c_id), "
                "l AS (UPDATE order_line SET ol_delivery_d = now() FROM del "
                "WHERE ol_w_id = $1 AND ol_d_id = del.d AND ol_o_id = del.o "
                "RETURNING ol_d_id, ol_amount), "
                "s AS (SELECT ol_d_id, sum(ol_amount) AS a FROM l GROUP BY ol_d_id) "
                "UPDATE customer SET c_balance = c_balance + s.a, "
                "c_delivery_cnt = c_delivery_cnt + 1 FROM o JOIN s ON s.ol_d_id = o.o_d_id "
                "WHERE c_w_id = $1 AND c_d_id = o.o_d_id AND c_id = o.o_c_id",
    # Stock-Level
    "stock_level": "SELECT count(DISTINCT s_i_id) FROM district, order_line, stock "
                   "WHERE d_w_id = $1 AND d_id = $2 AND ol_w_id = $1 AND ol_d_id = $2 "
                   "AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20 "
                   "AND s_w_id = $1 AND s_i_id = ol_i_id AND s_quantity < $3",
    # server-side
    "f_neword": "SELECT vs_neword($1, $2, $3, $4, $5, $6::int[], $7::int[], $8::int[])",
    "f_payment": "SELECT vs_payment($1, $2, $3, $4, $5, $6, $7::numeric)",
    "f_ostat": "SELECT vs_ostat($1, $2, $3, $4)",
    "f_delivery": "SELECT vs_delivery($1, $2)",
    "f_slev": "SELECT vs_slev($1, $2, $3)",
}
_PG_RETRY = (b"40P01", b"40001")


class PgTxns:
    """The five transactions over one libpq connection in pipeline mode."""

    def __init__(self, target, sp: bool):
        from psycopg import OperationalError, pq
        self.pq = pq
        self._operr = OperationalError
        self.conn = connect_pg(target)
        pg = self.pg = self.conn.pgconn
        self.sp = sp
        self.n = {}
        for key, sql in PG_SQL.items():
            if sp != key.startswith("f_") and key not in ("begin", "commit", "rollback"):
                continue
            name = key.encode()
            res = pg.prepare(name, sql.encode())
            if res.status != pq.ExecStatus.COMMAND_OK:
                raise DatabaseError(f"cannot prepare the TPROC-C statement {key}: "
                                    f"{_pg_msg(res)}")
            self.n[key] = name
        if not sp:
            # several statements per round trip; one call per transaction needs no pipeline
            pg.enter_pipeline_mode()
        self._sync = pq.ExecStatus.PIPELINE_SYNC
        self._ok = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)
        self._fatal = pq.ExecStatus.FATAL_ERROR
        self._aborted = pq.ExecStatus.PIPELINE_ABORTED
        self._sqlstate = pq.DiagnosticField.SQLSTATE
        self.B, self.C, self.R = self.n["begin"], self.n["commit"], self.n["rollback"]
        self.impl = (self.new_order, self.payment, self.order_status, self.delivery,
                     self.stock_level)

    def alive(self) -> bool:
        return self.pg.status == self.pq.ConnStatus.OK

    def session_transactions(self):
        return None                    # PostgreSQL counts per database, not per session

    def close(self) -> None:
        try:
            if not self.sp:
                self.pg.exit_pipeline_mode()
        except Exception:
            pass
        self.conn.close()

    def _run(self, calls):
        """Send the statements and a sync in one go; the results in order. Raises Retry or
        TxnError (with the SQLSTATE) for the first failed statement."""
        pg = self.pg
        send = pg.send_query_prepared
        try:
            for name, params in calls:
                send(name, params)
            pg.pipeline_sync()
            pg.flush()
        except self._operr as exc:            # the link is gone
            raise TxnError(str(exc).strip() or "the connection stopped answering") from None
        out, err, nones = [], None, 0
        get = pg.get_result
        while True:
            r = get()
            if r is None:
                nones += 1
                if nones > 1:
                    raise TxnError("the connection stopped answering: " +
                                   (pg.error_message or b"").decode(errors="replace").strip())
                continue
            nones = 0
            st = r.status
            if st == self._sync:
                break
            if st == self._fatal and err is None:
                err = r
            out.append(r)
        if err is not None:
            state = err.error_field(self._sqlstate) or b""
            if state in _PG_RETRY:
                raise Retry(state.decode())
            raise TxnError(_pg_msg(err), state)
        return out

    def _txn(self, calls):
        """Run calls that belong to an open transaction; roll back on failure."""
        try:
            return self._run(calls)
        except (Retry, TxnError):
            try:
                self._run(((self.R, None),))
            except (Retry, TxnError):
                pass
            raise

    def _call(self, name, params):
        """One autocommit call of a server-side function; VS001 is the intended rollback."""
        try:
            r = self.pg.exec_prepared(name, params)
        except self._operr as exc:            # libpq returned no result: the link is gone
            raise TxnError(str(exc).strip() or "the connection stopped answering") from None
        if r.status in self._ok:
            return COMMIT
        state = r.error_field(self._sqlstate) or b""
        if state == b"VS001":
            return ROLLBACK
        if state in _PG_RETRY:
            raise Retry(state.decode())
        if r.status != self._fatal:
            raise TxnError("the connection stopped answering: " +
                           (self.pg.error_message or b"").decode(errors="replace").strip())
        raise TxnError(_pg_msg(r), state)

    def plan(self, t, args):
        """(function, arguments) that run transaction type t with these inputs; server-side
        calls get their parameters encoded here, ahead of time."""
        if not self.sp:
            return self.impl[t], args
        n = self.n
        if t == NO:
            w, d, c, items, supply, qty, all_local = args
            return self._call, (n["f_neword"], (
                b"%d" % w, b"%d" % d, b"%d" % c, b"%d" % len(items), b"%d" % all_local,
                _arr(items), _arr(supply), _arr(qty)))
        if t == PAY:
            w, d, cw, cd, c, last, amount = args
            return self._call, (n["f_payment"], (b"%d" % w, b"%d" % d, b"%d" % cw, b"%d" % cd,
                                                 b"%d" % c, last.encode(), amount.encode()))
        if t == OS:
            w, d, c, last = args
            return self._call, (n["f_ostat"], (b"%d" % w, b"%d" % d, b"%d" % c, last.encode()))
        if t == DLV:
            return self._call, (n["f_delivery"], (b"%d" % args[0], b"%d" % args[1]))
        return self._call, (n["f_slev"], tuple(b"%d" % x for x in args))

    # New-Order
    def new_order(self, w, d, c, item_ids, supply_ws, qtys, all_local):
        n = self.n
        items, supply, qty = _arr(item_ids), _arr(supply_ws), _arr(qtys)
        W, D, C = b"%d" % w, b"%d" % d, b"%d" % c
        cnt = b"%d" % len(item_ids)
        r = self._txn(((self.B, None), (n["no_district"], (W, D)),
                       (n["no_customer"], (W, D, C)), (n["no_items"], (items,))))
        if r[3].ntuples < len(item_ids):
            self._run(((self.R, None),))
            return ROLLBACK
        o = r[1].get_value(0, 0)
        self._txn(((n["no_lines"], (o, D, W, items, supply, qty)),
                   (n["no_order"], (o, D, W, C, cnt, b"%d" % all_local)),
                   (n["no_new_order"], (o, D, W)), (self.C, None)))
        return COMMIT

    # Payment
    def payment(self, w, d, cw, cd, c, last, amount):
        n = self.n
        W, D, CW, CD, A = b"%d" % w, b"%d" % d, b"%d" % cw, b"%d" % cd, amount.encode()
        head = ((self.B, None), (n["pay_warehouse"], (W, A)), (n["pay_district"], (W, D, A)))
        if c == 0:
            r = self._txn(head + ((n["pay_by_name"], (CW, CD, last.encode())),))
            ids = r[3]
            k = ids.ntuples
            if k == 0:
                self._run(((self.R, None),))
                raise TxnError(f"no customer named {last} in district {cd} of warehouse {cw}")
            C = ids.get_value((k + 1) // 2 - 1, 0)
            self._txn(((n["pay_customer"], (CW, CD, C, A, D, W)),
                       (n["pay_history"], (C, CD, CW, D, W, A)), (self.C, None)))
        else:
            C = b"%d" % c
            self._txn(head + ((n["pay_customer"], (CW, CD, C, A, D, W)),
                              (n["pay_history"], (C, CD, CW, D, W, A)), (self.C, None)))
        return COMMIT

    # Order-Status
    def order_status(self, w, d, c, last):
        n = self.n
        W, D = b"%d" % w, b"%d" % d
        if c == 0:
            r = self._txn(((self.B, None), (n["os_by_name"], (W, D, last.encode()))))
            k = r[1].ntuples
            if k == 0:
                self._run(((self.R, None),))
                raise TxnError(f"no customer named {last} in district {d} of warehouse {w}")
            C = r[1].get_value((k + 1) // 2 - 1, 0)
            self._txn(((n["os_order"], (W, D, C)), (n["os_lines"], (W, D, C)), (self.C, None)))
        else:
            C = b"%d" % c
            self._txn(((self.B, None), (n["os_customer"], (W, D, C)), (n["os_order"], (W, D, C)),
                       (n["os_lines"], (W, D, C)), (self.C, None)))
        return COMMIT

    # Delivery
    def delivery(self, w, carrier):
        n = self.n
        W, K = b"%d" % w, b"%d" % carrier
        self._txn(((self.B, None), (n["delivery"], (W, K)), (self.C, None)))
        return COMMIT

    # Stock-Level
    def stock_level(self, w, d, threshold):
        n = self.n
        W, D, T = b"%d" % w, b"%d" % d, b"%d" % threshold
        self._txn(((self.B, None), (n["stock_level"], (W, D, T)), (self.C, None)))
        return COMMIT


def _pg_msg(res) -> str:
    return (res.error_message or b"").decode(errors="replace").strip().splitlines()[0] \
        if res.error_message else "unknown error"


# --- MySQL / MariaDB -------------------------------------------------------------------------
_MY_RETRY = (1213, 1205)          # deadlock, lock wait timeout
_MY_DIST = tuple("s_dist_%02d" % d for d in range(1, 11))

MY_SQL = {
    # New-Order, first round trip (values: w, d, c, items, stock keys, dist column)
    "no_head": "START TRANSACTION;"
               "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = {w} AND d_id = {d} "
               "FOR UPDATE;"
               "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = {w} "
               "AND d_id = {d};"
               "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse "
               "WHERE w_id = {w} AND c_w_id = {w} AND c_d_id = {d} AND c_id = {c};"
               "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({items});"
               "SELECT s_i_id, s_w_id, s_quantity, {dist}, s_data FROM stock "
               "WHERE (s_w_id, s_i_id) IN ({keys}) FOR UPDATE",
    "no_stock": "UPDATE stock SET s_quantity = {sq}, s_ytd = s_ytd + {q}, "
                "s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + {r} "
                "WHERE s_w_id = {sw} AND s_i_id = {i};",
    "no_tail": "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, "
               "o_ol_cnt, o_all_local) VALUES ({o}, {d}, {w}, {c}, NOW(), NULL, {cnt}, "
               "{all_local});"
               "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ({o}, {d}, {w});"
               "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, "
               "ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) "
               "VALUES {lines};COMMIT",
    # Payment
    "pay_head": "START TRANSACTION;"
                "UPDATE warehouse SET w_ytd = w_ytd + {a} WHERE w_id = {w};"
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse "
                "WHERE w_id = {w};"
                "UPDATE district SET d_ytd = d_ytd + {a} WHERE d_w_id = {w} AND d_id = {d};"
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district "
                "WHERE d_w_id = {w} AND d_id = {d}",
    "pay_by_name": "SELECT c_id FROM customer WHERE c_w_id = {cw} AND c_d_id = {cd} "
                   "AND c_last = '{last}' ORDER BY c_first",
    "pay_tail": "UPDATE customer SET c_balance = c_balance - {a}, "
                "c_ytd_payment = c_ytd_payment + {a}, c_payment_cnt = c_payment_cnt + 1, "
                "c_data = IF(c_credit = 'BC', LEFT(CONCAT(c_id, ' ', c_d_id, ' ', c_w_id, ' ', "
                "{d}, ' ', {w}, ' ', {a}, ' | ', c_data), 500), c_data) "
                "WHERE c_w_id = {cw} AND c_d_id = {cd} AND c_id = {c};"
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, "
                "c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance "
                "FROM customer WHERE c_w_id = {cw} AND c_d_id = {cd} AND c_id = {c};"
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, "
                "h_amount, h_data) SELECT {c}, {cd}, {cw}, {d}, {w}, NOW(), {a}, "
                "CONCAT(w_name, '    ', d_name) FROM warehouse, district "
                "WHERE w_id = {w} AND d_w_id = {w} AND d_id = {d};COMMIT",
    # Order-Status
    "os_by_name": "START TRANSACTION;"
                  "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer "
                  "WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = '{last}' ORDER BY c_first",
    "os_customer": "START TRANSACTION;"
                   "SELECT c_balance, c_first, c_middle, c_last FROM customer "
                   "WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c};",
    "os_tail": "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = {w} "
               "AND o_d_id = {d} AND o_c_id = {c} ORDER BY o_id DESC LIMIT 1;"
               "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d "
               "FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = "
               "(SELECT MAX(o_id) FROM orders WHERE o_w_id = {w} AND o_d_id = {d} "
               "AND o_c_id = {c});COMMIT",
    # Delivery: one district (the procedure's loop body), user variables for the ids
    "dlv_district": "SET @o = NULL, @c = NULL;"
                    "SELECT no_o_id INTO @o FROM new_order WHERE no_w_id = {w} "
                    "AND no_d_id = {d} ORDER BY no_o_id LIMIT 1 FOR UPDATE;"
                    "DELETE FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} "
                    "AND no_o_id = @o;"
                    "SELECT o_c_id INTO @c FROM orders WHERE o_w_id = {w} AND o_d_id = {d} "
                    "AND o_id = @o;"
                    "UPDATE orders SET o_carrier_id = {k} WHERE o_w_id = {w} AND o_d_id = {d} "
                    "AND o_id = @o;"
                    "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = {w} "
                    "AND ol_d_id = {d} AND ol_o_id = @o;"
                    "UPDATE customer SET c_balance = c_balance + (SELECT COALESCE(SUM(ol_amount), "
                    "0) FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} "
                    "AND ol_o_id = @o), c_delivery_cnt = c_delivery_cnt + 1 "
                    "WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = @c;",
    # Stock-Level
    "stock_level": "START TRANSACTION;"
                   "SELECT d_next_o_id INTO @n FROM district WHERE d_w_id = {w} AND d_id = {d};"
                   "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = {w} "
                   "AND ol_d_id = {d} AND ol_o_id < @n AND ol_o_id >= @n - 20 "
                   "AND s_w_id = {w} AND s_i_id = ol_i_id AND s_quantity < {t};COMMIT",
    # server-side
    "p_neword": "CALL vs_neword({w}, {d}, {c}, {cnt}, {all_local}, '{items}', '{supply}', "
                "'{qty}')",
    "p_payment": "CALL vs_payment({w}, {d}, {cw}, {cd}, {c}, '{last}', {a})",
    "p_ostat": "CALL vs_ostat({w}, {d}, {c}, '{last}')",
    "p_delivery": "CALL vs_delivery({w}, {k})",
    "p_slev": "CALL vs_slev({w}, {d}, {t})",
}


class MyTxns:
    """The five transactions over one MySQL/MariaDB connection with multi-statements."""

    def __init__(self, target, sp: bool):
        self.sp = sp
        self.driver = mysql_driver()
        kw = dict(host=target.address, port=target.port, user=target.user or "root",
                  password=target.password, connect_timeout=10)
        if self.driver == "mysqlclient":
            import MySQLdb
            from MySQLdb import _mysql
            from MySQLdb.constants import CLIENT
            self.Error, self.OpError = MySQLdb.Error, MySQLdb.OperationalError
            try:
                self.conn = _mysql.connect(database=target.database,
                                           client_flag=CLIENT.MULTI_STATEMENTS
                                           | CLIENT.MULTI_RESULTS, **kw)
            except MySQLdb.Error as exc:
                from ..db import _explain
                raise _explain(target, exc) from None
            self.conn.autocommit(True)
            self._multi = self._multi_mysqlclient
        else:
            import pymysql
            from pymysql.constants import CLIENT
            self.Error, self.OpError = pymysql.Error, pymysql.OperationalError
            try:
                self.conn = pymysql.connect(database=target.database, autocommit=True,
                                            ssl_disabled=True,
                                            client_flag=CLIENT.MULTI_STATEMENTS
                                            | CLIENT.MULTI_RESULTS, **kw)
            except pymysql.Error as exc:
                from ..db import _explain
                raise _explain(target, exc) from None
            self.cur = self.conn.cursor()
            self._multi = self._multi_pymysql
        self._ok = True
        self.impl = (self.new_order, self.payment, self.order_status, self.delivery,
                     self.stock_level)

    def plan(self, t, args):
        """(function, arguments) that run transaction type t with these inputs; server-side
        calls get their statement text built here, ahead of time."""
        if not self.sp:
            return self.impl[t], args
        S = MY_SQL
        if t == NO:
            w, d, c, items, supply, qty, all_local = args
            return self._call, (S["p_neword"].format(
                w=w, d=d, c=c, cnt=len(items), all_local=all_local,
                items=",".join(map(str, items)), supply=",".join(map(str, supply)),
                qty=",".join(map(str, qty))),)
        if t == PAY:
            w, d, cw, cd, c, last, amount = args
            return self._call, (S["p_payment"].format(w=w, d=d, cw=cw, cd=cd, c=c, last=last,
                                                      a=amount),)
        if t == OS:
            w, d, c, last = args
            return self._call, (S["p_ostat"].format(w=w, d=d, c=c, last=last),)
        if t == DLV:
            return self._call, (S["p_delivery"].format(w=args[0], k=args[1]),)
        return self._call, (S["p_slev"].format(w=args[0], d=args[1], t=args[2]),)

    def alive(self) -> bool:
        return self._ok

    def session_transactions(self):
        """Com_commit + Com_rollback of this connection, or None when it is gone."""
        if not self._ok:
            return None
        try:
            rows = self._multi("SHOW SESSION STATUS WHERE Variable_name IN "
                               "('Com_commit', 'Com_rollback')")[0]
        except self.Error:
            return None
        return sum(int(r[1]) for r in rows)

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass

    def _multi_mysqlclient(self, sql: str) -> list:
        """All result sets of a multi-statement (statements without one give None)."""
        conn = self.conn
        conn.query(sql)
        out = []
        while True:
            r = conn.store_result()
            out.append(r.fetch_row(0) if r is not None else None)
            if conn.next_result() != 0:
                return out

    def _multi_pymysql(self, sql: str) -> list:
        cur = self.cur
        cur.execute(sql)
        out = []
        while True:
            out.append(cur.fetchall() if cur.description else None)
            if not cur.nextset():
                return out

    def _q(self, sql: str, in_txn: bool):
        try:
            return self._multi(sql)
        except self.Error as exc:
            code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
            if in_txn and code not in (2006, 2013):
                try:
                    self._multi("ROLLBACK")
                except self.Error:
                    pass
            if code in _MY_RETRY:
                raise Retry(str(code)) from None
            if code in (2006, 2013) or isinstance(exc, self.OpError) and code >= 2000:
                self._ok = False
            raise TxnError(f"{code}: {exc.args[1] if len(exc.args) > 1 else exc}") from None

    def _call(self, sql: str):
        """A stored procedure call: it rolls back itself on error; the last result set (if
        any) says whether it rolled back on purpose."""
        res = self._q(sql, in_txn=False)
        for r in res:
            if r and len(r[0]) == 2 and r[0][1] in (1, b"1", "1"):
                return ROLLBACK
        return COMMIT

    def new_order(self, w, d, c, item_ids, supply_ws, qtys, all_local):
        S = MY_SQL
        cnt = len(item_ids)
        items = ",".join(map(str, item_ids))
        keys = ",".join(f"({sw},{i})" for sw, i in zip(supply_ws, item_ids))
        r = self._q(S["no_head"].format(w=w, d=d, c=c, items=items, keys=keys,
                                        dist=_MY_DIST[d - 1]), in_txn=True)
        o = int(r[1][0][0])
        price = {int(row[0]): row[1] for row in r[4]}
        if len(price) < cnt:
            self._q("ROLLBACK", in_txn=False)
            return ROLLBACK
        stock = {(int(row[1]), int(row[0])): row for row in r[5]}
        parts = []
        vals = []
        for k, (sw, i, q) in enumerate(zip(supply_ws, item_ids, qtys), 1):
            row = stock[(sw, i)]
            sq = int(row[2]) - q
            if sq < 10:
                sq += 91
            parts.append(S["no_stock"].format(sq=sq, q=q, r=int(sw != w), sw=sw, i=i))
            dist = row[3].decode() if isinstance(row[3], bytes) else row[3]
            p = price[i].decode() if isinstance(price[i], bytes) else str(price[i])
            vals.append(f"({o},{d},{w},{k},{i},{sw},NULL,{q},{q}*{p},'{dist}')")
        parts.append(S["no_tail"].format(o=o, d=d, w=w, c=c, cnt=cnt, all_local=all_local,
                                         lines=",".join(vals)))
        self._q("".join(parts), in_txn=True)
        return COMMIT

    def payment(self, w, d, cw, cd, c, last, amount):
        S = MY_SQL
        head = S["pay_head"].format(a=amount, w=w, d=d)
        if c == 0:
            r = self._q(head + ";" + S["pay_by_name"].format(cw=cw, cd=cd, last=last),
                        in_txn=True)
            ids = r[-1]
            if not ids:
                self._q("ROLLBACK", in_txn=False)
                raise TxnError(f"no customer named {last} in district {cd} of warehouse {cw}")
            c = int(ids[(len(ids) + 1) // 2 - 1][0])
            self._q(S["pay_tail"].format(a=amount, d=d, w=w, cw=cw, cd=cd, c=c), in_txn=True)
        else:
            self._q(head + ";" + S["pay_tail"].format(a=amount, d=d, w=w, cw=cw, cd=cd, c=c),
                    in_txn=True)
        return COMMIT

    def order_status(self, w, d, c, last):
        S = MY_SQL
        if c == 0:
            r = self._q(S["os_by_name"].format(w=w, d=d, last=last), in_txn=True)
            rows = r[-1]
            if not rows:
                self._q("ROLLBACK", in_txn=False)
                raise TxnError(f"no customer named {last} in district {d} of warehouse {w}")
            c = int(rows[(len(rows) + 1) // 2 - 1][0])
            self._q(S["os_tail"].format(w=w, d=d, c=c), in_txn=True)
        else:
            self._q(S["os_customer"].format(w=w, d=d, c=c) + S["os_tail"].format(w=w, d=d, c=c),
                    in_txn=True)
        return COMMIT

    def delivery(self, w, carrier):
        S = MY_SQL
        body = "".join(S["dlv_district"].format(w=w, d=d, k=carrier)
                       for d in range(1, DISTRICTS + 1))
        self._q("START TRANSACTION;" + body + "COMMIT", in_txn=True)
        return COMMIT

    def stock_level(self, w, d, threshold):
        S = MY_SQL
        self._q(S["stock_level"].format(w=w, d=d, t=threshold), in_txn=True)
        return COMMIT
