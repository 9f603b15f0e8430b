"""A figure over versions or over dates, for like runs found in the history, with change
points marked.

No Qt. ``versus runs --trend`` and the History view's trend chart read a ``Trend``:

    t = trend(index.runs(workload="point-query", host="db1"), "throughput", by="version")
    t.points          # one per run, ordered by version (then date) or by date
    t.changes         # ChangePoint(index, before, after, change %, p-value)

Change points come from Apache Otava's e-divisive (otava.analysis.compute_change_points: the
split and merge of Fleming et al., "Hunter", ICPE 2023), not from a detector of our own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from app.model.runset import Table, fmt_value
from app.store.history import PHASE_METRICS, IndexedRun, version_key

BY = ("version", "date")
MAX_PVALUE = 0.01


@dataclass(frozen=True)
class TrendPoint:
    label: str                 # the version number or the date
    value: float
    run: IndexedRun


@dataclass(frozen=True)
class ChangePoint:
    index: int                 # the first point after the change
    before: float              # mean of the segment before
    after: float
    change_pct: float
    pvalue: float


@dataclass
class Trend:
    metric: str
    by: str
    title: str
    unit: str
    points: list[TrendPoint]
    changes: list[ChangePoint]
    notes: list[str] = field(default_factory=list)

    def table(self) -> Table:
        t = Table(f"{self.title} by {self.by}",
                  [self.by, f"{self.title}" + (f" ({self.unit})" if self.unit else ""),
                   "change", "run"])
        at = {c.index: c for c in self.changes}
        for i, p in enumerate(self.points):
            c = at.get(i)
            mark = (f"{c.change_pct:+.1f} % (p {c.pvalue:.2g})" if c else "")
            t.add([p.label, fmt_value(p.value), mark, p.run.ref],
                  [None, None, ("worse" if c.change_pct < 0 else "better") if c and
                   not self.lower_is_better else
                   ("better" if c.change_pct < 0 else "worse") if c else None, None])
        t.notes = list(self.notes) + ["change points: Apache Otava e-divisive, p ≤ "
                                      f"{MAX_PVALUE:g}"]
        return t

    @property
    def lower_is_better(self) -> bool:
        return self.metric in ("p95", "p99", "errors")

    def to_json(self) -> dict:
        return {"metric": self.metric, "by": self.by, "unit": self.unit,
                "method": "Apache Otava e-divisive change points",
                "points": [{"label": p.label, "value": p.value, "file": p.run.file,
                            "run_id": p.run.run_id, "created": p.run.created,
                            "version": p.run.version} for p in self.points],
                "changes": [c.__dict__ for c in self.changes], "notes": self.notes}


def trend(runs: Sequence[IndexedRun], metric: str = "throughput", by: str = "version",
          phase: str | None = None, max_pvalue: float = MAX_PVALUE) -> Trend:
    if metric not in PHASE_METRICS:
        raise ValueError(f"no trend metric named {metric!r}; one of "
                         f"{', '.join(PHASE_METRICS)}")
    if by not in BY:
        raise ValueError(f"a trend is by version or by date, not {by!r}")
    pts: list[TrendPoint] = []
    for r in runs:
        v = r.figure(metric, phase)
        if v is None:
            continue
        pts.append(TrendPoint(r.version or "?" if by == "version" else r.date, v, r))
    if by == "version":
        pts.sort(key=lambda p: (version_key(p.run.version), p.run.created))
    else:
        pts.sort(key=lambda p: p.run.created)
    notes = _unlike(runs)
    changes: list[ChangePoint] = []
    if len(pts) >= 4:
        from otava.analysis import compute_change_points
        cps, _ = compute_change_points([p.value for p in pts], max_pvalue=max_pvalue)
        for c in cps:
            s = c.stats
            changes.append(ChangePoint(int(c.index), float(s.mean_1), float(s.mean_2),
                                       float(s.forward_change_percent()), float(s.pvalue)))
    else:
        notes.append("fewer than 4 runs: no change points looked for")
    units = {p.run.phases[0].unit for p in pts if p.run.phases} if metric == "throughput" else set()
    unit = "ms" if metric in ("p95", "p99") else (units.pop() if len(units) == 1 else "")
    return Trend(metric, by, PHASE_METRICS[metric], unit, pts, changes, notes)


def _unlike(runs: Sequence[IndexedRun]) -> list[str]:
    """Notes on what differs between the runs besides version and date (a trend is of like
    runs: filter until these are gone)."""
    out = []
    for fact in ("workload", "host", "profile", "engine"):
        vals = sorted({getattr(r, fact) for r in runs})
        if len(vals) > 1:
            out.append(f"the runs differ in {fact}: {', '.join(v or '—' for v in vals)}")
    keys = sorted({k for r in runs for k in r.params})
    for k in keys:
        vals = sorted({str(r.params.get(k)) for r in runs})
        if len(vals) > 1:
            out.append(f"the runs differ in {k}: {', '.join(vals)} (filter with --param "
                       f"{k}=VALUE)")
    return out
