"""Every metric and chart the app knows: the generic ones every run has (app.model.runset)
and the result metrics and charts each registered workload declares in its spec.

The GUI's menus, ``versus compare`` and ``versus export`` all read these two registries, so a
workload added to the registry gets its rows, charts and exports without a line here.
"""
from __future__ import annotations

from app.model import runset
from app.model.runset import Chart, Metric
from workloads.params import MetricSpec, WorkloadSpec
from workloads.registry import WORKLOADS


def _metric(m: MetricSpec) -> Metric:
    # a unit read from the summary ("@unit") is the phase's throughput unit in tables
    return Metric(m.key, m.title, "" if m.unit.startswith("@") else m.unit,
                  m.lower_is_better, column=m.series, chart=None, per_phase="result",
                  table=m.role in ("result", "detail"), summary=m.summary, source=m.source)


def _build(specs: list[WorkloadSpec]) -> tuple[dict[str, Metric], dict[str, Chart]]:
    metrics = dict(runset.METRICS)
    charts: dict[str, Chart] = {}
    by_series: dict[str, str] = {m.column: k for k, m in metrics.items() if m.column}
    for spec in specs:
        for m in spec.metrics:
            if m.key not in metrics:
                metrics[m.key] = _metric(m)
                if m.series and m.series not in by_series:
                    by_series[m.series] = m.key
    for spec in specs:
        # a chart's series read as the workload's own metrics first (TPROC-C's throughput
        # series is its NOPM), then as the generic ones
        own = {m.series: m.key for m in spec.metrics if m.series}
        for c in spec.charts:
            if c.name in charts or c.name in runset.CHARTS:
                continue
            keys = tuple(own.get(s) or by_series.get(s, s) for s in c.series)
            charts[c.name] = Chart(c.name, c.title, c.unit, keys, description=c.description)
    # workload charts lead, the generic ones follow (throughput first of those)
    ordered = {"throughput": runset.CHARTS["throughput"], **charts}
    ordered.update({k: v for k, v in runset.CHARTS.items() if k not in ordered})
    return metrics, ordered


METRICS, CHARTS = _build(list(WORKLOADS.values()))
# charts a workload declares: shown only for runs of a workload that declares them
WORKLOAD_CHARTS = frozenset(c.name for s in WORKLOADS.values() for c in s.charts)
RESULT_KEYS = tuple(k for k, m in METRICS.items() if m.per_phase == "result")
# the rows of a phase table: throughput, then the workloads' results, then the rest
TABLE_METRICS = ("throughput",) + tuple(k for k in RESULT_KEYS if METRICS[k].table) + tuple(
    k for k, m in METRICS.items() if m.table and k != "throughput" and k not in RESULT_KEYS)


def chart(name: str) -> Chart:
    """The chart called ``name``; an unknown name fails with the list of known ones."""
    try:
        return CHARTS[name]
    except KeyError:
        raise KeyError(f"no chart called {name!r}; charts are: {', '.join(CHARTS)}") from None


def metric(key: str) -> Metric:
    try:
        return METRICS[key]
    except KeyError:
        raise KeyError(f"no metric called {key!r}; metrics are: {', '.join(METRICS)}") from None


def spec_of(workload: str) -> WorkloadSpec | None:
    """The registered spec of a run's workload; None for a workload this app does not know
    (a run recorded by a newer Versus, or imported from a tool's log)."""
    return WORKLOADS.get(workload)
