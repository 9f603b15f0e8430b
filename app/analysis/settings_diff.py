"""Differences in the effective server settings of runs (from each run's `setting` event with
the server's own report: pg_settings, SHOW GLOBAL VARIABLES).

Settings that name the instance rather than configure it (port, data directory, socket, pid
file, …) differ between any two managed runs and are left out unless asked for.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

# per-instance identity and per-connection noise, not configuration
INSTANCE_SETTINGS = frozenset({
    # PostgreSQL
    "port", "data_directory", "config_file", "hba_file", "ident_file",
    "unix_socket_directories", "external_pid_file",
    # MySQL / MariaDB
    "socket", "pid_file", "datadir", "log_error", "general_log_file", "slow_query_log_file",
    "hostname", "server_uuid", "tmpdir", "pseudo_thread_id", "timestamp", "rand_seed1",
    "rand_seed2", "log_bin_basename", "log_bin_index", "relay_log_basename", "relay_log_index",
    "innodb_data_home_dir", "innodb_log_group_home_dir", "gtid_executed", "gtid_purged",
    "last_insert_id", "insert_id", "identity", "error_count", "warning_count",
    "innodb_buffer_pool_filename", "secure_file_priv", "wsrep_node_name", "server_uid",
    "report_port", "aria_log_dir_path", "wsrep_data_home_dir", "basedir", "plugin_dir",
    "log_basename", "relay_log", "general_log_file", "ssl_capath",
    # follow tmpdir, which a managed instance keeps in its own work folder
    "slave_load_tmpdir", "replica_load_tmpdir", "innodb_temp_tablespaces_dir",
})
_PG_SIZE_UNITS = {"B": 1, "kB": 1024, "8kB": 8192, "16kB": 16384, "MB": 1 << 20}


@dataclass
class SettingsReport:
    """One run's effective settings: name -> value text (with its unit), and where each
    value came from when the server says so."""
    source: str
    values: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)


@dataclass
class SettingDiff:
    name: str
    values: dict[str, str | None]          # run label -> value (None: the server lacks it)
    origins: dict[str, str | None]


def _size(n: int) -> str:
    for unit, mult in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1024)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{unit}"
    return f"{n}B"


def pg_value(setting: Any, unit: Any) -> str:
    """pg_settings' (setting, unit) as one value a user writes: ('771328', '8kB') -> '6026MB'."""
    s = "" if setting is None else str(setting)
    if unit in _PG_SIZE_UNITS and s.lstrip("-").isdigit() and int(s) >= 0:
        return _size(int(s) * _PG_SIZE_UNITS[unit])
    if unit and s.lstrip("-").isdigit() and s != "-1":
        return f"{s}{unit}"
    return s


def report_from_events(events: Iterable[dict]) -> SettingsReport | None:
    """The settings report in a run's events, or None when the run has none (older runs)."""
    for e in events:
        if e.get("kind") != "setting" or not isinstance(e.get("settings"), dict):
            continue
        rep = SettingsReport(str(e.get("source", "")))
        for name, rec in e["settings"].items():
            if not isinstance(rec, dict):
                rep.values[name] = str(rec)
                continue
            rep.values[name] = (pg_value(rec.get("setting"), rec.get("unit"))
                                if rep.source == "pg_settings" else str(rec.get("setting", "")))
            if rec.get("source") is not None:
                rep.origins[name] = str(rec["source"])
        return rep
    return None


def session_reports(session, run_ids: Iterable[str]) -> dict[str, SettingsReport | None]:
    return {rid: report_from_events(session.events(rid, kinds=["setting"])) for rid in run_ids}


def diff_settings(reports: dict[str, SettingsReport | None], include_instance: bool = False,
                  include_missing: bool = True) -> list[SettingDiff]:
    """Settings whose values are not the same in every report, sorted by name. Reports that
    are None (no settings recorded) are ignored."""
    have = {k: r for k, r in reports.items() if r is not None}
    if len(have) < 2:
        return []
    names = sorted(set().union(*(r.values for r in have.values())))
    out = []
    for name in names:
        if not include_instance and name.lower() in INSTANCE_SETTINGS:
            continue
        vals = {k: r.values.get(name) for k, r in have.items()}
        present = {v for v in vals.values() if v is not None}
        if None in vals.values() and not include_missing:
            continue
        if len(set(vals.values())) > 1 and (present or include_missing):
            out.append(SettingDiff(name, vals, {k: r.origins.get(name) for k, r in have.items()}))
    return out


def format_diff(diffs: list[SettingDiff], labels: dict[str, str] | None = None) -> str:
    """A plain-text table: one line per setting, one column per run."""
    if not diffs:
        return "no differences in the effective settings"
    keys = list(diffs[0].values)
    labels = labels or {k: k for k in keys}
    w0 = max(len("setting"), *(len(d.name) for d in diffs))
    widths = [max(len(labels[k]), *(len(str(d.values[k])) for d in diffs)) for k in keys]
    head = "setting".ljust(w0) + "  " + "  ".join(labels[k].ljust(w) for k, w in zip(keys, widths))
    lines = [head, "-" * len(head)]
    for d in diffs:
        lines.append(d.name.ljust(w0) + "  " + "  ".join(
            ("-" if d.values[k] is None else str(d.values[k])).ljust(w)
            for k, w in zip(keys, widths)))
    return "\n".join(lines)
