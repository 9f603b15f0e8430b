"""TPROC-C: the TPC-C-derived OLTP workload (HammerDB's name for it), native.

Nine tables with the standard names and cardinalities, a parallel loader on each engine's
bulk path, the five transactions in the standard mix with the standard input generation,
as server-side procedures or as client statements (`stored-procedures`), NOPM from
sum(d_next_o_id) and TPM from the server's commit+rollback counters, and the TPC-C
consistency conditions (`versus check tpcc TARGET`).
"""
from ..params import ChartSpec, MetricSpec, Param, PhaseSpec, WorkloadSpec

SPEC = WorkloadSpec(
    name="tpcc",
    title="TPROC-C",
    description="TPC-C-derived OLTP (as HammerDB's TPROC-C): new order 45 %, payment 43 %, "
                "order status, delivery and stock level 4 % each; NOPM and TPM.",
    params=(
        Param("warehouses", "int", 4, "Warehouses (the scale factor): 100,000 stock rows, "
              "30,000 customers and 30,000 orders each, plus 100,000 items.",
              min=1, max=100_000, group="schema"),
        Param("partition", "bool", False, "Partition the large tables by warehouse (hash); "
              "meant for large warehouse counts.", group="schema"),
        Param("rebuild", "bool", False, "Drop and reload the schema even when it matches.",
              group="schema"),
        Param("load-clients", "int", 2, "Parallel loader processes.", min=1, max=256,
              group="load"),
        Param("vus", "int", 2, "Virtual users, one process and one connection each.",
              min=1, max=1024, group="driver", label="Virtual users"),
        Param("use-all-warehouses", "bool", True, "Spread each virtual user over the "
              "warehouses (HammerDB's 'use all warehouses'); off: one home warehouse each.",
              group="driver"),
        Param("stored-procedures", "bool", True, "Server-side procedures (PL/pgSQL functions; "
              "MySQL/MariaDB stored procedures) called once per transaction; off: the same "
              "statements sent by the client.", group="driver"),
        Param("keying-thinking", "bool", False, "Standard keying and thinking times "
              "(seconds per transaction; a few transactions per minute per user).",
              group="driver", label="Keying and thinking times"),
        Param("rampup", "int", 120, "Seconds of load before the measured period (not counted); "
              "HammerDB's default rampup is 2 minutes.", min=0, max=86400, unit="s",
              group="run"),
        Param("duration", "int", 300, "Seconds measured; HammerDB's default test duration is "
              "5 minutes.", min=1, max=30 * 86400, unit="s", group="run"),
        Param("check-after", "bool", False, "Run the TPC-C consistency check after the "
              "measured period.", group="run"),
    ),
    native=True,
    dialects=("postgres", "mysql"),
    phases=(
        PhaseSpec("load", "load", unit="rows/s"),
        PhaseSpec("rampup", "warmup", seconds="rampup", when="rampup > 0"),
        PhaseSpec("measure", "measured", seconds="duration"),
        PhaseSpec("check", "check", when="check_after"),
    ),
    metrics=(
        MetricSpec("nopm", "NOPM", "NOPM", summary="result.nopm", series="throughput",
                   source="@result.nopm_source", headline=True),
        MetricSpec("tpm", "TPM", "TPM", summary="result.tpm", series="server.tpm",
                   source="@result.tpm_source"),
        MetricSpec("client-nopm", "client", "NOPM", summary="result.client.nopm",
                   source="new orders committed by the virtual users", role="check"),
        MetricSpec("client-tpm", "client", "commits+rollbacks/min",
                   summary="result.client.tpm",
                   source="commits and rollbacks counted by the virtual users", role="check"),
        MetricSpec("retries", "retries", "", summary="result.client.retries",
                   source="deadlocks and serialization failures retried", role="check",
                   lower_is_better=True),
        MetricSpec("session-tpm", "the virtual users' sessions", "commits+rollbacks/min",
                   summary="result.session_transactions/min",
                   source="SHOW SESSION STATUS of the virtual users' connections",
                   role="check"),
        MetricSpec("client-cpu", "client CPU", "µs per transaction",
                   summary="result.client_cpu_us_per_txn",
                   source="getrusage of the virtual users", role="check",
                   lower_is_better=True),
    ),
    charts=(
        ChartSpec("nopm", "NOPM · client new orders; TPM · server commits+rollbacks",
                  "per minute", ("throughput", "server.tpm"),
                  labels=("NOPM", "TPM"),
                  description="NOPM: new orders the virtual users committed, per minute; "
                              "TPM: the server's commits + rollbacks, per minute"),
        ChartSpec("tpm", "Transactions per minute", "TPM", ("server.tpm",),
                  description="the server's commits + rollbacks per minute"),
    ),
    throughput_unit="NOPM",
    op_name="transaction",
    quick={"warehouses": 1, "vus": 2, "rampup": 1, "load-clients": 2},
    vu_home=("Home warehouse", "The warehouse(s) this user's transactions start from"),
    runner="workloads.tpcc.transactions:run",
    checker="workloads.tpcc.check:run_check",
)
