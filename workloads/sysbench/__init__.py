"""sysbench, driven on the host and read from its own output (live or an old log)."""
from ..params import ChartSpec, MetricSpec, Param, PhaseSpec, WorkloadSpec

SPEC = WorkloadSpec(
    name="sysbench",
    title="sysbench",
    description="sysbench's own OLTP tests (oltp_point_select, oltp_read_write …) run on the "
                "host, its report lines as samples and its final report as the result.",
    params=(
        Param("test", "str", "oltp_point_select", "sysbench test name (oltp_read_only, "
              "oltp_read_write, oltp_insert …) or the path of a Lua script on the host.",
              group="schema"),
        Param("tables", "int", 1, "--tables", min=1, max=1024, group="schema"),
        Param("table-size", "int", 100_000, "--table-size: rows per table.", min=1,
              max=1_000_000_000, unit="rows", group="schema"),
        Param("rebuild", "bool", False, "Drop and load the tables again even when they match.",
              group="schema"),
        Param("threads", "int", 2, "--threads", min=1, max=4096),
        Param("time", "int", 60, "--time: seconds measured.", min=1, max=30 * 86400, unit="s"),
        Param("warmup", "int", 0, "Seconds run before the measured period (not counted).",
              min=0, max=86400, unit="s"),
        Param("rand-type", "choice", "special", "--rand-type", choices=("special", "uniform",
                                                                          "gaussian", "pareto")),
        Param("report-interval", "int", 1, "--report-interval (seconds per sample).", min=1,
              max=3600, unit="s"),
    ),
    dialects=("postgres", "mysql"),
    phases=(
        PhaseSpec("load", "load", unit="rows/s"),
        PhaseSpec("warmup", "warmup", seconds="warmup", when="warmup > 0"),
        PhaseSpec("measure", "measured", seconds="time"),
    ),
    metrics=(
        MetricSpec("qps", "QPS", "QPS", summary="result.qps", series="throughput",
                   source="@result.qps_source", headline=True),
        MetricSpec("tps", "TPS", "TPS", summary="result.tps", series="counter.transactions",
                   source="@result.tps_source"),
        MetricSpec("server-rate", "Server", "per s", summary="server.rate",
                   source="@server.source", role="check"),
        MetricSpec("sysbench-cpu", "sysbench CPU", "µs per query",
                   summary="driver_cpu.us_per_op", source="@driver_cpu.source", role="check",
                   lower_is_better=True),
    ),
    charts=(
        ChartSpec("sysbench-tps", "Transactions per second · sysbench", "TPS",
                  ("counter.transactions",), labels=("TPS",),
                  description="sysbench's transactions (events) per second, from its "
                              "--report-interval lines"),
    ),
    throughput_unit="QPS",
    op_name="query",
    quick={"table-size": 2000, "threads": 2},
    runner="workloads.sysbench.run:run",
    importer="workloads.sysbench.parse:import_logs",
    probe="workloads.sysbench.run:probe",
)
