"""The cost of driving sysbench through Versus: oltp_point_select, 2 threads, bare and
through `versus run --workload sysbench` (agent, host sampler, server counters, event
spool, the CLI following it), alternated on the same table in the same minutes.

Rounds go bare, versus, versus, bare (ABBA) so a drift of the shared machine over the
sitting weighs on both alike. Both QPS figures are sysbench's own ("queries: … (X per
sec.)"): bare from its output, through Versus from the run's summary, which is parsed from
the same report. The ratio versus/bare must be at least 0.98 (issue 12).

    .venv/bin/python bench/sysbench_overhead.py --engine pg --seconds 60 --rounds 2
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import tempfile
from pathlib import Path

from _common import (SYSBENCH, Engine, become_subreaper, host_busy_seconds, mean, parse_engines,
                     run_with_rusage, table)

ROOT = Path(__file__).resolve().parents[1]


def versus_cmd() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "python"
    py = str(venv) if venv.exists() else "/work/main/.venv/bin/python"
    return [py, "-m", "app.main"]


def bare(eng: Engine, db: str, rows: int, seconds: int) -> float:
    cmd = [SYSBENCH, "oltp_point_select", *eng.sysbench_conn_args(db), "--tables=1",
           f"--table-size={rows}", "--threads=2", f"--time={seconds}", "--report-interval=1",
           "--rand-type=special", "--events=0", "run"]
    r = run_with_rusage(cmd)
    if r.rc != 0:
        raise RuntimeError(f"sysbench failed ({r.rc}):\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    return float(re.search(r"^\s+queries:\s+\d+\s+\(([\d.]+) per sec", r.stdout, re.M).group(1))


def through_versus(eng: Engine, db: str, rows: int, seconds: int, home: str) -> float:
    out = os.path.join(home, f"run-{len(os.listdir(home))}.versus")
    cmd = [*versus_cmd(), "run", "--target", eng.versus_target(db), "--workload", "sysbench",
           "--set", "test=oltp_point_select", "--set", "tables=1", "--set", f"table-size={rows}",
           "--set", "threads=2", "--set", f"time={seconds}", "--set", "report-interval=1",
           "--set", "rand-type=special", "--out", out]
    r = run_with_rusage(cmd, env={**os.environ, "VERSUS_HOME": home,
                                  "PYTHONPATH": str(ROOT)}, orphans=True)
    if r.rc != 0:
        raise RuntimeError(f"versus run failed ({r.rc}):\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    c = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    try:
        evs = [json.loads(b) for (b,) in c.execute("SELECT body FROM events ORDER BY seq")]
    finally:
        c.close()
    if not any(e["kind"] == "log" and e["message"].startswith("reusing") for e in evs):
        raise RuntimeError("Versus did not reuse the prepared table")
    if not any(e["kind"] == "host" for e in evs):
        raise RuntimeError("the run has no host samples")
    summ = [e for e in evs if e["kind"] == "summary" and e.get("phase") == "measure"][-1]
    return float(summ["result"]["qps"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="pg", help="pg or mariadb")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2, help="ABBA pairs")
    a = ap.parse_args()
    (eng,) = parse_engines(a.engine)
    become_subreaper()             # wait for the detached agent too
    ncpu = os.cpu_count() or 1
    rows, res = [], {"bare": [], "versus": []}
    with tempfile.TemporaryDirectory() as home, eng.scratch_database("versus_sbo") as db:
        print(f"[{eng.label}] {db}: sysbench prepare {a.rows:,} rows", flush=True)
        eng.sysbench_prepare(db, a.rows)
        bare(eng, db, a.rows, 10)                      # warm the cache, not counted
        order = ["bare", "versus", "versus", "bare"] * a.rounds
        for i, tool in enumerate(order, 1):
            b0 = host_busy_seconds()
            qps = (bare(eng, db, a.rows, a.seconds) if tool == "bare"
                   else through_versus(eng, db, a.rows, a.seconds, home))
            busy = (host_busy_seconds() - b0) / (a.seconds * ncpu) * 100
            res[tool].append(qps)
            rows.append([i, tool, f"{qps:,.0f}", f"{busy:.0f}"])
            print(f"  {i:2d} {tool:<7} {qps:12,.2f} QPS (sysbench's report)", flush=True)
    print(table(["#", "how", "QPS", "host busy %"], rows))
    b, v = mean(res["bare"]), mean(res["versus"])
    print(f"\n{eng.label}: bare {b:,.0f} QPS, through Versus {v:,.0f} QPS; "
          f"ratio versus/bare = {v / b:.3f} (target >= 0.98)")


if __name__ == "__main__":
    main()
