"""How long a comparison of 4 runs × 2 h at 1 s samples takes to open, with all metrics.

    .venv/bin/python -m bench.compare_open [--dir /tmp/versus-bench] [--runs 4] [--hours 2]

Generates the session files once (bench/sessions.py, about 40 MB each; reused when present),
then times, best and median of several rounds: load_comparison (open the files read-only,
read facts, phases, summaries and the derived series), the per-phase summary and efficiency
tables, the list of charts with data, and the series of every chart (what the Compare view
draws first). Target: under one second.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from app.analysis.compare import load_comparison
from app.analysis.metrics import CHARTS
from app.model.runset import RunRef


def open_once(paths: list[Path]) -> dict[str, float]:
    t0 = time.perf_counter()
    comp = load_comparison([RunRef(str(p)) for p in paths], align="measure")
    t1 = time.perf_counter()
    tables = comp.tables(base=0)
    t2 = time.perf_counter()
    for name in comp.charts():
        for k in CHARTS[name].metrics:
            for i in range(len(comp)):
                comp.series(i, k)
    t3 = time.perf_counter()
    assert tables and len(comp) == len(paths)
    return {"load": t1 - t0, "tables": t2 - t1, "series": t3 - t2, "total": t3 - t0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/versus-bench")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    d = Path(a.dir)
    paths = [d / f"run{i + 1}.versus" for i in range(a.runs)]
    if not all(p.exists() for p in paths):
        from bench.sessions import make_sessions
        t = time.perf_counter()
        print(f"generating {a.runs} sessions of {a.hours} h in {d} …", flush=True)
        paths = make_sessions(d, a.runs, a.hours)
        print(f"  done in {time.perf_counter() - t:.0f} s")
    size = sum(p.stat().st_size for p in paths) / 1e6
    print(f"{a.runs} runs × {a.hours} h, {size:.0f} MB of session files; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    open_once(paths)                       # warm the page cache: a user reopening files
    rounds = [open_once(paths) for _ in range(a.rounds)]
    for key in ("load", "tables", "series", "total"):
        xs = [r[key] * 1000 for r in rounds]
        print(f"  {key:<7} best {min(xs):7.1f} ms   median {statistics.median(xs):7.1f} ms")
    best = min(r["total"] for r in rounds)
    print(f"open + compute: {best * 1000:.0f} ms best "
          f"({'under' if best < 1 else 'OVER'} the 1 s target)")


if __name__ == "__main__":
    main()
