"""`versus show` and `versus import`: what a session file holds, and logs brought in as runs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from app.analysis.compare import step_table_cells
from app.analysis.summary import summarize_run
from app.store.session import SessionError, SessionFile

from .console import fail as _fail
from .console import warn_damaged as _warn_damaged


def run_json(session: SessionFile, rec) -> dict:
    summ = summarize_run(session, rec.id)
    return {"id": rec.id, "workload": rec.workload, "target": rec.target, "host": rec.host,
            "params": rec.params, "created": rec.created, "status": rec.status,
            "reason": rec.reason, "events": rec.events, "last_seq": rec.last_seq,
            "server_version": summ["server_version"],
            "phases": summ["phases"], "step_table": summ["step_table"],
            "errors": summ["errors"]}


def cmd_show(a) -> int:
    from app.remote.follow import open_runs
    try:
        with SessionFile(a.file) as s:
            runs = [run_json(s, r) for r in s.runs()]
            unfinished = {r.id for r in open_runs(s)}
            for r in runs:
                s.check(r["id"])
            damaged = s.damaged()
    except SessionError as exc:
        return _fail(str(exc))
    _warn_damaged(damaged)
    if a.json:
        print(json.dumps({"session": str(a.file), "runs": runs, "damaged": damaged}, indent=2))
        return 3 if damaged else 0
    for r in runs:
        print(f"run {r['id']}  {r['workload']} on {r['target']} via {r['host']}  "
              f"[{r['status']}]  {r['events']} events, last seq {r['last_seq']}")
        if r.get("server_version"):
            print(f"  server: {r['server_version']}")
        if r["reason"]:
            print(f"  {r['reason']}")
        for line in _error_lines(r["errors"]):
            print(f"  {line}")
        if r["id"] in unfinished:
            print(f"  not complete in this file: 'versus attach {a.file}' brings in the rest "
                  f"from its host")
        w = max([10] + [len(p["name"]) + 1 for p in r["phases"]])   # a suite's long names
        print(f"  {'phase':<{w}}{'time s':>8}{'samples':>9}{'throughput':>14}  "
              f"{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}  {'usr%':>5}{'sys%':>5}{'iow%':>5}"
              f"{'idle%':>6}")
        for p in r["phases"]:
            lat, cpu = p["latency_ms"], p["cpu"]
            f = lambda v, w=8, d=3: f"{v:>{w}.{d}f}" if v is not None else f"{'-':>{w}}"
            tp = (f"{p['throughput_mean']:>10,.0f} {p['throughput_unit']}"
                  if p["throughput_mean"] is not None else f"{'-':>14}")
            print(f"  {p['name']:<{w}}{p['duration_s']:>8.1f}{p['samples']:>9}{tp:>14}  "
                  f"{f(lat['p50'])}{f(lat['p95'])}{f(lat['p99'])}  {f(cpu['user'], 5, 0)}"
                  f"{f(cpu['system'], 5, 0)}{f(cpu['iowait'], 5, 0)}{f(cpu['idle'], 6, 0)}")
            if p.get("server"):
                s = p["server"]
                print(f"  {'':<10}server {s['counter']}: {s['delta']:,} = {s['rate']:,.0f}/s "
                      f"({s['source']})")
            if p.get("result_text"):
                print(f"  {'':<10}result: {p['result_text']}")
            for line in _cpu_lines(p):
                print(f"  {'':<10}{line}")
            for line in p.get("missing_text") or ():      # a source that stopped, and why
                print(f"  {'':<10}{line}")
            for line in p.get("outages_text") or ():
                print(f"  {'':<10}{line}")
            for fl in p.get("flags") or ():
                print(f"  {'':<10}{'FAILED' if fl['severity'] == 'fail' else 'flag'}: "
                      f"{fl['name']}" + (f" — {fl['detail']}" if fl["detail"] else ""))
        for text in dict.fromkeys(p["latency_precision"]["text"] for p in r["phases"]
                                  if p.get("latency_precision")):
            print(f"  {'':<10}{text}")
        if r.get("step_table"):
            print()
            print(_step_table_text(r["step_table"]))
    return 3 if damaged else 0


def _step_table_text(st: dict) -> str:
    """The per-step table a workload declares, as aligned text (one row per phase)."""
    head, rows, _ = step_table_cells(st)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = ["  per step:"]
    for cells in [head] + rows:
        lines.append("  " + "  ".join(str(c).ljust(w) if i in (0, len(cells) - 1)
                                      else str(c).rjust(w)
                                      for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
    return "\n".join(lines)


def _error_lines(errors: list[str], limit: int = 10) -> list[str]:
    """The run's error events, each distinct first line once with its count."""
    counts: dict[str, int] = {}
    for msg in errors:
        first = (msg or "").strip().splitlines()[0] if (msg or "").strip() else "(no message)"
        counts[first] = counts.get(first, 0) + 1
    lines = [f"error: {m}" + (f" ({n} times)" if n > 1 else "")
             for m, n in list(counts.items())[:limit]]
    if len(counts) > limit:
        lines.append(f"… and {len(counts) - limit} other errors ('versus show --json' lists them)")
    return lines


def _cpu_lines(p: dict) -> list[str]:
    """`show`'s lines on where a phase's CPU went (app.analysis.cpu.describe_phase)."""
    from app.analysis.cpu import group_title
    out = []
    groups = p.get("cpu_groups") or {}
    if groups:
        parts = [f"{group_title(g)} {v['pct']:.1f} %"
                 + (f" ({v['us_per_op']:,.1f} µs/op)" if v.get("us_per_op") is not None else "")
                 for g, v in groups.items() if v.get("pct")]
        out.append("CPU by process group (% of host): " + "; ".join(parts))
    perf = p.get("perf") or {}
    if perf.get("unavailable"):
        out.append(f"server perf counters: not available: {perf['unavailable']}")
    elif perf:
        from app.analysis.compare import fmt_value
        from app.analysis.cpu import PERF_ROWS
        figs = [f"{title} {fmt_value(perf[k])} {unit}" for k, title, unit, _p, _l in PERF_ROWS
                if isinstance(perf.get(k), (int, float))]
        out.append("server (perf stat): " + ", ".join(figs))
        if perf.get("hardware_unavailable"):
            out.append(f"hardware counters: not available: {perf['hardware_unavailable']}")
    if p.get("client_limit"):
        out.append(p["client_limit"])
    return out


def cmd_import(a) -> int:
    """versus import FILE… --out SESSION: HammerDB, sysbench and pgbench logs as runs."""
    from app.store.importer import describe, import_logs
    try:
        outcome = import_logs([Path(f) for f in a.files], Path(a.out))
    except SessionError as exc:
        return _fail(str(exc))
    if a.json:
        print(json.dumps({"session": str(outcome.session_path),
                          "runs": [{"id": r.run_id, "workload": r.workload, "files": r.files,
                                    "target": r.target} for r in outcome.runs],
                          "problems": outcome.problems}, indent=2))
    else:
        for r in outcome.runs:
            print(f"imported {describe(r)}")
        if outcome.runs:
            print(f"session saved: {outcome.session_path} ({len(outcome.runs)} run"
                  f"{'s' if len(outcome.runs) != 1 else ''})")
    for p in outcome.problems:
        print(f"versus: {p}", file=sys.stderr)
    return 2 if outcome.problems else 0


def add_show(sub) -> None:
    s = sub.add_parser("show", help="summary per run and phase of a session file")
    s.add_argument("file")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)


def add_import(sub) -> None:
    im = sub.add_parser("import", help="import HammerDB, sysbench and pgbench logs as runs")
    im.add_argument("files", nargs="+", metavar="FILE",
                    help="logs: hammerdb.log / hdbtcount / xtprof, sysbench text or JSON output, "
                         "pgbench output or its -l logs (a HammerDB counter log or profile "
                         "joins the run it belongs to)")
    im.add_argument("--out", required=True, metavar="SESSION",
                    help="session file (appended to if it exists)")
    im.add_argument("--json", action="store_true")
    im.set_defaults(func=cmd_import)
