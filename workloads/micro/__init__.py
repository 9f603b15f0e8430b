"""micro: the sysbench-style microbenchmark suite used to find CPU regressions between
versions, test by test (point queries, range queries with and without aggregation, writes).

Tables sbtest1..N as sysbench creates them (a sysbench-prepared database is reused as is,
and the reverse); each test is one phase with sysbench's SQL (see suite.py); QPS counts
statements (BEGIN and COMMIT included) and TPS transactions, as sysbench does.
"""
from ..params import MetricSpec, Param, WorkloadSpec
from ..sbtest import suite
from ..sbtest.values import DISTRIBUTIONS

_GROUP_HELP = ", ".join(f"{k} ({v.lower()})" for k, v in suite.GROUPS.items())

SPEC = WorkloadSpec(
    name="micro",
    title="Microbenchmarks",
    description="The sysbench-style microbenchmark suite: "
                f"{len(suite.TESTS)} tests (point queries, range queries without and with "
                "aggregation, writes), each one phase, reads before and after the writes; "
                "QPS and TPS per test and the hardware cost per statement.",
    params=(
        Param("tests", "str", "all", "Which tests: all; a group: " + _GROUP_HELP +
              ", or reads; or test names, comma-separated: " + ", ".join(suite.FAMILIES) +
              " (a name with ranges runs each range; random-points_range=10 runs one)."),
        Param("tables", "int", 1, "Number of sbtest tables; each statement picks a table at "
              "random (the scan: one table per client).", min=1, max=1024, group="schema"),
        Param("table-size", "int", 100_000, "Rows per table.", min=1, max=1_000_000_000,
              unit="rows", group="schema"),
        Param("rebuild", "bool", False, "Drop and reload the tables even when they match.",
              group="schema"),
        Param("clients", "int", 2, "Concurrent clients, one process and one connection "
              "each.", min=1, max=1024, group="driver"),
        Param("read-seconds", "int", 60, "Seconds measured per read test (published runs "
              "use 600).", min=1, max=30 * 86400, unit="s"),
        Param("write-seconds", "int", 60, "Seconds measured per write test (published runs "
              "use 900).", min=1, max=30 * 86400, unit="s"),
        Param("warmup", "int", 5, "Seconds of each test's load before it is measured (not "
              "counted); the harness runs sysbench with --warmup-time=5.",
              min=0, max=86400, unit="s"),
        Param("pre-reads", "bool", True, "Run the read tests before the writes as well "
              "(phases <test>.pre), as the published harness does; the reads after the "
              "writes keep the plain names.", group="run"),
        Param("distribution", "choice", "uniform", "How ids are drawn: uniform (as the "
              "published harness runs sysbench), special (sysbench 1.0's default: 75 % of "
              "the draws on 1 % of the ids) or zipfian (exponent 0.8, sysbench 1.1). "
              "update-zipf is always zipfian, update-one always id 1.",
              choices=DISTRIBUTIONS, group="driver"),
        Param("mysql-driver", "choice", "auto", "MySQL/MariaDB client: auto (MariaDB "
              "Connector/C, libmariadb, with server-side prepared statements when installed, "
              "else MariaDB Connector/Python with the same, else mysqlclient, else PyMySQL), "
              "or one of them; the last two send statements as text.",
              choices=("auto", "libmariadb", "mariadb", "mysqlclient", "pymysql"),
              group="driver", label="MySQL driver"),
        Param("client-loop", "choice", "auto", "The clients' event loop: auto (compiled, "
              "fastloop.c built with the host's C compiler, where the client is libpq or "
              "libmariadb; else Python), compiled (refuse to run without it) or python. "
              "The compiled loop costs the client what sysbench's does per statement.",
              choices=("auto", "compiled", "python"), group="driver", label="Client loop"),
    ),
    native=True,
    dialects=("postgres", "mysql"),
    phases=suite.ALL_PHASES,
    phase_plan=suite.phase_plan,
    validate=suite.validate,
    metrics=(
        MetricSpec("qps", "QPS", "QPS", summary="rate", series="throughput",
                   source="client count: statements / test time (BEGIN and COMMIT count, "
                          "as in sysbench)",
                   headline=True),
        MetricSpec("tps", "TPS", "TPS", summary="ops_total/s", series="ops",
                   source="client count: transactions (sysbench events) / test time"),
        MetricSpec("scan-rows", "Rows scanned", "rows/s", summary="scan.rows/s",
                   source="@scan.source"),
        MetricSpec("server-statements", "server statements", "/s",
                   summary="server_check.statements/s", source="@server_check.source",
                   role="check"),
        MetricSpec("server-transactions", "server transactions", "/s",
                   summary="server_check.transactions/s", source="@server_check.source",
                   role="check"),
        MetricSpec("client-cpu-statement", "client CPU", "µs per statement",
                   summary="sql_client.cpu_us_per_statement",
                   source="getrusage of the virtual users",
                   role="check", lower_is_better=True),
    ),
    quick={"tests": "point-query,read-only_range=10,update-index", "table-size": 2000,
           "clients": 2, "read-seconds": 2, "write-seconds": 2, "warmup": 0},
    # the saved run's tests table: a row a test, the figures a reader compares
    step_table=("qps", "tps", "latency.p95", "eff.cpu_us"),
    throughput_unit="QPS",
    op_count="counters.statements",
    op_name="statement",
    runner="workloads.micro.transactions:run",
)
