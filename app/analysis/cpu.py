"""Where the CPU went, per phase: process groups, the server's perf counters, and whether the
client was the limit. No Qt; reads a Comparison's runs.

Per process group (the host events' ``cpu_groups``, derived as ``cpu.group.<group>``, % of
all cores), over the phase's interval:

    % of host   = Σ pct × overlap_s / Σ overlap_s
    CPU µs/op   = Σ pct / 100 × cores × overlap_s × 10⁶ / operations of the phase

The server's software events (task-clock, context switches, page faults) and, where the host
has a PMU, its hardware events (IPC, misses per 1000 instructions) come from the phase
summary's ``perf`` (perf stat on the server's processes); where they could not be counted the
cell says "not available: <reason>", never 0.
"""
from __future__ import annotations

import math
import re
from typing import Any

from app.model.runset import Table, fmt_value, ratio

# a run is an app.analysis.compare.RunData and a comparison a Comparison (not imported here:
# compare builds its tables with this module)
Comparison = RunData = Any

PREFIX = "cpu.group."
GROUP_TITLES = {
    "server.fg": "server foreground (connections)",
    "server.bg.autovacuum": "server background: autovacuum",
    "server.bg.checkpointer": "server background: checkpointer",
    "server.bg.bgwriter": "server background: background writer",
    "server.bg.walwriter": "server background: WAL writer",
    "server.bg.purge": "server background: InnoDB purge",
    "server.bg.page_cleaner": "server background: InnoDB page cleaner",
    "server.bg.log_writer": "server background: InnoDB log writer",
    "server.bg.innodb_pool": "server background: InnoDB task pool",
    "server.bg.other": "server background: other",
    "driver": "driver (virtual users, agent)",
    "monitor": "Versus monitor (sampler)",
    "other": "other processes",
}
SOURCE = ("/proc/PID/stat of every process on the host, grouped by process title or thread "
          "name; per operation: the group's CPU time over the phase / its operations")
NA = "not available"


def group_title(key: str) -> str:
    return GROUP_TITLES.get(key, key.replace("server.bg.", "server background: "))


def group_sort_key(key: str) -> tuple:
    """Server foreground, its background roles (other last), driver, monitor, other."""
    if key == "server.fg":
        return (0, "")
    if key.startswith("server."):
        return (1, "~" if key.endswith(".other") else key)
    return (2, {"driver": 0, "monitor": 1, "other": 2}.get(key, 3), key)


def groups_of(run: RunData) -> list[str]:
    """The process groups a run's host events name, in display order."""
    names = [n[len(PREFIX):] for n in run.hosts.names() if n.startswith(PREFIX)]
    return sorted(names, key=group_sort_key)


def _lookup(run: RunData, phase: str, path: str) -> Any:
    """Whatever the phase's summary holds at a dotted path; None without a summary."""
    summ = run.summaries.get(phase)
    return summ.lookup(path) if summ is not None else None


def phase_interval(run: RunData, phase: str) -> tuple[float, float] | None:
    """The interval the phase's operations were counted in (its summary's), else its span."""
    summ = run.summaries.get(phase)
    if summ is not None and summ.interval:
        return summ.interval
    span = run.phase(phase)
    if span is None:
        return None
    return span.t0, span.t1 if span.t1 is not None else run.last_t


def phase_ops(run: RunData, phase: str) -> float | None:
    summ = run.summaries.get(phase)
    if summ is None:
        return None
    spec = run.spec
    return summ.ops(spec.op_count if spec else None)


def phase_groups(run: RunData, phase: str) -> dict[str, dict[str, float | None]]:
    """{group: {"pct": mean % of the host, "cpu_s": CPU seconds, "us_per_op": …}}."""
    iv = phase_interval(run, phase)
    h = run.hosts
    if iv is None or not h.t:
        return {}
    idx, w = h.overlaps(*iv)
    covered = sum(w)
    if not covered:
        return {}
    cores = run.cores or 1
    ops = phase_ops(run, phase)
    out = {}
    for g in groups_of(run):
        col = h.column(PREFIX + g) or []
        pairs = [(col[i], wi) for i, wi in zip(idx, w) if i < len(col) and col[i] == col[i]]
        if not pairs:
            continue
        integral = math.fsum(x * wi for x, wi in pairs)       # % × seconds
        cpu_s = integral / 100.0 * cores
        out[g] = {"pct": integral / covered, "cpu_s": cpu_s,
                  "us_per_op": cpu_s * 1e6 / ops if ops else None}
    return out


def client_limit(run: RunData, phase: str) -> str | None:
    """The sentence saying the client limited this phase, if it did."""
    s = _lookup(run, phase, "client.sentence")
    return str(s) if s else None


# the server's perf figures per operation: (key, title, unit, path in the summary, lower?)
PERF_ROWS = (
    ("server_cpu_us", "server CPU (task-clock)", "µs/op", "perf.per_op.task_clock_us", True),
    ("server_cs", "server context switches", "/op", "perf.per_op.context_switches", True),
    ("server_faults", "server page faults", "/op", "perf.per_op.page_faults", True),
    ("instructions", "server instructions", "/op", "perf.per_op.instructions", True),
    ("ipc", "IPC", "instr./cycle", "perf.hardware.ipc", False),
    ("branch_mpki", "branch misses", "MPKI", "perf.hardware.branch_mpki", True),
    ("l1i_mpki", "L1-icache misses", "MPKI", "perf.hardware.l1i_mpki", True),
    ("llc_mpki", "LLC misses", "MPKI", "perf.hardware.llc_mpki", True),
)
HARDWARE_KEYS = ("instructions", "ipc", "branch_mpki", "l1i_mpki", "llc_mpki")


def perf_values(run: RunData, phase: str) -> tuple[dict[str, float | None], str | None,
                                                     str | None]:
    """(values by PERF_ROWS key, why nothing was counted, why no hardware events)."""
    summ = run.summaries.get(phase)
    perf = summ.perf if summ is not None else None
    if perf is None:
        return {}, None, None
    vals = {k: summ.value(path) for k, _t, _u, path, _l in PERF_ROWS}
    return vals, perf.get("unavailable"), perf.get("hardware_unavailable")


_fmt = fmt_value


def groups_table(comp: Comparison, phase: str, base: int = 0) -> Table:
    """Rows: process groups; per run its % of the host and CPU µs per operation; then the
    µs/op ratios to the base run."""
    runs = comp.runs
    per = [phase_groups(r, phase) for r in runs]
    keys = sorted({g for p in per for g in p}, key=group_sort_key)
    others = [i for i in range(len(runs)) if i != base]
    header = (["process group"]
              + [f"% of host ({r.index + 1})" for r in runs]
              + [f"µs/op ({r.index + 1})" for r in runs]
              + [f"µs/op {i + 1} / {base + 1}" for i in others])
    t = Table(f"{phase} — CPU by process group", header)
    for g in keys:
        cells = [group_title(g)]
        cells += [_fmt((p.get(g) or {}).get("pct")) for p in per]
        cells += [_fmt((p.get(g) or {}).get("us_per_op")) for p in per]
        classes: list[str | None] = [None] * len(cells)
        for i in others:
            rt = ratio((per[i].get(g) or {}).get("us_per_op"),
                       (per[base].get(g) or {}).get("us_per_op"), True)
            cells.append(rt.text())
            classes.append(rt.cls)
        t.add(cells, classes)
    t.notes.append(SOURCE)
    for r, p in zip(runs, per):
        where = _lookup(r, phase, "cpu_groups.server")
        if where and not any(g.startswith("server.") for g in p):
            t.notes.append(f"run {r.index + 1}: {where}")
        said = client_limit(r, phase)
        if said:
            t.notes.append(f"run {r.index + 1}: {said}")
    return t


def perf_table(comp: Comparison, phase: str, base: int = 0) -> Table:
    """The server's perf figures per operation; "not available: <reason>" where perf could
    not count them (one row for the hardware counters when no run has them)."""
    runs = comp.runs
    got = [perf_values(r, phase) for r in runs]
    others = [i for i in range(len(runs)) if i != base]
    header = (["server (perf stat)", "unit"] + [f"{r.index + 1}: {r.label}" for r in runs]
              + [f"{i + 1} / {base + 1}" for i in others])
    t = Table(f"{phase} — the server's CPU per operation (perf)", header)
    hardware = any(vals.get(k) is not None for vals, _w, _h in got for k in HARDWARE_KEYS)
    for key, title, unit, _path, lower in PERF_ROWS:
        if key in HARDWARE_KEYS and not hardware:
            continue
        cells, classes = [title, unit], [None, None]
        for vals, why, why_hw in got:
            v = vals.get(key)
            reason = why or (why_hw if key in HARDWARE_KEYS else None)
            cells.append(_fmt(v) if v is not None else f"{NA}: {reason}" if reason else "—")
            classes.append(None)
        for i in others:
            rt = ratio(got[i][0].get(key), got[base][0].get(key), lower)
            cells.append(rt.text())
            classes.append(rt.cls)
        t.add(cells, classes)
    if not hardware:
        cells = ["hardware counters", "IPC, MPKI"]
        for _vals, why, why_hw in got:
            reason = why or why_hw
            cells.append(f"{NA}: {reason}" if reason else "—")
        t.add(cells + ["n/a"] * len(others))
    from .flame import short_pids
    sources = {short_pids(str(_lookup(r, phase, "perf.source") or ""))
               for r in runs}
    sources.discard("")
    t.notes.extend(sorted(sources))
    return t


def tables(comp: Comparison, phase: str, base: int = 0) -> list[Table]:
    """The CPU tables of one phase that have something to show."""
    out = []
    if any(phase_groups(r, phase) for r in comp.runs):
        out.append(groups_table(comp, phase, base))
    if any(perf_values(r, phase)[0] or perf_values(r, phase)[1] for r in comp.runs):
        out.append(perf_table(comp, phase, base))
    return out


# --- the perf-trace grid ---------------------------------------------------------------
_CELL = re.compile(r"^(?P<kind>[\w-]+)/(?P<rows>\d+)$")
MATRIX_KEYS = ("server_cpu_us", "server_cs", "ipc", "l1i_mpki", "llc_mpki", "branch_mpki")


def trace_matrices(run: RunData) -> list[Table]:
    """For a run whose steps are named <query type>/<rows>: one table per figure, query
    types down, rows per query across; "not available: <reason>" where perf could not
    count it."""
    cells: dict[tuple[str, int], tuple[dict, str | None, str | None]] = {}
    for p in run.phases:
        m = _CELL.match(p.name)
        if m and run.summaries.get(p.name):
            cells[(m["kind"], int(m["rows"]))] = perf_values(run, p.name)
    if not cells:
        return []
    kinds = list(dict.fromkeys(k for k, _ in cells))
    rows = sorted({r for _, r in cells})
    out = []
    titles = {k: (t, u) for k, t, u, _p, _l in PERF_ROWS}
    for key in MATRIX_KEYS:
        title, unit = titles[key]
        t = Table(f"{title} ({unit}) by query type and rows per query",
                  ["query"] + [f"{r} rows" for r in rows])
        seen_value, reasons = False, set()
        for kind in kinds:
            row = [kind]
            for r in rows:
                vals, why, why_hw = cells.get((kind, r), ({}, None, None))
                v = vals.get(key)
                if v is not None:
                    row.append(_fmt(v))
                    seen_value = True
                else:
                    reason = why or (why_hw if key in HARDWARE_KEYS else None)
                    row.append(NA if reason else "—")
                    if reason:
                        reasons.add(reason)
            t.add(row)
        if not seen_value and key in HARDWARE_KEYS and key != "ipc":
            continue
        t.notes.extend(f"{NA}: {r}" for r in sorted(reasons))
        out.append(t)
    return out


def describe_phase(run: RunData, phase: str) -> dict[str, Any]:
    """For ``show --json`` and the saved-run view: the phase's groups, perf and client."""
    out: dict[str, Any] = {}
    groups = phase_groups(run, phase)
    if groups:
        out["cpu_groups"] = {g: {k: (round(v, 3) if v is not None else None)
                                 for k, v in d.items()} for g, d in groups.items()}
        out["cpu_groups_source"] = SOURCE
    vals, why, why_hw = perf_values(run, phase)
    if vals or why:
        out["perf"] = {k: v for k, v in vals.items() if v is not None}
        if why:
            out["perf"]["unavailable"] = why
        elif why_hw:
            out["perf"]["hardware_unavailable"] = why_hw
    said = client_limit(run, phase)
    if said:
        out["client_limit"] = said
    return out


def run_tables(comp: Comparison, base: int = 0) -> list[Table]:
    """Every phase's CPU tables (phases all runs have), then a lone run's perf-trace grids."""
    phases = comp.common_phases() if len(comp.runs) > 1 else comp.phase_order()
    out = [t for ph in phases for t in tables(comp, ph, base) if t.rows]
    if len(comp.runs) == 1:
        out.extend(trace_matrices(comp.runs[0]))
    return out
