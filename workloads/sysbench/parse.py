"""sysbench's output, line by line: the version header, `--report-interval` lines, the final
report (sysbench 1.0 "General statistics" and 1.1 "Throughput" forms), and the JSON report
of its `sysbench.report_json` hooks. Stdlib only: the agent parses sysbench's live output
with the same code that imports an old log.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .. import events
from ..events import LogFormatError
from . import SPEC
from ..engine.api import LogFile, RunEvents, feed_file

TOOL = "sysbench"
SOURCE = "sysbench's final report"
INTERVAL_SOURCE = "sysbench --report-interval line"

_VERSION = re.compile(r"^sysbench (\d+\.\d+(?:\.\d+)?)(\S*)(?: \(using ([^)]*)\))?\s*$")
_NUM = r"(\d+(?:\.\d+)?|-?nan|-?inf)"
# sysbench 1.0 (C) writes "err/s:", 1.1's Lua report_default "err/s" without the colon
_INTERVAL = re.compile(
    r"^\[ *(\d+(?:\.\d+)?)s \] thds: (\d+) tps: " + _NUM + " qps: " + _NUM
    + r" \(r/w/o: " + _NUM + "/" + _NUM + "/" + _NUM + r"\) lat \(ms,(\d+)%\): " + _NUM
    + r" err/s:? " + _NUM + " reconn/s: " + _NUM + r"\s*$")
_FIELDS = [   # (key, regex) of the final report's lines
    ("threads", re.compile(r"^Number of threads: (\d+)\s*$")),
    ("warmup", re.compile(r"^Warmup time: (\d+)s\s*$")),
    ("report_interval", re.compile(r"^Report intermediate results every (\d+) second")),
    ("rate_limit", re.compile(r"^Target transaction rate: (\d+)/sec")),
    ("seed", re.compile(r"^Initializing random number generator from seed \((-?\d+)\)")),
    ("read", re.compile(r"^\s+read:\s+(\d+)\s*$")),
    ("write", re.compile(r"^\s+write:\s+(\d+)\s*$")),
    ("other", re.compile(r"^\s+other:\s+(\d+)\s*$")),
    ("total", re.compile(r"^\s+total:\s+(\d+)\s*$")),
    ("transactions", re.compile(r"^\s+transactions:\s+(\d+)\s+\((\S+) per sec\.\)")),
    ("queries", re.compile(r"^\s+queries:\s+(\d+)\s+\((\S+) per sec\.\)")),
    ("ignored_errors", re.compile(r"^\s+ignored errors:\s+(\d+)\s+\((\S+) per sec\.\)")),
    ("reconnects", re.compile(r"^\s+reconnects:\s+(\d+)\s+\((\S+) per sec\.\)")),
    ("total_time", re.compile(r"^\s+(?:total time|time elapsed):\s+(\S+)s\s*$")),
    ("eps", re.compile(r"^\s+events/s \(eps\):\s+(\S+)\s*$")),
    ("events", re.compile(r"^\s+total number of events:\s+(\d+)\s*$")),
    ("lat_min", re.compile(r"^\s+min:\s+(\S+)\s*$")),
    ("lat_avg", re.compile(r"^\s+avg:\s+(\S+)\s*$")),
    ("lat_max", re.compile(r"^\s+max:\s+(\S+)\s*$")),
    ("lat_pct", re.compile(r"^\s+(\d+)th percentile:\s+(\S+)\s*$")),
    ("lat_sum", re.compile(r"^\s+sum:\s+(\S+)\s*$")),
    ("fair_events", re.compile(r"^\s+events \(avg/stddev\):\s+(\S+)/(\S+)\s*$")),
    ("fair_time", re.compile(r"^\s+execution time \(avg/stddev\):\s+(\S+)/(\S+)\s*$")),
]
# what a complete final report has, in the order sysbench prints it
_REQUIRED = (("queries", "its 'queries:' line"), ("total_time", "its total time"),
             ("lat_sum", "the end of its 'Latency (ms)' section"))


def _f(x: str) -> float | None:
    try:
        v = float(x)
    except ValueError:
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def parse_interval(line: str) -> dict[str, Any] | None:
    """One `--report-interval` line as numbers (rates per second, latency in ms), or None."""
    m = _INTERVAL.match(line)
    if not m:
        return None
    g = m.groups()
    return {"t": float(g[0]), "threads": int(g[1]), "tps": _f(g[2]), "qps": _f(g[3]),
            "reads": _f(g[4]), "writes": _f(g[5]), "other": _f(g[6]), "percentile": int(g[7]),
            "lat_ms": _f(g[8]), "errors": _f(g[9]), "reconnects": _f(g[10])}


class Parser:
    """Feed sysbench's output one line at a time; ``feed`` returns each interval record as
    it is read (for live samples), ``report()`` the final report once the output is done."""

    def __init__(self, name: str = "sysbench output"):
        self.name = name
        self.version: str | None = None
        self.luajit: str | None = None
        self.fields: dict[str, tuple[str, ...]] = {}
        self.intervals: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.lineno = 0
        self.in_sql = self.in_latency = False
        self.report_line = 0
        self.json_reports: list[list[dict[str, Any]]] = []
        self._json_depth = 0
        self._json_buf: list[str] = []
        self._json_open = False
        self.prepare = False
        self.seen_tool = False

    # --- reading ----------------------------------------------------------------------
    def feed(self, line: str) -> dict[str, Any] | None:
        self.lineno += 1
        line = line.rstrip("\r\n")
        if self._json_open or (line.strip() == "[" and not self.in_sql):
            return self._feed_json(line)
        m = _VERSION.match(line)
        if m:
            self.version, self.luajit = m.group(1) + m.group(2), m.group(3)
            self.seen_tool = True
            return None
        rec = parse_interval(line)
        if rec is not None:
            self.seen_tool = True
            self.intervals.append(rec)
            return rec
        s = line.strip()
        if s.startswith("FATAL:") or s.startswith("ALERT:"):
            self.errors.append(s)
            return None
        if s == "SQL statistics:":
            self.in_sql, self.report_line = True, self.lineno
            self.seen_tool = True
            return None
        if s in ("General statistics:", "Throughput:"):
            self.in_sql = True
            self.report_line = self.report_line or self.lineno
            return None
        if s == "Latency (ms):":
            self.in_latency = True
            return None
        if s.startswith("Creating table 'sbtest") or s.startswith("Inserting "):
            self.prepare = True
        for key, rx in _FIELDS:
            if key.startswith("lat_") and not self.in_latency:
                continue
            if key in ("read", "write", "other", "total") and not self.in_sql:
                continue
            m = rx.match(line)
            if m:
                self.fields.setdefault(key, m.groups())
                if key == "threads":
                    self.seen_tool = True
                break
        return None

    def _feed_json(self, line: str) -> dict[str, Any] | None:
        s = line.strip()
        if not self._json_open:                      # "["
            self._json_open = True
            self.json_reports.append([])
            self.seen_tool = True
            return None
        if self._json_depth == 0:
            if s in ("]", "],"):
                self._json_open = False
                return None
            if s in (",", ""):
                return None
        self._json_depth += s.count("{") - s.count("}")
        self._json_buf.append(line)
        if self._json_depth > 0:
            return None
        text = "\n".join(self._json_buf).strip().rstrip(",")
        self._json_buf = []
        try:
            obj = json.loads(text)
            qps = obj["qps"]
            rec = {"t": float(obj["time"]), "threads": int(obj["threads"]),
                   "tps": float(obj["tps"]), "qps": float(qps["total"]),
                   "reads": float(qps["reads"]), "writes": float(qps["writes"]),
                   "other": float(qps["other"]), "percentile": None,
                   "lat_ms": float(obj["latency"]), "errors": float(obj["errors"]),
                   "reconnects": float(obj["reconnects"])}
        except (ValueError, KeyError, TypeError) as exc:
            raise LogFormatError(self.name, self.lineno,
                                 f"is not an element of sysbench's JSON report ({exc})") from None
        self.json_reports[-1].append(rec)
        self.intervals.append(rec)
        return rec

    # --- the result ---------------------------------------------------------------------
    def _json_split(self) -> tuple[list[dict], dict | None]:
        """(intermediate records, cumulative record) of a JSON report: the cumulative
        report is a last array of one element, written after the intermediate ones (or
        alone, with no thread running any more)."""
        reps = self.json_reports
        if not reps:
            return self.intervals, None
        last = reps[-1]
        if len(last) == 1 and (len(reps) > 1 or last[0]["threads"] == 0):
            cum = last[0]
            return [r for rep in reps[:-1] for r in rep], cum
        return [r for rep in reps for r in rep], None

    def report(self) -> dict[str, Any]:
        """The final report as numbers; LogFormatError when the output has none or it is
        cut short."""
        if self._json_open:
            raise LogFormatError(self.name, self.lineno,
                                 "ends inside sysbench's JSON report (no closing ']'); the file "
                                 "looks truncated")
        if not self.seen_tool:
            raise LogFormatError(self.name, None, "is not sysbench output (no 'sysbench X.Y' "
                                                   "header, report lines or final report)")
        if self.json_reports:
            intervals, cum = self._json_split()
            if cum is None:
                raise LogFormatError(self.name, self.lineno,
                                     "has sysbench's JSON interval reports but not its final "
                                     "(cumulative) report; the file looks truncated")
            return {"format": "json", "version": self.version, "intervals": intervals,
                    "threads": _int(self.fields.get("threads")) or None,
                    "warmup_s": _int(self.fields.get("warmup")),
                    "total_time_s": cum["t"], "tps": cum["tps"], "qps": cum["qps"],
                    "reads_per_s": cum["reads"], "writes_per_s": cum["writes"],
                    "other_per_s": cum["other"], "errors_per_s": cum["errors"],
                    "reconnects_per_s": cum["reconnects"],
                    "lat_pct_ms": cum["lat_ms"], "percentile": None, "errors": self.errors}
        if not self.report_line:
            if self.prepare:
                raise LogFormatError(self.name, None, "is the output of sysbench's prepare "
                                                       "step, not a benchmark run's report")
            raise LogFormatError(self.name, self.lineno,
                                 "ends without sysbench's final report ('SQL statistics:'); the "
                                 "file looks truncated or the run was interrupted")
        for key, what in _REQUIRED:
            if key not in self.fields:
                raise LogFormatError(self.name, self.lineno,
                                     f"ends before sysbench's final report is complete (it lacks "
                                     f"{what}); the file looks truncated")
        fd = self.fields
        pct = fd.get("lat_pct")
        return {"format": "text", "version": self.version, "intervals": self.intervals,
                "threads": _int(fd.get("threads")) or None, "warmup_s": _int(fd.get("warmup")),
                "report_interval_s": _int(fd.get("report_interval")),
                "rate_limit": _int(fd.get("rate_limit")),
                "reads": _int(fd.get("read")), "writes": _int(fd.get("write")),
                "other": _int(fd.get("other")),
                "queries": int(fd["queries"][0]), "qps": _f(fd["queries"][1]),
                "transactions": _int(fd.get("transactions")),
                "tps": _f(fd["transactions"][1]) if "transactions" in fd else None,
                "ignored_errors": _int(fd.get("ignored_errors")),
                "reconnects": _int(fd.get("reconnects")),
                "total_time_s": _f(fd["total_time"][0]),
                "events": _int(fd.get("events")),
                "lat_min_ms": _fv(fd.get("lat_min")), "lat_avg_ms": _fv(fd.get("lat_avg")),
                "lat_max_ms": _fv(fd.get("lat_max")),
                "percentile": int(pct[0]) if pct else None,
                "lat_pct_ms": _f(pct[1]) if pct else None,
                "lat_sum_ms": _fv(fd.get("lat_sum")),
                "errors": self.errors, "report_line": self.report_line}


def _int(g: tuple[str, ...] | None) -> int | None:
    return int(g[0]) if g else None


def _fv(g: tuple[str, ...] | None) -> float | None:
    return _f(g[0]) if g else None


# --- events ---------------------------------------------------------------------------------
def sample_body(rec: dict[str, Any], t0: float, t1: float, phase: str) -> dict[str, Any]:
    """A `sample` event's body from one interval record (rates × interval = counts)."""
    dt = max(t1 - t0, 1e-9)
    pct = rec.get("percentile") or 95

    def n(x):
        return round((x or 0.0) * dt, 2)
    body = {"phase": phase, "interval": [round(t0, 4), round(t1, 4)],
            "rate": rec["qps"], "unit": "QPS", "clients": rec["threads"],
            "ops": {"read": n(rec["reads"]), "write": n(rec["writes"]), "other": n(rec["other"])},
            "errors": {"ignored": n(rec["errors"])} if rec.get("errors") else {},
            "counters": {"transactions": n(rec["tps"]), "reconnects": n(rec["reconnects"])},
            "lat_ms": {"all": {f"p{pct}": rec["lat_ms"]}}, "source": INTERVAL_SOURCE}
    return events.sample(**body)


def summary_body(rep: dict[str, Any], t0: float, phase: str = "measure") -> dict[str, Any]:
    """The phase `summary` of sysbench's final report: every figure as sysbench stated it."""
    dur = rep["total_time_s"]
    pct = rep.get("percentile")
    pct_key = f"p{pct or 95}"
    json_fmt = rep["format"] == "json"
    lat = {pct_key: rep.get("lat_pct_ms")}
    if not json_fmt:
        lat.update({"min": rep["lat_min_ms"], "avg": rep["lat_avg_ms"], "max": rep["lat_max_ms"]})
    if json_fmt:
        ops = {k: round(rep[f"{k}_per_s"] * dur, 2) for k in ("reads", "writes", "other")}
        ops = {"read": ops["reads"], "write": ops["writes"], "other": ops["other"]}
        ops_total = round(rep["qps"] * dur, 2)
        counters = {"transactions": round(rep["tps"] * dur, 2)}
        errors_total = round(rep["errors_per_s"] * dur, 2)
        where = "sysbench's JSON report (cumulative element)"
    else:
        ops = {"read": rep["reads"], "write": rep["writes"], "other": rep["other"]}
        ops_total = rep["queries"]
        counters = {"transactions": rep["transactions"], "reconnects": rep["reconnects"]}
        errors_total = rep["ignored_errors"] or 0
        where = SOURCE
    result = {
        "qps": rep["qps"], "qps_source": f"{where}: queries per second",
        "tps": rep["tps"], "tps_source": f"{where}: transactions per second",
        "duration_s": dur, "percentile": pct,
        "percentile_source": (None if pct else "not stated; sysbench's default --percentile "
                                               "is 95"),
        "latency_ms": lat, "threads": rep.get("threads"),
        "tool": TOOL, "tool_version": rep.get("version"),
    }
    return events.summary(**{
            "phase": phase, "interval": [round(t0, 4), round(t0 + dur, 4)], "duration_s": dur,
            "clients": rep.get("threads"), "ops_total": ops_total, "rate": rep["qps"],
            "unit": "QPS", "errors_total": errors_total, "ops": ops,
            "errors": {"ignored": errors_total} if errors_total else {},
            "counters": counters, "lat_ms": {"all": lat}, "source": where, "result": result})


PARAMS = ("test", "tables", "table-size", "threads", "time", "warmup", "rand-type",
          "report-interval")


def import_logs(files: list[LogFile]) -> list[dict[str, Any]]:
    """The sysbench runs among ``files`` (one per file); files that are not sysbench output
    are left out, a sysbench file that is cut short raises LogFormatError."""
    runs = []
    for name, opener in files:
        if not _looks_like(opener):
            continue
        runs.append(_events(name, feed_file(Parser(name), name, opener).report()))
    return runs


def _looks_like(opener) -> bool:
    for i, line in enumerate(opener()):
        s = line.strip()
        if _VERSION.match(s) or _INTERVAL.match(s) or s == "SQL statistics:":
            return True
        if s == "[" and i < 3:
            return True
        if i > 40:
            return False
    return False


def _events(name: str, rep: dict[str, Any]) -> dict[str, Any]:
    run = RunEvents(SPEC, [name])
    w = rep.get("warmup_s") or 0
    threads = rep.get("threads") or next((r["threads"] for r in rep["intervals"]), None)
    params = {"threads": threads, "warmup": w or None,
              "report-interval": rep.get("report_interval_s")}
    run.hello(tool=TOOL, version=rep.get("version"), params=params, declared=PARAMS,
              unit="QPS", fmt=f"sysbench {rep.get('version') or '(version not stated)'} "
                              f"{rep['format']} output")
    for err in rep.get("errors", []):
        run.emit("error", 0.0, message=err, fatal=False, source=TOOL)
    if w:
        run.phase("warmup", 0.0, float(w), planned_s=float(w))

    def samples() -> None:
        prev = 0.0
        for rec in rep["intervals"]:
            if rec.get("threads") == 0 and rec is rep["intervals"][-1] and rec["t"] == prev:
                continue
            t = rec["t"]
            run.emit("sample", w + t, **sample_body(rec, w + prev, w + t, "measure"))
            prev = t
        summ = summary_body(rep, float(w))
        run.emit("summary", w + rep["total_time_s"], **summ)
    run.phase("measure", float(w), w + rep["total_time_s"], samples)
    return run.end()
