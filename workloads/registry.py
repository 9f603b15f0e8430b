"""The one list of workloads. Adding a workload is one entry here."""
from __future__ import annotations

import importlib
from typing import Any, Callable

from .hammerdb import SPEC as HAMMERDB
from .insert_benchmark import SPEC as INSERT_BENCHMARK
from .micro import SPEC as MICRO
from .params import WorkloadSpec
from .perf_trace import SPEC as PERF_TRACE
from .pgbench import SPEC as PGBENCH
from .point_query import SPEC as POINT_QUERY
from .sysbench import SPEC as SYSBENCH
from .tpcc import SPEC as TPCC
from .transfers import SPEC as TRANSFERS

WORKLOADS: dict[str, WorkloadSpec] = {s.name: s for s in (
    POINT_QUERY, TPCC, INSERT_BENCHMARK, TRANSFERS, PERF_TRACE, SYSBENCH, PGBENCH, HAMMERDB,
    MICRO)}


class UnknownWorkload(KeyError):
    def __str__(self) -> str:
        return (f"unknown workload {self.args[0]!r}; known workloads: "
                f"{', '.join(sorted(WORKLOADS))} (see 'versus workloads')")


def get(name: str) -> WorkloadSpec:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UnknownWorkload(name) from None


def importers() -> list[tuple[str, Callable[[list], list[dict[str, Any]]]]]:
    """(workload, import function) of every workload that reads a tool's own logs. An import
    function takes [(file name, opener)] and returns the runs it found, as
    {"workload", "target", "params", "files", "events"}; it leaves out files that are not
    its tool's and raises events.LogFormatError for one of its tool's that it cannot read."""
    out = []
    for spec in WORKLOADS.values():
        if spec.importer:
            mod, _, fn = spec.importer.partition(":")
            out.append((spec.name, getattr(importlib.import_module(mod), fn)))
    return out
