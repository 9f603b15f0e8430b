"""A transfer in four round trips, its client loop and the run's result.

    1 token   BEGIN; SELECT the caller's token (unexpired, the payer's owner)
    2 lock    SELECT both accounts ... ORDER BY id FOR UPDATE (locks in id order: no deadlock
              between two transfers over the same pair), their balances
    3 move    UPDATE payer, UPDATE payee, INSERT the transfer (its id back)
    4 commit  INSERT two audit rows, INSERT two balance-history rows, [DELETE an old
              transfer], COMMIT

A payer whose balance is below the amount ends the transfer after round trip 2 with COMMIT
(nothing written): a business rejection, counted apart from errors. So the server commits
exactly once per transfer or rejection; deadlocks and serialization failures are rolled back
(the server counts a rollback) and retried, up to 50 times. Each round trip's latency is a
timing; the transfer's (all its attempts) is the operation's.

Clients send SQL text through workloads.engine.sql.db.SqlText (one round trip per call); amounts and
ids are integers and tokens hex digits, put in as literals. A client makes no query before
the phase starts, so the server's commit counter over the phase counts its transfers only.
"""
from __future__ import annotations

import collections
import time
from functools import partial

from ..engine.api import DatabaseError, SqlFailed, SqlText
from ..engine.api import StopRun
from ..events import bucket_of
from ..params import ParamError
from . import ROUND_TRIPS, check, load

TYPES = ("transfer", "rejection")
TRANSFER, REJECTION = range(2)
COUNTERS = ("transfers", "rejections", "retries", "deletes")
TRANSFERS, REJECTIONS, RETRIES, DELETES = range(4)
RT1, RT2, RT3, RT4 = range(4)
MAX_ATTEMPTS = 50
DELETE_EVERY = 20      # Reserva deletes one transfer in 20


class TokenRejected(Exception):
    """The caller's token did not check out (a data problem, counted as an error)."""


def transfer_rate(ops: dict, counters: dict, seconds: float) -> float:
    return ops.get("transfer", 0) / seconds if seconds > 0 else 0.0


# --- the run -------------------------------------------------------------------------------
def run(agent) -> None:
    p = agent.params
    if p["users"] * p["accounts-per-user"] < 2:
        raise ParamError("a transfer needs two accounts: give users × accounts-per-user of "
                         "at least 2")
    meta = load.prepare(agent)
    fn = partial(vu_main, meta=meta)
    kw = dict(counters=COUNTERS, timings=ROUND_TRIPS, rate=transfer_rate,
              session_counter="Com_commit")
    if p["warmup"] > 0:
        agent.run_clients("warmup", fn, p["clients"], p["warmup"], TYPES, **kw)
    checked: dict = {}

    def result(summary: dict) -> dict:
        out = measure_result(agent, summary)
        checked.update(out["check"])
        return out

    stopped = False
    try:
        agent.run_clients("measure", fn, p["clients"], p["duration"], TYPES,
                          summary_extra=result, **kw)
    except StopRun:
        stopped = True
    if checked and not checked["ok"]:
        raise DatabaseError("money is not conserved after the run: " + "; ".join(
            ln for ln in check.describe(checked) if "FAIL" in ln))
    if stopped:
        raise StopRun()


def measure_result(agent, summary: dict) -> dict:
    """Transfers per second with its p99, the server's commits next to the client's, client
    CPU per transfer, and the money check (a failure is a flag that fails the result)."""
    dur = summary["duration_s"]
    c = summary.get("counters") or {}
    srv = summary.get("server") or {}
    if agent.target.dialect == "postgres" and srv.get("counters"):
        commits = srv["counters"].get("xact_commit", 0) - srv.get("own_polls", 0)
        source = ("pg_stat_database xact_commit of the database over the measured period, "
                  "minus the monitor's own transactions")
    elif "server_wide" in srv:
        commits, source = srv.get("delta"), "SHOW SESSION STATUS Com_commit of the clients"
    else:
        commits = (srv.get("counters") or {}).get("Com_commit")
        source = "SHOW GLOBAL STATUS Com_commit (server-wide)"
    cpu = summary.get("driver_cpu") or {}
    n = c.get("transfers", 0)
    res = check.check(agent.target)
    failed = [ln for ln in check.describe(res) if "FAIL" in ln]
    out: dict = {"result": {
        "transfers": n, "transfers_per_s": round(n / dur, 2),
        "p99_ms": ((summary.get("lat_ms") or {}).get("transfer") or {}).get("p99"),
        "rejections": c.get("rejections", 0), "retries": c.get("retries", 0),
        "deletes": c.get("deletes", 0),
        "client_commits": n + c.get("rejections", 0),
        "server_commits": commits, "server_commits_source": source,
        "client_cpu_us_per_transfer": round((cpu.get("user_s", 0) + cpu.get("system_s", 0))
                                            * 1e6 / n, 1) if n and cpu else None,
        "money_violations": len(failed),
        "money_source": "balances sum, audit rows per transfer, no negative balance, "
                        "per-account ledger (versus check transfers)"},
        "check": res}
    if failed:
        out["flags"] = [{"name": "money not conserved", "severity": "fail",
                         "detail": "; ".join(failed)}]
    for line in check.describe(res):
        agent.log(line, "info" if "FAIL" not in line else "error")
    return out


# --- the client ----------------------------------------------------------------------------
class Transfers:
    """One client's connection and its transfers."""

    def __init__(self, vu, meta: dict):
        self.vu = vu
        self.sql = SqlText(vu.target)
        self.pg = vu.target.dialect == "postgres"
        self.per = meta["accounts_per_user"]
        self.accounts = meta["users"] * self.per
        self.seed = meta["token_seed"]
        self.rt = [vu.base(vu.timing0 + k) for k in range(len(ROUND_TRIPS))]
        self.deletes = bool(vu.params["deletes"])
        self.lag = int(vu.params.get("delete-lag", 1000))
        self.recent: collections.deque = collections.deque(maxlen=self.lag)
        self.done = 0
        self.last_report = 0.0

    def _timed(self, k: int, t0: int, t1: int) -> None:
        b = self.rt[k]
        self.vu.arr[b] += 1
        self.vu.arr[b + 2 + bucket_of((t1 - t0) // 1000)] += 1

    def attempt(self, frm: int, to: int, amount: int, old: int | None) -> int | None:
        """One try: the new transfer's id, or None for a rejection. Raises SqlFailed or
        TokenRejected (the transaction is then still open)."""
        run, clock = self.sql.run, time.perf_counter_ns
        user = load.owner_of(frm, self.per)
        t0 = clock()
        rows = run(f"BEGIN; SELECT user_id FROM tf_tokens WHERE token = "
                   f"'{load.token_of(self.seed, user)}' AND expires_at > CURRENT_TIMESTAMP")[1][0]
        t1 = clock()
        self._timed(RT1, t0, t1)
        if not rows or int(rows[0][0]) != user:
            raise TokenRejected(f"the token of user {user} did not check out")
        lo, hi = (frm, to) if frm < to else (to, frm)
        rows = run(f"SELECT id, balance FROM tf_accounts WHERE id IN ({lo}, {hi}) "
                   f"ORDER BY id FOR UPDATE")[0][0]
        t2 = clock()
        self._timed(RT2, t1, t2)
        bal = {int(a): int(b) for a, b in rows}
        if frm not in bal or to not in bal:
            raise TokenRejected(f"account {frm if frm not in bal else to} does not exist")
        if bal[frm] < amount:
            run("COMMIT")
            self._timed(RT4, t2, clock())
            return None
        move = (f"UPDATE tf_accounts SET balance = balance - {amount}, updated_at = "
                f"CURRENT_TIMESTAMP WHERE id = {frm}; UPDATE tf_accounts SET balance = "
                f"balance + {amount}, updated_at = CURRENT_TIMESTAMP WHERE id = {to}; "
                f"INSERT INTO tf_transfers (from_account, to_account, amount, user_id) "
                f"VALUES ({frm}, {to}, {amount}, {user})")
        if self.pg:
            tid = int(run(move + " RETURNING id")[2][0][0][0])
        else:
            tid = int(run(move + "; SELECT LAST_INSERT_ID()")[3][0][0][0])
        t3 = clock()
        self._timed(RT3, t2, t3)
        bf, bt = bal[frm], bal[to]
        run(f"INSERT INTO tf_audit (transfer_id, account_id, amount) VALUES "
            f"({tid}, {frm}, {-amount}), ({tid}, {to}, {amount}); "
            f"INSERT INTO tf_balance_history (account_id, transfer_id, balance_before, "
            f"balance_after) VALUES ({frm}, {tid}, {bf}, {bf - amount}), "
            f"({to}, {tid}, {bt}, {bt + amount}); "
            + (f"DELETE FROM tf_transfers WHERE id = {old}; " if old else "") + "COMMIT")
        self._timed(RT4, t3, clock())
        return tid

    def one(self, rr, max_amount: int) -> None:
        """Draw a transfer and carry it out, retrying deadlocks; count the outcome. Raises
        SqlFailed when the connection is lost."""
        frm = 1 + int(rr() * self.accounts)
        to = 1 + int(rr() * (self.accounts - 1))
        to += to >= frm
        amount = 1 + int(rr() * max_amount)
        old = None
        if self.deletes and self.done % DELETE_EVERY == DELETE_EVERY - 1 \
                and len(self.recent) == self.lag:
            old = self.recent.popleft()
        t0 = time.perf_counter_ns()
        moved = False
        try:
            moved = self._carry_out(frm, to, amount, old, t0)
        finally:
            if old is not None and not moved:
                self.recent.appendleft(old)     # not deleted this time: a later transfer will

    def _carry_out(self, frm: int, to: int, amount: int, old: int | None, t0: int) -> bool:
        """The attempts of one transfer; True when it moved money (and deleted ``old``)."""
        vu = self.vu
        arr, carr, cb = vu.arr, vu.carr, vu.cbase
        for _ in range(MAX_ATTEMPTS):
            try:
                tid = self.attempt(frm, to, amount, old)
            except SqlFailed as exc:
                if exc.lost:
                    raise
                self.sql.rollback()
                if exc.retry:
                    carr[cb + RETRIES] += 1
                    continue
                self._error(str(exc))
                return False
            except TokenRejected as exc:
                self.sql.rollback()
                self._error(str(exc))
                return False
            kind = TRANSFER if tid is not None else REJECTION
            b = vu.base(kind)
            arr[b] += 1
            arr[b + 2 + bucket_of((time.perf_counter_ns() - t0) // 1000)] += 1
            if tid is None:
                carr[cb + REJECTIONS] += 1
                return False
            carr[cb + TRANSFERS] += 1
            self.done += 1
            self.recent.append(tid)
            if old:
                carr[cb + DELETES] += 1
            return True
        self._error(f"gave up after {MAX_ATTEMPTS} deadlocks or serialization failures")
        return False

    def _error(self, msg: str) -> None:
        self.vu.arr[self.vu.base(TRANSFER) + 1] += 1
        now = time.monotonic()
        if now - self.last_report > 5.0:
            self.last_report = now
            self.vu.report_error(f"transfer: {msg}")

    def session_commits(self) -> int | None:
        """COMMITs this connection made (MySQL/MariaDB; PostgreSQL counts per database)."""
        if self.pg:
            return None
        try:
            rows = self.sql.run("SHOW SESSION STATUS LIKE 'Com_commit'")[0][0]
        except SqlFailed:
            return None
        return int(rows[0][1]) if rows else None


def vu_main(vu, meta: dict) -> None:
    tx = Transfers(vu, meta)
    try:
        if not vu.wait_for_go():
            return
        rr, stop = vu.rng.random, vu.stop
        max_amount = vu.params["max-amount"]
        try:
            while not stop.value:
                tx.one(rr, max_amount)
        except SqlFailed as exc:
            vu.connection_lost(str(exc))
            return
        n = tx.session_commits()
        if n is not None:
            vu.report_server_count(n)
    finally:
        tx.sql.close()
