"""The tests of the microbenchmark suite, their SQL, and the order a run goes through them.

Each test is one phase. The SQL is sysbench's (oltp_common.lua and the oltp_*.lua scripts)
and, for the tests sysbench does not bundle, that of Mark Callaghan's published harness
(mdcallag/mytools bench/sysbench.lua: run.sh and lua/), with that harness's options:
uniform ids (--rand-type=uniform) except update-zipf, --skip-trx for the single-statement
reads, 100 points or rows for the points-/range- tests, range 1000 for read-only-count,
-distinct, -order, -simple and -sum.

Order (as the harness's all_small.sh): the reads, then the writes that keep the row count,
then the reads again, then delete and insert (they change the row count). With `pre-reads`
off, or without those writes, the reads run once.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from ..params import ParamError, PhaseSpec

GROUPS = {
    "point": "Point queries",
    "range": "Range queries without aggregation",
    "range-agg": "Range queries with aggregation",
    "writes": "Writes",
}
_GROUP_ALIASES = {"points": "point", "ranges": "range", "aggregation": "range-agg",
                  "agg": "range-agg", "write": "writes", "reads": "reads"}

POINT = "SELECT c FROM sbtest{n} WHERE id=?"
SIMPLE = "SELECT c FROM sbtest{n} WHERE id BETWEEN ? AND ?"
SUM = "SELECT SUM(k) FROM sbtest{n} WHERE id BETWEEN ? AND ?"
ORDER = "SELECT c FROM sbtest{n} WHERE id BETWEEN ? AND ? ORDER BY c"
DISTINCT = "SELECT DISTINCT c FROM sbtest{n} WHERE id BETWEEN ? AND ? ORDER BY c"
COUNT = "SELECT count(c) FROM sbtest{n} WHERE id BETWEEN ? AND ?"
UPDATE_INDEX = "UPDATE sbtest{n} SET k=k+1 WHERE id=?"
UPDATE_NONINDEX = "UPDATE sbtest{n} SET c=? WHERE id=?"
DELETE = "DELETE FROM sbtest{n} WHERE id=?"
INSERT = "INSERT INTO sbtest{n} (id, k, c, pad) VALUES (?, ?, ?, ?)"
# oltp_insert.lua with auto_inc: PostgreSQL leaves id to the SERIAL default, MySQL sends 0
INSERT_AUTO = {"postgres": "INSERT INTO sbtest{n} (k, c, pad) VALUES (?, ?, ?)",
               "mysql": "INSERT INTO sbtest{n} (id, k, c, pad) VALUES (0, ?, ?, ?)"}
SCAN = "SELECT * FROM sbtest{n} WHERE LENGTH(c) < 0"
POINTS = 100                    # the harness's IN-list and range length for points-/range-


def in_list(n: int) -> str:
    return "(" + ", ".join("?" * n) + ")"


@dataclass(frozen=True)
class Test:
    name: str                   # the phase name
    family: str                 # the name a user selects (all ranges of random-points …)
    group: str                  # key of GROUPS
    statements: tuple[str, ...]  # SQL of one event, in order ({n}: the table number)
    per_event: int              # statements per event, BEGIN and COMMIT included
    source: str                 # the script and options it follows
    writes: bool = False
    txn: bool = False           # BEGIN … COMMIT around each event
    range: int = 0              # range size or IN-list length, where the test has one

    @property
    def help(self) -> str:
        counts: dict[str, int] = {}
        for s in self.statements:
            counts[s] = counts.get(s, 0) + 1
        body = "; ".join(f"{n} × {s}" if n > 1 else s for s, n in counts.items()
                         ).replace("{n}", "<N>")
        body = re.sub(r"\((?:\?, ){3,}\?\)", lambda m: f"({m.group(0).count('?')} × ?)", body)
        shape = (f"one transaction of {self.per_event} statements (BEGIN, {body}, COMMIT)"
                 if self.txn else f"{body}")
        return f"{shape} — {self.source}"


def _oltp(points: int, ranges: tuple[str, ...], writes: bool) -> tuple[tuple[str, ...], int]:
    stmts = (POINT,) * points + ranges
    if writes:
        stmts += (UPDATE_INDEX, UPDATE_NONINDEX, DELETE, INSERT)
    return stmts, len(stmts) + 2


def _catalogue() -> list[Test]:
    t: list[Test] = [Test("point-query", "point-query", "point", (POINT,), 1,
                          "sysbench oltp_point_select.lua --skip-trx")]
    for fam, sql, opts in (
            ("points-covered-pk", "SELECT id FROM sbtest{n} WHERE id IN ", ""),
            ("points-notcovered-pk", "SELECT id, c FROM sbtest{n} WHERE id IN ",
             " --covered=false"),
            ("points-covered-si", "SELECT k FROM sbtest{n} WHERE k IN ", " --on-id=false"),
            ("points-notcovered-si", "SELECT k, c FROM sbtest{n} WHERE k IN ",
             " --on-id=false --covered=false")):
        t.append(Test(fam, fam, "point", (sql + in_list(POINTS),), 1,
                      f"harness oltp_points_covered.lua --random-points={POINTS}{opts} "
                      f"--skip-trx", range=POINTS))
    for r in (10, 100, 1000):
        t.append(Test(f"random-points_range={r}", "random-points", "point",
                      ("SELECT c FROM sbtest{n} WHERE id IN " + in_list(r),), 1,
                      f"harness oltp_inlist_select.lua --random-points={r} --skip-trx",
                      range=r))
    t.append(Test("hot-points", "hot-points", "point",
                  ("SELECT c FROM sbtest{n} WHERE id IN " + in_list(POINTS),), 1,
                  f"harness oltp_inlist_select.lua --random-points={POINTS} --hot-points "
                  f"--skip-trx: the same {POINTS} ids after table-size/2 every time",
                  range=POINTS))
    for fam, cols, col, opts in (("range-covered-pk", "id", "id", ""),
                                 ("range-covered-si", "k", "k", " --on-id=false"),
                                 ("range-notcovered-pk", "id, c", "id", " --covered=false"),
                                 ("range-notcovered-si", "k, c", "k",
                                  " --on-id=false --covered=false")):
        t.append(Test(fam, fam, "range",
                      (f"SELECT {cols} FROM sbtest{{n}} WHERE {col} BETWEEN ? AND ?",), 1,
                      f"harness oltp_range_covered.lua --random-points={POINTS}{opts} "
                      f"--skip-trx: BETWEEN x AND x+{POINTS}", range=POINTS))
    t.append(Test("scan", "scan", "range", (SCAN,), 1,
                  "harness oltp_scan.lua: a full scan per statement, each client on its "
                  "own table; also reported as rows scanned per second"))
    for r in (10, 100, 10000):
        stmts, n = _oltp(10, (SIMPLE, SUM, ORDER, DISTINCT), False)
        t.append(Test(f"read-only_range={r}", "read-only", "range-agg", stmts, n,
                      f"sysbench oltp_read_only.lua --range-size={r}", txn=True, range=r))
    t.append(Test("read-only-count", "read-only-count", "range-agg", (COUNT,), 1,
                  "harness oltp_read_only_count.lua --range-size=1000 --skip-trx",
                  range=1000))
    for fam, sql, opt in (("read-only-distinct", DISTINCT, "distinct"),
                          ("read-only-order", ORDER, "order"),
                          ("read-only-simple", SIMPLE, "simple"),
                          ("read-only-sum", SUM, "sum")):
        stmts, n = _oltp(10, (sql,), False)
        others = ", ".join(f"--{x}-ranges=0" for x in ("simple", "sum", "order", "distinct")
                           if x != opt)
        t.append(Test(fam, fam, "range-agg", stmts, n,
                      f"sysbench oltp_read_only.lua --range-size=1000 --{opt}-ranges=1 "
                      f"{others}", txn=True, range=1000))
    t += [
        Test("delete", "delete", "writes", (DELETE,), 1,
             "sysbench oltp_delete.lua: removes rows (run last but one)", writes=True),
        Test("insert", "insert", "writes", (INSERT_AUTO["mysql"],), 1,
             "sysbench oltp_insert.lua: new rows with server-assigned ids (PostgreSQL: "
             "INSERT INTO sbtest<N> (k, c, pad) VALUES (?, ?, ?); run last)", writes=True),
        Test("update-index", "update-index", "writes", (UPDATE_INDEX,), 1,
             "sysbench oltp_update_index.lua", writes=True),
        Test("update-nonindex", "update-nonindex", "writes", (UPDATE_NONINDEX,), 1,
             "sysbench oltp_update_non_index.lua", writes=True),
        Test("update-one", "update-one", "writes",
             ("UPDATE sbtest{n} SET c=? WHERE id=1",), 1,
             "harness: oltp_update_non_index.lua with --table-size=1, one hot row",
             writes=True),
        Test("update-zipf", "update-zipf", "writes", (UPDATE_NONINDEX,), 1,
             "harness: oltp_update_non_index.lua --rand-type=zipfian (exponent 0.8)",
             writes=True),
        Test("update-inlist", "update-inlist", "writes",
             ("UPDATE sbtest{n} SET c=? WHERE id IN " + in_list(POINTS),), 1,
             f"harness oltp_inlist_update.lua --random-points={POINTS}", writes=True,
             range=POINTS),
    ]
    stmts, n = _oltp(0, (), True)
    t.append(Test("write-only", "write-only", "writes", stmts, n,
                  "sysbench oltp_write_only.lua (the DELETE and INSERT use the same id)",
                  writes=True, txn=True))
    for r in (10, 100):
        stmts, n = _oltp(10, (SIMPLE, SUM, ORDER, DISTINCT), True)
        t.append(Test(f"read-write_range={r}", "read-write", "writes", stmts, n,
                      f"sysbench oltp_read_write.lua --range-size={r}", writes=True,
                      txn=True, range=r))
    return t


TESTS: tuple[Test, ...] = tuple(_catalogue())
BY_NAME = {t.name: t for t in TESTS}
FAMILIES = tuple(dict.fromkeys(t.family for t in TESTS))
LAST = ("delete", "insert")          # they change the row count: after every other test


def select(text: str) -> list[Test]:
    """The tests a `tests` value names, in catalogue order: "all", a group (point, range,
    range-agg, writes, reads), a test (random-points: all its ranges) or one phase
    (random-points_range=10), separated by commas or spaces."""
    words = [w for w in text.replace(",", " ").split() if w]
    if not words:
        raise ParamError("tests is empty: give all, a group (point, range, range-agg, "
                         "writes, reads) or test names")
    chosen: set[str] = set()
    unknown = []
    for w in words:
        key = _GROUP_ALIASES.get(w, w)
        if key == "all":
            chosen.update(BY_NAME)
        elif key == "reads":
            chosen.update(t.name for t in TESTS if not t.writes)
        elif key in GROUPS:
            chosen.update(t.name for t in TESTS if t.group == key)
        elif key in FAMILIES:
            chosen.update(t.name for t in TESTS if t.family == key)
        elif key in BY_NAME:
            chosen.add(key)
        else:
            unknown.append(w)
    if unknown:
        names = ["all", "reads", *_GROUP_ALIASES, *GROUPS, *FAMILIES, *BY_NAME]
        said = []
        for w in unknown:
            near = difflib.get_close_matches(w, names, n=1, cutoff=0.6)
            said.append(repr(w) + (f" (did you mean {near[0]!r}?)" if near else ""))
        raise ParamError(
            f"unknown test{'s' if len(unknown) > 1 else ''} {', '.join(said)}; "
            f"tests are all, a group ({', '.join(GROUPS)}, reads) or any of "
            f"{', '.join(FAMILIES)}")
    return [t for t in TESTS if t.name in chosen]


@dataclass(frozen=True)
class Step:
    test: Test
    phase: str                  # "point-query", "point-query.pre", "read-only.pre_range=10"
    seconds_param: str          # "read-seconds" | "write-seconds"


def _pre(name: str) -> str:
    base, sep, rest = name.partition("_range=")
    return f"{base}.pre{sep}{rest}"


def steps(values: dict[str, Any]) -> list[Step]:
    """The measured tests of a run, in the order they run."""
    tests = select(str(values.get("tests", "all")))
    reads = [t for t in tests if not t.writes]
    writes = [t for t in tests if t.writes and t.family not in LAST]
    last = [t for t in tests if t.family in LAST]
    out: list[Step] = []
    if reads and writes and values.get("pre-reads", True):
        out += [Step(t, _pre(t.name), "read-seconds") for t in reads]
    out += [Step(t, t.name, "write-seconds") for t in writes]
    out += [Step(t, t.name, "read-seconds") for t in reads]
    out += [Step(t, t.name, "write-seconds") for t in last]
    return out


def warmup_phase(step: Step) -> str:
    return f"{step.phase}.warmup"


def phase_plan(values: dict[str, Any]) -> list[PhaseSpec]:
    out = [PhaseSpec("prepare", "load", unit="rows/s",
                     help="create and load sbtest1..N as sysbench prepare does, or reuse "
                          "tables that already hold table-size rows")]
    for s in steps(values):
        group, text = GROUPS[s.test.group], s.test.help
        out.append(PhaseSpec(warmup_phase(s), "warmup", seconds="warmup", when="warmup > 0",
                             group=group, help=f"warm-up, not counted: {text}"))
        out.append(PhaseSpec(s.phase, "step", seconds=s.seconds_param.replace("-", "_"),
                             group=group, help=text))
    return out


def validate(values: dict[str, Any]) -> None:
    select(str(values.get("tests", "all")))


def _display_order() -> tuple[PhaseSpec, ...]:
    """Every phase a run can have, in the order views list them: by group, each test's
    reads before the writes beside the reads after them."""
    plan = phase_plan({"tests": "all", "pre-reads": True})
    by_name = {p.name: p for p in plan}
    out = [by_name["prepare"]]
    for t in TESTS:
        names = ([_pre(t.name)] if not t.writes else []) + [t.name]
        for n in names:
            out += [by_name[f"{n}.warmup"], by_name[n]]
    return tuple(out)


ALL_PHASES = _display_order()
