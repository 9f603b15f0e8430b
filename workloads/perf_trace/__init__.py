"""perf-trace: the server's CPU efficiency per query type and rows per query.

One sbtest table; for every query type × rows-per-query cell a step of its own in which the
clients run only that statement, with the server's processes under `perf stat`: where the
host has hardware counters the steps give IPC and branch / L1-icache / LLC misses per
thousand instructions, as the tracing studies tabulate them per query type; everywhere they
give the server's CPU time and context switches per query (software events).
"""
from ..params import MetricSpec, Param, ParamError, PhaseSpec, WorkloadSpec

KINDS = ("select", "aggregate", "update")


def cells(values: dict) -> list[tuple[str, int]]:
    """(query type, rows per query) in run order, from the resolved parameters."""
    kinds = [k for k in str(values.get("queries", "")).split(",") if k]
    rows = [int(r) for r in str(values.get("rows", "")).split(",") if r]
    return [(k, r) for k in kinds for r in rows]


def validate(values: dict) -> None:
    """Rows per query fit in the table (each parameter is checked by its declaration)."""
    too_big = [r for _, r in cells(values) if r > values["table-size"]]
    if too_big:
        raise ParamError(f"rows per query must be at most table-size ({values['table-size']}), "
                         f"not {too_big[0]}")


def phase_name(kind: str, rows: int) -> str:
    return f"{kind}/{rows}"


def phase_plan(values: dict) -> list[PhaseSpec]:
    return [PhaseSpec("prepare", "load", unit="rows/s")] + [
        PhaseSpec(phase_name(k, r), "step", seconds="seconds") for k, r in cells(values)]


SPEC = WorkloadSpec(
    name="perf-trace",
    title="Perf trace",
    description="Query types × rows per query, one step each, with the server's processes "
                "under perf stat: IPC and cache misses per thousand instructions where the "
                "host has hardware counters; CPU time and context switches per query always.",
    params=(
        Param("queries", "choice-list", ",".join(KINDS), "Query types, comma-separated: "
              "select (SELECT c … WHERE id BETWEEN), aggregate (SELECT sum(k) … BETWEEN), "
              "update (UPDATE … SET k = k + 1 … BETWEEN).", choices=KINDS),
        Param("rows", "int-list", "1,10,100,1000", "Rows per query, comma-separated (1 is a "
              "point query); each at most table-size.", min=1, max=1_000_000_000, unit="rows"),
        Param("table-size", "int", 100_000, "Rows in sbtest1.", min=1, max=1_000_000_000,
              unit="rows", group="schema"),
        Param("clients", "int", 1, "Concurrent clients, one process each.", min=1, max=1024),
        Param("seconds", "int", 10, "Seconds per cell.", min=1, max=86400, unit="s"),
        Param("rebuild", "bool", False, "Drop and reload the table even when it matches.",
              group="schema"),
    ),
    native=True,
    dialects=("postgres", "mysql"),
    phases=(PhaseSpec("prepare", "load", unit="rows/s"),),
    phase_plan=phase_plan,
    validate=validate,
    metrics=(
        MetricSpec("qps", "QPS", "QPS", summary="rate", series="throughput",
                   source="client count: queries completed by the clients / step time",
                   headline=True),
        MetricSpec("server-cpu", "server CPU", "µs per query",
                   summary="perf.per_op.task_clock_us", source="@perf.source",
                   lower_is_better=True),
        MetricSpec("server-cs", "server context switches", "per query",
                   summary="perf.per_op.context_switches", source="@perf.source",
                   lower_is_better=True),
        MetricSpec("ipc", "IPC", "instructions per cycle", summary="perf.hardware.ipc",
                   source="@perf.source"),
        *(MetricSpec(f"{key}-mpki", f"{title} MPKI", "misses per 1000 instructions",
                     summary=f"perf.hardware.{key}_mpki", source="@perf.source",
                     lower_is_better=True)
          for key, title in (("l1i", "L1-icache"), ("llc", "LLC"), ("branch", "branch"))),
    ),
    throughput_unit="QPS",
    op_name="query",
    quick={"queries": "select,update", "rows": "1,10", "seconds": 1, "table-size": 2000},
    runner="workloads.perf_trace.transactions:run",
    perf_stat=True,
)
