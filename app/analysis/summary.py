"""Per-phase summaries of a recorded run, computed from its events.

Throughput comes from the agent's phase summary (client count: operations / phase time),
latency percentiles from the merged histograms of the phase, CPU from the /proc samples
whose interval lies in the phase. Each figure carries its source.
"""
from __future__ import annotations

from typing import Any, Iterable

from workloads import events as ev_format

CPU_KEYS = ("user", "system", "iowait", "idle")


def phase_spans(evs: Iterable[dict]) -> list[tuple[str, float, float | None]]:
    spans: list[list] = []
    for e in evs:
        if e["kind"] == "phase":
            if e.get("state") == "start":
                spans.append([e["name"], e["t"], None])
            elif e.get("state") == "end":
                for s in reversed(spans):
                    if s[0] == e["name"] and s[2] is None:
                        s[2] = e["t"]
                        break
    return [tuple(s) for s in spans]


def summarize_run(evs: list[dict[str, Any]]) -> dict[str, Any]:
    last_t = evs[-1]["t"] if evs else 0.0
    out_phases = []
    summaries = {e["phase"]: e for e in evs if e["kind"] == "summary"}
    unit = next((e.get("throughput_unit") for e in evs if e["kind"] == "hello"), "ops/s")
    for name, t0, t1 in phase_spans(evs):
        t1 = last_t if t1 is None else t1
        samples = [e for e in evs if e["kind"] == "sample" and e.get("phase") == name]
        hosts = [e for e in evs if e["kind"] == "host"
                 and t0 <= (e["interval"][0] + e["interval"][1]) / 2 <= t1]
        summ = summaries.get(name)
        if summ:
            duration = summ["duration_s"]
            mean = summ["rate"]
            merged: dict[int, int] = {}
            for h in summ.get("hist", {}).values():
                ev_format.merge_sparse(merged, h)
        else:
            duration = round(t1 - t0, 3)
            total = sum(sum(s["ops"].values()) for s in samples)
            span = sum(s["interval"][1] - s["interval"][0] for s in samples)
            mean = round(total / span, 2) if span > 0 else None
            merged = {}
            for s in samples:
                for h in s.get("hist", {}).values():
                    ev_format.merge_sparse(merged, h)
        lat = ev_format.percentiles(merged) if (samples or summ) else \
            {"p50": None, "p95": None, "p99": None, "max": None}
        cpu = {k: (round(sum(h["cpu"].get(k, 0.0) for h in hosts) / len(hosts), 2)
                   if hosts else None) for k in CPU_KEYS}
        phase = {"name": name, "duration_s": duration, "samples": len(samples),
                 "host_samples": len(hosts),
                 "throughput_mean": mean if (samples or summ) else None,
                 "throughput_unit": (summ or {}).get("unit") or unit,
                 "throughput_source": "client count" if (samples or summ) else None,
                 "latency_ms": {k: lat.get(k) for k in ("p50", "p95", "p99", "max")},
                 "cpu": cpu, "cpu_source": "/proc/stat, mean of 1 s intervals"}
        if summ:
            phase["ops_total"] = summ.get("ops_total")
            phase["errors_total"] = summ.get("errors_total", 0)
            if summ.get("server"):
                srv = summ["server"]
                phase["server"] = {"source": srv.get("source"), "counter": srv.get("counter"),
                                   "delta": srv.get("delta"), "rate": srv.get("rate")}
            if summ.get("driver_cpu"):
                phase["driver_cpu_us_per_op"] = summ["driver_cpu"].get("us_per_op")
            if summ.get("result"):
                phase["result"] = summ["result"]
        out_phases.append(phase)
    end = next((e for e in reversed(evs) if e["kind"] == "end"), None)
    errors = [e["message"] for e in evs if e["kind"] == "error"]
    return {"phases": out_phases, "status": end.get("status") if end else "incomplete",
            "reason": (end or {}).get("reason", ""), "errors": errors[:20]}

