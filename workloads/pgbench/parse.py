"""pgbench's output, line by line: the summary it prints at the end, its `--progress` lines,
the output of `pgbench -i` (the load), and its per-transaction logs (`-l`, one line per
transaction, aggregated here per second) and aggregated logs (`-l --aggregate-interval`).
Stdlib only: the agent parses pgbench's live output with the same code.
"""
from __future__ import annotations

import re
from typing import Any

from .. import events as ev_format
from ..events import LogFormatError
from . import SPEC
from ..engine.api import LogFile, RunEvents, feed_file, numbered

TOOL = "pgbench"
SOURCE = "pgbench's summary"
PROGRESS_SOURCE = "pgbench --progress line"

_VERSION = re.compile(r"^pgbench \((\d+(?:\.\d+)*)(?: \(([^)]*)\))?(?:, server (.+))?\)\s*$")
_PROGRESS = re.compile(r"^progress: (\d+(?:\.\d+)?) s, (\d+(?:\.\d+)?) tps, lat ([^\s,]+) ms "
                       r"stddev ([^\s,]+)(.*)$")
_PROGRESS_EXTRA = {"failed": re.compile(r"(\d+) failed"), "lag_ms": re.compile(r"lag (\S+) ms"),
                   "skipped": re.compile(r"(\d+) skipped"),
                   "retried": re.compile(r"(\d+) retried"), "retries": re.compile(r"(\d+) retries")}
_FIELDS = [
    ("script", re.compile(r"^transaction type: (.+?)\s*$")),
    ("scale", re.compile(r"^scaling factor: (\d+)\s*$")),
    ("mode", re.compile(r"^query mode: (\w+)\s*$")),
    ("clients", re.compile(r"^number of clients: (\d+)\s*$")),
    ("threads", re.compile(r"^number of threads: (\d+)\s*$")),
    ("max_tries", re.compile(r"^maximum number of tries: (\d+)\s*$")),
    ("duration", re.compile(r"^duration: (\d+) s\s*$")),
    ("per_client", re.compile(r"^number of transactions per client: (\d+)\s*$")),
    ("processed", re.compile(r"^number of transactions actually processed: (\d+)(?:/(\d+))?\s*$")),
    ("failed", re.compile(r"^number of failed transactions: (\d+) \(([\d.]+)%\)")),
    ("retried", re.compile(r"^number of transactions retried: (\d+)")),
    ("skipped", re.compile(r"^number of transactions skipped: (\d+)")),
    ("lat_avg", re.compile(r"^latency average = (\S+) ms")),
    ("lat_stddev", re.compile(r"^latency stddev = (\S+) ms")),
    ("conn_ms", re.compile(r"^initial connection time = (\S+) ms")),
    # 14+: one tps line; up to 13: "including" and "excluding connections establishing"
    ("tps", re.compile(r"^tps = (\S+) \((?:without initial connection time|excluding "
                       r"connections establishing)\)")),
    ("tps_incl", re.compile(r"^tps = (\S+) \(including connections establishing\)")),
]
_TUPLES = re.compile(r"^(\d+) of (\d+) tuples \((\d+)%\) done \(elapsed (\S+) s, "
                     r"remaining (\S+) s\)")
_DONE = re.compile(r"^done in (\S+) s \((.*)\)\.?\s*$")
_ERROR = re.compile(r"^(pgbench: (?:error|fatal|FATAL)|FATAL|ERROR|connection to server|"
                    r"client \d+ aborted|.*\berror:)", re.I)


def _f(x: str) -> float | None:
    try:
        v = float(x)
    except ValueError:
        return None
    return v if v == v else None


def parse_progress(line: str) -> dict[str, Any] | None:
    """One `--progress` line as numbers, or None."""
    m = _PROGRESS.match(line)
    if not m:
        return None
    rec: dict[str, Any] = {"t": float(m.group(1)), "tps": float(m.group(2)),
                           "lat_ms": _f(m.group(3)), "stddev_ms": _f(m.group(4))}
    for key, rx in _PROGRESS_EXTRA.items():
        mm = rx.search(m.group(5))
        if mm:
            rec[key] = _f(mm.group(1)) if key == "lag_ms" else int(mm.group(1))
    return rec


class Parser:
    """pgbench's standard output (and error) one line at a time: ``feed`` returns each
    progress record as it is read; ``report()`` the summary once pgbench is done."""

    def __init__(self, name: str = "pgbench output"):
        self.name = name
        self.version: str | None = None
        self.build: str | None = None
        self.server: str | None = None
        self.fields: dict[str, tuple] = {}
        self.progress: list[dict[str, Any]] = []
        self.tuples: list[tuple[int, int, float]] = []
        self.done: tuple[float, str] | None = None
        self.errors: list[str] = []
        self.lineno = 0
        self.init = False
        self.seen_tool = False

    def feed(self, line: str) -> dict[str, Any] | None:
        self.lineno += 1
        line = line.rstrip("\r\n")
        m = _VERSION.match(line)
        if m:
            self.version, self.build, self.server = m.groups()
            self.seen_tool = True
            return None
        rec = parse_progress(line)
        if rec is not None:
            self.progress.append(rec)
            self.seen_tool = True
            return rec
        m = _TUPLES.match(line)
        if m:
            self.init = self.seen_tool = True
            self.tuples.append((int(m.group(1)), int(m.group(2)), float(m.group(4))))
            return None
        m = _DONE.match(line)
        if m:
            self.done = (float(m.group(1)), m.group(2))
            self.init = self.seen_tool = True
            return None
        if line in ("dropping old tables...", "creating tables...", "vacuuming...",
                    "creating primary keys...") or line.startswith("generating data ("):
            self.init = self.seen_tool = True
            return None
        for key, rx in _FIELDS:
            m = rx.match(line)
            if m:
                self.fields.setdefault(key, m.groups())
                self.seen_tool = True
                return None
        if _ERROR.match(line.strip()):
            self.errors.append(line.strip())
        return None

    def report(self) -> dict[str, Any]:
        if not self.seen_tool:
            raise LogFormatError(self.name, None, "is not pgbench output (no 'pgbench (…)' "
                                                   "header, progress lines or summary)")
        if self.init and "tps" not in self.fields:
            if self.done is None:
                raise LogFormatError(self.name, self.lineno,
                                     "ends before pgbench -i printed 'done in … s'; the file "
                                     "looks truncated or the initialization failed")
            rows = self.tuples[-1][1] if self.tuples else None
            return {"kind": "init", "version": self.version, "seconds": self.done[0],
                    "steps": _steps(self.done[1]), "rows": rows,
                    "scale": rows // 100_000 if rows else None,
                    "tuples": self.tuples, "errors": self.errors}
        fd = self.fields
        if "tps" not in fd:
            what = ("its summary" if "script" not in fd else "the 'tps = …' line of its summary")
            raise LogFormatError(self.name, self.lineno,
                                 f"ends before pgbench printed {what}; the file looks truncated "
                                 f"or the run was interrupted")
        proc = fd.get("processed")
        return {"kind": "run", "version": self.version, "server": self.server,
                "script": fd["script"][0] if "script" in fd else None,
                "scale": _i(fd, "scale"), "mode": fd["mode"][0] if "mode" in fd else None,
                "clients": _i(fd, "clients"), "threads": _i(fd, "threads"),
                "max_tries": _i(fd, "max_tries"), "duration_s": _i(fd, "duration"),
                "per_client": _i(fd, "per_client"),
                "transactions": int(proc[0]) if proc else None,
                "failed": _i(fd, "failed"), "retried": _i(fd, "retried"),
                "skipped": _i(fd, "skipped"),
                "lat_avg_ms": _f(fd["lat_avg"][0]) if "lat_avg" in fd else None,
                "lat_stddev_ms": _f(fd["lat_stddev"][0]) if "lat_stddev" in fd else None,
                "conn_ms": _f(fd["conn_ms"][0]) if "conn_ms" in fd else None,
                "tps": _f(fd["tps"][0]), "progress": self.progress, "errors": self.errors}


def _i(fd: dict, key: str) -> int | None:
    return int(fd[key][0]) if key in fd else None


def _steps(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        m = re.match(r"\s*(.+?) (\d+(?:\.\d+)?) s\s*$", part)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def builtin_name(script: str | None) -> str | None:
    """pgbench's -b name of a builtin "transaction type", else the script as stated."""
    if not script:
        return None
    names = {"<builtin: TPC-B (sort of)>": "tpcb-like", "<builtin: select only>": "select-only",
             "<builtin: simple update>": "simple-update"}
    return names.get(script, script)


# --- events ---------------------------------------------------------------------------------
def sample_body(rec: dict[str, Any], t0: float, t1: float, clients: int | None,
                phase: str = "measure") -> dict[str, Any]:
    dt = max(t1 - t0, 1e-9)
    lat: dict[str, Any] = {"avg": rec.get("lat_ms"), "stddev": rec.get("stddev_ms")}
    body = {"phase": phase, "interval": [round(t0, 4), round(t1, 4)], "rate": rec["tps"],
            "unit": "TPS", "clients": clients,
            "ops": {"transactions": round(rec["tps"] * dt, 2)},
            "errors": {"failed": rec["failed"]} if rec.get("failed") else {},
            "lat_ms": {"all": lat}, "source": PROGRESS_SOURCE}
    counters = {k: rec[k] for k in ("skipped", "retried", "retries") if k in rec}
    if counters:
        body["counters"] = counters
    if rec.get("lag_ms") is not None:
        body["lag_ms"] = rec["lag_ms"]
    return ev_format.sample(**body)


def summary_body(rep: dict[str, Any], t0: float, phase: str = "measure",
                 duration_s: float | None = None) -> dict[str, Any]:
    dur = duration_s if duration_s is not None else rep.get("duration_s")
    if dur is None and rep.get("tps") and rep.get("transactions"):
        dur = round(rep["transactions"] / rep["tps"], 3)
    lat = {"avg": rep.get("lat_avg_ms"), "stddev": rep.get("lat_stddev_ms")}
    result = {"tps": rep["tps"],
              "tps_source": f"{SOURCE}: tps (without initial connection time)",
              "transactions": rep.get("transactions"), "failed": rep.get("failed"),
              "latency_ms": lat, "initial_connection_ms": rep.get("conn_ms"),
              "duration_s": dur, "tool": TOOL, "tool_version": rep.get("version")}
    return ev_format.summary(**{
            "phase": phase, "interval": [round(t0, 4), round(t0 + (dur or 0), 4)],
            "duration_s": dur, "clients": rep.get("clients"),
            "ops_total": rep.get("transactions"), "rate": rep["tps"], "unit": "TPS",
            "errors_total": rep.get("failed") or 0,
            "ops": {"transactions": rep.get("transactions")},
            "errors": {"failed": rep["failed"]} if rep.get("failed") else {},
            "lat_ms": {"all": lat}, "source": SOURCE, "result": result})


def load_summary(rep: dict[str, Any], t0: float = 0.0) -> dict[str, Any]:
    """The `load` phase summary of `pgbench -i`: rows from its progress lines, seconds
    from its 'done in' line."""
    dur, rows = rep["seconds"], rep.get("rows")
    return ev_format.summary(**{
            "phase": "load", "interval": [round(t0, 4), round(t0 + dur, 4)], "duration_s": dur,
            "ops_total": rows, "rate": round(rows / dur, 2) if rows and dur else None,
            "unit": "rows/s", "errors_total": 0, "ops": {"rows": rows} if rows else {},
            "steps_s": rep["steps"], "source": "pgbench -i: 'done in' line and tuple counts",
            "result": {"load_s": dur, "load_source": "pgbench -i: 'done in … s'",
                       "rows": rows, "scale": rep.get("scale")}})


PARAMS = ("scale", "clients", "jobs", "builtin", "script", "time", "protocol", "progress")


# --- per-transaction and aggregated logs (-l) ----------------------------------------------
class TxnLog:
    """pgbench's -l logs aggregated per second of completion time: counts, failures and a
    latency histogram per second, so memory grows with the run's length, not its
    transactions. Several files (one per thread: pgbench_log.PID, .PID.1 …) add up."""

    def __init__(self) -> None:
        self.seconds: dict[int, list] = {}       # second -> [count, failed, skipped, hist]
        self.aggregated = False
        self.clients: set[int] = set()
        self.interval = 1
        self.first_start: float | None = None     # epoch s: the first transaction's start
        self.last_end: float | None = None

    def feed(self, name: str, n: int, line: str) -> None:
        parts = line.split()
        if len(parts) >= 6 and not self.aggregated and _isint(parts[4]) and int(parts[4]) > 1e8:
            # client_id transaction_no time script_no time_epoch time_us [lag] [retries]
            cid, _, lat, _, epoch, us = parts[:6]
            if not (_isint(cid) and _isint(us)):
                raise LogFormatError(name, n, f"is not a pgbench -l log line: {line[:60]!r}")
            sec = int(epoch)
            end = sec + int(us) / 1e6
            start = end - (int(lat) / 1e6 if _isint(lat) else 0.0)
            if self.first_start is None or start < self.first_start:
                self.first_start = start
            if self.last_end is None or end > self.last_end:
                self.last_end = end
            row = self.seconds.get(sec)
            if row is None:
                row = self.seconds[sec] = [0, 0, 0, {}]
            self.clients.add(int(cid))
            if lat == "skipped":
                row[2] += 1
            elif not _isint(lat):                    # failed / serialization / deadlock
                row[1] += 1
            else:
                row[0] += 1
                b = ev_format.bucket_of(int(lat))
                row[3][b] = row[3].get(b, 0) + 1
            return
        if len(parts) >= 6 and all(_isnum(p) for p in parts) and int(float(parts[0])) > 1e8:
            # interval_start num_transactions sum_latency sum_latency_2 min max [...]
            self.aggregated = True
            sec = int(float(parts[0]))
            row = self.seconds.setdefault(sec, [0, 0, 0, {}, 0.0, None, None])
            if len(row) == 4:
                row.extend([0.0, None, None])
            cnt, s = int(parts[1]), float(parts[2])
            row[0] += cnt
            row[4] += s
            mn, mx = float(parts[4]), float(parts[5])
            if cnt:
                row[5] = mn if row[5] is None else min(row[5], mn)
                row[6] = mx if row[6] is None else max(row[6], mx)
            if len(parts) >= 7:
                row[1] += int(float(parts[6]))
            return
        raise LogFormatError(name, n, f"is not a pgbench -l log line: {line[:60]!r}")

    def events(self, run: RunEvents) -> None:
        if not self.seconds:
            return
        secs = sorted(self.seconds)
        if len(secs) > 1:
            self.interval = min(b - a for a, b in zip(secs, secs[1:])) or 1
        if self.aggregated:
            first, t_end = float(secs[0]), float(secs[-1] - secs[0] + self.interval)
        else:   # from the first transaction's start to the last one's end
            first = self.first_start
            t_end = round(self.last_end - first, 6)
        total = failed = 0
        merged: dict[int, int] = {}
        lat_sum = 0.0

        def body():
            nonlocal total, failed, lat_sum
            for sec in secs:
                row = self.seconds[sec]
                t0 = round(max(sec - first, 0.0), 6)
                t1 = round(min(sec + self.interval - first, t_end), 6)
                cnt = row[0]
                total += cnt
                failed += row[1]
                width = t1 - t0
                s = {"phase": "measure", "interval": [t0, t1],
                     "rate": round(cnt / width, 2) if width > 0 else None,
                     "unit": "TPS", "clients": len(self.clients) or None,
                     "ops": {"transactions": cnt},
                     "errors": {"failed": row[1]} if row[1] else {},
                     "source": ("pgbench --aggregate-interval log" if self.aggregated
                                else "pgbench -l per-transaction log, counted per second")}
                if self.aggregated:
                    lat_sum += row[4]
                    s["lat_ms"] = {"all": {"avg": round(row[4] / cnt / 1000, 4) if cnt else None,
                                           "min": row[5] / 1000 if row[5] is not None else None,
                                           "max": row[6] / 1000 if row[6] is not None else None}}
                else:
                    hist = sorted(row[3].items())
                    ev_format.merge_sparse(merged, hist)
                    s["hist"] = {"transactions": [list(x) for x in hist]}
                    s["lat_ms"] = {"all": ev_format.percentiles(hist),
                                   "transactions": ev_format.percentiles(hist)}
                if row[2]:
                    s["counters"] = {"skipped": row[2]}
                run.emit("sample", t1, **s)
            src = ("pgbench -l per-transaction log: transactions counted over the seconds "
                   "the log covers" if not self.aggregated else
                   "pgbench --aggregate-interval log: transactions over the intervals it covers")
            rate = round(total / t_end, 2) if t_end else None
            summ = {"phase": "measure", "interval": [0.0, float(t_end)], "duration_s": float(t_end),
                    "clients": len(self.clients) or None, "ops_total": total, "rate": rate,
                    "unit": "TPS", "errors_total": failed, "ops": {"transactions": total},
                    "errors": {"failed": failed} if failed else {}, "source": src,
                    "result": {"tps": rate, "tps_source": src, "transactions": total,
                               "failed": failed, "duration_s": float(t_end), "tool": TOOL}}
            if self.aggregated:
                summ["lat_ms"] = {"all": {"avg": round(lat_sum / total / 1000, 4) if total
                                          else None}}
            else:
                summ["hist"] = {"transactions": sorted([list(x) for x in merged.items()])}
                summ["lat_ms"] = {"all": ev_format.percentiles(merged)}
            run.emit("summary", float(t_end), **summ)
        run.phase("measure", 0.0, float(t_end), body)


def _isint(s: str) -> bool:
    return s.isdigit()


def _isnum(s: str) -> bool:
    return _f(s) is not None


# --- importer --------------------------------------------------------------------------------
def import_logs(files: list[LogFile]) -> list[dict[str, Any]]:
    """pgbench runs among ``files``: text output (one run per file), and -l logs (the files
    of one pgbench process, pgbench_log.PID[.N], make one run)."""
    runs = []
    txn_groups: dict[str, list[LogFile]] = {}
    for name, opener in files:
        kind = _sniff(opener)
        if kind == "text":
            runs.append(_events(name, feed_file(Parser(name), name, opener).report()))
        elif kind == "txnlog":
            base = re.sub(r"(pgbench_log\.\d+)(\.\d+)?$", r"\1", name)
            txn_groups.setdefault(base, []).append((name, opener))
    for group in txn_groups.values():
        log = TxnLog()
        for name, opener in group:
            for n, line in numbered(name, opener()):
                if line.strip():
                    log.feed(name, n, line)
        run = RunEvents(SPEC, [n for n, _ in group])
        run.target = "PostgreSQL"
        run.hello(tool=TOOL, version=None,
                  params={"clients": len(log.clients) or None}, declared=PARAMS, unit="TPS",
                  fmt="pgbench --aggregate-interval log" if log.aggregated else
                  "pgbench per-transaction log (-l)",
                  engine="postgres", started_epoch=float(min(log.seconds)) if log.seconds else None)
        log.events(run)
        runs.append(run.end())
    return runs


def _sniff(opener) -> str | None:
    for i, line in enumerate(opener()):
        s = line.strip()
        if not s:
            continue
        if _VERSION.match(s) or _PROGRESS.match(s) or s == "dropping old tables..." \
                or s.startswith("transaction type: ") or _TUPLES.match(s):
            return "text"
        parts = s.split()
        if i == 0 and len(parts) >= 6 and all(_isnum(p) or p in ("skipped", "failed",
                                                                 "serialization", "deadlock")
                                              for p in parts):
            return "txnlog"
        if i > 20:
            return None
    return None


def _events(name: str, rep: dict[str, Any]) -> dict[str, Any]:
    run = RunEvents(SPEC, [name])
    run.target = f"PostgreSQL {rep['server']}" if rep.get("server") else "PostgreSQL"
    if rep["kind"] == "init":
        run.hello(tool=TOOL, version=rep.get("version"), params={"scale": rep.get("scale")},
                  declared=PARAMS, unit="TPS", fmt="pgbench -i output", engine="postgres")
        for err in rep["errors"]:
            run.emit("error", 0.0, message=err, fatal=False, source=TOOL)

        def load():
            for done, total, elapsed in rep["tuples"]:
                run.emit("progress", elapsed, phase="load", done=done, total=total, unit="rows")
            run.emit("summary", rep["seconds"], **load_summary(rep))
        run.phase("load", 0.0, rep["seconds"], load)
        return run.end()
    builtin = builtin_name(rep.get("script"))
    params = {"scale": rep.get("scale"), "clients": rep.get("clients"),
              "jobs": rep.get("threads"), "time": rep.get("duration_s"),
              "protocol": rep.get("mode"),
              "builtin": builtin if builtin and not builtin.startswith("<") else None,
              "script": rep.get("script") if builtin and builtin.startswith("<") else None}
    prog = rep["progress"]
    if len(prog) > 1:
        params["progress"] = round(prog[1]["t"] - prog[0]["t"], 3)
    elif prog:
        params["progress"] = prog[0]["t"]
    run.hello(tool=TOOL, version=rep.get("version"), params=params, declared=PARAMS,
              unit="TPS", fmt=f"pgbench {rep.get('version') or ''} output".replace("  ", " "),
              engine="postgres")
    if rep.get("server"):
        run.emit("setting", 0.0, server_version=rep["server"], source="pgbench's header")
    for err in rep["errors"]:
        run.emit("error", 0.0, message=err, fatal=False, source=TOOL)
    summ = summary_body(rep, 0.0)
    dur = summ["duration_s"] or (prog[-1]["t"] if prog else 0.0)

    def body():
        prev = 0.0
        for rec in prog:
            run.emit("sample", rec["t"], **sample_body(rec, prev, rec["t"], rep.get("clients")))
            prev = rec["t"]
        run.emit("summary", dur, **summ)
    run.phase("measure", 0.0, float(dur), body)
    return run.end()
