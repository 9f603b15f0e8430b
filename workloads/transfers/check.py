"""Money is conserved: the conditions a transfers database must meet after any run, stopped
or not, each reported pass/fail with the number of offenders.

    1  the balances sum to the sum loaded (tf_meta.initial_total)
    2  no balance is negative
    3  every transfer has exactly two audit rows, which cancel out
    4  every account's balance is its initial balance plus its audit rows

Before the conditions, the schema: missing tables or an interrupted load fail the check.
"""
from __future__ import annotations

from ..engine.api import SqlSession, TargetInfo, check_conditions, condition_lines
from . import load


def _conditions(m: dict) -> tuple:
    return (
        (1, "the balances sum to the sum loaded", "units of money created or lost",
         f"SELECT ABS(COALESCE(SUM(balance), 0) - {m['initial_total']}) FROM tf_accounts"),
        (2, "no balance is negative", "accounts",
         "SELECT COUNT(*) FROM tf_accounts WHERE balance < 0"),
        (3, "every transfer has its two audit rows, which cancel out", "transfers",
         "SELECT COUNT(*) FROM tf_transfers t LEFT JOIN (SELECT transfer_id, COUNT(*) AS n, "
         "SUM(amount) AS s FROM tf_audit GROUP BY transfer_id) a ON a.transfer_id = t.id "
         "WHERE a.n IS NULL OR a.n <> 2 OR a.s <> 0"),
        (4, "every balance is the initial balance plus its audit rows", "accounts",
         "SELECT COUNT(*) FROM tf_accounts c LEFT JOIN (SELECT account_id, SUM(amount) AS s "
         "FROM tf_audit GROUP BY account_id) a ON a.account_id = c.id "
         f"WHERE c.balance <> {m['initial_balance']} + COALESCE(a.s, 0)"),
    )


def check(target: TargetInfo) -> dict:
    """{'ok', 'schema': {'ok', 'problem'}, 'conditions': [{'id', 'name', 'ok', 'offending',
    'of', 'seconds'}], 'sum': [initial, now]}."""
    db = SqlSession(target)
    try:
        m = load.meta(db)
        if m is None:
            return {"ok": False, "conditions": [],
                    "schema": {"ok": False, "problem": "no transfers tables (tf_meta) in "
                                                      "this database"}}
        if m["state"] != "ready":
            return {"ok": False, "conditions": [],
                    "schema": {"ok": False, "problem": f"the load did not finish (state "
                                                      f"{m['state']!r}); run again to reload"}}
        out = {"schema": {"ok": True, "problem": "", "users": m["users"],
                          "accounts": m["users"] * m["accounts_per_user"]},
               "conditions": []}
        out["conditions"] = check_conditions(db, _conditions(m))
        out["sum"] = [m["initial_total"],
                      int(db.scalar("SELECT SUM(balance) FROM tf_accounts") or 0)]
        out["ok"] = all(c["ok"] for c in out["conditions"])
        return out
    finally:
        db.close()


def describe(result: dict) -> list[str]:
    s = result["schema"]
    lines = [f"schema: PASS ({s['users']:,} users, {s['accounts']:,} accounts)" if s["ok"]
             else f"schema: FAIL ({s['problem']})"]
    lines += condition_lines(result["conditions"])
    if result.get("sum"):
        lines.append(f"balances: {result['sum'][1]:,} now, {result['sum'][0]:,} loaded")
    lines.append("money conserved: " + ("PASS" if result["ok"] else "FAIL"))
    return lines


def run_check(target) -> dict:
    """The check as `versus check transfers` runs it: the result with its lines."""
    result = check(target)
    return {**result, "lines": describe(result)}
