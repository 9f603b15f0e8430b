"""The command line: the same runs as the GUI, for automation and tests.

Exit codes: 0 success, 1 the run failed (compare: the regression gate failed), 2 bad input
(nothing was started),
3 the run finished but its stream had damaged lines, 4 the regression gate is inconclusive
(an interval straddles the threshold), 130 stopped by the user.
"""
from __future__ import annotations

import argparse
import sys

from . import compare, export, hosts, plan, profiles, run, runs, sessions


def build_parser() -> argparse.ArgumentParser:
    from app import __version__
    ap = argparse.ArgumentParser(prog="versus", description="Database benchmarks you can defend.")
    ap.add_argument("--version", action="version", version=f"versus {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    run.add_run(sub)
    sessions.add_show(sub)
    run.add_attach(sub)
    hosts.add_host(sub)
    hosts.add_target(sub)
    compare.add_compare(sub)
    sessions.add_import(sub)
    runs.add_runs(sub)
    # `versus export` has its own parser (app.cli.export); listed here so --help shows it
    sub.add_parser("export", help="export charts (PNG, SVG, PDF), series (CSV, JSON), tables "
                                  "and slide decks; see versus export --help", add_help=False)
    hosts.add_check(sub)
    run.add_workloads(sub)
    plan.add_parsers(sub)
    profiles.add_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["export"]:
        return export.main(args[1:])
    a = build_parser().parse_args(args)
    return a.func(a)
