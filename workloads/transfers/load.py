"""The transfers workload's tables: reused when they match the parameters, else loaded.

Users 1..U, each with one token and accounts (u-1)·A+1 … u·A holding the initial balance.
Tokens are derived from a seed kept in tf_meta (md5 of seed:user), so clients compute them
instead of holding every user's token in memory. The marker row says 'loading' until the
last row is in, so an interrupted load is rebuilt by the next run and fails the check.
Bulk path: workloads.engine.sql.db.BulkLoader (COPY, LOAD DATA LOCAL INFILE or multi-row INSERTs).
"""
from __future__ import annotations

import hashlib
import secrets
import time
from pathlib import Path

from ..engine.api import BulkLoader, DatabaseError, SqlSession

TABLES = ("tf_users", "tf_tokens", "tf_accounts", "tf_transfers", "tf_audit",
          "tf_balance_history")
MARKER = "tf_meta"
VERSION = 1
CHUNK = 20_000
_SCHEMA = Path(__file__).with_name("schema")


def token_of(seed: str, user: int) -> str:
    return hashlib.md5(f"{seed}:{user}".encode()).hexdigest()


def owner_of(account: int, per_user: int) -> int:
    return (account - 1) // per_user + 1


def meta(db: SqlSession) -> dict | None:
    """The marker row, or None when there is none (no tables, or not ours)."""
    try:
        rows = db.execute(f"SELECT version, users, accounts_per_user, initial_balance, "
                          f"initial_total, token_seed, state FROM {MARKER}")
    except Exception:          # no such table: not loaded here
        return None
    if not rows:
        return None
    keys = ("version", "users", "accounts_per_user", "initial_balance", "initial_total",
            "token_seed", "state")
    out = dict(zip(keys, rows[0]))
    for k in keys[:5]:
        out[k] = int(out[k])
    return out


def _matches(m: dict | None, p: dict) -> bool:
    return bool(m) and m["state"] == "ready" and m["version"] == VERSION and (
        m["users"], m["accounts_per_user"], m["initial_balance"]) == (
        p["users"], p["accounts-per-user"], p["initial-balance"])


def prepare(agent) -> dict:
    """Reuse or load the tables; returns the marker row."""
    p = agent.params
    db = SqlSession(agent.target)
    try:
        m = meta(db)
        if not p["rebuild"] and _matches(m, p):
            agent.log(f"reusing the transfers tables ({m['users']:,} users, "
                      f"{m['users'] * m['accounts_per_user']:,} accounts)")
            return m
        with agent.phase("load"):
            t0 = time.monotonic()
            m, rows = _load(agent, db, p)
            agent.load_summary("load", rows, time.monotonic() - t0)
        return m
    finally:
        db.close()


def _load(agent, db: SqlSession, p: dict) -> tuple[dict, int]:
    users, per, bal = p["users"], p["accounts-per-user"], p["initial-balance"]
    accounts = users * per
    seed = secrets.token_hex(8)
    for t in TABLES + (MARKER,):
        db.execute(f"DROP TABLE IF EXISTS {t}")
    text = (_SCHEMA / f"{db.dialect}.sql").read_text()
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("-- "))
    for stmt in body.split(";"):
        if stmt.strip():
            db.execute(stmt)
    total = users * per * bal
    db.execute(f"INSERT INTO {MARKER} VALUES ({VERSION}, {users}, {per}, {bal}, {total}, "
               f"'{seed}', 'loading')")
    loader = BulkLoader(agent.target, relaxed=True)
    expires = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 10 * 365 * 86400))
    all_rows = 2 * users + accounts
    done = 0
    try:
        for first in range(1, users + 1, CHUNK):
            last = min(users, first + CHUNK - 1)
            loader.put("tf_users", "id, name", "".join(
                f"{u}\tuser {u}\n" for u in range(first, last + 1)).encode())
            loader.put("tf_tokens", "token, user_id, expires_at", "".join(
                f"{token_of(seed, u)}\t{u}\t{expires}\n"
                for u in range(first, last + 1)).encode())
            loader.put("tf_accounts", "id, user_id, balance", "".join(
                f"{a}\t{owner_of(a, per)}\t{bal}\n"
                for a in range((first - 1) * per + 1, last * per + 1)).encode())
            done += 2 * (last - first + 1) + (last - first + 1) * per
            agent.progress("load", done, all_rows)
            agent.check_stop()
    finally:
        loader.close()
    for t in ("tf_users", "tf_tokens", "tf_accounts"):
        db.execute(f"ANALYZE TABLE {t}" if db.dialect == "mysql" else f"ANALYZE {t}")
    db.execute(f"UPDATE {MARKER} SET state = 'ready'")
    got = int(db.scalar("SELECT SUM(balance) FROM tf_accounts") or 0)
    if got != total:
        raise DatabaseError(f"the transfers load is short: the balances sum to {got:,}, "
                            f"not {total:,}")
    return meta(db), all_rows
