"""The server's own counters, read once per interval on a separate monitoring connection.

PostgreSQL, in one statement: pg_stat_database for the target database (names as the
view's columns), pg_stat_bgwriter (``bgwriter.*``), pg_stat_checkpointer (17+,
``checkpointer.*``), pg_stat_wal (14+, ``wal.*``), pg_stat_io (16+, summed per backend type:
``io.<backend type>.<reads|writes|extends|hits|evictions|fsyncs>``); gauges: ``numbackends``
and the wait events of the other active sessions in pg_stat_activity
(``wait.<type>.<event>``, ``wait.none`` for active sessions not waiting on an event).

MySQL/MariaDB: SHOW GLOBAL STATUS (Com_*, Questions, Handler_*, Select_*, Sort_*,
Created_tmp_*, Bytes_*, Innodb_*; gauges Threads_running, Threads_connected and the InnoDB
ones that are levels, not counts) minus the monitoring connection's own SHOW SESSION STATUS
for the session-scoped ones, so the monitor's polls are not in the counts; and
information_schema.INNODB_METRICS where enabled (``innodb_metrics.<name>``; its
status_counter rows repeat SHOW STATUS and are left out).

On PostgreSQL every statement of the monitoring connection (the polls, and whatever else uses
it, such as finding the server's processes) is a transaction in the target database, counted
in xact_commit like the workload's: ``own_at_read`` counts them, to be subtracted. A
backend reports its transactions at most once a second, so a read can miss the monitor's last
ones; ``mark`` (a phase's edges) has them reported first (PostgreSQL 15+), which makes the
count over a phase exact.
"""
from __future__ import annotations

from ..sql.db import FLUSH_STATS, SqlSession, TargetInfo

# the counters a poll always reports, even when they did not move (server.tps needs both)
PG_TXN = ("xact_commit", "xact_rollback")
MYSQL_TXN = ("Com_commit", "Com_rollback")
_PG_SKIP = {"datid", "datname", "stats_reset", "checksum_failures", "checksum_last_failure",
            "numbackends"}
_IO_OPS = ("reads", "writes", "extends", "hits", "evictions", "fsyncs")
_MY_PREFIXES = ("Com_", "Handler_", "Select_", "Sort_", "Created_tmp_", "Bytes_", "Innodb_")
_MY_NAMES = {"Questions", "Slow_queries", "Rows_read", "Rows_sent"}
# session-scoped status variables: the monitor's own share is subtracted from the global
_MY_SESSION = ("Com_", "Handler_", "Select_", "Sort_", "Created_tmp_", "Bytes_", "Questions",
               "Slow_queries", "Rows_read", "Rows_sent")
_MY_GAUGES = {"Threads_running", "Threads_connected", "Innodb_buffer_pool_pages_data",
              "Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_free",
              "Innodb_buffer_pool_pages_misc", "Innodb_buffer_pool_pages_total",
              "Innodb_buffer_pool_pages_old", "Innodb_buffer_pool_bytes_data",
              "Innodb_buffer_pool_bytes_dirty", "Innodb_row_lock_current_waits",
              "Innodb_history_list_length", "Innodb_checkpoint_age", "Innodb_lsn_current",
              "Innodb_lsn_flushed", "Innodb_lsn_last_checkpoint", "Innodb_max_trx_id",
              "Innodb_page_size", "Innodb_buffer_pool_load_status", "Innodb_num_open_files",
              "Innodb_mem_adaptive_hash", "Innodb_mem_dictionary", "Innodb_row_lock_time_max",
              "Innodb_row_lock_time_avg", "Innodb_buffer_pool_resize_status",
              "Innodb_buffer_pool_dump_status", "Innodb_undo_truncations"}


def _number(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() else f


class ServerCounters:
    """Reads the server's cumulative counters (``read``) and its gauges (``gauges`` after
    each read) on a monitoring connection of its own."""

    def __init__(self, target: TargetInfo):
        self.session = SqlSession(target)
        self.dialect = target.dialect
        self.source = "pg_stat_database" if self.dialect == "postgres" else "SHOW GLOBAL STATUS"
        self.gauges: dict[str, float] = {}
        self.sources: list[str] = []
        self.absent: list[str] = []
        self.own_at_read = 0    # the monitor's own statements that ended before the last read
        self.can_flush = False
        if self.dialect == "postgres":
            conn = self.session.conn
            # one statement, one transaction: psycopg would prepare a statement run five
            # times, in a transaction of its own that nothing here would count
            conn.prepare_threshold = None
            self.can_flush = conn.info.server_version >= 150000
            self._sql = self._pg_query()
        else:
            self._metrics_sql = self._mysql_metrics_query()
            self._mariadb = "mariadb" in str(self.session.scalar("SELECT @@version")).lower()
            self._shown: dict[str, int] = {}
        self.read()             # warm the connection's caches before any counted poll
        if self.can_flush:      # and report what warming them did now, not in a later poll
            try:
                self.session.execute(FLUSH_STATS)
            except Exception:   # not allowed here: reads at a phase's edges settle instead
                self.can_flush = False

    # --- PostgreSQL ---------------------------------------------------------------------
    def _pg_has(self, view: str) -> bool:
        return bool(self.session.scalar("SELECT to_regclass(%s) IS NOT NULL",
                                        (f"pg_catalog.{view}",)))

    def _pg_query(self) -> str:
        parts = ["'db', (SELECT row_to_json(d) FROM pg_stat_database d "
                 "WHERE datname = current_database())",
                 "'waits', (SELECT json_object_agg(k, n) FROM (SELECT coalesce(wait_event_type "
                 "|| '.' || wait_event, 'none') k, count(*) n FROM pg_stat_activity "
                 "WHERE state = 'active' AND pid <> pg_backend_pid() GROUP BY 1) w)"]
        self.sources = ["pg_stat_database", "pg_stat_activity (wait events)"]
        for view, key in (("pg_stat_bgwriter", "bgwriter"), ("pg_stat_checkpointer",
                                                              "checkpointer"),
                          ("pg_stat_wal", "wal")):
            if self._pg_has(view):
                parts.append(f"'{key}', (SELECT row_to_json(v) FROM {view} v)")
                self.sources.append(view)
            else:
                self.absent.append(view)
        if self._pg_has("pg_stat_io"):
            sums = ", ".join(f"sum(coalesce({op}, 0))::bigint AS {op}" for op in _IO_OPS)
            parts.append("'io', (SELECT json_object_agg(backend_type, row_to_json(x)) FROM "
                         f"(SELECT backend_type, {sums} FROM pg_stat_io "
                         "GROUP BY backend_type) x)")
            self.sources.append("pg_stat_io")
        else:
            self.absent.append("pg_stat_io")
        return f"SELECT json_build_object({', '.join(parts)})"

    def _read_pg(self) -> dict[str, float]:
        doc = self.session.scalar(self._sql) or {}
        out: dict[str, float] = {}
        for k, v in (doc.get("db") or {}).items():
            n = _number(v)
            if n is not None and k not in _PG_SKIP:
                out[k] = n
        for key in ("bgwriter", "checkpointer", "wal"):
            for k, v in (doc.get(key) or {}).items():
                n = _number(v)
                if n is not None and k != "stats_reset":
                    out[f"{key}.{k}"] = n
        for btype, ops in (doc.get("io") or {}).items():
            for op in _IO_OPS:
                n = _number((ops or {}).get(op))
                if n is not None:
                    out[f"io.{btype.replace(' ', '_')}.{op}"] = n
        gauges = {f"wait.{k}": n for k, n in (doc.get("waits") or {}).items()}
        nb = _number((doc.get("db") or {}).get("numbackends"))
        if nb is not None:
            gauges["numbackends"] = nb
        self.gauges = gauges
        return out

    # --- MySQL / MariaDB ----------------------------------------------------------------
    def _mysql_metrics_query(self) -> str | None:
        try:
            cols = {str(r[0]).upper() for r in self.session.execute(
                "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
                "'information_schema' AND TABLE_NAME = 'INNODB_METRICS'")}
        except Exception:
            cols = set()
        self.sources = ["SHOW GLOBAL STATUS"]
        if "ENABLED" in cols:
            where = "ENABLED = 1"
        elif "STATUS" in cols:
            where = "STATUS = 'enabled'"
        else:
            self.absent.append("information_schema.INNODB_METRICS")
            return None
        sql = (f"SELECT NAME, COUNT, TYPE FROM information_schema.INNODB_METRICS "
               f"WHERE {where} AND TYPE <> 'status_counter'")
        try:
            self.session.execute(sql)
        except Exception as exc:       # e.g. a user without the PROCESS privilege
            reason = str(exc).split("\n")[0].strip()
            self.absent.append(f"information_schema.INNODB_METRICS unreadable: {reason}")
            return None
        self.sources.append("information_schema.INNODB_METRICS")
        return sql

    def _read_mysql(self) -> dict[str, float]:
        glob = self.session.execute("SHOW GLOBAL STATUS")
        metrics = self.session.execute(self._metrics_sql) if self._metrics_sql else []
        own = dict(self.session.execute("SHOW SESSION STATUS"))
        out: dict[str, float] = {}
        gauges: dict[str, float] = {}
        for name, value in glob:
            name = str(name)
            n = _number(value)
            if n is None:
                continue
            if name in _MY_GAUGES or "_pending" in name or "_current" in name:
                gauges[name] = n
            elif name.startswith(_MY_PREFIXES) or name in _MY_NAMES:
                if name.startswith(_MY_SESSION):
                    n -= (_number(own.get(name)) or 0) + self._shown.get(name, 0)
                out[name] = n
        if self._mariadb:
            # MariaDB counts the temporary table that each SHOW ... STATUS fills in the
            # global status only, never in the session's: one table, one scan, a row written,
            # read and sent per status variable. Left out from the next poll on.
            rows, shows = len(glob) + len(own), 2
            for name, n in (("Created_tmp_tables", shows), ("Select_scan", shows),
                            ("Handler_tmp_write", rows), ("Handler_read_rnd_next", rows + shows),
                            ("Rows_sent", rows)):
                self._shown[name] = self._shown.get(name, 0) + n
        for name, count, typ in metrics:
            n = _number(count)
            if n is None:
                continue
            if typ == "value":
                gauges[f"innodb_metrics.{name}"] = n
            else:
                out[f"innodb_metrics.{name}"] = n
        self.gauges = gauges
        return out

    # --- both ---------------------------------------------------------------------------
    def read(self) -> dict[str, float]:
        """Cumulative counters by name (gauges of the same moment in ``self.gauges``);
        ``own_at_read``: the monitoring connection's statements before this read (on
        PostgreSQL, each a transaction in the target database)."""
        self.own_at_read = self.session.statements
        return self._read_pg() if self.dialect == "postgres" else self._read_mysql()

    def mark(self) -> dict[str, float]:
        """A read for a phase's edge. On PostgreSQL 15+ the monitor reports its own
        statistics first, so that the read holds all of its ``own_at_read`` transactions and
        none of them is left to be reported later: between two marks the monitor's share of
        xact_commit is exactly the difference of their ``own_at_read``."""
        if self.can_flush:
            self.session.execute(FLUSH_STATS)
        return self.read()

    def describe(self) -> str:
        text = ", ".join(self.sources)
        missing = [a for a in self.absent if " " not in a]
        if missing:
            text += f" ({', '.join(missing)}: not in this server)"
        unread = [a for a in self.absent if " " in a]
        if unread:
            text += f"; {'; '.join(unread)}"
        return text

    def close(self) -> None:
        self.session.close()


def delta(cur: dict[str, float], prev: dict[str, float]) -> dict[str, float]:
    return {k: cur[k] - prev.get(k, 0) for k in cur}


def interval_counters(cur: dict[str, float], prev: dict[str, float], dialect: str
                      ) -> dict[str, float]:
    """The moved counters of one interval, plus the transaction counters always."""
    keep = PG_TXN if dialect == "postgres" else MYSQL_TXN
    out = {}
    for k, v in cur.items():
        d = v - prev.get(k, 0)
        if d or k in keep:
            out[k] = round(d, 3) if isinstance(d, float) else d
    return out
