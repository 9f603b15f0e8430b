"""The sbtest tests' events as loop steps (workloads/engine/loop/program.py): sysbench's
statements in sysbench's order, each parameter drawn as sysbench draws it. The scan alone has
none: each client scans its own table (runner.py)."""
from __future__ import annotations

from ..engine.api import NO_DRAW, P_C, P_FIXED, P_ID, P_LO_PLUS, P_PAD, P_SAVED, Step
from . import suite

_ID = (P_ID, 0)


def steps(test, dialect: str, size: int, deleted: int, inserted: int) -> list[Step] | None:
    """The test's event (None for the scan). `deleted`, `inserted`: the workload counter
    slots of the rows the writes delete and insert. sysbench's oltp_* event for the
    transactions: BEGIN, 10 point selects on one table, one of each range select chosen,
    the writes, COMMIT; every statement picks its own table, as oltp_common.lua does, but
    the insert puts back the row the delete took, on its table."""
    fam = test.family
    if test.txn:
        out = [Step("BEGIN", table_from=NO_DRAW)]
        n_points = test.statements.count(suite.POINT)
        if n_points:
            out.append(Step(suite.POINT, "i", (_ID,), repeat=n_points))
        for s in test.statements:
            if s in (suite.SIMPLE, suite.SUM, suite.ORDER, suite.DISTINCT):
                out.append(Step(s, "ii", (_ID, (P_LO_PLUS, test.range - 1))))
        if test.writes:
            out += [Step(suite.UPDATE_INDEX, "i", (_ID,)),
                    Step(suite.UPDATE_NONINDEX, "si", ((P_C, 0), _ID)),
                    Step(suite.DELETE, "i", (_ID,), count_slot=deleted, save=True)]
            out.append(Step(suite.INSERT, "iiss", ((P_SAVED, 0), _ID, (P_C, 0), (P_PAD, 0)),
                            table_from=len(out) - 1, count_slot=inserted))
        return out + [Step("COMMIT", table_from=NO_DRAW)]
    sql = test.statements[0]
    if fam in ("point-query", "update-index"):
        return [Step(sql, "i", (_ID,))]
    if fam == "delete":
        return [Step(sql, "i", (_ID,), count_slot=deleted)]
    if fam.startswith("points-") or fam == "random-points":
        return [Step(sql, "i" * test.range, (_ID,) * test.range)]
    if fam == "hot-points":
        hot = size // 2
        return [Step(sql, "i" * test.range,
                     tuple((P_FIXED, hot + 1 + i) for i in range(test.range)))]
    if fam.startswith("range-") or fam == "read-only-count":
        width = test.range if fam.startswith("range-") else test.range - 1
        return [Step(sql, "ii", (_ID, (P_LO_PLUS, width)))]
    if fam in ("update-nonindex", "update-zipf"):
        return [Step(suite.UPDATE_NONINDEX, "si", ((P_C, 0), _ID))]
    if fam == "update-one":
        return [Step(sql, "s", ((P_C, 0),))]
    if fam == "update-inlist":
        return [Step(sql, "s" + "i" * test.range, ((P_C, 0),) + (_ID,) * test.range)]
    if fam == "insert":
        return [Step(suite.INSERT_AUTO[dialect], "iss", (_ID, (P_C, 0), (P_PAD, 0)),
                     count_slot=inserted)]
    if fam == "scan":
        return None
    raise ValueError(f"no event for test {test.name}")
