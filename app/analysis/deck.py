"""What a comparison's slide deck shows, as plain data for app.store.export.write_deck:
native line charts (series thinned to a few hundred points a line, keeping every peak; axes
that hold all the data in at most eight round steps), the key results for the title slide,
and the small print saying where the numbers come from.

    charts = [deck_chart(comp, name, mode="overlay") for name in comp.deck_charts()]
    write_deck(path, comp.title(), subtitle, comp.deck_runs(), charts, comp.tables(base),
               footer=footer_text(comp), key_results=key_results(comp, base))
"""
from __future__ import annotations

import math
from typing import Sequence

from app.analysis.compare import Comparison, _short_version, fmt_row
from app.analysis.metrics import METRICS, chart as chart_def, spec_of
from app.model.runset import LINE_STYLES, Chart, short_title
from app.model.scale import clock_step, log_range, phase_labels, value_range
from app.store.export import DeckChart, DeckPanel, DeckSeries

MAX_POINTS = 400                # per line: an editable chart stays light in PowerPoint


def line_styles(keys: Sequence[str]) -> dict[str, str]:
    """Each metric's line style in a chart of several: its own, unless another metric of the
    chart has that style too (NOPM and TPM both solid), then one of LINE_STYLES in turn."""
    own = [METRICS[k].style if k in METRICS else "solid" for k in keys]
    if len(set(own)) == len(own):
        return dict(zip(keys, own))
    return {k: LINE_STYLES[i % len(LINE_STYLES)] for i, k in enumerate(keys)}


def thin(t: Sequence[float], v: Sequence[float], max_points: int = MAX_POINTS
         ) -> tuple[list[float], list[float]]:
    """At most ``max_points`` points: per bucket its lowest and highest, in time order, so no
    peak or dip disappears (what the screen's "peak" downsampling shows too)."""
    n = len(t)
    if n <= max_points:
        return list(t), list(v)
    per = max(1, -(-n * 2 // max_points))
    xs, ys = [], []
    for a in range(0, n, per):
        idx = [i for i in range(a, min(n, a + per)) if v[i] == v[i]]
        if not idx:
            continue
        lo = min(idx, key=lambda i: v[i])
        hi = max(idx, key=lambda i: v[i])
        for i in sorted({lo, hi}):
            xs.append(t[i])
            ys.append(v[i])
    return xs, ys


def footer_text(comp: Comparison, chart: Chart | None = None) -> str:
    """The configuration of each run and where the chart's numbers come from."""
    runs = []
    for r in comp.runs:
        params = ", ".join(f"{k}={v}" for k, v in r.params.items() if k not in ("rebuild",))
        server = _short_version(r.engine, r.server_version) if r.server_version else r.target
        runs.append(f"{r.index + 1}. {server} on {r.hostname}"
                    + (f" ({r.cores} cores)" if r.cores else "") + f", {r.workload} {params}")
    source = (chart.description or chart.title) if chart is not None else (
        "throughput: client count per interval; latency: the agent's histograms; "
        "host: /proc on the benchmark host")
    return f"{source[0].upper()}{source[1:]}.  " + "  ·  ".join(runs)


def deck_chart(comp: Comparison, name: str, mode: str = "overlay", log_y: bool = False,
               footer: bool = False) -> DeckChart:
    ch = chart_def(name)
    unit = ch.unit or comp.metric_unit(ch.metrics[0])
    many = len(ch.metrics) > 1
    n = len(comp.runs)
    groups = [list(range(n))] if mode == "overlay" else [[i] for i in range(n)]
    lo, hi = comp.time_range()
    styles = line_styles(ch.metrics)
    panels, values = [], []
    for members in groups:
        series = []
        for i in members:
            r = comp.runs[i]
            for k in ch.metrics:
                t, v = comp.series(i, k)
                if not len(t):
                    continue
                values.append(v)
                xs, ys = thin(t, v)
                m = METRICS[k]
                series.append(DeckSeries(
                    r.label if not many else f"{r.label} · {short_title(m.title)}",
                    r.colour, styles[k] if many else "solid", xs, ys))
        marks = [(x, label) for x, label, _left in
                 phase_labels(comp.phase_marks(members), lo, hi)]
        first = comp.runs[members[0]]
        panels.append(DeckPanel(first.label if len(members) == 1 else "", first.colour, series,
                                marks))
    if log_y:
        a, b = log_range(values)
        y_range = (a, b, 1.0)
    else:
        y_range = value_range(values, from_zero=True, fixed_top=ch.y_max)
    align = comp.align_phase
    subtitle = (f"{unit} · " if unit else "") + (
        f"time since the start of phase {align}" if align else "time since each run started")
    if log_y:
        subtitle += " · log scale"
    head = ch.title.split(" · ")[0]
    return DeckChart(name, ch.title, subtitle, f"{head} ({unit})" if unit else head,
                     f"time since the start of {align}" if align else "elapsed",
                     panels, y_range, (lo, hi, clock_step(hi - lo)),
                     log_y=log_y, footer=footer_text(comp, ch) if footer else "")


def deck_subtitle(comp: Comparison, base: int = 0) -> str:
    """The title slide's second line: how the runs are aligned and, when there is more than
    one run, which run the ratios are to."""
    sub = (f"aligned on the start of {comp.align_phase}" if comp.align_phase
           else "aligned on run start")
    return sub + (f"; ratios to run {base + 1}" if len(comp.runs) > 1 else "")


SLIDES = ("matrix", "charts", "tables", "warmups")    # what a deck may hold beyond its title


def default_slides(comp: Comparison) -> tuple[str, ...]:
    """A suite's deck leads with its tests × runs matrices and leaves the per-phase tables
    (three slides a phase) out; any other deck has its charts and tables."""
    return ("matrix", "charts") if is_suite(comp) else ("charts", "tables")


def parse_slides(text: str) -> tuple[str, ...]:
    """``--slides matrix,charts``: ValueError with a sentence for a name that is not one."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    bad = [w for w in words if w not in SLIDES]
    if bad or not words:
        raise ValueError(f"--slides takes a comma-separated list of {', '.join(SLIDES)}"
                         + (f", not {', '.join(map(repr, bad))}" if bad else ""))
    return tuple(words)


def is_suite(comp: Comparison) -> bool:
    from app.analysis.matrix import step_rows
    return len(step_rows(comp)) > 1


def deck_phases(comp: Comparison, warmups: bool = False) -> list[str]:
    """The phases a deck's tables cover: those every run has (a lone run: all of its own),
    without warm-ups (uncounted load, not results) unless asked."""
    phases = (comp.common_phases() if len(comp.runs) > 1 else []) or comp.phase_order()
    if warmups:
        return phases
    return [p for p in phases if not any(r.phase_role(p) == "warmup" for r in comp.runs)]


COST_KEY = "eff.cpu_us"            # the matrix slides' cost beside relative throughput


def matrix_tables(comp: Comparison, base: int = 0, cost: str = COST_KEY) -> list:
    """One table per test group: each test's throughput relative to the base run (coloured
    as every ratio), then each run's cost per operation (``cost``), classed the same way
    against the base run. Empty for one run or no suite."""
    from app.analysis.matrix import suite_matrix
    from app.model.runset import Table
    if len(comp.runs) < 2 or not is_suite(comp):
        return []
    rel = suite_matrix(comp, "throughput", base)
    per = suite_matrix(comp, cost, base)
    m = METRICS[cost]
    b = comp.runs[base]
    head = (["test"] + [f"{r.index + 1}: {r.label} ×" for r in comp.runs]
            + [f"{r.index + 1}: {r.label} {m.title} ({m.unit})"
               for r in comp.runs])
    out = []
    for group, rows in rel.groups():
        t = Table(f"{group + ': ' if group else ''}{rel.title.split(' relative')[0]} "
                  f"relative to run {base + 1} ({b.label}), and {m.title}", head)
        for row in rows:
            c = per.row(row.phase)
            costs = fmt_row(list(c.values)) if c else ["n/a"] * len(comp.runs)
            classes = [rt.cls for rt in c.ratios] if c else [None] * len(comp.runs)
            t.add([row.phase] + [rt.text() for rt in row.ratios] + costs,
                  [None] + [rt.cls for rt in row.ratios] + classes)
        t.notes = [f"× = throughput relative to run {base + 1}; " + rel.notes[-1],
                   *per.notes[:-1]]
        out.append(t)
    return out


def deck_parts(comp: Comparison, base: int, slides: Sequence[str], mode: str = "overlay",
               log_charts: Sequence[str] = (), footer: bool = False,
               phase: str | None = None, cost: str = COST_KEY
               ) -> tuple[list[DeckChart], list, list]:
    """(charts, tables, matrices) of a deck with the chosen ``slides``: one recipe for the
    GUI's and the CLI's exports, so the same runs give the same deck."""
    charts = [deck_chart(comp, c, mode, log_y=c in log_charts, footer=footer)
              for c in comp.deck_charts()] if "charts" in slides else []
    tables = comp.tables(base, [phase] if phase else deck_phases(
        comp, "warmups" in slides)) if "tables" in slides else []
    lead = matrix_tables(comp, base, cost) if "matrix" in slides else []
    return charts, tables, lead


def key_results(comp: Comparison, base: int = 0, phase: str | None = None) -> list[str]:
    """Title-slide lines: each workload's headline metric in the measured phase, every run's
    value and its ratio to the base run."""
    phases = comp.common_phases() if len(comp) > 1 else comp.phase_order()
    steps = [p for p in phases if all(r.phase_role(p) == "step" for r in comp.runs)]
    if phase is None and len(steps) > 1 and comp.align_phase not in phases:
        return _suite_results(comp, base, steps)
    if phase is None:
        phase = comp.align_phase if comp.align_phase in phases else next(
            (p for p in reversed(phases) if any(
                (spec_of(r.workload) and spec_of(r.workload).phase_role(p) == "measured")
                for r in comp.runs)), phases[-1] if phases else None)
    if phase is None:
        return []
    keys = []
    for r in comp.runs:
        spec = spec_of(r.workload)
        key = spec.headline.key if spec is not None else "throughput"
        if key not in keys:
            keys.append(key)
    vals = [comp.phase_values(i, phase) for i in range(len(comp.runs))]
    out = []
    b = comp.runs[base] if 0 <= base < len(comp.runs) else comp.runs[0]
    for key in keys:
        nums = [v.get(key) for v in vals]
        if all(x is None for x in nums):
            continue
        m = METRICS.get(key)
        title = m.title if m else key
        unit = comp.metric_unit(key) if m else ""
        texts = fmt_row(nums)
        base_v = nums[b.index]
        parts = []
        for r, x, text in zip(comp.runs, nums, texts):
            ratio = (f" ({x / base_v:.2f}× run {b.index + 1})"
                     if r.index != b.index and x is not None and base_v else "")
            parts.append(f"{r.index + 1}. {r.label}: {text} {unit}{ratio}".replace("  ", " "))
        out.append(f"{title} in {phase}: " + ";  ".join(parts))
    return out


def _suite_results(comp: Comparison, base: int, steps: list[str]) -> list[str]:
    """A suite (many steps, none measured above the others): per run, the geometric mean over
    the steps of its throughput relative to the base run, and how many steps it rose or fell
    in (±5 %, the tables' colours)."""
    b = comp.runs[base] if 0 <= base < len(comp.runs) else comp.runs[0]
    base_vals = [comp.phase_values(b.index, p).get("throughput") for p in steps]
    if len(comp.runs) == 1:
        n = sum(1 for v in base_vals if v)
        return [f"{n} steps of {b.workload} on {b.label}: per-step throughput in the tables"]
    out = []
    for r in comp.runs:
        if r.index == b.index:
            continue
        logs, up, down = [], 0, 0
        for p, bv in zip(steps, base_vals):
            v = comp.phase_values(r.index, p).get("throughput")
            if v and bv:
                q = v / bv
                logs.append(math.log(q))
                up += q >= 1.05
                down += q <= 0.95
        if logs:
            g = math.exp(math.fsum(logs) / len(logs))
            out.append(f"{r.index + 1}. {r.label}: {g:.2f}× run {b.index + 1} ({b.label}), "
                       f"geometric mean of throughput over {len(logs)} steps; "
                       f"{up} faster, {down} slower (±5 %)")
    return out
