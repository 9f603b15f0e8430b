"""TPROC-C on PostgreSQL: the five transactions over one libpq connection in pipeline mode
with prepared statements; every batch of statements that does not need an earlier answer
goes out in one round trip (BEGIN with the first statements, the last with COMMIT)."""
from __future__ import annotations

from ..engine.api import PG_RETRY, DatabaseError, connect_pg
from .mix import COMMIT, DLV, NO, OS, PAY, ROLLBACK, Retry, TxnError


def _arr(values) -> bytes:
    return ("{%s}" % ",".join(map(str, values))).encode()


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
            if state in PG_RETRY:
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
        if state in PG_RETRY:
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
