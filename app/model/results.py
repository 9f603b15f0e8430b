"""How a TPROC-C phase result reads: the HammerDB-defined figures with their sources, then
the counts that cross-check them (the client's own, and on MySQL/MariaDB the virtual users'
sessions)."""
from __future__ import annotations

from typing import Any


def result_parts(r: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(headline, sources, cross-checks)."""
    cl = r.get("client") or {}
    minutes = (r.get("duration_s") or 0) / 60.0
    tpm = r.get("tpm")
    head = f"{r.get('nopm') or 0:,} NOPM · " + (f"{tpm:,} TPM" if tpm is not None else
                                                 "TPM unavailable")
    tpm_source = (r.get("tpm_source") if tpm is not None else
                  "the server's counters could not be read to the end of the period")
    sources = "; ".join([f"over {r.get('duration_s') or 0:,.1f} s"]
                        + [f"{k}: {v}" for k, v in (("NOPM", r.get("nopm_source")),
                                                   ("TPM", tpm_source)) if v])
    checks = [f"client {cl.get('nopm') or 0:,} NOPM, {cl.get('tpm') or 0:,} "
              f"commits+rollbacks/min, {cl.get('retries') or 0} retries"]
    if r.get("session_transactions") is not None and minutes:
        checks.append(f"the virtual users' sessions {r['session_transactions'] / minutes:,.0f}"
                      f" commits+rollbacks/min")
    if r.get("client_cpu_us_per_txn") is not None:
        checks.append(f"client CPU {r['client_cpu_us_per_txn']} µs per transaction "
                      f"(getrusage of the virtual users)")
    return head, sources, checks


def result_text(r: dict[str, Any]) -> str:
    head, sources, checks = result_parts(r)
    return f"{head} ({sources}); cross-check: {'; '.join(checks)}"
