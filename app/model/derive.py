"""The one place where events become numbers.

``interval_values(ev)`` turns one event into named per-interval values; the live charts
(``SeriesStore``), the session file's derived series, ``show``, ``compare`` and every export
read these names, so a live view and the same run reopened draw the same points.

Each value belongs at ``point_time(ev)``: the end of the event's interval (run clock), or its
time when it has none. Names, by event kind:

- ``sample`` (the client's count per interval): ``throughput`` (``rate``, in the phase's
  unit), ``ops`` (all operations per second), ``errors`` (per second),
  ``latency.p50|p95|p99|max`` (ms, all types), ``clients``; when a sample has two or more
  transaction types, ``ops.<type>`` (per second) and ``latency.<type>.p50|p95|p99`` (ms);
  per workload counter ``counter.<name>`` (per second); per timing (a timed part that is
  not an operation of its own: a round trip inside a transfer, a background write beside
  queries) ``timing.<name>`` (per second) and ``latency.<name>.p50|p95|p99|max`` (ms).
- ``db`` (the server's counters per interval): ``server.tps`` and ``server.tpm`` (commits +
  rollbacks, minus the monitor's own transactions), ``db.<counter>`` (per second, non-zero ones),
  ``db.<gauge>`` (a level at the interval's end: ``db.Threads_running``, ``db.numbackends``,
  ``db.wait.<type>.<event>`` sessions waiting on an event).
- ``host`` (/proc on the benchmark host): ``cpu.user|system|iowait|idle|steal|nice|irq|
  softirq`` (% of all cores), ``cs`` and ``runq``, ``mem.used_pct``, ``disk.reads|writes``
  (/s), ``disk.read_kb|write_kb`` (KB/s), ``net.rx_kb|tx_kb`` (KB/s), ``driver.cpu`` (% of
  one core used by the driver's processes); ``cpu.group.<group>`` (% of all cores used by a
  process group: ``server.fg``, ``server.bg.<role>``, ``driver``, ``monitor``, ``other``);
  ``client.cores`` (cores the driver used), ``client.vu_wait`` and ``client.server_wait`` (%
  of the time virtual users / the server's connections waited for a CPU), ``client.limited``
  (1 when the client limited throughput in that interval).
- ``progress`` (loads): ``load.done`` and ``load.fraction``.

Plain functions of one event, stdlib only: no state, so replaying a stream from any point
gives the same numbers.
"""
from __future__ import annotations

import math
from typing import Any

# Server counters whose sum is the server's transactions (commits + rollbacks), by source.
TXN_COUNTERS: dict[str, tuple[str, ...]] = {
    "pg_stat_database": ("xact_commit", "xact_rollback"),
    "SHOW GLOBAL STATUS": ("Com_commit", "Com_rollback"),
}
LATENCY_KEYS = ("p50", "p95", "p99")
MAX_TYPES = 16              # transaction types that get series of their own
_HOST_PLAIN = {"cs_per_s": "cs", "runq": "runq"}
_HOST_GROUPS = {"disk": {"reads_per_s": "disk.reads", "writes_per_s": "disk.writes",
                         "read_kb_per_s": "disk.read_kb", "write_kb_per_s": "disk.write_kb"},
                "net": {"rx_kb_per_s": "net.rx_kb", "tx_kb_per_s": "net.tx_kb"},
                "mem": {"used_pct": "mem.used_pct"}}
# Which event kind each fixed name comes from (dynamic names: see kind_of).
KINDS = {
    **{k: "sample" for k in ("throughput", "ops", "errors", "clients", "latency.p50",
                             "latency.p95", "latency.p99", "latency.max")},
    **{k: "db" for k in ("server.tps", "server.tpm")},
    **{k: "progress" for k in ("load.done", "load.fraction")},
}


def kind_of(name: str) -> str:
    """The event kind a series name is derived from."""
    if name in KINDS:
        return KINDS[name]
    head = name.split(".", 1)[0]
    if head in ("ops", "latency", "counter", "timing"):
        return "sample"
    if head in ("db", "server"):
        return "db"
    if head == "client":
        return "host"
    return "host"


def num(x: Any) -> float | None:
    """A finite number as float; None for anything else (bools, strings, NaN)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def interval(ev: dict[str, Any]) -> tuple[float | None, float | None]:
    iv = ev.get("interval")
    if isinstance(iv, (list, tuple)) and len(iv) == 2:
        return num(iv[0]), num(iv[1])
    return None, None


def interval_seconds(ev: dict[str, Any]) -> float:
    a, b = interval(ev)
    return b - a if a is not None and b is not None and b > a else 0.0


def point_time(ev: dict[str, Any]) -> float:
    end = interval(ev)[1]
    if end is not None:
        return end
    return num(ev.get("t")) or 0.0


def _per_s(n: float, dt: float) -> float:
    return n / dt if dt > 0 else n


def interval_values(ev: dict[str, Any]) -> dict[str, float]:
    """Every per-interval number of one event, by series name (empty for other kinds)."""
    kind = ev.get("kind")
    if kind == "sample":
        return _sample(ev)
    if kind == "host":
        return _host(ev)
    if kind == "db":
        return _db(ev)
    if kind == "progress":
        done, total = num(ev.get("done")), num(ev.get("total"))
        out = {}
        if done is not None:
            out["load.done"] = done
            if total:
                out["load.fraction"] = min(1.0, done / total)
        return out
    return {}


def _sample(ev: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    dt = interval_seconds(ev)
    rate = num(ev.get("rate"))
    if rate is not None:
        out["throughput"] = rate
    clients = num(ev.get("clients"))
    if clients is not None:
        out["clients"] = clients
    ops = ev.get("ops") if isinstance(ev.get("ops"), dict) else {}
    op_counts = {str(k): v for k, v in ((k, num(v)) for k, v in ops.items()) if v is not None}
    if ops:
        out["ops"] = _per_s(sum(op_counts.values()), dt)
    errors = ev.get("errors")
    n_err = (sum(v for v in map(num, errors.values()) if v is not None)
             if isinstance(errors, dict) else num(errors) or 0.0)
    out["errors"] = _per_s(n_err, dt)
    lat_ms = ev.get("lat_ms") if isinstance(ev.get("lat_ms"), dict) else {}
    lat = lat_ms.get("all") if isinstance(lat_ms.get("all"), dict) else {}
    for q in (*LATENCY_KEYS, "max"):
        v = num(lat.get(q))
        if v is not None:            # an interval without operations has no latency
            out[f"latency.{q}"] = v
    types = list(dict.fromkeys(k for k in (*op_counts, *lat_ms) if k != "all"))
    if len(types) >= 2:
        for name in types[:MAX_TYPES]:
            if name in op_counts:
                out[f"ops.{name}"] = _per_s(op_counts[name], dt)
            tl = lat_ms.get(name)
            if isinstance(tl, dict):
                for q in LATENCY_KEYS:
                    v = num(tl.get(q))
                    if v is not None:
                        out[f"latency.{name}.{q}"] = v
    counters = ev.get("counters")
    if isinstance(counters, dict):
        for k, v in counters.items():
            v = num(v)
            if v is not None:
                out[f"counter.{k}"] = _per_s(v, dt)
    timings = ev.get("timings")
    if isinstance(timings, dict):
        for name, tm in list(timings.items())[:MAX_TYPES]:
            if not isinstance(tm, dict):
                continue
            n = num(tm.get("n"))
            if n is not None:
                out[f"timing.{name}"] = _per_s(n, dt)
            for q in (*LATENCY_KEYS, "max"):
                v = num(tm.get(q))
                if v is not None:
                    out[f"latency.{name}.{q}"] = v
    return out


def _host(ev: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    cpu = ev.get("cpu")
    if isinstance(cpu, dict):
        for k, v in cpu.items():
            v = num(v)
            if v is not None:
                out[f"cpu.{k}"] = v
    for field, name in _HOST_PLAIN.items():
        v = num(ev.get(field))
        if v is not None:
            out[name] = v
    for group, fields in _HOST_GROUPS.items():
        g = ev.get(group)
        if isinstance(g, dict):
            for field, name in fields.items():
                v = num(g.get(field))
                if v is not None:
                    out[name] = v
            if group == "mem":
                for field in ("total_kb", "available_kb"):
                    v = num(g.get(field))
                    if v is not None:
                        out[f"mem.{field}"] = v
    drv = ev.get("driver_cpu")
    dt = interval_seconds(ev)
    if isinstance(drv, dict) and dt > 0:
        u, s = num(drv.get("user_s")), num(drv.get("system_s"))
        if u is not None and s is not None:
            out["driver.cpu"] = (u + s) / dt * 100.0
    groups = ev.get("cpu_groups")
    if isinstance(groups, dict):
        for name, g in groups.items():
            if isinstance(g, dict):
                u, s = num(g.get("user")), num(g.get("system"))
                if u is not None and s is not None:
                    out[f"cpu.group.{name}"] = u + s
    client = ev.get("client")
    if isinstance(client, dict):
        for field, name in (("driver_cores", "client.cores"), ("vu_wait_pct", "client.vu_wait"),
                            ("server_wait_pct", "client.server_wait")):
            v = num(client.get(field))
            if v is not None:
                out[name] = v
        if isinstance(client.get("limited"), bool):
            out["client.limited"] = 1.0 if client["limited"] else 0.0
    return out


def _db(ev: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    counters = ev.get("counters")
    if not isinstance(counters, dict):
        return out
    dt = interval_seconds(ev)
    for k, v in counters.items():
        v = num(v)
        if v:
            out[f"db.{k}"] = _per_s(v, dt)
    gauges = ev.get("gauges")
    if isinstance(gauges, dict):
        for k, v in gauges.items():
            v = num(v)
            if v is not None and f"db.{k}" not in out:
                out[f"db.{k}"] = v
    names = TXN_COUNTERS.get(str(ev.get("source", "")))
    if names and dt > 0:
        values = [num(counters.get(n)) for n in names]
        if all(v is not None for v in values):
            own = num(ev.get("own_xacts")) or 0.0
            tps = max(0.0, sum(values) - own) / dt        # type: ignore[arg-type]
            out["server.tps"] = tps
            out["server.tpm"] = tps * 60.0
    return out


def server_txn_source(ev: dict[str, Any]) -> str | None:
    """Where ``server.tps``/``server.tpm`` of a ``db`` event come from, in words."""
    names = TXN_COUNTERS.get(str(ev.get("source", "")))
    return f"{ev['source']} {' + '.join(names)}" if names else None


def lookup(obj: Any, path: str) -> Any:
    """``obj["a"]["b"]`` for the path ``a.b``; None where a part is missing."""
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def summary_value(summary: dict[str, Any], path: str) -> float | None:
    """A number read from a phase summary by a metric's path (``result.nopm``,
    ``counters.queries/s``: divided by the summary's seconds, ``/min`` by its minutes)."""
    scale = 1.0
    for suffix, per in (("/s", 1.0), ("/min", 60.0)):
        if path.endswith(suffix):
            dur = num(summary.get("duration_s"))
            if not dur:
                return None
            path, scale = path[:-len(suffix)], per / dur
    v = num(lookup(summary, path))
    return None if v is None else v * scale
