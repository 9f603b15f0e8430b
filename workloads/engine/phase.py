"""One phase's counters as the sampler and the summary read them: the VUs' shared arrays
snapshotted, and the growth between two snapshots as an event body."""
from __future__ import annotations

from typing import Sequence

from .. import events
from .vus import SLOT, _words


class StopRun(Exception):
    """The user asked the run to stop."""



class Phase:
    """Counter state of the phase that virtual users are running now."""

    def __init__(self, name: str, types: Sequence[str], arr, nvu: int,
                 counters: Sequence[str] = (), carr=None, rate=None,
                 timings: Sequence[str] = ()):
        self.name, self.arr, self.nvu = name, arr, nvu
        self.types = list(types) + list(timings)        # slots in the shared array
        self.main = len(types)                          # operations; the rest are timings
        self.unit = ""
        self.counters, self.carr, self.rate = list(counters), carr, rate
        self.procs: list = []
        self.vu_first = [[0, 0]] * nvu
        self.last = self.snapshot()
        self.first = self.last
        self.vu_first = [r[:2] for r in self.per_vu()]
        self.clast = self.cfirst = self.csnapshot()
        self.last_t = 0.0
        self.started_t = 0.0
        self.lost = 0                   # virtual users that ended before the phase did

    def snapshot(self) -> list[list[int]]:
        """Per type: [ops, errors, hist...] summed over virtual users."""
        n = len(self.types)
        # column sums over the VUs' rows, read through a memoryview (no copy of the array):
        # a third of the per-element adds' time with the 3,970-long slots
        a = _words(self.arr)
        return [list(map(sum, zip(*[a[(v * n + ti) * SLOT:(v * n + ti + 1) * SLOT]
                                    for v in range(self.nvu)])))
                for ti in range(n)]

    def per_vu(self) -> list[list]:
        """Per virtual user: [operations, errors, state] since the phase started."""
        n, m = len(self.types), self.main
        a, first, out = self.arr, self.vu_first, []
        for v in range(self.nvu):
            ops = sum(a[(v * n + ti) * SLOT] for ti in range(m))
            err = sum(a[(v * n + ti) * SLOT + 1] for ti in range(m))
            alive = self.procs[v].is_alive() if self.procs else True
            out.append([ops - first[v][0], err - first[v][1], "running" if alive else "ended"])
        return out

    def csnapshot(self) -> list[int]:
        """Workload counters summed over virtual users."""
        n = len(self.counters)
        if not n:
            return []
        a = self.carr[:]
        return [sum(a[v * n + k] for v in range(self.nvu)) for k in range(n)]


def _diff_body(types, cur, prev, main: int | None = None) -> dict:
    """Operations, errors and latency per type between two snapshots; the types after the
    first `main` are timings (parts of operations), kept apart under "timings"."""
    main = len(types) if main is None else main
    ops, errs, lat, hist = {}, {}, {}, {}
    merged: dict[int, int] = {}
    timings = {}
    for name, c, p in zip(types[main:], cur[main:], prev[main:]):
        h = [x - y for x, y in zip(c[2:], p[2:])]
        timings[name] = {"n": c[0] - p[0], "errors": c[1] - p[1],
                         **events.percentiles(events.sparse(h))}
    for name, c, p in zip(types[:main], cur[:main], prev[:main]):
        ops[name] = c[0] - p[0]
        if c[1] - p[1]:
            errs[name] = c[1] - p[1]
        h = [x - y for x, y in zip(c[2:], p[2:])]
        sp = events.sparse(h)
        hist[name] = sp
        lat[name] = events.percentiles(sp)
        events.merge_sparse(merged, sp)
    lat["all"] = events.percentiles(merged)
    body = {"ops": ops, "errors": errs, "lat_ms": lat, "hist": hist}
    if timings:
        body["timings"] = timings
    return body


def _txns(counters: dict) -> float:
    """PostgreSQL's transactions in a read of the server counters."""
    return counters.get("xact_commit", 0) + counters.get("xact_rollback", 0)


def _perf_per_op(perf: dict, ops: int) -> dict:
    """The server's software (and hardware) event counts per operation of the phase."""
    if not ops:
        return {}
    sw, hw = perf.get("software") or {}, perf.get("hardware") or {}
    out = {}
    if sw.get("task_clock_ms") is not None:
        out["task_clock_us"] = round(sw["task_clock_ms"] * 1000.0 / ops, 3)
    for key in ("context_switches", "page_faults"):
        if sw.get(key) is not None:
            out[key] = round(sw[key] / ops, 4)
    if hw.get("instructions"):
        out["instructions"] = round(hw["instructions"] / ops, 1)
    return out
