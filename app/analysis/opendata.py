"""Open data: a comparison as three Parquet files for notebooks, pandas, DuckDB, Spark.

``versus export FILE[:RUN] … --parquet DIR`` writes, in long form (one row per number):

- ``runs.parquet``: one row per run: ``run`` (1, 2 … as in the comparison), ``file``,
  ``run_id``, ``label``, ``workload``, ``engine``, ``server_version``, ``target``, ``host``,
  ``cores``, ``profile``, ``status``, ``unit`` (the throughput unit), ``started_epoch``
  (seconds since 1970, UTC), ``params`` (JSON text of the workload's parameters).
- ``phases.parquet``: one row per run, phase and metric: ``run``, ``phase``, ``role``
  (load, warmup, measured, step), ``metric`` (throughput, latency.p95, eff.cpu_us …),
  ``title``, ``unit``, ``value`` (the figure of Compare's per-phase table).
- ``series.parquet``: one row per run, metric and interval: ``run``, ``metric``, ``unit``,
  ``t`` (seconds from the run's start, or from the aligned phase's start; the end of the
  interval), ``value``.

No Qt; pyarrow writes the files.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from app.analysis.compare import Comparison
from app.analysis.metrics import METRICS

FILES = ("runs", "phases", "series")


def run_table(comp: Comparison) -> pa.Table:
    rows = []
    for i, r in enumerate(comp.runs):
        rows.append({"run": i + 1, "file": r.ref.file, "run_id": r.ref.run_id or "",
                     "label": r.label, "workload": r.workload, "engine": r.engine,
                     "server_version": r.server_version or "", "target": r.target,
                     "host": r.hostname, "cores": r.cores, "profile": r.profile or "",
                     "status": r.status, "unit": r.unit,
                     "started_epoch": r.hello.get("started_epoch"),
                     "params": json.dumps(r.params, sort_keys=True, default=str)})
    schema = pa.schema([("run", pa.int32()), ("file", pa.string()), ("run_id", pa.string()),
                        ("label", pa.string()), ("workload", pa.string()),
                        ("engine", pa.string()), ("server_version", pa.string()),
                        ("target", pa.string()), ("host", pa.string()),
                        ("cores", pa.int32()), ("profile", pa.string()),
                        ("status", pa.string()), ("unit", pa.string()),
                        ("started_epoch", pa.float64()), ("params", pa.string())])
    return pa.Table.from_pylist(rows, schema=schema)


def phase_table(comp: Comparison) -> pa.Table:
    cols: dict[str, list] = {k: [] for k in ("run", "phase", "role", "metric", "title", "unit",
                                             "value")}
    for i, r in enumerate(comp.runs):
        for phase in r.phase_names():
            for key, v in comp.phase_values(i, phase).items():
                if v is None or key not in METRICS:
                    continue
                cols["run"].append(i + 1)
                cols["phase"].append(phase)
                cols["role"].append(r.phase_role(phase) or "")
                cols["metric"].append(key)
                cols["title"].append(METRICS[key].title)
                cols["unit"].append(comp.metric_unit(key, i))
                cols["value"].append(float(v))
    return pa.table({"run": pa.array(cols["run"], pa.int32()),
                     **{k: pa.array(cols[k], pa.string())
                        for k in ("phase", "role", "metric", "title", "unit")},
                     "value": pa.array(cols["value"], pa.float64())})


def series_table(comp: Comparison) -> pa.Table:
    run, metric, unit, t, value = [], [], [], [], []
    for i in range(len(comp.runs)):
        for key in METRICS:
            if not comp.has_metric(key):
                continue
            ts, vs = comp.series(i, key)
            if not len(ts):
                continue
            u = comp.metric_unit(key, i)
            run += [i + 1] * len(ts)
            metric += [key] * len(ts)
            unit += [u] * len(ts)
            t += list(ts)
            value += list(vs)
    return pa.table({"run": pa.array(run, pa.int32()), "metric": pa.array(metric, pa.string()),
                     "unit": pa.array(unit, pa.string()), "t": pa.array(t, pa.float64()),
                     "value": pa.array(value, pa.float64())})


def write_parquet(comp: Comparison, out_dir: str | Path) -> list[Path]:
    """runs.parquet, phases.parquet and series.parquet in ``out_dir`` (made if missing)."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for name, table in (("runs", run_table(comp)), ("phases", phase_table(comp)),
                        ("series", series_table(comp))):
        p = d / f"{name}.parquet"
        pq.write_table(table, p)
        out.append(p)
    return out
