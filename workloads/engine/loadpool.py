"""The agent's virtual-user pool: run_clients starts a phase's virtual users as processes,
watches them, ends the phase and assembles its summary with the server's own count. A part
of the Agent (driver.py)."""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from typing import Callable, Sequence

from .. import events
from .measure.counters import interval_counters
from .measure.clientload import PhaseClient
from .sql.db import DatabaseError, pg_ended_backends
from .phase import Phase, StopRun, _diff_body, _perf_per_op, _txns
from .vus import BACKENDS_PER_VU, SLOT, VU, LostClients, _vu_entry


class VuPool:
    """The Agent's virtual-user job (its state is set up in Agent.__init__)."""

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
            self.em.emit("summary", **events.summary(**summary))
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
