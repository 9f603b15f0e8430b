"""`versus export`: charts to PNG/SVG/PDF, series to CSV/JSON, tables, slide decks.

Only a chart image needs Qt (drawn offscreen by app.ui.charts.render, imported when asked
for, so the rest works without it). Exit codes as the rest of the CLI: 0 done, 2 bad input (nothing
written).

    versus export a.versus b.versus:2 --chart throughput --format png --size 1920x1080 --out t.png
    versus export a.versus b.versus --deck cmp.pptx [--align measure] [--base 1]
    versus export a.versus b.versus --series s.csv        (or .json)
    versus export a.versus b.versus --table summary.html  (or .md, .csv)
    versus export a.versus b.versus --parquet out/        (runs, phases, series .parquet)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.analysis.compare import CompareError, load_comparison, parse_ref
from app.analysis.metrics import CHARTS
from app.model.runset import EFFICIENCY_KEYS
from app.analysis.deck import (COST_KEY, SLIDES, deck_parts, deck_subtitle, default_slides, footer_text,
                               key_results, parse_slides)
from app.store.export import (ExportError, check_writable, series_csv, tables_text, to_json,
                              write_deck, write_text)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="versus export",
                                 description="Export charts, series, tables and slide decks of "
                                             "one or more runs.")
    ap.add_argument("runs", nargs="+", metavar="FILE[:RUN]")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--chart", metavar="NAME",
                      help=f"one chart: {', '.join(CHARTS)}")
    what.add_argument("--deck", metavar="OUT.pptx",
                      help="a slide deck: title slide, one slide per chart, the tables")
    what.add_argument("--series", metavar="OUT.csv|OUT.json",
                      help="the series: CSV one row per second, or JSON at full resolution")
    what.add_argument("--table", metavar="OUT.md|OUT.html|OUT.csv",
                      help="the per-phase summary and efficiency tables")
    what.add_argument("--parquet", metavar="DIR",
                      help="open data: runs.parquet, phases.parquet and series.parquet in DIR "
                           "(schema: README, Open data)")
    what.add_argument("--flamegraph", metavar="OUT.svg",
                      help="the first run's CPU profile of the server (--phase: of that "
                           "phase) as an SVG flame graph")
    ap.add_argument("--format", choices=("png", "svg", "pdf"),
                    help="chart format (default: from --out's suffix)")
    ap.add_argument("--size", default="1920x1080", metavar="WxH",
                    help="chart size in pixels (default 1920x1080; 1280x720 for smaller slides)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="HiDPI scale for PNG: 2 gives 3840x2160 pixels at 1920x1080 layout")
    ap.add_argument("--mode", choices=("overlay", "side-by-side"), default="overlay")
    ap.add_argument("--title", help="chart title instead of the chart's name")
    ap.add_argument("--log-y", action="store_true",
                    help="a logarithmic value axis (latency percentiles far apart); in a deck, "
                         "for the latency chart")
    ap.add_argument("--footer", action="store_true",
                    help="small print under charts and slides: each run's configuration and "
                         "where the numbers come from")
    ap.add_argument("--out", metavar="PATH", help="where to write the chart")
    ap.add_argument("--align", metavar="PHASE", help="align runs on the start of this phase")
    ap.add_argument("--base", type=int, default=1, metavar="N")
    ap.add_argument("--phase", help="tables: only this phase")
    ap.add_argument("--names", metavar="A,B,…", help="names for the runs, in order")
    ap.add_argument("--cost", default=COST_KEY, choices=EFFICIENCY_KEYS,
                    help="a suite deck's matrix: the cost per operation beside relative "
                         "throughput (default: CPU µs per operation)")
    ap.add_argument("--slides", metavar="KINDS",
                    help=f"a deck's slides after its title, comma-separated: "
                         f"{', '.join(SLIDES)} (warm-up phases in the tables); default: "
                         f"matrix,charts for a suite, charts,tables otherwise")
    return ap


def main(argv: list[str]) -> int:
    a = build_parser().parse_args(argv)
    try:
        return _run(a)
    except (CompareError, ExportError) as exc:
        print(f"versus: {exc}", file=sys.stderr)
        return 2


def _fail(msg: str) -> int:
    print(f"versus: {msg}", file=sys.stderr)
    return 2


def _run(a) -> int:
    if a.chart and a.chart not in CHARTS:
        return _fail(f"no chart called {a.chart!r}; charts are: {', '.join(CHARTS)}")
    if a.chart:
        # a chart image is drawn with Qt; decks (native charts), series and tables need none
        try:
            from app.ui.charts.render import ensure_app, parse_size, render_bytes
        except ImportError as exc:
            return _fail(f"chart images are drawn with Qt, which this installation lacks "
                         f"({exc.name}); install Versus with its GUI, or export --deck, "
                         f"--series or --table")
        try:
            size = parse_size(a.size)
        except ValueError as exc:
            return _fail(str(exc))
    slides = None
    if a.slides is not None:
        try:
            slides = parse_slides(a.slides)
        except ValueError as exc:
            return _fail(str(exc))
    if not 0.25 <= a.scale <= 4:
        return _fail("--scale is between 0.25 and 4")
    out = a.out if a.chart else (a.deck or a.series or a.table or a.flamegraph or a.parquet)
    if a.chart and not out:
        return _fail("--chart needs --out PATH")
    check_writable(out)                   # before any work: an unwritable path fails fast
    fmt = None
    if a.chart:
        fmt = (a.format or Path(out).suffix.lstrip(".")).lower()
        if fmt not in ("png", "svg", "pdf"):
            return _fail(f"cannot tell the format of {out}: give --format png, svg or pdf")
    comp = load_comparison([parse_ref(x) for x in a.runs], align=a.align,
                           names=a.names.split(",") if a.names else None)
    base = a.base - 1
    if not 0 <= base < len(comp):
        return _fail(f"there is no run {a.base} to use as the base; runs are numbered 1 to "
                     f"{len(comp)}")
    phases = [a.phase] if a.phase else (comp.common_phases() or comp.phase_order())
    if a.parquet:
        from app.analysis.opendata import write_parquet
        try:
            for p in write_parquet(comp, out):
                print(p)
        except OSError as exc:
            return _fail(f"cannot write {out}: {exc.strerror or exc}")
    elif a.flamegraph:
        from app.analysis.flame import run_svg
        r = comp.runs[0]
        try:
            write_text(out, run_svg(r.ref.file, r.ref.run_id, r.label, a.phase))
        except ValueError as exc:
            return _fail(str(exc))
    elif a.series:
        if out.lower().endswith(".json"):
            write_text(out, to_json(comp.series_json()))
        else:
            seconds, cols = comp.series_columns()
            write_text(out, series_csv(seconds, cols))
    elif a.table:
        suffix = Path(out).suffix.lower()
        fmt_t = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
                 ".csv": "csv"}.get(suffix)
        if fmt_t is None:
            return _fail(f"tables are written as .md, .html or .csv, not {suffix or out!r}")
        tables = comp.tables(base, phases)
        write_text(out, tables_text(tables, fmt_t))
    elif a.chart:
        ensure_app()
        from app.store.export import write_bytes
        write_bytes(out, render_bytes(comp, a.chart, fmt, size, a.scale, mode=a.mode,
                                      title=a.title, log_y=a.log_y, footer=a.footer))
    else:
        charts, tables, lead = deck_parts(comp, base, slides or default_slides(comp), a.mode,
                                          ("latency",) if a.log_y else (), a.footer, a.phase,
                                          a.cost)
        write_deck(out, a.title or comp.title(), deck_subtitle(comp, base), comp.deck_runs(),
                   charts, tables, footer=footer_text(comp) if a.footer else "",
                   key_results=key_results(comp, base), lead_tables=lead)
    print(f"wrote {out}")
    for d in comp.damaged():               # skipped rows of the files, one sentence each
        print(f"versus: {d}", file=sys.stderr)
    return 3 if comp.damaged() else 0

