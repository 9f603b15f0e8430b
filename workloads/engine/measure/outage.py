"""Outages measured, not just survived (the common parameter ``reconnect``).

With reconnect on, a virtual user that loses its database connection after its phase started
runs its function again with backoff (0.1 s doubling to 2 s, with jitter) until it connects;
its loop then resumes where the phase is (VU.wait_for_go returns at once). The virtual user
tells the agent each failure and its return; `Outages` in the agent turns them into one
`outage` event pair per outage:

- ``state: "start"``, at the first error: ``id``, ``phase``, ``first_error_t``, ``vu``,
  ``class``, ``pre_fault_rate`` (mean throughput of the ``pre_fault_s`` seconds before it);
- ``state: "end"``, once every affected virtual user is back and throughput is at 95 % of the
  pre-fault rate again, or when the phase ends: first and last error, time to reconnect
  (overall and per virtual user), time until throughput was back, errors by class.

The end event's body is also in the phase summary's ``outages`` list.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable

from ..sql.errors import classify

BACKOFF_FIRST_S = 0.1
BACKOFF_MAX_S = 2.0
PRE_FAULT_S = 10.0            # the pre-fault rate is the mean throughput of these seconds
RECOVERED = 0.95              # throughput is back at this share of the pre-fault rate

# exceptions that are a workload's bug, never an outage
_BUGS = (TypeError, NameError, AttributeError, LookupError, AssertionError, ArithmeticError,
         ValueError, ImportError)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


CONNECT_WAIT_S = 50.0          # before its phase starts (the agent gives connecting 60 s)


def run_reconnecting(fn: Callable[[Any], None], vu) -> None:
    """Run a virtual user's function; with the phase started, a failure is an outage: retry
    with backoff until the function runs again or the phase stops. Before the phase starts,
    a server that does not answer (an outage that spans the previous phase's end) is waited
    for, up to CONNECT_WAIT_S: the phase starts once every user is connected."""
    delay = BACKOFF_FIRST_S
    give_up = time.monotonic() + CONNECT_WAIT_S
    while True:
        try:
            fn(vu)
            return
        except Exception as exc:
            if isinstance(exc, _BUGS):
                raise
            if not vu.started:
                if classify(first_line(exc)) == "other" or time.monotonic() > give_up:
                    raise
            else:
                if not vu.down:
                    delay = BACKOFF_FIRST_S   # a new outage starts from the shortest wait
                vu.connection_failed(first_line(exc))
        wait = delay * (0.5 + vu.rng.random())          # jitter: users do not retry in step
        end = time.monotonic() + wait
        while not vu.stop.value and time.monotonic() < end:
            time.sleep(min(0.02, max(0.0, end - time.monotonic())))
        if vu.stop.value:
            return
        delay = min(BACKOFF_MAX_S, delay * 2)


class Outages:
    """The agent's view of outages: fed by the virtual users' reports and the samples, it
    emits the `outage` events and gives each phase's list for its summary."""

    def __init__(self, emit: Callable[..., dict], pre_fault_s: float = PRE_FAULT_S):
        self._emit = emit
        self.pre_fault_s = pre_fault_s
        self._lock = threading.Lock()
        self._samples: deque = deque(maxlen=int(pre_fault_s * 4) + 8)
        self._open: dict | None = None
        self._n = 0
        self._phase, self._clients, self._unit = "", 0, ""
        self.phase_outages: list[dict] = []

    def start_phase(self, name: str, clients: int, unit: str) -> None:
        with self._lock:
            self._phase, self._clients, self._unit = name, clients, unit
            self._samples.clear()
            self.phase_outages = []

    def sample(self, interval: list, rate: float) -> None:
        """A sample just emitted: kept for pre-fault rates; may end the open outage."""
        with self._lock:
            a, b = float(interval[0]), float(interval[1])
            self._samples.append((a, b, float(rate)))
            o = self._open
            if o is None or any(v["back"] is None for v in o["vus"].values()):
                return
            if o["pre"] is None or o["pre"] <= 0:
                self._close(o, b, None)
            elif a >= o["first"] and rate >= RECOVERED * o["pre"]:
                self._close(o, b, b)

    def report(self, vu: int, rec: dict) -> None:
        """A virtual user's report: {"outage": "error", "t", "class", "message"} or
        {"outage": "back", "t"}."""
        with self._lock:
            t = float(rec.get("t") or 0.0)
            o = self._open
            if rec.get("outage") == "back":
                if o is not None and vu in o["vus"]:
                    o["vus"][vu]["back"] = t
                return
            cls = str(rec.get("class") or "other")
            if o is None:
                o = self._open = self._new(t, vu, cls)
            o["last"] = max(o["last"], t)
            o["errors"][cls] = o["errors"].get(cls, 0) + 1
            o["examples"].setdefault(cls, str(rec.get("message") or "")[:300])
            state = o["vus"].setdefault(vu, {"lost": t, "back": None})
            state["back"] = None

    def _new(self, t: float, vu: int, cls: str) -> dict:
        before = [(a, b, r) for a, b, r in self._samples
                  if b <= t + 1e-6 and b > t - self.pre_fault_s]
        span = sum(b - a for a, b, _ in before)
        pre = round(sum(r * (b - a) for a, b, r in before) / span, 2) if span > 0 else None
        self._n += 1
        o = {"id": self._n, "phase": self._phase, "first": t, "last": t, "errors": {},
             "examples": {}, "vus": {}, "pre": pre, "pre_s": round(span, 3)}
        self._emit("outage", state="start", id=o["id"], phase=self._phase,
                   first_error_t=round(t, 4), vu=vu + 1, **{"class": cls},
                   pre_fault_rate=pre, pre_fault_s=o["pre_s"], unit=self._unit,
                   clients=self._clients)
        return o

    def _close(self, o: dict, t_end: float, recovered: float | None) -> dict:
        vus = o["vus"]
        backs = [v["back"] for v in vus.values()]
        all_back = all(b is not None for b in backs)
        reconnected = max(backs) if vus and all_back else None
        if o["pre"] is None or o["pre"] <= 0:
            recovery = "not measured: no throughput before the first error"
        elif recovered is not None:
            recovery = "reached"
        else:
            recovery = "not reached before the phase ended"
        body = {
            "id": o["id"], "phase": o["phase"],
            "first_error_t": round(o["first"], 4), "last_error_t": round(o["last"], 4),
            "reconnected_t": round(reconnected, 4) if reconnected is not None else None,
            "reconnect_s": round(reconnected - o["first"], 3) if reconnected is not None
            else None,
            "reconnect_s_by_vu": {str(k + 1): (round(v["back"] - v["lost"], 3)
                                               if v["back"] is not None else None)
                                  for k, v in sorted(vus.items())},
            "vus_affected": [k + 1 for k in sorted(vus)], "clients": self._clients,
            "errors": dict(sorted(o["errors"].items(), key=lambda kv: -kv[1])),
            "error_examples": o["examples"],
            "pre_fault_rate": o["pre"], "pre_fault_s": o["pre_s"], "unit": self._unit,
            "recovered_t": round(recovered, 4) if recovered is not None else None,
            "recovery_s": round(recovered - o["first"], 3) if recovered is not None else None,
            "recovery": recovery, "recovery_share": RECOVERED,
            "end_t": round(t_end, 4),
        }
        self._emit("outage", state="end", **body)
        self.phase_outages.append(body)
        self._open = None
        return body

    def end_phase(self, t_end: float) -> list[dict]:
        """The phase ended: an outage still open ends with it. The phase's outages."""
        with self._lock:
            if self._open is not None:
                self._close(self._open, t_end, None)
            out, self.phase_outages = self.phase_outages, []
            return out

