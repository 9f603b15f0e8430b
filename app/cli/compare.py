"""`versus compare`: tables of several runs with ratios to a base run, and the regression gate."""
from __future__ import annotations

import sys

from .console import fail as _fail
from .console import warn_damaged as _warn_damaged


INCONCLUSIVE_EXIT = 4


def cmd_compare(a) -> int:
    """Per-phase tables of several runs with ratios to a base run (see app.analysis.compare);
    for a suite, its matrices (app.analysis.matrix); the regression gate with --fail-below.
    Exit 1 when the gate fails, 4 when it cannot tell (an interval straddles the
    threshold)."""
    from app.analysis.compare import CompareError, load_comparison, parse_ref
    from app.analysis.matrix import gate, has_groups, load_sides, suite_matrix
    from app.store.export import ExportError, tables_text, to_json, write_text
    gate_result = None
    try:
        refs = [parse_ref(x) for x in a.runs]
        names = a.names.split(",") if a.names else None
        if a.fail_below is not None:
            comp, sides = load_sides(refs, names)
            comp.align(a.align)
            gate_result = gate(comp, sides, a.fail_below)
        else:
            comp = load_comparison(refs, align=a.align, names=names)
        base = a.base - 1
        phases = [a.phase] if a.phase else (comp.common_phases() if len(comp) > 1
                                            else comp.phase_order())
        if not phases:
            _warn_damaged(comp.damaged())
            return _fail("the runs have no phase in common; compare runs of the same workload, "
                         "or name a phase with --phase to see what each run has of it")
        keys = [k.strip() for k in (a.matrix or "").split(",") if k.strip()]
        if a.json:
            out = comp.to_json(base, phases)
            if keys:
                out["matrices"] = {k: [{"phase": r.phase, "group": r.group,
                                        "values": list(r.values),
                                        "ratios": [x.value for x in r.ratios],
                                        "classes": [x.cls for x in r.ratios]}
                                       for r in suite_matrix(comp, k, base).rows]
                                   for k in keys}
            if gate_result is not None:
                out["gate"] = gate_result.to_json()
            text = to_json(out)
        else:
            if keys and has_groups(comp) and not a.phase:
                # a suite: its matrices are the comparison (per-test tables: --phase)
                tables = [t for k in keys for t in suite_matrix(comp, k, base).tables()]
            else:
                tables = comp.tables(base, phases)
                for k in keys:
                    if len(phases) > 1:
                        tables.append(comp.matrix(k, base))
            fmt = "csv" if a.csv else "html" if a.html else "markdown"
            text = tables_text(tables, fmt)
            if gate_result is not None and fmt == "markdown":
                text += "\n" + gate_result.text()
        if a.out:
            write_text(a.out, text)
        else:
            sys.stdout.write(text)
        if gate_result is not None and (a.out or a.csv or a.html):
            sys.stderr.write(gate_result.text())
    except (CompareError, ExportError, KeyError) as exc:
        return _fail(str(exc).strip('"'))
    _warn_damaged(comp.damaged())
    if gate_result is not None and gate_result.failed:
        return 1
    if gate_result is not None and gate_result.inconclusive:
        return INCONCLUSIVE_EXIT
    return 3 if comp.damaged() else 0


def add_compare(sub) -> None:
    c = sub.add_parser("compare", help="compare runs: a table per phase with ratios to a base run")
    c.add_argument("runs", nargs="+", metavar="FILE[:RUN]",
                   help="session files; RUN picks one run (its id, or 1, 2 … in the file)")
    c.add_argument("--base", type=int, default=1, metavar="N", help="the base run (1 = first)")
    c.add_argument("--align", metavar="PHASE", help="align runs on the start of this phase")
    c.add_argument("--phase", help="only this phase (default: the phases all runs have)")
    c.add_argument("--names", metavar="A,B,…", help="names for the runs, in order")
    c.add_argument("--matrix", metavar="METRIC[,METRIC…]", nargs="?", const="throughput",
                   help="ratios to the base run as a matrix, runs × phases, one per METRIC "
                        "(default throughput; e.g. throughput,eff.cpu_us,eff.cs); for a "
                        "suite such as micro: its tests grouped as the workload groups them, "
                        "instead of the per-phase tables")
    c.add_argument("--fail-below", type=float, metavar="RATIO",
                   help="regression gate: exit 1 and name the tests whose throughput "
                        "relative to BASE is below RATIO (e.g. 0.95) with its whole 95 %% "
                        "interval, exit 4 when an interval straddles RATIO (inconclusive: "
                        "it says how many more repeats would decide); runs are BASE then "
                        "NEW, each a FILE (all its runs: repeats of one side) or FILE:RUN")
    cf = c.add_mutually_exclusive_group()
    cf.add_argument("--markdown", action="store_true", help="Markdown tables (the default)")
    cf.add_argument("--csv", action="store_true")
    cf.add_argument("--html", action="store_true")
    cf.add_argument("--json", action="store_true", help="values and ratios of every metric")
    c.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    c.set_defaults(func=cmd_compare)
