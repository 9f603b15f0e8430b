"""The agent's sampling thread: once a second the host (/proc), CPU by process group, the
client's limit, the server's counters and the running phase's sample; CPU windows per phase
and perf. A part of the Agent (driver.py), which runs it."""
from __future__ import annotations

import os
import threading
import time

from .. import events
from .measure.clientload import ClientWatch
from .measure.counters import ServerCounters, interval_counters
from .measure.perf import PerfStat, Profile, probe
from .measure.locate import locate_server
from .measure.procgroups import DRIVER, MONITOR, TICK, ProcGroups, cap_other, percent
from .measure.sampler import PhaseWindow, around, host_interval, read_cpu, read_proc
from .phase import _diff_body


class Sampling:
    """The Agent's sampling job (its state is set up in Agent.__init__)."""

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
                if not again:       # nothing brings them back: the cross-check is missing
                    why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    self.em.missing.append({"source": "server counters",
                                            "since": round(self.em.now(), 1), "why": why})
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
        ev = self.em.emit("sample", **events.sample(
            phase=ph.name, interval=[round(ph.last_t, 4), round(now, 4)], rate=round(rate, 2),
            unit=ph.unit, clients=ph.nvu - ph.lost, vus=ph.per_vu() if ph.nvu <= 256 else None,
            **body))
        self._outages.sample(ev["interval"], ev["rate"])
        ph.last, ph.last_t, ph.clast = cur, now, ccur
        return ev
