"""Generated session files for the comparison benchmarks (and nothing else).

A run looks like a TPROC-C run recorded by the agent: hello, setting, a short load phase,
rampup and measure phases, and every second one ``sample`` (five transaction types, each
with latency percentiles and a sparse histogram), one ``host`` and one ``db`` event, then a
``summary`` per phase and ``end``. Sizes and shapes follow real recordings, so parse costs
are realistic (a sample event is about 3 KB of JSON).

    .venv/bin/python -m bench.sessions OUT_DIR [--runs 4] [--hours 2]
"""
from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

from app.store.session import SessionFile
from workloads import events as evf

TYPES = {"new-order": 0.45, "payment": 0.43, "order-status": 0.04, "delivery": 0.04,
         "stock-level": 0.04}
BASE_US = {"new-order": 900, "payment": 500, "order-status": 400, "delivery": 2500,
           "stock-level": 1200}


def _hist(rng: random.Random, n: int, centre_us: float) -> list[list[int]]:
    """A lognormal-ish sparse histogram of n values around centre_us."""
    counts: dict[int, int] = {}
    if n <= 0:
        return []
    # draw at most 400 values and scale counts: cheap, same bucket spread as real data
    draws = min(n, 400)
    scale = n / draws
    for _ in range(draws):
        us = int(centre_us * math.exp(rng.gauss(0, 0.45)))
        b = evf.bucket_of(us)
        counts[b] = counts.get(b, 0) + 1
    out = [[b, max(1, round(c * scale))] for b, c in sorted(counts.items())]
    return out


def make_run(session: SessionFile, run_id: str, *, seconds: int, seed: int, speed: float = 1.0,
             engine: str = "postgres", version: str = "PostgreSQL 17.2", cores: int = 8,
             rampup: int = 60, load: int = 30, with_hist: bool = True) -> None:
    rng = random.Random(seed)
    seq = 0
    batch: list[dict] = []

    def emit(kind: str, t: float, **body) -> None:
        nonlocal seq
        seq += 1
        batch.append(evf.stamp(seq, t, kind, evf.body(kind, **body)))
        if len(batch) >= 2000:
            session.append_events(run_id, batch)
            batch.clear()

    session.add_run(run_id, "tprocc", f"{engine}://bench@10.0.0.2/tpcc", "bench-1",
                    {"warehouses": 100, "virtual-users": 16}, info={"throughput_unit": "NOPM"})
    emit("hello", 0.0, agent_version="0.1.0", run_id=run_id, workload="tprocc",
         params={"warehouses": 100, "virtual-users": 16},
         target={"engine": engine, "address": "10.0.0.2", "port": 5432, "database": "tpcc"},
         host={"hostname": "bench-1", "kernel": "6.1.0", "arch": "x86_64", "cores": cores},
         throughput_unit="NOPM")
    emit("setting", 0.2, server_version=version, source="server")
    t = 1.0
    phases = [("load", load), ("rampup", rampup), ("measure", seconds - load - rampup)]
    for name, length in phases:
        emit("phase", t, name=name, state="start")
        t0 = t
        ops_total = 0
        merged: dict[str, dict[int, int]] = {k: {} for k in TYPES}
        for i in range(length):
            a, b = t, t + 1.0
            wobble = 1.0 + 0.05 * math.sin(i / 40.0) + rng.gauss(0, 0.02)
            nopm = 0.0 if name == "load" else 60_000 * speed * wobble * (
                min(1.0, (i + 1) / 30) if name == "rampup" else 1.0)
            tx = int(nopm / 60 / 0.45)
            ops = {k: int(tx * w) for k, w in TYPES.items()} if tx else {}
            ops_total += sum(ops.values())
            hists = {}
            lat = {}
            if ops:
                for k, n in ops.items():
                    h = _hist(rng, n, BASE_US[k] / speed * wobble) if with_hist else []
                    if h:
                        hists[k] = h
                        evf.merge_sparse(merged[k], h)
                    lat[k] = evf.percentiles(h) if h else {"p50": None}
                lat["all"] = lat["new-order"]
            cpu_busy = 30.0 if name == "load" else 70.0 * wobble
            user = round(cpu_busy * 0.7, 2)
            system = round(cpu_busy * 0.25, 2)
            iowait = round(rng.uniform(0, 2), 2)
            emit("host", b, interval=[round(a, 4), round(b, 4)], source="/proc",
                 cpu={"user": user, "nice": 0.0, "system": system, "idle":
                      round(max(0.0, 100 - user - system - iowait - 1.0), 2),
                      "iowait": iowait, "irq": 0.0, "softirq": 1.0, "steal": 0.0},
                 cs_per_s=round(40_000 * wobble, 1), runq=9,
                 mem={"total_kb": 64_000_000, "available_kb": 40_000_000, "used_pct": 37.5},
                 disk={"reads_per_s": round(300 * wobble, 1), "writes_per_s": round(900 * wobble, 1),
                       "read_kb_per_s": round(2400 * wobble, 1),
                       "write_kb_per_s": round(12_000 * wobble, 1)},
                 net={"rx_kb_per_s": round(800 * wobble, 1), "tx_kb_per_s": round(1500 * wobble, 1)},
                 driver_cpu={"user_s": 0.2, "system_s": 0.1})
            emit("db", b + 0.003, interval=[round(a, 4), round(b, 4)], source="pg_stat_database",
                 counters={"xact_commit": tx, "xact_rollback": tx // 100, "blks_read": 300,
                           "blks_hit": 90_000, "tup_returned": tx * 40, "tup_fetched": tx * 30,
                           "tup_inserted": tx * 10, "tup_updated": tx * 12, "tup_deleted": tx})
            if name != "load":
                emit("sample", b + 0.004, phase=name, interval=[round(a, 4), round(b, 4)],
                     rate=round(nopm, 2), unit="NOPM", tpm=round(tx * 60 * 1.01, 1),
                     clients=16, ops=ops, errors={}, lat_ms=lat, hist=hists)
            else:
                emit("progress", b, phase="load", done=i + 1, total=length, unit="warehouses")
            t = b
        if name != "load":
            dur = t - t0
            all_h: dict[int, int] = {}
            for h in merged.values():
                for bk, c in h.items():
                    all_h[bk] = all_h.get(bk, 0) + c
            emit("summary", t + 0.01, phase=name, interval=[round(t0, 4), round(t, 4)],
                 duration_s=round(dur, 3), clients=16, ops_total=ops_total,
                 rate=round(ops_total * 0.45 / dur * 60, 2), unit="NOPM", errors_total=0,
                 ops={}, errors={}, lat_ms={"all": evf.percentiles(merged["new-order"])},
                 hist={k: [[bk, c] for bk, c in sorted(h.items())] for k, h in merged.items()},
                 tpm=round(ops_total / dur * 60 * 1.01, 1))
        emit("phase", t + 0.02, name=name, state="end", duration_s=round(t - t0, 3))
        t += 0.05
    emit("end", t, status="ok", reason="")
    session.append_events(run_id, batch)
    session.finish_run(run_id, "ok")


def make_sessions(out_dir: Path, runs: int = 4, hours: float = 2.0) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    specs = [("postgres", "PostgreSQL 16.4", 1.0), ("postgres", "PostgreSQL 17.2", 1.06),
             ("mariadb", "11.4.3-MariaDB", 0.92), ("mysql", "8.4.2 MySQL", 0.97)]
    for i in range(runs):
        engine, version, speed = specs[i % len(specs)]
        p = out_dir / f"run{i + 1}.versus"
        if p.exists():
            p.unlink()
        with SessionFile(p, readonly=False) as s:
            make_run(s, f"gen-{i + 1}", seconds=int(hours * 3600), seed=i, speed=speed,
                     engine=engine, version=version)
        paths.append(p)
    return paths


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--hours", type=float, default=2.0)
    a = ap.parse_args()
    for p in make_sessions(Path(a.out_dir), a.runs, a.hours):
        print(p, p.stat().st_size // 1024, "KB")
