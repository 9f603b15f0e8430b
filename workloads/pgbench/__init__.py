"""pgbench (PostgreSQL only), driven on the host and read from its own output."""
from ..params import MetricSpec, Param, PhaseSpec, WorkloadSpec

SPEC = WorkloadSpec(
    name="pgbench",
    title="pgbench",
    description="PostgreSQL's pgbench run on the host: -i as the load, --progress lines as "
                "samples, its summary's tps as the result.",
    params=(
        Param("scale", "int", 10, "-s: scale factor (100,000 pgbench_accounts rows each).",
              min=1, max=100_000, group="schema"),
        Param("rebuild", "bool", False, "Drop and load the tables again even when they match.",
              group="schema"),
        Param("clients", "int", 2, "-c", min=1, max=4096),
        Param("jobs", "int", 2, "-j: threads.", min=1, max=1024),
        Param("builtin", "choice", "tpcb-like", "-b: builtin script (ignored with a script).",
              choices=("tpcb-like", "simple-update", "select-only")),
        Param("script", "str", "", "-f: a custom script file on the host (empty: builtin)."),
        Param("time", "int", 60, "-T: seconds measured.", min=1, max=30 * 86400, unit="s"),
        Param("protocol", "choice", "simple", "-M", choices=("simple", "extended", "prepared")),
        Param("progress", "int", 1, "-P: seconds per progress line (sample).", min=1, max=3600,
              unit="s"),
    ),
    dialects=("postgres",),
    phases=(
        PhaseSpec("load", "load", unit="rows/s"),
        PhaseSpec("measure", "measured", seconds="time"),
    ),
    metrics=(
        MetricSpec("tps", "TPS", "TPS", summary="result.tps", series="throughput",
                   source="@result.tps_source", headline=True),
        MetricSpec("server-tps", "Server", "per s", summary="server.rate",
                   source="@server.source", role="check"),
        MetricSpec("pgbench-cpu", "pgbench CPU", "µs per transaction",
                   summary="driver_cpu.us_per_op", source="@driver_cpu.source", role="check",
                   lower_is_better=True),
    ),
    throughput_unit="TPS",
    op_name="transaction",
    quick={"scale": 1, "clients": 2, "jobs": 2},
    runner="workloads.pgbench.run:run",
    importer="workloads.pgbench.parse:import_logs",
    probe="workloads.pgbench.run:probe",
)
