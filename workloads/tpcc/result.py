"""The TPROC-C result of a measured phase: NOPM and TPM, their sources, and the
cross-checks against the server's own counts."""
from __future__ import annotations

from ..engine.api import SqlSession


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
                       "transactions)" if dialect == "postgres" else
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
