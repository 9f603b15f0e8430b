"""Run one sbtest test as a phase: virtual users running that test's sysbench event.

An event is what sysbench's event() does once: one statement for most tests, a
BEGIN … COMMIT transaction for read-only, read-write and write-only. Each virtual user counts
events (TPS) in its histogram slot and statements (QPS), rows deleted and rows inserted in
its workload counters; the sample's and the summary's rate is statements per second.
"""
from __future__ import annotations

import functools
from typing import Callable

from ..engine.api import (DatabaseError, clients, compiled_loop, fastloop, loop_program,
                          paced_loop, python_loop)
from . import program, suite
from .suite import Test
from .values import Strings, id_picker, zipf_constants

COUNTERS = ("statements", "rows_deleted", "rows_inserted")
_STATEMENTS, _DELETED, _INSERTED = range(3)
# rate > 0: the events started more than 10 ms after their intended start, and the lag of all
PACED = ("late_starts", "lag_us")
_LATE, _LAG = 3, 4
LATE_SHARE = 0.01           # more late starts than this: the clients did not keep the rate


def run_test(agent, test: Test, phase: str, seconds: float, warmup: float = 0,
             warmup_name: str = "") -> dict:
    """Run one test as a phase (after its warm-up phase when `warmup` > 0)."""
    fn = functools.partial(vu_main, test)
    clients_n = agent.params["clients"]
    # at a rate, the histogram is the latency from the intended start, "service" the time
    # from the actual send
    paced = {"counters": COUNTERS + PACED, "timings": ("service",)} \
        if agent.params.get("rate") else {"counters": COUNTERS}
    if warmup > 0:
        agent.run_clients(warmup_name, fn, clients_n, warmup, (test.family,),
                          rate=_qps, **paced)
    return agent.run_clients(phase, fn, clients_n, seconds, (test.family,),
                             rate=_qps, **paced,
                             summary_extra=functools.partial(_summary_extra, agent, test),
                             session_counter=" + ".join(clients.SESSION_COUNTERS))


def _qps(ops: dict, counters: dict, seconds: float) -> float:
    return counters.get("statements", 0) / seconds if seconds > 0 else 0.0


def _summary_extra(agent, test: Test, summary: dict) -> dict:
    p = agent.params
    counters = summary.get("counters") or {}
    stmts = counters.get("statements", 0)
    kind = clients.driver_for(agent.target, p.get("mysql-driver", "auto"))
    drv = summary.get("driver_cpu") or {}
    cpu = (drv.get("user_s") or 0) + (drv.get("system_s") or 0)
    out: dict = {
        "test": {"name": test.name, "group": suite.GROUPS[test.group],
                 "statements_per_transaction": test.per_event, "range": test.range or None,
                 "sql": list(dict.fromkeys(test.statements))},
        "sql_client": {"driver": kind, "protocol": clients.CLIENTS[kind].protocol,
                       "loop": loop_for(agent.target, p, test)[1],
                       "cpu_us_per_statement": round(cpu * 1e6 / stmts, 2) if stmts else None},
    }
    if test.family == "scan":
        out["scan"] = {"rows": summary.get("ops_total", 0) * p["table-size"],
                       "source": "full scans completed × table-size rows per table"}
    check = _server_check(agent, test, summary)
    if check:
        out["server_check"] = check
    if p.get("rate"):
        out.update(_schedule(p["rate"], summary))
        if out["schedule"].get("text"):
            agent.log(f"{summary.get('phase', '')}: {out['schedule']['text']}", "warning")
    return out


def _schedule(rate: float, summary: dict) -> dict:
    """How well the clients kept the rate: events against the schedule, the late starts and
    the lag; a flag when more than 1 % started over 10 ms late."""
    counters = summary.get("counters") or {}
    events = summary.get("ops_total", 0)
    dur = summary.get("duration_s") or 0
    late, lag_us = counters.get("late_starts", 0), counters.get("lag_us", 0)
    share = late / events if events else 0.0
    sched = {"rate_per_s": rate, "achieved_per_s": round(events / dur, 2) if dur else None,
             "late_starts": late, "late_share": round(share, 4),
             "mean_lag_ms": round(lag_us / events / 1000.0, 3) if events else None,
             "latency": "from the intended start; timings.service from the actual send"}
    out: dict = {"schedule": sched}
    if share > LATE_SHARE:
        sched["text"] = (f"client-bound at {rate:,}/s: {share * 100:.0f} % of transactions "
                         f"started more than 10 ms late")
        out["flags"] = [*(summary.get("flags") or []),
                        {"name": "behind schedule", "severity": "warn", "detail": sched["text"]}]
    return out


def _server_check(agent, test: Test, summary: dict) -> dict | None:
    """The server's own count of the test's statements and transactions over the phase."""
    srv = summary.get("server") or {}
    if "delta" not in srv:
        return None
    single = not test.txn
    if agent.target.dialect == "postgres":
        # every statement outside BEGIN … COMMIT is a transaction of its own
        n = srv["delta"]
        return {"transactions": n, "statements": n if single else None,
                "source": "pg_stat_database xact_commit + xact_rollback, less the "
                          "monitor's polls"}
    if str(srv.get("source", "")).startswith("SHOW SESSION STATUS"):
        n = srv["delta"]
        return {"statements": n, "transactions": n if single else None,
                "source": "SHOW SESSION STATUS of the virtual users' connections, "
                          "Com_select … Com_rollback"}
    d = srv.get("counters") or {}
    n = sum(d.get(c, 0) for c in clients.SESSION_COUNTERS)
    return {"statements": n, "transactions": n if single else None,
            "source": "SHOW GLOBAL STATUS " + " + ".join(clients.SESSION_COUNTERS)
                      + " (server-wide: other clients count too)"}


# --- virtual users -------------------------------------------------------------------------
def loop_for(target, params: dict, test: Test | None = None) -> tuple[str, str]:
    """Which event loop the clients run ("compiled" or "python") and a sentence saying so."""
    choice = params.get("client-loop", "auto")
    kind = clients.driver_for(target, params.get("mysql-driver", "auto"))
    if choice == "python":
        return "python", "Python event loop (client-loop=python)"
    if params.get("rate"):
        if choice == "compiled":
            raise DatabaseError("client-loop=compiled, but the compiled loop has no schedule "
                                "for a rate yet; set client-loop=auto or rate=0")
        return "python", f"Python event loop (rate={params['rate']}/s: its schedule)"
    if kind not in fastloop.DRIVES:
        why = f"the {kind} client has no compiled loop"
    elif test is not None and program.steps(test, target.dialect, 1, 0, 0) is None:
        why = f"{test.name} has no compiled loop"
    elif fastloop.library() is None:
        why = fastloop.why()
    else:
        return "compiled", "compiled event loop (fastloop.c)"
    if choice == "compiled":
        raise DatabaseError(f"client-loop=compiled, but {why}; set client-loop=auto")
    return "python", f"Python event loop: {why}"


def vu_main(test: Test, vu) -> None:
    client = clients.connect(vu.target, vu.params.get("mysql-driver", "auto"))
    try:
        ctx = _Ctx(test, client, vu)
        steps = program.steps(test, vu.target.dialect, ctx.size, ctx.cbase + _DELETED,
                              ctx.cbase + _INSERTED)
        runs = loop_program.prepare(steps, ctx) if steps else None
        rollback = client.prepare("ROLLBACK") if test.txn else None
        job = event = None
        if steps and loop_for(vu.target, vu.params, test)[0] == "compiled":
            job = fastloop.Job(client, vu, ctx, steps, runs, vu.cbase + _STATEMENTS)
        else:
            event = (loop_program.python_event(steps, runs, ctx, test.txn) if steps
                     else _scan(ctx))
        client.settle()
        before = client.session_statements()
        if not vu.wait_for_go():
            return
        cs = vu.cbase + _STATEMENTS
        rate, n = vu.params.get("rate") or 0, vu.params["clients"]
        if rate:            # the VUs' schedules interleave: one start every 1/rate s
            ok = paced_loop(vu, event, rollback, cs, rate / n, vu.index / n, vu.timing0,
                            vu.cbase + _LATE, vu.cbase + _LAG)
        else:
            ok = (compiled_loop(vu, job, rollback, cs) if job
                  else python_loop(vu, event, rollback, cs))
        if ok and before is not None:
            vu.report_server_count(client.session_statements() - before)
    finally:
        client.close()


class _Ctx:
    """What an event builder needs: the client's statements per table and value drawers."""

    def __init__(self, test: Test, client: clients.Client, vu):
        p = vu.params
        self.client = client
        self.dialect = vu.target.dialect
        self.tables, self.size = p["tables"], p["table-size"]
        self.rr = vu.rng.random
        dist = "zipfian" if test.family == "update-zipf" else p.get("distribution", "uniform")
        self.dist, self.zipf = dist, zipf_constants(self.size)
        self.pick = id_picker(dist, self.size, vu.rng)
        strings = Strings(vu.rng, client.strings) if test.writes else None
        self.c_values = strings.made(strings.c) if strings else None
        self.pad_values = strings.made(strings.pad) if strings else None
        self.c = strings.drawn(self.c_values) if strings else None
        self.pad = strings.drawn(self.pad_values) if strings else None
        self.carr, self.cbase = vu.carr, vu.cbase
        self.index = vu.index

    def per_table(self, sql: str, types: str = "", count: bool = False) -> list:
        return [self.client.prepare(sql.format(n=n), types, count)
                for n in range(1, self.tables + 1)]

    def table(self) -> Callable[[], int]:
        rr, t = self.rr, self.tables
        return lambda: int(rr() * t)


def _scan(ctx: _Ctx) -> Callable[[], int]:
    """The scan's event: a full scan of the client's own table (harness oltp_scan.lua)."""
    run = ctx.per_table(suite.SCAN)[ctx.index % ctx.tables]

    def scan() -> int:
        run(())
        return 1
    return scan
