"""point-query: sysbench-style primary-key point selects on sbtest<N> tables; the first test of
the micro suite run on its own (workloads.micro: same tables, clients and loop)."""
from ..params import MetricSpec, Param, PhaseSpec, WorkloadSpec

SPEC = WorkloadSpec(
    name="point-query",
    title="Point query",
    description="SELECT c FROM sbtest<N> WHERE id=? with uniform random ids "
                "(sysbench oltp_point_select); the micro suite's point-query test alone.",
    params=(
        Param("tables", "int", 1, "Number of sbtest tables; each client picks a table "
              "at random per query.", min=1, max=1024, group="schema"),
        Param("table-size", "int", 100_000, "Rows per table.", min=1, max=1_000_000_000,
              unit="rows", group="schema"),
        Param("clients", "int", 2, "Concurrent clients, one process each.", min=1, max=1024),
        Param("duration", "int", 60, "Seconds measured.", min=1, max=30 * 86400, unit="s"),
        Param("warmup", "int", 0, "Seconds of load before the measured phase (not counted).",
              min=0, max=86400, unit="s"),
        Param("rebuild", "bool", False, "Drop and reload the tables even when they match.",
              group="schema"),
        Param("distribution", "choice", "uniform", "How ids are drawn: uniform, or special "
              "as sysbench's default --rand-type=special (75 % of reads on 1 % of the ids "
              "around the middle, the rest bell-shaped), for like-for-like comparisons.",
              choices=("uniform", "special")),
        Param("rate", "int", 0, "Queries per second for the whole run, 0 for a closed loop "
              "(each client sends its next query when the last returned). At a rate, each "
              "client follows a schedule of evenly spaced intended starts and never skips "
              "one; latency is measured from the intended start (what a user waits), the "
              "service time apart, and starts more than 10 ms late are counted. The Python "
              "event loop runs it.", min=0, max=10_000_000, unit="/s"),
    ),
    native=True,
    dialects=("postgres", "mysql"),
    phases=(
        PhaseSpec("prepare", "load", unit="rows/s"),
        PhaseSpec("warmup", "warmup", seconds="warmup", when="warmup > 0"),
        PhaseSpec("measure", "measured", seconds="duration"),
    ),
    metrics=(
        MetricSpec("qps", "QPS", "QPS", summary="rate", series="throughput",
                   source="client count: queries completed by the clients / phase time",
                   headline=True),
        MetricSpec("server-qps", "Server QPS", "QPS", summary="server.rate",
                   source="@server.source", role="check"),
    ),
    throughput_unit="QPS",
    op_name="query",
    quick={"table-size": 2000, "clients": 2},
    runner="workloads.point_query.transactions:run",
)
