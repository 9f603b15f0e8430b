"""Session files: SQLite in WAL mode, one row per event, written as events arrive.

Each event is stored exactly once, keyed by (run_id, seq); a resumed stream that repeats
events changes nothing. A file that is not a session, or one from a newer Versus, is
refused with a sentence and never written to. A damaged row (not JSON, wrong types, an
unknown kind) is skipped and named by damaged(); the rest of the file reads as usual. A full
disk rolls back the write at hand and raises SessionFull; what was committed stays.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from bisect import bisect_right
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from app.model import derive
from workloads import events as ev_format

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

# Derived from the events, written in the same transaction: the numbers of every ``sample``,
# ``host``, ``db`` and ``progress`` event as app.model.derive names them, so a comparison of
# hours-long runs reads them without parsing a JSON body (and its histograms) per second.
# The common names have columns; the rest (``ops.<type>``, ``counter.<name>``, ``db.<name>``
# …) go to ``extra`` as a small flat JSON object. ``derived_state.seq`` says up to which event
# a run's rows were derived, and the meta key ``derive_version`` which derivation wrote them:
# anything newer is derived again on reading, so the table is a cache that can never be stale.
DERIVE_VERSION = "4"
SERIES_COLUMNS = {
    "sample": ("throughput", "ops", "errors", "latency.p50", "latency.p95", "latency.p99",
               "latency.max", "clients"),
    "host": ("cpu.user", "cpu.nice", "cpu.system", "cpu.idle", "cpu.iowait", "cpu.irq",
             "cpu.softirq", "cpu.steal", "cs", "runq", "mem.used_pct", "mem.total_kb",
             "mem.available_kb", "disk.reads", "disk.writes", "disk.read_kb",
             "disk.write_kb", "net.rx_kb", "net.tx_kb", "driver.cpu"),
    "db": ("server.tps", "server.tpm"),
    "progress": ("load.done", "load.fraction"),
}
_SERIES_ALL = tuple(dict.fromkeys(c for cols in SERIES_COLUMNS.values() for c in cols))
_SERIES_SCHEMA = ("CREATE TABLE IF NOT EXISTS derived (run_id TEXT NOT NULL, "
                  "seq INTEGER NOT NULL, kind TEXT NOT NULL, phase TEXT, unit TEXT, "
                  "t REAL NOT NULL, t0 REAL, t1 REAL, "
                  + ", ".join(f'"{c}" REAL' for c in _SERIES_ALL)
                  + ", extra TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;\n"
                  "CREATE TABLE IF NOT EXISTS derived_state (run_id TEXT PRIMARY KEY, "
                  "seq INTEGER NOT NULL);\n"
                  # finds the few hello/phase/summary events of a run without reading
                  # the bodies of its thousands of samples
                  "CREATE INDEX IF NOT EXISTS events_by_kind ON events (run_id, kind);\n")
_SERIES_INSERT = (f"INSERT OR IGNORE INTO derived VALUES "
                  f"({', '.join('?' * (8 + len(_SERIES_ALL) + 1))})")


class SessionError(Exception):
    """A session file that cannot be used, said as a sentence."""


class SessionFull(SessionError):
    """The disk holding a session file is full: what was being written is not in the file
    (its transaction was rolled back); everything written before is."""


def _is_full(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", None) == getattr(sqlite3, "SQLITE_FULL", 13)
            or "disk is full" in str(exc))


_KIND_LIST = ", ".join(f"'{k}'" for k in SERIES_COLUMNS)


def _short(value: Any, most: int = 40) -> str:
    """A stored value for a sentence: a damaged row's is garbage, possibly a long one."""
    s = str(value)
    return s if len(s) <= most else f"{s[:most]}… ({len(s):,} characters)"


def _damage(text: Any, seq: Any, kind: Any) -> tuple[dict[str, Any] | None, str]:
    """One stored event row, decoded, or None and what is wrong with it in words."""
    if not isinstance(text, str):
        return None, "its body is not text"
    try:
        ev = json.loads(text)
    except ValueError:
        return None, "its body is not JSON"
    what = ev_format.problem(ev)
    if what is None and (ev["seq"] != seq or ev["kind"] != kind):
        what = f"its body is event {ev['seq']} ({ev['kind'][:40]}), not its row's"
    return (None, what) if what else (ev, "")


def series_row(ev: dict[str, Any]) -> tuple | None:
    """The derived row of one event (None for kinds without one): kind, phase, unit, t,
    interval start and end, the column values, and the other values as JSON."""
    kind = ev.get("kind")
    cols = SERIES_COLUMNS.get(kind)
    if cols is None:
        return None
    values = derive.interval_values(ev)
    t0, t1 = derive.interval(ev)
    row = [values.pop(c, None) if c in cols else None for c in _SERIES_ALL]
    phase = ev.get("phase") if isinstance(ev.get("phase"), str) else None
    unit = ev.get("unit") if isinstance(ev.get("unit"), str) else None
    extra = json.dumps(values, separators=(",", ":")) if values else None
    return (kind, phase, unit, float(ev["t"]), t0, t1, *row, extra)


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

    def overlaps(self, a: float, b: float) -> tuple[list[int], list[float]]:
        """The rows whose interval overlaps [a, b], and the seconds of each overlap (rows are
        in time order and about 1 s long)."""
        idx: list[int] = []
        w: list[float] = []
        if b <= a or not self.t:
            return idx, w
        for i in range(max(0, bisect_right(self.t, a) - 2), len(self.t1)):
            t0, t1 = self.t0[i], self.t1[i]
            if t0 is None or t1 is None or t1 <= t0:
                continue
            if t0 >= b:
                break
            ov = min(t1, b) - max(t0, a)
            if ov > 0:
                idx.append(i)
                w.append(ov)
        return idx, w

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
        # damaged rows met while reading: (run id, seq or 0 for the run's row, what) -> the
        # words (see damaged())
        self._damaged: dict[tuple[str, int, str], str] = {}
        if readonly and not self.path.exists():
            raise SessionError(f"{self.path} does not exist")
        created = not self.path.exists()
        try:
            if readonly:
                self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                          check_same_thread=False)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # readable by its owner only (a run's parameters, hosts and errors); SQLite
                # gives its -wal and -shm files the same mode
                try:
                    os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
                except OSError as exc:
                    raise SessionError(f"cannot write {self.path}: "
                                       f"{exc.strerror or exc}") from None
                self.db = sqlite3.connect(self.path, check_same_thread=False)
            self._check_and_init()
        except sqlite3.DatabaseError as exc:
            if _is_full(exc):
                if created:                 # no half-made file for the next try to refuse
                    if hasattr(self, "db"):
                        self.db.close()
                    for suffix in ("", "-wal", "-shm", "-journal"):
                        Path(f"{self.path}{suffix}").unlink(missing_ok=True)
                raise SessionFull(f"the disk holding {self.path} is full; free space there "
                                  f"and try again") from None
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
        """Derive the rows a file lacks: written before the table existed, by an older
        derivation (all rows derived again), or by a Versus that did not derive them."""
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        if meta.get("derive_version") != DERIVE_VERSION:
            for table in ("derived", "derived_state", "series", "series_state"):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")   # "series": the first one's
            self.db.executescript(_SERIES_SCHEMA)
            self.db.execute("INSERT INTO meta VALUES ('derive_version', ?) ON CONFLICT (key) "
                            "DO UPDATE SET value = excluded.value", (DERIVE_VERSION,))
        behind = self.db.execute(
            "SELECT r.id, COALESCE(s.seq, 0) FROM runs r LEFT JOIN derived_state s "
            "ON s.run_id = r.id WHERE COALESCE(s.seq, 0) < "
            "(SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.run_id = r.id)").fetchall()
        for run_id, seq in behind:
            cur = self.db.execute("SELECT seq, kind, body FROM events WHERE run_id = ? AND "
                                  f"seq > ? AND kind IN ({_KIND_LIST}) ORDER BY seq",
                                  (run_id, seq))
            self._write_series(run_id, self._checked(run_id, cur))
            self._mark_series(run_id)
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
        self.db.execute("INSERT INTO derived_state VALUES (?, (SELECT COALESCE(MAX(seq), 0) "
                        "FROM events WHERE run_id = ?)) ON CONFLICT (run_id) DO UPDATE SET "
                        "seq = excluded.seq", (run_id, run_id))

    # --- writing ------------------------------------------------------------------------
    @contextmanager
    def _writing(self):
        """One write transaction; a full disk rolls it back and raises SessionFull."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if not _is_full(exc):
                raise
            try:
                self.db.rollback()
            except sqlite3.Error:
                pass
            raise SessionFull(f"the disk holding {self.path} is full") from None

    def add_run(self, run_id: str, workload: str, target: str, host: str,
                params: dict[str, Any], info: dict[str, Any] | None = None) -> None:
        with self._writing():
            self.db.execute("INSERT OR IGNORE INTO runs (id, created, workload, target, host, "
                            "params, status, info) VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
                            (run_id, time.time(), workload, target, host, json.dumps(params),
                             json.dumps(info or {})))
            self.db.commit()

    def append_events(self, run_id: str, evs: Iterable[dict[str, Any]]) -> int:
        """Store events once each; returns how many were new."""
        with self._writing():
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
        with self._writing():
            self.db.execute("UPDATE runs SET status = ?, reason = ? WHERE id = ?",
                            (status, reason, run_id))
            self.db.commit()

    def update_info(self, run_id: str, **info: Any) -> None:
        with self._writing():
            cur = self.db.execute("SELECT info FROM runs WHERE id = ?", (run_id,)).fetchone()
            merged = {**json.loads(cur[0] if cur else "{}"), **info}
            self.db.execute("UPDATE runs SET info = ? WHERE id = ?",
                            (json.dumps(merged), run_id))
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
        return [RunRecord(id=str(r[0]), workload=str(r[1]), target=str(r[2]), host=str(r[3]),
                          params=self._run_json(r[0], r[4], "parameters"),
                          created=r[5] if isinstance(r[5], (int, float)) else 0.0,
                          status=str(r[6]), reason=str(r[7] or ""),
                          info=self._run_json(r[0], r[8] or "{}", "run facts"),
                          events=r[9], last_seq=r[10])
                for r in rows]

    def _run_json(self, run_id: str, text: Any, what: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            value = None
        if isinstance(value, dict):
            return value
        self._damaged[(str(run_id), 0, what)] = f"its stored {what} are damaged and were left out"
        return {}

    def _checked(self, run_id: str, rows: Iterable[tuple]) -> Iterable[dict[str, Any]]:
        """The sound events of (seq, kind, body) rows; each damaged one is noted, once."""
        for seq, kind, body in rows:
            ev, what = _damage(body, seq, kind)
            if ev is None:
                self._damaged.setdefault((run_id, seq if isinstance(seq, int) else -1, ""),
                                         f"event {_short(seq)} ({_short(kind)}) was skipped: "
                                         f"{what}")
            else:
                yield ev

    def check(self, run_id: str) -> list[str]:
        """Look at every row of a run that readers of some kinds never touch (an unknown
        kind, a body that is not a JSON object) without parsing the sound ones; returns
        damaged() of the run."""
        kinds = sorted(ev_format.KINDS)
        try:
            rows = self.db.execute(
                "SELECT seq, kind, body FROM events WHERE run_id = ? AND (typeof(body) != "
                f"'text' OR kind NOT IN ({','.join('?' * len(kinds))}) OR NOT json_valid(body)"
                " OR json_type(body) != 'object') ORDER BY seq", (run_id, *kinds)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None
        for _ in self._checked(run_id, rows):
            pass
        return self.damaged(run_id)

    def damaged(self, run_id: str | None = None) -> list[str]:
        """One sentence per damaged row met so far (of one run, or all): which run, which
        event, what is wrong. Every other row reads as usual."""
        return [f"{self.path.name}: run {_short(rid)}, {what}" if seq else
                f"{self.path.name}: run {_short(rid)}: {what}"
                for (rid, seq, _), what in sorted(self._damaged.items(), key=lambda kv: kv[0])
                if run_id is None or rid == run_id]

    def run(self, run_id: str) -> RunRecord:
        for r in self.runs():
            if r.id == run_id:
                return r
        raise SessionError(f"{self.path} has no run {run_id!r}")

    def events(self, run_id: str, kinds: Iterable[str] | None = None) -> list[dict[str, Any]]:
        sql = "SELECT seq, kind, body FROM events WHERE run_id = ?"
        args: list[Any] = [run_id]
        if kinds:
            kinds = list(kinds)
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += kinds
        try:
            return list(self._checked(run_id, self.db.execute(sql + " ORDER BY seq", args)))
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None

    def series(self, run_id: str, kind: str) -> SeriesTable:
        """The derived numbers of a run's events of one kind as columns (see SeriesTable).

        Reads the derived table; events it does not cover (a file written by an older
        derivation and opened read-only, or appended to since) are derived here."""
        if kind not in SERIES_COLUMNS:
            raise ValueError(f"no series for {kind!r} events")
        cols = SERIES_COLUMNS[kind]
        idx = [_SERIES_ALL.index(c) for c in cols]
        out = SeriesTable(kind)
        nan = float("nan")
        extras = out.extras
        covered = 0
        try:
            meta = dict(self.db.execute("SELECT key, value FROM meta"))
            tables = {r[0] for r in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            if "derived_state" in tables and meta.get("derive_version") == DERIVE_VERSION:
                row = self.db.execute("SELECT seq FROM derived_state WHERE run_id = ?",
                                      (run_id,)).fetchone()
                covered = int(row[0]) if row else 0
            if covered:
                sql = ("SELECT phase, unit, t, t0, t1, "
                       + ", ".join(f'"{c}"' for c in cols)
                       + " , extra FROM derived WHERE run_id = ? AND kind = ? AND seq <= ? "
                         "ORDER BY seq")
                rows = self.db.execute(sql, (run_id, kind, covered)).fetchall()
            else:
                rows = []
            # anything the derived table does not cover yet
            tail = self.db.execute("SELECT seq, kind, body FROM events WHERE run_id = ? AND "
                                   "seq > ? AND kind = ? ORDER BY seq",
                                   (run_id, covered, kind)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None
        for ev in self._checked(run_id, tail):
            r = series_row(ev)
            if r is not None:
                rows.append((r[1], r[2], r[3], r[4], r[5], *(r[6 + i] for i in idx), r[-1]))
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
        return out

    def series_between(self, run_id: str, names: Iterable[str], t0: float, t1: float
                       ) -> dict[str, tuple[list[float], list[float]]]:
        """The named series' points whose time falls in [t0, t1], named and timed as the
        live store has them (the end of each event's interval): what a live chart zoomed
        into a part of the run older than the store's full-resolution window draws. Reads
        the derived rows the writer adds with each event."""
        names = list(dict.fromkeys(names))
        cols = [n for n in names if n in _SERIES_ALL]
        rest = set(names) - set(cols)
        out: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in names}
        sql = ("SELECT COALESCE(t1, t), " + "".join(f'"{c}", ' for c in cols)
               + "extra FROM derived WHERE run_id = ? AND COALESCE(t1, t) BETWEEN ? AND ? "
                 "ORDER BY seq")
        try:
            rows = self.db.execute(sql, (run_id, t0, t1)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path} is damaged ({exc})") from None
        for row in rows:
            t = row[0]
            for c, v in zip(cols, row[1:-1]):
                if v is not None:
                    out[c][0].append(t)
                    out[c][1].append(v)
            if rest and row[-1]:
                for k, v in json.loads(row[-1]).items():
                    if k in rest and isinstance(v, (int, float)):
                        out[k][0].append(t)
                        out[k][1].append(float(v))
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


def series_between(path: str | Path, run_id: str, names: Iterable[str], t0: float,
                   t1: float) -> dict[str, tuple[list[float], list[float]]]:
    """SessionFile.series_between on a file opened for this read only (a live run's file
    is being written meanwhile: SQLite's WAL lets it be read)."""
    with SessionFile(path, readonly=True) as sf:
        return sf.series_between(run_id, names, t0, t1)
