"""`versus runs`: find runs across every session file of the history (the sessions folder and
the folders added to it), and follow one figure over versions or dates (app.store.history,
app.analysis.trend)."""
from __future__ import annotations

import sys

from .console import fail as _fail


def _filters(a) -> dict:
    from app.store.history import HistoryError, parse_date
    params = {}
    for kv in a.param or []:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise HistoryError(f"--param takes NAME=VALUE, not {kv!r}")
        params[k] = v
    return {"workload": a.workload, "engine": a.engine, "version": a.version,
            "profile": a.profile, "host": a.host, "params": params or None,
            "since": parse_date(a.since) if a.since else None,
            "until": parse_date(a.until, end=True) if a.until else None,
            "status": a.status}


def cmd_runs(a) -> int:
    """List the runs matching the filters, or their trend (--trend METRIC). Exit 3 when a
    session file was damaged (named on standard error, its runs skipped)."""
    from app.analysis.trend import trend
    from app.store.export import ExportError, tables_text, to_json, write_text
    from app.model.runset import Table
    from app.store.history import HistoryError, HistoryIndex
    try:
        with HistoryIndex() as idx:
            for f in a.add_folder or []:
                print(f"history: added {idx.add_folder(f)}", file=sys.stderr)
            for f in a.remove_folder or []:
                idx.remove_folder(f)
            if a.folders:
                for f in idx.folders():
                    print(f)
                return 0
            problems = idx.refresh()
            runs = idx.runs(**_filters(a))
        if a.trend:
            t = trend(runs, a.trend, a.by, a.phase)
            text = (to_json(t.to_json()) if a.json else
                    tables_text([t.table()], "csv" if a.csv else "markdown"))
        elif a.json:
            text = to_json([r.to_json() for r in runs])
        else:
            t = Table(f"{len(runs)} run{'s' if len(runs) != 1 else ''}",
                      ["date", "workload", "engine", "version", "profile", "host",
                       "parameters", "throughput", "run"])
            for r in runs:
                tp = r.figure("throughput", a.phase)
                unit = next((p.unit for p in r.phases if p.throughput == tp), "")
                t.add([r.date, r.workload, r.engine, r.version, r.profile or "—", r.host,
                       " ".join(f"{k}={v}" for k, v in sorted(r.params.items())),
                       f"{tp:,.0f} {unit}".strip() if tp is not None else "—", r.ref])
            text = tables_text([t], "csv" if a.csv else "markdown")
        if a.out:
            write_text(a.out, text)
        else:
            sys.stdout.write(text)
    except (HistoryError, ExportError, ValueError) as exc:
        return _fail(str(exc))
    for p in problems:
        print(f"versus: {p}", file=sys.stderr)
    return 3 if problems else 0


def add_runs(sub) -> None:
    r = sub.add_parser("runs", help="find runs across all session files (the history), and "
                                    "follow a figure over versions or dates")
    r.add_argument("--workload")
    r.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    r.add_argument("--version", help="server version: 18 finds 18.0 and 18.1, 11.4 finds 11.4.x")
    r.add_argument("--profile")
    r.add_argument("--host", help="the benchmark host's name")
    r.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="a parameter's value (repeatable): --param clients=16")
    r.add_argument("--since", metavar="YYYY-MM-DD")
    r.add_argument("--until", metavar="YYYY-MM-DD", help="up to and including this day")
    r.add_argument("--status", help="ok, failed, stopped …")
    r.add_argument("--phase", help="the phase whose figures are listed (default: the "
                                   "measured one)")
    r.add_argument("--trend", metavar="METRIC", choices=("throughput", "p95", "p99", "errors"),
                   help="the metric over versions or dates, with change points (Apache "
                        "Otava e-divisive)")
    r.add_argument("--by", choices=("version", "date"), default="version")
    r.add_argument("--add-folder", action="append", metavar="DIR",
                   help="index the session files of DIR too (kept in the history)")
    r.add_argument("--remove-folder", action="append", metavar="DIR")
    r.add_argument("--folders", action="store_true", help="list the folders the history reads")
    f = r.add_mutually_exclusive_group()
    f.add_argument("--csv", action="store_true")
    f.add_argument("--json", action="store_true")
    r.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    r.set_defaults(func=cmd_runs)
