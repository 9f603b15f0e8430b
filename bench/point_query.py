"""Versus point-query vs sysbench oltp_point_select on the same sbtest1 table.

For each engine: create a scratch database, `sysbench oltp_point_select prepare` ONE table,
then alternate the tools round by round against that table (default order: sysbench with
its defaults, versus, sysbench --rand-type=uniform; add sysbench-nops for
--db-ps-mode=disable), and drop the database at the end. Versus must reuse the
table (its log says "reusing"); a run that reloads it is flagged.

Client CPU is measured the same way for every tool: os.wait4 rusage of the process
(user+sys) divided by the queries it counted. For Versus two figures are given: the
summary's driver_cpu (getrusage of the virtual-user processes only, what Versus reports)
and the whole `versus run` tree (CLI + agent + sampler + VUs, from wait4 of the CLI).
Server CPU per query comes from /proc: the mariadbd threads / PostgreSQL backends serving
connections to the scratch database during each run (bench/_common.ServerCpuTracker), so
other users of the servers do not count; for Versus it includes its table check and its
1 s counter polls. "other %" is the rest of the machine's busy CPU during the run (other
processes), as a share of all cores: high values mean the run was disturbed.

    .venv/bin/python bench/point_query.py --engines pg,mariadb --seconds 30 --rows 1000000 --rounds 2
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

from _common import (run_engines, SYSBENCH, Engine, ServerCpuTracker, host_busy_seconds,
                     mean, parse_sysbench, run_with_rusage, table,
                     wait_for_quiet)

ROOT = Path(__file__).resolve().parents[1]
# sysbench: defaults (--db-ps-mode=auto, --rand-type=special: 75 % of the ids come from 1 %
# of the table); sysbench-uniform: --rand-type=uniform, the id distribution Versus uses;
# sysbench-nops: --db-ps-mode=disable (text protocol, the server parses every query).
# sysbench-paced: sysbench-uniform held by --rate to a share of the QPS Versus had just
# before in the same round (--pace-factor), to see how much of the server's CPU per query
# follows the client's pace (a backend that waits for its next query sleeps and wakes per
# query)
TOOLS = ("sysbench", "versus", "sysbench-nops", "sysbench-uniform", "versus-special",
         "sysbench-paced")


def versus_cmd() -> list[str]:
    """This checkout's Versus (the interpreter running this bench, PYTHONPATH set below)."""
    return [sys.executable, "-m", "app.main"]


def run_sysbench(eng: Engine, db: str, rows: int, seconds: int, ps: bool,
                 uniform: bool = False, rate: int = 0) -> dict:
    cmd = [SYSBENCH, "oltp_point_select", *eng.sysbench_conn_args(db), "--tables=1",
           f"--table-size={rows}", "--threads=2", f"--time={seconds}", "--report-interval=0", "run"]
    if rate:
        cmd.append(f"--rate={rate}")
    if not ps:
        cmd.append("--db-ps-mode=disable")
    if uniform:
        cmd.append("--rand-type=uniform")
    r = run_with_rusage(cmd)
    if r.rc != 0:
        raise RuntimeError(f"sysbench failed ({r.rc}):\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    q, t = parse_sysbench(r.stdout)
    return {"queries": q, "qps": q / t, "user_s": r.user_s, "sys_s": r.sys_s, "wall_s": r.wall_s}


def _session_events(path: str) -> list[dict]:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [json.loads(b) for (b,) in c.execute("SELECT body FROM events ORDER BY run_id, seq")]
    finally:
        c.close()


def run_versus(eng: Engine, db: str, rows: int, seconds: int, home: str,
               distribution: str = "uniform") -> dict:
    out = os.path.join(home, f"{eng.key}-{len(os.listdir(home))}.versus")
    cmd = [*versus_cmd(), "run", "--target", eng.versus_target(db), "--workload", "point-query",
           "--duration", str(seconds), "--set", f"table-size={rows}", "--set", "clients=2",
           "--set", f"distribution={distribution}", "--out", out, "--json"]
    r = run_with_rusage(cmd, env={**os.environ, "VERSUS_HOME": home, "PYTHONPATH": str(ROOT)},
                        orphans=True)
    if r.rc != 0:
        raise RuntimeError(f"versus run failed ({r.rc}):\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    evs = _session_events(out)
    summ = next(e for e in evs if e["kind"] == "summary" and e.get("phase") == "measure")
    logs = [e["message"] for e in evs if e["kind"] == "log"]
    reused = any(m.startswith("reusing") for m in logs)
    loaded = any(m.startswith("loading") for m in logs)
    if loaded or not reused:
        print(f"  !! versus did not reuse the table: {logs}", file=sys.stderr)
    ops = summ["ops_total"]
    dc = summ["driver_cpu"]
    return {"queries": ops, "qps": summ["rate"], "user_s": dc["user_s"], "sys_s": dc["system_s"],
            "tree_user_s": r.user_s, "tree_sys_s": r.sys_s, "reused": reused and not loaded,
            "wall_s": r.wall_s,
            "server_qps": (summ.get("server") or {}).get("rate"),
            "reported_us_per_op": dc.get("us_per_op")}


def bench_engine(eng: Engine, args, home: str) -> list[dict]:
    results = []
    with eng.scratch_database("versus_pq") as db:
        print(f"[{eng.label}] database {db}: sysbench prepare {args.rows:,} rows ...", flush=True)
        dt = eng.sysbench_prepare(db, args.rows)
        print(f"[{eng.label}] prepared in {dt:.1f} s", flush=True)
        if args.warmup > 0:
            run_sysbench(eng, db, args.rows, args.warmup, ps=True)
        ncpu = os.cpu_count() or 1
        if "sysbench-paced" in args.tools and (
                "versus" not in args.tools
                or args.tools.index("versus") > args.tools.index("sysbench-paced")):
            raise SystemExit("--tools: sysbench-paced needs versus before it")
        pace = 0
        for rnd in range(1, args.rounds + 1):
            for tool in args.tools:
                waited = wait_for_quiet(args.quiet_wait) if args.quiet_wait > 0 else 0.0
                b0 = host_busy_seconds()
                with ServerCpuTracker(eng, db) as srv:
                    if tool.startswith("versus"):
                        r = run_versus(eng, db, args.rows, args.seconds, home,
                                       "special" if tool == "versus-special" else "uniform")
                        if tool == "versus":
                            pace = int(r["qps"] * args.pace_factor)
                    else:
                        r = run_sysbench(eng, db, args.rows, args.seconds,
                                         ps=(tool != "sysbench-nops"),
                                         uniform=tool in ("sysbench-uniform", "sysbench-paced"),
                                         rate=pace if tool == "sysbench-paced" else 0)
                busy = host_busy_seconds() - b0
                r["server_s"] = srv.seconds
                client_all = (r["tree_user_s"] + r["tree_sys_s"] if tool.startswith("versus")
                              else r["user_s"] + r["sys_s"])
                r["other_pct"] = max(0.0, busy - client_all - srv.seconds) * 100 / (
                    ncpu * r["wall_s"])
                r["quiet_wait_s"] = waited
                r.update(engine=eng.label, tool=tool, run=rnd)
                q = r["queries"]
                r["us_user"] = r["user_s"] * 1e6 / q
                r["us_sys"] = r["sys_s"] * 1e6 / q
                r["us_total"] = r["us_user"] + r["us_sys"]
                r["us_server"] = r["server_s"] * 1e6 / q
                if tool.startswith("versus"):
                    r["us_tree"] = (r["tree_user_s"] + r["tree_sys_s"]) * 1e6 / q
                results.append(r)
                print(f"[{eng.label}] {tool:13s} run {rnd}: {r['qps']:9,.0f} QPS  client "
                      f"{r['us_total']:5.2f} µs/q  server {r['us_server']:5.2f} µs/q  "
                      f"other {r['other_pct']:4.1f}%"
                      + (f"  tree {r['us_tree']:5.2f} µs/q  reused={r['reused']}"
                         if tool.startswith("versus") else ""), flush=True)
    return results


def report(results: list[dict]) -> None:
    rows = []
    for r in results:
        rows.append([r["engine"], r["tool"], r["run"], r["qps"], r["us_user"], r["us_sys"],
                     r["us_total"], r.get("us_tree"), r["us_server"],
                     r.get("server_qps"), f"{r['other_pct']:.1f}"])
    print()
    print("Per run (client CPU µs/query: Versus = virtual users only, as its summary; "
          "'tree' = whole `versus run` process tree)")
    print(table(["engine", "tool", "run", "QPS", "user µs/q", "sys µs/q", "client µs/q",
                 "tree µs/q", "server µs/q", "server QPS", "other %"], rows, "llr" + "r" * 8))

    print()
    print("Means over runs and ratios (x / sysbench with its default --db-ps-mode=auto)")
    out = []
    for eng in dict.fromkeys(r["engine"] for r in results):
        by = {t: [r for r in results if r["engine"] == eng and r["tool"] == t]
              for t in TOOLS}
        base = by["sysbench"]
        if not base:
            continue
        bq, bc, bs = (mean(r[k] for r in base) for k in ("qps", "us_total", "us_server"))
        for t, rs in by.items():
            if not rs:
                continue
            q, c, s = (mean(r[k] for r in rs) for k in ("qps", "us_total", "us_server"))
            tree = mean(r["us_tree"] for r in rs) if t.startswith("versus") else None
            out.append([eng, t, q, c, tree, s, f"{q / bq:.3f}", f"{c / bc:.3f}",
                        f"{tree / bc:.3f}" if tree else "-", f"{s / bs:.3f}"])
    print(table(["engine", "tool", "QPS", "client µs/q", "tree µs/q", "server µs/q",
                 "QPS ratio", "client CPU ratio", "tree CPU ratio", "server CPU ratio"],
                out, "ll" + "r" * 8))
    like = []
    # (label suffix, Versus tool, the sysbench run it is set against)
    for suffix, vt, st in (("", "versus", "sysbench-uniform"), (" paced", "versus",
                                                                "sysbench-paced"),
                           (" special", "versus-special", "sysbench")):
        for eng in dict.fromkeys(r["engine"] for r in results):
            v = [r for r in results if r["engine"] == eng and r["tool"] == vt]
            u = [r for r in results if r["engine"] == eng and r["tool"] == st]
            if v and u:
                m = {k: (mean(r.get(k) for r in v), mean(r.get(k) for r in u))
                     for k in ("qps", "us_total", "us_tree", "us_server")}
                like.append([eng + suffix] + [f"{a / b:.3f}" for a, b in
                                              (m["qps"], m["us_total"],
                                               (m["us_tree"][0], m["us_total"][1]),
                                               m["us_server"])])
    if like:
        print()
        print("Like for like: Versus / sysbench with the same id distribution "
              "(uniform: --rand-type=uniform; special: sysbench's default)")
        print(table(["engine", "QPS ratio", "client CPU ratio", "tree CPU ratio",
                     "server CPU ratio"], like))
    bad = [r for r in results if r["tool"].startswith("versus") and not r["reused"]]
    print()
    print("Versus reused the sysbench table in every run" if not bad else
          f"WARNING: Versus reloaded the table in {len(bad)} run(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="pg,mariadb")
    ap.add_argument("--seconds", type=int, default=20, help="per run (default 20)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=5,
                    help="seconds of unreported sysbench before the first round (default 5)")
    ap.add_argument("--tools", default="sysbench,versus,sysbench-uniform",
                    help="order within a round; any of " + ", ".join(TOOLS))
    ap.add_argument("--quiet-wait", type=float, default=15,
                    help="before each run, wait up to this many seconds for the machine to "
                         "be idle (other processes < 15%% of the cores; default 15)")
    ap.add_argument("--json", metavar="FILE", help="also write the per-run results here")
    ap.add_argument("--pace-factor", type=float, default=0.85,
                    help="sysbench-paced's --rate as a share of Versus's QPS just before "
                         "(default 0.85: near its own peak, sysbench's rate mode stops with "
                         "'the event queue is full')")
    args = ap.parse_args()
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    if any(t not in TOOLS for t in args.tools):
        ap.error(f"--tools: use {', '.join(TOOLS)}")
    run_engines(args, bench_engine, report)


if __name__ == "__main__":
    main()
