"""HammerDB's output, line by line: the virtual-user log (hammerdb.log, or the CLI's own
output) with its rampup and test markers and its "TEST RESULT" line, a schema build's log,
the transaction counter log (hdbtcount: "N <engine> tpm @ <date>"), and the xtprof time
profile (per-procedure calls and latency). Stdlib only: the agent parses the CLI's live
output with the same code.
"""
from __future__ import annotations

import re
from typing import Any

from .. import events
from ..events import LogFormatError
from . import SPEC
from ..engine.api import LogFile, RunEvents, describe_epoch, feed_file, numbered, parse_date

TOOL = "hammerdb"
RESULT_SOURCE = "HammerDB's TEST RESULT line"
TCOUNT_SOURCE = "HammerDB transaction counter (hdbtcount)"
ENGINES = {"PostgreSQL": "postgres", "MariaDB": "mariadb", "MySQL": "mysql",
           "Oracle": "oracle", "SQL Server": "mssql", "Db2": "db2"}
# HammerDB's procedure names and the native TPROC-C's transaction types
PROCS = {"NEWORD": "new-order", "PAYMENT": "payment", "DELIVERY": "delivery",
         "SLEV": "stock-level", "OSTAT": "order-status"}
TCOUNT_DEFAULT_S = 10.0         # HammerDB's default refresh rate of the counter

_EPOCH_PREFIX = re.compile(r"^(\d{9,11}(?:\.\d+)?) (.*)$")     # hdb's output.log
_STAMP = re.compile(r"^Timestamp (\d+) @ (.+?)\s*$")
_VUSER = re.compile(r"^Vuser (\d+):(.*)$")
_HEADER = re.compile(r"^Hammerdb Log @ (.+?)\s*$")
_TC_HEADER = re.compile(r"^Hammerdb Transaction Counter Log @ (.+?)\s*$")
_TC_LINE = re.compile(r"^(\d+) (PostgreSQL|MariaDB|MySQL|Oracle|SQL Server|Db2) tpm"
                      r"(?: @ (.+?))?\s*$")
_XT_HEADER = re.compile(r"^(\S+(?: Server)?) Hammerdb Time Profile Report @ (.+?)\s*$")
# TPM can come out negative: HammerDB reads server-wide counters, which drop when another
# database is dropped during the run
_RESULT = re.compile(r"TEST RESULT : System achieved (-?\d+) NOPM from (-?\d+) (.+?) TPM")
_RESULT_OLD = re.compile(r"TEST RESULT : System achieved (-?\d+) (.+?) TPM at (-?\d+) NOPM")
_MSGS = {
    "rampup_start": re.compile(r"^Beginning rampup time of (\d+) minutes?"),
    "rampup_end": re.compile(r"^Rampup complete, Taking start Transaction Count"),
    "measure_plan": re.compile(r"^Timing test period of (\d+) in minutes"),
    "measure_end": re.compile(r"^Test complete, Taking end Transaction Count"),
    "vus": re.compile(r"^(\d+) Active Virtual Users configured"),
    "assigned": re.compile(r"^Assigned \d+ WIDs = .* based on VU count (\d+), "
                           r"Warehouses = \d+ out of (\d+)"),
    "dbversion": re.compile(r"^DBVersion:\s*(.+?)\s*$"),
    "build_start": re.compile(r"^CREATING (?:TPCC|TPROC-C) SCHEMA"),
    "build_wh": re.compile(r"^Loading (\d+) Warehouses start:(\d+) end:(\d+)"),
    "build_routines": re.compile(r"^CREATING TPCC (FUNCTIONS|STORED PROCEDURES|PROCEDURES)"),
    "build_district": re.compile(r"^Orders Done"),
    "build_end": re.compile(r"^(?:TPCC|TPROC-C) SCHEMA COMPLETE"),
    "error": re.compile(r"^(?:Error|ERROR|.*\berror\b|.*FINISHED FAILED)", re.I),
}


def parse_result(text: str) -> dict[str, Any] | None:
    """The TEST RESULT line's figures: {"nopm", "tpm", "engine"} (both HammerDB forms)."""
    m = _RESULT.search(text)
    if m:
        return {"nopm": int(m.group(1)), "tpm": int(m.group(2)), "engine": m.group(3)}
    m = _RESULT_OLD.search(text)
    if m:
        return {"nopm": int(m.group(3)), "tpm": int(m.group(1)), "engine": m.group(2)}
    return None


def parse_tcount(line: str) -> dict[str, Any] | None:
    """One transaction counter line: {"tpm", "engine", "epoch" (None without a stamp)}."""
    m = _TC_LINE.match(line.strip())
    if not m:
        return None
    d = parse_date(m.group(3)) if m.group(3) else None
    return {"tpm": int(m.group(1)), "engine": m.group(2), "epoch": d[0] if d else None}


class VuserParser:
    """HammerDB's virtual-user output one line at a time. ``feed`` returns a marker record
    ({"what", "epoch", ...}) for the lines that matter (rampup/test start and end, the
    result, errors), else None. ``epoch`` comes from the log's own stamps (None without)."""

    def __init__(self, name: str = "HammerDB output"):
        self.name = name
        self.lineno = 0
        self.start_epoch: float | None = None
        self.utc = True
        self._stamp: float | None = None
        self.marks: dict[str, dict[str, Any]] = {}
        self.info: dict[str, Any] = {}
        self.errors: list[tuple[float | None, str]] = []
        self.districts: list[float | None] = []
        self.warehouses_loaded = 0
        self.last_epoch: float | None = None
        self.seen_tool = False

    def feed(self, line: str) -> dict[str, Any] | None:
        self.lineno += 1
        line = line.rstrip("\r\n")
        m = _EPOCH_PREFIX.match(line)
        epoch_prefix = None
        if m:
            epoch_prefix, line = float(m.group(1)), m.group(2)
        m = _HEADER.match(line)
        if m:
            d = parse_date(m.group(1))
            if d:
                self.start_epoch, self.utc = d
                self.last_epoch = d[0]
            self.seen_tool = True
            return None
        m = _STAMP.match(line)
        if m:
            d = parse_date(m.group(2))
            self._stamp = d[0] if d else None
            if d and self.start_epoch is None:
                self.start_epoch, self.utc = d
            return None
        m = _VUSER.match(line)
        if not m:
            return None
        self.seen_tool = True
        vu, msg = int(m.group(1)), m.group(2).strip()
        epoch = epoch_prefix if epoch_prefix is not None else self._stamp
        self._stamp = None
        if epoch is not None:
            if self.start_epoch is None:
                self.start_epoch = epoch
            self.last_epoch = epoch
        res = parse_result(msg)
        if res is not None:
            rec = {"what": "result", "epoch": epoch, "vu": vu, **res}
            self.marks["result"] = rec
            return rec
        for what, rx in _MSGS.items():
            mm = rx.match(msg)
            if not mm:
                continue
            if what == "error":
                self.errors.append((epoch, f"Vuser {vu}:{msg}"))
                return {"what": "error", "epoch": epoch, "message": f"Vuser {vu}:{msg}"}
            if what == "vus":
                self.info["vus"] = int(mm.group(1))
            elif what == "assigned":
                self.info["warehouses"] = int(mm.group(2))
                self.info["use-all-warehouses"] = True
            elif what == "dbversion":
                self.info["server_version"] = mm.group(1)
            elif what == "build_wh":
                self.warehouses_loaded += int(mm.group(1))
            elif what == "build_routines":
                self.info["stored-procedures"] = mm.group(1)
            elif what == "build_district":
                self.districts.append(epoch)
                return None
            rec = {"what": what, "epoch": epoch, "groups": mm.groups()}
            self.marks.setdefault(what, rec)
            return rec
        return None


class TcountParser:
    """hdbtcount.log: the header's date and one TPM figure per refresh."""

    def __init__(self, name: str):
        self.name = name
        self.start_epoch: float | None = None
        self.points: list[dict[str, Any]] = []
        self.engine: str | None = None

    def feed(self, n: int, line: str) -> None:
        m = _TC_HEADER.match(line)
        if m:
            d = parse_date(m.group(1))
            self.start_epoch = d[0] if d else None
            return
        rec = parse_tcount(line)
        if rec is not None:
            self.engine = rec["engine"]
            self.points.append(rec)
        elif line.strip() and not line.startswith("+-+"):
            raise LogFormatError(self.name, n, f"is not a HammerDB transaction counter line "
                                               f"('N <engine> tpm @ <date>'): {line[:60]!r}")

    def epochs(self) -> list[float] | None:
        if not self.points:
            return None
        if all(p["epoch"] is not None for p in self.points):
            return [p["epoch"] for p in self.points]
        return None


class XtprofParser:
    """The xtprof time profile: per virtual user and a summary, per procedure CALLS, MIN,
    AVG, MAX, TOTAL, P99 … P25, SD and RATIO. Only the summary block is kept."""

    _KV = re.compile(r"([A-Z0-9]+): ([\d.]+)(ms|%)?")

    def __init__(self, name: str):
        self.name = name
        self.epoch: float | None = None
        self.engine: str | None = None
        self.summary: dict[str, dict[str, float]] = {}
        self.vus: int | None = None
        self.elapsed_ms: float | None = None
        self._in_summary = False
        self._proc: str | None = None

    def feed(self, n: int, line: str) -> None:
        m = _XT_HEADER.match(line)
        if m:
            self.engine = m.group(1)
            d = parse_date(m.group(2))
            self.epoch = d[0] if d else None
            return
        m = re.match(r"^>>>>> SUMMARY OF (\d+) ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : "
                     r"(\d+)ms", line)
        if m:
            self._in_summary, self.vus, self.elapsed_ms = True, int(m.group(1)), float(m.group(2))
            return
        if line.startswith(">>>>> VIRTUAL USER"):
            self._in_summary = False
            return
        m = re.match(r"^>>>>> PROC: (\S+)", line)
        if m:
            self._proc = m.group(1)
            return
        if self._in_summary and self._proc and self._KV.search(line):
            row = self.summary.setdefault(self._proc, {})
            for k, v, _ in self._KV.findall(line):
                row[k.lower()] = float(v)

    def complete(self) -> bool:
        return bool(self.summary) and all("p99" in r and "ratio" in r
                                          for r in self.summary.values())


# --- importer --------------------------------------------------------------------------------
PARAMS = ("engine", "warehouses", "vus", "rampup", "duration", "stored-procedures",
          "use-all-warehouses", "build-vus")


def import_logs(files: list[LogFile]) -> list[dict[str, Any]]:
    """HammerDB runs among ``files``: each virtual-user log is a run (a build log a load run);
    a transaction counter log or an xtprof profile joins the run whose times it falls in,
    else it is a run of its own."""
    vlogs, tcounts, xtprofs = [], [], []
    for name, opener in files:
        kind = _sniff(opener)
        if kind == "vuser":
            vlogs.append(feed_file(VuserParser(name), name, opener))
        elif kind == "tcount":
            t = TcountParser(name)
            for n, line in numbered(name, opener()):
                t.feed(n, line)
            if not t.points:
                raise LogFormatError(name, None, "has the transaction counter's header but no "
                                                 "'N <engine> tpm' line; the file looks truncated")
            tcounts.append(t)
        elif kind == "xtprof":
            x = XtprofParser(name)
            last = 0
            for n, line in numbered(name, opener()):
                x.feed(n, line)
                last = n
            if not x.complete():
                raise LogFormatError(name, last, "ends before the time profile's summary block "
                                                 "is complete (SUMMARY OF … ACTIVE VIRTUAL USERS "
                                                 "with each procedure's P99 … RATIO); the file "
                                                 "looks truncated")
            xtprofs.append(x)
    runs = []
    for v in vlogs:
        build = "build_start" in v.marks or "build_end" in v.marks
        mine_t = _closest(v, [t for t in tcounts if not build],
                          lambda t: (t.epochs() or [t.start_epoch])[0], 120.0)
        mine_x = _closest(v, [x for x in xtprofs if not build], lambda x: x.epoch,
                          None, end=True)
        tcounts = [t for t in tcounts if t is not mine_t]
        xtprofs = [x for x in xtprofs if x is not mine_x]
        runs.append(_run_events(v, [mine_t] if mine_t else [], [mine_x] if mine_x else []))
    for t in tcounts:
        runs.append(_run_events(None, [t], []))
    for x in xtprofs:
        runs.append(_run_events(None, [], [x]))
    return runs


def _closest(v: VuserParser, cands: list, epoch_of, within: float | None, end: bool = False):
    """The candidate whose stamp is nearest the log's start (``end``: written within five
    minutes after the log's last line), or None."""
    if v.start_epoch is None:
        return None
    best, best_d = None, None
    for c in cands:
        e = epoch_of(c)
        if e is None:
            continue
        if end:
            last = v.last_epoch or v.start_epoch
            d = e - last
            if not -1 <= d <= 300:
                continue
            d = abs(d)
        else:
            d = abs(e - v.start_epoch)
            if within is not None and d > within:
                continue
        if best_d is None or d < best_d:
            best, best_d = c, d
    return best


def _sniff(opener) -> str | None:
    for i, line in enumerate(opener()):
        s = line.strip()
        if _HEADER.match(s) or _VUSER.match(s) or _STAMP.match(s):
            return "vuser"
        if _TC_HEADER.match(s) or _TC_LINE.match(s):
            return "tcount"
        if _XT_HEADER.match(s) or s.startswith(">>>>> SUMMARY OF") \
                or s.startswith(">>>>> VIRTUAL USER"):
            return "xtprof"
        if i > 10:
            return None
    return None


def _engine(name: str | None) -> str | None:
    return ENGINES.get(name or "", (name or "").lower() or None)


def _run_events(v: VuserParser | None, tcs: list[TcountParser],
                xts: list[XtprofParser]) -> dict[str, Any]:
    files = ([v.name] if v else []) + [t.name for t in tcs] + [x.name for x in xts]
    run = RunEvents(SPEC, files)
    t0: float | None = None
    if v is not None and v.start_epoch is not None:
        t0 = v.start_epoch
    elif tcs:
        t0 = tcs[0].start_epoch or (tcs[0].epochs() or [None])[0]
    elif xts:
        t0 = xts[0].epoch

    def rel(epoch: float | None, default: float = 0.0) -> float:
        return round(epoch - t0, 3) if epoch is not None and t0 is not None else default

    marks = v.marks if v else {}
    info = dict(v.info) if v else {}
    res = marks.get("result")
    engine_name = (res or {}).get("engine") or (tcs[0].engine if tcs else None) or \
        (xts[0].engine if xts else None)
    engine = _engine(engine_name)
    build = v is not None and ("build_start" in marks or "build_end" in marks
                               or v.warehouses_loaded > 0)
    if v is not None and not build and res is None:
        started = any(k in marks for k in ("rampup_start", "rampup_end", "measure_plan"))
        raise LogFormatError(v.name, v.lineno,
                             "ends without HammerDB's 'TEST RESULT : System achieved … NOPM' "
                             "line" + ("; the file looks truncated or the run failed" if started
                                       else "; it is not the log of a timed TPROC-C run"))
    if build and "build_end" not in marks:
        raise LogFormatError(v.name, v.lineno, "ends before HammerDB's 'TPCC SCHEMA COMPLETE' "
                                               "line; the file looks truncated or the build failed")
    rampup_m = marks.get("rampup_start", {}).get("groups")
    dur_m = marks.get("measure_plan", {}).get("groups")
    params = {"engine": engine, "warehouses": info.get("warehouses") or
              (v.warehouses_loaded if build and v else None),
              "vus": info.get("vus"), "rampup": int(rampup_m[0]) * 60 if rampup_m else None,
              "duration": int(dur_m[0]) * 60 if dur_m else None,
              "use-all-warehouses": info.get("use-all-warehouses")}
    if build:
        routines = info.get("stored-procedures")
        params["stored-procedures"] = None if routines is None else routines != "FUNCTIONS"
    fmt = ("HammerDB schema build log" if build else "HammerDB virtual-user log" if v else
           "HammerDB transaction counter log" if tcs else "HammerDB xtprof time profile")
    run.target = (f"{engine_name} {info['server_version']}" if info.get("server_version")
                  else engine_name or "unknown")
    run.hello(tool=TOOL, version=None, params=params, declared=PARAMS,
              unit="rows/s" if build else "TPM", fmt=fmt, engine=engine,
              started_epoch=t0 if (v is None or v.utc) else None,
              started=describe_epoch(t0) if t0 is not None else None)
    if info.get("server_version"):
        run.emit("setting", 0.0, server_version=f"{engine_name} {info['server_version']}",
                 source="HammerDB's DBVersion line")
    if v is not None:
        for epoch, msg in v.errors:
            run.emit("error", rel(epoch), message=msg, fatal=False, source=TOOL)
    if build:
        _build_events(run, v, rel)
        return run.end()
    if v is None:
        run.emit("log", 0.0, level="info",
                 message=f"{fmt} without its virtual-user log: the rampup and measured period "
                         f"are unknown, so this run has no phases")
        _tcount_events(run, tcs, rel, ("", float("-inf"), float("inf")))
        if xts:
            run.emit("summary", 0.0, phase="profile", source="HammerDB xtprof time profile",
                     **_profile(xts[0]))
        return run.end()
    # rampup and measure from the markers; without stamps, from the stated minutes
    r0 = rel(marks.get("rampup_start", {}).get("epoch"))
    r1 = rel(marks.get("rampup_end", {}).get("epoch"),
             r0 + (params["rampup"] or 0)) if "rampup_end" in marks or params["rampup"] else r0
    m1 = rel(marks.get("measure_end", {}).get("epoch") or res.get("epoch"),
             r1 + (params["duration"] or 0))
    have_rampup = "rampup_start" in marks and r1 > r0
    phases = ([("rampup", r0, r1)] if have_rampup else []) + [("measure", r1, m1)]
    _tcount_events(run, tcs, rel, ("before", float("-inf"), phases[0][1]))
    for name, a, b in phases:
        run.emit("phase", a, name=name, state="start",
                 planned_s=params["rampup" if name == "rampup" else "duration"])
        _tcount_events(run, tcs, rel, (name, a, b), params["vus"])
        if name == "measure":
            dur = b - a if b > a else params["duration"]
            summ = measure_summary(res, params, a, b, dur, len(v.errors))
            if xts:
                summ.update(_profile(xts[0]))
            run.emit("summary", b, **summ)
        run.emit("phase", b, name=name, state="end", duration_s=round(b - a, 3))
    _tcount_events(run, tcs, rel, ("after", m1, float("inf")))
    return run.end()


def measure_summary(res: dict[str, Any], params: dict[str, Any], a: float, b: float,
                    dur: float | None, errors: int = 0) -> dict[str, Any]:
    """The measured phase's summary from the TEST RESULT line: NOPM and TPM as HammerDB
    stated them."""
    minutes = dur / 60 if dur else None
    result = {"nopm": res["nopm"], "nopm_source": RESULT_SOURCE, "tpm": res["tpm"],
              "tpm_source": f"{RESULT_SOURCE} ({res['engine']} TPM: the server's commits "
                            f"and rollbacks, server-wide)",
              "new_orders": round(res["nopm"] * minutes) if minutes else None,
              "duration_s": dur, "vus": params.get("vus"), "warehouses": params.get("warehouses"),
              "stored_procedures": params.get("stored-procedures"),
              "use_all_warehouses": params.get("use-all-warehouses"), "tool": TOOL}
    # the phase's throughput is TPM, as its samples (HammerDB's counter); NOPM is the result
    return events.summary(**{
            "phase": "measure", "interval": [a, b], "duration_s": dur,
            "clients": params.get("vus"), "ops_total": None, "rate": res["tpm"],
            "unit": "TPM", "errors_total": errors, "source": RESULT_SOURCE, "result": result})


def _build_events(run: RunEvents, v: VuserParser, rel) -> None:
    marks = v.marks
    a = rel(marks.get("build_start", {}).get("epoch") or v.start_epoch)
    b = rel(marks["build_end"]["epoch"])
    wh = v.warehouses_loaded or None
    run.emit("phase", a, name="load", state="start")
    for i, epoch in enumerate(v.districts, 1):
        if wh:
            run.emit("progress", rel(epoch), phase="load", done=i, total=wh * 10,
                     unit="districts")
    run.emit("summary", b, phase="load", interval=[a, b], duration_s=round(b - a, 3),
             ops_total=None, rate=None, unit="rows/s", errors_total=len(v.errors),
             source="HammerDB build log: first and last line's stamps",
             result={"build_s": round(b - a, 3), "build_source": "HammerDB build log stamps "
                     "(CREATING TPCC SCHEMA to TPCC SCHEMA COMPLETE)", "warehouses": wh})
    run.emit("phase", b, name="load", state="end", duration_s=round(b - a, 3))


def tcount_sample(tpm: int, t0: float, t1: float, phase: str | None,
                  vus: int | None = None) -> dict[str, Any]:
    """A `sample` event's body from one transaction counter reading: the server's commits
    and rollbacks per minute as HammerDB's counter read them."""
    body = {"phase": phase, "interval": [round(t0, 3), round(t1, 3)], "rate": tpm,
            "unit": "TPM", "tpm": tpm, "clients": vus,
            "counters": {"transactions": round(tpm * (t1 - t0) / 60.0, 2)},
            "source": TCOUNT_SOURCE}
    return events.sample(**body)


def _tcount_events(run: RunEvents, tcs: list[TcountParser], rel,
                   window: tuple[str, float, float] | None, vus: int | None = None) -> None:
    """The counter's TPM readings as samples, those whose interval ends inside ``window``
    only (the phase they belong to; "before"/"after" a run's phases: no phase)."""
    if not tcs:
        return
    t = tcs[0]
    epochs = t.epochs()
    prev = None
    outside = 0
    for i, p in enumerate(t.points):
        if epochs:
            end = rel(p["epoch"])
            start = rel(epochs[i - 1]) if i else end - TCOUNT_DEFAULT_S
        else:
            end = (i + 1) * TCOUNT_DEFAULT_S
            start = end - TCOUNT_DEFAULT_S
        if i == 0 and p["tpm"] == 0:      # the counter's first reading has no interval yet
            prev = end
            continue
        if window is not None:
            name, a, b = window
            if not (a < end <= b + 1e-6):
                prev = end
                continue
        start = prev if prev is not None else start
        prev = end
        if window is None or window[0] in ("before", "after"):
            outside += 1
            continue
        run.emit("sample", end, **tcount_sample(p["tpm"], start, end, window[0] or None, vus))
    if outside:
        run.emit("log", run.events[-1]["t"], level="info",
                 message=f"{outside} transaction counter reading(s) of {t.name} fall outside "
                         f"the rampup and measured period; they are not samples of the run")


def _profile(x: XtprofParser) -> dict[str, Any]:
    """Per-procedure figures of an xtprof summary, keyed by the native transaction types."""
    lat, ops, prof = {}, {}, {}
    for proc, r in x.summary.items():
        key = PROCS.get(proc, proc.lower())
        lat[key] = {"p50": r.get("p50"), "p95": r.get("p95"), "p99": r.get("p99"),
                    "max": r.get("max"), "min": r.get("min"), "avg": r.get("avg")}
        ops[key] = int(r.get("calls", 0))
        prof[key] = r
    return {"lat_ms": lat, "ops": ops,
            "profile": {"source": f"HammerDB xtprof time profile ({x.name})",
                        "vus": x.vus, "median_elapsed_ms": x.elapsed_ms, "procedures": prof}}
