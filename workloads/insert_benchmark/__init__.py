"""insert-benchmark: Mark Callaghan's insert benchmark (iibench.py and its driver scripts),
native.

One table per client (or one shared), as the published harness creates it; steps as it names
them: l.i0 loads in primary-key order without secondary indexes (the engine's bulk path),
l.x creates the three secondary indexes, l.i1 and l.i2 insert and delete the oldest rows in
transactions of 50 and 5 rows (the table size stays constant), then qr<rate> and qp<rate>
run range queries on the secondary indexes or point queries on the primary key as fast as
the clients can, while one background writer per client inserts and deletes at <rate> rows
per second. A query step whose writers fell more than 5 % short of their rate is flagged
"missed SLA", as the published results grey such cells out.
"""
from __future__ import annotations

from ..params import ChartSpec, MetricSpec, Param, PhaseSpec, WorkloadSpec, split_list

STEPS = ("l.i0", "l.x", "l.i1", "l.i2", "qr", "qp")
DEFAULT_RATES = "100,500,1000"


def plan(values: dict) -> list[PhaseSpec]:
    """The steps a run goes through: the chosen load steps, then qr and qp at each rate."""
    steps = split_list(values.get("steps", ",".join(STEPS)))
    out = [PhaseSpec("l.i0", "load", unit="inserts/s"),
           PhaseSpec("l.x", "load", unit="rows/s"),
           PhaseSpec("l.i1", "step", unit="inserts/s"),
           PhaseSpec("l.i2", "step", unit="inserts/s")]
    out = [ph for ph in out if ph.name in steps]
    for rate in split_list(values.get("rates", DEFAULT_RATES)):
        for kind in ("qr", "qp"):
            if kind in steps:
                out.append(PhaseSpec(f"{kind}{int(rate)}", "step", seconds="query_seconds",
                                     unit="QPS"))
    return out


SPEC = WorkloadSpec(
    name="insert-benchmark",
    title="Insert benchmark",
    description="Mark Callaghan's insert benchmark: load in key order (l.i0), create "
                "indexes (l.x), inserts with deletes (l.i1, l.i2), then range and point "
                "queries beside rate-limited writers (qr100 … qp1000), flagging missed SLAs.",
    params=(
        Param("clients", "int", 1, "Clients. Each has a table of its own (pi1, pi2 …) "
              "unless shared-table is on, and in the query steps a background writer too.",
              min=1, max=256),
        Param("shared-table", "bool", False, "All clients use one table (pi1) instead of "
              "one each.", group="schema"),
        Param("load-rows", "int", 1_000_000, "Rows each client inserts in l.i0, in "
              "primary-key order (the published harness counts rows per client too).",
              min=100, max=10_000_000_000, unit="rows", group="load"),
        Param("load-batch", "int", 1000, "Rows per bulk statement in l.i0 (COPY on "
              "PostgreSQL, LOAD DATA or a multi-row INSERT on MySQL/MariaDB).",
              min=1, max=1_000_000, unit="rows", group="load"),
        Param("write-rows", "int", 100_000, "Rows each client inserts (and deletes) in "
              "l.i1 and l.i2 together: l.i1 does 4/5 of them in transactions of 50 rows, "
              "l.i2 1/5 in transactions of 5, as the published harness splits them.",
              min=10, max=10_000_000_000, unit="rows", group="load"),
        Param("query-seconds", "int", 300, "Seconds of each query step.", min=1,
              max=30 * 86400, unit="s"),
        Param("rates", "int-list", DEFAULT_RATES, "Background insert rates in rows per "
              "second per client; each gives a qr and a qp step (qr100, qp100 …).",
              min=1, max=10_000_000),
        Param("rows-per-commit", "int", 50, "Rows per transaction of the background "
              "writers (as published: 50, or the rate when that is lower).",
              min=1, max=100_000, unit="rows"),
        Param("rows-per-query", "int", 10, "Rows each query fetches (LIMIT of the range "
              "queries, ids of the point queries).", min=1, max=10_000, unit="rows"),
        Param("steps", "choice-list", ",".join(STEPS), "Steps to run: l.i0 (creates the "
              "tables afresh), l.x, l.i1, l.i2, qr, qp. Without l.i0 the tables of an "
              "earlier run are used.", choices=STEPS),
    ),
    native=True,
    dialects=("postgres", "mysql"),
    phases=tuple(plan({})),
    phase_plan=plan,
    metrics=(
        MetricSpec("ib-rate", "Rate", "@unit", summary="rate", series="throughput",
                   source="@ibench.rate_source", headline=True),
        MetricSpec("ib-background", "background inserts", "rows/s",
                   summary="background.inserts_per_s",
                   source="@background.source"),
        MetricSpec("ib-server-background", "server", "rows/s",
                   summary="background.server_inserts_per_s",
                   source="@background.server_source", role="check"),
        MetricSpec("ib-ips", "Inserts", "rows/s", summary="ibench.inserts_per_s",
                   series="counter.rows_inserted", role="detail",
                   source="rows inserted by the clients (loads) or background writers"),
        MetricSpec("ib-qps", "Queries", "QPS", summary="ibench.queries_per_s",
                   series="counter.queries", role="detail"),
        MetricSpec("ib-rpq", "Rows per query", "rows", summary="ibench.rows_per_query",
                   role="detail"),
        MetricSpec("ib-db-size", "DB size", "MB", summary="ibench.db_size_mb",
                   source="@ibench.db_size_source", role="detail", lower_is_better=True),
        MetricSpec("ib-max-insert", "Max insert", "ms", summary="ibench.max_insert_ms",
                   source="the slowest insert statement (l.i0: one bulk batch), from the "
                          "latency histograms (within 0.4 %)",
                   role="detail", lower_is_better=True),
        MetricSpec("ib-max-query", "Max query", "ms", summary="ibench.max_query_ms",
                   source="the slowest query, from the latency histograms",
                   role="detail", lower_is_better=True),
    ),
    charts=(
        ChartSpec("ibench-rates", "Inserts and queries per second", "/s",
                  ("counter.rows_inserted", "counter.queries"),
                  labels=("inserts/s", "queries/s"),
                  description="client counts per second: rows inserted (by the loading "
                              "clients or the background writers) and queries completed"),
    ),
    step_table=("ib-rate", "ib-ips", "ib-qps", "ib-rpq", "eff.cpu_us", "eff.cs", "eff.read_kb",
                "eff.write_kb", "ib-db-size", "ib-max-insert", "ib-max-query",
                "latency.p50", "latency.p99"),
    throughput_unit="QPS",
    op_name="operation",
    vu_home=("Table", "The table this client works on, and its part in a query step"),
    quick={"clients": 2, "load-rows": 2000, "write-rows": 200, "query-seconds": 1,
           "rates": "100", "rows-per-commit": 5},
    runner="workloads.insert_benchmark.transactions:run",
)
