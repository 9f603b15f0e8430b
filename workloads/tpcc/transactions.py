"""TPROC-C's run and virtual user; the mix (mix.py), inputs (inputs.py), result (result.py),
routines (procedures.py) and one implementation per dialect (pg.py, mysql.py) beside it.

`stored-procedures=on` calls one server-side routine per transaction (procedures/*.sql);
`off` sends the same statements from the client (PG_SQL in pg.py, MY_SQL in mysql.py), in explicit
transactions, so both modes leave the same effects and count the same server commits.

Hot paths: PostgreSQL through libpq's pipeline mode with prepared statements (psycopg.pq):
every batch of statements that does not need an earlier answer goes out in one round trip
(BEGIN with the first statements, the last statements with COMMIT). MySQL/MariaDB through
mysqlclient's low-level connection with multi-statements, values inlined as literals
(all are numbers or generated names), so a client-side transaction costs one or two
round trips.

Deadlocks and serialization failures are rolled back and retried (counted in `retries`
and `rollbacks`); other errors are counted per type and reported.
"""
from __future__ import annotations

import math
import time

from ..events import bucket_of
from . import load
from .inputs import Inputs, dlv_input, os_input, pay_input, sl_input, vu_info
from .mix import (
    BATCH,
    COMMIT,
    COMMITS,
    COUNTERS,
    KEYING,
    MAX_ATTEMPTS,
    NEW_ORDERS,
    NO,
    RETRIES,
    ROLLBACKS,
    THINK,
    TYPES,
    Retry,
    TxnError,
)
from .mysql import MyTxns
from .pg import PgTxns
from .procedures import install_procedures
from .result import measure_result, nopm_rate, sum_next_o_id


# --- the run ---------------------------------------------------------------------------------
def run(agent) -> None:
    p = agent.params
    load.prepare(agent)
    if p["stored-procedures"]:
        install_procedures(agent)
    vus = p["vus"]
    info = vu_info(vus, p["warehouses"], p["use-all-warehouses"])
    if p["rampup"] > 0:
        agent.run_clients("rampup", vu_main, vus, p["rampup"], TYPES, counters=COUNTERS,
                          rate=nopm_rate, vu_info=info)
    before = {"d_next_o_id": sum_next_o_id(agent.target)}

    def result(summary: dict) -> dict:
        after = sum_next_o_id(agent.target)
        return {"result": measure_result(summary, before["d_next_o_id"], after,
                                         agent.target.dialect, p)}

    agent.run_clients("measure", vu_main, vus, p["duration"], TYPES, counters=COUNTERS,
                      rate=nopm_rate, summary_extra=result, vu_info=info)
    if p["check-after"]:
        from . import check
        check.run_phase(agent)


# --- the virtual user ----------------------------------------------------------------------
def vu_main(vu) -> None:
    p = vu.params
    inp = Inputs(vu.rng, vu.index, p["vus"], p["warehouses"], p["use-all-warehouses"])
    sp = p["stored-procedures"]
    if vu.target.dialect == "postgres":
        tx = PgTxns(vu.target, sp)
    else:
        tx = MyTxns(vu.target, sp)
    try:
        _loop(vu, inp, tx, p["keying-thinking"])
        n = tx.session_transactions()
        if n is not None:
            vu.report_server_count(n)
    finally:
        tx.close()


def _loop(vu, inp: Inputs, tx, keying: bool) -> None:
    if not vu.wait_for_go():
        return
    arr, carr, cb = vu.arr, vu.carr, vu.cbase
    bases = [vu.base(t) for t in range(len(TYPES))]
    stop = vu.stop
    rr = inp.rr
    clock = time.perf_counter_ns
    gen = (inp.new_order, pay_input(inp), os_input(inp), dlv_input(inp), sl_input(inp))
    pick, plan = inp.pick_type, tx.plan

    def batch():
        # Inputs are drawn and encoded ahead, BATCH at a time: that code then runs with warm
        # caches instead of after every wake-up from the server's answer.
        out = []
        for _ in range(BATCH):
            t = pick()
            out.append((t,) + plan(t, gen[t]()))
        out.reverse()
        return out

    queue: list = []
    last_report = 0.0
    while not stop.value:
        if not queue:
            queue = batch()
        t, fn, args = queue.pop()
        if keying and _sleep(vu, KEYING[t]):
            break
        b = bases[t]
        t0 = clock()
        attempts = 0
        while True:
            try:
                outcome = fn(*args)
            except Retry:
                attempts += 1
                carr[cb + RETRIES] += 1
                carr[cb + ROLLBACKS] += 1
                if attempts < MAX_ATTEMPTS and not stop.value:
                    continue
                outcome = None
                arr[b + 1] += 1
                break
            except TxnError as exc:
                outcome = None
                carr[cb + ROLLBACKS] += 1
                arr[b + 1] += 1
                now = time.monotonic()
                if now - last_report > 5.0:
                    last_report = now
                    vu.report_error(f"{TYPES[t]}: {exc.args[0] if exc.args else exc}")
                if not tx.alive():
                    vu.connection_lost(str(exc.args[0] if exc.args else exc))
                    return
                break
            break
        if outcome is None:
            continue
        arr[b + 2 + bucket_of((clock() - t0) // 1000)] += 1
        arr[b] += 1
        if outcome is COMMIT:
            carr[cb + COMMITS] += 1
            if t == NO:
                carr[cb + NEW_ORDERS] += 1
        else:
            carr[cb + ROLLBACKS] += 1
        if keying and _sleep(vu, min(-math.log(1.0 - rr()) * THINK[t], 10 * THINK[t])):
            break


def _sleep(vu, seconds: float) -> bool:
    """Sleep unless told to stop; True when stopped."""
    end = time.monotonic() + seconds
    while not vu.stop.value:
        left = end - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(0.1, left))
    return True
