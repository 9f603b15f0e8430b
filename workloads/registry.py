"""The one list of workloads. Adding a workload is one entry here."""
from __future__ import annotations

from .params import WorkloadSpec
from .point_query import SPEC as POINT_QUERY
from .tpcc import SPEC as TPCC

WORKLOADS: dict[str, WorkloadSpec] = {s.name: s for s in (POINT_QUERY, TPCC)}


class UnknownWorkload(KeyError):
    def __str__(self) -> str:
        return (f"unknown workload {self.args[0]!r}; known workloads: "
                f"{', '.join(sorted(WORKLOADS))} (see 'versus workloads')")


def get(name: str) -> WorkloadSpec:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UnknownWorkload(name) from None
