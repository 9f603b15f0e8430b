"""A live run's figures as an OpenMetrics / Prometheus endpoint on the laptop, so Prometheus,
Grafana and PMM show a Versus run beside their dashboards (``versus run --metrics-port 9469``).

Fed by the same event batches as the progress lines, from the stream the session file
stores; served by prometheus_client on 127.0.0.1 (``--metrics-address`` to open it wider):

    versus_operations_total{run_id, workload, type}      operations the clients completed
    versus_errors_total{run_id, workload}                failed operations
    versus_throughput{run_id, workload, phase, unit}     the last interval's rate
    versus_latency_ms{run_id, workload, quantile}        the last interval's p50/p95/p99
    versus_run_start_timestamp_seconds{run_id, workload} run start (an annotation in Grafana)
    versus_run_end_timestamp_seconds{run_id, workload, status}   run end, once it ended
    versus_phase_start_timestamp_seconds{run_id, workload, phase}
"""
from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server


class MetricsEndpoint:
    def __init__(self, port: int, address: str = "127.0.0.1"):
        self.registry = reg = CollectorRegistry()
        self.ops = Counter("versus_operations", "Operations the virtual users completed",
                           ["run_id", "workload", "type"], registry=reg)
        self.errors = Counter("versus_errors", "Operations that failed",
                              ["run_id", "workload"], registry=reg)
        self.rate = Gauge("versus_throughput", "Throughput of the last interval",
                          ["run_id", "workload", "phase", "unit"], registry=reg)
        self.latency = Gauge("versus_latency_ms", "Latency of the last interval, ms",
                             ["run_id", "workload", "quantile"], registry=reg)
        self.start = Gauge("versus_run_start_timestamp_seconds", "When the run started",
                           ["run_id", "workload"], registry=reg)
        self.end = Gauge("versus_run_end_timestamp_seconds", "When the run ended",
                         ["run_id", "workload", "status"], registry=reg)
        self.phase = Gauge("versus_phase_start_timestamp_seconds", "When a phase started",
                           ["run_id", "workload", "phase"], registry=reg)
        self._workload: dict[str, str] = {}
        self._epoch: dict[str, float] = {}     # run id -> epoch of the run's t = 0
        try:
            self.server, self.thread = start_http_server(port, addr=address, registry=reg)
        except OSError as exc:
            raise OSError(f"cannot serve metrics on {address}:{port}: "
                          f"{exc.strerror or exc}") from None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _at(self, run_id: str, t: Any) -> float:
        base = self._epoch.get(run_id)
        return base + float(t) if base is not None and isinstance(t, (int, float)) \
            else time.time()

    def __call__(self, run_id: str, evs: list[dict]) -> None:
        for e in evs:
            k = e.get("kind")
            wl = self._workload.get(run_id, "")
            if k == "hello":
                wl = self._workload[run_id] = str(e.get("workload") or "")
                epoch = e.get("started_epoch")
                self._epoch[run_id] = (float(epoch) if isinstance(epoch, (int, float))
                                       else time.time() - float(e.get("t") or 0))
                self.start.labels(run_id, wl).set(self._epoch[run_id])
            elif k == "phase" and e.get("state") == "start":
                self.phase.labels(run_id, wl, str(e.get("name"))).set(self._at(run_id,
                                                                                e.get("t")))
            elif k == "sample":
                for typ, n in (e.get("ops") or {}).items():
                    if isinstance(n, (int, float)) and n > 0:
                        self.ops.labels(run_id, wl, typ).inc(n)
                errs = sum(n for n in (e.get("errors") or {}).values()
                           if isinstance(n, (int, float)))
                if errs > 0:
                    self.errors.labels(run_id, wl).inc(errs)
                if isinstance(e.get("rate"), (int, float)):
                    self.rate.labels(run_id, wl, str(e.get("phase") or ""),
                                     str(e.get("unit") or "")).set(e["rate"])
                lat = (e.get("lat_ms") or {}).get("all") or {}
                for q in ("p50", "p95", "p99"):
                    if isinstance(lat.get(q), (int, float)):
                        self.latency.labels(run_id, wl, q).set(lat[q])
            elif k == "end":
                self.end.labels(run_id, wl, str(e.get("status") or "")).set(
                    self._at(run_id, e.get("t")))
