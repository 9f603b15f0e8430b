"""Named time series fed by the event stream: what every chart reads.

Plain data, stdlib only. A worker thread appends with ``ingest`` while the GUI thread reads
``snapshot``; one lock guards both. Each series is a bounded ring buffer so a run that lasts
for days keeps a fixed memory footprint (the oldest points drop out first).
"""
from __future__ import annotations

import threading
from array import array
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable

DEFAULT_CAPACITY = 200_000      # ~55 h of 1 s samples per series, 3.2 MB at most each

LATENCY_KEYS = ("p50", "p95", "p99")
CPU_KEYS = ("user", "system", "iowait", "idle", "steal")


class Ring:
    """Fixed-capacity (t, value) ring of doubles; grows until full, then overwrites the oldest."""

    __slots__ = ("capacity", "_t", "_v", "_head")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a ring needs room for at least one point")
        self.capacity = capacity
        self._t = array("d")
        self._v = array("d")
        self._head = 0          # index of the oldest point once the ring is full

    def __len__(self) -> int:
        return len(self._t)

    def append(self, t: float, v: float) -> None:
        if len(self._t) < self.capacity:
            self._t.append(t)
            self._v.append(v)
        else:
            self._t[self._head] = t
            self._v[self._head] = v
            self._head = (self._head + 1) % self.capacity

    def arrays(self) -> tuple[array, array]:
        """Copies in time order (a memcpy each, cheap enough for every redraw)."""
        h = self._head
        if h == 0:
            return array("d", self._t), array("d", self._v)
        return self._t[h:] + self._t[:h], self._v[h:] + self._v[:h]

    def last(self) -> tuple[float, float] | None:
        if not self._t:
            return None
        i = (self._head - 1) % len(self._t)
        return self._t[i], self._v[i]


@dataclass(frozen=True)
class Note:
    """A line for the run log: log/error/phase/end events rendered as text."""
    id: int          # 1, 2, 3 … per store, so a reader can ask for what is new
    t: float
    level: str       # "info" | "warning" | "error"
    text: str


@dataclass(frozen=True)
class RunState:
    """Where a run stands, read by the progress bar; a copy, safe to keep."""
    run_id: str | None
    workload: str | None
    params: dict
    throughput_unit: str
    phase: str | None            # the phase that is open now, if any
    phase_t0: float | None       # when it started (run clock)
    last_t: float                # latest event time seen
    progress: dict | None        # latest progress event of the open phase
    ended: bool
    status: str | None           # end.status
    reason: str | None
    events: int


class SeriesStore:
    """Maps events onto named series; thread-safe; ``version`` changes whenever data does.

    Series: ``throughput`` (sample.rate at the interval end), ``errors`` (errors per second),
    ``latency.p50/.p95/.p99`` (sample.lat_ms["all"], ms), ``cpu.user/.system/.iowait/.idle/
    .steal`` (host.cpu, percent).
    """

    NOTE_CAPACITY = 5_000

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._series: dict[str, Ring] = {}
        self._phases: list[list] = []       # [name, t_start, t_end|None]
        self._notes: deque[Note] = deque(maxlen=self.NOTE_CAPACITY)
        self._note_id = 0
        self._summaries: list[dict] = []
        self._hello: dict | None = None
        self._progress: dict | None = None
        self._end: dict | None = None
        self._last_t = 0.0
        self._last_seq = 0
        self._events = 0
        self._unit = "QPS"
        self.version = 0

    # --- writing (any thread) ------------------------------------------------------------
    def clear(self) -> None:
        with self._lock:
            self._series.clear()
            self._phases.clear()
            self._notes.clear()
            self._summaries.clear()
            self._hello = self._progress = self._end = None
            self._last_t, self._last_seq, self._events, self._unit = 0.0, 0, 0, "QPS"
            self.version += 1

    def ingest(self, events: Iterable[dict[str, Any]]) -> int:
        """Add a batch of events; return how many were taken (repeats by seq are skipped)."""
        taken = 0
        with self._lock:
            for ev in events:
                seq = ev.get("seq")
                # The runner delivers each event once, but a replayed or resumed source may
                # overlap: never store a sample twice.
                if isinstance(seq, int):
                    if seq <= self._last_seq:
                        continue
                    self._last_seq = seq
                self._take(ev)
                taken += 1
            if taken:
                self._events += taken
                self.version += 1
        return taken

    def _take(self, ev: dict[str, Any]) -> None:
        kind = ev.get("kind")
        t = _num(ev.get("t"), self._last_t)
        self._last_t = max(self._last_t, t)
        if kind == "sample":
            t_end = _interval_end(ev, t)
            dt = _interval_len(ev)
            rate = _num(ev.get("rate"))
            if rate is not None:
                self._add("throughput", t_end, rate)
            if ev.get("unit"):
                self._unit = str(ev["unit"])
            errors = ev.get("errors") or {}
            n_err = sum(v for v in errors.values() if isinstance(v, (int, float)))
            self._add("errors", t_end, n_err / dt if dt > 0 else float(n_err))
            lat = (ev.get("lat_ms") or {}).get("all") or {}
            for key in LATENCY_KEYS:
                v = _num(lat.get(key))
                if v is not None:       # an interval with no operations has no latency
                    self._add(f"latency.{key}", t_end, v)
        elif kind == "host":
            t_end = _interval_end(ev, t)
            cpu = ev.get("cpu") or {}
            for key in CPU_KEYS:
                v = _num(cpu.get(key))
                if v is not None:
                    self._add(f"cpu.{key}", t_end, v)
        elif kind == "phase":
            name = str(ev.get("name", "?"))
            if ev.get("state") == "start":
                self._phases.append([name, t, None])
                self._progress = None
                self._note(t, "info", f"Phase {name} started")
            elif ev.get("state") == "end":
                for span in reversed(self._phases):
                    if span[0] == name and span[2] is None:
                        span[2] = t
                        break
                else:
                    self._phases.append([name, t, t])
                self._note(t, "info", f"Phase {name} ended")
        elif kind == "progress":
            self._progress = dict(ev)
        elif kind == "hello":
            self._hello = dict(ev)
            if ev.get("throughput_unit"):
                self._unit = str(ev["throughput_unit"])
            target = ev.get("target") or {}
            self._note(t, "info", f"Run {ev.get('run_id', '?')}: {ev.get('workload', '?')} on "
                                  f"{target.get('engine', '?')} at {target.get('address', '?')}")
        elif kind == "log":
            level = str(ev.get("level", "info")).lower()
            self._note(t, "warning" if level.startswith("warn") else
                       "error" if level in ("error", "critical") else "info",
                       str(ev.get("message", "")))
        elif kind == "error":
            self._note(t, "error", str(ev.get("message", "error")))
        elif kind == "summary":
            self._summaries.append(dict(ev))
            rate = ev.get("rate")
            self._note(t, "info", f"Summary of {ev.get('phase', '?')}: "
                                  f"{_fmt_num(rate)} {ev.get('unit', self._unit)} over "
                                  f"{_fmt_num(ev.get('duration_s'))} s")
        elif kind == "end":
            self._end = dict(ev)
            for span in self._phases:          # a stopped run leaves its phase open
                if span[2] is None:
                    span[2] = t
            reason = ev.get("reason")
            status = ev.get("status", "?")
            self._note(t, "error" if status == "failed" else "info",
                       f"Run ended: {status}" + (f" ({reason})" if reason else ""))

    def _add(self, name: str, t: float, v: float) -> None:
        ring = self._series.get(name)
        if ring is None:
            ring = self._series[name] = Ring(self.capacity)
        ring.append(t, v)

    def _note(self, t: float, level: str, text: str) -> None:
        self._note_id += 1
        self._notes.append(Note(self._note_id, t, level, text))

    # --- reading (any thread) ------------------------------------------------------------
    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._series)

    def snapshot(self, name: str) -> tuple[list[float], list[float]]:
        ts, vs = self.arrays(name)
        return ts.tolist(), vs.tolist()

    def arrays(self, name: str) -> tuple[array, array]:
        """Like snapshot, as array('d') copies (numpy.frombuffer takes them without a loop)."""
        with self._lock:
            ring = self._series.get(name)
            if ring is None:
                return array("d"), array("d")
            return ring.arrays()

    def count(self, name: str) -> int:
        with self._lock:
            ring = self._series.get(name)
            return len(ring) if ring else 0

    def last(self, name: str) -> tuple[float, float] | None:
        with self._lock:
            ring = self._series.get(name)
            return ring.last() if ring else None

    def phases(self) -> list[tuple[str, float, float | None]]:
        """Phase spans in order; t_end is None while the phase is still open."""
        with self._lock:
            return [tuple(s) for s in self._phases]

    def notes_after(self, note_id: int) -> list[Note]:
        with self._lock:
            return [n for n in self._notes if n.id > note_id]

    def summaries(self) -> list[dict]:
        with self._lock:
            return [dict(s) for s in self._summaries]

    def state(self) -> RunState:
        with self._lock:
            hello = self._hello or {}
            open_span = next((s for s in reversed(self._phases) if s[2] is None), None)
            end = self._end or {}
            return RunState(
                run_id=hello.get("run_id"), workload=hello.get("workload"),
                params=dict(hello.get("params") or {}), throughput_unit=self._unit,
                phase=open_span[0] if open_span else None,
                phase_t0=open_span[1] if open_span else None,
                last_t=self._last_t,
                progress=dict(self._progress) if self._progress and open_span
                and self._progress.get("phase") == open_span[0] else None,
                ended=self._end is not None, status=end.get("status"),
                reason=end.get("reason"), events=self._events)


def _num(x: Any, default: float | None = None) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return default
    return float(x)


def _interval_end(ev: dict, t: float) -> float:
    iv = ev.get("interval")
    if isinstance(iv, (list, tuple)) and len(iv) == 2 and _num(iv[1]) is not None:
        return float(iv[1])
    return t


def _interval_len(ev: dict) -> float:
    iv = ev.get("interval")
    if isinstance(iv, (list, tuple)) and len(iv) == 2:
        a, b = _num(iv[0]), _num(iv[1])
        if a is not None and b is not None and b > a:
            return b - a
    return 0.0


def _fmt_num(x: Any) -> str:
    if not isinstance(x, (int, float)):
        return "?"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.2f}"
