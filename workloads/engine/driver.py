"""The agent's run engine: one writer of sequenced events, a 1-second sampler, and virtual
users as processes that count operations and latency into shared memory.

Virtual users never send events themselves: each owns a slot of counters and a latency
histogram in a shared array, and the sampler thread turns the growth of those arrays into
one `sample` event per second. That keeps the hot loop free of IPC.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

from .. import events
from ..params import PlannedPhase, WorkloadSpec
from .emitter import Emitter
from .loadpool import VuPool
from .measure.outage import Outages
from .measure.perf import PerfCaps
from .measure.procgroups import ProcGroups, ServerProcs
from .measure.sampler import PhaseWindow
from .measure.clientload import PhaseClient
from .measure.counters import ServerCounters
from .phase import Phase, StopRun
from .sampling import Sampling
from .sql.db import TargetInfo
from .vus import die_with_parent

__all__ = ["AGENT_VERSION", "Agent", "Emitter", "StopRun", "die_with_parent"]

AGENT_VERSION = "0.1.0"


class Agent(Sampling, VuPool):
    """Runs one workload: phases, virtual users, sampling, summary, end."""

    def __init__(self, run_id: str, spec: dict, target: TargetInfo, emitter: Emitter,
                 workload: WorkloadSpec):
        self.run_id, self.spec, self.target, self.em = run_id, spec, target, emitter
        self.params: dict = spec["params"]
        self.workload = workload
        self.unit = workload.throughput_unit
        self.stop_requested = threading.Event()
        self._lock = threading.Lock()
        self._phase: Phase | None = None
        self._vu_pids: list[int] = []
        self._server_procs: ServerProcs | None = None
        self._server_note = ""
        self._windows: list[PhaseWindow] = []
        self._client_phase: PhaseClient | None = None
        self._groups: ProcGroups | None = None
        self._perf = PerfCaps()
        self._windows_lock = threading.Lock()
        self._counters: ServerCounters | None = None
        self._counters_lock = threading.Lock()
        self._last_db: dict[str, float] | None = None
        self._last_db_t = 0.0
        self._last_db_own = self._db_own_read = 0
        # reconnect=on: the monitor connects again after an outage; each new connection is a
        # new epoch (a restarted server counts from zero: no delta across epochs)
        self._counters_epoch = 0
        self._counters_retry_at: float | None = None
        self._sampler = threading.Thread(target=self._sample_loop, name="sampler", daemon=True)
        self._sampler_stop = threading.Event()
        self._outages = Outages(self.em.emit)

    # --- events -------------------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the run started (the events' clock)."""
        return self.em.now()

    def emit(self, kind: str, **body: Any) -> dict:
        """Write one event (a body from workloads.events' builders) and return it."""
        return self.em.emit(kind, **body)

    def log(self, message: str, level: str = "info", **extra) -> None:
        self.em.emit("log", level=level, message=message, **extra)

    def progress(self, phase: str, done: int, total: int, unit: str = "rows") -> None:
        self.em.emit("progress", phase=phase, done=done, total=total, unit=unit)

    def load_summary(self, phase: str, total: int, seconds: float, **extra: Any) -> None:
        """The summary of a load phase: rows written per second over the whole phase."""
        now = self.em.now()
        self.em.emit("summary", **events.summary(
            phase=phase, interval=[round(max(0.0, now - seconds), 4), round(now, 4)],
            duration_s=round(seconds, 3), ops_total=total,
            rate=round(total / seconds, 1) if seconds else None, unit="rows/s",
            rows_total=total, ops={}, errors={}, hist={}, lat_ms={}, errors_total=0, **extra))

    def check_stop(self) -> None:
        if self.stop_requested.is_set():
            raise StopRun()

    @contextmanager
    def phase(self, name: str, planned_s: float | None = None, **extra):
        """A phase's start and end events; the start says the phase's declared role and its
        planned seconds, so a reader (the plan queue, the app) needs no workload knowledge."""
        planned = self.planned(name)
        if planned_s is None and planned is not None:
            planned_s = planned.seconds
        if planned_s is not None:
            extra["planned_s"] = planned_s
        if planned is not None and planned.role:
            extra.setdefault("role", planned.role)
        self.em.emit("phase", name=name, state="start", **extra)
        t = self.em.now()
        window = self.open_cpu_window(t)
        try:
            yield
        finally:
            end = self.em.now()
            groups = self.close_cpu_window(window, end)
            self.em.emit("phase", name=name, state="end", duration_s=round(end - t, 3),
                         **({"cpu_groups": groups} if groups else {}))

    def planned(self, name: str) -> PlannedPhase | None:
        """The phase as the workload's spec plans it for this run's parameters."""
        return next((p for p in self.workload.planned_phases(self.params) if p.name == name),
                    None)
