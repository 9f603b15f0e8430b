"""Session files: SQLite in WAL mode, one row per event, written as events arrive.

Each event is stored exactly once, keyed by (run_id, seq); a resumed stream that repeats
events changes nothing. A file that is not a session, or one from a newer Versus, is
refused with a sentence and never written to.
"""
from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

SCHEMA_VERSION = 1
MAGIC = "versus-session"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    workload TEXT NOT NULL,
    target TEXT NOT NULL,
    host TEXT NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    info TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    t REAL NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""

# Derived from the events, written in the same transaction: the numbers of every ``sample``
# and ``host`` event as plain columns, so a comparison of hours-long runs reads them without
# parsing a JSON body (and its histograms) per second. Numeric fields without a column of
# their own (a workload's extra counters such as TPROC-C's ``tpm``, ``ops`` per type) go to
# ``extra`` as a small flat JSON object. ``series_state.seq`` says up to which event a run's
# rows were derived; anything after it (a file appended to by an older Versus) is derived
# again on reading, so the table is a cache that can never be stale.
SERIES_COLUMNS = {
    "sample": ("rate", "ops", "errors", "lat_ms.all.p50", "lat_ms.all.p95", "lat_ms.all.p99",
               "lat_ms.all.max", "clients", "tpm"),
    "host": ("cpu.user", "cpu.nice", "cpu.system", "cpu.idle", "cpu.iowait", "cpu.irq",
             "cpu.softirq", "cpu.steal", "cs_per_s", "runq", "mem.used_pct",
             "mem.total_kb", "mem.available_kb",
             "disk.reads_per_s", "disk.writes_per_s", "disk.read_kb_per_s",
             "disk.write_kb_per_s", "net.rx_kb_per_s", "net.tx_kb_per_s",
             "driver_cpu.user_s", "driver_cpu.system_s"),
}
_SERIES_ALL = tuple(c for cols in SERIES_COLUMNS.values() for c in cols)
_SERIES_SCHEMA = ("CREATE TABLE IF NOT EXISTS series (run_id TEXT NOT NULL, seq INTEGER NOT NULL, "
                  "kind TEXT NOT NULL, phase TEXT, unit TEXT, t REAL NOT NULL, t0 REAL, t1 REAL, "
                  + ", ".join(f'"{c}" REAL' for c in _SERIES_ALL)
                  + ", extra TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;\n"
                  "CREATE TABLE IF NOT EXISTS series_state (run_id TEXT PRIMARY KEY, "
                  "seq INTEGER NOT NULL);\n"
                  # finds the few hello/phase/summary events of a run without reading
                  # the bodies of its thousands of samples
                  "CREATE INDEX IF NOT EXISTS events_by_kind ON events (run_id, kind);\n")
_SERIES_INSERT = (f"INSERT OR IGNORE INTO series VALUES "
                  f"({', '.join('?' * (8 + len(_SERIES_ALL) + 1))})")
# Parts of an event that are not per-interval numbers, or that have a column of their own.
_NOT_EXTRA = {"v", "seq", "t", "kind", "interval", "phase", "unit", "hist", "lat_ms", "errors",
              "source", "pid"}


class SessionError(Exception):
    """A session file that cannot be used, said as a sentence."""


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def _flatten(prefix: str, obj: Any, out: dict[str, float]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        v = _num(obj)
        if v is not None:
            out[prefix] = v


def series_row(ev: dict[str, Any]) -> tuple | None:
    """The derived ``series`` row of one event (None for kinds without one)."""
    kind = ev.get("kind")
    cols = SERIES_COLUMNS.get(kind)
    if cols is None:
        return None
    flat: dict[str, float] = {}
    for k, v in ev.items():
        if k not in _NOT_EXTRA:
            _flatten(k, v, flat)
    iv = ev.get("interval")
    t0 = t1 = None
    if isinstance(iv, (list, tuple)) and len(iv) == 2:
        t0, t1 = _num(iv[0]), _num(iv[1])
    values = dict.fromkeys(_SERIES_ALL)
    if kind == "sample":
        ops = ev.get("ops")
        if isinstance(ops, dict):
            flat["ops"] = float(sum(v for v in ops.values() if _num(v) is not None))
        errs = ev.get("errors")
        flat["errors"] = float(sum(v for v in errs.values() if _num(v) is not None)
                               if isinstance(errs, dict) else _num(errs) or 0.0)
        lat = (ev.get("lat_ms") or {}).get("all") or {}
        if isinstance(lat, dict):
            for q in ("p50", "p95", "p99", "max"):
                if _num(lat.get(q)) is not None:
                    flat[f"lat_ms.all.{q}"] = float(lat[q])
    for c in cols:
        if c in flat:
            values[c] = flat.pop(c)
    phase = ev.get("phase") if isinstance(ev.get("phase"), str) else None
    unit = ev.get("unit") if isinstance(ev.get("unit"), str) else None
    extra = json.dumps(flat, separators=(",", ":")) if flat else None
    return (kind, phase, unit, float(ev["t"]), t0, t1, *values.values(), extra)


@dataclass
class SeriesTable:
    """One kind's derived numbers for a run, column by column, in event order.

    ``columns`` maps a dotted field name (``rate``, ``cpu.user``, ``tpm``, ``ops.payment``)
    to one float per event, NaN where that event lacks the field.
    """
    kind: str
    t: list[float] = field(default_factory=list)
    t0: list[float | None] = field(default_factory=list)
    t1: list[float | None] = field(default_factory=list)
    phase: list[str | None] = field(default_factory=list)
    unit: list[str | None] = field(default_factory=list)
    columns: dict[str, list[float]] = field(default_factory=dict)
    extras: list[tuple[int, str]] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.t)

    def column(self, name: str) -> list[float] | None:
        """One column by name; fields without a column of their own (``extra``) are parsed
        on the first request for any of them."""
        if name not in self.columns and self.extras:
            self._parse_extras()
        return self.columns.get(name)

    def names(self) -> list[str]:
        if self.extras:
            self._parse_extras()
        return list(self.columns)

    def _parse_extras(self) -> None:
        n, nan = len(self.t), float("nan")
        for i, text in self.extras:
            for k, v in json.loads(text).items():
                col = self.columns.get(k)
                if col is None:
                    col = self.columns[k] = [nan] * n
                col[i] = v
        self.extras = []


@dataclass
class RunRecord:
    id: str
    workload: str
    target: str
    host: str
    params: dict[str, Any]
    created: float
    status: str
    reason: str = ""
    events: int = 0
    last_seq: int = 0
    info: dict[str, Any] = field(default_factory=dict)


class SessionFile:
    def __init__(self, path: str | Path, readonly: bool = True):
        self.path = Path(path)
        self.readonly = readonly
        if readonly and not self.path.exists():
            raise SessionError(f"{self.path} does not exist")
        try:
            if readonly:
                self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                          check_same_thread=False)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(self.path, check_same_thread=False)
            self._check_and_init()
        except sqlite3.DatabaseError as exc:
            raise SessionError(
                f"{self.path} is not a Versus session file or it is damaged ({exc}); "
                f"it was left unchanged") from None

    def _check_and_init(self) -> None:
        db = self.db
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" in tables:
            meta = dict(db.execute("SELECT key, value FROM meta"))
            if meta.get("format") != MAGIC:
                raise SessionError(f"{self.path} is an SQLite file but not a Versus session; "
                                   f"it was left unchanged")
            version = int(meta.get("schema_version", "0"))
            if version > SCHEMA_VERSION:
                raise SessionError(
                    f"{self.path} was written by a newer Versus (session format {version}, this "
                    f"one reads up to {SCHEMA_VERSION}); update Versus to open it")
        elif tables:
            raise SessionError(f"{self.path} is an SQLite file but not a Versus session; "
                               f"it was left unchanged")
        elif self.readonly:
            raise SessionError(f"{self.path} is empty, not a Versus session")
        if not self.readonly:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            db.executescript(_SERIES_SCHEMA)
            db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (MAGIC,))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                       (str(SCHEMA_VERSION),))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (str(time.time()),))
            db.commit()
            self._backfill_series()

    def _backfill_series(self) -> None:
        """Derive the series rows a file lacks (written before the table existed)."""
        behind = self.db.execute(
            "SELECT r.id, COALESCE(s.seq, 0) FROM runs r LEFT JOIN series_state s "
            "ON s.run_id = r.id WHERE COALESCE(s.seq, 0) < "
            "(SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.run_id = r.id)").fetchall()
        for run_id, seq in behind:
            cur = self.db.execute("SELECT body FROM events WHERE run_id = ? AND seq > ? AND "
                                  "kind IN ('sample', 'host') ORDER BY seq", (run_id, seq))
            self._write_series(run_id, (json.loads(b) for (b,) in cur))
            self._mark_series(run_id)
        if behind:
            self.db.commit()

    def _write_series(self, run_id: str, evs: Iterable[dict[str, Any]]) -> None:
        rows = []
        for e in evs:
            row = series_row(e)
            if row is not None:
                rows.append((run_id, e["seq"], *row))
        if rows:
            self.db.executemany(_SERIES_INSERT, rows)

    def _mark_series(self, run_id: str) -> None:
        self.db.execute("INSERT INTO series_state VALUES (?, (SELECT COALESCE(MAX(seq), 0) "
                        "FROM events WHERE run_id = ?)) ON CONFLICT (run_id) DO UPDATE SET "
                        "seq = excluded.seq", (run_id, run_id))

    # --- writing ------------------------------------------------------------------------
    def add_run(self, run_id: str, workload: str, target: str, host: str,
                params: dict[str, Any], info: dict[str, Any] | None = None) -> None:
        self.db.execute("INSERT OR IGNORE INTO runs (id, created, workload, target, host, params,"
                        " status, info) VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
                        (run_id, time.time(), workload, target, host, json.dumps(params),
                         json.dumps(info or {})))
        self.db.commit()

    def append_events(self, run_id: str, evs: Iterable[dict[str, Any]]) -> int:
        """Store events once each; returns how many were new."""
        evs = list(evs)
        rows = [(run_id, e["seq"], float(e["t"]), e["kind"],
                 json.dumps(e, separators=(",", ":"))) for e in evs]
        if not rows:
            return 0
        before = self.db.total_changes
        self.db.executemany("INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?)", rows)
        added = self.db.total_changes - before
        if added:
            self._write_series(run_id, evs)
            self._mark_series(run_id)
        self.db.commit()
        return added

    def finish_run(self, run_id: str, status: str, reason: str = "") -> None:
        self.db.execute("UPDATE runs SET status = ?, reason = ? WHERE id = ?",
                        (status, reason, run_id))
        self.db.commit()

    def update_info(self, run_id: str, **info: Any) -> None:
        cur = self.db.execute("SELECT info FROM runs WHERE id = ?", (run_id,)).fetchone()
        merged = {**json.loads(cur[0] if cur else "{}"), **info}
        self.db.execute("UPDATE runs SET info = ? WHERE id = ?", (json.dumps(merged), run_id))
        self.db.commit()

    # --- reading ------------------------------------------------------------------------
    def runs(self) -> list[RunRecord]:
        try:
            rows = self.db.execute(
                "SELECT r.id, r.workload, r.target, r.host, r.params, r.created, r.status, "
                "r.reason, r.info, COUNT(e.seq), COALESCE(MAX(e.seq), 0) FROM runs r "
                "LEFT JOIN events e ON e.run_id = r.id GROUP BY r.id ORDER BY r.created").fetchall()
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None
        return [RunRecord(id=r[0], workload=r[1], target=r[2], host=r[3],
                          params=json.loads(r[4]), created=r[5], status=r[6], reason=r[7],
                          info=json.loads(r[8] or "{}"), events=r[9], last_seq=r[10])
                for r in rows]

    def run(self, run_id: str) -> RunRecord:
        for r in self.runs():
            if r.id == run_id:
                return r
        raise SessionError(f"{self.path} has no run {run_id!r}")

    def events(self, run_id: str, kinds: Iterable[str] | None = None) -> list[dict[str, Any]]:
        sql = "SELECT body FROM events WHERE run_id = ?"
        args: list[Any] = [run_id]
        if kinds:
            kinds = list(kinds)
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += kinds
        try:
            return [json.loads(b) for (b,) in self.db.execute(sql + " ORDER BY seq", args)]
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None

    def series(self, run_id: str, kind: str) -> SeriesTable:
        """The numbers of a run's ``sample`` or ``host`` events as columns (see SeriesTable).

        Reads the derived table; events it does not cover yet are parsed from their JSON.
        """
        if kind not in SERIES_COLUMNS:
            raise ValueError(f"no series for {kind!r} events")
        cols = SERIES_COLUMNS[kind]
        out = SeriesTable(kind)
        nan = float("nan")
        extras = out.extras
        covered = 0
        try:
            tables = {r[0] for r in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            if "series" in tables and "series_state" in tables:
                row = self.db.execute("SELECT seq FROM series_state WHERE run_id = ?",
                                      (run_id,)).fetchone()
                covered = int(row[0]) if row else 0
            if covered:
                sql = ("SELECT phase, unit, t, t0, t1, "
                       + ", ".join(f'"{c}"' for c in cols)
                       + " , extra FROM series WHERE run_id = ? AND kind = ? AND seq <= ? "
                         "ORDER BY seq")
                rows = self.db.execute(sql, (run_id, kind, covered)).fetchall()
            else:
                rows = []
            for i, r in enumerate(rows):
                if r[-1] is not None:
                    extras.append((i, r[-1]))
            if rows:
                tr = list(zip(*rows))
                out.phase, out.unit = list(tr[0]), list(tr[1])
                out.t, out.t0, out.t1 = list(tr[2]), list(tr[3]), list(tr[4])
                for j, c in enumerate(cols):
                    col = tr[5 + j]
                    out.columns[c] = ([nan if x is None else x for x in col] if None in col
                                      else list(col))
            else:
                for c in cols:
                    out.columns[c] = []
            # anything the derived table does not cover yet
            tail = self.db.execute("SELECT body FROM events WHERE run_id = ? AND seq > ? AND "
                                   "kind = ? ORDER BY seq", (run_id, covered, kind)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None
        n = len(out.t)
        for (body,) in tail:
            r = series_row(json.loads(body))
            out.phase.append(r[1]); out.unit.append(r[2])
            out.t.append(r[3]); out.t0.append(r[4]); out.t1.append(r[5])
            vals = dict(zip(_SERIES_ALL, r[6:-1]))
            for c in cols:
                v = vals[c]
                out.columns[c].append(nan if v is None else v)
            if r[-1] is not None:
                extras.append((n, r[-1]))
            n += 1
        return out

    def last_seq(self, run_id: str) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?",
                              (run_id,)).fetchone()
        return int(row[0])

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "SessionFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
