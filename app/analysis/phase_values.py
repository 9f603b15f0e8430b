"""A run's figures for one phase, computed once per run and phase (Comparison caches them):
throughput, errors and latency from the phase's summary (else time-weighted means of its
samples), host means over the interval its operations were counted in, and the efficiency
figures per operation."""
from __future__ import annotations

import math
from typing import Any

from app.analysis import cpu
from app.analysis.metrics import METRICS
from app.analysis.rundata import RunData
from app.model.derive import kind_of
from app.model.runset import SERVER_EFFICIENCY
from app.store.session import SeriesTable


def phase_values(r: RunData, phase: str) -> dict[str, float | None]:
    span = r.phase(phase)
    out: dict[str, float | None] = dict.fromkeys(METRICS)
    if span is None:
        return out
    summ = r.summaries.get(phase)
    a, b = cpu.phase_interval(r, phase) or (span.t0, r.last_t)
    rows = [i for i, p in enumerate(r.sample.phase) if p == phase]
    # throughput, errors, latency: the summary, else time-weighted means of the samples
    ops = None
    if summ is not None:
        out["throughput"] = _num(summ.rate)
        spec = r.spec
        ops = summ.ops(spec.op_count if spec else None)
        out["errors"] = summ.error_rate
        lat = summ.latency
        for q in ("p50", "p95", "p99"):
            out[f"latency.{q}"] = lat.get(q)
        for rv in r.results(phase):
            out[rv.key] = rv.value
    if out["throughput"] is None:
        out["throughput"] = _weighted(r.sample, rows, "throughput")
    if ops is None and rows:
        ops = _weighted(r.sample, rows, "ops", total=True)
        if rows:
            a = min(x for x in (r.sample.t0[i] for i in rows) if x is not None) \
                if any(r.sample.t0[i] is not None for i in rows) else a
            b = max(x for x in (r.sample.t1[i] for i in rows) if x is not None) \
                if any(r.sample.t1[i] is not None for i in rows) else b
    if out["errors"] is None and rows:
        out["errors"] = _weighted(r.sample, rows, "errors")
    if out["latency.p50"] is None and rows:
        # no summary: the percentiles of each interval, weighted by its operations
        for q in ("p50", "p95", "p99"):
            out[f"latency.{q}"] = _weighted(r.sample, rows, f"latency.{q}", weight="ops")
    # host means and totals over [a, b]
    totals = _host_totals(r, a, b)
    covered = totals.pop("_seconds")
    if covered > 0:
        for k, m in METRICS.items():
            if m.per_phase == "mean" and kind_of(m.column) == "host":
                out[k] = totals[m.column] / covered if m.column in totals else None
    if ops and covered > 0:
        cores = r.cores
        busy = totals.get("busy_at")
        out["eff.cpu_us"] = (busy / 100.0 * cores * 1e6 / ops
                             if busy is not None and cores else None)
        for key, col in EFF_COLUMNS.items():
            out[key] = totals[col] / ops if col in totals else None
    if ops:
        out.update(_server_per_op(r, a, b, ops))
    return out


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x:
        return None
    return float(x)


def op_column(r: RunData) -> str:
    """The per-second series of the operations a run's hardware costs are divided by: its
    workload's op_count when that is a counter (micro: statements), else all operations."""
    spec = r.spec
    path = spec.op_count if spec else ""
    if path.startswith("counters."):
        name = f"counter.{path.split('.', 1)[1]}"
        if r.sample.column(name) is not None:
            return name
    return "ops"


def busy_at(h: dict[str, list[float]], i: int) -> float | None:
    idle = h.get("cpu.idle")
    if idle is None or idle[i] != idle[i]:
        u, s = h.get("cpu.user"), h.get("cpu.system")
        if u is None or s is None or u[i] != u[i] or s[i] != s[i]:
            return None
        return u[i] + s[i]
    busy = 100.0 - idle[i]
    for k in ("cpu.iowait", "cpu.steal"):
        col = h.get(k)
        if col is not None and col[i] == col[i]:
            busy -= col[i]
    return max(0.0, busy)


EFF_COLUMNS = {"eff.cs": "cs", "eff.reads": "disk.reads", "eff.read_kb": "disk.read_kb",
                "eff.write_kb": "disk.write_kb"}


def _server_per_op(r: RunData, a: float, b: float, ops: float) -> dict[str, float]:
    """The server's counters over [a, b] (per-second series × seconds of overlap; an interval
    without a value counted nothing) divided by ``ops``; only counters the run has."""
    idx, w = r.db.overlaps(a, b)
    if not idx:
        return {}
    totals: dict[str, float] = {}
    out: dict[str, float] = {}
    for key, _title, _unit, series in SERVER_EFFICIENCY:
        parts = []
        for name in series.split("+"):
            if name not in totals:
                col = r.db.column(name)
                if col is None:
                    continue
                totals[name] = math.fsum(col[i] * wi for i, wi in zip(idx, w)
                                         if col[i] == col[i])
            parts.append(totals[name])
        if parts:
            out[key] = math.fsum(parts) / ops
    return out


def _weighted(s: SeriesTable, rows: list[int], col: str, total: bool = False,
              weight: str = "time") -> float | None:
    """Mean of a per-second sample column over rows, weighted by interval length (or by
    operations); with ``total``, the integral (value × seconds) instead."""
    c = s.column(col)
    if c is None or not rows:
        return None
    num = den = 0.0
    ops = s.column("ops")
    for i in rows:
        x = c[i]
        if x != x:
            continue
        t0, t1 = s.t0[i], s.t1[i]
        dt = (t1 - t0) if t0 is not None and t1 is not None and t1 > t0 else 1.0
        if weight == "ops":
            w = ops[i] * dt if ops is not None and ops[i] == ops[i] else 0.0
        else:
            w = dt
        num += x * w
        den += w
    if total:
        return num if den > 0 else None
    return num / den if den > 0 else None


def _host_totals(r: RunData, a: float, b: float) -> dict[str, float]:
    """Integrals over [a, b] of each host column (value × seconds of overlap), plus
    ``_seconds`` covered and ``busy_at`` (busy % × seconds)."""
    h = r.hosts
    out: dict[str, float] = {"_seconds": 0.0}
    idx, w = h.overlaps(a, b)
    if not idx:
        return out
    out["_seconds"] = sum(w)
    cols = {m.column for m in METRICS.values() if m.column and kind_of(m.column) == "host"}
    cols |= set(EFF_COLUMNS.values())
    for c in cols:
        col = h.columns.get(c)
        if col is None:
            continue
        vals = [col[i] for i in idx]
        if all(x == x for x in vals):
            out[c] = math.fsum(map(float.__mul__, vals, w))
        else:
            pairs = [(x, wi) for x, wi in zip(vals, w) if x == x]
            if pairs:
                out[c] = math.fsum(x * wi for x, wi in pairs)
    busy = [busy_at(h.columns, i) for i in idx]
    if any(x is not None for x in busy):
        out["busy_at"] = math.fsum(x * wi for x, wi in zip(busy, w) if x is not None)
    return out
