"""The agent's run engine: one writer of sequenced events, a 1-second sampler, and virtual
users as processes that count operations and latency into shared memory.

Virtual users never send events themselves: each owns a slot of counters and a latency
histogram in a shared array, and the sampler thread turns the growth of those arrays into
one `sample` event per second. That keeps the hot loop free of IPC.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import resource
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from typing import Any, Callable, Sequence

from . import events
from .db import DatabaseError, ServerCounters, TargetInfo, delta
from .sampler import host_interval, proc_cpu_seconds, read_proc

AGENT_VERSION = "0.1.0"
SLOT = 2 + events.N_BUCKETS          # [ops, errors, hist...] per (vu, txn type)


class StopRun(Exception):
    """The user asked the run to stop."""


class Emitter:
    """Assigns sequence numbers and writes each event to the spool (and stdout if asked)."""

    def __init__(self, spool_path: str, echo: bool, t0: float):
        self._f = open(spool_path, "ab", buffering=0)
        self._echo = echo
        self._lock = threading.Lock()
        self._seq = 0
        self.t0 = t0

    def now(self) -> float:
        return time.monotonic() - self.t0

    def emit(self, kind: str, **body: Any) -> dict:
        with self._lock:
            self._seq += 1
            ev = {"v": events.FORMAT_VERSION, "seq": self._seq, "t": round(self.now(), 4),
                  "kind": kind, **body}
            line = events.encode(ev)
            self._f.write(line)
            if self._echo:
                try:
                    sys.stdout.buffer.write(line)
                    sys.stdout.flush()
                except (BrokenPipeError, ValueError, OSError):
                    self._echo = False       # the reader went away; the spool still has it
            return ev

    def close(self) -> None:
        self._f.close()


class VU:
    """What a virtual-user process sees: its slot, the target, the stop flag."""

    def __init__(self, index: int, target: TargetInfo, params: dict, arr, ntypes: int,
                 stop, go, ready, errq, rusage, server_counts):
        self.index, self.target, self.params = index, target, params
        self.arr, self.ntypes = arr, ntypes
        self.stop, self._go, self._ready, self._errq, self._rusage = stop, go, ready, errq, rusage
        self._server_counts = server_counts
        self.rng = random.Random(os.getpid() ^ int(time.time() * 1e6))
        # optional workload counters (run_clients(counters=...)): carr[cbase + k]
        self.carr, self.cbase = None, 0
        self._ru0 = None

    def base(self, txn: int) -> int:
        """Index of this VU's ops counter for a transaction type; errors at +1, histogram at +2."""
        return (self.index * self.ntypes + txn) * SLOT

    def wait_for_go(self) -> bool:
        """Report ready, then block until the phase starts; False if told to stop instead."""
        self._ready[self.index] = 1
        while not self._go.value:
            if self.stop.value:
                return False
            time.sleep(0.002)
        # CPU is counted from here: connecting and preparing are not the phase's work
        self._ru0 = resource.getrusage(resource.RUSAGE_SELF)
        return not self.stop.value

    def report_error(self, message: str) -> None:
        try:
            self._errq.put_nowait((self.index, message[:500]))
        except Exception:
            pass

    def report_server_count(self, n: int) -> None:
        """The server's own count of this connection's operations (e.g. SHOW SESSION STATUS),
        which no other client of a shared server can disturb."""
        self._server_counts[self.index] = n

    def finish(self) -> None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        u0, s0 = (self._ru0.ru_utime, self._ru0.ru_stime) if self._ru0 else (0.0, 0.0)
        self._rusage[2 * self.index] = ru.ru_utime - u0
        self._rusage[2 * self.index + 1] = ru.ru_stime - s0


def _vu_entry(fn, vu: VU, parent: int) -> None:
    try:
        fn(vu)
    except DatabaseError as exc:
        vu.report_error(str(exc))
    except Exception as exc:  # a workload bug must reach the user, not vanish with the process
        vu.report_error(f"virtual user {vu.index + 1} failed: {exc!r}\n{traceback.format_exc()}")
    finally:
        vu.finish()


class Phase:
    """Counter state of the phase that virtual users are running now."""

    def __init__(self, name: str, types: Sequence[str], arr, nvu: int,
                 counters: Sequence[str] = (), carr=None, rate=None):
        self.name, self.types, self.arr, self.nvu = name, list(types), arr, nvu
        self.counters, self.carr, self.rate = list(counters), carr, rate
        self.procs: list = []
        self.vu_first = [[0, 0]] * nvu
        self.last = self.snapshot()
        self.first = self.last
        self.vu_first = [r[:2] for r in self.per_vu()]
        self.clast = self.cfirst = self.csnapshot()
        self.last_t = 0.0
        self.started_t = 0.0

    def snapshot(self) -> list[list[int]]:
        """Per type: [ops, errors, hist...] summed over virtual users."""
        n = len(self.types)
        out = []
        a = self.arr
        for ti in range(n):
            acc = [0] * SLOT
            for v in range(self.nvu):
                b = (v * n + ti) * SLOT
                row = a[b:b + SLOT]
                acc = [x + y for x, y in zip(acc, row)]
            out.append(acc)
        return out

    def per_vu(self) -> list[list]:
        """Per virtual user: [operations, errors, state] since the phase started."""
        n = len(self.types)
        a, first, out = self.arr, self.vu_first, []
        for v in range(self.nvu):
            ops = sum(a[(v * n + ti) * SLOT] for ti in range(n))
            err = sum(a[(v * n + ti) * SLOT + 1] for ti in range(n))
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


def _diff_body(types, cur, prev) -> dict:
    ops, errs, lat, hist = {}, {}, {}, {}
    merged: dict[int, int] = {}
    for name, c, p in zip(types, cur, prev):
        ops[name] = c[0] - p[0]
        if c[1] - p[1]:
            errs[name] = c[1] - p[1]
        h = [x - y for x, y in zip(c[2:], p[2:])]
        sp = events.sparse(h)
        hist[name] = sp
        lat[name] = events.percentiles(sp)
        events.merge_sparse(merged, sp)
    lat["all"] = events.percentiles(merged)
    return {"ops": ops, "errors": errs, "lat_ms": lat, "hist": hist}


class Agent:
    """Runs one workload: phases, virtual users, sampling, summary, end."""

    def __init__(self, run_id: str, spec: dict, target: TargetInfo, emitter: Emitter,
                 unit: str):
        self.run_id, self.spec, self.target, self.em = run_id, spec, target, emitter
        self.params: dict = spec["params"]
        self.unit = unit
        self.stop_requested = threading.Event()
        self._lock = threading.Lock()
        self._phase: Phase | None = None
        self._vu_pids: list[int] = []
        self._cpu_seen: dict[int, tuple[float, float]] = {}
        self._counters: ServerCounters | None = None
        self._counters_lock = threading.Lock()
        self._last_db: dict[str, int] | None = None
        self._sampler = threading.Thread(target=self._sample_loop, name="sampler", daemon=True)
        self._sampler_stop = threading.Event()

    # --- events -------------------------------------------------------------------------
    def log(self, message: str, level: str = "info") -> None:
        self.em.emit("log", level=level, message=message)

    def progress(self, phase: str, done: int, total: int, unit: str = "rows") -> None:
        self.em.emit("progress", phase=phase, done=done, total=total, unit=unit)

    def check_stop(self) -> None:
        if self.stop_requested.is_set():
            raise StopRun()

    @contextmanager
    def phase(self, name: str, planned_s: float | None = None, **extra):
        if planned_s is not None:
            extra["planned_s"] = planned_s
        self.em.emit("phase", name=name, state="start", **extra)
        t = self.em.now()
        try:
            yield
        finally:
            self.em.emit("phase", name=name, state="end", duration_s=round(self.em.now() - t, 3))

    # --- sampling -----------------------------------------------------------------------
    def start_sampling(self) -> None:
        try:
            self._counters = ServerCounters(self.target)
            self._last_db = self._counters.read()
        except DatabaseError as exc:
            self._counters = None
            self.log(f"server counters unavailable: {exc}", "warning")
        self._sampler.start()

    def stop_sampling(self) -> None:
        self._sampler_stop.set()
        if self._sampler.is_alive():
            self._sampler.join(5)
        if self._counters:
            self._counters.close()

    def _driver_cpu_delta(self) -> tuple[float, float]:
        pids = [os.getpid()] + self._vu_pids
        du = ds = 0.0
        for pid in pids:
            u, s = proc_cpu_seconds([pid])
            if u == 0 and s == 0 and pid not in self._cpu_seen:
                continue
            pu, ps = self._cpu_seen.get(pid, (0.0, 0.0))
            if (u, s) != (0.0, 0.0):
                du += max(0.0, u - pu); ds += max(0.0, s - ps)
                self._cpu_seen[pid] = (u, s)
        return du, ds

    def _read_db(self) -> dict[str, int] | None:
        if not self._counters:
            return None
        with self._counters_lock:
            try:
                return self._counters.read()
            except Exception as exc:
                self.log(f"server counters stopped: {exc}", "warning")
                self._counters = None
                return None

    def _sample_loop(self) -> None:
        prev = read_proc()
        prev_t = self.em.now()
        next_tick = float(int(prev_t)) + 1.0
        while not self._sampler_stop.is_set():
            wait = next_tick - self.em.now()
            if wait > 0 and self._sampler_stop.wait(wait):
                break
            next_tick += 1.0
            cur = read_proc()
            now = self.em.now()
            body = host_interval(prev, cur, now - prev_t)
            du, ds = self._driver_cpu_delta()
            body["driver_cpu"] = {"user_s": round(du, 4), "system_s": round(ds, 4)}
            self.em.emit("host", interval=[round(prev_t, 4), round(now, 4)], **body)
            prev, prev_t = cur, now
            db = self._read_db()
            if db is not None and self._last_db is not None:
                d = delta(db, self._last_db)
                self._last_db = db
                extra = {"own_xacts": 1} if self.target.dialect == "postgres" else {}
                self.em.emit("db", interval=[round(now - 1.0, 4), round(now, 4)],
                             source=self._counters.source if self._counters else "",
                             counters=d, **extra)
            with self._lock:
                self._emit_sample_locked()

    def _emit_sample_locked(self) -> dict | None:
        ph = self._phase
        if ph is None:
            return None
        cur = ph.snapshot()
        ccur = ph.csnapshot()
        now = self.em.now()
        body = _diff_body(ph.types, cur, ph.last)
        total = sum(body["ops"].values())
        span = max(now - ph.last_t, 1e-6)
        rate = total / span
        if ph.counters:
            body["counters"] = {k: c - p for k, c, p in zip(ph.counters, ccur, ph.clast)}
        if ph.rate is not None:
            rate = ph.rate(body["ops"], body.get("counters", {}), span)
        ev = self.em.emit("sample", phase=ph.name, interval=[round(ph.last_t, 4), round(now, 4)],
                          rate=round(rate, 2), unit=self.unit, clients=ph.nvu,
                          vus=ph.per_vu() if ph.nvu <= 256 else None, **body)
        ph.last, ph.last_t, ph.clast = cur, now, ccur
        return ev

    # --- virtual users ------------------------------------------------------------------
    def run_clients(self, name: str, fn: Callable[[VU], None], clients: int, seconds: float,
                    types: Sequence[str], counters: Sequence[str] = (),
                    rate: Callable[[dict, dict, float], float] | None = None,
                    summary_extra: Callable[[dict], dict] | None = None,
                    vu_info: Sequence[dict] | None = None) -> dict:
        """Run `clients` processes of `fn` for `seconds`; emit samples and the phase summary.

        Optional hooks for workloads with more than ops by type (TPROC-C):
        `counters` names per-VU counters a VU adds to at vu.carr[vu.cbase + k]; their
        growth is in every sample and the summary under "counters". `rate(ops, counters,
        seconds)` gives the sample's and the summary's `rate` in the workload's unit
        (default: all ops per second). `summary_extra(summary)` runs after the virtual users
        ended and the server counters settled; the dict it returns is merged into the
        summary before it is emitted. `vu_info` describes each virtual user (for example its
        home warehouse) in the phase's start event.
        """
        ctx = mp.get_context("fork")
        ntypes = len(types)
        arr = ctx.RawArray("Q", clients * ntypes * SLOT)
        ncount = len(counters)
        carr = ctx.RawArray("Q", max(1, clients * ncount)) if ncount else None
        stop, go = ctx.RawValue("b", 0), ctx.RawValue("b", 0)
        ready = ctx.RawArray("b", clients)
        rusage = ctx.RawArray("d", 2 * clients)
        server_counts = ctx.RawArray("q", [-1] * clients)
        errq = ctx.Queue()
        procs = []
        info = {"vus": list(vu_info)} if vu_info else {}
        with self.phase(name, planned_s=seconds, **info):
            for i in range(clients):
                vu = VU(i, self.target, self.params, arr, ntypes, stop, go, ready, errq, rusage,
                        server_counts)
                if ncount:
                    vu.carr, vu.cbase = carr, i * ncount
                p = ctx.Process(target=_vu_entry, args=(fn, vu, os.getpid()), daemon=True,
                                name=f"versus-vu{i + 1}")
                p.start()
                procs.append(p)
            self._vu_pids = [p.pid for p in procs]
            try:
                self._wait_ready(procs, ready, errq)
            except BaseException:
                stop.value = 1
                self._reap(procs)
                raise
            server_before = self._settle_counters(None)
            polls_before = self._counters.polls if self._counters else 0
            t_go = self.em.now()
            with self._lock:
                ph = Phase(name, types, arr, clients, counters, carr, rate)
                ph.procs = procs
                ph.last_t = ph.started_t = t_go
                self._phase = ph
            go.value = 1
            status = "ok"
            deadline = time.monotonic() + seconds
            try:
                while time.monotonic() < deadline:
                    if self.stop_requested.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                        status = "stopped"
                        break
                    self._drain_errors(errq)
                    if not any(p.is_alive() for p in procs):
                        status = "failed"
                        break
            finally:
                t_end = self.em.now()
                stop.value = 1
                self._reap(procs)
                # after the reap, so queries finishing after the stop are in a sample too
                with self._lock:
                    self._emit_sample_locked()
                    self._phase = None
                self._drain_errors(errq)
            server_after = self._settle_counters(server_before)
            own_polls = (self._counters.polls - polls_before) if self._counters else 0
            summary = self._summary(name, types, ph, t_go, t_end, server_before, server_after,
                                    own_polls, rusage, clients)
            if all(c >= 0 for c in server_counts):
                # per-connection counters beat server-wide ones on a shared server
                srv = summary.setdefault("server", {})
                if srv:
                    srv["server_wide"] = {k: srv.pop(k) for k in ("source", "delta", "rate")
                                          if k in srv}
                n = sum(server_counts)
                srv.update({"source": "SHOW SESSION STATUS of the virtual users' connections",
                            "delta": n, "rate": round(n / summary["duration_s"], 2)})
            if summary_extra is not None:
                try:
                    summary.update(summary_extra(summary) or {})
                except DatabaseError as exc:
                    self.log(f"could not complete the {name} summary: {exc}", "warning")
            self.em.emit("summary", **summary)
            self._vu_pids = []
        if status == "failed":
            raise DatabaseError("every virtual user stopped; see the errors above")
        if status == "stopped":
            raise StopRun()
        return summary

    def _wait_ready(self, procs, ready, errq) -> None:
        deadline = time.monotonic() + 60
        while not all(ready[:]):
            if self.stop_requested.is_set():
                raise StopRun()
            dead = [p for p in procs if not p.is_alive()]
            if dead:
                msgs = self._drain_errors(errq)
                first = msgs[0].split("\n")[0] if msgs else "a virtual user exited before starting"
                raise DatabaseError(first)
            if time.monotonic() > deadline:
                raise DatabaseError("virtual users did not connect within 60 s")
            time.sleep(0.01)

    def _drain_errors(self, errq) -> list[str]:
        msgs = []
        while True:
            try:
                idx, msg = errq.get_nowait()
            except Exception:
                break
            msgs.append(msg)
            self.em.emit("error", message=msg, fatal=False, vu=idx + 1)
        return msgs

    def _reap(self, procs) -> None:
        for p in procs:
            p.join(10)
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(2)

    def _settle_counters(self, before: dict | None) -> dict | None:
        """Read server counters; after a phase, wait until ended backends have flushed."""
        cur = self._read_db()
        if before is None or cur is None or self.target.dialect != "postgres":
            return cur
        # PostgreSQL backends flush their statistics on exit, a moment after disconnect.
        for _ in range(30):
            time.sleep(0.1)
            nxt = self._read_db()
            if nxt is None:
                return cur
            if nxt.get("xact_commit", 0) - cur.get("xact_commit", 0) <= 1:
                return nxt
            cur = nxt
        return cur

    def _summary(self, name, types, ph: Phase, t_go, t_end, before, after, own_polls, rusage,
                 clients):
        final = ph.snapshot()
        body = _diff_body(types, final, ph.first)
        total = sum(body["ops"].values())
        dur = max(t_end - t_go, 1e-6)
        cpu_u = sum(rusage[0::2]); cpu_s = sum(rusage[1::2])
        if ph.counters:
            body["counters"] = {k: c - p for k, c, p in
                                zip(ph.counters, ph.csnapshot(), ph.cfirst)}
        out = {"phase": name, "interval": [round(t_go, 4), round(t_end, 4)],
               "duration_s": round(dur, 3), "clients": clients, "ops_total": total,
               "rate": round(total / dur, 2), "unit": self.unit,
               "errors_total": sum(body["errors"].values()), **body,
               "driver_cpu": {"user_s": round(cpu_u, 4), "system_s": round(cpu_s, 4),
                              "us_per_op": round((cpu_u + cpu_s) * 1e6 / total, 2) if total else None,
                              "source": "getrusage of the virtual-user processes from the phase start"}}
        if ph.rate is not None:
            out["rate"] = round(ph.rate(body["ops"], body.get("counters", {}), dur), 2)
        if before is not None and after is not None:
            d = delta(after, before)
            if self.target.dialect == "postgres":
                # each counter poll during the phase is itself a committed transaction
                polls = own_polls
                counter = "xact_commit + xact_rollback"
                value = d.get("xact_commit", 0) + d.get("xact_rollback", 0)
                out["server"] = {"source": "pg_stat_database", "counter": counter,
                                 "delta_raw": value, "own_polls": polls,
                                 "delta": value - polls, "rate": round((value - polls) / dur, 2),
                                 "counters": d}
            else:
                value = d.get("Com_select", 0) if self.unit == "QPS" else \
                    d.get("Com_commit", 0) + d.get("Com_rollback", 0)
                out["server"] = {"source": "SHOW GLOBAL STATUS",
                                 "counter": "Com_select" if self.unit == "QPS" else
                                 "Com_commit + Com_rollback",
                                 "delta": value, "rate": round(value / dur, 2), "counters": d}
        return out
