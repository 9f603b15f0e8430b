"""Named time series fed by the event stream: what every chart reads.

Plain data (numpy arrays). A worker thread appends with ``ingest`` while the GUI thread reads;
one lock guards both. Each series is a ``Track``: the latest hour at full resolution and the
whole run as min/max buckets, so a run that lasts for days keeps a fixed memory footprint
and every redraw reads a bounded amount (``window``). The session file keeps every point.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from .text import as_sentence
from .track import BUCKETS, RECENT, Track
from . import derive
from . import outages as outage_model
from .derive import MAX_TYPES
from .phase import PhaseSummary

MAX_VUS = 4096          # rows kept for the virtual-user table


@dataclass(frozen=True)
class Note:
    """A line for the run log: log/error/phase/end events rendered as text."""
    id: int          # 1, 2, 3 … per store, so a reader can ask for what is new
    t: float
    level: str       # "info" | "warning" | "error"
    text: str


@dataclass(frozen=True)
class VirtualUser:
    """One row of the virtual-user table: the latest sample's totals for the open phase."""
    vu: int
    state: str            # "running" | "ended" | "starting" (phase started, no sample yet)
    #                       | "waiting" (its phase ended, the run's next phase goes on)
    home: str             # home warehouse(s) from the phase start; "" when not given
    transactions: int | None    # since the phase started; None when the sample had no totals
    errors: int | None
    phase: str | None


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

    Series are the names ``app.model.derive.interval_values`` gives each event (throughput,
    latency.p95, ops.<type>, server.tpm, cpu.user …), at the end of the event's interval.
    Each keeps its latest ``recent`` points at full resolution and the whole run in
    ``buckets`` min/max buckets (``recent=None``: every point, for a saved run read whole).
    ``virtual_users()`` is the latest per-VU snapshot, replaced, never accumulated.
    ``client_limit()`` is the latest sentence saying the client limits throughput.
    """

    NOTE_CAPACITY = 5_000

    def __init__(self, recent: int | None = RECENT,
                 describe: Callable[[dict, str | None], str | None] | None = None,
                 buckets: int = BUCKETS) -> None:
        self.recent = recent
        self.buckets = buckets
        # describe(summary, workload) -> the phase's result line for the run log, or None
        self._describe = describe
        self._lock = threading.Lock()
        self._series: dict[str, Track] = {}
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
        self._types: list[str] = []         # transaction types in order of first appearance
        self._server_source: str | None = None
        self._client_limit: str | None = None
        self._profiles: list[dict] = []        # one per profiled phase (bounded stacks)
        self._outage_events: list[dict] = []   # reconnect=on: start and end of each outage
        self._vu_info: list[tuple[int, str]] = []   # (vu, home) from the open phase's start
        self._vu_totals: list | None = None         # latest sample's vus: [ops, errors, state]
        self._vu_phase: str | None = None
        self._vu_sampled = False                    # a sample of that phase has arrived
        self._vu_closed = False                     # that phase (or the run) has ended
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
            self._types.clear()
            self._server_source = self._client_limit = None
            self._profiles.clear()
            self._outage_events.clear()
            self._vu_info, self._vu_totals, self._vu_phase = [], None, None
            self._vu_sampled = self._vu_closed = False
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
        if kind in ("sample", "host", "db"):
            t_end = derive.point_time(ev)
            for name, v in derive.interval_values(ev).items():
                self._add(name, t_end, v)
            if kind == "sample":
                if ev.get("unit"):
                    self._unit = str(ev["unit"])
                for name in _types_of(ev):
                    if name not in self._types and len(self._types) < MAX_TYPES:
                        self._types.append(name)
                self._take_vus(ev)
            elif kind == "db":
                self._server_source = derive.server_txn_source(ev) or self._server_source
        elif kind == "phase":
            name = str(ev.get("name", "?"))
            if ev.get("state") == "start":
                self._phases.append([name, t, None])
                self._progress = None
                if isinstance(ev.get("vus"), list):     # counts restart with each phase
                    self._vu_info = _vu_info(ev["vus"])
                    self._vu_totals, self._vu_phase = None, name
                    self._vu_sampled = self._vu_closed = False
                self._note(t, "info", f"Phase {name} started")
            elif ev.get("state") == "end":
                if name == self._vu_phase:
                    self._vu_closed = True
                for span in reversed(self._phases):
                    if span[0] == name and span[2] is None:
                        span[2] = t
                        break
                else:
                    self._phases.append([name, t, t])
                self._note(t, "info", f"Phase {name} ended")
        elif kind == "progress":
            self._progress = dict(ev)
        elif kind == "profile":
            if isinstance(ev.get("stacks"), list):
                self._profiles.append(dict(ev))
                self._note(t, "info", f"CPU profile of the server in {ev.get('phase', '?')}: "
                                      f"{_fmt_num(ev.get('samples'))} samples")
            elif ev.get("error"):
                self._note(t, "warning", f"no CPU profile of {ev.get('phase', '?')}: "
                                         f"{ev['error']}")
        elif kind == "outage":
            self._outage_events.append(dict(ev))
            if ev.get("state") == "end":
                self._note(t, "warning", as_sentence(outage_model.describe(ev), end=""))
            else:
                self._note(t, "warning", f"Outage {ev.get('id', '?')} in {ev.get('phase', '?')}: "
                                         f"virtual user {ev.get('vu', '?')} lost its "
                                         f"connection ({ev.get('class', '?')}); reconnecting")
        elif kind == "hello":
            self._hello = dict(ev)
            if ev.get("throughput_unit"):
                self._unit = str(ev["throughput_unit"])
            target = ev.get("target") or {}
            self._note(t, "info", f"Run {ev.get('run_id', '?')}: {ev.get('workload', '?')} on "
                                  f"{target.get('engine', '?')} at {target.get('address', '?')}")
        elif kind == "log":
            level = str(ev.get("level", "info")).lower()
            if ev.get("topic") == "client-limit":
                self._client_limit = str(ev.get("message", ""))
            self._note(t, "warning" if level.startswith("warn") else
                       "error" if level in ("error", "critical") else "info",
                       str(ev.get("message", "")))
        elif kind == "error":
            self._note(t, "error", str(ev.get("message", "error")))
        elif (summ := PhaseSummary.of(ev)) is not None:
            self._summaries.append(dict(ev))
            self._note(t, "info", f"Summary of {summ.phase}: "
                                  f"{_fmt_num(summ.rate)} {summ.unit or self._unit} over "
                                  f"{_fmt_num(summ.duration_s)} s")
            text = self._describe(ev, (self._hello or {}).get("workload")) \
                if self._describe else None
            if text:
                self._note(t, "info", f"Result of {summ.phase}: {text}")
        elif kind == "end":
            self._end = dict(ev)
            self._vu_closed = True
            for span in self._phases:          # a stopped run leaves its phase open
                if span[2] is None:
                    span[2] = t
            reason = ev.get("reason")
            status = ev.get("status", "?")
            self._note(t, "error" if status == "failed" else "info",
                       f"Run ended: {status}" + (f" ({reason})" if reason else ""))

    def _take_vus(self, ev: dict) -> None:
        vus = ev.get("vus")
        phase = ev.get("phase")
        if phase != self._vu_phase:          # a phase that announced no virtual users
            self._vu_info, self._vu_phase, self._vu_closed = [], phase, False
        self._vu_sampled = True
        if isinstance(vus, list):
            self._vu_totals = [v for v in vus[:MAX_VUS]
                               if isinstance(v, (list, tuple)) and len(v) >= 3]
        else:                                # too many users for per-user totals
            self._vu_totals = None
            if not self._vu_info and _num(ev.get("clients")):
                self._vu_info = [(i + 1, "") for i in range(min(int(ev["clients"]), MAX_VUS))]

    def _add(self, name: str, t: float, v: float) -> None:
        track = self._series.get(name)
        if track is None:
            track = self._series[name] = Track(self.recent, self.buckets)
        track.append(t, v)

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

    def arrays(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The whole series in time order, bounded: the part older than the full-resolution
        window as (t0, min), (t1, max) pairs of its buckets (copies)."""
        with self._lock:
            track = self._series.get(name)
            return track.arrays() if track else (np.zeros(0), np.zeros(0))

    def window(self, name: str, t0: float, t1: float, points: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """What draws [t0, t1] on ``points`` columns of screen: at most ~2 × points values,
        each column's min and max where more points fall in it (see Track.window)."""
        with self._lock:
            track = self._series.get(name)
            return track.window(t0, t1, points) if track else (np.zeros(0), np.zeros(0))

    def mean(self, name: str, t0: float, t1: float | None) -> tuple[float | None, float]:
        """Time-weighted mean of the series over (t0, t1] and the seconds it covers."""
        with self._lock:
            track = self._series.get(name)
            return track.mean(t0, t1) if track else (None, 0.0)

    def coarse(self, name: str, t0: float, t1: float, points: int) -> bool:
        """Whether the store holds part of [t0, t1] only coarser than ``points`` columns."""
        with self._lock:
            track = self._series.get(name)
            return track.coarse(t0, t1, points) if track else False

    def full_since(self, name: str) -> float | None:
        """Where the series' full-resolution points start (older ones are in buckets)."""
        with self._lock:
            track = self._series.get(name)
            return track.full_since() if track else None

    def nbytes(self) -> int:
        """Bytes the series' arrays hold (bounded by ``recent`` and ``buckets``)."""
        with self._lock:
            return sum(track.nbytes for track in self._series.values())

    def count(self, name: str) -> int:
        """Points the series has received (all of them, not only those held)."""
        with self._lock:
            track = self._series.get(name)
            return track.count if track else 0

    def last(self, name: str) -> tuple[float, float] | None:
        with self._lock:
            track = self._series.get(name)
            return track.last() if track else None

    def phases(self) -> list[tuple[str, float, float | None]]:
        """Phase spans in order; t_end is None while the phase is still open."""
        with self._lock:
            return [tuple(s) for s in self._phases]

    def notes_after(self, note_id: int) -> list[Note]:
        with self._lock:
            return [n for n in self._notes if n.id > note_id]

    def types(self) -> list[str]:
        """Transaction types with series of their own, in order of first appearance."""
        with self._lock:
            return list(self._types)

    def outages(self) -> list[outage_model.Outage]:
        """The run's outages so far (reconnect=on), open ones included."""
        with self._lock:
            return outage_model.outages(self._outage_events)

    def profiles(self) -> list[dict]:
        """The CPU profiles received (``profile`` events with their folded stacks)."""
        with self._lock:
            return list(self._profiles)

    def client_limit(self) -> str | None:
        with self._lock:
            return self._client_limit

    def server_source(self) -> str | None:
        """Where ``server.tpm`` comes from, e.g. "pg_stat_database xact_commit + xact_rollback"."""
        with self._lock:
            return self._server_source

    def host(self) -> dict:
        """The benchmark host's facts from the run's hello event (cores, hostname …)."""
        with self._lock:
            host = (self._hello or {}).get("host")
            return dict(host) if isinstance(host, dict) else {}

    def virtual_users(self) -> list[VirtualUser]:
        """The virtual-user table: one row per user of the open (or last) phase. Users whose
        phase ended while the run goes on (a suite's next test loading) are "waiting", not
        "ended"."""
        with self._lock:
            totals = self._vu_totals or []
            n = max(len(totals), len(self._vu_info))
            last = self._phases[-1] if self._phases else None     # the latest phase begun
            going_on = (self._end is None and last is not None and last[2] is None
                        and last[0] != self._vu_phase)
            rows = []
            for i in range(n):
                vu, home = self._vu_info[i] if i < len(self._vu_info) else (i + 1, "")
                if i < len(totals):
                    ops, err, state = totals[i][0], totals[i][1], str(totals[i][2])
                    if state == "ended" and going_on:
                        state = "waiting"
                    rows.append(VirtualUser(vu, state, home, _int(ops), _int(err),
                                            self._vu_phase))
                else:
                    state = ("waiting" if going_on else "ended") if self._vu_closed else \
                        "running" if self._vu_sampled else "starting"
                    rows.append(VirtualUser(vu, state, home, None, None, self._vu_phase))
            return rows

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


def _int(x: Any) -> int | None:
    v = _num(x)
    return None if v is None else int(v)


def _vu_info(vus: list) -> list[tuple[int, str]]:
    out = []
    for i, v in enumerate(vus[:MAX_VUS]):
        if isinstance(v, dict):
            n = v.get("vu")
            out.append((int(n) if isinstance(n, int) else i + 1, str(v.get("home") or "")))
        else:
            out.append((i + 1, ""))
    return out


def _types_of(ev: dict) -> list[str]:
    """Transaction types of a sample that has two or more (one is what latency.* shows)."""
    ops = ev.get("ops") if isinstance(ev.get("ops"), dict) else {}
    lat = ev.get("lat_ms") if isinstance(ev.get("lat_ms"), dict) else {}
    types = list(dict.fromkeys(str(k) for k in (*ops, *lat) if k != "all"))
    return types if len(types) >= 2 else []


def _fmt_num(x: Any) -> str:
    if not isinstance(x, (int, float)):
        return "?"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.2f}"
