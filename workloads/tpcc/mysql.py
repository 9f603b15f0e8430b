"""TPROC-C on MySQL/MariaDB: the five transactions over mysqlclient's low-level connection
with multi-statements, values inlined as literals (all are numbers or generated names), so
a client-side transaction costs one or two round trips."""
from __future__ import annotations

from ..engine.api import MYSQL_RETRY, explain, mysql_driver, mysql_lost
from .load import DISTRICTS
from .mix import COMMIT, DLV, NO, OS, PAY, ROLLBACK, Retry, TxnError

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
                raise explain(target, exc) from None
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
                raise explain(target, exc) from None
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
            if in_txn and not mysql_lost(code):
                try:
                    self._multi("ROLLBACK")
                except self.Error:
                    pass
            if code in MYSQL_RETRY:
                raise Retry(str(code)) from None
            if mysql_lost(code, isinstance(exc, self.OpError)):
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
