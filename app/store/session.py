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


class SessionError(Exception):
    """A session file that cannot be used, said as a sentence."""


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
            db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (MAGIC,))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                       (str(SCHEMA_VERSION),))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (str(time.time()),))
            db.commit()

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
        rows = [(run_id, e["seq"], float(e["t"]), e["kind"],
                 json.dumps(e, separators=(",", ":"))) for e in evs]
        if not rows:
            return 0
        before = self.db.total_changes
        self.db.executemany("INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?)", rows)
        self.db.commit()
        return self.db.total_changes - before

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
