"""HammerDB's TPROC-C through its CLI on the host, and HammerDB's own logs imported."""
from ..params import ChartSpec, MetricSpec, Param, ParamError, PhaseSpec, WorkloadSpec


def validate(values: dict) -> None:
    """What the kit's hdb can run, checked before anything starts (it counts whole minutes
    and always uses all warehouses)."""
    for key in ("rampup", "duration"):
        if values[key] % 60:
            raise ParamError(f"{key} must be whole minutes for HammerDB (60, 120 …), not "
                             f"{values[key]} s")
    if not values["use-all-warehouses"]:
        raise ParamError("use-all-warehouses: the HammerDB kit's hdb always runs with "
                         "allwarehouse true")


SPEC = WorkloadSpec(
    name="hammerdb",
    title="HammerDB TPROC-C",
    description="HammerDB's own TPROC-C (CLI) on the host: buildschema as the load, its "
                "transaction counter as samples, its TEST RESULT line (NOPM, TPM) as the result.",
    params=(
        Param("warehouses", "int", 4, "Warehouses built (count_ware).", min=1, max=100_000,
              group="schema"),
        Param("vus", "int", 2, "Virtual users.", min=1, max=1024, label="Virtual users"),
        Param("rampup", "int", 60, "Rampup seconds (HammerDB counts whole minutes).", min=0,
              max=86400, unit="s"),
        Param("duration", "int", 120, "Measured seconds (whole minutes, at least one).",
              min=60, max=30 * 86400, unit="s"),
        Param("stored-procedures", "bool", True, "PostgreSQL: stored procedures "
              "(pg_storedprocs) or functions; MariaDB/MySQL: stored procedures or client SQL."),
        Param("use-all-warehouses", "bool", True, "allwarehouse"),
        Param("rebuild", "bool", False, "Drop and rebuild the schema.", group="schema"),
        Param("schema", "str", "", "Database HammerDB builds its schema in (empty: the "
              "target's database, which must then be empty or hold HammerDB's schema).",
              group="schema", label="Schema database"),
        Param("cli", "str", "", "Path of the kit's `hdb` command (empty: found on the PATH).",
              group="driver", label="HammerDB command"),
    ),
    dialects=("postgres", "mysql"),
    phases=(
        PhaseSpec("load", "load", unit="rows/s"),
        PhaseSpec("rampup", "warmup", seconds="rampup", when="rampup > 0"),
        PhaseSpec("measure", "measured", seconds="duration"),
    ),
    metrics=(
        MetricSpec("nopm", "NOPM", "NOPM", summary="result.nopm",
                   source="@result.nopm_source", headline=True),
        MetricSpec("tpm", "TPM", "TPM", summary="result.tpm", series="throughput",
                   source="@result.tpm_source"),
        MetricSpec("server-tpm", "the server's counters", "commits+rollbacks/min",
                   summary="server.delta/min", source="@server.source", role="check"),
    ),
    charts=(
        ChartSpec("hammerdb-tpm", "TPM · HammerDB's transaction counter; the server's "
                  "commits+rollbacks", "TPM", ("throughput", "server.tpm"),
                  labels=("HammerDB counter", "server"),
                  description="HammerDB's transaction counter (every 10 s) and the server's "
                              "commits + rollbacks per minute read by Versus"),
    ),
    # samples are HammerDB's transaction counter: TPM (NOPM is only in its TEST RESULT)
    throughput_unit="TPM",
    op_name="transaction",
    quick={"warehouses": 1, "vus": 2, "rampup": 0, "duration": 60},
    runner="workloads.hammerdb.run:run",
    importer="workloads.hammerdb.parse:import_logs",
    probe="workloads.hammerdb.run:probe",
    validate=validate,
)
