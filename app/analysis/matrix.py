"""Suite matrices and the regression gate.

A suite matrix has the runs as columns and the measured steps of a suite as rows (micro's
tests, a workload's measured phase), grouped as the workload declares them
(``PhaseSpec.group``: point queries, range queries …); each cell is a run's value of one
metric relative to the base run's, classed better / worse / same as every ratio is
(``app.model.runset.ratio``). One matrix per metric: throughput (relative QPS) or any
per-operation cost (CPU µs, context switches, disk reads, KB read and written per operation,
from /proc on the benchmark host, every second, over the phase).

    m = suite_matrix(comp, "throughput", base=0)
    m.tables()                        # one Table per group, for views and every export
    g = gate(comp, sides=[[0, 1], [2, 3]], threshold=0.95)
    g.failed, g.text()                # the tests whose relative value fell below 0.95

No Qt. The Compare view, ``versus compare --matrix / --fail-below`` and the exports read
these.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Sequence

from app.analysis.compare import (CompareError, Comparison, fmt_value, load_comparison,
                                  resolve_run)
from app.analysis.intervals import (FAIL, INCONCLUSIVE, PASS, Interval, Verdict,
                                    paired_interval, ratio_interval, series_interval, verdict)
from app.analysis.metrics import METRICS
from app.model.runset import EFFICIENCY_KEYS, Ratio, RunRef, Table, ratio
from app.store.session import SessionError, SessionFile

STEP_ROLES = ("measured", "step")
UNGROUPED = ""


@dataclass(frozen=True)
class MatrixRow:
    phase: str
    group: str
    values: tuple[float | None, ...]        # per run
    ratios: tuple[Ratio, ...]               # per run, to the base (the base itself 1.00)


@dataclass
class SuiteMatrix:
    key: str
    title: str
    unit: str
    base: int
    labels: list[str]
    rows: list[MatrixRow]
    notes: list[str] = field(default_factory=list)

    def groups(self) -> list[tuple[str, list[MatrixRow]]]:
        out: dict[str, list[MatrixRow]] = {}
        for r in self.rows:
            out.setdefault(r.group, []).append(r)
        return list(out.items())

    def row(self, phase: str) -> MatrixRow | None:
        return next((r for r in self.rows if r.phase == phase), None)

    def header(self) -> list[str]:
        b = self.labels[self.base]
        return (["test"] + [f"{i + 1}: {lab}" for i, lab in enumerate(self.labels)]
                + [f"{self.base + 1}: {b} ({self.unit})" if self.unit else f"{b} (base)"])

    def tables(self) -> list[Table]:
        """One table per group: ratios per run, then the base run's own values."""
        out = []
        for group, rows in self.groups():
            name = f"{group}: " if group else ""
            t = Table(f"{name}{self.title}", self.header())
            for r in rows:
                cells = [r.phase] + [rt.text() for rt in r.ratios] + [fmt_value(r.values[self.base])]
                t.add(cells, [None] + [rt.cls for rt in r.ratios] + [None])
            t.notes = list(self.notes)
            out.append(t)
        return out


def step_rows(comp: Comparison) -> list[tuple[str, str]]:
    """(phase, group) of every measured step any run has, grouped as the workloads declare
    and ordered as their specs list them (phases a spec does not know follow, in run order)."""
    found: dict[str, tuple[int, int, int, str]] = {}
    group_rank: dict[str, int] = {}
    for ri, r in enumerate(comp.runs):
        spec = r.spec
        order = {p.name: i for i, p in enumerate(spec.phases)} if spec else {}
        for i, p in enumerate(spec.phases if spec else ()):
            group_rank.setdefault(p.group, i)
        for pi, name in enumerate(r.phase_names()):
            if name in found:
                continue
            ph = spec.phase(name) if spec else None
            if ph is None:
                if spec is not None or name not in r.summaries or \
                        r.summaries[name].get("unit") == "rows/s":
                    continue               # unknown to its workload, or a load
                group = UNGROUPED
            elif ph.role not in STEP_ROLES:
                continue
            else:
                group = ph.group
            g = group_rank.setdefault(group, 100_000 + len(group_rank))
            found[name] = (g, order.get(name, 100_000), ri * 100_000 + pi, group)
    ranked = sorted(found.items(), key=lambda kv: kv[1][:3])
    return [(name, v[3]) for name, v in ranked]


def suite_matrix(comp: Comparison, key: str = "throughput", base: int = 0,
                 phases: Sequence[str] | None = None) -> SuiteMatrix:
    if not 0 <= base < len(comp.runs):
        raise CompareError(f"there is no run {base + 1} to use as the base; runs are "
                           f"numbered 1 to {len(comp.runs)}")
    try:
        m = METRICS[key]
    except KeyError:
        raise CompareError(f"no metric called {key!r}; metrics are: "
                           f"{', '.join(METRICS)}") from None
    rows_of = step_rows(comp)
    if phases:
        rows_of = [(p, g) for p, g in rows_of if p in phases]
    rows = []
    for phase, group in rows_of:
        vals = tuple(comp.phase_values(i, phase).get(key) for i in range(len(comp.runs)))
        if all(v is None for v in vals):
            continue
        rows.append(MatrixRow(phase, group, vals,
                              tuple(ratio(v, vals[base], m.lower_is_better) for v in vals)))
    b = comp.runs[base]
    unit = m.unit or (b.phase_unit(rows[0].phase) if rows else "")
    title = f"{metric_title(comp, key)} relative to run {base + 1} ({b.label})"
    notes = []
    if key in EFFICIENCY_KEYS:
        notes.append("per operation: host totals from /proc on the benchmark host, sampled "
                     "every second, over each test's phase, divided by the operations the "
                     "clients counted in it; CPU µs = (100 − idle − iowait − steal) % × cores "
                     "× seconds")
    elif m.source:
        notes.append(f"{m.title}: {m.source}")
    notes.append("green ≥ 1.05 better, red ≤ 0.95 worse, grey between"
                 + ("; lower is better here, so a ratio below 1 is green"
                    if m.lower_is_better else ""))
    return SuiteMatrix(key, title, unit, base, [r.label for r in comp.runs], rows, notes)


def metric_title(comp: Comparison, key: str) -> str:
    """A metric's title; throughput reads as the runs' headline (QPS, NOPM) when they agree."""
    if key == "throughput":
        heads = {r.spec.headline.title for r in comp.runs
                 if r.spec and r.spec.headline.series == "throughput"}
        if len(heads) == 1 and all(r.spec for r in comp.runs):
            return heads.pop()
    return METRICS[key].title


def has_groups(comp: Comparison) -> bool:
    """Whether the runs are of a suite whose steps the workload groups."""
    return any(g for _, g in step_rows(comp))


# --- the regression gate ---------------------------------------------------------------------
@dataclass(frozen=True)
class GateRow:
    phase: str
    group: str
    ratio: float | None                      # NEW / BASE: the interval's centre when known
    base: tuple[float, ...]                  # the base side's values (one per run)
    new: tuple[float, ...]
    interval: Interval | None = None         # None: a side too short for batch means
    verdict: Verdict | None = None

    @property
    def beyond_spread(self) -> bool | None:
        """Whether the interval excludes 1 (None when there is no interval)."""
        return None if self.interval is None else self.interval.excludes(1.0)


@dataclass
class GateResult:
    key: str
    threshold: float
    base_label: str
    new_label: str
    rows: list[GateRow]
    lower_is_better: bool = False
    title: str = ""

    def _below(self, r: GateRow) -> bool:
        if r.verdict is not None:
            return r.verdict.outcome == FAIL
        t = self.threshold
        return r.ratio is not None and (r.ratio > 1 / t if self.lower_is_better else r.ratio < t)

    @property
    def failed(self) -> list[GateRow]:
        """Rows whose whole interval lies beyond the threshold (without an interval: whose
        ratio does)."""
        return [r for r in self.rows if self._below(r)]

    @property
    def inconclusive(self) -> list[GateRow]:
        return [r for r in self.rows if r.verdict is not None and
                r.verdict.outcome == INCONCLUSIVE]

    @property
    def outcome(self) -> str:
        return FAIL if self.failed else INCONCLUSIVE if self.inconclusive else PASS

    def methods(self) -> list[str]:
        return list(dict.fromkeys(r.interval.describe() for r in self.rows if r.interval))

    def to_json(self) -> dict:
        return {"metric": self.key, "threshold": self.threshold, "base": self.base_label,
                "new": self.new_label, "passed": self.outcome == PASS,
                "outcome": self.outcome,
                "tests": [{"phase": r.phase, "group": r.group, "ratio": r.ratio,
                           "interval": r.interval.to_json() if r.interval else None,
                           "verdict": r.verdict.outcome if r.verdict else None,
                           "more_repeats": r.verdict.more if r.verdict else None,
                           "base": list(r.base), "new": list(r.new),
                           "below": self._below(r), "beyond_spread": r.beyond_spread}
                          for r in self.rows]}

    def text(self) -> str:
        head = (f"regression gate: {self.title} of {self.new_label} relative to "
                f"{self.base_label}, threshold {self.threshold:g}")
        lines = [head]
        if not self.rows:
            return head + ": no test in common to compare\n"
        lines += [f"intervals: {m}" for m in self.methods()]
        if any(r.interval is None for r in self.rows):
            lines.append("no interval for some tests (one run a side and too few samples "
                         "for batch means): judged on the ratio alone; repeat the runs of "
                         "each side to tell a regression from noise")
        failed, unsure = self.failed, self.inconclusive
        if failed:
            lines.append(f"FAIL: {len(failed)} of {len(self.rows)} tests below the threshold:")
            lines += [self._row_text(r) for r in failed]
        if unsure:
            lines.append(f"INCONCLUSIVE: {len(unsure)} of {len(self.rows)} tests straddle the "
                         f"threshold:")
            lines += [self._row_text(r) for r in unsure]
        if not failed and not unsure:
            worst = min((r for r in self.rows if r.ratio is not None),
                        key=lambda r: r.ratio if not self.lower_is_better else -r.ratio,
                        default=None)
            lines.append(f"PASS: all {len(self.rows)} tests at or above the threshold"
                         + (f" (lowest: {worst.phase} {self._fig(worst)})" if worst else ""))
        return "\n".join(lines) + "\n"

    @staticmethod
    def _fig(r: GateRow) -> str:
        if r.interval is not None:
            return r.interval.text(3)
        return f"{r.ratio:.3f}" if r.ratio is not None else "n/a"

    def _row_text(self, r: GateRow) -> str:
        extra = ""
        if r.verdict is not None and r.verdict.outcome == INCONCLUSIVE:
            extra = r.verdict.text()
        elif r.interval is None:
            extra = "no interval"
        return f"  {r.phase:<32} {self._fig(r)}  {extra}".rstrip()


def phase_samples(comp: Comparison, run: int, phase: str, key: str) -> list[float]:
    """The run's per-interval values of one metric inside a phase (batch means read them)."""
    r = comp.runs[run]
    col = r.sample.column(METRICS[key].column) if key in METRICS else None
    if not col:
        return []
    return [v for p, v in zip(r.sample.phase, col) if p == phase and v == v]


def rounds(comp: Comparison, sides: Sequence[Sequence[int]]) -> list[tuple[int, int]] | None:
    """(base run, new run) per round when the two sides ran interleaved, one of each in every
    consecutive pair by start time (a plan with repeat = N); None otherwise."""
    b, n = list(sides[0]), list(sides[1])
    if len(b) != len(n) or len(b) < 2:
        return None
    start = {i: float(comp.runs[i].hello.get("started_epoch") or 0) for i in b + n}
    if not all(start.values()):
        return None
    order = sorted(b + n, key=lambda i: start[i])
    out = []
    for k in range(0, len(order), 2):
        pair = order[k:k + 2]
        bs, ns = [i for i in pair if i in b], [i for i in pair if i in n]
        if len(bs) != 1 or len(ns) != 1:
            return None
        out.append((bs[0], ns[0]))
    return out


def side_interval(comp: Comparison, sides: Sequence[Sequence[int]], phase: str,
                  key: str = "throughput") -> tuple[Interval | None, list[float], list[float]]:
    """NEW / BASE of one phase with its interval: paired rounds when the sides ran
    interleaved, Welch on the repeats when each side has two or more runs, batch means of the
    runs' own series with one run a side."""
    vals = {i: comp.phase_values(i, phase).get(key) for s in sides for i in s}
    vb = [vals[i] for i in sides[0] if vals[i] is not None]
    vn = [vals[i] for i in sides[1] if vals[i] is not None]
    if not vb or not vn:
        return None, vb, vn
    pairs = rounds(comp, sides)
    if pairs and all(vals[i] is not None and vals[j] is not None for i, j in pairs):
        iv = paired_interval([vals[i] for i, _ in pairs], [vals[j] for _, j in pairs])
    elif len(vb) > 1 and len(vn) > 1:
        iv = ratio_interval(vb, vn)
    elif len(sides[0]) == 1 and len(sides[1]) == 1:
        iv = series_interval(phase_samples(comp, sides[0][0], phase, key),
                             phase_samples(comp, sides[1][0], phase, key))
    else:
        iv = None
    return iv, vb, vn


def load_sides(refs: Sequence[RunRef], names: Sequence[str] | None = None
               ) -> tuple[Comparison, list[list[int]]]:
    """The runs of every reference in one comparison, and which runs each reference gave
    (a file without :RUN gives all its runs: repeated runs of one side)."""
    sides, n = [], 0
    for ref in refs:
        try:
            with SessionFile(ref.file) as s:
                k = len(resolve_run(s, ref))
        except SessionError as exc:
            raise CompareError(str(exc)) from None
        sides.append(list(range(n, n + k)))
        n += k
    return load_comparison(refs, names=names), sides


def gate(comp: Comparison, sides: Sequence[Sequence[int]], threshold: float,
         key: str = "throughput") -> GateResult:
    """NEW (the second side) against BASE (the first), per step: the ratio with its
    interval (app.analysis.intervals) and a verdict: fail when the whole interval is below
    the threshold, pass when above, inconclusive when it straddles it."""
    if len(sides) != 2 or not all(sides):
        raise CompareError("the regression gate compares two sides, BASE and NEW: give two "
                           "session files (each may hold repeated runs) or FILE:RUN for each")
    if not 0 < threshold <= 1:
        raise CompareError(f"--fail-below takes a ratio between 0 and 1 (0.95 = 5 % slower), "
                           f"not {threshold:g}")
    m = METRICS[key]
    rows = []
    for phase, group in step_rows(comp):
        iv, vb, vn = side_interval(comp, sides, phase, key)
        if not vb or not vn:
            continue
        if iv is not None:
            rt = iv.value
            vd = verdict(iv, threshold, m.lower_is_better)
        else:
            mb, mn = statistics.fmean(vb), statistics.fmean(vn)
            rt, vd = (mn / mb if mb else None), None
        rows.append(GateRow(phase, group, rt, tuple(vb), tuple(vn), iv, vd))

    def label(ix: Sequence[int]) -> str:
        labels = list(dict.fromkeys(comp.runs[i].label for i in ix))
        return " / ".join(labels) + (f" ({len(ix)} runs)" if len(ix) > 1 else "")
    return GateResult(key, threshold, label(sides[0]), label(sides[1]), rows,
                      m.lower_is_better, metric_title(comp, key))
