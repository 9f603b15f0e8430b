"""The event stream: one JSON object per line, shared by the agent and the app.

Every event has ``v`` (format version), ``seq`` (1, 2, 3 … per run), ``t`` (seconds since the
run started, host monotonic clock) and ``kind``. Readers tolerate unknown fields and refuse a
newer major version with a clear message.

Latency histograms travel as sparse ``[[bucket, count], ...]`` lists over one fixed
log-linear bucket scheme defined here, so any interval can be merged exactly on either side.
"""
from __future__ import annotations

import array

import json
import math
from typing import Any, Iterable, Iterator

# 2: latency histograms in HdrHistogram's 2-significant-digit buckets (1: 3 % buckets)
FORMAT_VERSION = 2

KINDS = frozenset({
    "hello",     # agent version, host facts, run spec (no secrets)
    "phase",     # {"name", "state": "start"|"end"}
    "progress",  # {"phase", "done", "total", "unit"}
    "sample",    # one interval of workload counters
    "host",      # one interval of OS metrics from /proc
    "db",        # one interval of server counters
    "setting",   # effective server settings at start
    "log",       # {"level", "message"}
    "error",     # {"message", "fatal"}
    "summary",   # per-phase result
    "profile",   # a CPU profile of the server in one phase: folded stacks (perf record)
    "outage",    # reconnect=on: {"state": "start"|"end", "id", "phase", ...} (workloads.engine.measure.outage)
    "end",       # {"status": "ok"|"stopped"|"failed", "reason"}
})


class EventFormatError(ValueError):
    """A line that is not an event this version understands."""


def encode(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one line; raise EventFormatError with a sentence a user can act on."""
    try:
        ev = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        text = line[:80] if isinstance(line, str) else line[:80].decode("utf-8", "replace")
        raise EventFormatError(f"not a JSON event line: {text!r} ({exc})") from None
    if not isinstance(ev, dict):
        raise EventFormatError("an event line must hold a JSON object")
    v = ev.get("v")
    if not isinstance(v, int):
        raise EventFormatError("event has no format version 'v'")
    if v > FORMAT_VERSION:
        raise EventFormatError(
            f"the agent speaks event format {v} but this Versus understands up to "
            f"{FORMAT_VERSION}; update Versus on this computer")
    for key, typ in (("seq", int), ("t", (int, float)), ("kind", str)):
        if not isinstance(ev.get(key), typ):
            raise EventFormatError(f"event lacks a valid {key!r}")
    return ev


# The top-level fields readers rely on, with their types (None is allowed for any of them),
# and the fields a kind cannot do without: a stored event that breaks these is skipped by
# readers with a sentence rather than failing deep inside a summary or a chart.
_NUM = (int, float)
FIELD_TYPES: dict[str, dict[str, type | tuple[type, ...]]] = {
    "hello": {"run_id": str, "workload": str, "params": dict, "target": dict, "host": dict,
              "throughput_unit": str, "phases": list, "agent_version": str},
    "phase": {"name": str, "state": str, "role": str, "duration_s": _NUM, "cpu_groups": dict,
              "vus": list, "planned_s": _NUM},
    "progress": {"phase": str, "done": _NUM, "total": _NUM, "unit": str},
    "sample": {"phase": str, "interval": list, "rate": _NUM, "unit": str, "clients": _NUM,
               "vus": list, "ops": dict, "errors": dict, "lat_ms": dict, "hist": (dict, list),
               "counters": dict, "timings": dict},
    "host": {"interval": list, "source": str, "cpu": dict, "cs_per_s": _NUM, "runq": _NUM,
             "mem": dict, "disk": dict, "net": dict, "driver_cpu": dict, "client": dict,
             "cpu_groups": dict},
    "db": {"interval": list, "source": str, "sources": list, "counters": dict, "gauges": dict},
    "setting": {"server_version": str, "source": str, "settings": dict},
    "log": {"level": str, "message": str},
    "error": {"message": str, "fatal": bool},
    "summary": {"phase": str, "interval": list, "duration_s": _NUM, "ops_total": _NUM,
                "rate": _NUM, "unit": str, "ops": dict, "errors": dict, "hist": (dict, list),
                "lat_ms": dict, "errors_total": _NUM, "server": dict, "cpu_groups": dict,
                "client": dict, "perf": dict, "result": dict, "flags": list},
    "profile": {"phase": str, "stacks": list},
    "outage": {"state": str, "id": int, "phase": str, "first_error_t": _NUM, "vu": int,
               "class": str, "pre_fault_rate": _NUM, "unit": str, "clients": _NUM,
               "last_error_t": _NUM, "reconnected_t": _NUM, "reconnect_s": _NUM,
               "reconnect_s_by_vu": dict, "vus_affected": list, "errors": dict,
               "error_examples": dict},
    "end": {"status": str, "reason": str},
}
REQUIRED: dict[str, tuple[str, ...]] = {"phase": ("name", "state"), "outage": ("state", "id")}
_TYPE_WORDS = {str: "text", dict: "an object", list: "a list", bool: "true or false",
               _NUM: "a number", (dict, list): "an object or a list"}


def problem(ev: Any) -> str | None:
    """What is wrong with a decoded event, in words (None when it is sound): the envelope,
    a kind this version knows, the fields its kind needs, and the types of the known ones."""
    if not isinstance(ev, dict):
        return "it is not a JSON object"
    for key, typ, words in (("seq", int, "a whole number"), ("t", _NUM, "a number"),
                            ("kind", str, "text")):
        if key not in ev:
            return f"it has no {key!r}"
        if not isinstance(ev[key], typ) or isinstance(ev[key], bool):
            return f"its {key!r} is not {words}"
    if ev["kind"] not in KINDS:
        return f"its kind {ev['kind'][:40]!r} is not one this Versus knows"
    for key in REQUIRED.get(ev["kind"], ()):
        if ev.get(key) is None:
            return f"it has no {key!r}"
    for key, typ in FIELD_TYPES[ev["kind"]].items():
        v = ev.get(key)
        if v is not None and (not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool)):
            return f"its {key!r} is not {_TYPE_WORDS.get(typ, 'of the right type')}"
    for key, check in NESTED.get(ev["kind"], {}).items():
        v = ev.get(key)
        if v is not None and not check(v):
            return f"its {key!r} is not {_NESTED_WORDS[check]}"
    return None


# --- nested fields: what readers add up and chart, typed below the top level ----------------
def _is_num(v: Any) -> bool:
    return isinstance(v, _NUM) and not isinstance(v, bool)


def _interval(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_is_num(x) for x in v)


def _counts(v: Any) -> bool:
    return isinstance(v, dict) and all(x is None or _is_num(x) for x in v.values())


def _figures(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, dict) and _counts(x) for x in v.values())


def _pairs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(p, list) and len(p) == 2
                                       and all(_is_num(x) for x in p) for p in v)


def _hist(v: Any) -> bool:
    return _pairs(v) or (isinstance(v, dict) and all(_pairs(x) for x in v.values()))


_NESTED_WORDS = {_interval: "a list of two numbers (from, to)",
                 _counts: "an object of numbers", _figures: "an object of objects of numbers",
                 _hist: "a histogram ([bucket, count] pairs, per type)"}
_PHASE_FIGURES = {"interval": _interval, "ops": _counts, "errors": _counts,
                  "counters": _counts, "lat_ms": _figures, "hist": _hist, "timings": _figures}
NESTED: dict[str, dict[str, Any]] = {
    "sample": _PHASE_FIGURES, "summary": _PHASE_FIGURES,
    "host": {"interval": _interval}, "db": {"interval": _interval, "counters": _counts},
}


# --- building events: the one way a writer makes a body -------------------------------------
def body(kind: str, **fields: Any) -> dict[str, Any]:
    """An event body of `kind`, checked as a reader checks it (top-level and nested types,
    required fields); raises EventFormatError naming the field, so a writer's mistake fails
    where it is made instead of in a reader."""
    what = problem({"seq": 1, "t": 0.0, "kind": kind, **fields})
    if what is not None:
        raise EventFormatError(f"a {kind} event body: {what}")
    return fields


def sample(*, phase: str, interval: list, rate: float | None, unit: str,
           **extra: Any) -> dict[str, Any]:
    """One interval of a phase: the rate and (in `extra`) ops and errors by type, lat_ms,
    hist, clients, vus, counters, timings, source (a tool's counter may state the rate
    alone)."""
    return body("sample", phase=phase, interval=interval, rate=rate, unit=unit, **extra)


def summary(*, phase: str, interval: list, duration_s: float | None, ops_total: float | None,
            rate: float | None, unit: str, **extra: Any) -> dict[str, Any]:
    """A phase's result: its span, total and rate, and (in `extra`) ops, errors, hist,
    lat_ms, errors_total, counters, server, client, driver_cpu, result, flags …"""
    return body("summary", phase=phase, interval=interval, duration_s=duration_s,
                ops_total=ops_total, rate=rate, unit=unit, **extra)


def stamp(seq: int, t: float, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The envelope around a body: format version, sequence number, run time, kind."""
    return {"v": FORMAT_VERSION, "seq": seq, "t": round(t, 4), "kind": kind, **fields}


class LineSplitter:
    """Turn byte chunks into complete lines, keeping a partial line until its newline."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buf += chunk
        if b"\n" not in self._buf:
            return []
        *lines, self._buf = self._buf.split(b"\n")
        return [ln for ln in lines if ln.strip()]

    @property
    def pending(self) -> bytes:
        return self._buf


# --- latency histogram buckets ------------------------------------------------------------
# HdrHistogram's log-linear buckets over microseconds (2 significant digits, lowest value
# 1 µs): values below SUB are exact, then each power of two is split into SUB/2 equal steps,
# so a bucket is at most 1/128 of its values wide and its midpoint within 0.4 % of any of
# them. Events of format 1 used SUB_BITS 6 (buckets 1/32 wide, 1.57 %); their histograms are
# read with that scheme (the ``v`` of the event that holds them).
SUB_BITS = 8
SUB = 1 << SUB_BITS          # 256
HALF = SUB >> 1
MAX_US = 1 << 37             # ~38 hours; larger values land in the last bucket
N_BUCKETS = SUB + (37 - SUB_BITS) * HALF
_SUB_BITS_OF = {1: 6}        # format version -> its histograms' SUB_BITS (newer: SUB_BITS)


def sub_bits(v: int | None = None) -> int:
    """The histogram scheme of events of format v (None: this version's)."""
    return SUB_BITS if v is None else _SUB_BITS_OF.get(v, SUB_BITS)


def precision_pct(v: int | None = None) -> float:
    """How far (in percent, at most) a percentile from the histograms of events of format v
    can be from the raw latencies' one: half a bucket's relative width (the max, a bucket's
    upper bound, is within twice that and never below)."""
    return 100.0 / (1 << sub_bits(v))


def precision_text(v: int | None = None) -> str:
    pct = precision_pct(v)
    up = lambda x: f"{math.ceil(x * 100) / 100:g}"      # noqa: E731  (rounded up: a bound)
    return (f"latency percentiles from histograms, within {up(pct)} % of the raw latencies' "
            f"(max within {up(2 * pct)} %, never below)")


def bucket_of(us: int) -> int:
    if us < SUB:
        return us if us > 0 else 0
    if us >= MAX_US:
        return N_BUCKETS - 1
    exp = us.bit_length() - SUB_BITS          # >= 1
    return SUB + (exp - 1) * HALF + ((us >> exp) - HALF)


# bucket_of for latencies below LUT_US, by index: cheaper than the call in hot loops
LUT_US = 4096
BUCKET_LUT = array.array("H", (bucket_of(us) for us in range(LUT_US)))


def bucket_low(b: int, v: int | None = None) -> int:
    """Smallest microsecond value that falls into bucket b (of events of format v)."""
    bits = sub_bits(v)
    sub = 1 << bits
    if b < sub:
        return b
    exp, step = divmod(b - sub, sub >> 1)
    exp += 1
    return ((sub >> 1) + step) << exp


def bucket_mid(b: int, v: int | None = None) -> float:
    if b < 1 << sub_bits(v):
        return float(b)
    return (bucket_low(b, v) + bucket_low(b + 1, v) - 1) / 2.0


def sparse(counts: Iterable[int]) -> list[list[int]]:
    return [[i, c] for i, c in enumerate(counts) if c]


def merge_sparse(into: dict[int, int], hist: Iterable[Iterable[int]]) -> dict[int, int]:
    for b, c in hist:
        into[b] = into.get(b, 0) + c
    return into


def percentiles(hist: dict[int, int] | list[list[int]], qs: Iterable[float] = (50, 95, 99),
                v: int | None = None) -> dict[str, float | None]:
    """Percentiles in milliseconds (bucket midpoints), plus 'max' (upper bucket bound); v is
    the format version of the events the histogram came from (None: this version's)."""
    items = sorted(hist.items() if isinstance(hist, dict) else ((b, c) for b, c in hist))
    total = sum(c for _, c in items)
    out: dict[str, float | None] = {}
    qs = list(qs)
    if not total:
        out.update({f"p{_qname(q)}": None for q in qs})
        out["max"] = None
        return out
    for q in qs:
        rank = max(1, math.ceil(total * q / 100.0))
        acc = 0
        for b, c in items:
            acc += c
            if acc >= rank:
                out[f"p{_qname(q)}"] = round(bucket_mid(b, v) / 1000.0, 4)
                break
    last = items[-1][0]
    out["max"] = round((bucket_low(last + 1, v) - 1) / 1000.0, 4)
    return out


def _qname(q: float) -> str:
    return str(int(q)) if float(q).is_integer() else str(q).replace(".", "_")


def iter_lines(data: bytes) -> Iterator[bytes]:
    for ln in data.split(b"\n"):
        if ln.strip():
            yield ln


class LogFormatError(ValueError):
    """A tool's log (sysbench, pgbench, HammerDB) that cannot be read as a run: the sentence
    names the file and the line."""

    def __init__(self, file: str, line: int | None, message: str):
        self.file, self.line, self.message = file, line, message
        where = f"{file} line {line}" if line else file
        super().__init__(f"{where}: {message}")
