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
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from typing import Any, Callable, Sequence

from .. import events
from .measure.counters import ServerCounters, interval_counters
from .sql.db import ConnectionLost, DatabaseError, TargetInfo, pg_ended_backends, pg_report_stats
from .measure.outage import Outages, classify, run_reconnecting
from .measure.clientload import ClientWatch, PhaseClient
from .measure.perf import PerfCaps, PerfStat, Profile, probe
from .measure.procgroups import (DRIVER, MONITOR, TICK, ProcGroups, ServerProcs, cap_other,
                                 locate_server, percent)
from .measure.sampler import PhaseWindow, around, host_interval, read_cpu, read_proc
from ..params import PlannedPhase, WorkloadSpec

AGENT_VERSION = "0.1.0"
SLOT = 2 + events.N_BUCKETS          # [ops, errors, hist...] per (vu, txn type)
BACKENDS_PER_VU = 4                  # the PostgreSQL backends a phase's end waits for, per VU


class StopRun(Exception):
    """The user asked the run to stop."""


class Emitter:
    """Assigns sequence numbers and writes each event to the spool (and stdout if asked)."""

    def __init__(self, spool_path: str, echo: bool, t0: float):
        self.spool_path = spool_path
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
                 stop, go, ready, errq, rusage, server_counts, backends=None):
        self.index, self.target, self.params = index, target, params
        self.arr, self.ntypes = arr, ntypes
        self.stop, self._go, self._ready, self._errq, self._rusage = stop, go, ready, errq, rusage
        self._server_counts = server_counts
        self._backends = backends
        self.rng = random.Random(os.getpid() ^ int(time.time() * 1e6))
        # optional workload counters (run_clients(counters=...)): carr[cbase + k]
        self.carr, self.cbase = None, 0
        # run_clients(timings=...): timing k has its slot at base(timing0 + k)
        self.timing0 = ntypes
        self._ru0 = None
        # reconnect=on (workloads.engine.measure.outage): the phase started; the connection is lost now;
        # it was lost at least once (the server's per-connection counts then miss some)
        self.t0 = 0.0                     # the run clock's origin (Emitter.t0)
        self.started = self.down = self.reconnected = False

    def base(self, txn: int) -> int:
        """Index of this VU's ops counter for a transaction type; errors at +1, histogram at +2."""
        return (self.index * self.ntypes + txn) * SLOT

    def wait_for_go(self) -> bool:
        """Report ready, then block until the phase starts; False if told to stop instead.

        On PostgreSQL the VU's connections first report their statistics (what connecting
        and preparing did is not the phase's work), and their backends are named for the
        phase's end to wait for. A virtual user that reconnected (reconnect=on) is told to
        go on at once."""
        if self.target.dialect == "postgres":
            pids = pg_report_stats()[:BACKENDS_PER_VU]
            if self._backends is not None:
                for k, pid in enumerate(pids):
                    self._backends[self.index * BACKENDS_PER_VU + k] = pid
        if self.started:
            if self.down:
                self.down = False
                self._report({"outage": "back", "t": time.monotonic() - self.t0})
            return not self.stop.value
        self._ready[self.index] = 1
        while not self._go.value:
            if self.stop.value:
                return False
            time.sleep(0.002)
        # CPU is counted from here: connecting and preparing are not the phase's work
        self._ru0 = resource.getrusage(resource.RUSAGE_SELF)
        self.started = True
        return not self.stop.value

    def report_error(self, message: str) -> None:
        self._report(message[:500])

    def _report(self, what: str | dict) -> None:
        try:
            self._errq.put_nowait((self.index, what))
        except Exception:
            pass

    def connection_lost(self, message: str) -> None:
        """The VU's database connection is gone: raises ConnectionLost, which ends the VU
        with that sentence, or with reconnect=on starts an outage (workloads.engine.measure.outage)."""
        raise ConnectionLost(message)

    def connection_failed(self, message: str) -> None:
        """reconnect=on: the connection was lost, or a try to get it back failed."""
        self.down = self.reconnected = True
        self._server_counts[self.index] = -1      # its connection's own count is incomplete
        self._report({"outage": "error", "t": time.monotonic() - self.t0,
                      "class": classify(message), "message": message})

    def report_server_count(self, n: int) -> None:
        """The server's own count of this connection's operations (e.g. SHOW SESSION STATUS),
        which no other client of a shared server can disturb."""
        if not self.reconnected:
            self._server_counts[self.index] = n

    def finish(self) -> None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        u0, s0 = (self._ru0.ru_utime, self._ru0.ru_stime) if self._ru0 else (0.0, 0.0)
        self._rusage[2 * self.index] = ru.ru_utime - u0
        self._rusage[2 * self.index + 1] = ru.ru_stime - s0


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """End this forked process when the agent `parent` dies, even by SIGKILL: the kernel
    kills it on the parent's death (Linux prctl); elsewhere a thread watches the parent's
    pid. Costs a virtual user's hot loop nothing. SIGKILL, because nothing a dead agent
    would read is left to tidy, and it ends a VU that waits inside a blocking libpq call,
    where a Python handler would only run once the call returned."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGKILL)
        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if os.getppid() != parent:          # it died before the signal was armed
        os.kill(os.getpid(), signal.SIGKILL)


def _words(shared) -> memoryview:
    """A ctypes array of unsigned 64-bit integers as a memoryview of the same memory."""
    return memoryview(shared).cast("B").cast("Q")


def _vu_entry(fn, vu: VU, parent: int) -> None:
    # The agent's handlers came with the fork: SIGTERM would only set the VU's copy of the
    # agent's stop event. By default it ends the VU at once, even inside a blocking libpq
    # call, and the agent names the signal. Ctrl-C in a terminal is for the agent.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    # The counters a VU adds to after every operation, as memoryviews of the same shared
    # memory: cheaper per access than a ctypes array, and less code for a loop that waits
    # on the server between operations to bring back into the CPU's caches.
    vu.arr = _words(vu.arr)
    if vu.carr is not None:
        vu.carr = _words(vu.carr)
    try:
        if vu.params.get("reconnect"):
            run_reconnecting(fn, vu)
        else:
            fn(vu)
    except DatabaseError as exc:
        vu.report_error(str(exc))
    except Exception as exc:  # a workload bug must reach the user, not vanish with the process
        vu.report_error(f"virtual user {vu.index + 1} failed: {exc!r}\n{traceback.format_exc()}")
    finally:
        vu.finish()


class LostClients:
    """Virtual users that ended before their phase did: which, when and why, for the run's
    log, the phase summary, a flag every view shows, and the run's reason."""

    def __init__(self, name: str, asked: int, tolerate: bool, t_go: float):
        self.name, self.asked, self.tolerate, self.t_go = name, asked, tolerate, t_go
        self.lost: list[dict] = []
        self.last_error: dict[int, str] = {}        # VU index -> its last reported error

    def note(self, index: int, exitcode: int | None, t: float) -> dict:
        if exitcode is not None and exitcode < 0:
            try:
                why = f"killed by {signal.Signals(-exitcode).name}"
            except ValueError:
                why = f"killed by signal {-exitcode}"
        elif index in self.last_error:
            why = self.last_error[index].split("\n")[0]
        else:
            why = f"its process ended (exit code {exitcode})"
        entry = {"vu": index + 1, "t": round(t, 3), "after_s": round(t - self.t_go, 2),
                 "why": why}
        self.lost.append(entry)
        return entry

    def lost_indices(self) -> set[int]:
        return {e["vu"] - 1 for e in self.lost}

    def sentence(self, e: dict) -> str:
        return (f"virtual user {e['vu']} of {self.name} was lost {e['after_s']:.1f} s into "
                f"the phase: {e['why']}")

    def _list(self) -> str:
        return "; ".join(f"virtual user {e['vu']} at {e['after_s']:.1f} s ({e['why']})"
                         for e in self.lost)

    def reason(self, work_unit: str = "") -> str:
        """The run's failure: a VU lost where none may be, or none left to measure."""
        if len(self.lost) == self.asked:
            return f"every virtual user of {self.name} was lost: {self._list()}"
        head = (f"{len(self.lost)} of {self.asked} virtual users of {self.name} lost: "
                f"{self._list()}")
        if work_unit:
            return f"{head}; their share of the {work_unit} would never be done"
        return f"{head}; tolerate-lost-clients=on goes on without them"

    def summary(self) -> dict:
        if not self.lost:
            return {"clients_asked": self.asked, "clients_live": self.asked}
        return {"clients_asked": self.asked, "clients_live": self.asked - len(self.lost),
                "clients_lost": self.lost}

    def flag(self, failed: bool) -> dict | None:
        if not self.lost:
            return None
        live = self.asked - len(self.lost)
        tail = ("the run failed" if failed else
                f"tolerated (tolerate-lost-clients=on): {live} of {self.asked} ran to the end")
        return {"name": "lost clients", "severity": "fail" if failed else "warn",
                "detail": f"{len(self.lost)} of {self.asked} virtual users lost: "
                          f"{self._list()}; {tail}"}


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


class Agent:
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
        self.em.emit("summary", phase=phase, interval=[round(max(0.0, now - seconds), 4),
                                                       round(now, 4)],
                     duration_s=round(seconds, 3), ops_total=total, rate=round(total / seconds, 1) if seconds else None,
                     unit="rows/s", rows_total=total, ops={}, errors={}, hist={}, lat_ms={},
                     errors_total=0, **extra)

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

    # --- sampling -----------------------------------------------------------------------
    def start_sampling(self) -> None:
        try:
            self._counters = ServerCounters(self.target)
            self._last_db = self._counters.read()
            self._last_db_t = self.em.now()
            self._last_db_own = self._counters.own_at_read
            self.log(f"server counters: {self._counters.describe()}")
        except Exception as exc:       # a run goes on without them, and says so
            self._counters = None
            self.log(f"server counters unavailable: {exc}", "warning")
        self._locate_server()
        self._groups = ProcGroups(os.getpid(), self._server_procs)
        self._groups.sample()
        self._probe_perf()
        self._sampler.start()

    def _perf_stat_on(self) -> bool:
        return bool((self.spec.get("perf") or {}).get("stat", self.workload.perf_stat))

    def _probe_perf(self) -> None:
        opts = self.spec.get("perf") or {}
        if not self._perf_stat_on() and not opts.get("profile_s"):
            self.log("perf counters: off (counting each context switch of the server costs "
                     "throughput); turn them on with --perf or Server perf counters in the "
                     "run panel")
            return
        assert self._groups is not None
        self._perf = probe(self._groups.server_pids(), self._server_note)
        caps = self._perf
        if not caps.software:
            self.log(f"perf counters: not available: {caps.reason}")
        elif caps.hardware_reason:
            self.log(f"perf counters: software events of the server's processes; hardware "
                     f"counters not available: {caps.hardware_reason}")
        else:
            self.log("perf counters: software and hardware events of the server's processes")

    def _start_perf(self, seconds: float) -> tuple[PerfStat | None, Profile | None]:
        opts = self.spec.get("perf") or {}
        if not self._perf.software or self._groups is None:
            return None, None
        pids = self._groups.server_pids
        # perf's files in the run's folder: its command line names the run
        workdir = os.path.dirname(os.path.abspath(self.em.spool_path))
        stat = None
        if self._perf_stat_on():
            stat = PerfStat(self._perf, pids, workdir)
            stat.start()
        prof = None
        if float(opts.get("profile_s") or 0) > 0:
            groups = self._groups
            prof = Profile(self._perf, pids, min(float(opts["profile_s"]), seconds),
                           call_graph=opts.get("call_graph", "dwarf"),
                           label=lambda tid, comm: groups.group_of_task(tid) or comm,
                           workdir=workdir)
            prof.start()
        return stat, prof

    def _finish_perf(self, name: str, stat: PerfStat | None, prof: Profile | None) -> dict:
        """The phase summary's `perf`; the profile goes out as its own event."""
        if prof is not None:
            self.em.emit("profile", phase=name, **prof.finish())
        if stat is not None:
            return stat.stop()
        if self._perf_stat_on():
            return {"unavailable": self._perf.reason or "perf did not start"}
        return {}

    def _locate_server(self) -> None:
        if self._counters is None:
            self._server_note = ("the server's processes are not split out: there is no "
                                 "monitoring connection")
            return
        with self._counters_lock:
            try:
                self._server_procs, self._server_note = locate_server(
                    self.target, self._counters.session, self._counters_lock)
            except Exception as exc:       # never fail a run over its CPU split
                self._server_procs = None
                self._server_note = f"the server's processes were not found: {exc}"
        what = self._server_procs.describe if self._server_procs else self._server_note
        self.log(f"CPU by process group: server: {what}; driver: agent {os.getpid()} and "
                 f"the processes it starts")

    def open_cpu_window(self, t0: float) -> PhaseWindow:
        w = PhaseWindow(t0)
        with self._windows_lock:
            self._windows.append(w)
        return w

    def close_cpu_window(self, w: PhaseWindow, t_end: float) -> dict | None:
        with self._windows_lock:
            if w in self._windows:
                self._windows.remove(w)
        out = w.close(t_end)
        if out is not None:
            out["server"] = (self._server_procs.describe if self._server_procs
                             else self._server_note)
        return out

    def stop_sampling(self) -> None:
        self._sampler_stop.set()
        if self._sampler.is_alive():
            self._sampler.join(5)
        if self._counters:
            self._counters.close()

    def _read_db(self, mark: bool = False) -> dict[str, float] | None:
        if not self._counters:
            return None
        with self._counters_lock:
            try:
                got = self._counters.mark() if mark else self._counters.read()
                self._db_own_read = self._counters.own_at_read
                return got
            except Exception as exc:
                again = bool(self.params.get("reconnect"))
                self.log(f"server counters stopped: {exc}"
                         + ("; connecting again (reconnect=on)" if again else ""), "warning")
                self._counters.close()
                self._counters = None
                self._counters_retry_at = time.monotonic() + 1.0 if again else None
                return None

    def _reconnect_counters(self) -> None:
        """reconnect=on: after an outage, a new monitoring connection and a new baseline."""
        if self._counters is not None or self._counters_retry_at is None \
                or time.monotonic() < self._counters_retry_at:
            return
        try:
            counters = ServerCounters(self.target)
            first = counters.read()
        except Exception:
            self._counters_retry_at = time.monotonic() + 2.0
            return
        with self._counters_lock:
            self._counters, self._counters_retry_at = counters, None
            self._counters_epoch += 1
            self._last_db, self._last_db_t = first, self.em.now()
            self._last_db_own = self._db_own_read = counters.own_at_read
        self.log("server counters: connected again after the outage; the phase that had "
                 "the outage has no server count (a restarted server counts from zero)")
        self._relocate_server()

    def _relocate_server(self) -> None:
        """After an outage: a server that restarted runs as new processes; find them, so its
        CPU is not counted under other for the rest of the run."""
        old = self._server_procs
        if old is None or self._groups is None or os.path.exists(f"/proc/{old.pid}"):
            return
        self._locate_server()
        new = self._server_procs
        self._groups.set_server(new)
        if new is not None:
            self.log(f"CPU by process group: the server restarted (process {old.pid} ended, "
                     f"now {new.pid}); its CPU counts under server again from here")

    def _sample_loop(self) -> None:
        groups = self._groups or ProcGroups(os.getpid(), self._server_procs)
        groups.monitor_tid = threading.get_native_id()
        watch = ClientWatch(os.getpid())
        prev = read_proc()
        groups.sample()
        watch.start(groups.driver_pids())
        prev = around(prev, read_cpu())
        prev_t = self.em.now()
        cpu_mark = time.thread_time()
        next_tick = float(int(prev_t)) + 1.0
        while not self._sampler_stop.is_set():
            wait = next_tick - self.em.now()
            if wait > 0 and self._sampler_stop.wait(wait):
                break
            next_tick += 1.0
            cur = read_proc()
            by_group = groups.sample() or {}
            cur = around(cur, read_cpu())
            now = self.em.now()
            body = host_interval(prev, cur, now - prev_t)
            ticks = sum(cur["cpu"]) - sum(prev["cpu"])
            modes = [c - q for c, q in zip(cur["cpu"], prev["cpu"])]
            capped = cap_other(by_group, ticks - modes[3] - modes[4] - modes[7],
                               os.cpu_count() or 1)          # idle, iowait, steal
            du = sum(by_group.get(g, (0, 0))[0] for g in (DRIVER, MONITOR)) / TICK
            ds = sum(by_group.get(g, (0, 0))[1] for g in (DRIVER, MONITOR)) / TICK
            body["driver_cpu"] = {"user_s": round(du, 4), "system_s": round(ds, 4)}
            body["client"] = watch.interval(now - prev_t, groups.driver_pids(),
                                            list(self._vu_pids), groups.foreground_tasks())
            body["cpu_groups"] = percent(by_group, ticks)
            if capped:
                body["cpu_groups_other_capped"] = round(100.0 * capped / (ticks or 1), 2)
            body["cpu_groups_source"] = ("/proc/PID/stat of every process (ended ones through "
                                         "their parent's cutime)")
            body["cpu_groups_server"] = (self._server_procs.describe if self._server_procs
                                         else self._server_note)
            spent = time.thread_time()
            body["sampler_cpu_ms"] = round((spent - cpu_mark) * 1000, 2)
            cpu_mark = spent
            a, b = round(prev_t, 4), round(now, 4)
            with self._windows_lock:
                for w in self._windows:
                    w.add(a, b, by_group, ticks)
            self.em.emit("host", interval=[a, b], **body)
            client = self._client_phase
            warning = client.add(body["client"]) if client is not None else None
            if warning:
                self.log(warning, "warning", topic="client-limit")
            prev, prev_t = cur, now
            self._reconnect_counters()
            db = self._read_db()
            counters = self._counters
            if db is not None and self._last_db is not None and counters is not None:
                db_t = self.em.now()
                d = interval_counters(db, self._last_db, self.target.dialect)
                extra = {}
                if self.target.dialect == "postgres":
                    # the monitor's own transactions between the reads (polls, phase edges)
                    extra["own_xacts"] = self._db_own_read - self._last_db_own
                self.em.emit("db", interval=[round(self._last_db_t, 4), round(db_t, 4)],
                             source=counters.source, sources=counters.sources,
                             counters=d, gauges=counters.gauges, **extra)
                self._last_db, self._last_db_t = db, db_t
                self._last_db_own = self._db_own_read
            with self._lock:
                self._emit_sample_locked()

    def _emit_sample_locked(self) -> dict | None:
        ph = self._phase
        if ph is None:
            return None
        cur = ph.snapshot()
        ccur = ph.csnapshot()
        now = self.em.now()
        body = _diff_body(ph.types, cur, ph.last, ph.main)
        total = sum(body["ops"].values())
        span = max(now - ph.last_t, 1e-6)
        rate = total / span
        if ph.counters:
            body["counters"] = {k: c - p for k, c, p in zip(ph.counters, ccur, ph.clast)}
        if ph.rate is not None:
            rate = ph.rate(body["ops"], body.get("counters", {}), span)
        ev = self.em.emit("sample", phase=ph.name, interval=[round(ph.last_t, 4), round(now, 4)],
                          rate=round(rate, 2), unit=ph.unit, clients=ph.nvu - ph.lost,
                          vus=ph.per_vu() if ph.nvu <= 256 else None, **body)
        self._outages.sample(ev["interval"], ev["rate"])
        ph.last, ph.last_t, ph.clast = cur, now, ccur
        return ev

    # --- virtual users ------------------------------------------------------------------
    def run_clients(self, name: str, fn: Callable[[VU], None], clients: int, seconds: float,
                    types: Sequence[str], counters: Sequence[str] = (),
                    rate: Callable[[dict, dict, float], float] | None = None,
                    summary_extra: Callable[[dict], dict] | None = None,
                    vu_info: Sequence[dict] | None = None, timings: Sequence[str] = (),
                    work: tuple | None = None, session_counter: str = "") -> dict:
        """Run `clients` processes of `fn` for `seconds`; emit samples and the phase summary.

        Optional hooks for workloads with more than ops by type (TPROC-C):
        `counters` names per-VU counters a VU adds to at vu.carr[vu.cbase + k]; their
        growth is in every sample and the summary under "counters". `rate(ops, counters,
        seconds)` gives the sample's and the summary's `rate` in the workload's unit
        (default: all ops per second). `summary_extra(summary)` runs after the virtual users
        ended and the server counters settled; the dict it returns is merged into the
        summary before it is emitted. `vu_info` describes each virtual user (for example its
        home warehouse) in the phase's start event.

        `timings` name timed parts that are not operations of their own (the round trips of
        a transfer, background writes beside queries): a VU counts them at
        vu.base(vu.timing0 + k) like a type; samples and the summary carry them under
        "timings", out of the operations and the latency of "all".

        `work=(counter, total, unit)` ends the phase when the VUs' counter reaches total (a
        load of N rows) instead of after `seconds` (then a time limit; math.inf for none),
        with a progress event in that unit each second. The VUs stop adding at their share
        and wait for the end.

        `session_counter` names what the VUs report with vu.report_server_count when it is
        not the server-wide counter's own name (e.g. "Com_commit").
        """
        ctx = mp.get_context("fork")
        ntypes = len(types) + len(timings)
        arr = ctx.RawArray("Q", clients * ntypes * SLOT)
        ncount = len(counters)
        carr = ctx.RawArray("Q", max(1, clients * ncount)) if ncount else None
        stop, go = ctx.RawValue("b", 0), ctx.RawValue("b", 0)
        ready = ctx.RawArray("b", clients)
        rusage = ctx.RawArray("d", 2 * clients)
        server_counts = ctx.RawArray("q", [-1] * clients)
        backends = ctx.RawArray("i", clients * BACKENDS_PER_VU)
        errq = ctx.Queue()
        procs = []
        info = {"vus": list(vu_info)} if vu_info else {}
        planned = self.planned(name)
        unit = (planned.unit if planned is not None and planned.unit else self.unit)
        work_k = list(counters).index(work[0]) if work else None
        with self.phase(name, planned_s=None if work else seconds, **info):
            for i in range(clients):
                vu = VU(i, self.target, self.params, arr, ntypes, stop, go, ready, errq, rusage,
                        server_counts, backends)
                vu.timing0 = len(types)
                vu.t0 = self.em.t0
                if ncount:
                    vu.carr, vu.cbase = carr, i * ncount
                p = ctx.Process(target=_vu_entry, args=(fn, vu, os.getpid()), daemon=True,
                                name=f"versus-vu{i + 1}")
                p.start()
                procs.append(p)
            self._vu_pids = [p.pid for p in procs]
            t_ready = time.monotonic()
            try:
                self._wait_ready(procs, ready, errq)
            except BaseException:
                stop.value = 1
                self._reap(procs)
                raise
            waited = time.monotonic() - t_ready
            if waited > 3.0 and self.params.get("reconnect"):
                self.log(f"{name}: the virtual users connected after {waited:.1f} s (the "
                         f"server did not accept connections); the phase starts now")
            server_before, own_before = self._server_edge()
            epoch = self._counters_epoch
            perf_stat, profile = self._start_perf(seconds)
            t_go = self.em.now()
            window = self.open_cpu_window(t_go)
            self._client_phase = PhaseClient(clients)
            self._outages.start_phase(name, clients, unit)
            with self._lock:
                ph = Phase(name, types, arr, clients, counters, carr, rate, timings)
                ph.unit = unit
                ph.procs = procs
                ph.last_t = ph.started_t = t_go
                self._phase = ph
            go.value = 1
            status = "ok"
            lost = LostClients(name, clients, bool(self.params.get("tolerate-lost-clients")),
                               t_go)
            deadline = time.monotonic() + seconds
            next_progress = 0.0
            try:
                while time.monotonic() < deadline:
                    if self.stop_requested.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                        status = "stopped"
                        break
                    if work is not None:
                        done = ph.csnapshot()[work_k]
                        if done >= work[1] or time.monotonic() >= next_progress:
                            next_progress = time.monotonic() + 1.0
                            self.progress(name, min(done, work[1]), work[1], work[2])
                        if done >= work[1]:
                            break
                    if self._watch_clients(procs, errq, lost, ph) and (
                            not lost.tolerate or work is not None or ph.lost == clients):
                        # a load's share would never be done; no client left to measure
                        status = "lost"
                        break
            finally:
                t_end = self.em.now()
                if status == "ok":          # one that ended just before the end is lost too
                    self._watch_clients(procs, errq, lost, ph)
                stop.value = 1
                self._reap(procs)
                # after the reap, so queries finishing after the stop are in a sample too
                with self._lock:
                    self._emit_sample_locked()
                    self._phase = None
                self._drain_errors(errq)
                outages = self._outages.end_phase(t_end)
            cpu_groups = self.close_cpu_window(window, t_end)
            client, self._client_phase = self._client_phase, None
            perf = self._finish_perf(name, perf_stat, profile)
            server_after, own_after = self._server_edge(backends[:], end=True)
            if self._counters_epoch != epoch:      # the monitor lost the server in between
                server_before = None
            own_polls = own_after - own_before
            summary = self._summary(name, types, ph, t_go, t_end, server_before, server_after,
                                    own_polls, rusage, clients)
            if cpu_groups:
                summary["cpu_groups"] = cpu_groups
            if client is not None and client.intervals:
                summary["client"] = client.summary()
            if perf:
                summary["perf"] = perf
                per_op = _perf_per_op(perf, summary.get("ops_total") or 0)
                if per_op:
                    perf["per_op"] = per_op
            if planned is not None and planned.role:
                summary["role"] = planned.role
            if outages:
                summary["outages"] = outages
            if all(c >= 0 for c in server_counts):
                # per-connection counters beat server-wide ones on a shared server
                srv = summary.setdefault("server", {})
                if srv:
                    srv["server_wide"] = {k: srv.pop(k) for k in ("source", "delta", "rate")
                                          if k in srv}
                    if session_counter:
                        srv["server_wide"]["counter"] = srv.get("counter")
                n = sum(server_counts)
                srv.update({"source": "SHOW SESSION STATUS of the virtual users' connections",
                            "delta": n, "rate": round(n / summary["duration_s"], 2)})
                if session_counter:
                    srv["counter"] = session_counter
            if summary_extra is not None:
                try:
                    summary.update(summary_extra(summary) or {})
                except DatabaseError as exc:
                    self.log(f"could not complete the {name} summary: {exc}", "warning")
            summary.update(lost.summary())
            flag = lost.flag(failed=status == "lost")
            if flag:
                summary["flags"] = [*(summary.get("flags") or []), flag]
            self.em.emit("summary", **summary)
            self._vu_pids = []
        if status == "lost":
            raise DatabaseError(lost.reason(work[2] if work else ""))
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

    def _watch_clients(self, procs, errq, lost: LostClients, ph: Phase) -> bool:
        """Drain the VUs' errors and note each VU that ended since the last look (with
        why: its signal, or the last error it reported); True when one did."""
        known = lost.lost_indices()
        gone = [i for i, p in enumerate(procs) if i not in known and not p.is_alive()]
        self._drain_errors(errq, lost.last_error)     # after: a VU's last words are in
        for i in gone:
            e = lost.note(i, procs[i].exitcode, self.em.now())
            self.log(lost.sentence(e), "warning", vu=e["vu"])
        ph.lost = len(lost.lost)
        return bool(gone)

    def _drain_errors(self, errq, last: dict[int, str] | None = None) -> list[str]:
        msgs = []
        while True:
            try:
                idx, msg = errq.get_nowait()
            except Exception:
                break
            if isinstance(msg, dict):           # reconnect=on: a lost connection or its return
                self._outages.report(idx, msg)
                continue
            msgs.append(msg)
            if last is not None:
                last[idx] = msg
            self.em.emit("error", message=msg, fatal=False, vu=idx + 1)
        return msgs

    def _reap(self, procs) -> None:
        for p in procs:
            p.join(10)
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(2)

    def _server_edge(self, backends: Sequence[int] = (), end: bool = False
                     ) -> tuple[dict | None, int]:
        """The server counters at a phase's edge, and the monitor's own transactions before
        them (ServerCounters.own_at_read).

        PostgreSQL counts a transaction when its backend reports it: at most once a second,
        and as the backend exits, a moment after its client disconnected. So the edge first
        waits for the backends of the connections that ended (the agent's closed ones and,
        at a phase's end, the virtual users'), whose last transactions are then counted; the
        virtual users' own connections reported before the phase started (VU.wait_for_go)
        and the monitor reports its own in the read (ServerCounters.mark). Where that cannot
        be known (a server older than 15, the connections of an external tool), the phase's
        end waits instead until the counts stop moving apart from the monitor's own."""
        if self._counters is None:
            return None, 0
        known = [b for b in backends if b]
        gone = True
        if self.target.dialect == "postgres":
            gone = self._await_backends([*pg_ended_backends(), *known])
        cur = self._read_db(mark=True)
        own = self._db_own_read
        if (cur is None or not end or self.target.dialect != "postgres"
                or (gone and known and self._counters is not None
                    and self._counters.can_flush)):
            return cur, own
        for _ in range(30):
            time.sleep(0.1)
            nxt = self._read_db(mark=True)
            if nxt is None:
                break
            moved = _txns(nxt) - _txns(cur) - (self._db_own_read - own)
            cur, own = nxt, self._db_own_read
            if moved <= 0:
                break
        return cur, own

    def _await_backends(self, pids: Sequence[int], limit_s: float = 10.0) -> bool:
        """Wait until these PostgreSQL backends have ended (a backend leaves pg_stat_activity
        after it reported its statistics); False if some did not within ``limit_s``."""
        if not pids:
            return True
        deadline = time.monotonic() + limit_s
        while True:
            counters = self._counters
            if counters is None:
                return False
            with self._counters_lock:
                try:
                    left = counters.session.scalar(
                        "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)",
                        (list(pids),))
                except Exception:
                    return False
            if not left:
                return True
            if time.monotonic() > deadline:
                self.log(f"{left} database connection(s) of the agent had not ended "
                         f"{limit_s:.0f} s after they were closed: the server's count may "
                         f"miss their last transactions", "warning")
                return False
            time.sleep(0.01)

    def _summary(self, name, types, ph: Phase, t_go, t_end, before, after, own_polls, rusage,
                 clients):
        final = ph.snapshot()
        body = _diff_body(ph.types, final, ph.first, ph.main)
        total = sum(body["ops"].values())
        dur = max(t_end - t_go, 1e-6)
        cpu_u = sum(rusage[0::2]); cpu_s = sum(rusage[1::2])
        if ph.counters:
            body["counters"] = {k: c - p for k, c, p in
                                zip(ph.counters, ph.csnapshot(), ph.cfirst)}
        out = {"phase": name, "interval": [round(t_go, 4), round(t_end, 4)],
               "duration_s": round(dur, 3), "clients": clients, "ops_total": total,
               "rate": round(total / dur, 2), "unit": ph.unit,
               "errors_total": sum(body["errors"].values()), **body,
               "driver_cpu": {"user_s": round(cpu_u, 4), "system_s": round(cpu_s, 4),
                              "us_per_op": round((cpu_u + cpu_s) * 1e6 / total, 2) if total else None,
                              "source": "getrusage of the virtual-user processes from the phase start"}}
        if ph.rate is not None:
            out["rate"] = round(ph.rate(body["ops"], body.get("counters", {}), dur), 2)
        srv = self.server_block(before, after, own_polls, dur)
        if srv is not None:
            out["server"] = srv
        return out

    def server_block(self, before: dict | None, after: dict | None, own_polls: int,
                     dur: float) -> dict | None:
        """The summary's `server` figures: the server's own count of the phase's work."""
        if before is None or after is None:
            return None
        d = interval_counters(after, before, self.target.dialect)
        if self.target.dialect == "postgres":
            # the monitor's own statements in the phase are transactions in this database too
            counter = "xact_commit + xact_rollback"
            value = d.get("xact_commit", 0) + d.get("xact_rollback", 0)
            return {"source": "pg_stat_database", "counter": counter, "delta_raw": value,
                    "own_polls": own_polls, "delta": value - own_polls,
                    "rate": round((value - own_polls) / dur, 2), "counters": d}
        counter = "Com_select" if self.unit == "QPS" else "Com_commit + Com_rollback"
        value = d.get("Com_select", 0) if self.unit == "QPS" else \
            d.get("Com_commit", 0) + d.get("Com_rollback", 0)
        return {"source": "SHOW GLOBAL STATUS", "counter": counter, "delta": value,
                "rate": round(value / dur, 2), "counters": d}

    # --- external tools (sysbench, pgbench, HammerDB) -------------------------------------
    def track_processes(self, pids: Sequence[int]) -> None:
        """Count these processes' CPU as the driver's in the host samples (a tool that a
        workload runs instead of virtual users)."""
        self._vu_pids = list(pids)

    def server_mark(self) -> tuple[dict | None, int]:
        """The server counters and the monitor's own transactions now (a phase's start)."""
        return self._server_edge()

    def server_since(self, mark: tuple[dict | None, int], dur: float) -> dict | None:
        """The summary's `server` figures since ``mark`` (a phase's end)."""
        after, own = self._server_edge(end=True)
        return self.server_block(mark[0], after, own - mark[1], max(dur, 1e-6))

