"""Versus transfers on this machine's PostgreSQL and MariaDB: transfers per second with 2, 4
and 8 clients, client CPU per transfer, and the driver's memory over a long run.

For each engine: a scratch database loaded once (`users` users, 2 accounts each), then
`versus run --workload transfers` with 2, 4 and 8 clients, one after another. Printed per
run: transfers/s (the mean over the measured period, client count) with its p99,
rejections and retries per second, the server's commits next to the client's transfers +
rejections, client CPU per transfer (getrusage of the clients, as Versus reports it), host
idle and steal, and the money check. The 8-client run lasts `--long` seconds (10 minutes by
default) and the driver's memory (agent + clients: sum of RSS, and of PSS which counts
shared pages once) is read at 1, 5 and 10 minutes into it: it must not grow.

    .venv/bin/python bench/transfers.py [--engines pg,mariadb] [--duration 60] [--long 600]
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import FollowedRun, parse_engines, table  # noqa: E402

MARKS_MIN = (1, 5, 10)


def run_one(eng, db: str, clients: int, seconds: int, args, home: str) -> dict:
    out = os.path.join(home, f"{eng.key}-{clients}.versus")
    cmd = [sys.executable, "-m", "app.main", "run", "--target", eng.versus_target(db),
           "--workload", "transfers", "--set", f"users={args.users}",
           "--set", f"clients={clients}", "--duration", str(seconds), "--out", out]
    run = FollowedRun(cmd, {**os.environ, "VERSUS_HOME": home, "PYTHONPATH": str(ROOT)},
                      [m for m in MARKS_MIN if m * 60 <= seconds], cwd=str(ROOT)).run()
    mem, cpu = run.mem, run.cpu
    c = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    evs = [json.loads(b) for (b,) in c.execute("SELECT body FROM events ORDER BY seq")]
    c.close()
    m = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
    res, dur = m["result"], m["duration_s"]
    row = {"clients": clients, "seconds": dur, "tps": res["transfers_per_s"],
           "p99": res["p99_ms"], "rej": res["rejections"] / dur, "retry": res["retries"] / dur,
           "server": res["server_commits"], "client": res["client_commits"],
           "cpu_us": res["client_cpu_us_per_transfer"],
           "money": "PASS" if m["check"]["ok"] else "FAIL", "mem": mem}
    if len(cpu) == 2:
        d = [b - a for a, b in zip(*cpu)]
        total = sum(d) or 1
        row["idle"] = 100.0 * d[3] / total
        row["steal"] = 100.0 * d[7] / total if len(d) > 7 else 0.0
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="pg,mariadb")
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--duration", type=int, default=60, help="seconds of the 2 and 4 client runs")
    ap.add_argument("--long", type=int, default=600, help="seconds of the 8-client run")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="versus-bench-transfers-")
    print(f"transfers: {args.users:,} users x 2 accounts; 2 and 4 clients for {args.duration} s, "
          f"8 clients for {args.long} s; load average {os.getloadavg()[0]:.1f} at start "
          f"(a shared 2-core machine)")
    for eng in parse_engines(args.engines):
        with eng.scratch_database("versus_bench_tf") as db:
            rows = [run_one(eng, db, n, args.duration if n < 8 else args.long, args, home)
                    for n in (2, 4, 8)]
        print(f"\n{eng.label}")
        print(table(["clients", "s", "transfers/s", "p99 ms", "rejections/s", "retries/s",
                     "server commits", "client commits", "client µs/transfer", "idle %",
                     "steal %", "money"],
                    [[r["clients"], f"{r['seconds']:.0f}", f"{r['tps']:,.0f}", r["p99"],
                      f"{r['rej']:.1f}", f"{r['retry']:.2f}", f"{r['server']:,}",
                      f"{r['client']:,}", r["cpu_us"], f"{r.get('idle', 0):.0f}",
                      f"{r.get('steal', 0):.0f}", r["money"]] for r in rows]))
        for r in rows:
            if r["mem"]:
                print(f"  driver memory, {r['clients']} clients: " + ", ".join(
                    f"{m} min RSS {rss / 1024:.0f} MB PSS {pss / 1024:.0f} MB"
                    for m, rss, pss in r["mem"]))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
