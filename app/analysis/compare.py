"""Compare recorded runs: aligned series, per-phase values, ratios to a base run, matrices.

No Qt. The GUI's Compare and Replay views, ``versus compare`` and ``versus export`` all read
a ``Comparison``:

    comp = load_comparison([RunRef("a.versus"), RunRef("b.versus", "20261121-…")],
                           align="measure")
    t, v = comp.series(0, "throughput")          # array('d') pair, t relative to the align point
    comp.phase_values(1, "measure")              # {"throughput": 25519.2, "latency.p95": …}
    comp.summary_table("measure", base=0)        # app.model.runset.Table with colour classes
    comp.values_at(12.0)                         # the values panel under a cursor at 12 s

Times: every point sits at the end of its interval (``interval[1]``, run clock), minus the
run's ``offset``: 0 when aligned on run start, the start of the chosen phase otherwise.

Phase values: throughput, TPM, latency and errors come from the agent's phase ``summary``
when there is one (it counts every operation and merges the full histograms), else from the
samples of the phase. Host metrics are means over the phase weighted by how much of each
host interval lies inside it. Hardware efficiency divides host totals over the exact
interval the operations were counted in by those operations:

    CPU µs/op   = Σ busy% / 100 × cores × overlap_s × 10⁶ / ops
                  (busy = 100 − idle − iowait − steal: time the host's CPUs did work)
    cs/op       = Σ cs_per_s × overlap_s / ops
    reads/op    = Σ reads_per_s × overlap_s / ops
    KB read/op  = Σ read_kb_per_s × overlap_s / ops  (and written likewise)
"""
from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from itertools import compress
from typing import Any, Iterable, Sequence

from app.analysis import cpu
from app.analysis.metrics import CHARTS, METRICS, TABLE_METRICS, WORKLOAD_CHARTS
from app.analysis.results import flags_text
from app.model.derive import kind_of
from app.model.runset import (EFFICIENCY_KEYS, SERVER_EFFICIENCY_KEYS, WORSE,
                              Ratio, RunRef, Table, fmt_value, ratio)
from app.analysis.phase_values import (EFF_COLUMNS, busy_at, op_column,
                                       phase_values as phase_values_of)
# the run data lived here: its callers import it from here too
from app.analysis.rundata import (CompareError, RunData, _label_runs, _short_version,  # noqa: F401
                                  load_run, parse_ref, resolve_run)
from app.store.session import SeriesTable, SessionError, SessionFile

NAN = float("nan")


# --- loading -----------------------------------------------------------------------------
def load_comparison(refs: Iterable[RunRef], align: str | None = None,
                    names: Sequence[str] | None = None) -> "Comparison":
    """Open the session files read-only and load every run they name.

    Raises CompareError (or SessionError, a subclass of Exception with a sentence) for a
    file that cannot be read, an unknown run, or an align phase some run lacks."""
    runs: list[RunData] = []
    for ref in refs:
        try:
            with SessionFile(ref.file) as s:
                for rec in resolve_run(s, ref):
                    runs.append(load_run(s, rec.id, len(runs), ref.file, rec))
        except SessionError as exc:
            raise CompareError(str(exc)) from None
    if not runs:
        raise CompareError("no runs to compare")
    _label_runs(runs, names)
    comp = Comparison(runs)
    comp.align(align)
    return comp


# --- the comparison ------------------------------------------------------------------------
class Comparison:
    def __init__(self, runs: list[RunData]):
        self.runs = runs
        self.align_phase: str | None = None

    def __len__(self) -> int:
        return len(self.runs)

    def damaged(self) -> list[str]:
        """The damaged rows the runs' files had, one sentence each (they were skipped)."""
        return [d for r in self.runs for d in r.damaged]

    # alignment
    def align(self, phase: str | None) -> None:
        """Align every run on its start (None) or on the start of ``phase``."""
        if phase:
            lacking = [r for r in self.runs if r.phase(phase) is None]
            if lacking:
                common = self.common_phases()
                hint = (f"phases all runs have: {', '.join(common)}" if common
                        else "the runs have no phase in common; align them on their start")
                raise CompareError(
                    f"cannot align on phase {phase!r}: "
                    + "; ".join(f"run {r.index + 1} ({r.label}) has "
                                f"{', '.join(r.phase_names()) or 'no phases'}" for r in lacking)
                    + f" ({hint})")
        for r in self.runs:
            r.offset = r.phase(phase).t0 if phase else 0.0
            r._cache.clear()
        self.align_phase = phase

    def phase_order(self) -> list[str]:
        """Every phase name of every run, in first-seen order."""
        out: list[str] = []
        for r in self.runs:
            for p in r.phases:
                if p.name not in out:
                    out.append(p.name)
        return out

    def common_phases(self) -> list[str]:
        return [p for p in self.phase_order() if all(r.phase(p) for r in self.runs)]

    def phase_marks(self, members) -> list[tuple[float, str]]:
        """(aligned start, name) of each phase of the given runs, equal ones drawn once;
        an outage (reconnect=on) is marked at its first error, as "outage N"."""
        marks: list[tuple[float, str]] = []
        for i in members:
            r = self.runs[i]
            starts = [(p.t0, p.name) for p in r.phases] + [(o.t0, o.label) for o in r.outages]
            for t0, name in starts:
                x = t0 - r.offset
                if not any(abs(x - mx) < 1.0 and n == name for mx, n in marks):
                    marks.append((x, name))
        return marks

    def outage_spans(self, members) -> list[tuple[float, float, str]]:
        """(aligned first error, aligned reconnect, label) of each outage of the given runs:
        the stretch a chart shades."""
        out = []
        for i in members:
            r = self.runs[i]
            for o in r.outages:
                out.append((o.t0 - r.offset, o.down_until(r.last_t) - r.offset, o.label))
        return out

    def time_range(self) -> tuple[float, float]:
        lo = min(-r.offset for r in self.runs)
        hi = max(r.last_t - r.offset for r in self.runs)
        return lo, hi

    def units(self) -> list[str]:
        return [r.unit for r in self.runs]

    # series
    def metric_unit(self, key: str, run: int | None = None) -> str:
        m = METRICS[key]
        if m.unit:
            return m.unit
        units = {r.unit for r in self.runs} if run is None else {self.runs[run].unit}
        return " / ".join(sorted(units))

    def has_metric(self, key: str) -> bool:
        return any(len(self.series(i, key)[0]) for i in range(len(self.runs)))

    def workload_charts(self) -> list[str]:
        """The charts the runs' workloads declare, in declaration order."""
        out: list[str] = []
        for r in self.runs:
            for c in (r.spec.charts if r.spec else ()):
                if c.name in CHARTS and c.name not in out:
                    out.append(c.name)
        return out

    def default_charts(self) -> list[str]:
        """What a view shows first: the workloads' own charts (or throughput), latency, CPU."""
        want = (self.workload_charts() or ["throughput"]) + ["latency", "cpu"]
        have = self.charts()
        return [c for c in want if c in have] or have[:1]

    def deck_charts(self) -> list[str]:
        """A slide deck's charts: the defaults, then the host's cost and CPU per operation."""
        have = self.charts()
        extra = [c for c in ("context-switches", "disk-kb", "cpu-per-op") if c in have]
        return list(dict.fromkeys(self.default_charts() + extra))

    def charts(self) -> list[str]:
        """Chart names that have data in this comparison, in registry order; a workload's
        own charts only where one of the runs is of that workload."""
        own = set(self.workload_charts())
        return [name for name, c in CHARTS.items()
                if (name not in WORKLOAD_CHARTS or name in own)
                and any(self.has_metric(k) for k in c.metrics)]

    def series(self, run: int, key: str) -> tuple[array, array]:
        """(t, v) of one metric (or derived series, by its app.model.derive name) of one run:
        aligned seconds and values, gaps left out."""
        r = self.runs[run]
        hit = r._cache.get(key)
        if hit is not None:
            return hit
        m = METRICS.get(key)
        column = m.column if m is not None else key      # a derived series by its name
        own = r.spec.metric(key) if r.spec is not None else None
        if own is not None:
            column = own.series          # a result metric charts what the run's workload says
        elif m is not None and m.per_phase == "result":
            column = ""                  # another workload's result: this run has none
        if m is not None and m.per_phase == "efficiency":
            t, v = self._efficiency_series(r, key)
        else:
            table = r.table(kind_of(column)) if column else SeriesTable("none")
            col = table.column(column) if column else None
            if col is None:
                t, v = array("d"), array("d")
            else:
                ends = self._ends(r, table)
                if any(map(math.isnan, col)):
                    keep = [x == x for x in col]
                    t = array("d", compress(ends, keep))
                    v = array("d", compress(col, keep))
                else:
                    t, v = array("d", ends), array("d", col)
        r._cache[key] = (t, v)
        return t, v

    @staticmethod
    def _ends(r: RunData, table: SeriesTable) -> array:
        """Aligned interval ends of a table's rows (the event time where there is none)."""
        key = f"ends:{table.kind}"
        hit = r._cache.get(key)
        if hit is None:
            off = r.offset
            if None in table.t1:
                raw = [e if e is not None else t for e, t in zip(table.t1, table.t)]
            else:
                raw = table.t1
            hit = r._cache[key] = (array("d", [x - off for x in raw]), array("d"))
        return hit[0]

    @staticmethod
    def _host_ops(r: RunData) -> tuple[list[int], list[float], list[float]]:
        """Host rows paired with the sample that ended with them (within 0.6 s): the host
        row indexes, their aligned times, and operations per second of the paired sample."""
        hit = r._cache.get("host_ops")
        if hit is not None:
            return hit  # type: ignore[return-value]
        idx: list[int] = []
        times: list[float] = []
        per_s: list[float] = []
        s_t1 = [x if x is not None else r.sample.t[i] for i, x in enumerate(r.sample.t1)]
        ops = r.sample.column(op_column(r)) or []
        j, n = 0, len(s_t1)
        if ops:
            for i, te in enumerate(r.hosts.t1):
                if te is None:
                    continue
                while j < n and s_t1[j] < te - 0.6:          # both are in time order
                    j += 1
                if j >= n:
                    break
                if abs(s_t1[j] - te) > 0.6:
                    continue
                c = ops[j]                    # operations per second of that interval
                if c == c and c > 0:
                    idx.append(i)
                    times.append(te - r.offset)
                    per_s.append(c)
        r._cache["host_ops"] = (idx, times, per_s)  # type: ignore[assignment]
        return idx, times, per_s

    def _efficiency_series(self, r: RunData, key: str) -> tuple[array, array]:
        """Per host interval: host rate / operations per second of the same interval."""
        idx, times, per_s = self._host_ops(r)
        h = r.hosts.columns
        if key == "eff.cpu_us":
            k = (r.cores or 1) * 1e4                      # busy % / 100 × cores × 1e6
            vals = [busy_at(h, i) for i in idx]
            pairs = [(t, b * k / p) for t, b, p in zip(times, vals, per_s) if b is not None]
        else:
            col = h.get(EFF_COLUMNS[key])
            if col is None:
                return array("d"), array("d")
            pairs = [(t, col[i] / p) for t, i, p in zip(times, idx, per_s) if col[i] == col[i]]
        return array("d", [t for t, _ in pairs]), array("d", [v for _, v in pairs])

    def values_at(self, t: float, keys: Sequence[str] | None = None
                  ) -> list[dict[str, float | None]]:
        """For a cursor at aligned time t: each run's latest value at or before t (None
        before the first point or more than 3 s after the last one)."""
        keys = list(keys or [k for c in CHARTS.values() for k in c.metrics])
        out = []
        for i in range(len(self.runs)):
            row: dict[str, float | None] = {}
            for k in keys:
                ts, vs = self.series(i, k)
                j = bisect_right(ts, t) - 1
                row[k] = vs[j] if j >= 0 and t - ts[j] <= 3.0 else None
            out.append(row)
        return out

    def per_second(self, keys: Sequence[str] | None = None, phase: str | None = None
                   ) -> tuple[list[int], dict[tuple[int, str], list[float | None]]]:
        """Resampled to whole aligned seconds: a point at t counts for second ceil(t).

        Returns the seconds and, per (run index, metric key), one value or None a second.
        With ``phase``, only seconds inside that phase of at least one run."""
        keys = list(keys or [k for k in METRICS if self.has_metric(k)])
        per: dict[tuple[int, str], dict[int, float]] = {}
        lo, hi = math.inf, -math.inf
        for i, r in enumerate(self.runs):
            span = r.phase(phase) if phase else None
            for k in keys:
                ts, vs = self.series(i, k)
                d: dict[int, float] = {}
                for x, y in zip(ts, vs):
                    if span is not None:
                        raw = x + r.offset
                        if raw < span.t0 or (span.t1 is not None and raw > span.t1 + 0.5):
                            continue
                    d[math.ceil(x - 1e-9)] = y
                if d:
                    lo, hi = min(lo, min(d)), max(hi, max(d))
                per[(i, k)] = d
        seconds = list(range(int(lo), int(hi) + 1)) if lo <= hi else []
        return seconds, {key: [d.get(s) for s in seconds] for key, d in per.items()}

    # per-phase values
    def phase_values(self, run: int, phase: str) -> dict[str, float | None]:
        """Every metric's value over one phase of one run; None where it cannot be had."""
        r = self.runs[run]
        key = f"phase:{phase}"
        hit = r._values.get(key)
        if hit is None:
            hit = r._values[key] = phase_values_of(r, phase)
        return dict(hit)

    def sources(self, phase: str, key: str) -> list[str | None]:
        """Per run, where a result metric's value in this phase comes from."""
        out: list[str | None] = []
        for r in self.runs:
            rv = next((x for x in r.results(phase) if x.key == key), None)
            out.append(rv.source if rv else None)
        return out

    # tables
    def _values(self, phase: str) -> list[dict[str, float | None]]:
        return [self.phase_values(i, phase) for i in range(len(self.runs))]

    def table(self, phase: str, base: int = 0, keys: Sequence[str] | None = None,
              title: str | None = None) -> Table:
        """Rows are metrics; per run its value, then per other run its ratio to ``base``."""
        self._check_base(base)
        if all(r.phase(phase) is None for r in self.runs):
            raise CompareError(f"no run has a phase {phase!r}; phases: "
                               f"{', '.join(self.phase_order()) or 'none'}")
        # a result read from the summary's rate is the Throughput row itself: not twice
        keys = list(keys or [k for k in TABLE_METRICS if k not in EFFICIENCY_KEYS
                             and METRICS[k].summary != "rate"])
        vals = self._values(phase)
        keys = [k for k in keys if any(v.get(k) is not None for v in vals)]
        others = [i for i in range(len(self.runs)) if i != base]
        b = self.runs[base]
        header = (["metric", "unit"] + [f"{r.index + 1}: {r.label}" for r in self.runs]
                  + [f"{self.runs[i].index + 1} / {base + 1}" for i in others])
        ratios = f" — ratios to run {base + 1} ({b.label})" if others else ""
        t = Table(title or f"{phase}{ratios}", header)
        for k in keys:
            m = METRICS[k]
            cells = [m.title, self._unit_cell(k, phase)]
            classes: list[str | None] = [None, None]
            cells += fmt_row([v.get(k) for v in vals])      # one number of decimals a row
            classes += [None] * len(vals)
            for i in others:
                rt = ratio(vals[i].get(k), vals[base].get(k), m.lower_is_better)
                cells.append(rt.text())
                classes.append(rt.cls)
            t.add(cells, classes)
        for k in keys:
            if METRICS[k].per_phase == "result":
                srcs = self.sources(phase, k)
                if len(set(s for s in srcs if s)) == 1:
                    t.notes.append(f"{METRICS[k].title}: {next(s for s in srcs if s)}")
                else:
                    t.notes.extend(f"{METRICS[k].title} of run {i + 1}: {s}"
                                   for i, s in enumerate(srcs) if s)
        for r in self.runs:
            fl = r.flags(phase)
            if fl:
                t.notes.insert(0, f"run {r.index + 1} ({r.label}) {phase}: {flags_text(fl)}")
        missing = [r for r in self.runs if r.phase(phase) is None]
        for r in missing:
            t.notes.append(f"run {r.index + 1} ({r.label}) has no phase {phase!r}")
        if b.phase(phase) is not None and vals[base].get("throughput") == 0:
            t.notes.append(f"the base run has zero throughput in {phase}: ratios are n/a")
        if others:                  # a lone run has no ratios to explain
            t.notes.append("ratios: green ≥ 1.05 better, red ≤ 0.95 worse, grey between; for "
                           "metrics where lower is better the colours are swapped")
        return t

    def summary_table(self, phase: str, base: int = 0) -> Table:
        return self.table(phase, base)

    def efficiency_table(self, phase: str, base: int = 0) -> Table:
        b = self.runs[base] if 0 <= base < len(self.runs) else None
        t = self.table(phase, base, EFFICIENCY_KEYS + SERVER_EFFICIENCY_KEYS,
                       title=f"{phase} — hardware per operation" + (
                           f", ratios to run {base + 1} ({b.label if b else '?'})"
                           if len(self.runs) > 1 else ""))
        t.notes.insert(0, "host totals from /proc on the benchmark host, sampled every "
                          "second, over the phase, divided by its operations; "
                          "CPU µs = (100 − idle − iowait − steal) % × cores × seconds")
        titles = {METRICS[k].title for k in SERVER_EFFICIENCY_KEYS}
        if any(row[0] in titles for row in t.rows):
            t.notes.insert(1, "server counters (PostgreSQL: pg_stat_database of the run's "
                              "database, pg_stat_wal; MySQL/MariaDB: SHOW GLOBAL STATUS, "
                              "server-wide) summed over the phase without the monitor's own "
                              "queries, divided by its operations")
        return t

    # the per-step table a workload declares (spec.step_table)
    def step_rows(self, run: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """([{key, title, unit}], [{phase, role, unit, values: {key: v}, flags}]): one row
        per phase with a summary, the columns the run's workload declares; ([], []) when it
        declares none."""
        r = self.runs[run]
        keys = [k for k in (r.spec.step_table if r.spec else ()) if k in METRICS]
        if not keys:
            return [], []
        cols = [{"key": k, "title": METRICS[k].title, "unit": METRICS[k].unit} for k in keys]
        rows = []
        for span in r.phases:
            summ = r.summaries.get(span.name)
            if not summ or r.phase_role(span.name) == "warmup":     # uncounted: no result
                continue
            pv = self.phase_values(run, span.name)
            vals: dict[str, float | None] = {}
            for k in keys:
                m = METRICS[k]
                # a declared figure is read whatever the phase's role (loads have one too)
                vals[k] = summ.value(m.summary) if m.per_phase == "result" \
                    else pv.get(k)
            rows.append({"phase": span.name, "role": r.phase_role(span.name),
                         "unit": r.phase_unit(span.name), "values": vals,
                         "flags": [vars(f) for f in r.flags(span.name)]})
        return cols, rows

    def step_table(self, run: int) -> Table | None:
        """The step table of one run as a Table (None when its workload declares none)."""
        cols, rows = self.step_rows(run)
        if not rows:
            return None
        r = self.runs[run]
        header, cells, flagged = step_table_cells({"columns": cols, "rows": rows})
        t = Table(f"run {r.index + 1} ({r.label}) — per step", header)
        for row, bad in zip(cells, flagged):
            t.add(row, [None] * (len(row) - 1) + [WORSE if bad else None])
        for row in rows:
            t.notes.extend(f"{row['phase']}: {f['name']}: {f['detail']}" for f in row["flags"])
        for c in cols:
            m = METRICS[c["key"]]
            if m.per_phase != "efficiency" and m.source and not m.source.startswith("@"):
                t.notes.append(f"{m.title}: {m.source}")
        if any(METRICS[c["key"]].per_phase == "efficiency" for c in cols):
            t.notes.append("per operation: host totals over the step divided by its "
                           "operations; CPU µs = (100 − idle − iowait − steal) % × cores × "
                           "seconds")
        return t

    def tables(self, base: int = 0, phases: Sequence[str] | None = None) -> list[Table]:
        """Each run's step table (when its workload declares one), then for each phase
        (default: the phases all runs have, or every phase of a lone run) the summary,
        efficiency, CPU by process group and the server's perf figures, leaving out tables
        without a row; a lone perf-trace run adds its query type × rows grids."""
        phases = list(phases or (self.common_phases() if len(self.runs) > 1
                                 else self.phase_order()))
        out = [t for t in (self.step_table(i) for i in range(len(self.runs))) if t]
        for ph in phases:
            for t in (self.summary_table(ph, base), self.efficiency_table(ph, base),
                      *cpu.tables(self, ph, base)):
                if t.rows:
                    out.append(t)
        if len(self.runs) == 1:
            out.extend(cpu.trace_matrices(self.runs[0]))
        return out

    def matrix(self, key: str = "throughput", base: int = 0, by: str = "phase") -> Table:
        """Ratios to the base for many runs at once.

        ``by="phase"``: rows are phases, columns are runs, cells value(run)/value(base).
        ``by="param:NAME"``: rows are the values of parameter NAME (e.g. clients); columns
        are the groups of runs that agree on everything else (target, workload, other
        parameters); a cell is the measure value of that group's run at that parameter
        value over the base group's run at the same value.
        """
        self._check_base(base)
        m = METRICS[key]
        if by == "phase":
            header = ["phase"] + [f"{r.index + 1}: {r.label}" for r in self.runs]
            t = Table(f"{m.title} — ratio to run {base + 1} ({self.runs[base].label})",
                      header)
            for ph in self.phase_order():
                vals = [self.phase_values(i, ph).get(key) for i in range(len(self.runs))]
                if all(v is None for v in vals):
                    continue
                cells, classes = [ph], [None]
                for i, v in enumerate(vals):
                    rt = ratio(v, vals[base], m.lower_is_better)
                    cells.append(rt.text())
                    classes.append(rt.cls)
                t.add(cells, classes)
            return t
        if not by.startswith("param:"):
            raise CompareError(f"a matrix is by 'phase' or by 'param:NAME', not {by!r}")
        pname = by.split(":", 1)[1]
        if not any(pname in r.params for r in self.runs):
            raise CompareError(f"no run has a parameter {pname!r}")
        phase = self.align_phase or (self.common_phases() or self.phase_order() or [""])[-1]

        def group_of(r: RunData) -> tuple:
            return (r.target, r.workload, r.server_version,
                    tuple(sorted((k, str(v)) for k, v in r.params.items()
                                 if k not in (pname, "duration", "warmup", "rebuild"))))

        groups: list[tuple] = []
        first_run: list[RunData] = []
        cell: dict[tuple[int, Any], float | None] = {}
        for i, r in enumerate(self.runs):
            g = group_of(r)
            if g not in groups:
                groups.append(g)
                first_run.append(r)
            cell[(groups.index(g), r.params.get(pname))] = self.phase_values(i, phase).get(key)
        base_group = groups.index(group_of(self.runs[base]))
        header = [pname] + [r.label for r in first_run]
        t = Table(f"{m.title} in {phase} by {pname} — ratio to {first_run[base_group].label}",
                  header)
        values = sorted({pv for (_, pv) in cell}, key=lambda x: (str(type(x)), x))
        for pv in values:
            cells, classes = [str(pv)], [None]
            for gi in range(len(groups)):
                rt = ratio(cell.get((gi, pv)), cell.get((base_group, pv)), m.lower_is_better)
                cells.append(rt.text())
                classes.append(rt.cls)
            t.add(cells, classes)
        return t

    def _check_base(self, base: int) -> None:
        if not 0 <= base < len(self.runs):
            raise CompareError(f"there is no run {base + 1} to use as the base; runs are "
                               f"numbered 1 to {len(self.runs)}")

    def _unit_cell(self, key: str, phase: str | None = None) -> str:
        """A row's unit; the throughput unit is the phase's (rows/s in a load, NOPM …)."""
        m = METRICS[key]
        if m.unit:
            return m.unit
        runs = [r for r in self.runs if phase is None or r.phase(phase) is not None]
        return " / ".join(dict.fromkeys(r.phase_unit(phase) if phase else r.unit
                                        for r in runs or self.runs))

    # exports as plain data (written by app.store.export)
    def series_columns(self, keys: Sequence[str] | None = None, phase: str | None = None
                       ) -> tuple[list[int], list[tuple[str, list[float | None]]]]:
        """Per-second CSV columns: header ``"<n>: <label> <metric> (<unit>)"`` per run and
        metric, in run order then registry order."""
        keys = list(keys or [k for k in METRICS if self.has_metric(k)])
        seconds, per = self.per_second(keys, phase)
        cols = []
        for i, r in enumerate(self.runs):
            for k in keys:
                vals = per.get((i, k))
                if vals is None or all(v is None for v in vals):
                    continue
                cols.append((f"{r.index + 1}: {r.label} {METRICS[k].title} "
                             f"({self.metric_unit(k, i)})", vals))
        return seconds, cols

    def series_json(self, keys: Sequence[str] | None = None) -> dict[str, Any]:
        """Every point at full resolution: runs with their facts, then per metric t and v."""
        keys = list(keys or [k for k in METRICS if self.has_metric(k)])
        out = {"align": self.align_phase, "time": "seconds from the start of "
               + (f"phase {self.align_phase}" if self.align_phase else "each run"),
               "runs": []}
        for i, r in enumerate(self.runs):
            d = r.describe()
            d["series"] = {}
            for k in keys:
                t, v = self.series(i, k)
                if len(t):
                    d["series"][k] = {"title": METRICS[k].title, "unit": self.metric_unit(k, i),
                                      "t": [round(x, 4) for x in t],
                                      "v": [round(x, 6) for x in v]}
            out["runs"].append(d)
        return out

    def deck_runs(self) -> list:
        from app.store.export import DeckRun
        out = []
        for r in self.runs:
            facts = [_short_version(r.engine, r.server_version) if r.server_version
                     else r.engine or r.target,
                     f"host {r.hostname}" + (f" ({r.cores} cores)" if r.cores else ""),
                     f"profile {r.profile}" if r.profile else "server's own configuration",
                     f"{r.workload} " + ", ".join(f"{k}={v}" for k, v in r.params.items()
                                                 if k not in ("rebuild",))]
            out.append(DeckRun(f"{r.index + 1}. {r.label}", r.colour, facts))
        return out

    def title(self) -> str:
        workloads = list(dict.fromkeys(r.workload for r in self.runs))
        return f"{', '.join(workloads)}: " + " vs ".join(r.label for r in self.runs)

    # the whole thing as data
    def to_json(self, base: int = 0, phases: Sequence[str] | None = None) -> dict[str, Any]:
        self._check_base(base)
        phases = list(phases or self.common_phases() or self.phase_order())
        out: dict[str, Any] = {"align": self.align_phase, "base": base + 1,
                               "runs": [r.describe() for r in self.runs], "phases": {}}
        for ph in phases:
            vals = self._values(ph)
            per = {}
            for k, m in METRICS.items():
                if all(v.get(k) is None for v in vals):
                    continue
                per[k] = {"title": m.title, "unit": self._unit_cell(k, ph),
                          "lower_is_better": m.lower_is_better,
                          "values": [v.get(k) for v in vals],
                          "ratios": [_ratio_json(ratio(v.get(k), vals[base].get(k),
                                                       m.lower_is_better)) for v in vals]}
                if m.per_phase == "result":
                    per[k]["sources"] = self.sources(ph, k)
            if any(r.flags(ph) for r in self.runs):
                out.setdefault("flags", {})[ph] = [[vars(f) for f in r.flags(ph)]
                                                   for r in self.runs]
            out["phases"][ph] = per
        steps = {}
        for i, r in enumerate(self.runs):
            cols, rows = self.step_rows(i)
            if rows:
                steps[str(i + 1)] = {"columns": cols, "rows": rows}
        if steps:
            out["steps"] = steps
        return out


# --- helpers -------------------------------------------------------------------------------
def fmt_row(values: Sequence[float | None]) -> list[str]:
    """Figures that sit side by side in one row, with one number of decimals: about three
    significant digits of the largest, more when a smaller one would show as 0."""
    nums = [abs(v) for v in values if v is not None and v == v]
    if not nums:
        return [fmt_value(v) for v in values]
    top = max(nums)
    if top >= 1000:
        digits = 0
    elif top == 0:
        digits = 0
    else:
        digits = max(0, 2 - int(math.floor(math.log10(top))))
    small = min((x for x in nums if x > 0), default=0.0)
    while digits < 6 and small and round(small, digits) == 0:
        digits += 1
    digits = min(digits, 6)
    return ["—" if v is None or v != v else "0" if v == 0 else f"{v:,.{digits}f}"
            for v in values]


def _ratio_json(rt: Ratio) -> dict[str, Any]:
    return {"value": None if rt.value is None else round(rt.value, 4), "class": rt.cls}


def step_table_cells(step_table: dict) -> tuple[list[str], list[list[str]], list[bool]]:
    """Header, cell texts and whether each row is flagged, for the per-step table."""
    cols = step_table["columns"]
    header = ["Step"] + [c["title"] + (f" ({c['unit']})" if c["unit"] else "") for c in cols]
    header.append("Flags")
    rows, flagged = [], []
    # one number of decimals a column ("0.06" above "19,912.00", not "0.0610" above "19,912")
    texts = {c["key"]: fmt_row([r["values"].get(c["key"]) for r in step_table["rows"]])
             for c in cols}
    for n, row in enumerate(step_table["rows"]):
        cells = [row["phase"]]
        for c in cols:
            v = row["values"].get(c["key"])
            # a column without a unit of its own is in each step's throughput unit
            unit = "" if c["unit"] or v is None else row.get("unit") or ""
            text = fmt_value(v) if v is None else texts[c["key"]][n]
            cells.append(f"{text} {unit}".rstrip())
        cells.append(", ".join(f["name"] for f in row["flags"]))
        rows.append(cells)
        flagged.append(bool(row["flags"]))
    return header, rows, flagged
