"""The insert benchmark's load step (l.i0) on its bulk path, next to a plain multi-row INSERT
loop on the same server in the same minute.

For each engine, in a scratch database, rounds alternate (so both see the same machine):
`versus run --workload insert-benchmark --set steps=l.i0` (COPY on PostgreSQL, LOAD DATA
LOCAL INFILE on MariaDB, `load-batch` rows per statement), and the same rows (the workload's
own row maker) sent by `clients` processes as `INSERT ... VALUES (...),(...)` statements of
`load-batch` rows, and of 100 rows as iibench.py's l.i0 does, each statement autocommitted.
Printed: rows/s per round (the workload's from its l.i0 summary; the loop's from the first
statement to the last), the medians and the ratio bulk / loop, which must not be below 1.

    .venv/bin/python bench/ibench.py [--engines pg,mariadb] [--rows 200000] [--clients 2]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from _common import MY, PG, parse_engines  # noqa: E402
from workloads.insert_benchmark.load import COLUMNS, RowMaker, schema_statements  # noqa: E402


def versus_l_i0(eng, db: str, args, home: str) -> float:
    out = os.path.join(home, f"{eng.key}-{time.time_ns()}.versus")
    cmd = [sys.executable, "-m", "app.main", "run", "--target", eng.versus_target(db),
           "--workload", "insert-benchmark", "--set", "steps=l.i0",
           "--set", f"clients={args.clients}", "--set", f"load-rows={args.rows}",
           "--set", f"load-batch={args.batch}", "--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT),
                       env={**os.environ, "VERSUS_HOME": home, "PYTHONPATH": str(ROOT)})
    if r.returncode != 0:
        raise RuntimeError(f"versus run failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    c = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    evs = [json.loads(b) for (b,) in c.execute("SELECT body FROM events ORDER BY seq")]
    c.close()
    return next(e["rate"] for e in evs if e["kind"] == "summary" and e["phase"] == "l.i0")


def _connect(key: str, db: str):
    if key == "pg":
        import psycopg
        return psycopg.connect(dbname=db, autocommit=True, **PG)
    import MySQLdb
    c = MySQLdb.connect(host=MY["host"], port=MY["port"], user=MY["user"],
                        password=MY["password"], database=db)
    c.autocommit(True)
    return c


def _loop_client(key: str, db: str, table: str, rows: int, batch: int, go, out) -> None:
    conn = _connect(key, db)
    cur = conn.cursor()
    maker = RowMaker(random.Random(os.getpid()))
    go.wait()
    t0 = time.monotonic()
    left = rows
    while left > 0:
        n = min(batch, left)
        cur.execute(f"INSERT INTO {table} ({COLUMNS}) VALUES {maker.values(n)}")
        left -= n
    out.put((t0, time.monotonic()))
    conn.close()


def insert_loop(eng, db: str, args, batch: int) -> float:
    dialect = "postgres" if eng.key == "pg" else "mysql"
    conn = _connect(eng.key, db)
    tables = [f"loop{i + 1}" for i in range(args.clients)]
    for t in tables:
        conn.cursor().execute(f"DROP TABLE IF EXISTS {t}")
        conn.cursor().execute(schema_statements(dialect, t)[0])
    conn.close()
    ctx = mp.get_context("fork")
    go, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_loop_client, args=(eng.key, db, t, args.rows, batch, go, out))
             for t in tables]
    for p in procs:
        p.start()
    time.sleep(0.5)                       # connected
    go.set()
    spans = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    start, end = min(s for s, _ in spans), max(e for _, e in spans)
    return args.rows * args.clients / (end - start)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="pg,mariadb")
    ap.add_argument("--rows", type=int, default=200_000, help="rows per client")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1000, help="rows per bulk statement")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="versus-bench-ibench-")
    print(f"l.i0: {args.clients} clients x {args.rows:,} rows, {args.batch} rows per "
          f"statement; {args.rounds} alternating rounds per engine; host load average "
          f"{os.getloadavg()[0]:.1f} at start (shared machine)")
    for eng in parse_engines(args.engines):
        with eng.scratch_database("versus_bench_ib") as db:
            res: dict[str, list[float]] = {"bulk": [], f"loop{args.batch}": [], "loop100": []}
            for _ in range(args.rounds):
                res["bulk"].append(versus_l_i0(eng, db, args, home))
                res[f"loop{args.batch}"].append(insert_loop(eng, db, args, args.batch))
                res["loop100"].append(insert_loop(eng, db, args, 100))
            print(f"\n{eng.label}")
            med = {k: statistics.median(v) for k, v in res.items()}
            for k, v in res.items():
                what = {"bulk": f"versus l.i0 ({'COPY' if eng.key == 'pg' else 'LOAD DATA'})",
                        f"loop{args.batch}": f"INSERT loop, {args.batch} rows/statement",
                        "loop100": "INSERT loop, 100 rows/statement (iibench.py)"}[k]
                print(f"  {what:<44} median {med[k]:>10,.0f} rows/s   rounds: "
                      + ", ".join(f"{x:,.0f}" for x in v))
            for k in res:
                if k != "bulk":
                    print(f"  bulk / {k}: {med['bulk'] / med[k]:.2f}")
    print(f"\nhost load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
