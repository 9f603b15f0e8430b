"""A test's event as data: its statements in order, how each parameter is drawn, which table
each runs on, what it counts. One description, two runners: fastloop.c (the compiled loop)
and `python_event` (a function generated from the same steps, for hosts without a C
compiler and for the clients the compiled loop does not drive). A workload builds its steps
(the sbtest events: workloads/sbtest/program.py) and hands them to the loop.
"""
from __future__ import annotations

from typing import Callable

from ..sql.clients import StatementFailed

P_ID, P_LO_PLUS, P_C, P_PAD, P_FIXED, P_SAVED = range(6)
NO_DRAW, DRAW = -2, -1                   # a step's table: none (BEGIN, COMMIT), or drawn


class Step:
    """One statement of an event: its SQL and types, how each parameter is drawn ((kind,
    arg) pairs: arg is the width of P_LO_PLUS, the value of P_FIXED), how often it repeats
    on one table, which table (drawn, none, or that of an earlier step), the workload
    counter its row count adds to, and whether its first id is kept for a later P_SAVED."""

    def __init__(self, sql: str, types: str = "", params: tuple = (), repeat: int = 1,
                 table_from: int = DRAW, count_slot: int = -1, save: bool = False):
        self.sql, self.types, self.params = sql, types, params
        self.repeat, self.table_from, self.count_slot, self.save = (repeat, table_from,
                                                                    count_slot, save)


def prepare(program: list[Step], ctx) -> list[list]:
    """Each step's statements on the client, one per table (one for BEGIN and COMMIT)."""
    return [ctx.per_table(st.sql, st.types, st.count_slot >= 0)
            if st.table_from != NO_DRAW else [ctx.client.prepare(st.sql)] for st in program]


def python_event(program: list[Step], runs: list[list], ctx, txn: bool) -> Callable[[], int]:
    """The event as one generated Python function: the statements in order, each value
    drawn inline (no interpretation of the steps per call). Returns the statements sent;
    in a transaction a failed statement carries how many were sent (`exc.sent`)."""
    scope: dict = {"pick": ctx.pick, "table": ctx.table(), "c": ctx.c, "pad": ctx.pad,
                   "carr": ctx.carr, "StatementFailed": StatementFailed}
    body: list[str] = []
    for i, (st, rs) in enumerate(zip(program, runs)):
        if len(rs) == 1:
            scope[f"run{i}"] = rs[0]
            call = f"run{i}"
        else:
            scope[f"runs{i}"] = rs
            if st.table_from == DRAW:
                body.append(f"t{i} = table()")
                call = f"runs{i}[t{i}]"
            else:
                call = f"runs{i}[t{st.table_from}]"
        lines = []
        args = []
        for k, (kind, arg) in enumerate(st.params):
            if kind == P_ID and k == 0 and (st.save or any(p == P_LO_PLUS for p, _ in
                                                           st.params)):
                lines.append("lo = pick()")
                args.append("lo")
            else:
                args.append({P_ID: "pick()", P_LO_PLUS: f"lo + {arg}", P_C: "c()",
                             P_PAD: "pad()", P_FIXED: str(arg), P_SAVED: "saved"}[kind])
        if st.params and all(p == P_ID for p, _ in st.params) and len(args) > 4:
            scope[f"n{i}"] = range(len(args))
            values = f"tuple([pick() for _ in n{i}])"
        else:
            values = "(" + "".join(a + ", " for a in args) + ")"
        stmt = f"{call}({values})"
        lines.append(f"carr[{st.count_slot}] += {stmt}" if st.count_slot >= 0 else stmt)
        if st.save:
            lines.append("saved = lo")
        if txn:
            lines.append("k += 1")
        if st.repeat > 1:
            body.append(f"for _ in range({st.repeat}):")
            body += ["    " + ln for ln in lines]
        else:
            body += lines
    per_event = sum(st.repeat for st in program)
    if txn:
        src = ("def event():\n    k = 0\n    try:\n"
               + "".join(f"        {ln}\n" for ln in body)
               + "        return k\n    except StatementFailed as exc:\n"
                 "        exc.sent = k + 1\n        raise\n")
    else:
        src = "def event():\n" + "".join(f"    {ln}\n" for ln in body) + \
              f"    return {per_event}\n"
    exec(src, scope)        # noqa: S102 - generated from the steps above, no outside text
    return scope["event"]
