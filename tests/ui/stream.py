"""A realistic recorded event stream for UI tests and screenshots (the agent's format)."""
from __future__ import annotations

import math
import random

from workloads import events as ev_format


def recorded_run(measure_s: int = 60, prepare_s: int = 4, run_id: str = "20250101-120000-abc123",
                 clients: int = 4, seed: int = 7, stopped: bool = False) -> list[dict]:
    rnd = random.Random(seed)
    out: list[dict] = []

    def emit(t: float, kind: str, **fields) -> None:
        out.append({"v": ev_format.FORMAT_VERSION, "seq": len(out) + 1, "t": round(t, 3),
                    "kind": kind, **fields})

    params = {"tables": 1, "table-size": 100000, "clients": clients,
              "duration": measure_s, "warmup": 0, "rebuild": False}
    emit(0.0, "hello", agent_version="0.1.0", run_id=run_id, workload="point-query",
         params=params, target={"engine": "postgres", "address": "127.0.0.1", "port": 5433,
                                "database": "versus", "user": "postgres"},
         host={"hostname": "bench-1", "cores": 8, "kernel": "6.8.0"}, throughput_unit="QPS")
    emit(0.01, "phase", name="prepare", state="start")
    for i in range(1, prepare_s + 1):
        emit(i * 1.0, "progress", phase="prepare", done=i * 100000 // prepare_s,
             total=100000, unit="rows")
        emit(i * 1.0, "host", **host_fields(i - 1.0, i * 1.0, rnd, load=0.3))
    t0 = prepare_s + 0.05
    emit(t0, "phase", name="prepare", state="end")
    emit(t0, "log", level="info", message="tables ready: sbtest1 (100,000 rows)")
    emit(t0 + 0.01, "phase", name="measure", state="start")
    end = measure_s if not stopped else measure_s // 2
    total_ops = 0
    merged: dict[int, int] = {}
    for i in range(1, end + 1):
        a, b = t0 + i - 1, t0 + i
        rate = 21000 + 2500 * math.sin(i / 9.0) + rnd.gauss(0, 600)
        ops = int(rate)
        total_ops += ops
        p50 = 0.17 + rnd.random() * 0.02
        lat = {"p50": round(p50, 4), "p95": round(p50 * 2.1 + rnd.random() * 0.05, 4),
               "p99": round(p50 * 3.4 + rnd.random() * 0.2, 4), "max": 4.1}
        # A histogram consistent with the percentiles: 50 % / 45 % / 4 % / 1 %.
        hist = {}
        for value_ms, share in ((lat["p50"], 0.50), (lat["p95"], 0.45), (lat["p99"], 0.04),
                                (lat["max"], 0.01)):
            b_ = ev_format.bucket_of(int(value_ms * 1000))
            hist[b_] = hist.get(b_, 0) + max(1, int(ops * share))
        ev_format.merge_sparse(merged, hist.items())
        emit(b, "sample", phase="measure", interval=[a, b], ops={"point": ops},
             errors={"deadlock": 1} if i % 17 == 0 else {}, rate=round(rate, 1), unit="QPS",
             lat_ms={"point": lat, "all": lat},
             hist={"point": sorted([k, v] for k, v in hist.items())}, clients=clients)
        emit(b, "host", **host_fields(a, b, rnd, load=0.8))
        emit(b, "db", interval=[a, b], source="pg_stat_database",
             counters={"xact_commit": ops, "blks_hit": ops * 3})
    t_end = t0 + end + 0.02
    emit(t_end, "phase", name="measure", state="end")
    emit(t_end, "summary", phase="measure", duration_s=float(end), ops_total=total_ops,
         rate=round(total_ops / max(1, end), 1), unit="QPS",
         lat_ms={"all": ev_format.percentiles(merged)},
         hist={"point": sorted([k, v] for k, v in merged.items())},
         server={"source": "pg_stat_database", "counter": "xact_commit", "delta": total_ops,
                 "rate": round(total_ops / max(1, end), 1)})
    emit(t_end + 0.01, "end", status="stopped" if stopped else "ok",
         reason="stopped by the user" if stopped else "")
    return out


def host_fields(a: float, b: float, rnd: random.Random, load: float) -> dict:
    user = 100 * load * 0.62 + rnd.gauss(0, 2)
    system = 100 * load * 0.25 + rnd.gauss(0, 1)
    iowait = max(0.0, 1.5 + rnd.gauss(0, 0.5))
    idle = max(0.0, 100 - user - system - iowait)
    return {"interval": [a, b], "source": "/proc",
            "cpu": {"user": round(user, 2), "nice": 0.0, "system": round(system, 2),
                    "iowait": round(iowait, 2), "irq": 0.0, "softirq": 0.4, "steal": 0.0,
                    "idle": round(idle, 2)},
            "cs_per_s": 48000, "runq": 5,
            "mem": {"total_kb": 16_000_000, "available_kb": 9_000_000, "used_pct": 43.7},
            "disk": {"reads_per_s": 0, "writes_per_s": 35, "read_kb_per_s": 0,
                     "write_kb_per_s": 820},
            "net": {"rx_kb_per_s": 1.2, "tx_kb_per_s": 0.8},
            "driver_cpu": {"user_s": 0.4, "system_s": 0.1}}


class ReplayController:
    """Stands in for RunController where no database can run: replays a recorded stream
    through the same on_events callback, from the worker thread, in batches."""

    def __init__(self, request, catalog=None, on_events=None, on_status=None,
                 events=None, batch: int = 7, delay: float = 0.0):
        import threading
        self.request = request
        self.on_events, self.on_status = on_events, on_status
        self.events = events if events is not None else recorded_run()
        self.batch, self.delay = batch, delay
        self.run_id = None
        self._stop = threading.Event()

    def run(self):
        import time
        from app.remote.runner import RunOutcome
        self.run_id = self.events[0].get("run_id", "replay")
        if self.on_status:
            self.on_status("Connecting to the recorded stream")
        if self.on_status:
            self.on_status("Replaying a recorded stream")
        session = None
        if self.request.session_path is not None:     # record it, as the real one does
            from app.store.session import SessionFile
            session = SessionFile(self.request.session_path, readonly=False)
            session.add_run(self.run_id, self.request.workload, self.request.target,
                            self.request.host, dict(self.request.params))
        status = "ok"
        for i in range(0, len(self.events), self.batch):
            if self._stop.is_set():
                status = "stopped"
                break
            batch = self.events[i:i + self.batch]
            if session is not None:
                session.append_events(self.run_id, batch)
            self.on_events(self.run_id, batch)
            if self.delay:
                time.sleep(self.delay)
        if session is not None:
            session.finish_run(self.run_id, status)
            session.close()
        return RunOutcome(self.run_id, status, "", self.request.session_path)

    def stop(self):
        self._stop.set()


TPCC_TYPES = ("new-order", "payment", "order-status", "delivery", "stock-level")
TPCC_MIX = (0.45, 0.43, 0.04, 0.04, 0.04)
TPCC_P95 = (12.0, 11.0, 3.0, 13.0, 5.0)          # ms, roughly what PostgreSQL 15 gives


def recorded_tpcc_run(measure_s: int = 20, rampup_s: int = 5, vus: int = 2,
                      warehouses: int = 1, run_id: str = "20250101-130000-tpcc01",
                      seed: int = 11) -> list[dict]:
    """A TPROC-C stream in the agent's format (as recorded from PostgreSQL 15): samples in
    NOPM with per-type ops and latency, counters and per-VU totals; db events with
    pg_stat_database deltas and the monitor's own poll; the measure summary's result."""
    rnd = random.Random(seed)
    out: list[dict] = []

    def emit(t: float, kind: str, **fields) -> None:
        out.append({"v": ev_format.FORMAT_VERSION, "seq": len(out) + 1, "t": round(t, 3),
                    "kind": kind, **fields})

    params = {"warehouses": warehouses, "partition": False, "rebuild": False,
              "load-clients": 2, "vus": vus, "use-all-warehouses": True,
              "stored-procedures": True, "keying-thinking": False, "rampup": rampup_s,
              "duration": measure_s, "check-after": False}
    emit(0.0, "hello", agent_version="0.1.0", run_id=run_id, workload="tpcc", params=params,
         target={"engine": "postgres", "address": "127.0.0.1", "port": 5432,
                 "database": "versus", "user": "postgres"},
         host={"hostname": "bench-1", "cores": 8, "kernel": "6.8.0"}, throughput_unit="NOPM")
    emit(0.3, "log", level="info", message=f"reusing the TPROC-C schema of {warehouses} "
                                           "warehouse(s)")
    vu_info = [{"vu": i + 1, "home": str(i % warehouses + 1)} for i in range(vus)]
    t = 0.5
    for phase, seconds in (("rampup", rampup_s), ("measure", measure_s)):
        if seconds <= 0:
            continue
        emit(t, "phase", name=phase, state="start", vus=vu_info, planned_s=seconds)
        totals = [[0, 0] for _ in range(vus)]
        sums = {name: 0 for name in TPCC_TYPES}
        new_orders = commits = rollbacks = 0
        for i in range(1, seconds + 1):
            a, b = t + i - 1, t + i
            warm = min(1.0, 0.5 + i / 4) if phase == "rampup" else 1.0
            txns = int((300 + 40 * math.sin(i / 3.0) + rnd.gauss(0, 15)) * warm)
            ops = {name: max(1, int(txns * share + rnd.random()))
                   for name, share in zip(TPCC_TYPES, TPCC_MIX)}
            n = sum(ops.values())
            rb = int(ops["new-order"] * 0.01 + rnd.random())
            lat = {}
            for name, p95 in zip(TPCC_TYPES, TPCC_P95):
                p95 = round(p95 * (0.9 + rnd.random() * 0.2), 4)
                lat[name] = {"p50": round(p95 * 0.55, 4), "p95": p95,
                             "p99": round(p95 * 1.3, 4), "max": round(p95 * 1.6, 4)}
            lat["all"] = dict(lat["new-order"])
            for v in range(vus):
                share = n // vus + (1 if v < n % vus else 0)
                totals[v][0] += share
            for name in TPCC_TYPES:
                sums[name] += ops[name]
            new_orders += ops["new-order"] - rb
            commits += n - rb
            rollbacks += rb
            emit(b, "host", **host_fields(a, b, rnd, load=0.9))
            emit(b + 0.005, "db", interval=[a, b], source="pg_stat_database",
                 counters={"xact_commit": n - rb + 1, "xact_rollback": rb,
                           "tup_returned": n * 60, "blks_hit": n * 140}, own_xacts=1)
            last = i == seconds
            emit(b + 0.007, "sample", phase=phase, interval=[a, b],
                 rate=round((ops["new-order"] - rb) * 60.0, 2), unit="NOPM", clients=vus,
                 vus=[[o, e, "ended" if last else "running"] for o, e in totals],
                 ops=ops, errors={}, lat_ms=lat,
                 counters={"new_orders": ops["new-order"] - rb, "commits": n - rb,
                           "rollbacks": rb, "retries": 0})
        t_end = t + seconds + 0.1
        total = sum(sums.values())
        summary = {"phase": phase, "interval": [t, t + seconds], "duration_s": float(seconds),
                   "clients": vus, "ops_total": total,
                   "rate": round(new_orders * 60.0 / seconds, 2), "unit": "NOPM",
                   "errors_total": 0, "ops": sums, "errors": {},
                   "counters": {"new_orders": new_orders, "commits": commits,
                                "rollbacks": rollbacks, "retries": 0},
                   "server": {"source": "pg_stat_database",
                              "counter": "xact_commit + xact_rollback",
                              "delta_raw": total + seconds, "own_polls": seconds,
                              "delta": total, "rate": round(total / seconds, 2)}}
        if phase == "measure":
            summary["result"] = {
                "nopm": round(new_orders * 60.0 / seconds), "new_orders": new_orders,
                "tpm": round(total * 60.0 / seconds), "server_transactions": total,
                "client": {"new_orders": new_orders, "commits": commits,
                           "rollbacks": rollbacks, "retries": 0, "transactions": total},
                "duration_s": float(seconds), "vus": vus, "warehouses": warehouses}
        emit(t_end, "summary", **summary)
        emit(t_end, "phase", name=phase, state="end", duration_s=float(seconds))
        t = t_end + 0.02
    emit(t + 0.01, "end", status="ok", reason="")
    return out
