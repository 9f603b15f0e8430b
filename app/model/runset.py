"""What a comparison is made of: run references, the metric and chart registry, run colours.

Plain data, stdlib only. One registry serves the GUI and the CLI, so a chart called
``latency`` in a menu is the chart ``versus export --chart latency`` draws, and a metric's
sense (is lower better?) is decided once.

A metric reads one derived series of a run (``column``: a name from ``app.model.derive``).
``per_phase`` says how a phase value is formed: ``mean`` (time-weighted over the phase),
``summary`` (the agent's phase summary, which counts every operation), ``efficiency`` (host
totals over the phase divided by the operations of that phase), ``server`` (a server
counter's total over the phase divided by its operations: tables only) or ``result`` (a
workload's declared result metric, read from the phase summary at ``summary``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Okabe–Ito, colour-blind safe and readable on white; the yellow is left out (too pale on a
# slide). Run i keeps RUN_COLOURS[i % len] everywhere: charts, tables, legends, exports.
RUN_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
               "#8C564B")
# When one chart shows several metrics of the same run, they differ by line style.
LINE_STYLES = ("solid", "dash", "dot", "dashdot")


def run_colour(index: int) -> str:
    return RUN_COLOURS[index % len(RUN_COLOURS)]


@dataclass(frozen=True)
class RunRef:
    """One run in one session file; ``run_id`` None means every run of that file."""
    file: str
    run_id: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.run_id}" if self.run_id else self.file


@dataclass(frozen=True)
class Metric:
    key: str                     # stable id: "throughput", "latency.p95", "cpu.user", "nopm" …
    title: str                   # "Latency p95"
    unit: str                    # "ms"; "" for the throughput unit, which comes from the run
    lower_is_better: bool
    column: str = ""             # the derived series it reads (app.model.derive names)
    chart: str | None = None     # the chart that draws it; None: tables only
    per_phase: str = "mean"      # "mean" | "summary" | "efficiency" | "result"
    table: bool = True           # a row in the per-phase summary table
    style: str = "solid"         # line style when a chart draws several metrics per run
    summary: str = ""            # "result": path into the phase summary (MetricSpec.summary)
    source: str = ""             # where the figure comes from (a sentence, or "@path")

    def label(self, run_unit: str = "") -> str:
        unit = self.unit or run_unit
        return f"{self.title} ({unit})" if unit else self.title


@dataclass(frozen=True)
class Chart:
    name: str                    # used by the GUI and by `versus export --chart NAME`
    title: str
    unit: str                    # y axis unit; "" means the runs' throughput unit
    metrics: tuple[str, ...]
    y_max: float | None = None   # fixed top (CPU %), else from the data
    description: str = ""


def _m(key, title, unit, lower, column="", chart=None, per_phase="mean", table=True,
       style="solid") -> Metric:
    return Metric(key, title, unit, lower, column or key, chart, per_phase, table, style)


# The metrics every run has; a workload adds its result metrics and charts through its spec
# (app.analysis.metrics joins both).
METRICS: dict[str, Metric] = {m.key: m for m in (
    _m("throughput", "Throughput", "", False, "throughput", "throughput", "summary"),
    _m("latency.p50", "Latency p50", "ms", True, "latency.p50", "latency", "summary",
       style="dot"),
    _m("latency.p95", "Latency p95", "ms", True, "latency.p95", "latency", "summary",
       style="dash"),
    _m("latency.p99", "Latency p99", "ms", True, "latency.p99", "latency", "summary",
       style="solid"),
    _m("errors", "Errors", "/s", True, "errors", "errors", "summary"),
    _m("cpu.user", "CPU user", "%", True, "cpu.user", "cpu"),
    _m("cpu.system", "CPU system", "%", True, "cpu.system", "cpu", style="dash"),
    _m("cpu.iowait", "CPU iowait", "%", True, "cpu.iowait", "cpu", style="dot",
       table=False),
    _m("cpu.idle", "CPU idle", "%", False, "cpu.idle", "cpu-idle", table=False),
    _m("cs", "Context switches", "/s", True, "cs", "context-switches"),
    _m("disk.reads", "Disk reads", "/s", True, "disk.reads", "disk-ops"),
    _m("disk.writes", "Disk writes", "/s", True, "disk.writes", "disk-ops", style="dash"),
    _m("disk.read_kb", "Disk read", "KB/s", True, "disk.read_kb", "disk-kb"),
    _m("disk.write_kb", "Disk written", "KB/s", True, "disk.write_kb", "disk-kb",
       style="dash"),
    _m("net.rx_kb", "Network received", "KB/s", True, "net.rx_kb", "network", table=False),
    _m("net.tx_kb", "Network sent", "KB/s", True, "net.tx_kb", "network", style="dash",
       table=False),
    # hardware efficiency: host totals over the phase / operations of the phase
    _m("eff.cpu_us", "CPU per op", "µs", True, "", "cpu-per-op", "efficiency"),
    _m("eff.cs", "Context switches per op", "/op", True, "", "cs-per-op", "efficiency"),
    _m("eff.reads", "Disk reads per op", "/op", True, "", None, "efficiency"),
    _m("eff.read_kb", "KB read per op", "KB", True, "", None, "efficiency"),
    _m("eff.write_kb", "KB written per op", "KB", True, "", None, "efficiency"),
)}

EFFICIENCY_KEYS = ("eff.cpu_us", "eff.cs", "eff.reads", "eff.read_kb", "eff.write_kb")

# The server's own counters per operation: the counter's total over the phase (its per-second
# series, app.model.derive's db.<counter>, without the monitor's own queries) divided by the
# operations the clients counted. (key, title, unit, series), PostgreSQL's then MySQL's.
SERVER_EFFICIENCY: tuple[tuple[str, str, str, str], ...] = (
    ("srv.blks_read", "Blocks read (pg_stat_database) per op", "/op", "db.blks_read"),
    ("srv.blks_hit", "Buffer hits (pg_stat_database) per op", "/op", "db.blks_hit"),
    ("srv.tup_returned", "Rows returned (pg_stat_database) per op", "/op", "db.tup_returned"),
    ("srv.tup_fetched", "Rows fetched (pg_stat_database) per op", "/op", "db.tup_fetched"),
    ("srv.tup_changed", "Rows inserted+updated+deleted (pg_stat_database) per op", "/op",
     "db.tup_inserted+db.tup_updated+db.tup_deleted"),
    ("srv.wal_bytes", "WAL bytes (pg_stat_wal) per op", "B", "db.wal.wal_bytes"),
    ("srv.rows_read", "InnoDB rows read per op", "/op", "db.Innodb_rows_read"),
    ("srv.rows_changed", "InnoDB rows inserted+updated+deleted per op", "/op",
     "db.Innodb_rows_inserted+db.Innodb_rows_updated+db.Innodb_rows_deleted"),
    ("srv.bp_read_requests", "InnoDB buffer pool read requests per op", "/op",
     "db.Innodb_buffer_pool_read_requests"),
    ("srv.bp_reads", "InnoDB buffer pool reads (from disk) per op", "/op",
     "db.Innodb_buffer_pool_reads"),
    ("srv.data_written", "InnoDB data written per op", "B", "db.Innodb_data_written"),
    ("srv.redo_written", "InnoDB redo log written per op", "B", "db.Innodb_os_log_written"),
    ("srv.row_lock_waits", "InnoDB row lock waits per op", "/op", "db.Innodb_row_lock_waits"),
)
SERVER_EFFICIENCY_KEYS = tuple(k for k, *_ in SERVER_EFFICIENCY)
METRICS.update({k: _m(k, title, unit, True, "", None, "server", table=False)
                for k, title, unit, _series in SERVER_EFFICIENCY})

CHARTS: dict[str, Chart] = {c.name: c for c in (
    Chart("throughput", "Throughput", "", ("throughput",),
          description="client-counted operations per interval, in the run's unit"),
    Chart("latency", "Latency", "ms", ("latency.p50", "latency.p95", "latency.p99"),
          description="percentiles over all operations, per interval"),
    Chart("cpu", "Host CPU", "%", ("cpu.user", "cpu.system", "cpu.iowait"), y_max=100,
          description="user, system and iowait time of the benchmark host"),
    Chart("cpu-idle", "Host CPU idle", "%", ("cpu.idle",), y_max=100),
    Chart("context-switches", "Context switches", "/s", ("cs",)),
    Chart("disk-ops", "Disk operations", "/s", ("disk.reads", "disk.writes")),
    Chart("disk-kb", "Disk throughput", "KB/s", ("disk.read_kb", "disk.write_kb")),
    Chart("network", "Network", "KB/s", ("net.rx_kb", "net.tx_kb")),
    Chart("errors", "Errors", "/s", ("errors",)),
    Chart("cpu-per-op", "CPU per operation", "µs", ("eff.cpu_us",),
          description="host CPU busy time per operation, per interval"),
    Chart("cs-per-op", "Context switches per operation", "/op", ("eff.cs",)),
)}

# The rows of the per-phase summary table, in order.
TABLE_METRICS = tuple(k for k, m in METRICS.items() if m.table)


# --- ratios to a base run ---------------------------------------------------------------
TOLERANCE = 0.05                  # ratio ≤ 0.95 or ≥ 1.05 is a difference worth colouring

BETTER, WORSE, SAME, NA = "better", "worse", "same", "n/a"

# Colour classes as RGB for tables and exports: green, red, grey, and blank for n/a.
CLASS_COLOURS = {BETTER: "#C8E6C9", WORSE: "#FFCDD2", SAME: "#E0E0E0", NA: "#FFFFFF"}
CLASS_TEXT = {BETTER: "#1B5E20", WORSE: "#B71C1C", SAME: "#424242", NA: "#757575"}


@dataclass(frozen=True)
class Ratio:
    """value / base, and whether that is better, worse or the same for this metric.

    ``value`` None means the ratio does not exist: the base is zero or missing, or the run
    has no value. It prints as "n/a" and is classed NA (no colour).
    """
    value: float | None
    cls: str

    def text(self, digits: int = 2) -> str:
        return "n/a" if self.value is None else f"{self.value:.{digits}f}"


def ratio(value: float | None, base: float | None, lower_is_better: bool,
          tolerance: float = TOLERANCE) -> Ratio:
    """Ratio of ``value`` to ``base``; red at ≤ 1 - tolerance, green at ≥ 1 + tolerance,
    grey between, the sense inverted where lower is better."""
    if value is None or base is None or base == 0 or value != value or base != base:
        return Ratio(None, NA)
    r = value / base
    lo, hi = 1.0 - tolerance, 1.0 + tolerance
    # Compare with a little slack so 0.95 itself (0.9499999…) counts as a difference.
    eps = 1e-9
    if r >= hi - eps:
        cls = WORSE if lower_is_better else BETTER
    elif r <= lo + eps:
        cls = BETTER if lower_is_better else WORSE
    else:
        cls = SAME
    return Ratio(r, cls)


def fmt_value(v: float | None) -> str:
    """Figures for a table: 3 significant digits for small values, thousands separators."""
    if v is None or v != v:
        return "—"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    return f"{v:.3g}"


@dataclass
class Table:
    """A table ready to print or export: header, rows of cell texts, and a colour class per
    cell (None for plain cells). Built by app.analysis.compare, written by app.store.export."""
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    classes: list[list[str | None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, cells: list[str], classes: list[str | None] | None = None) -> None:
        self.rows.append(cells)
        self.classes.append(classes or [None] * len(cells))


def short_title(title: str) -> str:
    """A metric's title without its chart's word, for legends inside that chart."""
    for prefix in ("Latency ", "CPU ", "Disk ", "Network "):
        if title.startswith(prefix):
            return title[len(prefix):]
    return title
