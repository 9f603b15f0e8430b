"""The history: an index of every run in the session files of the sessions folder and of the
folders the user adds, to find runs across files and follow a figure over versions and months.

One SQLite file in the data folder (``history.sqlite``). ``refresh()`` scans the folders and
reads again only the files whose size or modification time changed, drops the files that are
gone, and names each damaged file (skipped, the rest indexed as usual). The GUI calls it when a
folder changes (QFileSystemWatcher), ``versus runs`` before every search.

    idx = HistoryIndex()                           # data_dir()/history.sqlite
    idx.add_folder("/mnt/results/2025")
    problems = idx.refresh()                       # ["/mnt/…/x.versus: not a Versus session …"]
    idx.runs(workload="tpcc", engine="postgres", version="18", host="db1")

Each run keeps its facts (workload, engine, server version, profile, host, parameters,
start) and its measured phases' headline figures (throughput and latency percentiles from
the agent's phase summary), enough to list, filter and trend runs without opening a file.
"""
from __future__ import annotations

import json
import re
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from app.model.phase import KINDS as PHASE_KINDS, PhaseSummary
from app.store.paths import data_dir, sessions_dir
from app.store.session import SessionError, SessionFile

INDEX_VERSION = "1"
MEASURED_ROLES = ("measured", "step")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, added REAL NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime REAL NOT NULL, size INTEGER NOT NULL,
    problem TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS runs (
    file TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    run_id TEXT NOT NULL, created REAL NOT NULL, workload TEXT NOT NULL,
    engine TEXT NOT NULL, version TEXT NOT NULL, server_version TEXT NOT NULL,
    profile TEXT NOT NULL, host TEXT NOT NULL, target TEXT NOT NULL,
    params TEXT NOT NULL, status TEXT NOT NULL,
    PRIMARY KEY (file, run_id));
CREATE TABLE IF NOT EXISTS phases (
    file TEXT NOT NULL, run_id TEXT NOT NULL, phase TEXT NOT NULL, role TEXT NOT NULL,
    unit TEXT NOT NULL, throughput REAL, p95 REAL, p99 REAL, ops REAL, errors REAL,
    PRIMARY KEY (file, run_id, phase),
    FOREIGN KEY (file, run_id) REFERENCES runs(file, run_id) ON DELETE CASCADE);
"""

# Figures a phase keeps in the index (the trend view's metrics)
PHASE_METRICS = {"throughput": "Throughput", "p95": "Latency p95 (ms)",
                 "p99": "Latency p99 (ms)", "errors": "Errors"}


class HistoryError(Exception):
    """A folder or a filter the history cannot use, said as a sentence."""


@dataclass(frozen=True)
class PhaseFigures:
    phase: str
    role: str
    unit: str
    throughput: float | None
    p95: float | None
    p99: float | None
    ops: float | None
    errors: float | None


@dataclass
class IndexedRun:
    file: str
    run_id: str
    created: float
    workload: str
    engine: str
    version: str               # "15.20", "11.4.2": the server's version number
    server_version: str        # as the server says it
    profile: str
    host: str
    target: str
    params: dict[str, Any]
    status: str
    phases: list[PhaseFigures] = field(default_factory=list)

    @property
    def ref(self) -> str:
        """FILE:RUN as ``versus compare`` takes it."""
        return f"{self.file}:{self.run_id}"

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.created).strftime("%Y-%m-%d %H:%M")

    def figure(self, metric: str = "throughput", phase: str | None = None) -> float | None:
        """A measured phase's figure: the named phase, else the run's only (or last) measured
        phase."""
        ph = [p for p in self.phases if (p.phase == phase if phase else p.role in MEASURED_ROLES)]
        return getattr(ph[-1], metric) if ph else None

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "run_id": self.run_id, "created": self.created,
                "workload": self.workload, "engine": self.engine, "version": self.version,
                "server_version": self.server_version, "profile": self.profile,
                "host": self.host, "target": self.target, "params": self.params,
                "status": self.status,
                "phases": [p.__dict__ for p in self.phases]}


def version_number(server_version: str | None) -> str:
    """The version number in a server's version string ("PostgreSQL 15.20 (Debian …)" ->
    "15.20", "11.4.2-MariaDB-1" -> "11.4.2")."""
    m = re.search(r"(\d+(?:\.\d+)+|\d+)", server_version or "")
    return m.group(1) if m else ""


def version_key(v: str) -> tuple:
    """Sort key of a version number: 9.6 < 10 < 15.2 < 15.10."""
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def default_index_path() -> Path:
    return data_dir() / "history.sqlite"


class HistoryIndex:
    def __init__(self, path: str | Path | None = None, include_sessions_dir: bool = True):
        self.path = Path(path) if path else default_index_path()
        self.include_sessions_dir = include_sessions_dir
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            self._init()
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"the history index {self.path} is damaged ({exc}); remove it "
                               f"and it is built again from the session files") from None

    def _init(self) -> None:
        db = self.db
        row = None
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        except sqlite3.OperationalError:
            pass
        if row is not None and row[0] != INDEX_VERSION:
            # an index from another Versus: it is only a cache, so build it again
            for t in ("phases", "runs", "files"):
                db.execute(f"DROP TABLE IF EXISTS {t}")
        db.executescript(_SCHEMA)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (INDEX_VERSION,))
        db.commit()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "HistoryIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- folders --------------------------------------------------------------------------
    def folders(self) -> list[Path]:
        out = [sessions_dir()] if self.include_sessions_dir else []
        out += [Path(r[0]) for r in self.db.execute("SELECT path FROM folders ORDER BY added")]
        return list(dict.fromkeys(out))

    def add_folder(self, folder: str | Path) -> Path:
        p = Path(folder).expanduser().resolve()
        if not p.is_dir():
            raise HistoryError(f"{folder} is not a folder; give a folder that holds session "
                               f"files (.versus)")
        self.db.execute("INSERT OR IGNORE INTO folders VALUES (?, ?)", (str(p), time.time()))
        self.db.commit()
        return p

    def remove_folder(self, folder: str | Path) -> None:
        p = str(Path(folder).expanduser().resolve())
        if not self.db.execute("DELETE FROM folders WHERE path = ?", (p,)).rowcount:
            raise HistoryError(f"{folder} is not one of the history's folders")
        self.db.commit()

    # --- keeping current ------------------------------------------------------------------
    def _session_files(self) -> list[Path]:
        out: list[Path] = []
        for folder in self.folders():
            try:
                out += sorted(p for p in folder.glob("*.versus") if p.is_file())
            except OSError:
                continue            # a folder on an unmounted disk: its runs stay listed
        return out

    def refresh(self) -> list[str]:
        """Index new and changed files, forget the ones that are gone; returns one sentence
        per damaged file (skipped)."""
        seen: set[str] = set()
        known = {r[0]: (r[1], r[2]) for r in
                 self.db.execute("SELECT path, mtime, size FROM files")}
        for f in self._session_files():
            key = str(f.resolve())
            if key in seen:
                continue
            seen.add(key)
            try:
                st = f.stat()
            except OSError:
                continue
            if known.get(key) == (st.st_mtime, st.st_size):
                continue
            self._index_file(key, st.st_mtime, st.st_size)
        folders = [str(p.resolve()) for p in self.folders()]
        for path in set(known) - seen:
            # gone from a folder that is still there: forget it; a folder that vanished
            # (an unmounted disk) keeps its runs until it is removed from the list
            parent = str(Path(path).parent)
            if parent not in folders or Path(parent).is_dir():
                self.db.execute("DELETE FROM files WHERE path = ?", (path,))
        self.db.commit()
        return self.problems()

    def problems(self) -> list[str]:
        return [f"{p}: {why}" for p, why in
                self.db.execute("SELECT path, problem FROM files WHERE problem != '' "
                                "ORDER BY path")]

    def _index_file(self, path: str, mtime: float, size: int) -> None:
        db = self.db
        db.execute("DELETE FROM files WHERE path = ?", (path,))
        try:
            runs = list(_read_runs(path))
        except SessionError as exc:
            db.execute("INSERT INTO files VALUES (?, ?, ?, ?)",
                       (path, mtime, size, f"skipped: {exc}"))
            return
        db.execute("INSERT INTO files VALUES (?, ?, ?, '')", (path, mtime, size))
        for r in runs:
            db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                       (path, r.run_id, r.created, r.workload, r.engine, r.version,
                        r.server_version, r.profile, r.host, r.target,
                        json.dumps(r.params, sort_keys=True), r.status))
            for p in r.phases:
                db.execute("INSERT OR REPLACE INTO phases VALUES (?,?,?,?,?,?,?,?,?,?)",
                           (path, r.run_id, p.phase, p.role, p.unit, p.throughput, p.p95,
                            p.p99, p.ops, p.errors))

    # --- searching ------------------------------------------------------------------------
    def runs(self, workload: str | None = None, engine: str | None = None,
             version: str | None = None, profile: str | None = None, host: str | None = None,
             params: dict[str, str] | None = None, since: float | None = None,
             until: float | None = None, status: str | None = None) -> list[IndexedRun]:
        """Runs matching every filter given, oldest first. ``version`` matches a version
        number and its minor versions ("15" finds 15.4 and 15.20, not 150); ``params`` by
        the text of each value; ``since``/``until`` are epoch seconds."""
        sql, args = "SELECT * FROM runs WHERE 1", []
        for col, val in (("workload", workload), ("engine", engine), ("profile", profile),
                         ("host", host), ("status", status)):
            if val:
                sql += f" AND {col} = ?"
                args.append(val)
        if since is not None:
            sql += " AND created >= ?"
            args.append(since)
        if until is not None:
            sql += " AND created < ?"
            args.append(until)
        sql += " ORDER BY created, run_id"
        out: list[IndexedRun] = []
        for row in self.db.execute(sql, args).fetchall():
            r = IndexedRun(file=row[0], run_id=row[1], created=row[2], workload=row[3],
                           engine=row[4], version=row[5], server_version=row[6],
                           profile=row[7], host=row[8], target=row[9],
                           params=json.loads(row[10]), status=row[11])
            if version and not (r.version == version or r.version.startswith(version + ".")):
                continue
            if params and any(str(r.params.get(k)).lower() != str(v).lower()
                              for k, v in params.items()):
                continue
            out.append(r)
        for r in out:
            r.phases = [PhaseFigures(*p) for p in self.db.execute(
                "SELECT phase, role, unit, throughput, p95, p99, ops, errors FROM phases "
                "WHERE file = ? AND run_id = ? ORDER BY rowid", (r.file, r.run_id))]
        return out

    def values(self, column: str) -> list[str]:
        """The distinct values of one fact (workload, engine, version, profile, host), for
        the GUI's filter lists."""
        if column not in ("workload", "engine", "version", "profile", "host"):
            raise HistoryError(f"no fact named {column}")
        vals = [r[0] for r in self.db.execute(f"SELECT DISTINCT {column} FROM runs") if r[0]]
        return sorted(vals, key=version_key if column == "version" else str.lower)


def _read_runs(path: str) -> Iterable[IndexedRun]:
    with SessionFile(path) as s:
        for rec in s.runs():
            meta = s.events(rec.id, kinds=("hello", "setting") + PHASE_KINDS)
            hello = next((e for e in meta if e["kind"] == "hello"), {})
            target = hello.get("target") if isinstance(hello.get("target"), dict) else {}
            server_version = next((str(e["server_version"]) for e in meta
                                   if e["kind"] == "setting" and e.get("server_version")), "")
            if not server_version:
                server_version = str((rec.info.get("plan") or {}).get("version") or "")
            engine = str(target.get("engine") or "")
            if engine == "mysql" and "mariadb" in server_version.lower():
                engine = "mariadb"          # the MySQL protocol, a MariaDB server
            params = dict(rec.params)
            profile = str(params.pop("profile", "") or
                          ((target.get("managed") or {}).get("profile") or "")).split("/")[-1]
            host = str((hello.get("host") or {}).get("hostname") or rec.host)
            roles = {}
            for p in hello.get("phases") or []:
                if isinstance(p, dict) and p.get("name"):
                    roles[p["name"]] = str(p.get("role") or "")
            for e in meta:
                if e["kind"] == "phase" and e.get("state") == "start" and e.get("role"):
                    roles[str(e.get("name"))] = str(e["role"])
            phases = []
            for summ in map(PhaseSummary.of, meta):
                if summ is None or not summ.phase:
                    continue
                lat, name = summ.latency, summ.phase
                phases.append(PhaseFigures(name, roles.get(name, ""), summ.unit or "",
                                           _num(summ.rate), lat.get("p95"), lat.get("p99"),
                                           _num(summ.ops_total), _num(summ.errors_total)))
            started = _num(hello.get("started_epoch")) or rec.created
            yield IndexedRun(file=path, run_id=rec.id, created=started,
                             workload=rec.workload or str(hello.get("workload") or ""),
                             engine=engine,
                             version=version_number(server_version),
                             server_version=server_version, profile=profile, host=host,
                             target=rec.target, params=params, status=rec.status,
                             phases=phases)


def parse_date(text: str, end: bool = False) -> float:
    """YYYY-MM-DD (local time) as epoch seconds; ``end``: the end of that day."""
    try:
        d = datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise HistoryError(f"{text!r} is not a date; write it as YYYY-MM-DD") from None
    return d.timestamp() + (86400 if end else 0)

