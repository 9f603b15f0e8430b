"""Versus micro against sysbench 1.0 (Debian's), test by test, alternating in the same minute.

For every test sysbench 1.0's bundled scripts can run (point select; the range and
aggregation selects of oltp_read_only; update index and non-index, update-one; delete;
insert; read-only, read-write and write-only), on the machine's PostgreSQL and MariaDB: a
scratch database, `sysbench oltp_point_select prepare` of one table, then per test sysbench
(--rand-type=uniform, the published harness's distribution) and `versus run --workload micro
--set tests=<test>` (uniform, no warm-up, no pre-reads) for the same seconds with 2
clients, alternating for --rounds rounds (sysbench first in odd rounds, Versus first in
even ones). Before each tool's delete and insert the table is
prepared afresh, so both start from the same rows; Versus reuses sysbench's table every
time (it says so, else the run is flagged).

Per test: QPS of each (statements per second, BEGIN and COMMIT included, as sysbench counts
queries), their ratio, and client CPU per statement: sysbench's from os.wait4 of its
process; Versus's from its summary (getrusage of the virtual users, what the workload costs
per statement) and from the whole `versus run` process tree (CLI, agent, samplers, virtual
users: adds a fixed cost per second). Versus runs with --no-perf, as sysbench attaches no
perf stat to the server; --perf-cost adds a run with it (Versus's default) and prints its
cost in QPS. Versus runs its compiled client loop where the host can build it (the run
says which); --python-loop adds a run with client-loop=python, the loop of a host without
a C compiler, with its ratios to sysbench. Server CPU per statement: the server threads or
backends serving the scratch database, from /proc (bench/_common.ServerCpuTracker). "other
%" is the rest of the machine's busy CPU during the run; the machine is shared, so read the
ratios with it.

    .venv/bin/python bench/micro.py --engines pg,mariadb --seconds 15 --rows 1000000
    .venv/bin/python bench/micro.py --suite-seconds 10      # also time the whole suite
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from _common import (run_engines, SYSBENCH, Engine, ServerCpuTracker, host_busy_seconds, mean, parse_sysbench, run_with_rusage,
                     table)
from point_query import ROOT, versus_cmd  # noqa: E402

RANGES = ["--simple_ranges=0", "--sum_ranges=0", "--order_ranges=0", "--distinct_ranges=0"]


def _only(kind: str) -> list[str]:
    return ["--range_size=1000"] + [a for a in RANGES if not a.startswith(f"--{kind}_")]


# (Versus test, sysbench 1.0 script, its options): the same SQL and statements per event
TESTS = [
    ("point-query", "oltp_point_select", []),
    ("read-only_range=10", "oltp_read_only", ["--range_size=10"]),
    ("read-only_range=100", "oltp_read_only", ["--range_size=100"]),
    ("read-only_range=10000", "oltp_read_only", ["--range_size=10000"]),
    ("read-only-distinct", "oltp_read_only", _only("distinct")),
    ("read-only-order", "oltp_read_only", _only("order")),
    ("read-only-simple", "oltp_read_only", _only("simple")),
    ("read-only-sum", "oltp_read_only", _only("sum")),
    ("update-index", "oltp_update_index", []),
    ("update-nonindex", "oltp_update_non_index", []),
    ("update-one", "oltp_update_non_index", ["--table_size=1"]),
    ("write-only", "oltp_write_only", []),
    ("read-write_range=10", "oltp_read_write", ["--range_size=10"]),
    ("read-write_range=100", "oltp_read_write", ["--range_size=100"]),
    ("delete", "oltp_delete", []),
    ("insert", "oltp_insert", []),
]


def run_sysbench(eng: Engine, db: str, script: str, opts: list[str], rows: int,
                 seconds: int) -> dict:
    cmd = [SYSBENCH, script, *eng.sysbench_conn_args(db), "--tables=1", f"--table-size={rows}",
           "--threads=2", f"--time={seconds}", "--rand-type=uniform", "--report-interval=0",
           *opts, "run"]
    # an option given twice (table_size for update-one): sysbench takes the last
    r = run_with_rusage(cmd)
    if r.rc != 0:
        raise RuntimeError(f"sysbench failed ({r.rc}):\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    q, t = parse_sysbench(r.stdout)
    return {"statements": q, "qps": q / t, "cpu_s": r.user_s + r.sys_s, "wall_s": r.wall_s}


def _events(path: str) -> list[dict]:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [json.loads(b) for (b,) in c.execute("SELECT body FROM events ORDER BY seq")]
    finally:
        c.close()


def run_versus(eng: Engine, db: str, test: str, rows: int, seconds: int, home: str,
               extra: tuple[str, ...] = (), perf: bool = False) -> dict:
    out = os.path.join(home, f"{eng.key}-{len(os.listdir(home))}.versus")
    sets = [f"tests={test}", f"table-size={rows}", "clients=2", "warmup=0", "pre-reads=false",
            f"read-seconds={seconds}", f"write-seconds={seconds}", *extra]
    cmd = [*versus_cmd(), "run", "--target", eng.versus_target(db), "--workload", "micro",
           "--out", out]
    if not perf:
        cmd.append("--no-perf")      # sysbench has no perf stat attached to the server
    for s in sets:
        cmd += ["--set", s]
    r = run_with_rusage(cmd, env={**os.environ, "VERSUS_HOME": home, "PYTHONPATH": str(ROOT)},
                        orphans=True)
    if r.rc != 0:
        raise RuntimeError(f"versus run failed ({r.rc}):\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    evs = _events(out)
    summ = [e for e in evs if e["kind"] == "summary" and e.get("unit") != "rows/s"]
    logs = [e["message"] for e in evs if e["kind"] == "log"]
    stmts = sum(s["counters"]["statements"] for s in summ)
    dur = sum(s["duration_s"] for s in summ)
    vu = sum(s["driver_cpu"]["user_s"] + s["driver_cpu"]["system_s"] for s in summ)
    return {"statements": stmts, "qps": stmts / dur if dur else 0.0, "cpu_s": vu,
            "tree_cpu_s": r.user_s + r.sys_s, "wall_s": r.wall_s,
            "reused": any(m.startswith("reusing") for m in logs),
            "client": (summ[0].get("sql_client") or {}).get("driver") if summ else None,
            "loop": (summ[0].get("sql_client") or {}).get("loop") if summ else None}


def _fresh_table(eng: Engine, db: str, rows: int) -> None:
    eng._admin(f"DROP DATABASE {db}" + (" WITH (FORCE)" if eng.key == "pg" else ""))
    eng._admin(f"CREATE DATABASE {db}")
    eng.sysbench_prepare(db, rows)


def bench_engine(eng: Engine, args, home: str) -> list[dict]:
    out = []
    ncpu = os.cpu_count() or 1
    with eng.scratch_database("versus_micro") as db:
        print(f"[{eng.label}] {db}: sysbench prepare {args.rows:,} rows", flush=True)
        eng.sysbench_prepare(db, args.rows)
        for test, script, opts in TESTS:
            if args.tests and test not in args.tests:
                continue
            # delete and insert change the rows: each tool starts on a table sysbench
            # prepared afresh (a delete of an id already deleted writes no WAL and waits for
            # no flush: the tool that ran second would find its deletes cheaper)
            changes = test in ("delete", "insert")
            for rnd in range(1, args.rounds + 1):
                # ABBA over rounds: the second tool runs on the table the first one churned
                tools = ("versus", "sysbench") if changes or rnd % 2 == 0 else ("sysbench",
                                                                                 "versus")
                if args.perf_cost and not changes:
                    tools += ("versus+perf",)
                if args.python_loop:
                    tools += ("versus-py",)
                for tool in tools:
                    if changes:
                        _fresh_table(eng, db, args.rows)
                    b0 = host_busy_seconds()
                    with ServerCpuTracker(eng, db) as srv:
                        if tool == "sysbench":
                            r = run_sysbench(eng, db, script, opts, args.rows, args.seconds)
                        else:
                            r = run_versus(eng, db, test, args.rows, args.seconds, home,
                                           ("client-loop=python",) if tool == "versus-py"
                                           else (), perf=tool == "versus+perf")
                    busy = host_busy_seconds() - b0
                    client = r.get("tree_cpu_s", r["cpu_s"])
                    r.update(engine=eng.label, test=test, tool=tool, round=rnd,
                             server_s=srv.seconds,
                             other_pct=max(0.0, busy - client - srv.seconds) * 100
                             / (ncpu * r["wall_s"]))
                    n = r["statements"] or 1
                    r["us_client"] = r["cpu_s"] * 1e6 / n
                    r["us_server"] = r["server_s"] * 1e6 / n
                    if tool != "sysbench":
                        r["us_tree"] = r["tree_cpu_s"] * 1e6 / n
                    out.append(r)
                    flag = "" if tool == "sysbench" or r["reused"] else "  !! table reloaded"
                    print(f"[{eng.label}] {test:22s} {tool:9s} r{rnd}: {r['qps']:9,.0f} QPS  "
                          f"client {r['us_client']:6.1f} µs/stmt  server {r['us_server']:6.1f}"
                          f" µs/stmt  other {r['other_pct']:4.1f}%{flag}", flush=True)
        if args.suite_seconds:
            t = time.monotonic()
            _fresh_table(eng, db, args.rows)
            r = run_versus(eng, db, "all", args.rows, args.suite_seconds, home,
                           ("pre-reads=true",))
            print(f"[{eng.label}] the whole suite at {args.suite_seconds} s per test: "
                  f"{r['wall_s']:.0f} s wall ({time.monotonic() - t:.0f} s with the prepare)",
                  flush=True)
            out.append({"engine": eng.label, "test": "(whole suite)", "tool": "versus",
                        "wall_s": r["wall_s"], "seconds_per_test": args.suite_seconds})
    return out


def report(results: list[dict]) -> None:
    rows = []
    for eng in dict.fromkeys(r["engine"] for r in results):
        for test, _, _ in TESTS:
            s = [r for r in results if r["engine"] == eng and r["test"] == test
                 and r["tool"] == "sysbench"]
            v = [r for r in results if r["engine"] == eng and r["test"] == test
                 and r["tool"] == "versus"]
            if not s or not v:
                continue
            sq, vq = mean(r["qps"] for r in s), mean(r["qps"] for r in v)
            sc, vc = mean(r["us_client"] for r in s), mean(r["us_client"] for r in v)
            vt = mean(r["us_tree"] for r in v)
            ss, vs = mean(r["us_server"] for r in s), mean(r["us_server"] for r in v)
            other = mean(r["other_pct"] for r in s + v)
            p = [r for r in results if r["engine"] == eng and r["test"] == test
                 and r["tool"] == "versus+perf"]
            cost = f"{(1 - mean(r['qps'] for r in p) / vq) * 100:.1f}" if p and vq else "-"
            py = [r for r in results if r["engine"] == eng and r["test"] == test
                  and r["tool"] == "versus-py"]
            py_q = f"{mean(r['qps'] for r in py) / sq:.2f}" if py else "-"
            py_c = f"{mean(r['us_client'] for r in py) / sc:.2f}" if py else "-"
            rows.append([eng, test, sq, vq, f"{vq / sq:.2f}", sc, vc, f"{vc / sc:.2f}",
                         f"{vt / sc:.2f}", f"{vs / ss:.2f}" if ss else "-", f"{other:.0f}",
                         cost, py_q, py_c])
    print()
    print("Means over rounds; ratios Versus / sysbench (client: the virtual users; tree: the "
          "whole versus run)")
    print(table(["engine", "test", "sysbench QPS", "Versus QPS", "QPS ratio",
                 "sysbench µs/stmt", "Versus µs/stmt", "client CPU ratio", "tree ratio",
                 "server CPU ratio", "other %", "perf stat QPS cost %",
                 "Python loop QPS ratio", "Python loop client CPU ratio"], rows,
                "ll" + "r" * 12))
    for r in results:
        if r["test"] == "(whole suite)":
            print(f"{r['engine']}: the whole suite (54 tests) at {r['seconds_per_test']} s per "
                  f"test took {r['wall_s']:.0f} s")
    bad = [r for r in results if r["tool"] == "versus" and "reused" in r and not r["reused"]]
    if bad:
        print(f"WARNING: Versus reloaded the table in {len(bad)} run(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="pg,mariadb")
    ap.add_argument("--seconds", type=int, default=15, help="per test and tool (default 15)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tests", default="", help="comma-separated subset of the tests")
    ap.add_argument("--suite-seconds", type=int, default=0,
                    help="also time the whole suite (all tests, pre-reads) at this many "
                         "seconds per test")
    ap.add_argument("--python-loop", action="store_true",
                    help="also run Versus with client-loop=python in each round (the loop a "
                         "host without a C compiler runs), for its ratios to sysbench")
    ap.add_argument("--perf-cost", action="store_true",
                    help="also run Versus with perf stat on the server (its default) and "
                         "print what that costs in QPS")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    args.tests = [t.strip() for t in args.tests.split(",") if t.strip()]
    run_engines(args, bench_engine, report)


if __name__ == "__main__":
    main()
